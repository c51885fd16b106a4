#include <string>

#include "kernscope/low.hpp"
#include "high/high.hpp"

int low_value() { return 1; }
