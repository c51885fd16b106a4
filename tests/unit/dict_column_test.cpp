// DictColumn: every row reads back the value written, whatever the number of distinct values (a
// column that outgrows its 2-byte codes goes on plainly), through push_back, resize, set, the
// model's generic row operations (columns.hpp) and a reader's merge of slices coded differently.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernscope/dict_column.hpp"
#include "kernscope/trace.hpp"
#include "model/columns.hpp"

namespace kernscope {
namespace {

// Each row of a DictColumn equals the same row of a plain vector written alongside.
void expect_same(const DictColumn<std::int64_t>& column, const std::vector<std::int64_t>& expected) {
  ASSERT_EQ(column.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(column[i], expected[i]) << "row " << i;
  std::size_t i = 0;
  for (std::int64_t v : column) ASSERT_EQ(v, expected[i++]);
}

TEST(DictColumn, FewValuesReadBackAndTakeTwoBytesARow) {
  std::mt19937 rng(7);
  // Thread ids as nsys packs them: pid << 24 | tid, a dozen threads interleaved.
  std::vector<std::int64_t> threads;
  for (int t = 0; t < 12; ++t) threads.push_back((std::int64_t{4242} << 24) | (4242 + t));
  DictColumn<std::int64_t> column;
  std::vector<std::int64_t> expected;
  for (int i = 0; i < 100000; ++i) {
    const std::int64_t v = threads[rng() % threads.size()];
    column.push_back(v);
    expected.push_back(v);
  }
  expect_same(column, expected);
  EXPECT_EQ(column.distinct_values().size(), 12u);
  EXPECT_LT(column.bytes(), expected.size() * 3);  // 2 bytes a row (capacity growth aside: < 3)
}

TEST(DictColumn, MoreValuesThanCodesGoOnPlainly) {
  // Past 65,536 distinct values (through the code table's growths) every row still reads back,
  // the values before the switch to plain values included.
  DictColumn<std::int64_t> column;
  std::vector<std::int64_t> expected;
  for (std::int64_t i = 0; i < 70000; ++i) {
    const std::int64_t v = (i * 7919) % 69997 - 5;  // distinct, unordered, some negative
    column.push_back(v);
    expected.push_back(v);
    if (i % 3 == 0) {
      column.push_back(expected[i / 2]);  // an old value again
      expected.push_back(expected[i / 2]);
    }
  }
  expect_same(column, expected);
  EXPECT_TRUE(column.distinct_values().empty());  // plain: no dictionary
}

TEST(DictColumn, ResizeSetAndAssignKeepEveryRow) {
  DictColumn<std::int64_t> column;
  std::vector<std::int64_t> expected;
  column.resize(5, 9);
  expected.resize(5, 9);
  column.emplace_back();
  expected.emplace_back();
  column.set(2, -1);
  expected[2] = -1;
  column.resize(8);
  expected.resize(8);
  expect_same(column, expected);
  column.resize(3);
  expected.resize(3);
  expect_same(column, expected);
  // set() with a new value when the dictionary is full switches to plain values first.
  DictColumn<std::int64_t> full;
  std::vector<std::int64_t> full_expected;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(DictColumn<std::int64_t>::kMaxCodes); ++i) {
    full.push_back(i);
    full_expected.push_back(i);
  }
  full.set(10, -77);
  full_expected[10] = -77;
  expect_same(full, full_expected);
  column.assign(4, 1);
  expect_same(column, {1, 1, 1, 1});
  column.clear();
  EXPECT_TRUE(column.empty());
}

TEST(DictColumn, AMovedFromColumnIsEmptyAndUsable) {
  // The moved-from column must not keep the last value's code (of a dictionary it lost) nor a mode.
  DictColumn<std::int64_t> a;
  a.push_back(5);
  a.push_back(7);
  DictColumn<std::int64_t> b = std::move(a);
  EXPECT_TRUE(a.empty());
  a.push_back(7);
  a.push_back(9);
  a.resize(4, 7);
  expect_same(a, {7, 9, 7, 7});
  expect_same(b, {5, 7});
  DictColumn<std::int64_t> c;
  c = std::move(b);
  b.resize(3, 7);
  expect_same(b, {7, 7, 7});
  expect_same(c, {5, 7});
  // A plain column (past the codes) moved away leaves a coded, empty one.
  DictColumn<std::int64_t> plain;
  for (std::int64_t i = 0; i <= static_cast<std::int64_t>(DictColumn<std::int64_t>::kMaxCodes); ++i) plain.push_back(i);
  DictColumn<std::int64_t> taken = std::move(plain);
  EXPECT_EQ(taken.size(), DictColumn<std::int64_t>::kMaxCodes + 1);
  plain.push_back(3);
  expect_same(plain, {3});
  EXPECT_EQ(plain.distinct_values().size(), 1u);
}

TEST(DictColumn, GenericRowOperationsAndSlicesCodedApart) {
  // The nsys reader scans slices on several threads (each column coded by itself) and appends
  // them: the codes of one slice mean other values in the next.
  ApiCallColumns first, second;
  for (std::int64_t i = 0; i < 10; ++i) {
    for (ApiCallColumns* c : {&first, &second}) {
      c->start_ns.push_back(i);
      c->end_ns.push_back(i + 1);
      c->correlation_id.push_back(static_cast<std::uint32_t>(i));
      c->name.push_back(0);
    }
    first.global_tid.push_back(100 + i % 3);
    second.global_tid.push_back(200 - i % 4);
  }
  std::vector<std::int64_t> expected;
  for (std::int64_t i = 0; i < 10; ++i) expected.push_back(100 + i % 3);
  for (std::int64_t i = 0; i < 10; ++i) expected.push_back(200 - i % 4);
  ApiCallColumns merged = first;
  move_append_rows(merged, second);
  expect_same(merged.global_tid, expected);
  EXPECT_TRUE(second.global_tid.empty());  // freed once copied
  const ApiCallColumns picked = select_rows(merged, {19, 0, 10, 5});
  expect_same(picked.global_tid, {expected[19], expected[0], expected[10], expected[5]});
  ApiCallColumns appended = picked;
  append_rows(appended, first);
  EXPECT_EQ(appended.global_tid.size(), 14u);
  EXPECT_EQ(appended.global_tid[13], 100 + 9 % 3);
  EXPECT_TRUE(appended.global_tid == appended.global_tid);
  EXPECT_FALSE(picked.global_tid == appended.global_tid);
}

}  // namespace
}  // namespace kernscope
