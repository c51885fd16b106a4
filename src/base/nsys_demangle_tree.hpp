// Internal to nsys_demangle: LLVM's Itanium parse tree and what the parse noticed that the tree
// does not keep, shared by the parser (nsys_demangle.cpp) and the printer (nsys_demangle_print.cpp).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "llvm/Config/llvm-config.h"
#include "llvm/Demangle/ItaniumDemangle.h"

// The printer reads the fields of each node kind through its match(); those changed between LLVM
// releases, so the version the printer was written against is pinned.
static_assert(LLVM_VERSION_MAJOR == 14, "nsys_demangle is written against LLVM 14's ItaniumDemangle.h (llvm-14-dev)");

namespace kernscope::nsys_demangle_detail {

namespace itanium = llvm::itanium_demangle;

struct ParseFacts {
  // A local entity that is not the first of its name in its function (discriminator `_0` on
  // the LocalName): nsys appends " (instance N)", N counting from 1.
  std::unordered_map<const itanium::Node*, unsigned> local_instance;
  // Types nsys writes as names, with `*` and `&` right after them, where a type gets a space
  // first (`f(const testing::TestResult &)`): a nested name's prefix reused as a type through a
  // substitution (`pipe(fmt::v9::file&)`), and a substitution given template arguments
  // (`std::vector<...>&` from `S9_I...E`, `const std::allocator<char>&` from `SaIcE`).
  std::unordered_set<const itanium::Node*> written_as_names;
  // Namespaces nvcc gives a file's internal entities (`_INTERNAL_<hash>_<file>_cu_<hash>`): nsys
  // leaves them out of qualified names.
  std::unordered_set<const itanium::Node*> hidden_scopes;
};

// nsys's spelling of a parsed name, or nothing for a tree nsys's demangler does not print (it
// then writes the mangled name as it is).
std::optional<std::string> print_in_nsys_spelling(const itanium::Node& root, const ParseFacts& facts);

}  // namespace kernscope::nsys_demangle_detail
