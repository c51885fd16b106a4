// What the tests of the ncu and cuBLAS-log readers share: their fixtures (tests/fixtures/ncu), a
// reader's result taken as a value (an error fails the test with the reader's message), and a
// kernel row carrying the fields their joins read.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "kernscope/error.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::testing {

inline std::string ncu_fixture(const std::string& name) {
  return std::string(KERNSCOPE_FIXTURES_DIR) + "/ncu/" + name;
}

template <class T>
T expect_value(Result<T> result) {
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? std::move(*result) : T{};
}

// A kernel row: name, start (ends 10 ns later), stream, launch dimensions; process 1 (pid << 24).
inline void add_kernel(Trace& t, const std::string& name, std::int64_t start, std::uint32_t stream,
                       std::array<int, 3> grid = {1, 1, 1}, std::array<int, 3> block = {1, 1, 1}) {
  auto& k = t.kernels;
  KernelColumns::visit(k, [](auto& column) { column.emplace_back(); });
  const std::size_t i = k.size() - 1;
  k.start_ns[i] = start;
  k.end_ns[i] = start + 10;
  k.stream_id.set(i, stream);
  k.global_pid.set(i, 1LL << 24);
  k.demangled_name[i] = k.short_name[i] = t.strings.intern(name);
  k.grid_x[i] = grid[0];
  k.grid_y[i] = grid[1];
  k.grid_z[i] = grid[2];
  k.block_x[i] = block[0];
  k.block_y[i] = block[1];
  k.block_z[i] = block[2];
}

}  // namespace kernscope::testing
