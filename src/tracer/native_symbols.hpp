// Names for sampled native addresses, looked up after the run in this process (the modules are
// still mapped): the module (shared object or executable) from the dynamic linker, the function
// from the module's ELF symbol table on disk (.symtab: every function of a binary that is not
// stripped, static ones included), else from its dynamic symbols (dladdr), demangled. An address
// no symbol covers keeps its module and its offset in that module ("0x1a2b", what `addr2line -e
// MODULE` takes) and is flagged unresolved.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace kernscope::tracer {

struct NativeFrame {
  std::string symbol;  // demangled function, or the offset in the module when unresolved
  std::string module;  // the module's path ("" when no module maps the address)
  bool unresolved = false;
};

class NativeSymbolizer {
 public:
  NativeSymbolizer();
  ~NativeSymbolizer();
  // `return_address`: every frame but the innermost holds the address after a call, which may
  // already be the next function's first byte; it is looked up one byte earlier.
  const NativeFrame& resolve(std::uintptr_t address, bool return_address);

 private:
  struct ModuleSymbols;
  const ModuleSymbols& symbols_of(const std::string& path);

  std::map<std::pair<std::uintptr_t, bool>, NativeFrame> cache_;
  std::map<std::string, std::unique_ptr<ModuleSymbols>> modules_;
};

// The C++ demangler's reading of `name`, or `name` itself when it is not a mangled C++ name.
std::string demangled(const char* name);

}  // namespace kernscope::tracer
