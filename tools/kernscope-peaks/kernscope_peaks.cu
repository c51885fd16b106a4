// kernscope-peaks: what this GPU achieves, measured, written as a peaks file for `--peaks`
// (data/gpu_peaks.tsv's layout: one row for this device).
//
//   HBM read bandwidth  a streaming kernel reading a buffer far larger than L2 (16-byte loads,
//                       grid-stride), best of several runs
//   HBM copy bandwidth  a streaming copy kernel; bytes read + bytes written over time (the way
//                       ncu's dram__bytes counts a copy)
//   BF16 / FP8 GEMM     cuBLASLt on large square matrices (FP8: E4M3 inputs, BF16 output, the
//                       TN layout FP8 needs), 2 N^3 FLOPs over the best time
//
// Each measurement samples the SM and memory clocks through NVML while it runs (libnvidia-ml is
// opened at run time, as the tracer does), so the figures say at which clocks they were taken.
// The bandwidth row uses the read bandwidth (what decode GEMVs do); copy goes in a comment.
// Errors: one line on stderr, exit code 2.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "kernscope peaks: %s\n", why.c_str());
  std::exit(2);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(std::string(what) + ": cuBLASLt status " + std::to_string(static_cast<int>(s)));
}

// ---- NVML, opened at run time (signatures from nvml.h; 0 is NVML_SUCCESS) ----
struct Nvml {
  void* lib = nullptr;
  void* device = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;      // nvmlDeviceGetClockInfo: 1 SM, 2 memory (MHz)
  int (*max_clock)(void*, int, unsigned*) = nullptr;  // nvmlDeviceGetMaxClockInfo
  std::string why;

  bool open(const char* pci_bus_id) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "libnvidia-ml.so.1 not found";
      return false;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    if (!init || !by_bus || !clock || !max_clock) {
      why = "NVML lacks an entry point";
      return false;
    }
    if (init() != 0) {
      why = "nvmlInit failed";
      return false;
    }
    if (by_bus(pci_bus_id, &device) != 0) {
      why = std::string("no NVML device at ") + pci_bus_id;
      return false;
    }
    return true;
  }
  unsigned read(int type) const {
    unsigned mhz = 0;
    return device && clock(device, type, &mhz) == 0 ? mhz : 0;
  }
  unsigned read_max(int type) const {
    unsigned mhz = 0;
    return device && max_clock(device, type, &mhz) == 0 ? mhz : 0;
  }
};

// SM and memory clocks sampled every 2 ms on a thread while a measurement runs.
class ClockSampler {
 public:
  explicit ClockSampler(const Nvml& nvml) : nvml_(nvml) {}
  void start() {
    running_ = true;
    sm_.clear();
    mem_.clear();
    thread_ = std::thread([this] {
      while (running_) {
        const unsigned sm = nvml_.read(1), mem = nvml_.read(2);
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (sm) sm_.push_back(sm);
          if (mem) mem_.push_back(mem);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  // "SM 1755-1980 MHz (median 1980), memory 2619 MHz", or "" without NVML samples.
  std::string describe() const {
    if (sm_.empty()) return "";
    auto sorted = sm_;
    std::sort(sorted.begin(), sorted.end());
    std::ostringstream out;
    out << "SM " << sorted.front();
    if (sorted.back() != sorted.front()) out << "-" << sorted.back();
    out << " MHz (median " << sorted[sorted.size() / 2] << ")";
    if (!mem_.empty()) out << ", memory " << *std::max_element(mem_.begin(), mem_.end()) << " MHz";
    return out.str();
  }

 private:
  const Nvml& nvml_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<unsigned> sm_, mem_;
};

// ---- kernels ----
__global__ void fill(std::uint32_t* p, std::size_t words, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    // Keep every byte a small finite value for any element type: bf16/fp8 read these as
    // ordinary numbers, never NaN or Inf (exponent bits kept low).
    p[i] = x & 0x3b3b3b3bu;
  }
}

// Reads every 16-byte vector once; the sum is written only when it equals a value it cannot take
// in practice, which keeps the loads alive without writing memory.
__global__ void read_stream(const int4* __restrict__ in, std::size_t n, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;
}

__global__ void copy_stream(const int4* __restrict__ in, int4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

struct Timing {
  double best_ms = 0;
  std::string clocks;
};

// Runs `work` once to warm up, then `repeats` times, each between two events; the best time.
Timing best_of(int repeats, const Nvml& nvml, const std::function<void()>& work) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  work();
  check(cudaDeviceSynchronize(), "warm-up");
  ClockSampler sampler(nvml);
  sampler.start();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    check(cudaEventRecord(a), "cudaEventRecord");
    work();
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    check(cudaGetLastError(), "kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    best = std::min(best, static_cast<double>(ms));
  }
  sampler.stop();
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return Timing{best, sampler.describe()};
}

struct Options {
  std::string output;           // empty: stdout
  int device = 0;
  std::size_t buffer_mib = 0;   // 0: 1/4 of free memory, at most 4 GiB
  int gemm_n = 8192;
  int repeats = 20;
};

Options parse(int argc, char** argv) {
  Options o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) fail(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto number = [&](const std::string& s, const char* what, long lo, long hi) {
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end || v < lo || v > hi) fail(std::string(what) + " must be a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" || a == "--output") {
      o.output = value(i);
    } else if (a == "--device") {
      o.device = static_cast<int>(number(value(i), "--device", 0, 1023));
    } else if (a == "--buffer-mib") {
      o.buffer_mib = static_cast<std::size_t>(number(value(i), "--buffer-mib", 64, 1 << 20));
    } else if (a == "--gemm-n") {
      o.gemm_n = static_cast<int>(number(value(i), "--gemm-n", 256, 32768));
      if (o.gemm_n % 16) fail("--gemm-n must be a multiple of 16");
    } else if (a == "--repeats") {
      o.repeats = static_cast<int>(number(value(i), "--repeats", 1, 1000));
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "kernscope peaks [-o FILE] [--device N] [--buffer-mib N] [--gemm-n N] [--repeats N]\n"
          "Measures this GPU's HBM read and copy bandwidth and BF16/FP8 cuBLASLt GEMM rates at the clocks\n"
          "NVML reports, and writes a peaks file (data/gpu_peaks.tsv's layout) for --peaks.\n");
      std::exit(0);
    } else {
      fail("unknown option '" + a + "' (see --help)");
    }
  }
  return o;
}

struct Gemm {
  double tflops = 0;
  Timing timing;
  std::string skipped;  // why it was not measured
};

// D = A^T B on N x N matrices through cuBLASLt, the best of `repeats`.
Gemm gemm(cublasLtHandle_t lt, cudaDataType_t in_type, int n, int repeats, const Nvml& nvml) {
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  const std::size_t in_bytes = elems * (in_type == CUDA_R_16BF ? 2 : 1);
  void *a = nullptr, *b = nullptr, *d = nullptr, *workspace = nullptr;
  const std::size_t workspace_bytes = 64u << 20;
  check(cudaMalloc(&a, in_bytes), "cudaMalloc A");
  check(cudaMalloc(&b, in_bytes), "cudaMalloc B");
  check(cudaMalloc(&d, elems * 2), "cudaMalloc D");
  check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc workspace");
  fill<<<1024, 256>>>(static_cast<std::uint32_t*>(a), in_bytes / 4, 1);
  fill<<<1024, 256>>>(static_cast<std::uint32_t*>(b), in_bytes / 4, 2);

  cublasLtMatmulDesc_t op;
  check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;  // TN: what FP8 requires
  check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa), "transa");
  check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb), "transb");
  cublasLtMatrixLayout_t la, lb, ld;
  check(cublasLtMatrixLayoutCreate(&la, in_type, n, n, n), "layout A");
  check(cublasLtMatrixLayoutCreate(&lb, in_type, n, n, n), "layout B");
  check(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n), "layout D");
  cublasLtMatmulPreference_t pref;
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                             sizeof workspace_bytes),
        "workspace preference");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  Gemm result;
  const auto status = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    result.skipped = "cuBLASLt has no kernel for it on this GPU";
  } else {
    const float alpha = 1.0f, beta = 0.0f;
    result.timing = best_of(repeats, nvml, [&] {
      check(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo, workspace,
                           workspace_bytes, nullptr),
            "cublasLtMatmul");
    });
    result.tflops = 2.0 * n * static_cast<double>(n) * n / (result.timing.best_ms * 1e-3) / 1e12;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
  cudaFree(workspace);
  return result;
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

// The device name's words, as the peaks table's `match` column wants them (letters and digits).
std::string match_words(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : ' ';
  std::istringstream words(out);
  std::string word, joined;
  while (words >> word) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) fail("no CUDA device");
  if (o.device >= count) fail("--device " + std::to_string(o.device) + ": there are " + std::to_string(count) + " devices");
  check(cudaSetDevice(o.device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, o.device), "cudaGetDeviceProperties");
  int mem_clock_khz = 0, bus_bits = 0, sm_clock_khz = 0;
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, o.device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, o.device);
  cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, o.device);
  // Peak DRAM bandwidth from the properties: 2 (double data rate) x memory clock x bus width.
  const double theoretical_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  char bus_id[64] = {0};
  cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, o.device);

  Nvml nvml;
  const bool have_nvml = nvml.open(bus_id);
  if (!have_nvml) std::fprintf(stderr, "kernscope peaks: clocks not recorded (%s)\n", nvml.why.c_str());

  // Bandwidth buffers: far larger than L2, so the figures are DRAM's.
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  std::size_t buffer = o.buffer_mib ? o.buffer_mib << 20 : std::min<std::size_t>(free_bytes / 4, std::size_t{4} << 30);
  buffer &= ~std::size_t{0xffff};
  if (2 * buffer > free_bytes) fail("not enough free device memory for two " + std::to_string(buffer >> 20) + " MiB buffers");
  if (prop.l2CacheSize > 0 && buffer < 8 * static_cast<std::size_t>(prop.l2CacheSize)) {
    std::fprintf(stderr, "kernscope peaks: note: buffers of %zu MiB are less than 8x L2 (%d MiB); bandwidth may include L2 hits\n",
                 buffer >> 20, prop.l2CacheSize >> 20);
  }
  int4 *src = nullptr, *dst = nullptr;
  int* sink = nullptr;
  check(cudaMalloc(&src, buffer), "cudaMalloc");
  check(cudaMalloc(&dst, buffer), "cudaMalloc");
  check(cudaMalloc(&sink, sizeof(int)), "cudaMalloc");
  fill<<<4096, 256>>>(reinterpret_cast<std::uint32_t*>(src), buffer / 4, 7);
  check(cudaDeviceSynchronize(), "fill");
  const std::size_t vectors = buffer / sizeof(int4);
  const int blocks = prop.multiProcessorCount * 8, threads = 512;
  const Timing read = best_of(o.repeats, nvml, [&] { read_stream<<<blocks, threads>>>(src, vectors, sink); });
  const Timing copy = best_of(o.repeats, nvml, [&] { copy_stream<<<blocks, threads>>>(src, dst, vectors); });
  const double read_gbs = buffer / (read.best_ms * 1e-3) / 1e9;
  const double copy_gbs = 2.0 * buffer / (copy.best_ms * 1e-3) / 1e9;
  cudaFree(src);
  cudaFree(dst);
  cudaFree(sink);

  cublasLtHandle_t lt;
  check(cublasLtCreate(&lt), "cublasLtCreate");
  const Gemm bf16 = gemm(lt, CUDA_R_16BF, o.gemm_n, o.repeats, nvml);
  Gemm fp8;
  if (prop.major * 10 + prop.minor >= 89) {
    fp8 = gemm(lt, CUDA_R_8F_E4M3, o.gemm_n, o.repeats, nvml);
  } else {
    fp8.skipped = "FP8 tensor cores need compute capability 8.9 or later";
  }
  cublasLtDestroy(lt);

  // The peaks file: comments with everything measured, then data/gpu_peaks.tsv's header and row.
  std::ostringstream out;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  int cuda_runtime = 0, cuda_driver = 0;
  cudaRuntimeGetVersion(&cuda_runtime);
  cudaDriverGetVersion(&cuda_driver);
  const double memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  out << "# Measured by kernscope peaks on " << date << ": " << prop.name << " (" << prop.multiProcessorCount
      << " SMs, CC " << prop.major << "." << prop.minor << ", " << fixed(memory_gib, 1) << " GiB, bus " << bus_id
      << "), CUDA runtime " << cuda_runtime << ", driver " << cuda_driver << ", cuBLASLt " << cublasLtGetVersion() << ".\n";
  out << "# Device properties: SM clock " << sm_clock_khz / 1000 << " MHz, memory clock " << mem_clock_khz / 1000
      << " MHz x " << bus_bits << "-bit bus = " << fixed(theoretical_gbs, 0) << " GB/s theoretical";
  if (have_nvml) out << "; NVML max clocks SM " << nvml.read_max(1) << " MHz, memory " << nvml.read_max(2) << " MHz";
  out << ".\n";
  auto clocks = [](const Timing& t) { return t.clocks.empty() ? std::string("clocks not sampled") : t.clocks; };
  out << "# HBM read " << fixed(read_gbs, 0) << " GB/s (" << (buffer >> 20) << " MiB, best of " << o.repeats << ", "
      << clocks(read) << ")\n";
  out << "# HBM copy " << fixed(copy_gbs, 0) << " GB/s, read + write counted (" << clocks(copy) << ")\n";
  auto gemm_line = [&](const char* what, const Gemm& g) {
    out << "# " << what << " GEMM " << o.gemm_n << "^3: ";
    if (!g.skipped.empty()) {
      out << "not measured (" << g.skipped << ")\n";
    } else {
      out << fixed(g.tflops, 1) << " TFLOP/s (" << fixed(g.timing.best_ms, 3) << " ms, " << clocks(g.timing) << ")\n";
    }
  };
  gemm_line("BF16 cuBLASLt", bf16);
  gemm_line("FP8 E4M3 cuBLASLt", fp8);
  out << "# Achieved figures, not datasheet peaks: \"-\" marks what was not measured.\n";
  out << "name\tmatch\tsm_count\tmemory_gb\tbandwidth_gbs\tfp64\tfp32\ttf32\tfp16_bf16\tfp8\tint8\tfp4\tsource\n";
  out << prop.name << " (measured)\t" << match_words(prop.name) << '\t' << prop.multiProcessorCount << '\t'
      << fixed(memory_gib, 1) << '\t' << fixed(read_gbs, 0) << "\t-\t-\t-\t"
      << (bf16.skipped.empty() ? fixed(bf16.tflops, 1) : "-") << '\t' << (fp8.skipped.empty() ? fixed(fp8.tflops, 1) : "-")
      << "\t-\t-\tkernscope peaks " << date << ": HBM read kernel, cuBLASLt " << o.gemm_n << "^3 GEMMs, best of "
      << o.repeats << (read.clocks.empty() ? "" : ", " + read.clocks) << '\n';

  if (o.output.empty()) {
    std::cout << out.str();
  } else {
    std::ofstream file(o.output);
    file << out.str();
    if (!file) fail("cannot write '" + o.output + "'");
    std::fprintf(stderr, "kernscope peaks: wrote %s\n", o.output.c_str());
  }
  return 0;
}
