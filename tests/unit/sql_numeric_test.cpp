#include <gtest/gtest.h>

#include "analyses/nsys/sql_numeric.hpp"

namespace kernscope {
namespace {

// The first three cases are values from the golden outputs where candidate rounding rules
// disagree (see sql_numeric.hpp); the rest are hand-derived from the exact binary values.
TEST(SqliteRound, MatchesNsysOnGoldenValues) {
  EXPECT_EQ(sqlite_round(694122.85, 1), 694122.8);   // stored 694122.84999...
  EXPECT_EQ(sqlite_round(1812.55, 1), 1812.5);       // stored 1812.54999...
  EXPECT_EQ(sqlite_round(872021.0 / 4.0, 1), 218005.3);  // exact tie: away from zero
}

TEST(SqliteRound, HandDerived) {
  EXPECT_EQ(sqlite_round(2.25, 1), 2.3);    // exact tie
  EXPECT_EQ(sqlite_round(-2.25, 1), -2.3);  // exact tie, negative
  EXPECT_EQ(sqlite_round(0.05, 1), 0.1);    // stored 0.05000000000000000277
  EXPECT_EQ(sqlite_round(9.96, 1), 10.0);   // carry into a new digit
  EXPECT_EQ(sqlite_round(99.95, 1), 100.0);  // stored 99.9500000000000028
  EXPECT_EQ(sqlite_round(7216.0, 1), 7216.0);
  EXPECT_EQ(sqlite_round(0.0, 1), 0.0);
  EXPECT_EQ(sqlite_round(1.0005, 3), 1.0);  // stored 1.000499999...
}

}  // namespace
}  // namespace kernscope
