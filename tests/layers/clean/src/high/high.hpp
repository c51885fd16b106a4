#pragma once
#include "kernscope/low.hpp"
inline int high_value() { return low_value() + 1; }
