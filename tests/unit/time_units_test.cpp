#include <gtest/gtest.h>

#include "kernscope/time_units.hpp"

namespace kernscope {
namespace {

TEST(ParseDuration, ComposesUnits) {
  EXPECT_EQ(parse_duration("1s2ms3us4ns").value(), 1'002'003'004);
  EXPECT_EQ(parse_duration("500ms").value(), 500'000'000);
  EXPECT_EQ(parse_duration("2m").value(), 120'000'000'000);
  EXPECT_EQ(parse_duration("1h1m").value(), 3'660'000'000'000);
  EXPECT_EQ(parse_duration("20s300ms100us").value(), 20'300'100'000);
  EXPECT_EQ(parse_duration("42").value(), 42);  // a bare number is nanoseconds
  EXPECT_EQ(parse_duration("0s").value(), 0);
}

TEST(ParseDuration, RejectsBadGrammar) {
  for (const char* bad : {"", "s", "abc", "1x", "1s5", "-1s", "1.5s", "1 s", "1sms", "99999999999999999999s", "9223372036854775807s"}) {
    auto r = parse_duration(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    }
  }
}

TEST(ParseTimeWindow, EitherSideMayBeOpen) {
  auto both = parse_time_window("1s/2s").value();
  EXPECT_EQ(*both.start, 1'000'000'000);
  EXPECT_EQ(*both.end, 2'000'000'000);
  auto open_start = parse_time_window("/18s1ms").value();
  EXPECT_FALSE(open_start.start);
  EXPECT_EQ(*open_start.end, 18'001'000'000);
  auto open_end = parse_time_window("21s/").value();
  EXPECT_EQ(*open_end.start, 21'000'000'000);
  EXPECT_FALSE(open_end.end);
  auto all = parse_time_window("/").value();
  EXPECT_FALSE(all.start);
  EXPECT_FALSE(all.end);
}

TEST(ParseTimeWindow, RejectsBadWindows) {
  for (const char* bad : {"1s", "2s/1s", "1s/2s/3s", "x/1s", "1s/y", ""}) EXPECT_FALSE(parse_time_window(bad)) << bad;
}

TEST(TimeUnit, ParsesAndScales) {
  EXPECT_EQ(parse_time_unit("us").value(), TimeUnit::kUs);
  EXPECT_EQ(time_unit_divisor(TimeUnit::kMs), 1'000'000);
  EXPECT_EQ(time_unit_suffix(TimeUnit::kS), "sec");
  EXPECT_FALSE(parse_time_unit("minutes"));
}

}  // namespace
}  // namespace kernscope
