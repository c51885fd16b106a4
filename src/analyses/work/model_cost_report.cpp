// The model options and the report's speed-of-light figures (model_cost_report.hpp).
#include "analyses/work/model_cost_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace kernscope {
namespace {

std::string value_of(const ModelOptionValues& values, const std::string& name) {
  auto it = values.find(name);
  return it == values.end() ? std::string() : it->second;
}

Result<std::int64_t> count_of(const ModelOptionValues& values, const std::string& name) {
  const std::string text = value_of(values, name);
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 1) {
    return make_error(ErrorCode::kInvalidArgument, "--" + name + " needs a whole number of at least 1, not '" + text + "'");
  }
  return v;
}


}  // namespace

std::vector<OptionSpec> model_option_specs() {
  return {
      {"model", 0, OptionKind::kText, "",
       "Hugging Face config.json of the model the trace ran: analytic FLOPs and bytes per step, decode MBU, prefill MFU"},
      {"batch", 0, OptionKind::kInteger, "1", "with --model: sequences per step"},
      {"prompt", 0, OptionKind::kInteger, "", "with --model: prompt tokens per sequence (the prefill)"},
      {"output-tokens", 0, OptionKind::kInteger, "",
       "with --model: output tokens per sequence, the prefill's included (N - 1 decode steps)"},
      {"prefill-logits", 0, OptionKind::kText, "last",
       "with --model: 'last' (vLLM, generate()) or 'all' (a plain model(input_ids) call) prompt tokens get logits"},
  };
}

Result<std::optional<ModelCost>> model_cost_from_options(const ModelOptionValues& values) {
  const std::string path = value_of(values, "model");
  if (path.empty()) {
    for (const char* name : {"prompt", "output-tokens"}) {
      if (!value_of(values, name).empty()) return make_error(ErrorCode::kInvalidArgument, std::string("--") + name + " needs --model");
    }
    return std::optional<ModelCost>{};
  }
  if (value_of(values, "prompt").empty() || value_of(values, "output-tokens").empty()) {
    return make_error(ErrorCode::kInvalidArgument, "--model needs --prompt and --output-tokens (tokens per sequence)");
  }
  ModelRun run;
  const std::string batch = value_of(values, "batch");
  if (!batch.empty()) {
    auto b = count_of(values, "batch");
    if (!b) return std::unexpected(b.error());
    run.batch = *b;
  }
  auto prompt = count_of(values, "prompt");
  if (!prompt) return std::unexpected(prompt.error());
  auto output = count_of(values, "output-tokens");
  if (!output) return std::unexpected(output.error());
  run.prompt = *prompt;
  run.output = *output;
  const std::string logits = value_of(values, "prefill-logits");
  if (logits != "" && logits != "last" && logits != "all") {
    return make_error(ErrorCode::kInvalidArgument, "--prefill-logits is 'last' or 'all', not '" + logits + "'");
  }
  run.prefill_logits_all = logits == "all";
  auto shape = read_model_config(path);
  if (!shape) return std::unexpected(shape.error());
  auto cost = model_cost(*shape, run);
  if (!cost) return std::unexpected(cost.error());
  return std::optional<ModelCost>{std::move(*cost)};
}

Result<void> add_speed_of_light(const Trace& trace, const ModelOptionValues& values, const std::vector<GpuPeaks>& user_rows,
                                Diagnosis& d) {
  auto cost = model_cost_from_options(values);
  if (!cost) return std::unexpected(cost.error());
  if (!*cost) return {};
  const ModelPeaks use = model_peaks(trace, model_precision((*cost)->shape), user_rows);
  const std::string config = std::filesystem::path(value_of(values, "model")).filename().string();
  auto u = model_utilization(**cost, config, d.steps, use);
  d.speed_of_light = std::move(u.figures);
  d.speed_of_light_notes = std::move(u.notes);
  // The headline line: the figures over the steps as the user feels them (render words it).
  diagnosis_line::ModelSpeedOfLight line{config, {}};
  for (const auto& f : d.speed_of_light) line.figures.emplace_back(f.name, f.fraction);
  const bool headline = std::any_of(line.figures.begin(), line.figures.end(),
                                    [](const auto& f) { return f.first == "decode MBU" || f.first == "prefill MFU"; });
  if (headline) d.diagnosis.insert(d.diagnosis.begin(), std::move(line));
  return {};
}

}  // namespace kernscope
