// The phase of each step of an LLM inference trace, from the most direct evidence the trace holds,
// saying which evidence decided:
//   1. the step's annotation (decode_step, prefill, vLLM's context/generation counts);
//   2. the shapes PyTorch's profiler recorded (record_shapes): the query length of the step's
//      attention operators (scaled_dot_product_attention's q is [batch, heads, query, dim]), else
//      the token ids the embedding looked up ([batch, tokens]); more than one query token per
//      sequence is a prefill, one is a decode;
//   3. the attention kernels' own kind: prefill/varlen/context kernels against paged, decode and
//      split-KV kernels; both in one step is a mixed step (chunked prefill batched with decodes);
//   4. where attention kernels do not say, the step's new tokens from its KV-cache writes where the
//      kernel launches one block per token (model/token_grids.hpp: vLLM's reshape_and_cache kernels,
//      concat_and_cache_mla): one token is a decode; a step with 8x the run's fewest tokens or more
//      is a prefill; where the run holds such steps, the steps below that are decodes (a batch of
//      sequences, one token each). The kind of attention kernel decides first: a decode batch of
//      many sequences has many tokens too;
//   5. where steps are forward passes split into requests (forward_passes.hpp): a request's first
//      pass is its prefill when it launches rare kernels (launched by at most a quarter of the
//      passes: a prefill's attention and GEMM tiles for many tokens, its mask set-up), and any pass
//      launching those is a prefill too (a second prompt with no gap before it); the rest are
//      decodes, which repeat one set of kernels (a Hugging Face generate() call is one request: a
//      prefill, then a decode per token). A first pass with nothing rare is a decode (a pause inside
//      a request, e.g. a cold first call's, can look like a gap between requests);
//   6. the kernel mix: more time in GEMM tiles than in GEMV-shaped kernels is a prefill.
// Not the launch size of other kernels: the load plans for steps and report leave kernels' grid
// columns unread, and a decision must not depend on which columns were loaded (the readers keep
// the token grids of rule 4 whatever the plan).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernscope/phase.hpp"
#include "kernscope/steps.hpp"
#include "kernscope/trace.hpp"

namespace kernscope::report {

enum class PhaseEvidence { kAnnotation, kShapes, kAttentionKind, kCacheWriteTokens, kRequestStructure, kKernelMix, kNone };

// Words for a table cell: "annotation", "shapes", "attention kernels", "request structure", "kernel mix", "none".
const char* phase_evidence_name(PhaseEvidence evidence);

struct StepPhaseFacts {
  std::int64_t global_tid = 0;  // the step window's thread (0: a window in GPU time)
  std::int32_t request = -1;    // the request of a forward pass (StepWindow::request), -1: none
  std::vector<StringId> kernel_names;  // a forward pass's kernel names, sorted, once each
  std::int64_t cache_write_tokens = -1;  // its first KV-cache write's KernelColumns::token_grid; -1: none
};

struct PhaseDecisions {
  std::vector<PhaseEvidence> evidence;  // per step
  std::string summary;                  // "1 prefill, 16 decode: 17 from shapes (query tokens 512 / 1)"
};

// Sets steps[i].phase where evidence decides it. `facts` is per step (same order); steps whose
// phase came from an annotation keep it. Steps must be sorted by start within each thread.
PhaseDecisions decide_step_phases(const Trace& trace, std::vector<Step>& steps, const std::vector<StepPhaseFacts>& facts);

}  // namespace kernscope::report
