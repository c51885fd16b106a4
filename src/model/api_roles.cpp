#include "model/api_roles.hpp"

#include <cctype>
#include <span>
#include <unordered_map>

namespace kernscope {
namespace {

// Whole API names per role, as their reference manuals spell them (tracers may add the suffixes
// api_base_name removes):
//   CUDA runtime: "CUDA Runtime API" (docs.nvidia.com/cuda/cuda-runtime-api), modules Execution
//     Control, Graph Management, Device Management, Thread Management [DEPRECATED], Stream and
//     Event Management, Memory Management, Stream Ordered Memory Allocator;
//   CUDA driver: "CUDA Driver API" (docs.nvidia.com/cuda/cuda-driver-api), modules Execution
//     Control (and its deprecated part), Graph Management, Context, Stream and Event Management,
//     Stream Memory Operations, Memory Management, Virtual Memory Management, Stream Ordered
//     Memory Allocator;
//   HIP: "HIP Runtime API Reference" (rocm.docs.amd.com/projects/HIP), groups Execution Control,
//     Module Management, Launch API to support the triple-chevron syntax, Cooperative groups,
//     Graph Management, Device/Stream/Event Management, Memory Management (and [Deprecated]),
//     Stream Ordered Memory Allocator, Virtual Memory Management; hip_ext.h.
// Not launches on purpose: cudaLaunchHostFunc/cuLaunchHostFunc/hipLaunchHostFunc (a host
// callback), and cudaConfigureCall/cudaSetupArgument/hipConfigureCall/hipSetupArgument (they
// prepare the cudaLaunch/hipLaunchByPtr that follows: counting them would count a launch twice).
constexpr std::string_view kKernelLaunches[] = {
    // CUDA runtime; cudaLaunch is the launch of CUDA < 7's <<<>>> (removed in CUDA 10).
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice", "cudaLaunch",
    // CUDA driver; cuLaunch, cuLaunchGrid, cuLaunchGridAsync are the deprecated launches.
    "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernelMultiDevice",
    "cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync",
    // HIP; hipLaunchByPtr is the old triple-chevron launch, hipHccModuleLaunchKernel the deprecated
    // form of hipExtModuleLaunchKernel.
    "hipLaunchKernel", "hipLaunchKernelExC", "hipExtLaunchKernel", "hipLaunchByPtr", "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel", "hipDrvLaunchKernelEx", "hipLaunchCooperativeKernel",
    "hipLaunchCooperativeKernelMultiDevice", "hipModuleLaunchCooperativeKernel",
    "hipModuleLaunchCooperativeKernelMultiDevice", "hipExtLaunchMultiKernelMultiDevice"};
constexpr std::string_view kGraphLaunches[] = {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"};
constexpr std::string_view kSyncs[] = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cudaThreadSynchronize",  // deprecated since CUDA 4.0, still in old programs
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",  // cuCtxSynchronize_v2 via the suffix
    "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize", "hipCtxSynchronize"};
constexpr std::string_view kStreamWaits[] = {
    "cudaStreamWaitEvent", "cuStreamWaitEvent", "cuStreamWaitValue32", "cuStreamWaitValue64",
    "hipStreamWaitEvent", "hipStreamWaitValue32", "hipStreamWaitValue64"};
constexpr std::string_view kQueries[] = {
    "cudaStreamQuery", "cudaEventQuery", "cuStreamQuery", "cuEventQuery", "hipStreamQuery", "hipEventQuery"};
constexpr std::string_view kCopies[] = {
    "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync", "cudaMemcpy2DArrayToArray",
    "cudaMemcpy2DFromArray", "cudaMemcpy2DFromArrayAsync", "cudaMemcpy2DToArray", "cudaMemcpy2DToArrayAsync",
    "cudaMemcpy3D", "cudaMemcpy3DAsync", "cudaMemcpy3DPeer", "cudaMemcpy3DPeerAsync", "cudaMemcpy3DBatchAsync",
    "cudaMemcpyArrayToArray", "cudaMemcpyBatchAsync", "cudaMemcpyFromArray", "cudaMemcpyFromArrayAsync",
    "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync", "cudaMemcpyPeer", "cudaMemcpyPeerAsync",
    "cudaMemcpyToArray", "cudaMemcpyToArrayAsync", "cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync",
    "cuMemcpy", "cuMemcpyAsync", "cuMemcpyHtoD", "cuMemcpyHtoDAsync", "cuMemcpyDtoH", "cuMemcpyDtoHAsync",
    "cuMemcpyDtoD", "cuMemcpyDtoDAsync", "cuMemcpyDtoA", "cuMemcpyAtoD", "cuMemcpyHtoA", "cuMemcpyHtoAAsync",
    "cuMemcpyAtoH", "cuMemcpyAtoHAsync", "cuMemcpyAtoA", "cuMemcpy2D", "cuMemcpy2DAsync", "cuMemcpy2DUnaligned",
    "cuMemcpy3D", "cuMemcpy3DAsync", "cuMemcpy3DPeer", "cuMemcpy3DPeerAsync", "cuMemcpyPeer", "cuMemcpyPeerAsync",
    "cuMemcpyBatchAsync", "cuMemcpy3DBatchAsync",
    "hipMemcpy", "hipMemcpyAsync", "hipMemcpyWithStream", "hipMemcpyHtoD", "hipMemcpyHtoDAsync", "hipMemcpyDtoH",
    "hipMemcpyDtoHAsync", "hipMemcpyDtoD", "hipMemcpyDtoDAsync", "hipMemcpyAtoA", "hipMemcpyAtoD", "hipMemcpyAtoH",
    "hipMemcpyAtoHAsync", "hipMemcpyDtoA", "hipMemcpyHtoA", "hipMemcpyHtoAAsync", "hipMemcpy2D",
    "hipMemcpy2DAsync", "hipMemcpy2DUnaligned", "hipDrvMemcpy2DUnaligned", "hipMemcpy2DToArray",
    "hipMemcpy2DToArrayAsync", "hipMemcpy2DFromArray", "hipMemcpy2DFromArrayAsync", "hipMemcpy2DArrayToArray",
    "hipMemcpy3D", "hipMemcpy3DAsync", "hipDrvMemcpy3D", "hipDrvMemcpy3DAsync", "hipMemcpyToArray",
    "hipMemcpyFromArray", "hipMemcpyParam2D", "hipMemcpyParam2DAsync", "hipMemcpyPeer", "hipMemcpyPeerAsync",
    "hipMemcpyToSymbol", "hipMemcpyToSymbolAsync", "hipMemcpyFromSymbol", "hipMemcpyFromSymbolAsync"};
constexpr std::string_view kMemsets[] = {
    "cudaMemset", "cudaMemsetAsync", "cudaMemset2D", "cudaMemset2DAsync", "cudaMemset3D", "cudaMemset3DAsync",
    "cuMemsetD8", "cuMemsetD8Async", "cuMemsetD16", "cuMemsetD16Async", "cuMemsetD32", "cuMemsetD32Async",
    "cuMemsetD2D8", "cuMemsetD2D8Async", "cuMemsetD2D16", "cuMemsetD2D16Async", "cuMemsetD2D32",
    "cuMemsetD2D32Async",
    "hipMemset", "hipMemsetAsync", "hipMemsetD8", "hipMemsetD8Async", "hipMemsetD16", "hipMemsetD16Async",
    "hipMemsetD32", "hipMemsetD32Async", "hipMemset2D", "hipMemset2DAsync", "hipMemset3D", "hipMemset3DAsync"};
constexpr std::string_view kAllocations[] = {
    "cudaMalloc", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMallocPitch", "cudaMalloc3D",
    "cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmappedArray", "cudaMallocAsync",
    "cudaMallocFromPoolAsync", "cudaHostRegister",
    "cuMemAlloc", "cuMemAllocHost", "cuMemHostAlloc", "cuMemAllocManaged", "cuMemAllocPitch", "cuMemAllocAsync",
    "cuMemAllocFromPoolAsync", "cuMemHostRegister", "cuMemCreate", "cuMemAddressReserve", "cuMemMap",
    "cuArrayCreate", "cuArray3DCreate", "cuMipmappedArrayCreate",
    "hipMalloc", "hipExtMallocWithFlags", "hipMallocHost", "hipMemAllocHost", "hipHostMalloc", "hipHostAlloc",
    "hipMallocManaged", "hipMallocPitch", "hipMemAllocPitch", "hipMalloc3D", "hipMallocArray",
    "hipMalloc3DArray", "hipMallocMipmappedArray", "hipMallocAsync", "hipMallocFromPoolAsync",
    "hipHostRegister", "hipMemCreate", "hipMemAddressReserve", "hipMemMap", "hipArrayCreate",
    "hipArray3DCreate"};
constexpr std::string_view kFrees[] = {
    "cudaFree", "cudaFreeHost", "cudaFreeArray", "cudaFreeMipmappedArray", "cudaFreeAsync", "cudaHostUnregister",
    "cuMemFree", "cuMemFreeHost", "cuMemFreeAsync", "cuMemHostUnregister", "cuMemRelease", "cuMemUnmap",
    "cuMemAddressFree", "cuArrayDestroy", "cuMipmappedArrayDestroy",
    "hipFree", "hipHostFree", "hipFreeHost", "hipFreeArray", "hipFreeMipmappedArray", "hipFreeAsync",
    "hipHostUnregister", "hipMemRelease", "hipMemUnmap", "hipMemAddressFree", "hipArrayDestroy"};

struct RoleNames {
  ApiRole role;
  std::span<const std::string_view> names;
};
constexpr RoleNames kRoleTable[] = {
    {ApiRole::kKernelLaunch, kKernelLaunches}, {ApiRole::kGraphLaunch, kGraphLaunches}, {ApiRole::kSync, kSyncs},
    {ApiRole::kWaitEvent, kStreamWaits},       {ApiRole::kQuery, kQueries},             {ApiRole::kCopy, kCopies},
    {ApiRole::kMemset, kMemsets},              {ApiRole::kAlloc, kAllocations},         {ApiRole::kFree, kFrees},
};

}  // namespace

std::vector<std::string_view> api_names_with_role(ApiRole role) {
  std::vector<std::string_view> out;
  for (const auto& row : kRoleTable) {
    if (has_any(row.role, role)) out.insert(out.end(), row.names.begin(), row.names.end());
  }
  return out;
}

namespace {

const std::unordered_map<std::string_view, ApiRole>& role_index() {
  static const auto index = [] {
    std::unordered_map<std::string_view, ApiRole> m;
    for (const auto& row : kRoleTable) {
      for (auto name : row.names) m[name] = m[name] | row.role;
    }
    return m;
  }();
  return index;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The length of the known suffix `name` ends with, 0 when none.
std::size_t suffix_length(std::string_view name) {
  for (std::string_view s : {"_ptsz", "_ptds", "_spt"}) {
    if (name.size() > s.size() && name.ends_with(s)) return s.size();
  }
  // _v2, _v3020, _v12000: a version tag.
  if (const auto v = name.rfind("_v"); v != std::string_view::npos && v > 0 && all_digits(name.substr(v + 2))) {
    return name.size() - v;
  }
  // HIP's ABI tag: R and four digits after a letter (hipGetDevicePropertiesR0600).
  if (name.size() > 6 && name[name.size() - 5] == 'R' && all_digits(name.substr(name.size() - 4)) &&
      std::isalpha(static_cast<unsigned char>(name[name.size() - 6]))) {
    return 5;
  }
  return 0;
}

}  // namespace

std::string_view api_base_name(std::string_view name) {
  while (const std::size_t n = suffix_length(name)) name.remove_suffix(n);
  return name;
}

ApiRole role_of(std::string_view name) {
  const auto& index = role_index();
  const auto it = index.find(api_base_name(name));
  return it == index.end() ? ApiRole::kNone : it->second;
}

HostCallKind host_call_kind(std::string_view name) {
  const ApiRole role = role_of(name);
  if (has_any(role, ApiRole::kSync)) return HostCallKind::kBlocking;
  const bool asynchronous = api_base_name(name).find("Async") != std::string_view::npos;
  if (has_any(role, ApiRole::kCopy) && !asynchronous) return HostCallKind::kBlocking;
  if (has_any(role, kAnyLaunch | ApiRole::kCopy | ApiRole::kMemset | ApiRole::kWaitEvent)) return HostCallKind::kLaunch;
  return HostCallKind::kRuntime;
}

ApiRole ApiRoleCache::first_time(StringId name) {
  const std::size_t slot = name == kNoString ? strings_.size() : name;
  if (slot > strings_.size()) return role_of(strings_.get(name));  // not an id of this pool
  if (slots_.size() <= strings_.size()) slots_.assign(strings_.size() + 1, 0);
  std::uint32_t& s = slots_[slot];
  if (!(s & kKnown)) s = kKnown | static_cast<std::uint16_t>(role_of(strings_.get(name)));
  return static_cast<ApiRole>(s & 0xFFFFu);
}

NamesWithRole::NamesWithRole(const ApiCallColumns& calls, const StringPool& strings, ApiRole roles)
    : has_(strings.size() + 1, false) {
  ApiRoleCache role_of(strings);
  const auto decide = [&](StringId name) {
    const bool has = has_any(role_of(name), roles);
    has_[name == kNoString ? strings.size() : name] = has;
    any_ = any_ || has;
  };
  if (!calls.name.distinct_values().empty()) {
    for (const StringId name : calls.name.distinct_values()) decide(name);
  } else {
    for (const StringId name : calls.name) decide(name);
  }
}

}  // namespace kernscope
