// Operator cost formulas (conventions in shape_flops.hpp). Each formula checks the shapes it
// needs and gives up (nullopt) rather than guess.
#include "analyses/work/shape_flops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>
#include <unordered_map>

namespace kernscope::shapes {
namespace {

// ---- parsing ------------------------------------------------------------------------------
struct Node {
  bool is_list = false;
  std::int64_t value = 0;
  std::vector<Node> items;
};

class Cursor {
 public:
  explicit Cursor(std::string_view text) : s_(text) {}
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return i_ == s_.size();
  }
  std::optional<Node> value(int depth) {
    if (depth > 8) return std::nullopt;
    skip_space();
    Node node;
    if (eat('[')) {
      node.is_list = true;
      if (eat(']')) return node;
      do {
        auto item = value(depth + 1);
        if (!item) return std::nullopt;
        node.items.push_back(std::move(*item));
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
      return node;
    }
    const char* begin = s_.data() + i_;
    auto [end, ec] = std::from_chars(begin, s_.data() + s_.size(), node.value);
    if (ec != std::errc() || end == begin) return std::nullopt;
    i_ += static_cast<std::size_t>(end - begin);
    return node;
  }
  std::optional<std::string> string() {
    if (!eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    if (i_ == s_.size()) return std::nullopt;
    ++i_;
    return out;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

std::optional<std::vector<std::int64_t>> int_list(const Node& n) {
  if (!n.is_list) return std::nullopt;
  std::vector<std::int64_t> out;
  for (const auto& item : n.items) {
    if (item.is_list) return std::nullopt;
    out.push_back(item.value);
  }
  return out;
}

// "[1, 1]" or "1" (a concrete input) -> integers.
std::optional<std::vector<std::int64_t>> concrete_ints(std::string_view text) {
  Cursor c(text);
  auto node = c.value(0);
  if (!node || !c.at_end()) return std::nullopt;
  if (!node->is_list) return std::vector<std::int64_t>{node->value};
  return int_list(*node);
}

// ---- shape arithmetic -----------------------------------------------------------------------
double numel(const std::vector<std::int64_t>& dims) {
  double n = 1;
  for (auto d : dims) n *= static_cast<double>(d);
  return n;
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

bool positive(const std::vector<std::int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](std::int64_t d) { return d >= 0; });
}

// NumPy broadcasting of several shapes; nullopt when they do not broadcast.
std::optional<std::vector<std::int64_t>> broadcast(const std::vector<const std::vector<std::int64_t>*>& shapes) {
  std::size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  std::vector<std::int64_t> out(rank, 1);
  for (const auto* s : shapes) {
    for (std::size_t i = 0; i < s->size(); ++i) {
      const std::int64_t d = (*s)[s->size() - 1 - i];
      std::int64_t& o = out[rank - 1 - i];
      if (d == o || d == 1) continue;
      if (o == 1) o = d;
      else return std::nullopt;
    }
  }
  return out;
}

// ---- arguments --------------------------------------------------------------------------------
class Args {
 public:
  explicit Args(const OpArgs& a) : a_(a) {}
  std::size_t size() const { return a_.shapes.size(); }
  const std::vector<std::int64_t>& dims(std::size_t i) const {
    static const std::vector<std::int64_t> none;
    return i < a_.shapes.size() && !a_.shapes[i].is_list ? a_.shapes[i].dims : none;
  }
  // The element type of argument i: its recorded type, else the assumed one (emit_nvtx).
  std::optional<ElementType> type(std::size_t i) const {
    if (i < a_.types.size()) {
      if (auto t = element_type(a_.types[i])) return t;
      if (!a_.types[i].empty() && a_.types[i] != "Tensor") return std::nullopt;
    }
    return a_.assumed_type;
  }
  // A tensor argument: recorded as one (type known), or with dims where no types were recorded.
  bool is_tensor(std::size_t i) const {
    if (i >= a_.shapes.size() || a_.shapes[i].is_list) return false;
    if (i < a_.types.size()) return element_type(a_.types[i]).has_value();
    return !a_.shapes[i].dims.empty();
  }
  double tensor_bytes(std::size_t i) const {
    auto t = type(i);
    return is_tensor(i) && t ? numel(dims(i)) * t->bytes : 0;
  }
  std::string concrete(std::size_t i) const { return i < a_.concrete.size() ? a_.concrete[i] : std::string(); }
  std::string_view op() const { return a_.op; }
  const OpArgs& raw() const { return a_; }

 private:
  const OpArgs& a_;
};

std::string type_label(const std::optional<ElementType>& t, bool assumed) {
  if (!t) return "?";
  return std::string(precision_name(t->precision)) + (assumed ? " (assumed)" : "");
}

bool type_assumed(const OpArgs& a, std::size_t i) {
  return !(i < a.types.size() && element_type(a.types[i]).has_value());
}

// Non-matrix math runs on CUDA cores: fp64 for double tensors, fp32 otherwise.
Precision vector_precision(const std::optional<ElementType>& t) {
  return t && t->precision == Precision::kFp64 ? Precision::kFp64 : Precision::kFp32;
}

// ---- matrix products ----------------------------------------------------------------------------
std::optional<OpCost> gemm_cost(const Args& a, std::size_t ai, std::size_t bi, std::optional<std::size_t> bias,
                                double batch, double m, double n, double k, std::optional<ElementType> out_type) {
  auto t = a.type(ai);
  if (!t || m < 0 || n < 0 || k < 0) return std::nullopt;
  OpCost c;
  c.flops[static_cast<std::size_t>(t->precision)] = 2 * batch * m * n * k;
  const ElementType out = out_type ? *out_type : *t;
  c.bytes = a.tensor_bytes(ai) + a.tensor_bytes(bi) + batch * m * n * out.bytes + (bias ? a.tensor_bytes(*bias) : 0);
  c.detail = fmt::format("{} {} x {} {}", a.op(), dims_text(a.dims(ai)), dims_text(a.dims(bi)),
                         type_label(t, type_assumed(a.raw(), ai)));
  return c;
}

// mm, addmm, _scaled_mm: 2-D x 2-D.
std::optional<OpCost> mm(const Args& a, std::size_t ai, std::size_t bi, std::optional<std::size_t> bias,
                         std::optional<ElementType> out_type = std::nullopt) {
  const auto& x = a.dims(ai);
  const auto& y = a.dims(bi);
  if (x.size() != 2 || y.size() != 2 || x[1] != y[0]) return std::nullopt;
  return gemm_cost(a, ai, bi, bias, 1, x[0], y[1], x[1], out_type);
}

std::optional<OpCost> bmm(const Args& a, std::size_t ai, std::size_t bi, std::optional<std::size_t> bias) {
  const auto& x = a.dims(ai);
  const auto& y = a.dims(bi);
  if (x.size() != 3 || y.size() != 3 || x[0] != y[0] || x[2] != y[1]) return std::nullopt;
  return gemm_cost(a, ai, bi, bias, x[0], x[1], y[2], x[2], std::nullopt);
}

// linear(input[..., K], weight[N, K], bias?): M = every leading element of the input.
std::optional<OpCost> linear(const Args& a) {
  const auto& x = a.dims(0);
  const auto& w = a.dims(1);
  if (x.empty() || w.size() != 2 || x.back() != w[1] || w[1] == 0) return std::nullopt;
  const double m = numel(x) / static_cast<double>(w[1]);
  const bool has_bias = a.is_tensor(2) && !a.dims(2).empty();
  return gemm_cost(a, 0, 1, has_bias ? std::optional<std::size_t>(2) : std::nullopt, 1, m, w[0], w[1], std::nullopt);
}

// matmul: 1-D operands as a row / column, leading dims broadcast into a batch.
std::optional<OpCost> matmul(const Args& a) {
  std::vector<std::int64_t> x = a.dims(0), y = a.dims(1);
  if (x.empty() || y.empty()) return std::nullopt;
  if (x.size() == 1) x.insert(x.begin(), 1);
  if (y.size() == 1) y.push_back(1);
  if (x[x.size() - 1] != y[y.size() - 2]) return std::nullopt;
  const std::vector<std::int64_t> xb(x.begin(), x.end() - 2), yb(y.begin(), y.end() - 2);
  auto batch = broadcast({&xb, &yb});
  if (!batch) return std::nullopt;
  return gemm_cost(a, 0, 1, std::nullopt, numel(*batch), x[x.size() - 2], y.back(), x.back(), std::nullopt);
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
// needs the concrete stride, padding, dilation and groups (recorded by recent PyTorch).
std::optional<OpCost> convolution(const Args& a) {
  const auto& in = a.dims(0);
  const auto& w = a.dims(1);
  if (in.size() < 3 || w.size() != in.size()) return std::nullopt;
  const std::size_t spatial = in.size() - 2;
  auto stride = concrete_ints(a.concrete(3));
  auto padding = concrete_ints(a.concrete(4));
  auto dilation = concrete_ints(a.concrete(5));
  auto groups = concrete_ints(a.concrete(8));
  if (a.concrete(6) != "False" || !stride || !padding || !dilation || !groups || groups->size() != 1) return std::nullopt;
  auto at = [&](const std::vector<std::int64_t>& v, std::size_t i) { return v.size() == 1 ? v[0] : v[i]; };
  if ((stride->size() != 1 && stride->size() != spatial) || (padding->size() != 1 && padding->size() != spatial) ||
      (dilation->size() != 1 && dilation->size() != spatial)) {
    return std::nullopt;
  }
  std::vector<std::int64_t> out{in[0], w[0]};
  double kernel = 1;
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t s = at(*stride, i), p = at(*padding, i), d = at(*dilation, i), k = w[2 + i];
    if (s <= 0) return std::nullopt;
    out.push_back((in[2 + i] + 2 * p - d * (k - 1) - 1) / s + 1);
    kernel *= static_cast<double>(k);
  }
  auto t = a.type(0);
  if (!t || !positive(out) || (*groups)[0] <= 0) return std::nullopt;
  OpCost c;
  c.flops[static_cast<std::size_t>(t->precision)] = 2 * numel(out) * static_cast<double>(w[1]) * kernel;
  c.bytes = a.tensor_bytes(0) + a.tensor_bytes(1) + a.tensor_bytes(2) + numel(out) * t->bytes;
  c.detail = fmt::format("{} {} * {} -> {} {}", a.op(), dims_text(in), dims_text(w), dims_text(out),
                         type_label(t, type_assumed(a.raw(), 0)));
  return c;
}

// ---- attention --------------------------------------------------------------------------------
enum class Causal { kNone, kTopLeft, kBottomRight };

// (query, key) pairs computed for Lq queries and Lk keys.
double attended_pairs(std::int64_t lq, std::int64_t lk, Causal causal) {
  if (causal == Causal::kNone) return static_cast<double>(lq) * static_cast<double>(lk);
  double pairs = 0;
  for (std::int64_t i = 0; i < lq; ++i) {
    const std::int64_t row = causal == Causal::kTopLeft ? i + 1 : lk - lq + i + 1;
    pairs += static_cast<double>(std::clamp<std::int64_t>(row, 0, lk));
  }
  return pairs;
}

// Where an attention operator's arguments are (PyTorch's schemas, native_functions.yaml).
struct AttentionLayout {
  std::size_t q = 0, k = 1, v = 2;
  bool heads_first = true;   // BHLE (the SDPA entry points) or BLHE (the kernels' own, and varlen's [T, H, E])
  bool backward = false;
  std::vector<std::size_t> reads;  // backward: grad_out, out, logsumexp (read once besides q, k, v)
  std::optional<std::size_t> cu_seq_q, cu_seq_k, max_q, max_k;  // variable-length (packed) batches
};

// (query, key) pairs of a packed batch whose per-sequence lengths are not recorded: only the token
// totals, the number of sequences (cu_seqlens has one more element) and the longest lengths.
struct PairBounds {
  double low = 0, high = 0;
  std::string why;
};

PairBounds varlen_pairs(double tq, double tk, double seqs, double max_q, double max_k, Causal causal) {
  PairBounds b;
  if (tq == seqs && causal != Causal::kTopLeft) {
    // One query per sequence (a decode step): each attends all its sequence's keys.
    b.low = b.high = tk;
    b.why = fmt::format("one query in each of {:g} sequences over {:g} keys", seqs, tk);
  } else if (tq == tk && max_q == max_k) {
    // Self-attention over packed sequences (each sequence's keys are its queries): the pairs are
    // sum L_i^2 over lengths L_i <= M that sum to T. Least when the lengths are equal (T^2 / n, by
    // Cauchy-Schwarz); most when as many as fit are M long (floor(T/M) M^2 + r^2, by convexity).
    const double m = std::max(1.0, std::min(max_q, tq));
    const double full = std::floor(tq / m), rest = tq - full * m;
    b.low = tq * tq / seqs;
    b.high = std::max(b.low, full * m * m + rest * rest);
    if (causal != Causal::kNone) {  // sum L_i (L_i + 1) / 2
      b.low = (b.low + tq) / 2;
      b.high = (b.high + tq) / 2;
    }
    b.why = fmt::format("{:g} tokens in {:g} sequences of at most {:g}, each attending its own tokens", tq, seqs, m);
  } else {
    // Queries against other keys (a cache): each query attends at least one key and at most the
    // longest key sequence; each key is attended by at most the longest query sequence.
    b.low = tq;
    b.high = std::max(b.low, std::min(tq * max_k, tk * max_q));
    b.why = fmt::format("{:g} queries and {:g} keys in {:g} sequences of at most {:g} and {:g}", tq, tk, seqs, max_q, max_k);
  }
  return b;
}

double concrete_number(const Args& a, std::optional<std::size_t> i, double otherwise) {
  if (!i) return otherwise;
  auto v = concrete_ints(a.concrete(*i));
  return v && v->size() == 1 && (*v)[0] > 0 ? static_cast<double>((*v)[0]) : otherwise;
}

// Forward: 2·B·H·P·E for Q·Kᵀ plus 2·B·H·P·Ev for P·V (P: the pairs computed). Backward, as the
// FlashAttention papers and TraceLens (PerfModel SDPA.flops_bwd_func, flash) count it: the scores
// recomputed (Q·Kᵀ), dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q: 2·B·H·P·(3E + 2Ev), 2.5 times
// the forward where E = Ev (TraceLens also adds the GQA head reductions of dK and dV, B·Lk·E·(H/Hkv - 1)
// adds each: left out, as the softmax). Bytes: q, k, v (and the backward's reads) once, the output
// (backward: dq, dk, dv) written once.
std::optional<OpCost> attention(const Args& a, const AttentionLayout& at, Causal causal) {
  const auto& q = a.dims(at.q);
  const auto& k = a.dims(at.k);
  const auto& v = a.dims(at.v);
  const auto& cu_q = at.cu_seq_q ? a.dims(*at.cu_seq_q) : std::vector<std::int64_t>{};
  const auto& cu_k = at.cu_seq_k ? a.dims(*at.cu_seq_k) : std::vector<std::int64_t>{};
  const bool varlen = cu_q.size() == 1 && cu_k.size() == 1 && cu_q[0] >= 2 && cu_k[0] == cu_q[0];
  std::int64_t batch = 0, heads = 0, kv_heads = 0, lq = 0, lk = 0, e = 0, ev = 0;
  if (varlen && q.size() == 3 && k.size() == 3 && v.size() == 3) {  // flash: [T, H, E]
    batch = 1, lq = q[0], heads = q[1], e = q[2], lk = k[0], kv_heads = k[1], ev = v[2];
    if (k[2] != e || v[0] != lk) return std::nullopt;
  } else if (q.size() == 4 && k.size() == 4 && v.size() == 4) {  // a packed batch of efficient attention is [1, T, H, E]
    const std::size_t h = at.heads_first ? 1 : 2, l = at.heads_first ? 2 : 1;
    batch = q[0], heads = q[h], lq = q[l], e = q[3], lk = k[l], kv_heads = k[h], ev = v[3];
    if (k[0] != batch || v[0] != batch || k[3] != e || v[l] != lk || (varlen && batch != 1)) return std::nullopt;
  } else {
    return std::nullopt;  // 3-D without cu_seqlens: no lengths at all
  }
  if (kv_heads <= 0 || heads % kv_heads != 0) return std::nullopt;
  auto t = a.type(at.q);
  if (!t) return std::nullopt;
  PairBounds pairs;
  if (varlen) {
    const double seqs = static_cast<double>(cu_q[0] - 1);
    pairs = varlen_pairs(static_cast<double>(lq), static_cast<double>(lk), seqs, concrete_number(a, at.max_q, static_cast<double>(lq)),
                         concrete_number(a, at.max_k, static_cast<double>(lk)), causal);
  } else {
    pairs.low = pairs.high = attended_pairs(lq, lk, causal);
  }
  const double per_pair = at.backward ? 2.0 * (3 * e + 2 * ev) : 2.0 * (e + ev);
  const double bh = static_cast<double>(batch) * static_cast<double>(heads);
  OpCost c;
  c.flops[static_cast<std::size_t>(t->precision)] = bh * pairs.low * per_pair;
  c.bytes = a.tensor_bytes(at.q) + a.tensor_bytes(at.k) + a.tensor_bytes(at.v);
  if (at.backward) {
    for (std::size_t r : at.reads) c.bytes += a.tensor_bytes(r);
    c.bytes += a.tensor_bytes(at.q) + a.tensor_bytes(at.k) + a.tensor_bytes(at.v);  // dq, dk, dv
  } else {
    c.bytes += bh * static_cast<double>(lq) * static_cast<double>(ev) * t->bytes;
  }
  c.detail = fmt::format("{} q {} k {} v {}{} {}", a.op(), dims_text(q), dims_text(k), dims_text(v),
                         causal == Causal::kNone ? "" : causal == Causal::kTopLeft ? " causal" : " causal (bottom-right)",
                         type_label(t, type_assumed(a.raw(), at.q)));
  if (varlen) {
    c.flops_high = bh * pairs.high * per_pair;
    c.detail += fmt::format(" varlen: {:.4g} to {:.4g} FLOPs ({}; per-sequence lengths not recorded), the lower counted",
                            c.total_flops(), c.flops_high, pairs.why);
  }
  return c;
}

Causal causal_flag(const Args& a, std::size_t index, Causal when_true) {
  return a.concrete(index) == "True" ? when_true : Causal::kNone;
}

// ---- non-matrix operators ---------------------------------------------------------------------
// FLOPs per output element; the output has the broadcast shape of the tensor arguments.
std::optional<OpCost> elementwise(const Args& a, double flops_per_element, bool bool_output) {
  std::vector<const std::vector<std::int64_t>*> shapes;
  std::optional<ElementType> widest, widest_scalar;
  double in_bytes = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a.is_tensor(i)) continue;
    auto t = a.type(i);
    if (!t) return std::nullopt;
    shapes.push_back(&a.dims(i));
    in_bytes += numel(a.dims(i)) * t->bytes;
    // Type promotion: 0-dim tensors (wrapped Python numbers) do not widen tensors with dims.
    if (a.dims(i).empty()) {
      if (!widest_scalar || t->bytes > widest_scalar->bytes) widest_scalar = t;
    } else if (!widest || t->bytes > widest->bytes) {
      widest = t;
    }
  }
  if (!widest) widest = widest_scalar;
  if (shapes.empty()) return std::nullopt;
  auto out = broadcast(shapes);
  if (!out) return std::nullopt;
  OpCost c;
  c.flops[static_cast<std::size_t>(vector_precision(widest))] = flops_per_element * numel(*out);
  c.bytes = in_bytes + numel(*out) * (bool_output ? 1 : widest->bytes);
  c.detail = fmt::format("{} {} {}", a.op(), dims_text(*out), type_label(widest, type_assumed(a.raw(), 0)));
  return c;
}

// Reads argument `in` once, writes as many elements (norms, softmax) plus the small arguments.
std::optional<OpCost> row_op(const Args& a, double flops_per_element, std::vector<std::size_t> extra_inputs) {
  auto t = a.type(0);
  if (!a.is_tensor(0) || !t) return std::nullopt;
  const double n = numel(a.dims(0));
  OpCost c;
  c.flops[static_cast<std::size_t>(vector_precision(t))] = flops_per_element * n;
  c.bytes = 2 * n * t->bytes;
  for (std::size_t i : extra_inputs) c.bytes += a.tensor_bytes(i);
  c.detail = fmt::format("{} {} {}", a.op(), dims_text(a.dims(0)), type_label(t, type_assumed(a.raw(), 0)));
  return c;
}

std::optional<OpCost> norm(const Args& a, std::size_t weight, std::vector<std::size_t> extra) {
  const bool affine = a.is_tensor(weight) && !a.dims(weight).empty();
  return row_op(a, affine ? 5 : 4, std::move(extra));
}

// copy_(dst, src): no math; reads the source and writes the destination.
std::optional<OpCost> copy(const Args& a) {
  if (!a.is_tensor(0) || !a.is_tensor(1) || !a.type(0) || !a.type(1)) return std::nullopt;
  OpCost c;
  c.bytes = a.tensor_bytes(0) + a.tensor_bytes(1);
  c.detail = fmt::format("{} {} {} <- {}", a.op(), dims_text(a.dims(0)), type_label(a.type(0), type_assumed(a.raw(), 0)),
                         type_label(a.type(1), type_assumed(a.raw(), 1)));
  return c;
}

// cat(tensors, dim): reads every input and writes them once more.
std::optional<OpCost> cat(const Args& a) {
  const auto& raw = a.raw();
  if (raw.shapes.empty() || !raw.shapes[0].is_list || !a.raw().assumed_type) {
    // Kineto names a tensor list's type "TensorList": the element type is not recorded.
    return std::nullopt;
  }
  double elements = 0;
  for (const auto& dims : raw.shapes[0].list) elements += numel(dims);
  OpCost c;
  c.bytes = 2 * elements * raw.assumed_type->bytes;
  c.detail = fmt::format("{} {} tensors {}", a.op(), raw.shapes[0].list.size(), type_label(raw.assumed_type, true));
  return c;
}

// Gathers: index_select(self, dim, index) and embedding(weight, indices) read the selected rows
// and write them once, plus the indices.
std::optional<OpCost> gather(const Args& a, std::size_t table, std::size_t index, std::optional<std::size_t> dim_arg) {
  const auto& t = a.dims(table);
  auto type = a.type(table);
  if (t.empty() || !type || !a.is_tensor(index)) return std::nullopt;
  std::int64_t dim = 0;
  if (dim_arg) {
    auto d = concrete_ints(a.concrete(*dim_arg));
    if (!d || d->size() != 1) return std::nullopt;
    dim = (*d)[0] < 0 ? (*d)[0] + static_cast<std::int64_t>(t.size()) : (*d)[0];
    if (dim < 0 || dim >= static_cast<std::int64_t>(t.size()) || t[static_cast<std::size_t>(dim)] == 0) return std::nullopt;
  }
  const double row = numel(t) / static_cast<double>(t[static_cast<std::size_t>(dim)]);
  const double out = numel(a.dims(index)) * row;
  OpCost c;
  c.bytes = 2 * out * type->bytes + a.tensor_bytes(index);
  c.detail = fmt::format("{} {} rows of {} {}", a.op(), numel(a.dims(index)), dims_text(t), type_label(type, type_assumed(a.raw(), table)));
  return c;
}

// Reductions over some dims: one FLOP per input element; the output is small.
std::optional<OpCost> reduction(const Args& a) { return row_op(a, 1, {}).transform([&](OpCost c) {
    c.bytes -= numel(a.dims(0)) * a.type(0)->bytes;  // read once; the reduced output is not counted
    return c;
  });
}

using Formula = std::function<std::optional<OpCost>(const Args&)>;

const std::unordered_map<std::string_view, Formula>& formulas() {
  static const std::unordered_map<std::string_view, Formula> table = [] {
    std::unordered_map<std::string_view, Formula> t;
    t["aten::mm"] = [](const Args& a) { return mm(a, 0, 1, std::nullopt); };
    t["aten::addmm"] = [](const Args& a) { return mm(a, 1, 2, 0); };
    t["aten::_scaled_mm"] = [](const Args& a) {
      // The output type (out_dtype) is not among the recorded shapes: taken as 16-bit.
      auto c = mm(a, 0, 1, std::nullopt, ElementType{Precision::kBf16, 2});
      if (c) c->detail += " (output taken as 2 bytes)";
      return c;
    };
    t["aten::bmm"] = [](const Args& a) { return bmm(a, 0, 1, std::nullopt); };
    t["aten::baddbmm"] = [](const Args& a) { return bmm(a, 1, 2, 0); };
    t["aten::linear"] = linear;
    t["aten::matmul"] = matmul;
    t["aten::convolution"] = convolution;
    t["aten::_convolution"] = convolution;
    // PyTorch's SDPA: is_causal is top-left aligned (torch.nn.functional.scaled_dot_product_attention's docs).
    // PyTorch's SDPA: is_causal is top-left aligned (torch.nn.functional.scaled_dot_product_attention's docs).
    const AttentionLayout sdpa;
    t["aten::scaled_dot_product_attention"] = [sdpa](const Args& a) { return attention(a, sdpa, causal_flag(a, 5, Causal::kTopLeft)); };
    t["aten::_scaled_dot_product_flash_attention"] = [sdpa](const Args& a) { return attention(a, sdpa, causal_flag(a, 4, Causal::kTopLeft)); };
    t["aten::_scaled_dot_product_efficient_attention"] = [sdpa](const Args& a) { return attention(a, sdpa, causal_flag(a, 6, Causal::kTopLeft)); };
    t["aten::_scaled_dot_product_cudnn_attention"] = [sdpa](const Args& a) { return attention(a, sdpa, causal_flag(a, 6, Causal::kTopLeft)); };
    // The kernels' own entry points take (batch, length, heads, dim), or packed [tokens, heads, dim]
    // with cu_seqlens, and align causal masks bottom-right.
    t["aten::_flash_attention_forward"] = [](const Args& a) {
      const AttentionLayout at{0, 1, 2, false, false, {}, 3, 4, 5, 6};
      return attention(a, at, causal_flag(a, 8, Causal::kBottomRight));
    };
    t["aten::_efficient_attention_forward"] = [](const Args& a) {
      const AttentionLayout at{0, 1, 2, false, false, {}, 4, 5, 6, 7};
      const std::string mask = a.concrete(9);  // custom_mask_type: 0 none, 1 top-left, 2 bottom-right
      return attention(a, at, mask == "1" ? Causal::kTopLeft : mask == "2" ? Causal::kBottomRight : Causal::kNone);
    };
    // Backward: (grad_out, query, key, value, ...) as native_functions.yaml declares them.
    t["aten::_scaled_dot_product_flash_attention_backward"] = [](const Args& a) {
      const AttentionLayout at{1, 2, 3, true, true, {0, 4, 5}, {}, {}, {}, {}};
      return attention(a, at, causal_flag(a, 11, Causal::kTopLeft));
    };
    t["aten::_scaled_dot_product_efficient_attention_backward"] = [](const Args& a) {
      const AttentionLayout at{1, 2, 3, true, true, {0, 5, 6}, {}, {}, {}, {}};
      return attention(a, at, causal_flag(a, 11, Causal::kTopLeft));
    };
    t["aten::_scaled_dot_product_cudnn_attention_backward"] = [](const Args& a) {
      const AttentionLayout at{1, 2, 3, true, true, {0, 4, 5}, {}, {}, {}, {}};
      return attention(a, at, causal_flag(a, 14, Causal::kTopLeft));
    };
    t["aten::_flash_attention_backward"] = [](const Args& a) {
      const AttentionLayout at{1, 2, 3, false, true, {0, 4, 5}, 6, 7, 8, 9};
      return attention(a, at, causal_flag(a, 11, Causal::kBottomRight));
    };
    t["aten::_efficient_attention_backward"] = [](const Args& a) {
      const AttentionLayout at{1, 2, 3, false, true, {0, 5, 10}, 6, 7, 8, 9};
      const std::string mask = a.concrete(14);
      return attention(a, at, mask == "1" ? Causal::kTopLeft : mask == "2" ? Causal::kBottomRight : Causal::kNone);
    };
    t["aten::native_layer_norm"] = [](const Args& a) { return norm(a, 2, {2, 3}); };
    t["aten::layer_norm"] = [](const Args& a) { return norm(a, 2, {2, 3}); };
    t["aten::rms_norm"] = [](const Args& a) { return norm(a, 2, {2}); };
    t["aten::_fused_rms_norm"] = [](const Args& a) { return norm(a, 2, {2}); };
    t["aten::native_group_norm"] = [](const Args& a) { return norm(a, 1, {1, 2}); };
    t["aten::native_batch_norm"] = [](const Args& a) { return norm(a, 1, {1, 2, 3, 4}); };
    t["aten::cudnn_batch_norm"] = [](const Args& a) { return norm(a, 1, {1, 2, 3, 4}); };
    for (std::string_view op : {"aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax",
                                "aten::_safe_softmax"}) {
      t[op] = [](const Args& a) { return row_op(a, 5, {}); };
    }
    static const std::vector<std::string> unary = {
        "abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid", "tanh",
        "relu", "gelu", "silu", "sin", "cos", "pow", "clamp", "clamp_min", "clamp_max", "erf", "hardtanh",
        "leaky_relu", "elu", "softplus", "mish", "square", "sign", "floor", "ceil", "round", "trunc",
        "add", "sub", "rsub", "mul", "div", "maximum", "minimum", "where", "fmod", "remainder", "addcmul",
        "addcdiv", "lerp", "masked_fill", "bitwise_and", "bitwise_or", "bitwise_not"};
    static const std::vector<std::string> comparisons = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and",
                                                         "logical_or", "logical_not", "isnan", "isinf"};
    static std::vector<std::string> names;  // the keys must outlive the table
    names.reserve(4 * (unary.size() + comparisons.size()));
    for (const auto* list : {&unary, &comparisons}) {
      const bool to_bool = list == &comparisons;
      for (const auto& op : *list) {
        for (const std::string& name : {"aten::" + op, "aten::" + op + "_"}) {
          names.push_back(name);
          t[names.back()] = [to_bool](const Args& a) { return elementwise(a, 1, to_bool); };
        }
      }
    }
    t["aten::copy_"] = copy;
    t["aten::index_select"] = [](const Args& a) { return gather(a, 0, 2, 1); };
    t["aten::embedding"] = [](const Args& a) { return gather(a, 0, 1, std::nullopt); };
    t["aten::cat"] = cat;
    for (std::string_view op : {"aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max", "aten::min",
                                "aten::argmax", "aten::prod"}) {
      t[op] = reduction;
    }
    return t;
  }();
  return table;
}

}  // namespace

double OpCost::total_flops() const { return std::accumulate(flops.begin(), flops.end(), 0.0); }

std::optional<std::vector<ArgShape>> parse_arg_shapes(std::string_view text) {
  Cursor c(text);
  auto root = c.value(0);
  if (!root || !root->is_list || !c.at_end()) return std::nullopt;
  std::vector<ArgShape> out;
  for (const auto& item : root->items) {
    ArgShape arg;
    if (!item.is_list) return std::nullopt;
    if (auto dims = int_list(item)) {
      arg.dims = std::move(*dims);
    } else {
      arg.is_list = true;
      for (const auto& tensor : item.items) {
        auto dims_of = int_list(tensor);
        if (!dims_of) return std::nullopt;
        arg.list.push_back(std::move(*dims_of));
      }
    }
    out.push_back(std::move(arg));
  }
  return out;
}

std::optional<std::vector<std::string>> parse_string_list(std::string_view text) {
  Cursor c(text);
  if (!c.eat('[')) return std::nullopt;
  std::vector<std::string> out;
  if (c.eat(']')) return c.at_end() ? std::optional(out) : std::nullopt;
  do {
    auto s = c.string();
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
  } while (c.eat(','));
  if (!c.eat(']') || !c.at_end()) return std::nullopt;
  return out;
}

std::optional<ElementType> element_type(std::string_view name) {
  static const std::unordered_map<std::string_view, ElementType> types = {
      {"float", {Precision::kFp32, 4}},
      {"double", {Precision::kFp64, 8}},
      {"c10::Half", {Precision::kFp16, 2}},
      {"c10::BFloat16", {Precision::kBf16, 2}},
      {"c10::Float8_e4m3fn", {Precision::kFp8, 1}},
      {"c10::Float8_e5m2", {Precision::kFp8, 1}},
      {"c10::Float8_e4m3fnuz", {Precision::kFp8, 1}},
      {"c10::Float8_e5m2fnuz", {Precision::kFp8, 1}},
      {"c10::Float8_e8m0fnu", {Precision::kFp8, 1}},
      {"c10::Float4_e2m1fn_x2", {Precision::kFp4, 1}},  // two FP4 values per byte, one element
      {"signed char", {Precision::kInt8, 1}},
      {"unsigned char", {Precision::kInt8, 1}},
      {"short int", {Precision::kOther, 2}},
      {"int", {Precision::kOther, 4}},
      {"long int", {Precision::kOther, 8}},
      {"bool", {Precision::kOther, 1}},
      {"c10::complex<float>", {Precision::kOther, 8}},
      {"c10::complex<double>", {Precision::kOther, 16}},
  };
  auto it = types.find(name);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

bool has_formula(std::string_view op) { return formulas().contains(op); }

std::optional<OpCost> op_cost(const OpArgs& args) {
  const auto& table = formulas();
  auto it = table.find(args.op);
  if (it == table.end()) return std::nullopt;
  auto cost = it->second(Args(args));
  if (cost && (cost->bytes < 0 || cost->total_flops() < 0)) return std::nullopt;
  return cost;
}

}  // namespace kernscope::shapes
