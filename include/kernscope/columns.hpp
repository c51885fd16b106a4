// Generic operations over the column structs of trace.hpp.
#pragma once

#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

// A new column struct holding the given rows of `in`, in the given order. Columns left empty
// (not loaded) stay empty.
template <class Columns>
Columns select_rows(const Columns& in, const std::vector<RowIndex>& rows) {
  Columns out;
  Columns::visit(out, [&](auto& column) { column.reserve(rows.size()); });
  // Walk both structs member by member: visit() lists the members in the same order.
  std::vector<const void*> sources;
  Columns::visit(in, [&](const auto& column) { sources.push_back(&column); });
  std::size_t member = 0;
  Columns::visit(out, [&](auto& column) {
    using Vec = std::remove_reference_t<decltype(column)>;
    const Vec& source = *static_cast<const Vec*>(sources[member++]);
    if (source.empty()) return;
    for (RowIndex row : rows) column.push_back(source[row]);
  });
  return out;
}

// Appends the rows of `tail` to `head`.
template <class Columns>
void append_rows(Columns& head, const Columns& tail) {
  std::vector<const void*> sources;
  Columns::visit(tail, [&](const auto& column) { sources.push_back(&column); });
  std::size_t member = 0;
  Columns::visit(head, [&](auto& column) {
    using Vec = std::remove_reference_t<decltype(column)>;
    const Vec& source = *static_cast<const Vec*>(sources[member++]);
    column.insert(column.end(), source.begin(), source.end());
  });
}

template <class Columns>
std::size_t column_bytes(const Columns& columns) {
  std::size_t bytes = 0;
  Columns::visit(columns, [&](const auto& column) {
    bytes += column.capacity() * sizeof(typename std::remove_cvref_t<decltype(column)>::value_type);
  });
  return bytes;
}

}  // namespace kernscope
