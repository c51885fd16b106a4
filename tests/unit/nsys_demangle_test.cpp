// nsys_demangle against what nsys and CUDA's demangler wrote: every mangled/demangled pair in
// the nsys exports among the fixtures (nsys_pairs.tsv, nsys is the truth) and cu++filt's output
// for further constructs (cufilt_pairs.tsv). Provenance: tests/fixtures/demangle/README.md.
// Checked to fail: with the printer's "(instance N)" counting from 0, or `operator ()` written
// without its space, NsysPairs reports the rows that differ.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "base/nsys_demangle.hpp"
#include "model/kernel_short_name.hpp"
#include "../support/tsv_fixture.hpp"

namespace {

using kernscope::nsys_demangle;

// Rows of a tab-separated file under fixtures/demangle (tests/support/tsv_fixture.hpp).
std::vector<std::vector<std::string>> read_tsv(const std::string& name) {
  return kernscope::testing::read_tsv_fixture(std::string(KERNSCOPE_FIXTURES_DIR) + "/demangle/" + name);
}

TEST(NsysDemangle, NsysPairs) {
  const auto rows = read_tsv("nsys_pairs.tsv");
  ASSERT_GE(rows.size(), 230u);  // the distinct kernels of the nsys exports
  int demangled_equal = 0, short_equal = 0;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 3u);
    const std::string& mangled = row[0];
    const std::string ours = nsys_demangle(mangled);
    EXPECT_EQ(ours, row[1]) << "mangled: " << mangled;
    demangled_equal += ours == row[1];
    // The tracer derives shortName from the demangled name, as nsys's rule does.
    const std::string short_name(kernscope::kernel_short_name(ours));
    EXPECT_EQ(short_name, row[2]) << "mangled: " << mangled;
    short_equal += short_name == row[2];
  }
  std::cout << "nsys pairs: demangledName equal " << demangled_equal << "/" << rows.size() << ", shortName equal "
            << short_equal << "/" << rows.size() << "\n";
}

// cu++filt's output (the demangler nsys uses: equal to nsys's on every pair above) for names
// the exports lack. Rows with a note in the fourth field are differences known and explained
// there; they must still differ (a row that starts to match has its note dropped).
TEST(NsysDemangle, CufiltPairs) {
  const auto rows = read_tsv("cufilt_pairs.tsv.gz");
  ASSERT_GE(rows.size(), 5000u);
  int equal = 0, known = 0;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 4u);
    const std::string ours = nsys_demangle(row[0]);
    if (!row[3].empty()) {
      ++known;
      EXPECT_NE(ours, row[1]) << "now matches cu++filt, drop the note: " << row[0];
      continue;
    }
    EXPECT_EQ(ours, row[1]) << "mangled: " << row[0];
    equal += ours == row[1];
  }
  std::cout << "cu++filt pairs: equal " << equal << "/" << rows.size() - known << " (" << known
            << " known differences, noted in the file)\n";
}

// Names nsys leaves as they are (facts of the input, by hand).
TEST(NsysDemangle, NonManglingsUnchanged) {
  EXPECT_EQ(nsys_demangle(""), "");
  EXPECT_EQ(nsys_demangle("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT"), "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT");
  EXPECT_EQ(nsys_demangle("i"), "i");          // LLVM alone would read a type: "int"
  EXPECT_EQ(nsys_demangle("__Z1kv"), "__Z1kv");  // and a "__Z" name
  EXPECT_EQ(nsys_demangle("_Z"), "_Z");
  EXPECT_EQ(nsys_demangle("_ZN3foo"), "_ZN3foo");  // cut short
}

// Hostile input ends in the mangled name coming back, not in a crash or a runaway output.
TEST(NsysDemangle, HostileInputComesBackUnchanged) {
  const std::string deep = "_Z1f" + std::string(100000, 'P') + "i";
  EXPECT_EQ(nsys_demangle(deep), deep);
  // Each parameter is X<previous, previous>, through substitutions: 2^30 characters if printed.
  const std::string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string exponential = "_Z1f1XIiE";
  for (int i = 0; i < 30; ++i) exponential += "S_IS" + digits.substr(i, 1) + "_S" + digits.substr(i, 1) + "_E";
  EXPECT_EQ(nsys_demangle(exponential), exponential);
}

}  // namespace
