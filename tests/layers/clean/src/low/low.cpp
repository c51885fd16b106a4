#include <string>

#include "kernscope/low.hpp"
#include "not/in/this/tree.hpp"

int low_value() { return 1; }
