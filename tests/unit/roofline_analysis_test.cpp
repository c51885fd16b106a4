// The roofline on traces whose answers are known: a synthetic trace with one decode GEMM whose
// figures are worked out by hand, and the MI300X PyTorch-profiler fixture (record_shapes), where
// one aten::mm's kernel is checked against 2*M*N*K from the op's Input Dims read with Python's json.
#include <gtest/gtest.h>

#include <sstream>

#include "render/diagnosis_words.hpp"
#include "render/advice_render.hpp"
#include "analyses/work/roofline.hpp"
#include "render/roofline_render.hpp"
#include "analyses/diagnosis/diagnosis.hpp"
#include "kernscope/open.hpp"
#include "kernscope/render.hpp"
#include "support/synthetic_trace.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

using testing::global_tid;

void op(testing::SyntheticTrace& s, const std::string& name, TimeNs start, TimeNs end, const std::string& dims,
        const std::string& types, std::int64_t external_id = 0) {
  auto& o = s.trace.op_shapes;
  o.start_ns.push_back(start);
  o.end_ns.push_back(end);
  o.global_tid.push_back(global_tid(1));
  o.external_id.push_back(external_id);
  o.name.push_back(s.trace.strings.intern(name));
  o.input_dims.push_back(s.trace.strings.intern(dims));
  o.input_types.push_back(s.trace.strings.intern(types));
  o.concrete_inputs.push_back(kNoString);
}

testing::SyntheticTrace h100_trace() {
  testing::SyntheticTrace s;
  auto& d = s.trace.devices[0];
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.total_memory_bytes = 85018279936;  // the tracelens H100 trace's totalGlobalMem
  return s;
}

std::string csv(const RooflineResult& r) {
  std::ostringstream out;
  render(out, roofline_table(r, 0), RenderOptions{Format::kCsv, TimeUnit::kNs});
  return out.str();
}

// mm [8, 4096] x [4096, 14336] bf16 in 100 us on an H100 SXM (3350 GB/s, 989.4 TFLOP/s bf16):
// 939,524,096 FLOPs, 117,735,424 bytes; memory time 117735424 / 3.35e12 = 35,144.9 ns > compute
// 949.6 ns: memory-bound at 35.1 % of the roof, 64,855 ns recoverable.
TEST(Roofline, DecodeGemmByHand) {
  auto s = h100_trace();
  op(s, "aten::mm", 0, 1000, "[[8, 4096], [4096, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])");
  s.api("cudaLaunchKernel", 100, 200, 1);
  s.kernel("nvjet_gemv", 1000, 101000, 1);
  s.api("cudaLaunchKernel", 2000, 2100, 2);  // outside any operator
  s.kernel("unknown_kernel", 200000, 210000, 2);
  auto r = roofline(s.trace, RooflineOptions{}).value();
  ASSERT_TRUE(r.peaks.peaks.has_value()) << r.peaks.note;
  EXPECT_EQ(csv(r),
            "Name,Count,Time (ns),FLOPs,Bytes,Intensity (FLOP/B),TFLOP/s,GB/s,Roof,% of Roof,Ideal (ns),Recoverable (ns),Source\n"
            "nvjet_gemv,1,100000,939524096,117735424,7.98,9.395,1177.4,memory,35.1,35145,64855,kineto-shapes\n"
            "unknown_kernel,1,10000,,,,,,,,,,none\n");
  EXPECT_EQ(r.kernel_ns, 110000);
  EXPECT_EQ(r.covered_ns, 100000);
  EXPECT_EQ(r.covered_by_source.at("kineto-shapes"), 100000);
  const auto summary = roofline_summary_lines(r);
  EXPECT_NE(summary[2].find("work known for 90.9 % of kernel time"), std::string::npos) << summary[2];
}

// A decode MBU only from work known for half the decode steps' kernel time or more. Four decode
// steps, each [k ms, k ms + 500 us): an aten::mm whose GEMV kernel (100 us) has known work, and a
// kernel nothing describes (an attention kernel without shapes), of `unknown_us`: 300 us leaves 100 / 400 = 25 % known (no headline, a
// note instead); 50 us leaves 100 / 150 = 67 % (the headline).
TEST(Roofline, NoDecodeMbuFromWorkKnownForUnderHalfTheKernelTime) {
  for (const TimeNs unknown_us : {300, 50}) {
    auto s = h100_trace();
    std::uint32_t correlation = 0;
    for (int step = 0; step < 4; ++step) {
      const TimeNs t = step * 1'000'000;
      s.nvtx(kNvtxPushPopRange, "decode_step", t, t + 500'000);
      op(s, "aten::mm", t + 1'000, t + 2'000, "[[8, 4096], [4096, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])");
      s.api("cudaLaunchKernel", t + 1'100, t + 1'200, ++correlation);
      s.kernel("nvjet_gemv", t + 10'000, t + 110'000, correlation);
      s.api("cudaLaunchKernel", t + 3'000, t + 3'100, ++correlation);
      // An attention kernel (the decode's other work; it makes the trace LLM inference) with no shapes.
      s.kernel("flash_fwd_splitkv_kernel", t + 120'000, t + 120'000 + unknown_us * 1'000, correlation);
    }
    const auto steps = analyze_steps(s.trace, OpRuleSet::builtin(), {}).value();
    RooflineOptions options;
    options.rules = &OpRuleSet::builtin();
    options.step_analysis = &steps;
    auto r = roofline(s.trace, options).value();
    bool mbu = false, note = false;
    for (const auto& h : r.headline) mbu |= h.kind == RooflineHeadline::Kind::kDecodeMbu;
    for (const auto& n : roofline_notes(r)) {
      note |= n.kind == "headline_withheld" && n.text.find("no MBU headline: kernel work is known for 25.0 %") != std::string::npos;
    }
    if (unknown_us == 300) {
      EXPECT_FALSE(mbu) << "25 % known: " << (r.headline.empty() ? "" : roofline_headline_line(r.headline[0], r.latency_floor_ns));
      ASSERT_EQ(r.withheld.size(), 1u);
      EXPECT_EQ(r.withheld[0].phase, Phase::kDecode);
      EXPECT_DOUBLE_EQ(r.withheld[0].covered_share, 0.25);  // 100 us known of 400 us
      EXPECT_TRUE(note);
    } else {
      std::string said;
      for (const auto& n : roofline_notes(r)) said += n.text + " | ";
      EXPECT_TRUE(mbu) << "67 % known; notes: " << said;
      EXPECT_TRUE(r.withheld.empty());
      // 4 steps of 500 us, the GEMV's bytes each: bytes per step / 500 us.
      for (const auto& h : r.headline) {
        if (h.kind != RooflineHeadline::Kind::kDecodeMbu) continue;
        EXPECT_EQ(h.steps, 4u);
        EXPECT_NEAR(h.achieved, h.per_step / 500e-6, h.achieved * 1e-9);
        EXPECT_NEAR(h.covered_share, 100.0 / 150.0, 1e-9);
      }
    }
  }
}

// One operator, two kernels (30 us and 10 us): the longest gets the work, the other none of it.
TEST(Roofline, OperatorWorkSplitByKernelTime) {
  auto s = h100_trace();
  op(s, "aten::mm", 0, 1000, "[[8, 4096], [4096, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])");
  s.api("cudaLaunchKernel", 100, 200, 1);
  s.api("cudaLaunchKernel", 300, 400, 2);
  s.kernel("splitk_gemm", 1000, 31000, 1);
  s.kernel("splitk_reduce", 31000, 41000, 2);
  auto work = collect_kernel_work(s.trace, {}).value();
  ASSERT_NE(work.find(0), nullptr);
  ASSERT_NE(work.find(1), nullptr);
  EXPECT_DOUBLE_EQ(work.find(0)->total_flops(), 939524096.0);
  EXPECT_DOUBLE_EQ(work.find(1)->total_flops(), 0.0);
  EXPECT_DOUBLE_EQ(work.find(0)->bytes, 117735424.0);
  EXPECT_DOUBLE_EQ(work.find(1)->bytes, 0.0);
  EXPECT_EQ(work.find(1)->detail, "aten::mm [8, 4096] x [4096, 14336] bf16 (a helper of its 2 kernels)");
}

// The nearest operator with a formula owns a kernel: linear's kernel launched inside its addmm
// gets addmm's figures; a copy kernel inside linear but under copy_ gets copy_'s.
TEST(Roofline, NearestOperatorWithAFormula) {
  auto s = h100_trace();
  op(s, "aten::linear", 0, 10000, "[[8, 64], [32, 64], [32]]", R"(["float", "float", "float"])");
  op(s, "aten::t", 100, 200, "[[32, 64]]", R"(["float"])");  // no formula, no kernel
  op(s, "aten::addmm", 1000, 2000, "[[32], [8, 64], [64, 32], [], []]", R"(["float", "float", "float", "Scalar", "Scalar"])");
  op(s, "aten::copy_", 3000, 4000, "[[8, 32], [8, 32], []]", R"(["float", "float", "Scalar"])");
  s.api("cudaLaunchKernel", 1100, 1200, 1);
  s.kernel("sgemm", 5000, 15000, 1);
  s.api("cudaLaunchKernel", 3100, 3200, 2);
  s.kernel("copy", 15000, 16000, 2);
  auto work = collect_kernel_work(s.trace, {}).value();
  EXPECT_DOUBLE_EQ(work.find(0)->flops[static_cast<std::size_t>(Precision::kFp32)], 2.0 * 8 * 32 * 64);
  EXPECT_EQ(work.find(0)->detail, "aten::addmm [8, 64] x [64, 32] fp32");
  EXPECT_DOUBLE_EQ(work.find(1)->total_flops(), 0.0);
  EXPECT_DOUBLE_EQ(work.find(1)->bytes, 2.0 * 8 * 32 * 4);
}

// A kernel with less ideal work than the latency floor is latency-bound and cannot beat the floor.
TEST(Roofline, ShortKernelsAreLatencyBound) {
  auto s = h100_trace();
  op(s, "aten::add", 0, 1000, "[[1024], [1024], []]", R"(["float", "float", "Scalar"])");
  s.api("cudaLaunchKernel", 100, 200, 1);
  s.kernel("add_kernel", 1000, 6000, 1);  // 5 us for 12 KB
  auto r = roofline(s.trace, RooflineOptions{}).value();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].roof, Roof::kLatency);
  EXPECT_DOUBLE_EQ(r.rows[0].ideal_ns, 2000.0);  // the default floor, 2 us
  EXPECT_DOUBLE_EQ(r.rows[0].recoverable_ns(), 3000.0);
}

TEST(Roofline, UnknownGpuSaysSoAndLeavesRoofsEmpty) {
  auto s = h100_trace();
  s.trace.devices[0].name = "Imaginary GPU 9000";
  op(s, "aten::mm", 0, 1000, "[[8, 4096], [4096, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])");
  s.api("cudaLaunchKernel", 100, 200, 1);
  s.kernel("gemm", 1000, 101000, 1);
  auto r = roofline(s.trace, RooflineOptions{}).value();
  EXPECT_FALSE(r.peaks.peaks.has_value());
  EXPECT_NE(r.peaks.note.find("--peaks FILE"), std::string::npos);
  EXPECT_EQ(csv(r).substr(csv(r).find('\n') + 1), "gemm,1,100000,939524096,117735424,7.98,9.395,1177.4,,,,,kineto-shapes\n");
}

// emit_nvtx ranges in an nsys trace: the op's text carries the sizes, the kernel name the type.
TEST(Roofline, NvtxShapes) {
  auto s = h100_trace();
  s.nvtx(kNvtxPushPopRange, "aten::mm, seq = 12, op_id = 40, sizes = [[8, 4096], [4096, 14336]], input_op_ids = [(39, 0)]", 0, 1000);
  s.api("cudaLaunchKernel", 100, 200, 1);
  s.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 1000, 101000, 1);
  auto work = collect_kernel_work(s.trace, {}).value();
  ASSERT_NE(work.find(0), nullptr);
  EXPECT_EQ(work.find(0)->source, kSourceNvtxShapes);
  EXPECT_DOUBLE_EQ(work.find(0)->flops[static_cast<std::size_t>(Precision::kBf16)], 939524096.0);
  EXPECT_DOUBLE_EQ(work.find(0)->bytes, 117735424.0);
}

// report: the roofline's classes become actions ranked by the time they would save at their roof,
// quoting the numbers (those of DecodeGemmByHand for the GEMM; the add is latency-bound: 5 us vs 2 us).
TEST(Roofline, ReportActionsRankedByRecoverableTime) {
  auto s = h100_trace();
  op(s, "aten::add", 0, 50, "[[1024], [1024], []]", R"(["float", "float", "Scalar"])");
  s.api("cudaLaunchKernel", 10, 20, 1);
  s.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >", 1000, 6000, 1);
  op(s, "aten::mm", 100, 1000, "[[8, 4096], [4096, 14336]]", R"(["c10::BFloat16", "c10::BFloat16"])");
  s.api("cudaLaunchKernel", 200, 300, 2);
  s.kernel("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn", 6000, 106000, 2);
  auto d = diagnose(s.trace, OpRuleSet::builtin(), StepOptions{}, AnalyzeOptions{});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  ASSERT_GE(d->next_actions.size(), 2u);
  // The GEMM first: 0.100 ms at 35.1 % of its memory roof (ideal 0.035 ms), priced by replaying the
  // one step (0.105 ms: the add's 5 us, then the GEMM's 100 us) with the GEMM at its roof:
  // 0.105 - (0.100 - 0.035) = 0.040 ms.
  const ReportAction& gemm = d->next_actions[0];
  EXPECT_EQ(gemm.kind, "roofline");
  EXPECT_EQ(gemm.part, "gpu.gemm");
  EXPECT_EQ(gemm.change, "roof=gemm");
  ASSERT_TRUE(gemm.predicted.has_value()) << gemm.why_not_predicted;
  EXPECT_NEAR(static_cast<double>(gemm.predicted->from_ns), 105'000, 1'000);
  EXPECT_NEAR(static_cast<double>(gemm.predicted->to_ns), 40'000, 1'000);
  EXPECT_TRUE(action_sentence(gemm).starts_with("Bring the gemm kernels to their memory roof:")) << action_sentence(gemm);
  EXPECT_NE(action_sentence(gemm).find("run at 35.1 % of the roof (9.395 TFLOP/s, 1177.4 GB/s over 1 kernels, 0.100 ms; ideal 0.035 ms)"),
            std::string::npos) << action_sentence(gemm);
  // The add second: latency-bound, 5 us against its 2 us floor: 0.105 - 0.003 = 0.102 ms.
  const ReportAction& add = d->next_actions[1];
  EXPECT_EQ(add.part, "gpu.elementwise");
  EXPECT_NE(action_sentence(add).find("Bring the elementwise kernels to their latency roof:"), std::string::npos) << action_sentence(add);
  ASSERT_TRUE(add.predicted.has_value()) << add.why_not_predicted;
  EXPECT_NEAR(static_cast<double>(add.predicted->to_ns), 102'000, 1'000);
  bool coverage = false;
  for (const auto& line : diagnosis_sentences(d->diagnosis)) coverage |= line.starts_with("Speed of light: work known for 100.0 % of kernel time");
  EXPECT_TRUE(coverage);
}

TEST(Roofline, BadOptions) {
  EXPECT_FALSE(parse_roofline_grouping("kernels").has_value());
  testing::SyntheticTrace empty;
  auto r = roofline(empty.trace, RooflineOptions{});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNoData);
}

// The MI300X fixture: External id 20685 is aten::mm with Input Dims [[8944, 1024], [1024, 1024]]
// (c10::BFloat16), one kernel (python3: json.load of the file, the cpu_op and kernel with that id).
TEST(Roofline, Mi300KinetoFixture) {
  auto trace = open_trace((testing::fixtures_dir() / "kineto" / "tracelens__traces__mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.xz").string());
  ASSERT_TRUE(trace.has_value()) << trace.error().message;
  ASSERT_GT(trace->op_shapes.size(), 0u);
  auto work = collect_kernel_work(*trace, {}).value();
  int found = 0;
  for (RowIndex i = 0; i < trace->kernels.size(); ++i) {
    if (trace->kernels.external_id[i] != 20685) continue;
    ++found;
    const KernelWork* w = work.find(i);
    ASSERT_NE(w, nullptr);
    EXPECT_DOUBLE_EQ(w->flops[static_cast<std::size_t>(Precision::kBf16)], 18756927488.0);  // 2*8944*1024*1024
    EXPECT_DOUBLE_EQ(w->bytes, 38731776.0);  // (8944*1024*2 + 1024*1024) * 2
    EXPECT_EQ(w->source, kSourceKinetoShapes);
  }
  EXPECT_EQ(found, 1);
  auto r = roofline(*trace, RooflineOptions{}).value();
  ASSERT_TRUE(r.peaks.peaks.has_value()) << r.peaks.note;
  EXPECT_EQ(r.peaks.peaks->name, "MI300X");
  EXPECT_GT(r.covered_ns, r.kernel_ns / 2);  // GEMMs, attention and elementwise ops have shapes
}

}  // namespace
}  // namespace kernscope
