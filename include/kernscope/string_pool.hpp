// Interned strings: every name in a trace is stored once and referred to by a 32-bit id, so event
// columns stay small and grouping by name is grouping by integer.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kernscope {

using StringId = std::uint32_t;
inline constexpr StringId kNoString = UINT32_MAX;

class StringPool {
 public:
  StringId intern(std::string_view text);
  std::string_view get(StringId id) const;  // "" for kNoString
  std::size_t size() const { return strings_.size(); }

 private:
  // A deque keeps each string's address fixed while the pool grows, so the index can hold views.
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace kernscope
