#include "analyses/diff/kernel_identity.hpp"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

#include "base/text_pattern.hpp"

namespace kernscope {
namespace {

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Left to right, without overlaps. Built anew rather than with std::string::replace, on which GCC 12
// warns (-Wrestrict, a false positive) when `to` is one character.
void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out.append(s, start, at - start);
    out += to;
    start = at + from.size();
  }
  if (start == 0) return;
  out.append(s, start);
  s = std::move(out);
}

// Index of the parenthesis closing the one at `open`, or npos.
std::size_t closing_paren(const std::string& s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
  }
  return std::string::npos;
}

// cu++filt's `[lambda(ARGS) (instance N)]` and LLVM's `'lambda'(ARGS)` / `'lambdaK'(ARGS)` (the
// (K+2)-th lambda) as the runtime writes them: `{lambda(ARGS)#N}`.
std::string unify_lambdas(std::string s) {
  for (std::size_t at = s.find("[lambda("); at != std::string::npos; at = s.find("[lambda(", at + 1)) {
    const std::size_t close = closing_paren(s, at + 7);
    if (close == std::string::npos) break;
    static const auto instance = TextPattern::literal(R"(^ ?\(instance (\d+)\)\])");
    const std::string rest = s.substr(close + 1);
    const auto m = instance.find(rest);
    if (!m) continue;
    s = s.substr(0, at) + "{lambda" + s.substr(at + 7, close + 1 - (at + 7)) + "#" + std::string(m->group(1)) + "}" +
        rest.substr(m->end());
  }
  for (std::size_t at = s.find("'lambda"); at != std::string::npos; at = s.find("'lambda", at + 1)) {
    std::size_t q = at + 7;
    while (q < s.size() && std::isdigit(static_cast<unsigned char>(s[q]))) ++q;
    if (q >= s.size() || s[q] != '\'' || q + 1 >= s.size() || s[q + 1] != '(') continue;
    const std::size_t close = closing_paren(s, q + 1);
    if (close == std::string::npos) break;
    const std::string digits = s.substr(at + 7, q - (at + 7));
    const int number = digits.empty() ? 1 : std::atoi(digits.c_str()) + 2;
    s = s.substr(0, at) + "{lambda" + s.substr(q + 1, close + 1 - (q + 1)) + "#" + std::to_string(number) + "}" +
        s.substr(close + 1);
  }
  return s;
}

// cu++filt writes literals as casts, the runtime with suffixes: `(unsigned int)4` is `4u`.
std::string unify_literals(const std::string& s) {
  static const auto cast = TextPattern::literal(
      R"(\((unsigned long long|long long|unsigned long|unsigned int|unsigned|long|int|bool)\)(-?\d+))");
  std::string out;
  std::size_t last = 0;
  for (auto m = cast.find(s); m; m = cast.find(s, m->end())) {
    const auto at = m->start();
    // A cast right after a word character is a parameter list followed by a number, not a literal.
    if (at > 0 && is_word(s[at - 1])) continue;
    out += s.substr(last, at - last);
    const std::string type(m->group(1)), number(m->group(2));
    if (type == "bool") {
      out += number == "0" ? "false" : "true";
    } else {
      static const std::vector<std::pair<std::string, std::string>> suffix = {
          {"int", ""}, {"unsigned int", "u"}, {"unsigned", "u"}, {"long", "l"}, {"unsigned long", "ul"},
          {"long long", "ll"}, {"unsigned long long", "ull"}};
      for (const auto& [t, s2] : suffix) {
        if (t == type) out += number + s2;
      }
    }
    last = m->end();
  }
  out += s.substr(last);
  return out;
}

// cu++filt writes the return type of an enclosing function template inside template arguments
// (`std::tuple<A, B> at::f<T>(...)::{lambda()#1}`); the runtime does not. Drops a type that ends
// in `>` and is followed by a name, from the start of its template argument (before spacing).
std::string drop_enclosing_return_types(std::string s) {
  for (std::size_t at = s.find("> "); at != std::string::npos; at = s.find("> ", at + 1)) {
    const std::size_t next = at + 2;
    if (next >= s.size() || !(std::isalpha(static_cast<unsigned char>(s[next])) || s[next] == '_')) continue;
    if (s.compare(next, 5, "const") == 0 || s.compare(next, 8, "volatile") == 0) continue;
    // Back to the start of this template argument: the '<' or ',' one level out, or the start.
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = at + 1; i-- > 0;) {
      const char c = s[i];
      if (c == '>' || c == ')') ++depth;
      if (c == '<' || c == '(') {
        if (depth == 0) {
          start = i + 1;
          break;
        }
        --depth;
      }
      if (c == ',' && depth == 0) {
        start = i + 1;
        break;
      }
    }
    while (start < at && s[start] == ' ') ++start;
    s.erase(start, next - start);
    at = start;
  }
  return s;
}

// cu++filt writes `const T &`, the runtime `T const&`: the const goes after the type (on the
// spaced-out text, where a type runs to the next top-level & * , ) or >).
std::string const_after_type(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool starts_type = i == 0 || s[i - 1] == '(' || s[i - 1] == '<' || s[i - 1] == ',';
    if (starts_type && s.compare(i, 6, "const ") == 0) {
      std::size_t end = i + 6;
      int depth = 0;
      for (; end < s.size(); ++end) {
        const char c = s[end];
        if (c == '<' || c == '(') ++depth;
        if ((c == '>' || c == ')') && depth-- == 0) break;
        if (depth == 0 && (c == '&' || c == '*' || c == ',')) break;
      }
      if (depth <= 0) {
        out += s.substr(i + 6, end - (i + 6)) + " const";
        i = end - 1;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// Whitespace only where two words meet, one space there.
std::string unify_spacing(const std::string& s) {
  std::string out;
  bool pending_space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty() && is_word(out.back()) && is_word(c)) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// `void f<A, B>(T1)` -> `f<A,B>`: a function template's parameters follow from its arguments,
// and cu++filt writes them as T1, T2 where the runtime substitutes them (also for the enclosing
// function of a lambda inside template arguments). Kernels return void; the runtime leaves out
// the return type of an enclosing function, cu++filt writes it.
std::string drop_template_signatures(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' && i > 0 && s[i - 1] == '>') {
      const std::size_t close = closing_paren(s, i);
      if (close != std::string::npos) {
        i = close;
        continue;
      }
    }
    const bool type_start = i == 0 || s[i - 1] == '<' || s[i - 1] == ',';
    if (type_start && s.compare(i, 5, "void ") == 0) {
      i += 4;
      continue;
    }
    if (type_start && s.compare(i, 5, "void(") == 0 && s.compare(i + 4, 21, "(anonymous namespace)") == 0) {
      i += 3;
      continue;
    }
    out += s[i];
  }
  return out;
}

}  // namespace

std::string normalize_kernel_name(std::string_view demangled) {
  std::string s(demangled);
  replace_all(s, "{anonymous}", "(anonymous namespace)");
  replace_all(s, "<unnamed>", "(anonymous namespace)");
  // nvcc's per-file namespaces, which cu++filt leaves out and the runtime writes.
  static const auto file_namespace = TextPattern::literal(R"(_INTERNAL_[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+::)");
  s = file_namespace.replace_all(s, "");
  s = unify_lambdas(std::move(s));
  s = unify_literals(s);
  s = drop_enclosing_return_types(std::move(s));
  // ... and builtin return types (`bool at::f<T>::{lambda(long)#2}` in a template argument).
  static const auto builtin_return = TextPattern::literal(
      R"(([<,]\s*)(?:unsigned long long|long long|unsigned long|unsigned int|unsigned char|signed char|unsigned short|)"
      R"(unsigned|short|long|int|char|bool|float|double|void) (?=[A-Za-z_]\w*::))");
  s = builtin_return.replace_all(s, "$1");
  // ... and qualified ones (`at::Tensor at::native::f<...>::{lambda()#2}`).
  static const auto qualified_return = TextPattern::literal(R"(([<,]\s*)[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+ (?=[A-Za-z_]\w*::))");
  s = qualified_return.replace_all(s, "$1");
  // Generic lambdas' parameters: the runtime's `auto:1` is cu++filt's `T1`.
  static const auto auto_parameter = TextPattern::literal(R"(\bauto:(\d+))");
  s = auto_parameter.replace_all(s, "T$1");
  s = unify_spacing(s);
  s = unify_spacing(const_after_type(s));
  replace_all(s, ",>", ">");  // an empty trailing pack: cu++filt writes `F<A, >`
  // Integer type names: `unsigned int` and `unsigned` are one type, as are `long int` and `long`.
  static const auto int_names = TextPattern::literal(R"(\b(unsigned|long|short) int\b)");
  s = int_names.replace_all(s, "$1");
  return drop_template_signatures(s);
}

std::string runtime_demangle(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return {};
  const std::string name(mangled);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : std::string();
}

IdentityMode identity_mode(const std::vector<const Trace*>& traces) {
  for (const auto* trace : traces) {
    if (!trace->has_mangled_names) return IdentityMode::kNormalized;
    bool any = false;
    for (const auto id : trace->kernels.mangled_name) {
      if (id != kNoString && !trace->strings.get(id).empty()) {
        any = true;
        break;
      }
    }
    if (!any && trace->kernels.size() > 0) return IdentityMode::kNormalized;
  }
  return IdentityMode::kMangled;
}

std::string_view identity_mode_name(IdentityMode mode) {
  return mode == IdentityMode::kMangled ? "mangled names" : "normalized demangled names";
}

const std::string& KernelIdentity::key(RowIndex row) {
  const auto& k = trace_.kernels;
  const StringId mangled = row < k.mangled_name.size() ? k.mangled_name[row] : kNoString;
  const StringId demangled = k.demangled_name[row];
  const std::uint64_t cache_key = (static_cast<std::uint64_t>(mangled) << 32) | demangled;
  auto it = cache_.find(cache_key);
  if (it != cache_.end()) return it->second;
  const std::string_view mangled_text = trace_.strings.get(mangled);
  std::string identity;
  if (mode_ == IdentityMode::kMangled && !mangled_text.empty()) {
    identity = std::string(mangled_text);
  } else {
    // Where the trace has the mangled name, the runtime's spelling of it is what a PyTorch trace
    // of the same kernel holds; else the name as the trace spells it.
    std::string spelled = runtime_demangle(mangled_text);
    if (spelled.empty()) spelled = std::string(trace_.strings.get(demangled));
    identity = normalize_kernel_name(spelled);
  }
  return cache_.emplace(cache_key, std::move(identity)).first->second;
}

}  // namespace kernscope
