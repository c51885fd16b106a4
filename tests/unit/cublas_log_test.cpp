// cuBLAS and cuBLASLt logs of real GEMMs on an H100 (tests/fixtures/ncu, dev1_g.py): a 4096^3
// bf16 product and an 8x4096 by 4096x14336 projection with and without bias. Expected shapes were
// read from the log lines by hand (zcat ... | grep); FLOPs are 2·m·n·k by hand:
// 2·4096^3 = 137,438,953,472 and 2·8·4096·14336 = 939,524,096; the projection's bf16 weights are
// 14336·4096·2 = 117,440,512 bytes.
#include <gtest/gtest.h>

#include "readers/cublas_log/gemm_join.hpp"
#include "readers/cublas_log/gemm_log.hpp"
#include "../support/ncu_fixtures.hpp"

namespace cl = kernscope::readers::cublas_log;
using kernscope::testing::add_kernel;
using kernscope::testing::expect_value;
using kernscope::testing::ncu_fixture;

namespace {

cl::GemmLog read(const std::string& name) { return expect_value(cl::read_gemm_log(ncu_fixture(name))); }

constexpr double kSquareFlops = 137438953472.0;  // 2 * 4096^3
constexpr double kDecodeFlops = 939524096.0;     // 2 * 8 * 4096 * 14336
constexpr double kWeightBytes = 117440512.0;     // 14336 * 4096 * 2

}  // namespace

TEST(CublasApiLog, GemmExCallsWithTheirArguments) {
  const auto log = read("dev1_cublas.log.gz");
  ASSERT_EQ(log.calls.size(), 2u);  // two cublasGemmEx blocks; SetStream/SetWorkspace/MathMode are not GEMMs
  const auto& square = log.calls[0];
  EXPECT_EQ(square.log, cl::LogKind::kCublasApi);
  EXPECT_EQ(square.function, "cublasGemmEx");
  EXPECT_EQ(square.m, 4096);
  EXPECT_EQ(square.n, 4096);
  EXPECT_EQ(square.k, 4096);
  EXPECT_EQ(square.transa, 'N');
  EXPECT_EQ(square.transb, 'N');
  EXPECT_EQ(square.a_type, "R_16BF");
  EXPECT_EQ(square.c_type, "R_16BF");
  EXPECT_EQ(square.compute_type, "COMPUTE_32F");
  EXPECT_EQ(square.lda, 4096);
  EXPECT_EQ(square.process_id, 568);
  EXPECT_EQ(square.stream, "0x0");
  EXPECT_EQ(square.flops(), kSquareFlops);
  const auto& decode = log.calls[1];
  EXPECT_EQ(decode.transa, 'T');
  EXPECT_EQ(decode.transb, 'N');
  EXPECT_EQ(decode.m, 14336);
  EXPECT_EQ(decode.n, 8);
  EXPECT_EQ(decode.k, 4096);
  EXPECT_EQ(decode.ldc, 14336);
  EXPECT_EQ(decode.flops(), kDecodeFlops);
  EXPECT_EQ(decode.a_bytes(), kWeightBytes);
  // A (weights) + B (8x4096 activations) + D (14336x8 output), bf16, beta unknown: counted as 0.
  EXPECT_EQ(decode.min_bytes(), kWeightBytes + 8 * 4096 * 2 + 14336 * 8 * 2);
}

TEST(CublasLtLog, Level2TraceLines) {
  const auto log = read("dev1_cublaslt2.log.gz");
  ASSERT_EQ(log.calls.size(), 3u);
  EXPECT_EQ(log.calls[0].function, "cublasLtTSTMatmul");
  EXPECT_EQ(log.calls[0].flops(), kSquareFlops);
  const auto& bias = log.calls[1];
  EXPECT_EQ(bias.function, "cublasLtMatmul");
  EXPECT_EQ(bias.transa, 'T');
  EXPECT_EQ(bias.transb, 'N');
  EXPECT_EQ(bias.m, 14336);
  EXPECT_EQ(bias.n, 8);
  EXPECT_EQ(bias.k, 4096);
  EXPECT_EQ(bias.lda, 4096);
  EXPECT_EQ(bias.ldc, 14336);
  EXPECT_EQ(bias.epilogue, "EPILOGUE_BIAS");
  EXPECT_EQ(bias.compute_type, "COMPUTE_32F");
  ASSERT_TRUE(bias.beta);
  EXPECT_EQ(*bias.beta, 0.0);
  EXPECT_EQ(bias.flops(), kDecodeFlops);
  EXPECT_EQ(bias.a_bytes(), kWeightBytes);
  EXPECT_EQ(bias.bias_bytes(), 14336 * 2);
  EXPECT_NE(bias.algo.find("MATMUL_TILE_64x8"), std::string::npos);
  EXPECT_EQ(log.calls[2].flops(), kDecodeFlops);
  EXPECT_EQ(log.calls[2].epilogue, "");
  double total = 0;
  for (const auto& c : log.calls) total += c.flops();
  EXPECT_EQ(total, kSquareFlops + 2 * kDecodeFlops);
}

TEST(CublasLtLog, Level5SkipsApiAndHeuristicLines) {
  // Level 5 adds API lines (descriptor pointers only) and heuristic queries: neither is a call.
  const auto log = read("dev1_cublaslt5.log.gz");
  ASSERT_EQ(log.calls.size(), 3u);
  EXPECT_EQ(log.calls[0].flops(), kSquareFlops);
  EXPECT_EQ(log.calls[1].epilogue, "EPILOGUE_BIAS");
  EXPECT_EQ(log.calls[1].a_bytes(), kWeightBytes);
  EXPECT_EQ(log.calls[2].flops(), kDecodeFlops);
  EXPECT_EQ(log.calls[0].process_id, 594);
}

TEST(CublasLog, TypesAndBadInput) {
  EXPECT_EQ(cl::element_bytes("R_16BF"), 2.0);
  EXPECT_EQ(cl::element_bytes("CUDA_R_32F"), 4.0);
  EXPECT_EQ(cl::element_bytes("R_8F_E4M3"), 1.0);
  EXPECT_EQ(cl::element_bytes("R_4F_E2M1"), 0.5);
  EXPECT_EQ(cl::element_bytes("C_64F"), 16.0);
  EXPECT_EQ(cl::element_bytes("weird"), 0.0);
  auto other = cl::parse_gemm_log("hello\nworld\n", "x.log");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("not a cuBLAS log"), std::string::npos);
  // A cuBLAS log with no GEMM in it.
  auto none = cl::parse_gemm_log(
      "I! cuBLAS (v13.1.0) function cublasStatus_t cublasCreate_v2(cublasContext**) called:\n"
      "i!  handle: type=cublasHandle_t; val=POINTER (IN HEX:0x0xa9eedd0)\n",
      "create.log");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("without GEMM calls"), std::string::npos);
  EXPECT_FALSE(cl::read_gemm_log(ncu_fixture("missing.log")));
}

TEST(CublasLog, TypedBatchedAndGemvCalls) {
  const std::string text =
      "I! cuBLAS (v13.1.0) function cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, ...) called:\n"
      "i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)\n"
      "i!  transb: type=cublasOperation_t; val=CUBLAS_OP_T(1)\n"
      "i!  m: type=int; val=64\n"
      "i!  n: type=int; val=32\n"
      "i!  k: type=int; val=16\n"
      "i!  batchCount: type=int; val=5\n"
      "i!Process=7; Thread=1; GPU=0; Handle=POINTER (IN HEX:0x0x1); StreamId=POINTER (IN HEX:0x0x55AB) ; MathMode=CUBLAS_TF32_TENSOR_OP_MATH\n"
      "I! cuBLAS (v13.1.0) function cublasStatus_t cublasDgemv_v2(cublasHandle_t, ...) called:\n"
      "i!  trans: type=cublasOperation_t; val=CUBLAS_OP_T(1)\n"
      "i!  m: type=int; val=100\n"
      "i!  n: type=int; val=30\n"
      "i!Process=7; Thread=1; GPU=0; Handle=POINTER (IN HEX:0x0x1); StreamId=POINTER (IN HEX:0x(nil)) (defaultStream)\n";
  auto log = cl::parse_gemm_log(text, "typed.log");
  ASSERT_TRUE(log) << log.error().message;
  ASSERT_EQ(log->calls.size(), 2u);
  const auto& batched = log->calls[0];
  EXPECT_EQ(batched.a_type, "R_32F");
  EXPECT_EQ(batched.compute_type, "COMPUTE_32F_FAST_TF32");  // the handle's math mode allows TF32
  EXPECT_EQ(batched.batch, 5);
  EXPECT_EQ(batched.stream, "0x55ab");
  EXPECT_EQ(batched.flops(), 2.0 * 64 * 32 * 16 * 5);
  EXPECT_EQ(batched.min_bytes(), 5.0 * 4 * (64 * 16 + 16 * 32 + 64 * 32));
  const auto& gemv = log->calls[1];
  EXPECT_TRUE(gemv.is_gemv());
  EXPECT_EQ(gemv.a_type, "R_64F");
  EXPECT_EQ(gemv.flops(), 2.0 * 100 * 30);
  EXPECT_EQ(gemv.m, 30);  // op(A) = A^T is 30 x 100
  EXPECT_EQ(gemv.k, 100);
  EXPECT_EQ(gemv.min_bytes(), 8.0 * (100 * 30 + 100 + 30));
  EXPECT_EQ(gemv.stream, "0x0");
}

TEST(CublasLogJoin, CallsPairWithGemmKernelsOfTheirStreamInOrder) {
  const auto log = read("dev1_cublaslt2.log.gz");
  kernscope::Trace t;
  add_kernel(t, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_bias_TNT", 200, 7);
  add_kernel(t, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 100, 7);  // rows out of time order
  add_kernel(t, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT", 300, 7);
  const auto join = cl::join_gemm_calls(log, t, {0, 1, 2});
  EXPECT_EQ(join.matched, 3u);
  EXPECT_EQ(join.trace_row[0], 1u);
  EXPECT_EQ(join.trace_row[1], 0u);
  EXPECT_EQ(join.trace_row[2], 2u);
  EXPECT_TRUE(join.notes.empty());
  // One GEMM kernel fewer than calls: said, and the surplus call gets no kernel.
  const auto short_join = cl::join_gemm_calls(log, t, {1, 0});
  EXPECT_EQ(short_join.matched, 2u);
  EXPECT_FALSE(short_join.trace_row[2]);
  ASSERT_EQ(short_join.notes.size(), 1u);
  EXPECT_EQ(short_join.notes[0].kind, "gemm_counts_differ");
  EXPECT_EQ(short_join.notes[0].count, 1);  // the surplus call
  EXPECT_NE(short_join.notes[0].text.find("3 GEMM call(s) in the log and 2 GEMM kernel(s)"), std::string::npos);
}
