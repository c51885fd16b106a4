// report --model on the bundled Llama trace (tests/fixtures/nsys/llama_decode_h200: the random-init
// Llama of ../shared/tools/llama_decode_workload.py, batch 1, prompt 512, 64 decode steps, H200).
// Expected figures, none taken from kernscope:
//   bytes per mean decode step (tests/fixtures/models/llama_decode_workload.json, derived by hand in
//   model_cost_test.cpp): weights 1,574,051,840 + KV read 17,842,176 + KV written 32,768 +
//   activations (per layer (2048 + 3*2048) + (2048 + 2*512 + 2048) + 2*2048 + 6*5632 = 51,200
//   elements, * 16 + 2048 + 32000 = 853,248 elements * 2 B) 1,706,496 = 1,593,633,280 B
//   step times from Python's sqlite3 over the export: the 64 'measure:decode_step' NVTX ranges last
//   13,245,502.109375 ns on average (end - start); the kernels launched inside them
//   (CUPTI_ACTIVITY_KIND_KERNEL joined to CUPTI_ACTIVITY_KIND_RUNTIME by correlationId, launch on
//   the range's thread) take 1,700,610.046875 ns per step; TARGET_INFO_GPU.memoryBandwidth is
//   4,814,304,000,000 B/s; data/gpu_peaks.tsv's H200 row (NVIDIA's datasheet): 4800 GB/s, dense
//   BF16 989.4 TFLOP/s.
//   → decode MBU 1,593,633,280 / 13.245502109375 ms / 4.8 TB/s = 2.5066 %,
//     over kernel time 1,593,633,280 / 1.700610046875 ms / 4.8 TB/s = 19.5228 %.
// Checked that it fails: with --output-tokens 64 (63 decode steps, a shorter mean context) the
// bytes move by 16,384 and the test fails.
#include <gtest/gtest.h>

#include "render/diagnosis_words.hpp"
#include "analyses/work/model_cost_report.hpp"
#include "analyses/work/roofline.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "kernscope/open.hpp"

namespace kernscope {
namespace {

const std::string kFixtures = KERNSCOPE_FIXTURES_DIR;

const Diagnosis& llama_diagnosis() {
  static const Diagnosis d = [] {
    auto trace = open_trace(kFixtures + "/nsys/llama_decode_h200/trace.sqlite.xz");
    EXPECT_TRUE(trace.has_value());
    auto diagnosis = diagnose(*trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{});
    EXPECT_TRUE(diagnosis.has_value());
    auto with_model = *diagnosis;
    auto ok = add_speed_of_light(*trace, {{"model", kFixtures + "/models/llama_decode_workload.json"},
                                          {"batch", "1"},
                                          {"prompt", "512"},
                                          {"output-tokens", "65"},
                                          {"prefill-logits", "all"}},
                                 {}, with_model);
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
  // TPOT's mean: each measured decode step from its range's start until its range or its kernels end
  // (sqlite3 on the export: max(NVTX end, max end of the kernels whose launching runtime call lies in
  // the range on its thread) - NVTX start, over the 64 ':measure:decode_step' ranges; 63 end their
  // kernels a few us after the range). The ranges' own mean is nvtx_sum gold's 13245502.1.
  EXPECT_DOUBLE_EQ(mbu->time_ns, 13'250'464.765625);
  EXPECT_DOUBLE_EQ(mbu->peak_per_s, 4.8e12);
  EXPECT_NEAR(mbu->fraction, 1'593'633'280.0 / 13'250'464.765625e-9 / 4.8e12, 1e-12);
  const auto* kernels = find(d, "decode MBU over kernel time");
  ASSERT_NE(kernels, nullptr);
  EXPECT_DOUBLE_EQ(kernels->time_ns, 1'700'610.046875);
  EXPECT_NEAR(kernels->fraction, 0.195228138, 1e-9);
  EXPECT_NE(mbu->peak_source.find("H200 4800 GB/s"), std::string::npos) << mbu->peak_source;
  ASSERT_FALSE(d.diagnosis.empty());
  const std::string first = diagnosis_sentence(d.diagnosis.front());
  EXPECT_EQ(first.rfind("Speed of light for llama_decode_workload.json: decode MBU 2.5 %", 0), 0u) << first;
  // The model's own figures lead the notes: 852,559,872 parameters, 32,768 B of KV cache per token.
  ASSERT_FALSE(d.speed_of_light_notes.empty());
  const auto& model = d.speed_of_light_notes.front();
  EXPECT_EQ(model.kind, "model_cost");
  EXPECT_NE(model.text.find("0.8526 B parameters"), std::string::npos) << model.text;
  EXPECT_NE(model.text.find("KV cache 32768 B per token"), std::string::npos) << model.text;
}

// Prefill MFU: 0.823056662528 TFLOP (hand-derived: linear 1024 x 786,956,288 = 805,843,238,912 with
// logits for all 512 tokens, causal attention 16 * 4 * 32 * 64 * 131,328 = 17,213,423,616) over the
// prefill's TTFT (from the measure:prefill range's start to its last kernel's end, 50 us after the
// range: 20,888,524,137 - 20,875,499,965 = 13,024,172 ns by sqlite3) at H200's dense BF16
// 989.4 TFLOP/s: 6.3872 %.
TEST(ModelCostReport, PrefillMfuOnTheBundledLlamaTrace) {
  const auto& d = llama_diagnosis();
  const auto* mfu = find(d, "prefill MFU");
  ASSERT_NE(mfu, nullptr);
  EXPECT_DOUBLE_EQ(mfu->work, 823'056'662'528.0);
  EXPECT_DOUBLE_EQ(mfu->time_ns, 13'024'172.0);
  EXPECT_DOUBLE_EQ(mfu->peak_per_s, 989.4e12);
  EXPECT_NEAR(mfu->fraction, 0.0638715868, 1e-9);
}

// --peaks rows come before the table: a row matching any device ("*") at 4000 GB/s makes the
// decode MBU 1,593,633,280 / 13.245502109375 ms / 4 TB/s = 3.0079 %; it has no BF16 peak, so no
// prefill MFU, and the note says why.
TEST(ModelCostReport, UserPeaksFirst) {
  auto trace = open_trace(kFixtures + "/nsys/llama_decode_h200/trace.sqlite.xz");
  ASSERT_TRUE(trace.has_value());
  auto d = diagnose(*trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{});
  ASSERT_TRUE(d.has_value());
  auto rows = parse_gpu_peaks("name\tmatch\tsm_count\tmemory_gb\tbandwidth_gbs\tfp64\tfp32\ttf32\tfp16_bf16\tfp8\tint8\tfp4\tsource\n"
                              "Mine\t*\t0\t0\t4000\t-\t-\t-\t-\t-\t-\t-\tmeasured\n",
                              "mine.tsv");
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  auto ok = add_speed_of_light(*trace, {{"model", kFixtures + "/models/llama_decode_workload.json"}, {"prompt", "512"},
                                        {"output-tokens", "65"}},
                               *rows, *d);
  ASSERT_TRUE(ok.has_value());
  const auto* mbu = find(*d, "decode MBU");
  ASSERT_NE(mbu, nullptr);
  EXPECT_NEAR(mbu->fraction, 1'593'633'280.0 / 13'250'464.765625e-9 / 4.0e12, 1e-12);  // the user's 4000 GB/s
  EXPECT_EQ(find(*d, "prefill MFU"), nullptr);
  bool said = false;
  for (const auto& n : d->speed_of_light_notes) {
    said |= n.kind == "peak_unknown" && n.text.find("no prefill MFU: Mine") != std::string::npos && n.text.find("no bf16 peak") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

// A GPU no row fits: the bandwidth the trace records for it, no FLOP/s, and why (naming --peaks).
TEST(ModelCostReport, UnknownGpuFallsBackToItsOwnBandwidth) {
  Trace trace;
  Device device;
  device.name = "Imaginary GPU 9000";
  device.memory_bandwidth_bytes_per_s = 1'234'000'000'000;
  trace.devices.push_back(device);
  const auto p = model_peaks(trace, Precision::kBf16, {});
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 1.234e12);
  EXPECT_FALSE(p.flops_per_s.has_value());
  EXPECT_NE(p.why_missing.find("--peaks"), std::string::npos) << p.why_missing;
}

// roofline --by step with the model: the measured decode group's row carries the mean step's work
// times its 64 steps (64 * 1,593,633,280 B) against its kernels' time (64 * 1,700,610.046875 =
// 108,839,043 ns by sqlite3), so % of roof = 64 * 1,593,633,280 B / 4.8 TB/s / 108,839,043 ns =
// 19.5228 %, the decode MBU over kernel time; its source is model-config (without the step work
// merged into step rows, the row had no work: source none).
TEST(ModelCostReport, RooflineByStep) {
  auto trace = open_trace(kFixtures + "/nsys/llama_decode_h200/trace.sqlite.xz");
  ASSERT_TRUE(trace.has_value());
  RooflineOptions o;
  o.grouping = RooflineGrouping::kStep;
  o.rules = &OpRuleSet::builtin();
  o.provider_options = {{"model", kFixtures + "/models/llama_decode_workload.json"}, {"prompt", "512"},
                        {"output-tokens", "65"}, {"prefill-logits", "all"}};
  auto r = roofline(*trace, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const RooflineRow* decode = nullptr;
  for (const auto& row : r->rows) {
    if (row.name == ":measure:decode_step (decode)") decode = &row;
  }
  ASSERT_NE(decode, nullptr);
  EXPECT_EQ(decode->time_ns, 108'839'043);
  EXPECT_DOUBLE_EQ(decode->bytes, 64 * 1'593'633'280.0);
  EXPECT_EQ(decode->source, "model-config");
  EXPECT_EQ(decode->roof, Roof::kMemory);
  EXPECT_NEAR(decode->percent_of_roof(), 19.522813825, 1e-6);
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
