// NVTX through CUPTI's callbacks: the NVTX capture range (--capture-range nvtx), step ranges for
// live capture (--step-range, --every-steps, tail capture), and live capture's set-up.
#include "tracer/injection/tracer.hpp"

namespace kernscope::tracer {

// NVTX capture ranges: each thread keeps a stack of its open ranges, marking the ones that match
// the capture range, so the matching pop ends the capture even with ranges nested inside.
void Tracer::on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  thread_local std::vector<bool> stack;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto* p = static_cast<const nvtxDomainCreateA_params*>(data->functionParams);
      const auto* handle = static_cast<const nvtxDomainHandle_t*>(data->functionReturnValue);
      if (p && p->name && handle) {
        std::lock_guard lock(domain_mutex_);
        domain_names_[*handle] = p->name;
      }
      return;
    }
    default:
      break;
  }
  // Watched for a capture range only (live capture watches steps in watch_steps).
  if (config_.capture != TracerConfig::Capture::kNvtx) return;
  if (const auto push = pushed_range(cbid, data)) {
    stack.push_back(push->text && push->domain == config_.nvtx_domain && config_.nvtx_range == push->text);
  } else switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      if (!stack.empty()) {
        const bool was_capture = stack.back();
        stack.pop_back();
        if (was_capture) {
          // The capturing range itself began before recording did: written from our own stamps.
          uint64_t now = 0;
          cuptiGetTimestamp(&now);
          std::lock_guard lock(capture_mutex_);
          if (!capture_open_.empty()) {
            NvtxRow row = capture_open_.back();
            capture_open_.pop_back();
            row.end = static_cast<std::int64_t>(now);
            row.end_tid = row.tid;
            if (active_) capture_rows_.push_back(row);
          }
          range_ended();
        }
      }
      return;
    default:
      return;
  }
  if (stack.back()) {
    const bool was_active = active_;
    range_started();
    if (active_ && !was_active) {
      uint64_t now = 0;
      cuptiGetTimestamp(&now);
      NvtxRow row;
      row.start = static_cast<std::int64_t>(now);
      row.pid = static_cast<std::uint32_t>(getpid());
      row.tid = static_cast<std::uint32_t>(gettid());
      std::lock_guard lock(capture_mutex_);
      row.text = capture_text_;
      row.domain = capture_domain_;
      capture_open_.push_back(row);
    }
  }
}

std::optional<Tracer::NvtxPush> Tracer::pushed_range(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  const auto ascii = [](const nvtxEventAttributes_t* a) {
    return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : nullptr;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const auto* p = static_cast<const nvtxRangePushA_params*>(data->functionParams);
      return NvtxPush{p ? p->message : nullptr, {}};
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx: {
      const auto* p = static_cast<const nvtxRangePushEx_params*>(data->functionParams);
      return NvtxPush{p ? ascii(p->eventAttrib) : nullptr, {}};
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams);
      NvtxPush push{p ? ascii(p->core.eventAttrib) : nullptr, {}};
      if (p) {
        std::lock_guard lock(domain_mutex_);
        if (auto it = domain_names_.find(p->domain); it != domain_names_.end()) push.domain = it->second;
      }
      return push;
    }
    default:
      return std::nullopt;
  }
}

// Live capture by steps: a step range is the one --step-range names (NAME or NAME@DOMAIN), or with
// "auto" a range whose name is an engine's or PyTorch's step name (model/step_names.hpp). Nested
// step ranges count at the innermost level seen, as `kernscope steps` counts them.
bool Tracer::is_step_range(const char* text, const std::string& domain) {
  if (!text) return false;
  if (config_.step_range != "auto") {
    return config_.step_range == text || (!domain.empty() && config_.step_range == std::string(text) + "@" + domain);
  }
  // Names repeat (one per step): each is decided once per thread.
  thread_local std::map<std::string, bool, std::less<>> decided;
  const std::string_view name(text);
  if (auto it = decided.find(name); it != decided.end()) return it->second;
  const bool step = step_name_phase(name).has_value();
  if (decided.size() >= 4096) decided.clear();  // names unique per step (vLLM's): start over, bounded
  decided.emplace(std::string(name), step);
  return step;
}

void Tracer::watch_steps(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  if (!g_started) return;  // a child forked without exec: its copy of the tracer has no threads
  thread_local std::vector<int> stack;  // per open range: -1, or the step's nesting level
  auto push = [&](bool step) {
    int level = -1;
    if (step) {
      level = static_cast<int>(std::count_if(stack.begin(), stack.end(), [](int l) { return l >= 0; }));
      int deepest = step_depth_.load();
      while (level > deepest && !step_depth_.compare_exchange_weak(deepest, level)) {
      }
    }
    stack.push_back(level);
    if (level >= 0 && level == step_depth_.load()) live_->on_step(true);
  };
  if (const auto pushed = pushed_range(cbid, data)) {
    push(is_step_range(pushed->text, pushed->domain));
    return;
  }
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      if (stack.empty()) return;
      if (const int level = stack.back(); level >= 0 && level == step_depth_.load()) {
        stack.pop_back();
        live_->on_step(false);
        return;
      }
      stack.pop_back();
      return;
    default:
      return;
  }
}

// Live capture's set-up: the schedule or the tail trigger (LiveCapture), the step watch, the
// control socket in the session's folder.
void Tracer::start_live() {
  LiveCapture::Hooks hooks;
  hooks.now = [this] { return now_ns(); };
  hooks.record = [this](bool on, const std::string& why) { set_activities(on, why); };
  hooks.recording = [this] { return active_.load(); };
  live_ = std::make_unique<LiveCapture>(config_, getpid(), hooks);
  watch_steps_ = live_->watches_steps();
  if (watch_steps_ && subscribe("cannot watch NVTX step ranges")) cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_NVTX);
  const std::string session = config_.session.empty() ? std::to_string(getpid()) : config_.session;
  const auto getenv = [](const char* n) { return std::getenv(n); };
  if (auto r = live_->listen(control_socket_path(session_dir(session, getenv), getpid())); !r) {
    say("live capture cannot be controlled from outside: " + r.error().message +
        (config_.live.sampled() ? "; sampled windows still open on their own" : ""));
    live_->run_timer();
  }
}

}  // namespace kernscope::tracer
