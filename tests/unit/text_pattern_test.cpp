// kernscope's regular expressions (src/base/text_pattern, PCRE2): the ECMAScript behaviour the
// built-in tables and users' rule files were written for, and the operations the readers and
// analyses use. Each expectation is what std::regex (ECMAScript) gives for the same call.
#include <gtest/gtest.h>

#include "base/text_pattern.hpp"

namespace kernscope {
namespace {

TEST(TextPattern, SearchesAnywhereAndMatchesWholeText) {
  const auto p = TextPattern::literal(R"(gemv\w*)");
  EXPECT_TRUE(p.search("void gemv2T_kernel<float>"));
  EXPECT_FALSE(p.matches("void gemv2T_kernel<float>"));
  EXPECT_TRUE(p.matches("gemv2T_kernel"));
  EXPECT_FALSE(p.search("gem v"));
}

TEST(TextPattern, IgnoresCaseOnlyWhenAsked) {
  EXPECT_FALSE(TextPattern::literal("flash_fwd").search("FLASH_FWD_kernel"));
  EXPECT_TRUE(TextPattern::literal("flash_fwd", {.ignore_case = true}).search("FLASH_FWD_kernel"));
}

TEST(TextPattern, DollarIsTheEndOfTheTextOnly) {
  // ECMAScript's `$` does not match before a final newline (PCRE2's default would).
  const auto p = TextPattern::literal(R"(ProfilerStep#\d+$)");
  EXPECT_TRUE(p.search("ProfilerStep#12"));
  EXPECT_FALSE(p.search("ProfilerStep#12\n"));
}

TEST(TextPattern, GroupsAndGroupsThatTookNoPart) {
  const auto p = TextPattern::literal(R"(^step\[([A-Z_]+)(?: bs=(\d+))?\]$)");
  auto m = p.match_whole("step[DECODE bs=32]");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->group(1), "DECODE");
  EXPECT_EQ(m->group(2), "32");
  m = p.match_whole("step[EXTEND]");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->group(1), "EXTEND");
  EXPECT_FALSE(m->has(2));
  EXPECT_EQ(m->group(2), "");
  EXPECT_EQ(m->group(7), "");  // no such group
}

TEST(TextPattern, FindsEveryMatchFromAnOffset) {
  const auto p = TextPattern::literal(R"(rank[-_]?(\d+))");
  const std::string name = "job_rank1_of_rank_12.json";
  std::vector<std::string> found;
  for (auto m = p.find(name); m; m = p.find(name, m->end())) found.emplace_back(m->group(1));
  EXPECT_EQ(found, (std::vector<std::string>{"1", "12"}));
  // \b looks at the character before the offset, as a search of the whole text does.
  EXPECT_FALSE(TextPattern::literal(R"(\bint)").find("uint", 1));
}

TEST(TextPattern, LookaheadAndLazyQuantifiers) {
  const auto moe = TextPattern::literal("grouped_gemm(?!::)");
  EXPECT_TRUE(moe.search("deep_gemm::grouped_gemm_kernel"));
  EXPECT_FALSE(moe.search("dpsk::grouped_gemm::dense"));
  const auto lazy = TextPattern::literal(R"(^_?forward_step\b.*?(\d+) ctx reqs?)");
  auto m = lazy.find("_forward_step 12: 1 ctx reqs, 3 gen reqs");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->group(1), "1");
}

TEST(TextPattern, ReplacesEveryMatchWithGroups) {
  EXPECT_EQ(TextPattern::literal(R"(\b(unsigned|long|short) int\b)").replace_all("f<unsigned int, long int, int>", "$1"),
            "f<unsigned, long, int>");
  EXPECT_EQ(TextPattern::literal(R"(, (?:seq|op_id) = \d+)").replace_all("aten::mm, seq = 3, op_id = 99", ""), "aten::mm");
  EXPECT_EQ(TextPattern::literal(R"(\bauto:(\d+))").replace_all("f(auto:1, auto:2)", "T$1"), "f(T1, T2)");
  // An empty match moves on by one character and keeps it (std::regex_replace does the same).
  EXPECT_EQ(TextPattern::literal("x*").replace_all("ab", "-"), "-a-b-");
  EXPECT_EQ(TextPattern::literal("z").replace_all("abc", "-"), "abc");
}

TEST(TextPattern, BytesThatAreNotUtf8AreMatchedAsBytes) {
  const std::string name = std::string("kernel_") + char(0xff) + char(0xfe) + "_gemm";
  EXPECT_TRUE(TextPattern::literal("_gemm$").search(name));
  EXPECT_TRUE(TextPattern::literal("kernel_..").search(name));
}

TEST(TextPattern, ABadPatternIsAnErrorWithItsOffset) {
  auto p = TextPattern::compile("gemm(");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().find("offset 5"), std::string::npos) << p.error();
  EXPECT_THROW(TextPattern::literal("[a-"), std::invalid_argument);
}

}  // namespace
}  // namespace kernscope
