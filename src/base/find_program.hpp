// Finding an executable the way a shell does, for the commands kernscope runs (nsys, the traced
// program).
#pragma once

#include <string>

namespace kernscope {

// A name with a '/' is checked as given; otherwise each PATH folder is searched (empty entries
// mean the current folder). "" when no executable is found.
std::string find_program(const std::string& program);

}  // namespace kernscope
