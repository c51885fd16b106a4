// FLOPs and bytes of a PyTorch operator from its argument shapes and types, as the profiler
// records them (Kineto's "Input Dims"/"Input type"/"Concrete Inputs", or the "sizes = [...]" of
// emit_nvtx(record_shapes=True) ranges). Pure functions: the providers in shape_work join the
// results to kernels.
//
// Conventions (stated once, here):
//  - An FMA counts 2 FLOPs: mm/addmm/linear/matmul 2·M·N·K, bmm/baddbmm 2·B·M·N·K (bias adds not
//    counted), convolution 2·N·Cout·(spatial out)·(Cin/groups)·(kernel size).
//  - Attention (forward): 2·B·H·P·E for Q·Kᵀ plus 2·B·H·P·Ev for P·V, P the (query, key) pairs
//    computed: Lq·Lk, or with is_causal the lower triangle aligned bottom-right (FlashAttention's
//    convention; Lq = Lk gives L(L+1)/2). GQA does not change FLOPs (H = query heads). Backward
//    (flash, efficient, cuDNN): 2·B·H·P·(3E + 2Ev), five matmuls with the scores recomputed, 2.5×
//    the forward as the FlashAttention papers and TraceLens count it. Packed variable-length
//    batches (cu_seqlens) record only token totals: P is bounded (OpCost::flops_high), the lower
//    bound counted.
//  - Non-matrix operators count FLOPs per output element (elementwise 1, softmax 5, norms 4, 5 with
//    an affine weight, as fvcore counts them); they run on CUDA cores, so their FLOPs are fp32 (fp64
//    for double tensors) whatever the storage type.
//  - Bytes are the minimum: every tensor argument read once and the output written once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/work/kernel_work.hpp"

namespace kernscope::shapes {

// One argument's shape: a tensor's dims ([] for scalars and absent arguments), or a tensor list's.
struct ArgShape {
  std::vector<std::int64_t> dims;
  std::vector<std::vector<std::int64_t>> list;  // tensor lists (aten::cat's inputs)
  bool is_list = false;
};

// "[[8, 4096], [4096, 14336], []]" -> one ArgShape per argument; nullopt when not that grammar.
std::optional<std::vector<ArgShape>> parse_arg_shapes(std::string_view text);
// "[\"c10::BFloat16\", \"Scalar\", \"\"]" -> the strings; nullopt when not a list of strings.
std::optional<std::vector<std::string>> parse_string_list(std::string_view text);

// What a tensor type name says: the math precision and the bytes per element.
struct ElementType {
  Precision precision = Precision::kOther;
  int bytes = 0;
};
// Kineto's names ("float", "c10::BFloat16", "c10::Half", "double", "c10::Float8_e4m3fn", "long int",
// "signed char", "bool", ...); nullopt for non-tensors ("Scalar", "TensorList", "") and unknown names.
std::optional<ElementType> element_type(std::string_view type_name);

struct OpArgs {
  std::string_view op;                  // "aten::mm"
  std::vector<ArgShape> shapes;
  std::vector<std::string> types;       // may be empty (emit_nvtx records no types)
  std::vector<std::string> concrete;    // values of scalar arguments; may be empty
  // Used where `types` says nothing of a tensor (emit_nvtx): the element type assumed.
  std::optional<ElementType> assumed_type;
};

struct OpCost {
  std::array<double, kPrecisionCount> flops{};
  double bytes = 0;
  // Where the shapes bound the FLOPs without fixing them (a packed variable-length attention batch,
  // whose per-sequence lengths the profiler does not record): `flops` holds the lower bound and
  // this the upper, both said in `detail`. 0: the FLOPs are exact.
  double flops_high = 0;
  std::string detail;  // "aten::mm [8, 4096] x [4096, 14336] bf16"
  double total_flops() const;
};

// The cost of one operator, or nullopt when kernscope has no formula for it or the shapes do not
// fit the formula (a varlen attention without per-sequence lengths, a convolution without strides).
std::optional<OpCost> op_cost(const OpArgs& args);
// Whether kernscope has a formula for the operator's name.
bool has_formula(std::string_view op);

}  // namespace kernscope::shapes
