// The model options (--model config.json --batch --prompt --output-tokens --prefill-logits) as
// `report` and `roofline` take them (--output-tokens, as report's --output names its output file),
// and the speed-of-light figures they add to the report's diagnosis.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyses/work/kernel_work.hpp"
#include "analyses/work/model_cost.hpp"
#include "analyses/work/model_cost_utilization.hpp"
#include "kernscope/analysis_inputs.hpp"
#include "analyses/diagnosis/diagnosis.hpp"

namespace kernscope {

using ModelOptionValues = std::map<std::string, std::string>;  // option name (no "--") → value

std::vector<OptionSpec> model_option_specs();

// The cost of the run the options describe; nullopt without --model. --model without --prompt and
// --output-tokens, numbers out of range and unreadable configs are errors.
Result<std::optional<ModelCost>> model_cost_from_options(const ModelOptionValues& values);

// With --model: decode MBU and prefill MFU into d.speed_of_light (and their notes), a sentence at
// the head of d.diagnosis. Peaks: `user_rows` (--peaks), then the built-in table (model_peaks).
Result<void> add_speed_of_light(const Trace& trace, const ModelOptionValues& values, const std::vector<GpuPeaks>& user_rows,
                                Diagnosis& d);

// The roofline's model-config provider (kernel_work.hpp): with --model, the analytic FLOPs and
// bytes of the prefill and of the mean decode step as StepWork of every step of each phase.
Result<void> fill_model_config_work(const WorkRequest& request, WorkTable& table);

}  // namespace kernscope
