// Nsight Systems' "short name" of a kernel (its shortName column), derived from the demangled
// name for sources that give only that one (Kineto, kernscope's tracer): the function's own name without return type,
// namespaces, template arguments or parameters.
#pragma once

#include <string_view>

namespace kernscope {

// "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" -> "vectorized_elementwise_kernel".
// Names without templates or parameters ("nvjet_sm90_tst_...") come back whole.
std::string_view kernel_short_name(std::string_view demangled);

}  // namespace kernscope
