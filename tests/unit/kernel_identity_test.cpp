// Kernel identity across demanglers, against real names: cu++filt's spelling (nsys's) and GNU
// c++filt's (the C++ runtime's, which PyTorch-profiler traces hold) of 2,621 real kernels, and 15
// kernels found both in an nsys export and in a PyTorch-profiler trace (tests/fixtures/README.md,
// diff/). It failed while the rules were written: 376 rows differed before the return types of
// enclosing functions and `const T &` were unified, 27 before builtin return types, 7 before
// qualified return types, `auto:1` and empty packs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyses/diff/kernel_identity.hpp"
#include "../support/tsv_fixture.hpp"

namespace {

using kernscope::normalize_kernel_name;
using kernscope::runtime_demangle;

// Rows of a tab-separated file under fixtures/diff (tests/support/tsv_fixture.hpp).
std::vector<std::vector<std::string>> read_tsv(const std::string& name) {
  return kernscope::testing::read_tsv_fixture(std::string(KERNSCOPE_FIXTURES_DIR) + "/diff/" + name);
}

TEST(KernelIdentity, DemanglerPairsNormalizeAlike) {
  const auto rows = read_tsv("demangler_pairs.tsv.gz");
  ASSERT_GE(rows.size(), 2600u);
  int differ = 0;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 3u);
    const std::string cufilt = normalize_kernel_name(row[1]), gnu = normalize_kernel_name(row[2]);
    if (cufilt != gnu) {
      if (++differ <= 10) ADD_FAILURE() << "mangled " << row[0] << "\n cu++filt: " << cufilt << "\n c++filt:  " << gnu;
    }
  }
  EXPECT_EQ(differ, 0) << "of " << rows.size();
}

TEST(KernelIdentity, RuntimeDemanglerSpellsAsGnuCxxfilt) {
  // abi::__cxa_demangle and binutils' c++filt share libiberty's printer.
  const auto rows = read_tsv("demangler_pairs.tsv.gz");
  int differ = 0;
  for (const auto& row : rows) differ += runtime_demangle(row[0]) != row[2];
  EXPECT_EQ(differ, 0);
}

TEST(KernelIdentity, DistinctKernelsStayDistinct) {
  // Dropping a function template's signature must not merge two different kernels of the set.
  const auto rows = read_tsv("demangler_pairs.tsv.gz");
  std::map<std::string, std::string> first_mangled;
  int merged = 0;
  for (const auto& row : rows) {
    auto [it, added] = first_mangled.emplace(normalize_kernel_name(row[2]), row[0]);
    if (!added && it->second != row[0]) {
      if (++merged <= 5) ADD_FAILURE() << it->second << " and " << row[0] << " -> " << it->first;
    }
  }
  EXPECT_EQ(merged, 0);
}

TEST(KernelIdentity, SameKernelInNsysAndPyTorchTraces) {
  const auto rows = read_tsv("cross_source_names.tsv");
  ASSERT_EQ(rows.size(), 15u);
  for (const auto& row : rows) {
    const std::string kineto = normalize_kernel_name(row[2]);
    EXPECT_EQ(normalize_kernel_name(runtime_demangle(row[0])), kineto) << row[0];
    EXPECT_EQ(normalize_kernel_name(row[1]), kineto) << "nsys's spelling of " << row[0];
  }
}

TEST(KernelIdentity, SpellingsByHand) {
  auto same = [](const std::string& x, const std::string& y) { EXPECT_EQ(normalize_kernel_name(x), normalize_kernel_name(y)) << x << " | " << y; };
  same("void f<a::b<int> >(float*)", "void f<a::b<int>>(float *)");
  same("(anonymous namespace)::k(int)", "{anonymous}::k(int)");
  same("<unnamed>::k(int)", "(anonymous namespace)::k(int)");
  same("void g<h(int)::{lambda(float)#2}>(T1)", "void g<h(int)::[lambda(float) (instance 2)]>(h(int)::{lambda(float)#2})");
  same("void g<h(int)::'lambda'(float)>(int)", "void g<h(int)::{lambda(float)#1}>(int)");
  same("k(unsigned int, long int)", "k(unsigned, long)");
  same("void r<(int)512, (unsigned int)4, (bool)1, (long)-2>(int)", "void r<512, 4u, true, -2l>(int)");
  EXPECT_NE(normalize_kernel_name("k(unsigned int)"), normalize_kernel_name("k(int)"));
  EXPECT_NE(normalize_kernel_name("k(float*)"), normalize_kernel_name("k(double*)"));  // overloads of a plain function
  EXPECT_NE(normalize_kernel_name("void r<(int)512>(int)"), normalize_kernel_name("void r<(int)256>(int)"));
  EXPECT_EQ(normalize_kernel_name("unsigned   long"), "unsigned long");  // words keep one space
}

}  // namespace
