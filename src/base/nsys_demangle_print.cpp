// Printing for nsys_demangle: a walk over LLVM's Itanium parse tree that writes each node kind
// in the spelling of CUDA's demangler, which nsys uses. The rules were read off nsys's own
// exports (tests/fixtures/demangle/nsys_pairs.tsv) and cu++filt's output for constructs the
// exports do not contain (cufilt_pairs.tsv); where neither shows a construct, LLVM's spelling
// with the same spacing rules is kept.
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/nsys_demangle_tree.hpp"

namespace kernscope::nsys_demangle_detail {
namespace {

using itanium::Node;
using itanium::NodeArray;
using itanium::StringView;

std::string_view view(StringView s) { return std::string_view(s.begin(), s.size()); }

// Fields of a node of kind T, passed to f as its constructor took them.
template <class T, class F>
void with_fields(const Node& n, F&& f) {
  static_cast<const T&>(n).match(f);
}

class NsysPrinter {
 public:
  explicit NsysPrinter(const ParseFacts& facts) : facts_(facts) {}

  std::optional<std::string> print_root(const Node& root) {
    print(&root);
    if (stop()) return std::nullopt;
    return std::move(out_);
  }

 private:
  // Deeper trees, or longer names, come only from malformed or hostile input (substitutions
  // can make the output exponential in the input); such names are left mangled.
  static constexpr int kMaxDepth = 2048;
  static constexpr std::size_t kMaxOutput = 1 << 20;

  struct DepthGuard {
    explicit DepthGuard(NsysPrinter& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.failed_ = true;
    }
    ~DepthGuard() { --p_.depth_; }
    NsysPrinter& p_;
  };

  bool stop() const { return failed_ || out_.size() > kMaxOutput; }

  void print(const Node* n) {
    left(n);
    right(n);
  }

  // Template arguments and expression operands: an entity named there by its mangling
  // (L_Z...E, as in `&launcher`) is written by name only, without its signature.
  void print_operand(const Node* n) {
    if (n != nullptr && n->getKind() == Node::KFunctionEncoding) {
      print(static_cast<const itanium::FunctionEncoding*>(n)->getName());
      return;
    }
    print(n);
  }

  // An empty pack keeps its separator: nsys writes `RegisterTest<, testing::...>`.
  void print_list(NodeArray list, std::string_view separator = ", ") {
    bool first = true;
    for (const Node* element : list) {
      if (!first) out_ += separator;
      first = false;
      print_operand(element);
    }
  }

  static const Node* strip_quals(const Node* n) {
    while (n != nullptr && n->getKind() == Node::KQualType) {
      with_fields<itanium::QualType>(*n, [&](const Node* child, auto) { n = child; });
    }
    return n;
  }

  static bool is_function(const Node* n) {
    n = strip_quals(n);
    return n != nullptr && (n->getKind() == Node::KFunctionType || n->getKind() == Node::KFunctionEncoding);
  }
  static bool is_array(const Node* n) {
    n = strip_quals(n);
    return n != nullptr && n->getKind() == Node::KArrayType;
  }
  static bool is_declarator(const Node* n) {
    const Node::Kind k = n->getKind();
    return k == Node::KPointerType || k == Node::KReferenceType || k == Node::KPointerToMemberType;
  }

  // Whether a type has a part written after the declarator (parameters, array bounds).
  bool has_right(const Node* n) const {
    if (n == nullptr) return false;
    switch (n->getKind()) {
      case Node::KFunctionType:
      case Node::KArrayType:
        return true;
      case Node::KPointerType: {
        bool r = false;
        with_fields<itanium::PointerType>(*n, [&](const Node* p) { r = has_right(p); });
        return r;
      }
      case Node::KReferenceType: {
        bool r = false;
        with_fields<itanium::ReferenceType>(*n, [&](const Node* p, auto) { r = has_right(p); });
        return r;
      }
      case Node::KPointerToMemberType: {
        bool r = false;
        with_fields<itanium::PointerToMemberType>(*n, [&](const Node*, const Node* m) { r = has_right(m); });
        return r;
      }
      case Node::KQualType: {
        bool r = false;
        with_fields<itanium::QualType>(*n, [&](const Node* c, auto) { r = has_right(c); });
        return r;
      }
      default:
        return false;
    }
  }

  // nsys writes `*` and `&` right after a type it writes as a name (ParseFacts::written_as_names)
  // or a std:: abbreviation (`std::basic_ostream<char, std::char_traits<char>>*` from `So`),
  // after a space otherwise (`float *`, `const T1 &`), and never between two (`char **`).
  bool glued_to_declarator(const Node* pointee) const {
    const Node* base = strip_quals(pointee);
    if (base == nullptr) return false;
    if (is_special_substitution(base) || facts_.written_as_names.contains(base)) return true;
    const char last = out_.empty() ? ' ' : out_.back();
    return last == '*' || last == '&' || last == ' ';
  }

  static bool is_special_substitution(const Node* n) {
    return n->getKind() == Node::KSpecialSubstitution || n->getKind() == Node::KExpandedSpecialSubstitution;
  }

  void declarator_left(const Node* pointee, std::string_view symbol) {
    if (is_function(pointee) || is_array(pointee)) {
      left(pointee);
      if (is_array(pointee)) out_ += ' ';
      out_ += '(';
    } else {
      left(pointee);
      if (!glued_to_declarator(pointee)) out_ += ' ';
    }
    out_ += symbol;
  }

  void declarator_right(const Node* pointee) {
    if (is_function(pointee) || is_array(pointee)) out_ += ')';
    right(pointee);
  }

  // Qualifiers before a type, each followed by a space (`const volatile T1`); after a pointer
  // they are written the same way, so nsys's `T *const *` and `pair<X *const , Y>` both come out.
  void qualifiers(itanium::Qualifiers q) {
    if (q & itanium::QualConst) out_ += "const ";
    if (q & itanium::QualVolatile) out_ += "volatile ";
    if (q & itanium::QualRestrict) out_ += "restrict ";
  }

  void trailing_qualifiers(itanium::Qualifiers q, itanium::FunctionRefQual ref) {
    if (q & itanium::QualConst) out_ += " const";
    if (q & itanium::QualVolatile) out_ += " volatile";
    if (q & itanium::QualRestrict) out_ += " restrict";
    if (ref == itanium::FrefQualLValue) out_ += " &";
    if (ref == itanium::FrefQualRValue) out_ += " &&";
  }

  // Reference to reference collapses (from substitutions): && && is &&, any other pair &.
  static std::pair<const Node*, bool> collapse_reference(const Node* pointee, itanium::ReferenceKind kind) {
    bool rvalue = kind == itanium::ReferenceKind::RValue;
    for (int hops = 0; pointee != nullptr && pointee->getKind() == Node::KReferenceType && hops < kMaxDepth; ++hops) {
      with_fields<itanium::ReferenceType>(*pointee, [&](const Node* p, itanium::ReferenceKind k) {
        rvalue = rvalue && k == itanium::ReferenceKind::RValue;
        pointee = p;
      });
    }
    return {pointee, rvalue};
  }

  void number(StringView digits) {  // LLVM keeps the mangling's `n` for a minus sign
    std::string_view d = view(digits);
    if (!d.empty() && d.front() == 'n') {
      out_ += '-';
      d.remove_prefix(1);
    }
    out_ += d;
  }

  void name(std::string_view n) {
    if (n == "(anonymous namespace)") {
      out_ += "<unnamed>";
    } else if (n.starts_with("operator") && n.size() > 8 && n[8] != ' ' && n[8] != '_' &&
               !(n[8] >= 'a' && n[8] <= 'z') && !(n[8] >= 'A' && n[8] <= 'Z') && !(n[8] >= '0' && n[8] <= '9')) {
      out_ += "operator ";  // nsys: `operator ()`, `operator +=`
      out_ += n.substr(8);
    } else {
      out_ += n;
    }
  }

  // The literal type LLVM keeps as a C suffix ("ul") or a name, as nsys writes it in a cast.
  static std::string_view literal_type(std::string_view t) {
    if (t.empty()) return "int";
    if (t == "u") return "unsigned int";
    if (t == "l") return "long";
    if (t == "ul") return "unsigned long";
    if (t == "ll") return "long long";
    if (t == "ull") return "unsigned long long";
    return t;
  }

  static std::string_view special_name(std::string_view llvm_text) {
    if (llvm_text == "vtable for ") return "Virtual function table for ";
    if (llvm_text == "typeinfo for ") return "Typeinfo for ";
    if (llvm_text == "typeinfo name for ") return "Typeinfo name for ";
    if (llvm_text == "guard variable for ") return "Initialization guard variable for ";
    if (llvm_text == "VTT for ") return "Virtual table table for ";
    return llvm_text;
  }

  static std::string_view special_substitution(itanium::SpecialSubKind k) {
    switch (k) {
      case itanium::SpecialSubKind::allocator: return "std::allocator";
      case itanium::SpecialSubKind::basic_string: return "std::basic_string";
      case itanium::SpecialSubKind::string:
        return "std::basic_string<char, std::char_traits<char>, std::allocator<char>>";
      case itanium::SpecialSubKind::istream: return "std::basic_istream<char, std::char_traits<char>>";
      case itanium::SpecialSubKind::ostream: return "std::basic_ostream<char, std::char_traits<char>>";
      case itanium::SpecialSubKind::iostream: return "std::basic_iostream<char, std::char_traits<char>>";
    }
    return "std::";
  }

  // The constructor or destructor a function's name ends in, if any: nsys marks the base-object
  // variants ` [subobject]` and the deleting destructor ` [deleting]`.
  static std::string_view structor_variant(const Node* n) {
    for (int hops = 0; n != nullptr && hops < kMaxDepth; ++hops) {
      switch (n->getKind()) {
        case Node::KNestedName:
          with_fields<itanium::NestedName>(*n, [&](const Node*, const Node* last) { n = last; });
          break;
        case Node::KNameWithTemplateArgs:
          with_fields<itanium::NameWithTemplateArgs>(*n, [&](const Node* base, const Node*) { n = base; });
          break;
        case Node::KAbiTagAttr:
          with_fields<itanium::AbiTagAttr>(*n, [&](const Node* base, auto) { n = base; });
          break;
        case Node::KCtorDtorName: {
          std::string_view tag;
          with_fields<itanium::CtorDtorName>(*n, [&](const Node*, bool dtor, int variant) {
            if (variant == 2) tag = " [subobject]";
            if (dtor && variant == 0) tag = " [deleting]";
          });
          return tag;
        }
        default:
          return {};
      }
    }
    return {};
  }

  static const Node* last_component(const Node* n) {
    for (int hops = 0; n != nullptr && hops < kMaxDepth; ++hops) {
      switch (n->getKind()) {
        case Node::KNestedName:
          with_fields<itanium::NestedName>(*n, [&](const Node*, const Node* last) { n = last; });
          break;
        case Node::KNameWithTemplateArgs:
          with_fields<itanium::NameWithTemplateArgs>(*n, [&](const Node* base, const Node*) { n = base; });
          break;
        case Node::KLocalName:
          with_fields<itanium::LocalName>(*n, [&](const Node*, const Node* entity) { n = entity; });
          break;
        default:
          return n;
      }
    }
    return n;
  }

  void function_encoding(const Node& n) {
    with_fields<itanium::FunctionEncoding>(n, [&](const Node* ret, const Node* fname, NodeArray params,
                                                  const Node* attrs, itanium::Qualifiers cv,
                                                  itanium::FunctionRefQual ref) {
      if (ret != nullptr) {
        left(ret);
        if (!has_right(ret)) out_ += ' ';
      }
      const std::size_t name_start = out_.size();
      print(fname);
      const std::string_view written = std::string_view(out_).substr(name_start);
      // `operator new (unsigned long)`: nsys leaves a space after a named operator.
      if (written.ends_with("operator new") || written.ends_with("operator delete") ||
          written.ends_with("operator new[]") || written.ends_with("operator delete[]")) {
        out_ += ' ';
      }
      out_ += '(';
      print_list(params);
      out_ += ')';
      if (ret != nullptr) right(ret);
      trailing_qualifiers(cv, ref);
      if (attrs != nullptr) print(attrs);
      out_ += structor_variant(fname);
    });
  }

  void left(const Node* n) {
    if (n == nullptr) {
      failed_ = true;
      return;
    }
    if (stop()) return;
    DepthGuard guard(*this);
    if (failed_) return;
    switch (n->getKind()) {
      // Names.
      case Node::KNameType:
        with_fields<itanium::NameType>(*n, [&](StringView s) { name(view(s)); });
        return;
      case Node::KNestedName:
        with_fields<itanium::NestedName>(*n, [&](const Node* q, const Node* last) {
          if (!facts_.hidden_scopes.contains(q)) {
            print(q);
            out_ += "::";
          }
          print(last);
        });
        return;
      case Node::KQualifiedName:
        with_fields<itanium::QualifiedName>(*n, [&](const Node* q, const Node* last) {
          print(q);
          out_ += "::";
          print(last);
        });
        return;
      case Node::KLocalName:
        with_fields<itanium::LocalName>(*n, [&](const Node* encoding, const Node* entity) {
          print(encoding);
          out_ += "::";
          print(entity);
        });
        if (auto it = facts_.local_instance.find(n); it != facts_.local_instance.end()) {
          out_ += " (instance " + std::to_string(it->second) + ")";
        }
        return;
      case Node::KNameWithTemplateArgs:
        with_fields<itanium::NameWithTemplateArgs>(*n, [&](const Node* base, const Node* args) {
          print(base);
          print(args);
        });
        return;
      case Node::KTemplateArgs:
        with_fields<itanium::TemplateArgs>(*n, [&](NodeArray args) {
          out_ += '<';
          print_list(args);
          out_ += '>';  // `>>`, no space between
        });
        return;
      case Node::KTemplateArgumentPack:
        with_fields<itanium::TemplateArgumentPack>(*n, [&](NodeArray elements) { print_list(elements); });
        return;
      case Node::KParameterPack:
        with_fields<itanium::ParameterPack>(*n, [&](NodeArray elements) { print_list(elements); });
        return;
      case Node::KParameterPackExpansion:
        with_fields<itanium::ParameterPackExpansion>(*n, [&](const Node* child) {
          print_operand(child);
          out_ += "...";
        });
        return;
      case Node::KForwardTemplateReference: {
        const auto& ref = static_cast<const itanium::ForwardTemplateReference&>(*n);
        print(ref.Ref);
        return;
      }
      case Node::KStdQualifiedName:
        with_fields<itanium::StdQualifiedName>(*n, [&](const Node* child) {
          out_ += "std::";
          print(child);
        });
        return;
      case Node::KGlobalQualifiedName:
        with_fields<itanium::GlobalQualifiedName>(*n, [&](const Node* child) {
          out_ += "::";
          print(child);
        });
        return;
      case Node::KSpecialSubstitution:
        with_fields<itanium::SpecialSubstitution>(*n, [&](itanium::SpecialSubKind k) { out_ += special_substitution(k); });
        return;
      case Node::KExpandedSpecialSubstitution:
        with_fields<itanium::ExpandedSpecialSubstitution>(*n, [&](itanium::SpecialSubKind k) {
          out_ += special_substitution(k);
        });
        return;
      case Node::KCtorDtorName:
        // Named after the class: its last component (`~[lambda() (instance 1)]()` for a closure).
        with_fields<itanium::CtorDtorName>(*n, [&](const Node* base, bool dtor, int) {
          if (dtor) out_ += '~';
          if (!base->getBaseName().empty()) {
            out_ += view(base->getBaseName());
          } else {
            print(last_component(base));
          }
        });
        return;
      case Node::KDtorName:
        with_fields<itanium::DtorName>(*n, [&](const Node* base) {
          out_ += '~';
          print(base);
        });
        return;
      case Node::KClosureTypeName:
        with_fields<itanium::ClosureTypeName>(*n, [&](NodeArray template_params, NodeArray params, StringView count) {
          out_ += "[lambda";
          if (!template_params.empty()) {
            out_ += '<';
            print_list(template_params);
            out_ += '>';
          }
          out_ += '(';
          print_list(params);
          out_ += ") (instance ";
          out_ += count_from_one(count);
          out_ += ")]";
        });
        return;
      case Node::KUnnamedTypeName:
        with_fields<itanium::UnnamedTypeName>(*n, [&](StringView count) {
          out_ += "[unnamed type (instance ";
          out_ += count_from_one(count);
          out_ += ")]";
        });
        return;
      case Node::KStructuredBindingName:
        with_fields<itanium::StructuredBindingName>(*n, [&](NodeArray bindings) {
          out_ += '[';
          print_list(bindings);
          out_ += ']';
        });
        return;
      case Node::KAbiTagAttr:
        with_fields<itanium::AbiTagAttr>(*n, [&](const Node* base, StringView tag) {
          print(base);
          out_ += "[abi:";
          out_ += view(tag);
          out_ += ']';
        });
        return;
      case Node::KEnableIfAttr:
        with_fields<itanium::EnableIfAttr>(*n, [&](NodeArray conditions) {
          out_ += " [enable_if:";
          print_list(conditions);
          out_ += ']';
        });
        return;
      case Node::KConversionOperatorType:
        with_fields<itanium::ConversionOperatorType>(*n, [&](const Node* type) {
          out_ += "operator ";
          print(type);
        });
        return;
      case Node::KLiteralOperator:
        with_fields<itanium::LiteralOperator>(*n, [&](const Node* op) {
          out_ += "operator \"\"";  // nsys: `operator ""_kb`
          print(op);
        });
        return;
      case Node::KSpecialName:
        with_fields<itanium::SpecialName>(*n, [&](StringView special, const Node* child) {
          out_ += special_name(view(special));
          print(child);
        });
        return;
      case Node::KCtorVtableSpecialName:
        with_fields<itanium::CtorVtableSpecialName>(*n, [&](const Node* first, const Node* second) {
          out_ += "construction vtable for ";
          print(first);
          out_ += "-in-";
          print(second);
        });
        return;
      case Node::KFunctionEncoding:
        function_encoding(*n);
        return;

      // Types.
      case Node::KQualType:
        with_fields<itanium::QualType>(*n, [&](const Node* child, itanium::Qualifiers q) {
          if (is_declarator(child)) {  // `int *volatile `, `const char *const `
            left(child);
            qualifiers(q);
          } else if (is_function(child)) {
            left(child);
          } else {  // `const T1`
            qualifiers(q);
            left(child);
          }
        });
        return;
      case Node::KPointerType:
        with_fields<itanium::PointerType>(*n, [&](const Node* pointee) { declarator_left(pointee, "*"); });
        return;
      case Node::KReferenceType:
        with_fields<itanium::ReferenceType>(*n, [&](const Node* pointee, itanium::ReferenceKind kind) {
          const auto [target, rvalue] = collapse_reference(pointee, kind);
          declarator_left(target, rvalue ? "&&" : "&");
        });
        return;
      case Node::KPointerToMemberType:
        // nsys: `int  :: ns::Outer::*`, `void ( :: ns::Outer::*)(int) const`.
        with_fields<itanium::PointerToMemberType>(*n, [&](const Node* class_type, const Node* member) {
          left(member);
          out_ += is_function(member) || is_array(member) ? "(" : " ";
          out_ += " :: ";
          print(class_type);
          out_ += "::*";
        });
        return;
      case Node::KArrayType:
        with_fields<itanium::ArrayType>(*n, [&](const Node* base, const Node*) { left(base); });
        return;
      case Node::KFunctionType:
        // `void (int)`, but `X &(*)(Y &)` and `X &(Y &)`.
        with_fields<itanium::FunctionType>(*n, [&](const Node* ret, auto...) {
          left(ret);
          if (out_.back() != '*' && out_.back() != '&' && out_.back() != ' ') out_ += ' ';
        });
        return;
      case Node::KVectorType:
        // nsys: `float __attribute((vector_size(4*sizeof(float)))) `.
        with_fields<itanium::VectorType>(*n, [&](const Node* base, const Node* dimension) {
          print(base);
          out_ += " __attribute((vector_size(";
          print(dimension);
          out_ += "*sizeof(";
          print(base);
          out_ += ")))) ";
        });
        return;
      case Node::KPixelVectorType:
        with_fields<itanium::PixelVectorType>(*n, [&](const Node* dimension) {
          out_ += "pixel vector[";
          print(dimension);
          out_ += ']';
        });
        return;
      case Node::KBinaryFPType:
        with_fields<itanium::BinaryFPType>(*n, [&](const Node* dimension) {
          out_ += "_Float";
          print(dimension);
        });
        return;
      case Node::KElaboratedTypeSpefType:
        with_fields<itanium::ElaboratedTypeSpefType>(*n, [&](StringView kind, const Node* child) {
          out_ += view(kind);
          out_ += ' ';
          print(child);
        });
        return;
      case Node::KPostfixQualifiedType:
        with_fields<itanium::PostfixQualifiedType>(*n, [&](const Node* type, StringView postfix) {
          print(type);
          out_ += view(postfix);
        });
        return;
      case Node::KNoexceptSpec:
        with_fields<itanium::NoexceptSpec>(*n, [&](const Node* e) {
          out_ += "noexcept(";
          print_operand(e);
          out_ += ')';
        });
        return;
      case Node::KDynamicExceptionSpec:
        with_fields<itanium::DynamicExceptionSpec>(*n, [&](NodeArray types) {
          out_ += "throw(";
          print_list(types);
          out_ += ')';
        });
        return;
      case Node::KSyntheticTemplateParamName:
        with_fields<itanium::SyntheticTemplateParamName>(*n, [&](auto, unsigned index) {
          out_ += 'T';  // not "T" + string: GCC 12's -Wrestrict false positive on a one-character literal
          out_ += std::to_string(index + 1);
        });
        return;
      case Node::KTypeTemplateParamDecl:
        with_fields<itanium::TypeTemplateParamDecl>(*n, [&](const Node* param) {
          out_ += "typename ";
          print(param);
        });
        return;
      case Node::KNonTypeTemplateParamDecl:
        with_fields<itanium::NonTypeTemplateParamDecl>(*n, [&](const Node* param, const Node* type) {
          print(type);
          out_ += ' ';
          print(param);
        });
        return;
      case Node::KTemplateTemplateParamDecl:
        with_fields<itanium::TemplateTemplateParamDecl>(*n, [&](const Node* param, NodeArray params) {
          out_ += "template<";
          print_list(params);
          out_ += "> typename ";
          print(param);
        });
        return;
      case Node::KTemplateParamPackDecl:
        with_fields<itanium::TemplateParamPackDecl>(*n, [&](const Node* param) {
          print(param);
          out_ += "...";
        });
        return;
      case Node::KNodeArrayNode:
        with_fields<itanium::NodeArrayNode>(*n, [&](NodeArray elements) { print_list(elements); });
        return;

      // Expressions (template arguments): nsys writes literals as casts, `(int)128`, `(bool)0`,
      // and operators without spaces or parentheses, `T1*(int)2-(int)1`.
      case Node::KIntegerLiteral:
        with_fields<itanium::IntegerLiteral>(*n, [&](StringView type, StringView value) {
          out_ += '(';
          out_ += literal_type(view(type));
          out_ += ')';
          number(value);
        });
        return;
      case Node::KEnumLiteral:
        with_fields<itanium::EnumLiteral>(*n, [&](const Node* type, StringView value) {
          out_ += '(';
          print(type);
          out_ += ')';
          number(value);
        });
        return;
      case Node::KBoolExpr:
        with_fields<itanium::BoolExpr>(*n, [&](bool value) { out_ += value ? "(bool)1" : "(bool)0"; });
        return;
      case Node::KBinaryExpr:
        with_fields<itanium::BinaryExpr>(*n, [&](const Node* lhs, StringView op, const Node* rhs) {
          print_operand(lhs);
          out_ += view(op);
          print_operand(rhs);
        });
        return;
      case Node::KPrefixExpr:
        with_fields<itanium::PrefixExpr>(*n, [&](StringView prefix, const Node* child) {
          out_ += view(prefix);
          print_operand(child);
        });
        return;
      case Node::KPostfixExpr:
        with_fields<itanium::PostfixExpr>(*n, [&](const Node* child, StringView op) {
          print_operand(child);
          out_ += view(op);
        });
        return;
      case Node::KArraySubscriptExpr:
        with_fields<itanium::ArraySubscriptExpr>(*n, [&](const Node* array, const Node* index) {
          print_operand(array);
          out_ += '[';
          print_operand(index);
          out_ += ']';
        });
        return;
      case Node::KConditionalExpr:
        with_fields<itanium::ConditionalExpr>(*n, [&](const Node* c, const Node* t, const Node* e) {
          print_operand(c);
          out_ += '?';
          print_operand(t);
          out_ += ':';
          print_operand(e);
        });
        return;
      case Node::KMemberExpr:
        with_fields<itanium::MemberExpr>(*n, [&](const Node* lhs, StringView kind, const Node* rhs) {
          print_operand(lhs);
          out_ += view(kind);
          print_operand(rhs);
        });
        return;
      case Node::KEnclosingExpr:
        // nsys: `sizeof(T1)`, `decltype((param#1+(int)1))`.
        with_fields<itanium::EnclosingExpr>(*n, [&](StringView prefix, const Node* infix, StringView postfix) {
          std::string_view open = view(prefix);
          std::string_view close = view(postfix);
          if (open == "decltype(") open = "decltype((", close = "))";
          else if (open.ends_with(" (")) out_ += open.substr(0, open.size() - 2), open = "(";
          out_ += open;
          print_operand(infix);
          out_ += close;
        });
        return;
      case Node::KCastExpr:
        with_fields<itanium::CastExpr>(*n, [&](StringView kind, const Node* to, const Node* from) {
          out_ += view(kind);
          out_ += '<';
          print(to);
          out_ += ">(";
          print_operand(from);
          out_ += ')';
        });
        return;
      case Node::KSizeofParamPackExpr:
        with_fields<itanium::SizeofParamPackExpr>(*n, [&](const Node* pack) {
          out_ += "sizeof...(";
          print_operand(pack);
          out_ += ')';
        });
        return;
      case Node::KCallExpr:
        with_fields<itanium::CallExpr>(*n, [&](const Node* callee, NodeArray args) {
          print_operand(callee);
          out_ += '(';
          print_list(args);
          out_ += ')';
        });
        return;
      case Node::KNewExpr:
        with_fields<itanium::NewExpr>(*n, [&](NodeArray exprs, const Node* type, NodeArray inits, bool global,
                                              bool array) {
          if (global) out_ += "::";
          out_ += array ? "new[]" : "new";
          if (!exprs.empty()) {
            out_ += '(';
            print_list(exprs);
            out_ += ')';
          }
          out_ += ' ';
          print(type);
          if (!inits.empty()) {
            out_ += '(';
            print_list(inits);
            out_ += ')';
          }
        });
        return;
      case Node::KDeleteExpr:
        with_fields<itanium::DeleteExpr>(*n, [&](const Node* op, bool global, bool array) {
          if (global) out_ += "::";
          out_ += array ? "delete[] " : "delete ";
          print_operand(op);
        });
        return;
      case Node::KFunctionParam:
        // LLVM keeps the mangling's number: fp_ is the first parameter, fp0_ the second.
        with_fields<itanium::FunctionParam>(*n, [&](StringView number_text) {
          out_ += "param#";
          out_ += count_from_one(number_text);
        });
        return;
      case Node::KConversionExpr:
        with_fields<itanium::ConversionExpr>(*n, [&](const Node* type, NodeArray exprs) {
          out_ += '(';
          print(type);
          out_ += ")(";
          print_list(exprs);
          out_ += ')';
        });
        return;
      case Node::KPointerToMemberConversionExpr:
        with_fields<itanium::PointerToMemberConversionExpr>(*n, [&](const Node* type, const Node* sub, auto) {
          out_ += '(';
          print(type);
          out_ += ")(";
          print_operand(sub);
          out_ += ')';
        });
        return;
      case Node::KSubobjectExpr:
        with_fields<itanium::SubobjectExpr>(*n, [&](const Node* type, const Node* sub, StringView offset, auto, auto) {
          print_operand(sub);
          out_ += ".<";
          print(type);
          out_ += " at offset ";
          number(offset);
          out_ += '>';
        });
        return;
      case Node::KInitListExpr:
        with_fields<itanium::InitListExpr>(*n, [&](const Node* type, NodeArray inits) {
          if (type != nullptr) print(type);
          out_ += '{';
          print_list(inits);
          out_ += '}';
        });
        return;
      case Node::KBracedExpr:
        with_fields<itanium::BracedExpr>(*n, [&](const Node* elem, const Node* init, bool array) {
          if (array) {
            out_ += '[';
            print_operand(elem);
            out_ += ']';
          } else {
            out_ += '.';
            print_operand(elem);
          }
          out_ += " = ";
          print_operand(init);
        });
        return;
      case Node::KBracedRangeExpr:
        with_fields<itanium::BracedRangeExpr>(*n, [&](const Node* first, const Node* last, const Node* init) {
          out_ += '[';
          print_operand(first);
          out_ += " ... ";
          print_operand(last);
          out_ += "] = ";
          print_operand(init);
        });
        return;
      case Node::KFoldExpr:
        with_fields<itanium::FoldExpr>(*n, [&](bool left_fold, StringView op, const Node* pack, const Node* init) {
          out_ += '(';
          if (left_fold && init != nullptr) print_operand(init), out_ += view(op);
          if (left_fold) out_ += "...", out_ += view(op);
          print_operand(pack);
          if (!left_fold) out_ += view(op), out_ += "...";
          if (!left_fold && init != nullptr) out_ += view(op), print_operand(init);
          out_ += ')';
        });
        return;
      case Node::KThrowExpr:
        with_fields<itanium::ThrowExpr>(*n, [&](const Node* op) {
          out_ += "throw ";
          print_operand(op);
        });
        return;
      case Node::KStringLiteral:
        with_fields<itanium::StringLiteral>(*n, [&](const Node* type) {
          out_ += "\"<";
          print(type);
          out_ += ">\"";
        });
        return;
      case Node::KLambdaExpr:
        with_fields<itanium::LambdaExpr>(*n, [&](const Node* type) { print(type); });
        return;
      case Node::KFloatLiteral:
      case Node::KDoubleLiteral:
      case Node::KLongDoubleLiteral:
        float_literal(*n);
        return;

      // What nsys's demangler rejects: a `.suffix` after the name, a vendor qualifier (`U8__device__`).
      case Node::KDotSuffix:
      case Node::KVendorExtQualType:
      case Node::KObjCProtoName:
        failed_ = true;
        return;
    }
    failed_ = true;  // a node kind this printer does not know
  }

  void right(const Node* n) {
    if (n == nullptr || stop()) return;
    DepthGuard guard(*this);
    if (failed_) return;
    switch (n->getKind()) {
      case Node::KQualType:
        with_fields<itanium::QualType>(*n, [&](const Node* child, itanium::Qualifiers q) {
          right(child);
          if (is_function(child) && !is_declarator(child)) trailing_qualifiers(q, itanium::FrefQualNone);
        });
        return;
      case Node::KPointerType:
        with_fields<itanium::PointerType>(*n, [&](const Node* pointee) { declarator_right(pointee); });
        return;
      case Node::KReferenceType:
        with_fields<itanium::ReferenceType>(*n, [&](const Node* pointee, itanium::ReferenceKind kind) {
          declarator_right(collapse_reference(pointee, kind).first);
        });
        return;
      case Node::KPointerToMemberType:
        with_fields<itanium::PointerToMemberType>(*n, [&](const Node*, const Node* member) {
          if (is_function(member) || is_array(member)) out_ += ')';
          right(member);
        });
        return;
      case Node::KArrayType:
        with_fields<itanium::ArrayType>(*n, [&](const Node* base, const Node* dimension) {
          out_ += '[';
          if (dimension != nullptr) print_operand(dimension);
          out_ += ']';
          right(base);
        });
        return;
      case Node::KFunctionType:
        with_fields<itanium::FunctionType>(*n, [&](const Node* ret, NodeArray params, itanium::Qualifiers cv,
                                                   itanium::FunctionRefQual ref, const Node* exception_spec) {
          out_ += '(';
          print_list(params);
          out_ += ')';
          right(ret);
          trailing_qualifiers(cv, ref);
          if (exception_spec != nullptr) {
            out_ += ' ';
            print(exception_spec);
          }
        });
        return;
      default:
        return;
    }
  }

  // Itanium numbers the first lambda, unnamed type or parameter with no number and the second
  // with 0 (`Ul..E_`, `Ul..E0_`, `fp_`, `fp0_`); nsys counts them from 1. Digits kept as text
  // so that no number is too large.
  static std::string count_from_one(StringView mangled_number) {
    std::string digits(view(mangled_number));
    if (digits.empty()) return "1";
    for (int add = 2, i = static_cast<int>(digits.size()) - 1; add > 0; --i) {
      if (i < 0) {
        digits.insert(digits.begin(), static_cast<char>('0' + add));
        break;
      }
      const int d = digits[static_cast<std::size_t>(i)] - '0' + add;
      digits[static_cast<std::size_t>(i)] = static_cast<char>('0' + d % 10);
      add = d / 10;
    }
    return digits;
  }

  // A floating literal is mangled as the hex digits of its bits; nsys writes the value,
  // `(float)1.5`, `(double)-0.25` (shortest form that reads back the same). LLVM keeps the
  // digits of an x87 long double, which are written as they are.
  void float_literal(const Node& n) {
    StringView contents;
    std::string_view type;
    switch (n.getKind()) {
      case Node::KFloatLiteral:
        with_fields<itanium::FloatLiteral>(n, [&](StringView c) { contents = c; });
        type = "float";
        break;
      case Node::KDoubleLiteral:
        with_fields<itanium::DoubleLiteral>(n, [&](StringView c) { contents = c; });
        type = "double";
        break;
      default:
        with_fields<itanium::LongDoubleLiteral>(n, [&](StringView c) { contents = c; });
        type = "long double";
        break;
    }
    const std::string_view hex = view(contents);
    std::uint64_t bits = 0;
    const bool is_bits = (type == "float" && hex.size() == 8) || (type == "double" && hex.size() == 16);
    if (is_bits && std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16).ptr != hex.data() + hex.size()) {
      failed_ = true;
      return;
    }
    out_ += '(';
    out_ += type;
    out_ += ')';
    if (!is_bits) {
      out_ += hex;
      return;
    }
    char text[64];
    const std::to_chars_result r =
        type == "float" ? std::to_chars(text, text + sizeof text, std::bit_cast<float>(static_cast<std::uint32_t>(bits)))
                        : std::to_chars(text, text + sizeof text, std::bit_cast<double>(bits));
    out_.append(text, r.ptr);
  }

  const ParseFacts& facts_;
  std::string out_;
  int depth_ = 0;
  bool failed_ = false;
};

}  // namespace

std::optional<std::string> print_in_nsys_spelling(const itanium::Node& root, const ParseFacts& facts) {
  return NsysPrinter(facts).print_root(root);
}

}  // namespace kernscope::nsys_demangle_detail
