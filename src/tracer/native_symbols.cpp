#include "tracer/native_symbols.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kernscope::tracer {

// A module's functions from its .symtab section, sorted by address (empty when stripped).
struct NativeSymbolizer::ModuleSymbols {
  struct Function {
    std::uint64_t start = 0, size = 0;
    std::string name;
  };
  std::vector<Function> functions;

  const Function* find(std::uint64_t vaddr) const {
    auto it = std::upper_bound(functions.begin(), functions.end(), vaddr,
                               [](std::uint64_t a, const Function& f) { return a < f.start; });
    if (it == functions.begin()) return nullptr;
    --it;
    return vaddr < it->start + it->size ? &*it : nullptr;
  }
};

namespace {

// Reads STT_FUNC symbols from the ELF64 file's SHT_SYMTAB, checking every offset against the
// file's size (a truncated or odd file gives no symbols, never a crash).
using RawFunction = std::pair<std::uint64_t, std::pair<std::uint64_t, std::string>>;  // start, size, name

void read_symtab(const std::string& path, std::vector<RawFunction>& out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    close(fd);
    return;
  }
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return;
  const auto* base = static_cast<const unsigned char*>(map);
  auto inside = [&](std::uint64_t offset, std::uint64_t length) { return offset <= size && length <= size - offset; };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shentsize == sizeof(Elf64_Shdr) && inside(eh->e_shoff, std::uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; ++i) {
      const Elf64_Shdr& symtab = sections[i];
      if (symtab.sh_type != SHT_SYMTAB || symtab.sh_entsize != sizeof(Elf64_Sym) || symtab.sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& strtab = sections[symtab.sh_link];
      if (!inside(symtab.sh_offset, symtab.sh_size) || !inside(strtab.sh_offset, strtab.sh_size)) continue;
      const auto* symbols = reinterpret_cast<const Elf64_Sym*>(base + symtab.sh_offset);
      const char* names = reinterpret_cast<const char*>(base + strtab.sh_offset);
      for (std::size_t k = 0; k < symtab.sh_size / sizeof(Elf64_Sym); ++k) {
        const Elf64_Sym& s = symbols[k];
        if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0 || s.st_size == 0 || s.st_name >= strtab.sh_size) continue;
        const char* name = names + s.st_name;
        const std::size_t length = strnlen(name, strtab.sh_size - s.st_name);
        out.push_back({s.st_value, {s.st_size, std::string(name, length)}});
      }
    }
  }
  munmap(map, size);
}

std::string hex(std::uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string own_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

std::string demangled(const char* name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out(text);
  std::free(text);
  return out;
}

NativeSymbolizer::NativeSymbolizer() = default;
NativeSymbolizer::~NativeSymbolizer() = default;

const NativeSymbolizer::ModuleSymbols& NativeSymbolizer::symbols_of(const std::string& path) {
  auto& slot = modules_[path];
  if (!slot) {
    slot = std::make_unique<ModuleSymbols>();
    std::vector<RawFunction> raw;
    read_symtab(path, raw);
    std::sort(raw.begin(), raw.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [start, rest] : raw) slot->functions.push_back({start, rest.first, std::move(rest.second)});
  }
  return *slot;
}

const NativeFrame& NativeSymbolizer::resolve(std::uintptr_t address, bool return_address) {
  const auto key = std::make_pair(address, return_address);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  NativeFrame frame;
  const std::uintptr_t lookup = return_address && address > 0 ? address - 1 : address;
  Dl_info info{};
  link_map* module = nullptr;
  const ElfW(Sym)* dynamic = nullptr;
  if (dladdr1(reinterpret_cast<void*>(lookup), &info, reinterpret_cast<void**>(&module), RTLD_DL_LINKMAP) == 0 ||
      module == nullptr) {
    frame.symbol = hex(address);
    frame.unresolved = true;  // no module maps it (unloaded since, or generated code)
    return cache_.emplace(key, std::move(frame)).first->second;
  }
  void* symbol_entry = nullptr;
  dladdr1(reinterpret_cast<void*>(lookup), &info, &symbol_entry, RTLD_DL_SYMENT);
  dynamic = static_cast<const ElfW(Sym)*>(symbol_entry);
  // The main program's link map has no name: its path is /proc/self/exe.
  frame.module = module->l_name && module->l_name[0] ? module->l_name : own_executable();
  const std::uint64_t vaddr = lookup - module->l_addr;  // the address in the file's own numbering
  if (const auto* function = symbols_of(frame.module).find(vaddr)) {
    frame.symbol = demangled(function->name.c_str());
  } else if (info.dli_sname && dynamic && dynamic->st_size > 0 &&
             lookup < reinterpret_cast<std::uintptr_t>(info.dli_saddr) + dynamic->st_size) {
    frame.symbol = demangled(info.dli_sname);
  } else {
    frame.symbol = hex(vaddr);
    frame.unresolved = true;
  }
  return cache_.emplace(key, std::move(frame)).first->second;
}

}  // namespace kernscope::tracer
