// Test helper: a finding by rule name.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "analyses/nsys/analyze.hpp"

namespace kernscope::testing {

inline const Finding& rule(const std::vector<Finding>& all, const std::string& name) {
  for (const auto& f : all) {
    if (f.rule == name) return f;
  }
  throw std::runtime_error("no rule " + name);
}

}  // namespace kernscope::testing
