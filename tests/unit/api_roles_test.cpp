// API roles: every name below is spelled as in the CUDA Runtime API, CUDA Driver API or HIP Runtime
// API reference (rocm.docs.amd.com/projects/HIP), with the suffixes tracers really write (nsys's
// _v7000 tags, the driver's _v2, per-thread _ptsz/_ptds/_spt, HIP's R0600); a reader can check
// each role against the function's documentation. On a real MI300X trace the expected counts come
// from reading the JSON with Python's json module.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "model/api_roles.hpp"
#include "kernscope/op_classes.hpp"
#include "kernscope/open.hpp"
#include "kernscope/steps.hpp"
#include "support/test_files.hpp"

namespace kernscope {
namespace {

void expect_role(std::initializer_list<std::string_view> names, ApiRole role) {
  for (auto name : names) EXPECT_EQ(role_of(name), role) << name;
}

TEST(ApiRoles, KernelLaunchesOfCudaRuntimeDriverAndHip) {
  expect_role({"cudaLaunchKernel", "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC_v11060",
               "cudaLaunchCooperativeKernel", "cudaLaunch" /* CUDA < 7 */, "cuLaunchKernel", "cuLaunchKernelEx",
               "cuLaunchKernel_ptsz", "cuLaunchCooperativeKernel", "cuLaunchGrid" /* deprecated driver launch */,
               "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel", "hipExtLaunchKernel",
               "hipLaunchCooperativeKernel", "hipLaunchKernel_spt", "hipLaunchByPtr", "hipDrvLaunchKernelEx"},
              ApiRole::kKernelLaunch);
}

TEST(ApiRoles, GraphLaunchesAreLaunchesButNotKernelLaunches) {
  expect_role({"cudaGraphLaunch", "cudaGraphLaunch_v10000", "cudaGraphLaunch_ptsz", "cuGraphLaunch", "hipGraphLaunch",
               "hipGraphLaunch_spt"},
              ApiRole::kGraphLaunch);
  EXPECT_TRUE(has_any(role_of("hipGraphLaunch"), kAnyLaunch));
  EXPECT_FALSE(has_any(role_of("hipGraphLaunch"), ApiRole::kKernelLaunch));
}

TEST(ApiRoles, HostSynchronizationsIncludingLegacyNames) {
  expect_role({"cudaDeviceSynchronize", "cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_ptsz",
               "cudaEventSynchronize_v3020", "cudaThreadSynchronize" /* deprecated in CUDA 4.0 */, "cuCtxSynchronize",
               "cuCtxSynchronize_v2", "cuStreamSynchronize", "cuEventSynchronize", "hipDeviceSynchronize",
               "hipStreamSynchronize", "hipStreamSynchronize_spt", "hipEventSynchronize"},
              ApiRole::kSync);
}

TEST(ApiRoles, StreamWaitsAndQueriesDoNotBlockTheHost) {
  expect_role({"cudaStreamWaitEvent_v3020", "cuStreamWaitEvent", "cuStreamWaitValue32_v2", "hipStreamWaitEvent"},
              ApiRole::kWaitEvent);
  expect_role({"cudaStreamQuery", "cudaEventQuery_v3020", "cuEventQuery", "hipStreamQuery", "hipEventQuery"},
              ApiRole::kQuery);
  // tail's "synchronization" flag covers all three.
  for (auto name : {"cudaStreamWaitEvent", "cudaEventQuery", "cudaThreadSynchronize"}) {
    EXPECT_TRUE(has_any(role_of(name), kAnyWait)) << name;
  }
}

TEST(ApiRoles, CopiesMemsetsAllocationsAndFrees) {
  expect_role({"cudaMemcpy_v3020", "cudaMemcpyAsync_ptsz", "cudaMemcpy2DToArrayAsync", "cudaMemcpyPeerAsync",
               "cuMemcpyHtoD_v2", "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpy3DPeer", "hipMemcpy", "hipMemcpyAsync",
               "hipMemcpyWithStream", "hipMemcpyDtoH", "hipMemcpyHtoDAsync", "hipMemcpyToSymbol",
               "hipMemcpyParam2DAsync"},
              ApiRole::kCopy);
  expect_role({"cudaMemsetAsync_v3020", "cuMemsetD32Async", "cuMemsetD2D8_v2", "hipMemset", "hipMemsetD32Async"},
              ApiRole::kMemset);
  expect_role({"cudaMalloc_v3020", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMallocAsync_ptsz",
               "cudaHostRegister", "cuMemAlloc_v2", "cuMemAllocHost_v2", "cuMemCreate", "cuMemMap", "hipMalloc",
               "hipHostMalloc", "hipExtMallocWithFlags", "hipMallocManaged", "hipMallocAsync", "hipMemCreate"},
              ApiRole::kAlloc);
  expect_role({"cudaFree_v3020", "cudaFreeHost" /* a free, not an allocation */, "cudaFreeAsync", "cudaHostUnregister",
               "cuMemFree_v2", "cuMemFreeHost", "cuMemRelease", "cuMemUnmap", "hipFree", "hipHostFree", "hipFreeAsync",
               "hipMemRelease"},
              ApiRole::kFree);
}

// The lists this replaced matched prefixes: each name here was miscounted by one of them, or
// shares the first letters of an API with a role.
TEST(ApiRoles, WholeNamesOnlyNotPrefixes) {
  expect_role({"cudaLaunchHostFunc", "cuLaunchHostFunc", "hipLaunchHostFunc",  // a host callback, not a kernel
               "cudaConfigureCall", "hipConfigureCall", "cudaSetupArgument",    // prepare the launch that follows
               "hipLaunchKernelGGL",                                            // a macro over hipLaunchKernel
               "cuMemMapArrayAsync",  // sparse-array mapping, not an allocation
               "cudaThreadExchangeStreamCaptureMode_v10010", "cudaStreamGetCaptureInfo_v2_v11030",
               "cudaGetDeviceProperties_v2_v12000", "hipGetDevicePropertiesR0600", "hipStreamGetDevice",
               "cudaMemGetInfo", "cudaHostGetDevicePointer", "cudaEventRecord", ""},
              ApiRole::kNone);
}

TEST(ApiRoles, SuffixesTracersAppendAreRemovedInAnyOrder) {
  EXPECT_EQ(api_base_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_base_name("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties");
  EXPECT_EQ(api_base_name("cuMemcpyHtoDAsync_v2_ptsz"), "cuMemcpyHtoDAsync");
  EXPECT_EQ(api_base_name("cudaMemcpy_ptds"), "cudaMemcpy");
  EXPECT_EQ(api_base_name("hipStreamSynchronize_spt"), "hipStreamSynchronize");
  EXPECT_EQ(api_base_name("hipGetDevicePropertiesR0600"), "hipGetDeviceProperties");
  // Digits that belong to the name stay.
  EXPECT_EQ(api_base_name("cuStreamWaitValue32"), "cuStreamWaitValue32");
  EXPECT_EQ(api_base_name("cuMemsetD2D32_v2"), "cuMemsetD2D32");
  EXPECT_EQ(api_base_name("cudaMemcpy3D"), "cudaMemcpy3D");
  EXPECT_EQ(api_base_name("_v2"), "_v2");
}

TEST(ApiRoles, CacheAgreesWithRoleOfForEveryId) {
  StringPool pool;
  for (auto name : {"cudaLaunchKernel_v7000", "hipDeviceSynchronize", "cudaLaunchHostFunc", "hipFree", "aten::mm"}) {
    pool.intern(name);
  }
  ApiRoleCache cache(pool);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reads what the first stored
    for (StringId id = 0; id < pool.size(); ++id) EXPECT_EQ(cache(id), role_of(pool.get(id))) << pool.get(id);
    EXPECT_EQ(cache(kNoString), ApiRole::kNone);
  }
  EXPECT_EQ(cache(0), ApiRole::kKernelLaunch);
  EXPECT_EQ(cache(1), ApiRole::kSync);
}

TEST(ApiRoles, NamesWithRoleFromTheDictionaryOrFromPlainNames) {
  // The names of the calls, coded (a few names) and plain (more than a dictionary holds): the same
  // answer as role_of for every name met, false for names no call has, and for calls without a name.
  StringPool pool;
  const StringId launch = pool.intern("cudaLaunchKernel_v7000"), sync = pool.intern("cudaStreamSynchronize");
  const StringId graph = pool.intern("cuGraphLaunch"), unused_launch = pool.intern("hipLaunchKernel");
  ApiCallColumns few;
  for (StringId id : {sync, launch, sync, kNoString}) few.name.push_back(id);
  const NamesWithRole launches(few, pool, kAnyLaunch);
  EXPECT_TRUE(launches.any());
  EXPECT_TRUE(launches(launch));
  EXPECT_FALSE(launches(sync));
  EXPECT_FALSE(launches(unused_launch));  // a launch name, but no call has it
  EXPECT_FALSE(launches(kNoString));
  EXPECT_FALSE(NamesWithRole(few, pool, ApiRole::kGraphLaunch).any());
  ApiCallColumns many;
  for (std::size_t i = 0; i <= DictColumn<StringId>::kMaxCodes; ++i) many.name.push_back(pool.intern("other" + std::to_string(i)));
  many.name.push_back(graph);
  ASSERT_TRUE(many.name.distinct_values().empty());  // names stored plainly
  const NamesWithRole graphs(many, pool, ApiRole::kGraphLaunch);
  EXPECT_TRUE(graphs.any());
  EXPECT_TRUE(graphs(graph));
  EXPECT_FALSE(graphs(launch));
  EXPECT_FALSE(graphs(many.name[0]));
}

// TraceLens's MI300X trace of Qwen1.5-0.5B (tests/fixtures/README.md). Python's json module on the
// file (cat == "cuda_runtime", ph == "X"): hipLaunchKernel 860, hipExtModuleLaunchKernel 169,
// hipModuleLaunchKernel 24, hipDeviceSynchronize 2, hipMemcpyWithStream 1, and, among the calls on
// the ProfilerStep#6 annotation's thread within its [ts, ts + dur], all 1053 launches and 1 of the
// 2 synchronizations.
TEST(ApiRolesOnHip, Mi300TraceCountsLaunchesSyncsAndCopies) {
  auto trace = open_trace(
      (testing::fixtures_dir() / "kineto/tracelens__traces__mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.xz").string());
  ASSERT_TRUE(trace) << trace.error().message;
  ApiRoleCache roles(trace->strings);
  std::int64_t launches = 0, syncs = 0, copies = 0;
  for (StringId name : trace->api_calls.name) {
    const ApiRole role = roles(name);
    launches += has_any(role, kAnyLaunch);
    syncs += has_any(role, ApiRole::kSync);
    copies += has_any(role, ApiRole::kCopy);
  }
  EXPECT_EQ(launches, 860 + 169 + 24);
  EXPECT_EQ(syncs, 2);
  EXPECT_EQ(copies, 1);

  auto steps = analyze_steps(*trace, OpRuleSet::builtin(), {});
  ASSERT_TRUE(steps) << steps.error().message;
  ASSERT_FALSE(steps->steps.empty());
  std::int64_t step_launches = 0, step_syncs = 0;
  for (const auto& s : steps->steps) {
    step_launches += s.launches;
    step_syncs += s.syncs;
  }
  EXPECT_EQ(step_launches, 1053);
  EXPECT_EQ(step_syncs, 1);
}

}  // namespace
}  // namespace kernscope
