// What a CUDA or HIP API call does, by its traced name: the one home for "is this a launch, a
// synchronization, a copy, an allocation", so steps, tail flags and kernscope's own rules agree,
// and AMD traces (HIP names) and old CUDA programs (cudaThreadSynchronize, cudaLaunch) count too.
// nsys's six analyze rules do not use it: they follow nsys's own SQL name patterns.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernscope/string_pool.hpp"
#include "kernscope/trace.hpp"

namespace kernscope {

// Roles as flags; a call may have none (cudaGetDeviceProperties, cudaLaunchHostFunc ...).
enum class ApiRole : std::uint16_t {
  kNone = 0,
  kKernelLaunch = 1 << 0,  // enqueues one kernel
  kGraphLaunch = 1 << 1,   // enqueues a whole CUDA/HIP graph
  kSync = 1 << 2,          // blocks the host until device work is done
  kWaitEvent = 1 << 3,     // makes a stream wait (for an event or a value): the device waits, not the host
  kQuery = 1 << 4,         // asks whether work is done, without waiting
  kCopy = 1 << 5,          // a memory copy
  kMemset = 1 << 6,        // a memory fill
  kAlloc = 1 << 7,         // allocates, maps or pins memory
  kFree = 1 << 8,          // frees, unmaps or unpins memory
};

constexpr ApiRole operator|(ApiRole a, ApiRole b) {
  return static_cast<ApiRole>(static_cast<std::uint16_t>(a) | static_cast<std::uint16_t>(b));
}
constexpr ApiRole operator&(ApiRole a, ApiRole b) {
  return static_cast<ApiRole>(static_cast<std::uint16_t>(a) & static_cast<std::uint16_t>(b));
}
// Whether `roles` holds at least one of the roles in `wanted`.
constexpr bool has_any(ApiRole roles, ApiRole wanted) { return (roles & wanted) != ApiRole::kNone; }

inline constexpr ApiRole kAnyLaunch = ApiRole::kKernelLaunch | ApiRole::kGraphLaunch;
inline constexpr ApiRole kAllocOrFree = ApiRole::kAlloc | ApiRole::kFree;
// Calls that make the host or a stream wait on other work, or poll it.
inline constexpr ApiRole kAnyWait = ApiRole::kSync | ApiRole::kWaitEvent | ApiRole::kQuery;

// The name without the suffixes tracers and headers append to one API: nsys's version tags
// (cudaLaunchKernel_v7000, cudaGetDeviceProperties_v2_v12000), the driver's _v2/_v3, the per-thread
// default stream variants (_ptsz, _ptds; HIP's _spt) and HIP's ABI tag (hipGetDevicePropertiesR0600).
std::string_view api_base_name(std::string_view name);

// The roles of the API named `name` (as traced, suffixes allowed). Whole names only:
// cudaLaunchHostFunc is not a launch, cudaThreadExchangeStreamCaptureMode not a sync.
ApiRole role_of(std::string_view name);

// The whole names (CUDA runtime and driver, HIP) that have `role`, in table order: what a change
// naming a call (whatif's no-sync=CALL) may name.
std::vector<std::string_view> api_names_with_role(ApiRole role);

// What a host call does to the host's time: blocking (it returns only when device work is done: a
// synchronization in any spelling, or a copy without "Async" — cudaMemcpy, cuMemcpyHtoD, hipMemcpy,
// hipMemcpyWithStream, which the HIP reference documents as synchronous), launch (it enqueues work:
// kernels, graphs, asynchronous copies and sets, stream waits) or runtime (every other CUDA/HIP call).
// The step accounting and the what-if replay read calls this way.
enum class HostCallKind : std::uint8_t { kNone, kBlocking, kLaunch, kRuntime };
HostCallKind host_call_kind(std::string_view name);

// role_of by StringId, each distinct name looked up once: analyses loop over millions of calls
// naming a few hundred APIs.
class ApiRoleCache {
 public:
  explicit ApiRoleCache(const StringPool& strings) : strings_(strings) {}
  // Inline where the name was met before (every call but a few hundred of millions).
  ApiRole operator()(StringId name) {
    const std::size_t size = strings_.size();
    const std::size_t slot = name == kNoString ? size : name;
    if (slots_.size() == size + 1 && slot <= size && (slots_[slot] & kKnown)) return static_cast<ApiRole>(slots_[slot] & 0xFFFFu);
    return first_time(name);
  }

 private:
  static constexpr std::uint32_t kKnown = 1u << 16;  // a slot that was looked up (roles may be none)
  ApiRole first_time(StringId name);
  const StringPool& strings_;
  std::vector<std::uint32_t> slots_;  // per StringId (kNoString last): roles + kKnown, 0 = not looked up
};

// Whether each name of the calls has one of `roles`, decided once per distinct name (the name
// column's dictionary; a scan of the calls where names are stored plainly), then read by any number
// of threads: passes over millions of calls test a bit a row instead of looking a role up.
class NamesWithRole {
 public:
  NamesWithRole(const ApiCallColumns& calls, const StringPool& strings, ApiRole roles);
  bool operator()(StringId name) const { return has_[name == kNoString ? has_.size() - 1 : name]; }
  bool any() const { return any_; }  // whether a call's name has the role

 private:
  std::vector<bool> has_;  // per StringId, kNoString last
  bool any_ = false;
};

}  // namespace kernscope
