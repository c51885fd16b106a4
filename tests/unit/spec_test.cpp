// The speculative-decoding markers (data/spec_markers.tsv): the built-in table parses, names the
// engines' own functions and spans, and leaves alone the names that run with speculation off
// (docs/research/moe_and_speculative_evidence.md, section 4).
#include <gtest/gtest.h>

#include "analyses/spec/spec.hpp"

namespace kernscope {
namespace {

TEST(SpecMarkers, BuiltinTableNamesEnginesDraftsAndVerifies) {
  const auto parsed = SpecMarkers::parse(
      "# comment\ndraft\tget_candidates$\nstep\texecute_model$\nverify_end\tupdate_candidate_strategy$\n", "test");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_FALSE(SpecMarkers::parse("drafts\tx\n", "test").has_value());  // unknown role
  EXPECT_FALSE(SpecMarkers::parse("draft x\n", "test").has_value());    // no tab
  EXPECT_FALSE(SpecMarkers::parse("draft\t(\n", "test").has_value());   // bad pattern

  const SpecMarkers& m = SpecMarkers::builtin();
  EXPECT_EQ(m.role_of("transformers/generation/candidate_generator.py(199): get_candidates"), SpecMarker::kDraft);
  EXPECT_EQ(m.role_of("transformers/generation/candidate_generator.py(224): update_candidate_strategy"), SpecMarker::kVerifyEnd);
  EXPECT_EQ(m.role_of("sglang/srt/speculative/eagle_worker.py(310): forward_batch_generation"), SpecMarker::kStep);
  EXPECT_EQ(m.role_of("sglang/srt/speculative/eagle_worker.py(560): draft"), SpecMarker::kDraft);
  EXPECT_EQ(m.role_of("step[TARGET_VERIFY bs=8]"), SpecMarker::kStep);
  EXPECT_EQ(m.role_of("step[DRAFT_EXTEND bs=8]"), SpecMarker::kDraft);
  EXPECT_EQ(m.role_of("vllm/v1/worker/gpu_model_runner.py(2412): propose_draft_token_ids"), SpecMarker::kDraft);
  EXPECT_EQ(m.role_of("vllm/v1/spec_decode/eagle.py(180): propose"), SpecMarker::kDraft);
  // Running with speculation off, or no speculation at all.
  EXPECT_FALSE(m.role_of("vllm/v1/worker/gpu_input_batch.py(300): update_req_spec_token_ids").has_value());
  EXPECT_FALSE(m.role_of("sglang/srt/model_executor/forward_batch_info.py(90): is_target_verify").has_value());
  EXPECT_FALSE(m.role_of("step[DECODE bs=8]").has_value());
  EXPECT_FALSE(m.role_of("transformers/generation/utils.py(2917): _sample").has_value());
  EXPECT_FALSE(m.role_of("aten::slice").has_value());
}

}  // namespace
}  // namespace kernscope
