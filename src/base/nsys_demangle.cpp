// Parsing for nsys_demangle: LLVM's Itanium parser, with three productions wrapped so the tree
// carries what nsys's spelling needs and LLVM's tree drops (see nsys_demangle_tree.hpp).
#include "base/nsys_demangle.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/nsys_demangle_tree.hpp"

namespace kernscope {
namespace {

using namespace nsys_demangle_detail;
using itanium::Node;

// Bump allocator for one parse: nodes are never freed one by one (LLVM's own demangler does
// the same), the whole arena goes when the parse is done.
class Arena {
 public:
  void reset() {
    blocks_.clear();
    used_ = capacity_ = 0;
  }

  void* allocate(std::size_t size) {
    size = (size + kAlign - 1) & ~(kAlign - 1);
    if (used_ + size > capacity_) {
      capacity_ = std::max(size, kBlockSize);
      blocks_.emplace_back(new std::byte[capacity_]);
      used_ = 0;
    }
    void* p = blocks_.back().get() + used_;
    used_ += size;
    return p;
  }

  template <class T, class... Args>
  T* makeNode(Args&&... args) {
    return new (allocate(sizeof(T))) T(std::forward<Args>(args)...);
  }

  void* allocateNodeArray(std::size_t n) { return allocate(n * sizeof(Node*)); }

 private:
  static constexpr std::size_t kAlign = alignof(std::max_align_t);
  static constexpr std::size_t kBlockSize = 16 * 1024;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::size_t used_ = 0, capacity_ = 0;
};

class NsysManglingParser : public itanium::AbstractManglingParser<NsysManglingParser, Arena> {
  using Base = itanium::AbstractManglingParser<NsysManglingParser, Arena>;

 public:
  using Base::Base;

  ParseFacts facts;

  // <template-param> (T_, T0_, TL0__): LLVM substitutes the template argument; nsys writes the
  // parameter as T1, T2, ... (`(int, T2, T3)`), also where LLVM would find no argument.
  Node* parseTemplateParam() {
    const char* const start = First;
    std::size_t index = 0;
    const char* const end = template_param_end(start, Last, index);
    Node* const argument = Base::parseTemplateParam();
    if (end == nullptr) return argument;
    First = end;
    const std::string spelled = "T" + std::to_string(index + 1);
    char* text = static_cast<char*>(ASTAllocator.allocate(spelled.size()));
    std::copy(spelled.begin(), spelled.end(), text);
    return make<itanium::NameType>(itanium::StringView(text, text + spelled.size()));
  }

  // <local-name>, as LLVM parses it, keeping the discriminator LLVM skips.
  Node* parseLocalName(NameState* state) {
    if (!consumeIf('Z')) return nullptr;
    Node* encoding = getDerived().parseEncoding();
    if (encoding == nullptr || !consumeIf('E')) return nullptr;
    Node* entity = nullptr;
    if (consumeIf('s')) {
      entity = make<itanium::NameType>("string literal");
    } else if (consumeIf('d')) {
      parseNumber(true);
      if (!consumeIf('_')) return nullptr;
      entity = getDerived().parseName(state);
      if (entity == nullptr) return nullptr;
      return make<itanium::LocalName>(encoding, entity);
    } else {
      entity = getDerived().parseName(state);
    }
    if (entity == nullptr) return nullptr;
    Node* local = make<itanium::LocalName>(encoding, entity);
    if (const std::size_t discriminator = parse_discriminator(); discriminator > 0) {
      facts.local_instance[local] = static_cast<unsigned>(discriminator + 1);
    }
    return local;
  }

  // <nested-name>, as LLVM 14 parses it but without the `L` (internal linkage) that LLVM
  // accepts before a component as an extension: nsys's demangler rejects such names
  // (`_ZN7testing8internalL9ParseFlagEPKcS2_Pb`) and writes them mangled.
  Node* parseNestedName(NameState* state) {
    const std::size_t before = Subs.size();
    Node* name = nested_name(state);
    claim_substitutions(before, SubstitutionOrigin::kNamePrefix);
    return name;
  }

  Node* parseType() {
    // C++23's std::bfloat16_t (`DF16b`, Itanium ABI), which LLVM 14 predates; cu++filt and GNU
    // c++filt both spell it so (ROCm kernels of aiter and ck_tile are templated on it). A builtin
    // type: no substitution candidate.
    if (consumeIf("DF16b")) return make<itanium::NameType>("std::bfloat16_t");
    return nesting([&] {
      const std::size_t before = Subs.size();
      const bool substitution_with_args = at_substitution_with_template_args();
      Node* type = Base::parseType();
      claim_substitutions(before, SubstitutionOrigin::kType);
      if (type != nullptr && substitution_with_args) facts.written_as_names.insert(type);
      return type;
    });
  }

  // Every recursion of the grammar passes through one of these: nesting beyond kMaxNesting is
  // refused, so a hostile name cannot exhaust the stack of the thread that demangles.
  Node* parseName(NameState* state = nullptr) {
    if (look() == 'L') return nullptr;  // internal linkage (`_ZL11file_statici`): nsys rejects it
    return nesting([&] { return Base::parseName(state); });
  }
  Node* parseUnscopedName(NameState* state) {
    if (look() == 'S' && look(1) == 't' && look(2) == 'L') return nullptr;
    return Base::parseUnscopedName(state);
  }
  Node* parseEncoding() { return nesting([&] { return Base::parseEncoding(); }); }
  Node* parseExpr() { return nesting([&] { return Base::parseExpr(); }); }
  Node* parseTemplateArg() { return nesting([&] { return Base::parseTemplateArg(); }); }

  // char16_t, char32_t and char8_t literals (LDs, LDi, LDu), which LLVM 14 does not read and
  // nsys writes as `(char16_t)113`.
  Node* parseExprPrimary() {
    if (look() == 'L' && look(1) == 'D') {
      const char kind = look(2);
      const char* type = kind == 's' ? "char16_t" : kind == 'i' ? "char32_t" : kind == 'u' ? "char8_t" : nullptr;
      if (type != nullptr) {
        First += 3;
        return getDerived().parseIntegerLiteral(type);
      }
    }
    return Base::parseExprPrimary();
  }

  // <unresolved-type> may also be `St <unqualified-name>` (GCC writes `srSt7is_sameI..E5valueE`
  // for std::is_same<..>::value), read as the type it names, as cu++filt reads it.
  Node* parseUnresolvedType() {
    if (look() == 'S' && look(1) == 't') return getDerived().parseType();
    return Base::parseUnresolvedType();
  }

  // nsys rejects identifiers with a '.' (GCC's `._anon_115` for unnamed types), and leaves out
  // the namespaces nvcc makes for a file's internal entities (`_INTERNAL_69efeb29_9_Unique_cu_...`).
  Node* parseSourceName(NameState* state) {
    const char* const start = First;
    Node* name = Base::parseSourceName(state);
    if (name == nullptr) return nullptr;
    std::string_view identifier(start, static_cast<std::size_t>(First - start));
    identifier.remove_prefix(identifier.find_first_not_of("0123456789"));  // the length
    if (identifier.find('.') != std::string_view::npos) return nullptr;
    if (identifier.starts_with("_INTERNAL_")) facts.hidden_scopes.insert(name);
    return name;
  }

  // Thunks, written by nsys with their offsets (LLVM drops them): `Thunk for (offset -8) Foo::f()`,
  // `Thunk for (offset 0, virtual offset -24) ...`. Construction vtables (TC) and reference
  // temporaries (GR) nsys does not read.
  Node* parseSpecialName() {
    if (look() == 'T' && (look(1) == 'h' || look(1) == 'v')) {
      First += 1;
      std::string text = "Thunk for (offset ";
      if (consumeIf('h')) {
        text += signed_number();
        if (!consumeIf('_')) return nullptr;
      } else if (consumeIf('v')) {
        text += signed_number();
        if (!consumeIf('_')) return nullptr;
        text += ", virtual offset " + signed_number();
        if (!consumeIf('_')) return nullptr;
      }
      text += ") ";
      Node* encoding = getDerived().parseEncoding();
      if (encoding == nullptr) return nullptr;
      char* stored = static_cast<char*>(ASTAllocator.allocate(text.size()));
      std::copy(text.begin(), text.end(), stored);
      return make<itanium::SpecialName>(itanium::StringView(stored, stored + text.size()), encoding);
    }
    if ((look() == 'T' && look(1) == 'C') || (look() == 'G' && look(1) == 'R')) return nullptr;
    return Base::parseSpecialName();
  }

  // nsys reads the constructor and destructor variants of the Itanium ABI (C1-C3, D0-D2), not
  // GCC's "unified" ones (C4, C5, D4, D5).
  Node* parseCtorDtorName(Node*& so_far, NameState* state) {
    const std::size_t at = look() == 'C' && look(1) == 'I' ? 2 : 1;
    if (look(at) == '4' || look(at) == '5') return nullptr;
    return Base::parseCtorDtorName(so_far, state);
  }

 private:
  enum class SubstitutionOrigin : unsigned char { kUnclaimed, kNamePrefix, kType };

  // Real kernel names nest a few dozen levels; each level costs the parser a few hundred bytes
  // of stack.
  static constexpr int kMaxNesting = 512;

  template <class Parse>
  Node* nesting(Parse&& parse) {
    if (depth_ >= kMaxNesting) return nullptr;
    ++depth_;
    Node* n = parse();
    --depth_;
    return n;
  }

  // LLVM 14's AbstractManglingParser::parseNestedName less its `consumeIf('L')`.
  Node* nested_name(NameState* state) {
    if (!consumeIf('N')) return nullptr;
    const itanium::Qualifiers cv = parseCVQualifiers();
    if (state) state->CVQualifiers = cv;
    if (consumeIf('O')) {
      if (state) state->ReferenceQualifier = itanium::FrefQualRValue;
    } else if (consumeIf('R')) {
      if (state) state->ReferenceQualifier = itanium::FrefQualLValue;
    } else if (state) {
      state->ReferenceQualifier = itanium::FrefQualNone;
    }

    Node* so_far = nullptr;
    auto push_component = [&](Node* component) {
      if (!component) return false;
      so_far = so_far ? make<itanium::NestedName>(so_far, component) : component;
      if (state) state->EndsWithTemplateArgs = false;
      return so_far != nullptr;
    };
    if (consumeIf("St")) {
      so_far = make<itanium::NameType>("std");
      if (!so_far) return nullptr;
    }
    while (!consumeIf('E')) {
      if (look() == 'L') return nullptr;      // the internal-linkage extension
      if (consumeIf('M')) {                    // <data-member-prefix>
        if (so_far == nullptr) return nullptr;
        continue;
      }
      if (look() == 'T') {                     // <template-param>
        if (!push_component(getDerived().parseTemplateParam())) return nullptr;
        Subs.push_back(so_far);
        continue;
      }
      if (look() == 'I') {                     // <template-prefix> <template-args>
        Node* args = getDerived().parseTemplateArgs(state != nullptr);
        if (args == nullptr || so_far == nullptr) return nullptr;
        so_far = make<itanium::NameWithTemplateArgs>(so_far, args);
        if (!so_far) return nullptr;
        if (state) state->EndsWithTemplateArgs = true;
        Subs.push_back(so_far);
        continue;
      }
      if (look() == 'D' && (look(1) == 't' || look(1) == 'T')) {  // <decltype>
        if (!push_component(getDerived().parseDecltype())) return nullptr;
        Subs.push_back(so_far);
        continue;
      }
      if (look() == 'S' && look(1) != 't') {  // <substitution>
        Node* sub = getDerived().parseSubstitution();
        if (!push_component(sub)) return nullptr;
        if (so_far != sub) Subs.push_back(sub);
        continue;
      }
      if (look() == 'C' || (look() == 'D' && look(1) != 'C')) {  // <ctor-dtor-name>
        if (so_far == nullptr) return nullptr;
        if (!push_component(getDerived().parseCtorDtorName(so_far, state))) return nullptr;
        so_far = getDerived().parseAbiTags(so_far);
        if (so_far == nullptr) return nullptr;
        Subs.push_back(so_far);
        continue;
      }
      if (!push_component(getDerived().parseUnqualifiedName(state))) return nullptr;  // <unqualified-name>
      Subs.push_back(so_far);
    }
    if (so_far == nullptr || Subs.empty()) return nullptr;
    Subs.pop_back();
    return so_far;
  }

  // Substitution candidates added since `before` that no inner production claimed belong to
  // the production returning now: a nested name adds its prefixes, a type itself.
  void claim_substitutions(std::size_t before, SubstitutionOrigin origin) {
    origin_.resize(Subs.size(), SubstitutionOrigin::kUnclaimed);
    for (std::size_t i = before; i < Subs.size(); ++i) {
      if (origin_[i] != SubstitutionOrigin::kUnclaimed) continue;
      origin_[i] = origin;
      if (origin == SubstitutionOrigin::kNamePrefix) facts.written_as_names.insert(Subs[i]);
    }
  }

  // End of the <template-param> at `p` (T [L <level> _] [<index>] _), with its index; nullptr
  // when `p` does not start one.
  static const char* template_param_end(const char* p, const char* last, std::size_t& index) {
    auto number = [&](std::size_t& out) {
      if (p == last || *p < '0' || *p > '9') return false;
      out = 0;
      for (; p != last && *p >= '0' && *p <= '9'; ++p) out = out * 10 + static_cast<std::size_t>(*p - '0');
      return true;
    };
    if (p == last || *p++ != 'T') return nullptr;
    if (p != last && *p == 'L') {
      ++p;
      std::size_t level = 0;
      if (!number(level) || p == last || *p++ != '_') return nullptr;
    }
    index = 0;
    if (p != last && *p == '_') return p + 1;
    if (!number(index) || p == last || *p != '_') return nullptr;
    ++index;
    return p + 1;
  }

  // Whether the input continues with a <substitution> (S_, S<seq-id>_, or an abbreviation such
  // as Sa; not St, which starts a name) followed by <template-args>.
  bool at_substitution_with_template_args() const {
    if (look() != 'S' || look(1) == 't') return false;
    const char* p = First + 1;
    if (p != Last && *p >= 'a' && *p <= 'z') return p + 1 != Last && p[1] == 'I';
    while (p != Last && ((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z'))) ++p;
    return p != Last && *p == '_' && p + 1 != Last && p[1] == 'I';
  }

  // <number> with its `n` for a minus sign, as text ("-8"); empty when there is none.
  std::string signed_number() {
    std::string text;
    if (consumeIf('n')) text = "-";
    const char* digits = First;
    while (First != Last && *First >= '0' && *First <= '9') ++First;
    if (First == digits) return {};
    text.append(digits, First);
    return text;
  }

  // <discriminator> ::= _ <digit> | __ <number> _ ; 0 when there is none, else the number + 1
  // (the second entity of a name is `_0`).
  std::size_t parse_discriminator() {
    if (look() != '_') return 0;
    if (look(1) >= '0' && look(1) <= '9') {
      const std::size_t n = static_cast<std::size_t>(look(1) - '0');
      First += 2;
      return n + 1;
    }
    if (look(1) != '_') return 0;
    const char* p = First + 2;
    std::size_t n = 0;
    const char* digits = p;
    for (; p != Last && *p >= '0' && *p <= '9'; ++p) n = n * 10 + static_cast<std::size_t>(*p - '0');
    if (p == digits || p == Last || *p != '_') return 0;
    First = p + 1;
    return n + 1;
  }

  std::vector<SubstitutionOrigin> origin_;
  int depth_ = 0;
};

}  // namespace

std::string nsys_demangle(std::string_view mangled) {
  // Only "_Z" manglings: LLVM would also read a bare type ("i" as int) or a "__Z" name, which
  // nsys leaves as they are.
  if (!mangled.starts_with("_Z")) return std::string(mangled);
  NsysManglingParser parser(mangled.data(), mangled.data() + mangled.size());
  const Node* root = parser.parse();
  if (root == nullptr) return std::string(mangled);
  std::optional<std::string> spelled = print_in_nsys_spelling(*root, parser.facts);
  return spelled ? std::move(*spelled) : std::string(mangled);
}

}  // namespace kernscope
