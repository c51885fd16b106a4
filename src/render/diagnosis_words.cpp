#include "render/diagnosis_words.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "base/text_util.hpp"
#include "render/roofline_render.hpp"

namespace kernscope {
namespace {

using text::fixed;
namespace dl = diagnosis_line;

// What a waits finding's head is, by rule: the LLM rules' own words, else the finding's title.
std::string finding_head(const dl::RuleFinding& f) {
  if (f.rule == "llm_launch_bound") return "Decode is launch/host-bound";
  if (f.rule == "llm_tiny_kernels") return "Kernels are tiny";
  if (f.rule == "cuda_memcpy_async") return "Async copies from pageable memory run synchronously";
  return f.title;
}

struct Words {
  std::string operator()(const dl::NoGpuWork& l) const { return "No GPU work in this trace: " + l.why; }
  std::string operator()(const dl::ExpertImbalance& l) const {
    char line[320];
    std::snprintf(line, sizeof line,
                  "Experts are unevenly loaded: in MoE layer %lld the busiest expert gets %.2fx the mean tokens "
                  "(kernscope moe lists every layer's tokens per expert).",
                  static_cast<long long>(l.layer), l.imbalance);
    std::string text = line;
    if (l.estimated) {
      text += " Perfect-router estimate: " + l.verdict +
              (l.saving_pct >= 10 ? "; expert load balancing (EPLB, a capacity factor, an auxiliary balance loss) is worth it." : ".");
    } else {
      text += " Expert load balancing (EPLB, a capacity factor, an auxiliary balance loss) evens it; whether that pays is not estimated: " +
              l.why_not + ".";
    }
    return text;
  }
  std::string operator()(const dl::Speculation& l) const {
    std::string text = "Speculative decoding (" + l.engine + "): " + std::to_string(l.verify_steps) + " verify steps";
    char part[256];
    if (l.acceptance) {
      std::snprintf(part, sizeof part, ", %lld of %lld proposed tokens accepted (%.1f %%)", static_cast<long long>(l.accepted),
                    static_cast<long long>(l.proposed), *l.acceptance * 100);
      text += part;
    }
    if (l.ms_per_emitted && l.plain_decode_ms && l.speedup) {
      std::snprintf(part, sizeof part, "; %.2f ms per emitted token against %.2f ms for a plain decode step (%.2fx%s)", *l.ms_per_emitted,
                    *l.plain_decode_ms, *l.speedup, *l.speedup < 1 ? ": speculation costs more than it saves here" : "");
      text += part;
    }
    const std::int64_t total = l.draft_ns + l.verify_ns;
    if (total > 0) {
      std::snprintf(part, sizeof part, "; drafting is %.0f %% of the verify steps' time%s",
                    100.0 * static_cast<double>(l.draft_ns) / static_cast<double>(total), l.draft_on_critical_path ? ", all of it on the critical path" : "");
      text += part;
    }
    return text + " (kernscope spec).";
  }
  std::string operator()(const dl::WhereTimeGoes& l) const {
    std::string line = "Where the steps' time goes: ";
    for (std::size_t i = 0; i < l.categories.size(); ++i) line += (i ? ", " : "") + l.categories[i].first + " " + text::percent(l.categories[i].second);
    if (l.scope.empty()) return line + " (kernscope account).";
    std::string groups;
    for (const auto& g : l.scope) groups += (groups.empty() ? "" : ", ") + g;
    return line + " (the steady steps: " + groups + "; earlier groups left out; kernscope account).";
  }
  std::string operator()(const dl::IdleQueued& l) const {
    return "The GPU sat idle for " + text::percent(l.share) + " of the steps' time with work already launched to it (its launch calls had "
           "returned): it ran something this trace does not hold (another process), or its clock is offset from the host's; not the "
           "program's step time to optimize.";
  }
  std::string operator()(const dl::IdleUnexplained& l) const {
    return "Nothing recorded explains " + text::percent(l.share) + " of the steps' time (the GPU idle, no host call or range open): trace "
           "the host too (kernscope record --sample cpu, nsys --sample=cpu --python-sampling=true) to see what ran there.";
  }
  std::string operator()(const dl::RuleFinding& l) const { return finding_head(l) + ": " + l.evidence + "."; }
  std::string operator()(const dl::CheapWaits& l) const {
    return l.title + ": " + l.evidence + "; the GPU is idle during only " + fixed(static_cast<double>(l.blocked_ns) / 1e6, 3) +
           " ms of those waits (kernscope account), so removing them would save little.";
  }
  std::string operator()(const dl::SetupCopies& l) const {
    return "Async copies from pageable memory (" + l.evidence + ") all ran before the first step (setup: loading the model), not in the steps.";
  }
  std::string operator()(const dl::DecodeClasses& l) const {
    std::string line = "In decode, " + l.classes[0].first + " takes " + text::percent(l.classes[0].second) + " of kernel time";
    if (l.classes.size() > 1) line += ", then " + l.classes[1].first + " " + text::percent(l.classes[1].second);
    if (l.classes.size() > 2) line += " and " + l.classes[2].first + " " + text::percent(l.classes[2].second);
    return line + ".";
  }
  std::string operator()(const dl::DecodeTail& l) const {
    return "Decode steps have a tail: p50 " + fixed(l.p50_ns / 1e6, 3) + " ms, p99 " + fixed(l.p99_ns / 1e6, 3) + " ms, max " +
           fixed(static_cast<double>(l.max_ns) / 1e6, 3) + " ms.";
  }
  std::string operator()(const dl::RooflineCoverage& l) const {
    return "Speed of light: " + roofline_coverage_line(l.kernel_ns, l.covered_ns, l.covered_by_source, l.step_work_source) + ".";
  }
  std::string operator()(const dl::RooflineFigure& l) const { return roofline_headline_line(l.figure, l.latency_floor_ns) + "."; }
  std::string operator()(const dl::ModelSpeedOfLight& l) const {
    std::string sentence;
    for (const auto& [name, fraction] : l.figures) {
      if (name == "decode MBU" || name == "prefill MFU") sentence += (sentence.empty() ? "" : "; ") + name + " " + text::percent(fraction);
    }
    for (const auto& [name, fraction] : l.figures) {
      if (name == "decode MBU over kernel time") sentence += fmt::format(" (decode kernels alone reach {} of peak bandwidth)", text::percent(fraction));
    }
    for (const auto& [name, fraction] : l.figures) {
      if (name == "decode GEMV bandwidth efficiency") {
        sentence += fmt::format("; decode GEMV bandwidth efficiency {} (weight matrices over the projection kernels' time)", text::percent(fraction));
      }
    }
    return "Speed of light for " + l.config + ": " + sentence + ".";
  }
  std::string operator()(const dl::NothingStandsOut&) const { return "No rule fired: nothing stands out in this trace."; }
};

}  // namespace

std::string diagnosis_sentence(const DiagnosisLine& line) { return std::visit(Words{}, line); }

std::vector<std::string> diagnosis_sentences(const std::vector<DiagnosisLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(diagnosis_sentence(l));
  return out;
}

}  // namespace kernscope
