// report --model on the bundled Llama trace (tests/fixtures/nsys/llama_decode_h200: the random-init
// Llama of ../shared/tools/llama_decode_workload.py, batch 1, prompt 512, 64 decode steps, H200).
// Expected figures, none taken from kernscope:
//   bytes per mean decode step (tests/fixtures/models/llama_decode_workload.json, derived by hand in
//   model_cost_test.cpp): weights 1,574,051,840 + KV read 17,842,176 + KV written 32,768 +
//   activations (per layer (2048 + 3*2048) + (2048 + 2*512 + 2048) + 2*2048 + 6*5632 = 51,200
//   elements, * 16 + 2048 + 32000 = 853,248 elements * 2 B) 1,706,496 = 1,593,633,280 B
//   step times and bandwidth from Python's sqlite3 over the export: the 64 'measure:decode_step'
//   NVTX ranges last 13,245,502.109375 ns on average (end - start); the kernels launched inside them
//   (CUPTI_ACTIVITY_KIND_KERNEL joined to CUPTI_ACTIVITY_KIND_RUNTIME by correlationId, launch on
//   the range's thread) take 1,700,610.046875 ns per step; TARGET_INFO_GPU.memoryBandwidth is
//   4,814,304,000,000 B/s.
//   → decode MBU 1,593,633,280 / 13.245502109375 ms / 4.814304 TB/s = 2.4991 %,
//     over kernel time 1,593,633,280 / 1.700610046875 ms / 4.814304 TB/s = 19.4648 %.
// Checked that it fails: with --output-tokens 64 (63 decode steps, a shorter mean context) the
// bytes move by 16,384 and the test fails.
#include <gtest/gtest.h>

#include "analyses/model_cost_report.hpp"
#include "kernscope/diagnosis.hpp"
#include "kernscope/open.hpp"

namespace kernscope {
namespace {

const std::string kFixtures = KERNSCOPE_FIXTURES_DIR;

const Diagnosis& llama_diagnosis() {
  static const Diagnosis d = [] {
    auto trace = open_trace(kFixtures + "/nsys/llama_decode_h200/trace.sqlite.gz");
    EXPECT_TRUE(trace.has_value());
    auto diagnosis = diagnose(*trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{});
    EXPECT_TRUE(diagnosis.has_value());
    auto with_model = *diagnosis;
    auto ok = add_speed_of_light(*trace, {{"model", kFixtures + "/models/llama_decode_workload.json"},
                                          {"batch", "1"},
                                          {"prompt", "512"},
                                          {"output-tokens", "65"},
                                          {"prefill-logits", "all"}},
                                 std::nullopt, with_model);
    EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().message);
    return with_model;
  }();
  return d;
}

const SpeedOfLight* find(const Diagnosis& d, const std::string& name) {
  for (const auto& f : d.speed_of_light) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

TEST(ModelCostReport, DecodeMbuOnTheBundledLlamaTrace) {
  const auto& d = llama_diagnosis();
  const auto* mbu = find(d, "decode MBU");
  ASSERT_NE(mbu, nullptr);
  EXPECT_DOUBLE_EQ(mbu->work, 1'593'633'280.0);
  EXPECT_DOUBLE_EQ(mbu->time_ns, 13'245'502.109375);
  EXPECT_DOUBLE_EQ(mbu->peak_per_s, 4'814'304'000'000.0);
  EXPECT_NEAR(mbu->fraction, 0.024991162, 1e-9);
  const auto* kernels = find(d, "decode MBU over kernel time");
  ASSERT_NE(kernels, nullptr);
  EXPECT_DOUBLE_EQ(kernels->time_ns, 1'700'610.046875);
  EXPECT_NEAR(kernels->fraction, 0.194648087, 1e-9);
  EXPECT_NE(mbu->peak_source.find("NVIDIA H200"), std::string::npos) << mbu->peak_source;
  ASSERT_FALSE(d.diagnosis.empty());
  EXPECT_EQ(d.diagnosis.front().rfind("Speed of light for llama_decode_workload.json: decode MBU 2.5 %", 0), 0u) << d.diagnosis.front();
}

// The device's own record holds no FLOP/s: without a peaks table row prefill MFU is left out, and
// the report says why instead of printing a zero.
TEST(ModelCostReport, PrefillMfuNeedsAFlopPeak) {
  const auto& d = llama_diagnosis();
  EXPECT_EQ(find(d, "prefill MFU"), nullptr);
  bool said = false;
  for (const auto& n : d.speed_of_light_notes) said |= n.find("no prefill MFU") != std::string::npos && n.find("--peaks") != std::string::npos;
  EXPECT_TRUE(said);
}

// Prefill MFU with a given FLOP peak: 0.823056662528 TFLOP (hand-derived: linear 1024 x 786,956,288
// = 805,843,238,912 with logits for all 512 tokens, causal attention 16 * 4 * 32 * 64 * 131,328 =
// 17,213,423,616) over the prefill's TTFT (its host range, 12,973,771 ns, is longer than its GPU
// span, 12,886,343 ns, both from sqlite3) at H200's dense BF16 989.4 TFLOP/s: 6.4119 %.
TEST(ModelCostReport, PrefillMfuWithAPeak) {
  auto trace = open_trace(kFixtures + "/nsys/llama_decode_h200/trace.sqlite.gz");
  ASSERT_TRUE(trace.has_value());
  auto d = diagnose(*trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{});
  ASSERT_TRUE(d.has_value());
  ModelPeaks peaks{4.8e12, "datasheet", 989.4e12, "datasheet", ""};
  auto ok = add_speed_of_light(*trace, {{"model", kFixtures + "/models/llama_decode_workload.json"}, {"prompt", "512"},
                                        {"output-tokens", "65"}, {"prefill-logits", "all"}},
                               peaks, *d);
  ASSERT_TRUE(ok.has_value());
  const auto* mfu = find(*d, "prefill MFU");
  ASSERT_NE(mfu, nullptr);
  EXPECT_DOUBLE_EQ(mfu->work, 823'056'662'528.0);
  EXPECT_DOUBLE_EQ(mfu->time_ns, 12'973'771.0);
  EXPECT_NEAR(mfu->fraction, 823'056'662'528.0 / 12.973771e-3 / 989.4e12, 1e-12);
}

TEST(ModelCostReport, BadModelOptions) {
  auto refused = [](const ModelOptionValues& v, const std::string& words) {
    auto r = model_cost_from_options(v);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
  };
  const std::string config = kFixtures + "/models/meta-llama-3-8b.json";
  refused({{"model", config}, {"prompt", "512"}}, "needs --prompt and --output-tokens");
  refused({{"prompt", "512"}}, "--prompt needs --model");
  refused({{"model", config}, {"prompt", "0"}, {"output-tokens", "2"}}, "at least 1");
  refused({{"model", config}, {"prompt", "12x"}, {"output-tokens", "2"}}, "whole number");
  refused({{"model", config}, {"prompt", "1"}, {"output-tokens", "2"}, {"prefill-logits", "some"}}, "'last' or 'all'");
  refused({{"model", kFixtures + "/models/t5-small.json"}, {"prompt", "1"}, {"output-tokens", "2"}}, "encoder-decoder");
  auto none = model_cost_from_options({{"batch", "1"}});
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace kernscope
