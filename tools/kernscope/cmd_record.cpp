// kernscope record [options] -- CMD ARGS...: traces any CUDA program with kernscope's CUPTI tracer
// (injected through CUDA_INJECTION64_PATH), with Nsight Systems (--backend nsys) or profiles it
// with Nsight Compute (--backend ncu: the roofline's counters, exported as CSVs kernscope reads).
// Runs the child, forwards SIGINT/SIGTERM to it, waits, lists the files written, and exits with
// the child's exit status. --gemm-shapes makes cuBLAS/cuBLASLt log GEMM shapes beside the output.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "base/find_program.hpp"
#include "commands.hpp"
#include "kernscope/open.hpp"
#include "python_hook_data.hpp"
#include "readers/cublas_log/gemm_shapes_env.hpp"
#include "readers/ncu/ncu_command.hpp"
#include "readers/ncu/ncu_report.hpp"
#include "tracer/config/control_channel.hpp"
#include "tracer/config/file_list.hpp"
#include "tracer/config/tracer_config.hpp"

namespace kernscope::cli {
namespace {

struct RecordOptions {
  std::string output = "kernscope-%p.sqlite";
  std::string api = "default";
  std::string graph_trace = "node";
  int nvml_interval_ms = 10;
  int thread_cpu_us = 1000;
  bool nvml_pcie = false;
  bool hw_trace = false;
  std::string capture_range = "none";
  std::string capture_range_end = "stop";
  double delay_s = 0;
  double duration_s = 0;
  std::string backend = "kernscope";
  int buffer_mb = 8;
  std::string record;
  bool gemm_shapes = false;
  std::vector<std::string> ncu_kernels;  // --backend ncu: kernel name regexes
  std::int64_t ncu_launch_skip = 0, ncu_launch_count = 0;
  std::string ncu_nvtx_include;
  std::string sample = "none";
  // Live capture.
  bool paused = false;
  // Live capture: CUPTI between windows, "detached" or "attached"; empty when not given, so that a
  // KERNSCOPE_PAUSED_DETACH of the user's environment still holds.
  std::string between_windows;
  std::string session;
  double every_s = 0, for_s = 0;
  std::int64_t every_steps = 0, steps = 0, keep_last_steps = 0;
  std::string when, step_range;
  int tail_mb = 512;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

std::string executable_dir() {
  char path[PATH_MAX] = {0};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::filesystem::path(std::string(path, static_cast<std::size_t>(n))).parent_path().string() : ".";
}

// The injected library: KERNSCOPE_TRACER_LIB, else relative to this binary's own file (/proc/self/exe,
// so it holds however kernscope was started): beside it, in ../lib (an installed prefix, and the pip
// wheel's kernscope/bin/kernscope with kernscope/lib/libkernscope_tracer.so), or in the build tree.
std::string find_tracer_library() {
  if (const char* env = std::getenv(tracer::env::kTracerLib); env && *env) return env;
  const std::filesystem::path dir = executable_dir();
  for (const auto& candidate : {dir / "libkernscope_tracer.so", dir / "../lib/libkernscope_tracer.so",
                                dir / "../../src/tracer/libkernscope_tracer.so"}) {
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec)) return std::filesystem::canonical(candidate, ec).string();
  }
  return {};
}

// A CUPTI library for NVTX_INJECTION64_PATH (the tracer replaces it with its own copy's path).
std::string find_cupti_library() {
  for (const char* d : {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"}) {
    for (const char* name : {"libcupti.so.13", "libcupti.so"}) {
      const std::string candidate = std::string(d) + "/" + name;
      if (::access(candidate.c_str(), R_OK) == 0) return candidate;
    }
  }
  return {};
}

// Runs argv with the extra environment; returns the exit status as a shell reports it.
int run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env) {
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "kernscope: record: cannot start the program: " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  if (child == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "kernscope: record: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  g_child = child;
  struct sigaction action{};
  action.sa_handler = forward_signal;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// One line per traced process: pid, command, what its file holds and the file; or that it recorded
// nothing and left no file. pid and command come from the tracer's list, else from the file.
void summarize(const tracer::ListedProcess& p) {
  std::string pid = p.pid > 0 ? std::to_string(p.pid) : "?";
  std::string command = p.command;
  if (p.state == tracer::ListedProcess::State::kEmpty) {
    std::cerr << "  " << pid << " " << command << ": no GPU activity (no file)\n";
    return;
  }
  OpenOptions options;
  options.detail_kinds = 0;
  auto trace = open_trace(p.path, options);
  if (!trace) {
    std::cerr << "  " << pid << " " << command << ": " << p.path << " (unreadable: " << trace.error().message << ")\n";
    return;
  }
  if (p.pid <= 0 && !trace->processes.empty()) pid = std::to_string(trace->processes.front().pid);
  if (command.empty()) {
    for (const auto& [key, value] : trace->source.tracer_info) {
      if (key == "command") command = value;
    }
    if (command.empty() && !trace->processes.empty()) command = trace->processes.front().name;
  }
  if (trace->kernels.size() + trace->api_calls.size() + trace->memcpys.size() + trace->memsets.size() + trace->graph_execs.size() == 0) {
    // A file the Python host hook wrote for a process without CUDA work (its GC ranges, stacks).
    std::cerr << "  " << pid << " " << command << ": no GPU activity (host records only: " << trace->nvtx.size()
              << " NVTX events) -> " << p.path << "\n";
    return;
  }
  std::cerr << "  " << pid << " " << command << ": " << trace->kernels.size() << " kernels, " << trace->api_calls.size()
            << " API calls, " << trace->nvtx.size() << " NVTX events, " << trace->gpu_samples.size() << " GPU samples";
  if (trace->graph_execs.size() > 0) std::cerr << ", " << trace->graph_execs.size() << " whole-graph executions";
  // What was lost (records dropped, the file cut short, another profiler taking CUPTI), said here.
  for (const auto& note : trace->notes) {
    if (note.severity == NoteSeverity::kDataLoss) std::cerr << "; " << note.text.substr(0, note.text.find(" ("));
  }
  std::cerr << " -> " << p.path << "\n";
}

int record_with_nsys(const RecordOptions& o, const std::vector<std::pair<std::string, std::string>>& env) {
  std::string nsys = std::getenv("NSYS") ? std::getenv("NSYS") : find_program("nsys");
  if (nsys.empty()) return fail(Error{ErrorCode::kNotFound, "record --backend nsys: nsys is not on PATH (or set NSYS)"});
  std::string base = o.output;
  for (const char* ext : {".sqlite", ".nsys-rep"}) {
    if (base.size() > std::strlen(ext) && base.ends_with(ext)) base.resize(base.size() - std::strlen(ext));
  }
  std::vector<std::string> argv = {nsys, "profile", "--trace=cuda,nvtx", "--cuda-graph-trace=" + o.graph_trace,
                                   "--force-overwrite=true", "--export=sqlite", "-o", base};
  if (o.capture_range == "cudaProfilerApi") {
    argv.push_back("--capture-range=cudaProfilerApi");
    argv.push_back("--capture-range-end=" + o.capture_range_end);
  } else if (o.capture_range.rfind("nvtx:", 0) == 0) {
    argv.push_back("--capture-range=nvtx");
    argv.push_back("--nvtx-capture=" + o.capture_range.substr(5));
    argv.push_back("--capture-range-end=" + o.capture_range_end);
  }
  if (o.delay_s > 0) argv.push_back("--delay=" + std::to_string(static_cast<int>(o.delay_s)));
  if (o.duration_s > 0) argv.push_back("--duration=" + std::to_string(static_cast<int>(o.duration_s)));
  argv.push_back("--");
  argv.insert(argv.end(), o.command.begin(), o.command.end());
  const int status = run_child(argv, env);
  std::cerr << "kernscope: record (nsys):\n";
  summarize(tracer::ListedProcess{tracer::ListedProcess::State::kStarted, base + ".sqlite", 0, {}});
  return status;
}

// --backend ncu: profile (one report), then export the raw and details pages kernscope reads.
int record_with_ncu(const RecordOptions& o, const std::vector<std::pair<std::string, std::string>>& env) {
  const std::string ncu = std::getenv("NCU") ? std::getenv("NCU") : find_program("ncu");
  if (ncu.empty()) return fail(Error{ErrorCode::kNotFound, "record --backend ncu: ncu is not on PATH (or set NCU)"});
  std::string base = o.output;
  for (const char* ext : {".sqlite", ".ncu-rep", ".csv"}) {
    if (base.size() > std::strlen(ext) && base.ends_with(ext)) base.resize(base.size() - std::strlen(ext));
  }
  // ncu writes one report for every process it profiles: %p is this run's id.
  for (std::size_t pos = base.find("%p"); pos != std::string::npos; pos = base.find("%p")) base.replace(pos, 2, std::to_string(::getpid()));
  if (base.find('%') != std::string::npos) return fail(Error{ErrorCode::kInvalidArgument, "record --backend ncu: -o takes %p only"});
  readers::ncu::NcuRecordRequest request;
  request.ncu = ncu;
  request.report_base = base;
  request.kernel_regexes = o.ncu_kernels;
  request.launch_skip = o.ncu_launch_skip;
  request.launch_count = o.ncu_launch_count;
  request.nvtx_include = o.ncu_nvtx_include;
  request.command = o.command;
  const int status = run_child(readers::ncu::ncu_profile_args(request), env);
  std::cerr << "kernscope: record (ncu): " << base << ".ncu-rep\n";
  for (const std::string page : {"raw", "details"}) {
    const std::string csv = readers::ncu::ncu_csv_path(base, page);
    run_child(readers::ncu::ncu_export_args(ncu, base, page, csv), {});
    auto report = readers::ncu::read_ncu_csv(csv);
    std::cerr << "  " << csv << (report ? ": " + std::to_string(report->kernels.size()) + " kernels" : " (unreadable: " + report.error().message + ")") << "\n";
  }
  std::cerr << "  roofline: kernscope roofline " << readers::ncu::ncu_csv_path(base, "raw") << " --ncu "
            << readers::ncu::ncu_csv_path(base, "raw") << " (or a trace of the same program with --ncu)\n";
  return status;
}

int run_record(const RecordOptions& o) {
  if (o.command.empty()) return fail(Error{ErrorCode::kInvalidArgument, "record: no command to run (kernscope record [options] -- CMD ARGS...)"});
  if (o.api != "default" && o.api != "all") return fail(Error{ErrorCode::kInvalidArgument, "record: --api must be default or all"});
  if (o.graph_trace != "node" && o.graph_trace != "graph") {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --cuda-graph-trace must be node or graph"});
  }
  if (o.capture_range != "none" && o.capture_range != "cudaProfilerApi" &&
      !(o.capture_range.rfind("nvtx:", 0) == 0 && o.capture_range.size() > 5)) {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --capture-range must be none, cudaProfilerApi or nvtx:NAME[@DOMAIN]"});
  }
  if (o.capture_range_end != "stop" && o.capture_range_end != "repeat" && o.capture_range_end.rfind("repeat:", 0) != 0) {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --capture-range-end must be stop, repeat or repeat:N"});
  }
  // --sample: Python programs' stacks (kernscope_host.py) or native ones (the tracer); the same rules.
  if (!tracer::parse_sample_rate(o.sample)) {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --sample must be none, cpu or cpu:HZ with HZ in 1..1000"});
  }
  if (o.backend != "kernscope" && o.backend != "nsys" && o.backend != "ncu") {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --backend must be kernscope, nsys or ncu"});
  }
  if (o.backend != "kernscope" && (o.paused || o.every_s > 0 || o.every_steps > 0 || o.keep_last_steps > 0)) {
    return fail(Error{ErrorCode::kInvalidArgument, "record: live capture (--paused, --every, --every-steps, --keep-last-steps) needs --backend kernscope"});
  }
  if (o.backend != "ncu" && (!o.ncu_kernels.empty() || o.ncu_launch_skip != 0 || o.ncu_launch_count != 0 || !o.ncu_nvtx_include.empty())) {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --ncu-kernels, --ncu-launch-skip, --ncu-launch-count and --ncu-nvtx need --backend ncu"});
  }
  if (o.ncu_launch_skip < 0 || o.ncu_launch_count < 0) {
    return fail(Error{ErrorCode::kInvalidArgument, "record: --ncu-launch-skip and --ncu-launch-count must be 0 or more"});
  }
  if (find_program(o.command[0]).empty()) return fail(Error{ErrorCode::kNotFound, "record: command not found: " + o.command[0]});
  const std::filesystem::path out_dir = std::filesystem::absolute(o.output).parent_path();
  if (::access(out_dir.c_str(), W_OK) != 0) {
    return fail(Error{ErrorCode::kIo, "record: cannot write to " + out_dir.string() + " (output " + o.output + ")"});
  }
  // --gemm-shapes: cuBLAS and cuBLASLt log every GEMM's shapes beside the output.
  std::vector<std::pair<std::string, std::string>> shape_env;
  if (o.gemm_shapes) {
    const auto logs = readers::cublas_log::gemm_shape_logs(std::filesystem::absolute(o.output).string());
    shape_env = logs.env;
    std::cerr << "kernscope: record: GEMM shapes logged to " << logs.cublaslt_log << " (cuBLASLt, %i: process id) and "
              << logs.cublas_log << " (cuBLAS API); pass one to kernscope roofline --cublas-log\n";
  }
  if (o.backend == "nsys") return record_with_nsys(o, shape_env);
  if (o.backend == "ncu") return record_with_ncu(o, shape_env);

  const std::string tracer = find_tracer_library();
  if (tracer.empty()) {
    return fail(Error{ErrorCode::kNotFound, "record: libkernscope_tracer.so not found beside kernscope (set KERNSCOPE_TRACER_LIB)"});
  }
  char list_template[] = "/tmp/kernscope-files-XXXXXX";
  const int list_fd = ::mkstemp(list_template);
  if (list_fd < 0) return fail(Error{ErrorCode::kIo, "record: cannot create a temporary file"});
  ::close(list_fd);
  const std::string file_list = list_template;

  std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_INJECTION64_PATH", tracer},
      {tracer::env::kOutput, std::filesystem::absolute(o.output).string()},
      {tracer::env::kApi, o.api},
      {tracer::env::kCudaGraphTrace, o.graph_trace},
      {tracer::env::kNvmlIntervalMs, std::to_string(o.nvml_interval_ms)},
      {tracer::env::kThreadCpuUs, std::to_string(o.thread_cpu_us)},
      {tracer::env::kNvmlPcie, o.nvml_pcie ? "1" : "0"},
      {tracer::env::kHwTrace, o.hw_trace ? "1" : "0"},
      {tracer::env::kCaptureRange, o.capture_range},
      {tracer::env::kCaptureRangeEnd, o.capture_range_end},
      {tracer::env::kDelayS, std::to_string(o.delay_s)},
      {tracer::env::kDurationS, std::to_string(o.duration_s)},
      {tracer::env::kBufferMb, std::to_string(o.buffer_mb)},
      {tracer::env::kRecord, o.record},
      {tracer::env::kFileList, file_list},
      {tracer::env::kSample, o.sample}};
  // Live capture: every process of the launch listens in one session folder for `kernscope capture`.
  const bool live = o.paused || o.every_s > 0 || o.every_steps > 0 || o.keep_last_steps > 0;
  const std::string session = o.session.empty() ? std::to_string(::getpid()) : o.session;
  if (live) {
    env.insert(env.end(), {{tracer::env::kPaused, o.paused ? "1" : "0"},
                           {tracer::env::kSession, session},
                           {tracer::env::kEveryS, std::to_string(o.every_s)},
                           {tracer::env::kForS, std::to_string(o.for_s)},
                           {tracer::env::kEverySteps, std::to_string(o.every_steps)},
                           {tracer::env::kSteps, std::to_string(o.steps)},
                           {tracer::env::kKeepLastSteps, std::to_string(o.keep_last_steps)},
                           {tracer::env::kWhen, o.when},
                           {tracer::env::kStepRange, o.step_range},
                           {tracer::env::kTailMb, std::to_string(o.tail_mb)}});
    if (!o.between_windows.empty()) env.push_back({tracer::env::kPausedDetach, o.between_windows == "attached" ? "0" : "1"});
  } else if (!o.when.empty() || !o.step_range.empty() || o.for_s > 0 || o.steps > 0 || !o.session.empty() ||
             !o.between_windows.empty()) {
    std::filesystem::remove(file_list);
    return fail(Error{ErrorCode::kInvalidArgument,
                      "record: --when, --step-range, --for, --steps, --session and --between-windows belong to live capture "
                      "(--paused, --every, --every-steps or --keep-last-steps)"});
  }
  env.insert(env.end(), shape_env.begin(), shape_env.end());
  // The injected library parses these variables; parsing them here first with the same code turns
  // a bad option into one line and exit code 2 before the program starts, not a silent no-trace.
  const auto lookup = [&env](const char* name) -> const char* {
    for (const auto& [key, value] : env) {
      if (key == name) return value.c_str();
    }
    return nullptr;
  };
  auto config = tracer::config_from_env(lookup);
  if (!config) {
    std::filesystem::remove(file_list);
    return fail(Error{ErrorCode::kInvalidArgument, "record: " + config.error().message});
  }
  // Modes that need CUPTI between windows keep it attached whatever was asked: said, with the
  // tracer's own reason (the trace's paused_cupti says it again).
  if (const auto choice = tracer::choose_paused_detach(*config); o.between_windows == "detached" && !choice.detach) {
    std::fprintf(stderr, "kernscope: record: note: --between-windows detached not taken: %s\n", choice.why.c_str());
  }
  const std::string session_folder = tracer::session_dir(session, [](const char* n) { return std::getenv(n); });
  if (live) {
    // The session's folder is removed when the launch ends: its name must be a plain one, it must
    // not be another launch's, and each process's socket path must fit a Unix socket's.
    if (auto r = tracer::check_session_name(session); !r) {
      std::filesystem::remove(file_list);
      return fail(Error{ErrorCode::kInvalidArgument, "record: --session: " + r.error().message});
    }
    if (!tracer::session_pids(session_folder).empty()) {
      std::filesystem::remove(file_list);
      return fail(Error{ErrorCode::kInvalidArgument, "record: session " + session + " is in use (" + session_folder +
                                                         " holds sockets; a killed launch leaves them: remove the folder)"});
    }
    if (tracer::control_socket_path(session_folder, 4194304).size() > tracer::kMaxSocketPath) {
      std::filesystem::remove(file_list);
      return fail(Error{ErrorCode::kInvalidArgument, "record: the session folder " + session_folder +
                                                         " is too long for a socket path: set KERNSCOPE_RUNTIME_DIR to a shorter folder"});
    }
    std::cerr << "kernscope: record: " << config->live.describe() << "; session " << session << " (" << session_folder
              << "): kernscope capture start|stop|status " << session << ", kernscope capture window " << session
              << " --duration 2s" << (config->step_range.empty() ? "" : " | --steps 20") << "\n";
    // Whole-graph records cannot be switched on once graphs exist (a program crashed), so they stay
    // on while paused, and CUPTI then handles every eager launch too (bench/RESULTS.md: +7 to +10 %
    // TPOT on an eager decode, paused). Said once, where it costs.
    if (o.graph_trace == "graph") {
      std::cerr << "kernscope: record: --cuda-graph-trace graph keeps whole-graph records on while paused; eager launches "
                   "then cost more (about +8 % on an eager PyTorch decode); with the default, node, paused measured about 1 %\n";
    }
  }
  // NVTX reaches CUPTI when NVTX_INJECTION64_PATH names it; the tracer corrects the path to the
  // CUPTI copy it is bound to when CUDA starts (see injection.cpp).
  if (const std::string cupti = find_cupti_library(); !cupti.empty()) env.emplace_back("NVTX_INJECTION64_PATH", cupti);
  // Python processes get a sitecustomize that lets the tracer finish before os._exit (how
  // multiprocessing workers end); it chains to any sitecustomize it shadows.
  char hook_template[] = "/tmp/kernscope-python-XXXXXX";
  const char* hook_dir = ::mkdtemp(hook_template);
  if (hook_dir) {
    std::ofstream(std::string(hook_dir) + "/sitecustomize.py") << kPythonHook;
    std::ofstream(std::string(hook_dir) + "/kernscope_host.py") << kPythonHostModule;
    const char* old = std::getenv("PYTHONPATH");
    env.emplace_back("PYTHONPATH", std::string(hook_dir) + (old && *old ? ":" + std::string(old) : ""));
    env.emplace_back(tracer::env::kTracerPath, tracer);
  }
  // Children started by the program (fork/exec, spawn) inherit the environment and are traced
  // too, each into its own file: the output pattern should then hold %p.
  const int status = run_child(o.command, env);
  if (hook_dir) std::filesystem::remove_all(hook_dir);
  // Sockets of processes that were killed stay behind: the session ends with the launch. Only the
  // sockets and then the folder, if empty, are removed: never anything else that might be there.
  if (live) {
    std::error_code ec;
    for (const auto pid : tracer::session_pids(session_folder)) std::filesystem::remove(tracer::control_socket_path(session_folder, pid), ec);
    std::filesystem::remove(session_folder, ec);
  }

  std::ifstream list(file_list);
  const std::string listed((std::istreambuf_iterator<char>(list)), std::istreambuf_iterator<char>());
  std::filesystem::remove(file_list);
  const auto processes = tracer::parse_file_list(listed);
  std::size_t files = 0;
  for (const auto& p : processes) files += p.state != tracer::ListedProcess::State::kEmpty;
  if (!processes.empty()) {
    std::cerr << "kernscope: record: " << processes.size() << " traced process(es), " << files << " trace file(s):\n";
    for (const auto& p : processes) summarize(p);
  }
  if (files == 0) {
    std::cerr << "kernscope: record: no trace written: "
              << (processes.empty() ? "the program did not initialize CUDA (no GPU, no driver, no CUDA calls) or the tracer "
                                      "could not start (see its messages above)"
                                    : "no process recorded GPU activity or CUDA calls")
              << "\n";
    return status != 0 ? status : kExitBadInput;
  }
  return status;
}

}  // namespace

Command add_record(CLI::App& app) {
  auto o = std::make_shared<RecordOptions>();
  auto* cmd = app.add_subcommand("record", "Trace a CUDA program (C++, Rust, Python): kernscope record [options] -- CMD ARGS...");
  cmd->add_option("-o,--output", o->output, "output file; %p pid, %h host, %n sequence, %q{VAR} environment")->capture_default_str();
  cmd->add_option("--api", o->api, "runtime/driver calls recorded: default (launch, copy, alloc, sync) or all")->capture_default_str();
  cmd->add_option("--cuda-graph-trace", o->graph_trace,
                  "node: every kernel inside a CUDA graph; graph: one record per graph execution (far cheaper "
                  "for graphs of many small kernels, but on for the whole run, paused included, where it slows "
                  "every eager launch: +7 to +10 % on an eager PyTorch decode)")
      ->capture_default_str();
  cmd->add_option("--nvml-interval", o->nvml_interval_ms, "GPU sampling period in ms (0: off)")->capture_default_str();
  cmd->add_option("--thread-cpu-interval", o->thread_cpu_us,
                  "how often, in us, the CUDA-calling threads' CPU clocks are read, so that host work between calls that nothing "
                  "records counts as host, not idle (0: off)")
      ->capture_default_str()->check(CLI::Range(0, 1'000'000));
  cmd->add_flag("--nvml-pcie", o->nvml_pcie, "also sample PCIe throughput (NVML takes 20 ms per query)");
  cmd->add_flag("--hw-trace", o->hw_trace,
                "kernel timestamps from the GPU's hardware events (CUPTI's HW trace, Blackwell GPUs only; elsewhere "
                "the trace says why and the usual timestamps are taken)");
  cmd->add_option("--capture-range", o->capture_range, "none, cudaProfilerApi or nvtx:NAME[@DOMAIN]")->capture_default_str();
  cmd->add_option("--capture-range-end", o->capture_range_end, "stop, repeat or repeat:N")->capture_default_str();
  cmd->add_option("--delay", o->delay_s, "seconds before recording starts")->capture_default_str();
  cmd->add_option("--duration", o->duration_s, "seconds of recording (0: to the end)")->capture_default_str();
  cmd->add_option("--backend", o->backend,
                  "kernscope (CUPTI injection), nsys (runs nsys profile with the right flags) or ncu (Nsight Compute with "
                  "the roofline sections and counters, --clock-control none; writes OUTPUT.ncu-rep, OUTPUT_raw.csv and "
                  "OUTPUT_details.csv for kernscope roofline --ncu)")
      ->capture_default_str();
  cmd->add_flag("--gemm-shapes", o->gemm_shapes,
                "log cuBLAS/cuBLASLt GEMM shapes (CUBLASLT_LOG_LEVEL=2, CUBLAS_LOGINFO_DBG=1) to files beside the output, "
                "for kernscope roofline --cublas-log");
  cmd->add_option("--ncu-kernels", o->ncu_kernels, "--backend ncu: profile kernels whose name matches this regex (repeatable)");
  cmd->add_option("--ncu-launch-skip", o->ncu_launch_skip, "--backend ncu: matching launches to skip first")->capture_default_str();
  cmd->add_option("--ncu-launch-count", o->ncu_launch_count, "--backend ncu: matching launches to profile (0: all)")->capture_default_str();
  cmd->add_option("--ncu-nvtx", o->ncu_nvtx_include, "--backend ncu: profile inside this NVTX range (ncu's --nvtx-include, e.g. decode_step/)");
  cmd->add_option("--record", o->record, "record only these kinds (comma-separated: kernel, memcpy, memset, runtime, driver, sync, nvtx, overhead; or all); "
                  "default every kind but sync: CUPTI's synchronization records slowed a PyTorch program's launches "
                  "(sync calls are still recorded as API calls)");
  cmd->add_option("--sample", o->sample,
                  "none, cpu or cpu:HZ (default 100): stacks of every thread sampled from inside the process (wall "
                  "clock), for `kernscope host`: Python frames in Python programs; native frames in other programs, "
                  "from their first CUDA call")
      ->capture_default_str();
  cmd->add_flag("--paused", o->paused,
                "live capture: run with the tracer loaded but recording off; windows are opened from another shell with "
                "kernscope capture start|stop|window (every process of the launch, workers included). CUPTI is "
                "detached between windows (with --every/--for too), unless steps are watched (--step-range, "
                "--every-steps), --cuda-graph-trace graph or --hw-trace, or --between-windows attached: then it stays "
                "attached (about 1 % of an eager decode). Detached windows record every API call");
  cmd->add_option("--between-windows", o->between_windows,
                  "live capture: detached (the default: CUPTI detached between windows, no activity or callback of it "
                  "then, NVTX calls still pass its handlers; but a window records every CUDA API call: on an eager "
                  "decode a step inside a window +15..31 %, a window's median step +44..46 %) or attached (CUPTI stays: "
                  "about +1 % between windows, as measured with CUPTI alone; a window costs what record's defaults "
                  "do, +5..10 % a step)")
      ->check(CLI::IsMember({"detached", "attached"}));
  cmd->add_option("--session", o->session, "live capture: the session's name for kernscope capture (default: this record's pid)");
  cmd->add_option("--every", o->every_s, "live capture: open a window every this many seconds (with --for)");
  cmd->add_option("--for", o->for_s, "live capture: each sampled window lasts this many seconds");
  cmd->add_option("--every-steps", o->every_steps, "live capture: open a window every this many steps (with --steps)");
  cmd->add_option("--steps", o->steps, "live capture: each sampled window holds this many whole steps");
  cmd->add_option("--keep-last-steps", o->keep_last_steps,
                  "tail capture: keep the last N steps in memory and write them when a step is slow (with --when)");
  cmd->add_option("--when", o->when, "tail capture: 'step > 2x p50' (factor of the median step) or 'step > 50ms'");
  cmd->add_option("--step-range", o->step_range,
                  "live capture: the NVTX range that is a step (NAME or NAME@DOMAIN), or auto (engines' and PyTorch's step "
                  "names, the default for --every-steps and --keep-last-steps)");
  cmd->add_option("--tail-mb", o->tail_mb, "tail capture: memory bound on the held records (MiB)")->capture_default_str();
  cmd->add_option("--buffer-mb", o->buffer_mb, "size of each CUPTI buffer (32 are preallocated)")->capture_default_str();
  cmd->add_option("command", o->command, "the program and its arguments (after --)")->required(false);
  cmd->positionals_at_end(true);
  // Which tracer --backend kernscope would inject, so that an install can be checked without a GPU
  // (the wheel's install test reads it); looked up only when the help is printed.
  cmd->footer([] {
    const std::string tracer = find_tracer_library();
    return "Tracer (--backend kernscope): " +
           (tracer.empty() ? std::string("not found beside this kernscope (set KERNSCOPE_TRACER_LIB)") : tracer);
  });
  return [o] { return run_record(*o); };
}

}  // namespace kernscope::cli
