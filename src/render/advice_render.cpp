#include "render/advice_render.hpp"

#include <cmath>

#include "base/text_util.hpp"

namespace kernscope {
namespace {

using text::fixed;


// " of the steady steps' time (groups)", or of every step where they are one loop.
std::string action_scope(const ActionFacts& f) {
  if (f.scope.empty()) return " of the steps' time";
  std::string groups;
  for (const auto& g : f.scope) groups += (groups.empty() ? "" : ", ") + g;
  return " of the steady steps' time (" + groups + ")";
}

// "h2d 81.4 %, d2d 1.7 %"
std::string action_parts(const ActionFacts& f) {
  std::string out;
  for (const auto& [name, share] : f.parts) out += (out.empty() ? "" : ", ") + name + " " + text::percent(share);
  return out;
}

// How the kernels of an operation class are made faster, where their work is not known.
std::string speed_up_advice(const std::string& op_class) {
  if (op_class == "moe_gemm") return "grouped expert GEMMs, expert load evened out (kernscope moe), fewer bytes of expert weights (quantized experts)";
  if (op_class == "gemm" || op_class == "gemv" || op_class == "quantized_gemm")
    return "compare their FLOP rate and bandwidth with the device's roofs (kernscope roofline, with shapes recorded or --model); "
           "memory-bound ones gain from fewer bytes of weights per token (quantized weights, larger batches), compute-bound ones "
           "from better-tuned tiles or FP8";
  if (op_class.starts_with("attention")) return "a fused attention kernel (FlashAttention, FlashInfer) and a KV-cache layout it reads at full bandwidth";
  if (op_class == "convolution") return "channels-last tensors, cuDNN's benchmark mode and mixed precision";
  if (op_class == "elementwise" || op_class == "copy_cast" || op_class == "norm" || op_class == "rope" || op_class == "activation" ||
      op_class == "embedding" || op_class == "reduction")
    return "fuse them with their neighbours (torch.compile, fused kernels): each reads and writes its tensors once more";
  if (op_class == "cuda graph (not itemized)") return "trace the graphs' kernels (nsys --cuda-graph-trace=node) to see which of them take the time";
  return "see which kernels they are (kernscope ops --by kernel, kernscope tail)";
}

// What the replay alone proposed (its part is small), by the change that stands for it.
std::string replay_only_sentence(const ReportAction& a) {
  const ActionFacts& f = a.facts;
  const std::string change = a.change.value_or("");
  if (change == "overlap-copies" && f.waited_calls > 0) {
    return "Let the host run ahead of its copies: " + std::to_string(f.waited_calls) + " " + f.waited_call +
           " calls in the steady steps returned only when their copy to or from pageable memory had ended, so the host waited "
           "for the GPU work queued before each: copy into pinned buffers (cudaMallocHost, pin_memory) asynchronously and read "
           "the result a step later";
  }
  std::string head = change == "no-sync" ? "Let the host run ahead of the GPU: remove the per-step synchronizations (wait on events only where a "
                                           "result is read, keep a step or two in flight), so the host's work overlaps the GPU's"
                     : change == "graphs" ? "Capture the step in a CUDA graph (torch.cuda.graphs, torch.compile mode=\"reduce-overhead\", the "
                                            "engine's CUDA-graph mode)"
                                          : "Overlap the copies with compute: pinned host buffers, cudaMemcpyAsync on their own stream, double-buffered";
  return head + ": its part holds only " + text::percent(f.share) + action_scope(f) + ", but the replay shows it";
}

std::string action_head(const ReportAction& a) {
  const ActionFacts& f = a.facts;
  if (f.replay_only) return replay_only_sentence(a);
  const std::string share = text::percent(f.share) + action_scope(f);
  if (a.kind == "roofline" || a.kind == "speed-up-kernels") {
    const std::string op_class = a.part.substr(std::string("gpu.").size());
    if (a.kind == "speed-up-kernels") {
      return "Speed up the " + op_class + " kernels: they hold " + share + " (" + text::millis(static_cast<double>(a.time_ns)) + "): " + speed_up_advice(op_class);
    }
    const std::string how = f.roof == "memory"    ? "move fewer bytes (quantized weights or KV cache, fused neighbours, larger batches)"
                            : f.roof == "compute" ? "use faster math (better-tuned GEMM tiles, FP8 where accuracy allows)"
                                                  : "launch fewer, larger kernels (fusion, CUDA graphs)";
    return "Bring the " + op_class + " kernels to their " + f.roof + " roof: they hold " + share + " and run at " + text::percent(f.roof_fraction) +
           " of the roof (" + fixed(f.tflop_per_s, 3) + " TFLOP/s, " + fixed(f.gb_per_s, 1) + " GB/s over " + std::to_string(f.kernels) +
           " kernels, " + text::millis(static_cast<double>(f.kernel_ns)) + "; ideal " + fixed(f.ideal_ns / 1e6, 3) + " ms): " + how;
  }
  if (a.kind == "overlap-comm") {
    return "Overlap communication with compute: collectives run with no compute beside them for " + share +
           " (exposed communication): start them earlier (bucketing, prefetch), run them on their own stream, or split compute so it hides them";
  }
  if (a.kind == "overlap-copies") {
    const std::string pageable = f.pageable_share >= 0.01 ? "; " + text::percent(f.pageable_share) + " from pageable memory" : "";
    return "Take the copies off the critical path: the GPU does nothing but copy for " + share + " (" + action_parts(f) + pageable +
           "): keep the data on the GPU where it is reused, pin host buffers, and overlap copies with compute on their own stream";
  }
  if (a.kind == "remove-waits") {
    return "Remove the host's waits: a host thread waits in " + action_parts(f) + action_scope(f) +
           " while the GPU is idle: wait on events only where a result is read, keep a step in flight, or move what it waits for off the step";
  }
  if (a.kind == "launch-less") {
    return "Launch less from the host: the steps replay CUDA graphs (" + std::to_string(f.graph_launches) +
           " graph launches), yet the GPU idles while the host launches work for " + share +
           ": capture what still runs outside the graphs, or fuse kernels so fewer are launched";
  }
  if (a.kind == "cuda-graphs") {
    return "Capture the step in a CUDA graph (torch.compile mode=\"reduce-overhead\", torch.cuda.graphs, the engine's CUDA-graph mode): the "
           "GPU idles while the host launches work for " + share + " (the launch calls and the framework's time between them)";
  }
  if (a.kind == "data-loader") {
    return "Load the data off the step: the GPU idles while the host is in the data loader (" + f.frame + " " + text::percent(f.frame_share) + action_scope(f) +
           "): DataLoader workers (num_workers > 0), pin_memory=True and prefetching prepare the next batch while the GPU runs this one";
  }
  if (a.kind == "host-work" && a.part == "host.unrecorded") {
    return "Take the host's own work off the GPU's critical path: a launching thread was busy on a CPU while the GPU idled for " + share +
           ", in code no call or range records (Python, tokenization, the framework): sample it (kernscope record --sample cpu) to name "
           "the functions, then move it out of the step or run it while the GPU works";
  }
  if (a.kind == "host-work") {
    std::string where = f.frame.empty() ? "" : " (innermost " + f.frame + " " + text::percent(f.frame_share);
    if (!where.empty() && f.outer_frame != f.frame && !f.outer_frame.empty()) where += ", inside " + f.outer_frame + " " + text::percent(f.outer_share);
    if (!where.empty()) where += ")";
    return "Take host work off the GPU's critical path: the GPU idles while the host runs framework code for " + share + where +
           ": move it out of the step, or run it while the GPU works on the previous one";
  }
  if (a.kind == "runtime-calls") {
    return "Take runtime calls that launch nothing (allocations, attribute queries, frees) out of the step: they hold the host while the "
           "GPU idles for " + share + "; allocate once, before the loop, or from a caching allocator";
  }
  if (a.kind == "find-host-work") {
    return "Find what the host does while the GPU idles: nothing recorded explains " + share +
           " (no call and no range open, no GPU work queued): sample the host (kernscope record --sample cpu, or nsys "
           "--sample=cpu --python-sampling=true) to name it";
  }
  if (a.kind == "trace-gpu") {
    return "Trace the GPU: this trace holds no GPU work (no kernels, copies or CUDA graph executions" +
           (f.api_calls > 0 ? ", though it holds " + std::to_string(f.api_calls) + " CUDA calls" : std::string()) +
           "), so where the GPU's time goes cannot be read from it: record with CUDA activity on (kernscope record, nsys "
           "profile --trace=cuda, torch.profiler with ProfilerActivity.CUDA)";
  }
  if (a.kind == "find-steps") {
    return "Mark the steps so that their time can be accounted and each fix priced: no steps were found (" + f.steps_method +
           "); an NVTX range around each iteration (or --step-range NAME) makes them";
  }
  return a.kind + " (" + a.part + ", " + share + ")";  // a kind this file does not know yet: its figures, unworded
}

}  // namespace

std::string action_sentence(const ReportAction& a) {
  std::string out = action_head(a);
  if (a.predicted) {
    const PredictedStep& p = *a.predicted;
    const double from = static_cast<double>(p.from_ns) / 1e6, to = static_cast<double>(p.to_ns) / 1e6;
    // An upper bound's saving is the most the change could give.
    const bool at_best = p.basis.find("upper bound") != std::string::npos;
    out += std::string(" (predicted") + (at_best ? " at best" : "") + ": " + p.metric + " " + fixed(from, 3) + " -> " + fixed(to, 3) +
           " ms (" + (to <= from ? "-" : "+") + fixed(std::abs(100.0 * (from - to) / from), 1) + " %, " + p.source + "))";
  } else if (!a.why_not_predicted.empty() && a.kind != "find-steps") {  // find-steps says why in its sentence
    out += " (not predicted: " + a.why_not_predicted + ")";
  }
  return out;
}

}  // namespace kernscope
