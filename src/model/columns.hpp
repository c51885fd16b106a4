// Generic operations over the column structs of trace.hpp.
#pragma once

#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

// Calls f(destination_column, source_column) for each member pair of two column structs of the
// same type; visit() lists members in the same order for both.
template <class Columns, class F>
void for_each_column_pair(Columns& destination, const Columns& source, F&& f) {
  std::vector<const void*> sources;
  Columns::visit(source, [&](const auto& column) { sources.push_back(&column); });
  std::size_t member = 0;
  Columns::visit(destination, [&](auto& column) {
    using Vec = std::remove_reference_t<decltype(column)>;
    f(column, *static_cast<const Vec*>(sources[member++]));
  });
}

// A new column struct holding the given rows of `in`, in the given order. Columns left empty
// (not loaded) stay empty.
template <class Columns>
Columns select_rows(const Columns& in, const std::vector<RowIndex>& rows) {
  Columns out;
  for_each_column_pair(out, in, [&](auto& column, const auto& source) {
    if (source.empty()) return;
    column.reserve(rows.size());
    for (RowIndex row : rows) column.push_back(source[row]);
  });
  return out;
}

// Appends the rows of `tail` to `head`.
template <class Columns>
void append_rows(Columns& head, const Columns& tail) {
  for_each_column_pair(head, tail, [](auto& column, const auto& source) {
    column.insert(column.end(), source.begin(), source.end());
  });
}

// Appends the rows of `tail` to `head`, freeing each column of `tail` once it is copied, so that
// no more than one column is held twice (the reader's merge of parallel slices).
template <class Columns>
void move_append_rows(Columns& head, Columns& tail) {
  std::vector<void*> tails;
  Columns::visit(tail, [&](auto& column) { tails.push_back(&column); });
  std::size_t member = 0;
  Columns::visit(head, [&](auto& column) {
    using Vec = std::remove_reference_t<decltype(column)>;
    auto& source = *static_cast<Vec*>(tails[member++]);
    column.insert(column.end(), source.begin(), source.end());
    Vec().swap(source);
  });
}

}  // namespace kernscope
