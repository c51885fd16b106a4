// Kernel names demangled the way Nsight Systems writes them (its demangledName column), so that
// traces from kernscope's tracer and from nsys of the same program join by name. nsys spells
// names as CUDA's own demangler (cu++filt) does, not as the C++ runtime does:
//   `<unnamed>` for `(anonymous namespace)`, `<(int)128, (bool)0>` for `<128, false>`,
//   `const c10::Scalar &` for `c10::Scalar const&`, `[lambda(float) (instance 1)]` for
//   `{lambda(float)#1}`, and a function template's parameters as written in the template
//   (`(int, T2, T3)`) rather than with its arguments substituted.
// The name is parsed by LLVM's Itanium demangler and its parse tree printed in that spelling.
#pragma once

#include <string>
#include <string_view>

namespace kernscope {

// nsys's demangledName for a kernel's mangled name. Names that are not Itanium manglings
// (extern "C" kernels, cuBLAS's `nvjet_...`) and manglings nsys's demangler rejects (a `.clone`
// suffix, a vendor qualifier, a malformed name) come back unchanged, as nsys writes them.
std::string nsys_demangle(std::string_view mangled);

}  // namespace kernscope
