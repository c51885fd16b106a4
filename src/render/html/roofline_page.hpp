// `kernscope roofline --format html`: the roofline as a page (chart, summary, sortable rows).
#pragma once

#include <string>

#include "analyses/work/roofline.hpp"

namespace kernscope {

std::string render_roofline_html(const RooflineResult& result, const std::string& trace_path);

}  // namespace kernscope
