// The model config as a source of the roofline's step work (kernel_work.hpp): the prefill's and
// the mean decode step's FLOPs and bytes, for every step of each phase (index -1: a trace's
// warm-up and measured runs each get the same figures; the mean step stands for each decode step,
// whose KV context grows by one token a step).
#include <fmt/format.h>

#include "analyses/work/model_cost_report.hpp"
#include "analyses/work/model_cost_utilization.hpp"

namespace kernscope {
namespace {

StepWork step_work(Phase phase, const PassCost& c, Precision precision, std::string detail) {
  StepWork w;
  w.phase = phase;
  w.index = -1;
  w.flops[static_cast<std::size_t>(precision)] = c.flops();
  w.bytes = c.bytes();
  w.matmul_weight_bytes = c.matmul_weight_bytes;
  w.source = kSourceModelConfig;
  w.detail = std::move(detail);
  return w;
}

}  // namespace

Result<void> fill_model_config_work(const WorkRequest& request, WorkTable& table) {
  ModelOptionValues values;
  for (const auto& spec : model_option_specs()) values[spec.name] = request.option(spec.name);
  auto cost = model_cost_from_options(values);
  if (!cost) return std::unexpected(cost.error());
  if (!*cost) return {};
  const auto& m = **cost;
  const Precision precision = model_precision(m.shape);
  table.offer_step(step_work(Phase::kPrefill, m.prefill, precision,
                             fmt::format("{} prefill: batch {} x prompt {}", values["model"], m.run.batch, m.run.prompt)));
  if (m.decode_steps > 0) {
    table.offer_step(step_work(Phase::kDecode, m.decode_mean, precision,
                               fmt::format("{} decode step: batch {}, mean of {} steps (contexts {}..{})", values["model"],
                                           m.run.batch, m.decode_steps, m.run.prompt + 1, m.run.prompt + m.decode_steps)));
  }
  for (const auto& n : m.shape.notes) table.note(n);
  return {};
}

}  // namespace kernscope
