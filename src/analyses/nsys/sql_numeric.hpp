// round(X, N) as nsys's report SQL yields it (the SQLite inside nsys 2025.3). Established from the
// golden outputs: the exact decimal value of the binary double is rounded half away from zero.
//   694122.85 (stored 694122.8499...) -> 694122.8    1812.55 (stored 1812.5499...) -> 1812.5
//   218005.25 (exact tie)             -> 218005.3
// printf's "%.1f" differs on the exact tie (half-even), and SQLite 3.40's printf on the first two.
#pragma once

namespace kernscope {

double sqlite_round(double value, int digits);

}  // namespace kernscope
