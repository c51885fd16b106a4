// Tokens proposed and accepted in a Hugging Face assisted-generation verify, read from operator
// shapes (record_shapes). After the target's verify forward, transformers' _assisted_decoding
// (generation/utils.py) slices the candidates off the sequence, `candidate_input_ids[:, cur_len:]`
// (an aten::slice of a [B, cur_len + proposed] tensor on dim 1 from cur_len to the end), and appends
// the tokens it keeps, `torch.cat((input_ids, valid_tokens), dim=-1)` (an aten::cat of [B, cur_len]
// and [B, accepted + 1]). The pair is told apart from every other slice and cat by that agreement:
// the cat's first input is exactly the slice's start long. The verify forward's positions are its
// first aten::embedding's input ids [B, positions].
#pragma once

#include <cstdint>
#include <vector>

#include "kernscope/trace.hpp"

namespace kernscope::spec {

struct VerifyTokens {
  std::int64_t positions = -1;  // the verify forward's, -1: no embedding seen
  std::int64_t proposed = -1, emitted = -1;  // -1: the slice/cat pair not found
};

class HfVerifyTokens {
 public:
  explicit HfVerifyTokens(const Trace& trace);
  // The verify on thread `thread` in [lo, hi) (the verify window, after the draft).
  VerifyTokens read(std::int64_t thread, TimeNs lo, TimeNs hi) const;

 private:
  const Trace& trace_;
  std::vector<RowIndex> rows_;  // op_shapes rows of the three operators read, by thread then start
};

}  // namespace kernscope::spec
