#include "kernscope/string_pool.hpp"

namespace kernscope {

StringId StringPool::intern(std::string_view text) {
  if (auto it = index_.find(text); it != index_.end()) return it->second;
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  index_.emplace(std::string_view(stored), id);
  return id;
}

std::string_view StringPool::get(StringId id) const {
  if (id == kNoString || id >= strings_.size()) return {};
  return strings_[id];
}

}  // namespace kernscope
