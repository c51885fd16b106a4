// One identity per kernel across sources and tool versions, so a diff does not split a kernel in
// two because two demanglers spelled it differently. The mangled name is the identity where every
// trace has one (nsys exports, kernscope's tracer); otherwise (PyTorch-profiler traces carry only
// the C++ runtime's demangled spelling) it is the demangled name in one normalized spelling.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope {

// One spelling for what demanglers write differently: cu++filt/nsys vs the C++ runtime
// (abi::__cxa_demangle, which PyTorch's profiler uses) vs LLVM. It unifies
//   anonymous namespaces   `(anonymous namespace)`, `{anonymous}`, `<unnamed>`
//   lambdas                `{lambda(int)#1}`, `[lambda(int) (instance 1)]`, `'lambda'(int)`
//   literals               `(int)128` = `128`, `(unsigned int)4` = `4u`, `(bool)1` = `true`, `(long)2` = `2l`
//   integer type names     `unsigned int` = `unsigned`, `long int` = `long`, `short int` = `short`
//   spacing                `> >` = `>>`, `T *` = `T*`, `a, b` = `a,b`
//   the parameter list and `void ` return type of a function template (implied by its template
//   arguments; cu++filt writes it with T1, T2 where the runtime substitutes the types)
std::string normalize_kernel_name(std::string_view demangled);

// The C++ runtime's spelling of a mangled name (abi::__cxa_demangle); empty when it is not one.
std::string runtime_demangle(std::string_view mangled);

enum class IdentityMode {
  kMangled,     // every trace carries mangled names: they are the identity
  kNormalized,  // normalize_kernel_name of the runtime's spelling
};
IdentityMode identity_mode(const std::vector<const Trace*>& traces);
std::string_view identity_mode_name(IdentityMode mode);

// The identity of each kernel row of one trace, computed once per distinct name.
class KernelIdentity {
 public:
  KernelIdentity(const Trace& trace, IdentityMode mode) : trace_(trace), mode_(mode) {}
  const std::string& key(RowIndex row);
  // What a person reads: the trace's demangled name.
  std::string_view display(RowIndex row) const { return trace_.strings.get(trace_.kernels.demangled_name[row]); }

 private:
  const Trace& trace_;
  IdentityMode mode_;
  std::unordered_map<std::uint64_t, std::string> cache_;  // (mangled id << 32 | demangled id) -> key
};

}  // namespace kernscope
