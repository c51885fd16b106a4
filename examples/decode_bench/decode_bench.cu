// decode_bench: a Llama-shaped decode loop in plain CUDA + cuBLAS, the reference workload for
// kernscope's tracer (no framework, so every kernel is known). Per layer: RMSNorm, q/k/v
// projections, RoPE, KV-cache append, attention over the cache, o projection, residual, RMSNorm,
// gate/up projections, SiLU x gate, down projection, residual; then the LM head and argmax.
// Batch 1, bf16 weights and activations, fp32 accumulation. Prints TTFT, TPOT and the bytes each
// projection reads per decode step, so bandwidth figures can be checked against it.
//
//   decode_bench [--hidden 4096] [--ffn 14336] [--heads 32] [--kv-heads 8] [--layers 8]
//                [--vocab 32000] [--prompt-len 512] [--output-len 64] [--warmup 1] [--iters 3]
//                [--cuda-graph on|off] [--cuda-profiler-capture]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "decode_bench: %s failed: %s\n", #call, cudaGetErrorString(e_));         \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)
#define CHECK_BLAS(call)                                                                            \
  do {                                                                                              \
    cublasStatus_t s_ = (call);                                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                              \
      std::fprintf(stderr, "decode_bench: %s failed: status %d\n", #call, static_cast<int>(s_));    \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

using bf16 = __nv_bfloat16;

struct Config {
  int hidden = 4096, ffn = 14336, heads = 32, kv_heads = 8, layers = 8, vocab = 32000;
  int prompt_len = 512, output_len = 64, warmup = 1, iters = 3;
  bool cuda_graph = true, profiler_capture = false;
  int head_dim() const { return hidden / heads; }
  int kv_dim() const { return kv_heads * head_dim(); }
  int max_len() const { return prompt_len + output_len + 1; }
};

// Deterministic pseudo-random init, small values so activations stay finite.
__global__ void init_kernel(bf16* p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xFFFF) / 65535.0f - 0.5f) * scale);
  }
}

// One block per row: y = x / rms(x) * w.
__global__ void rmsnorm_kernel(const bf16* x, const bf16* w, bf16* y, int n) {
  const bf16* row = x + size_t(blockIdx.x) * n;
  float sum = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float v = __bfloat162float(row[i]);
    sum += v * v;
  }
  __shared__ float partial[32];
  for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffff, sum, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0;
    for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffff, sum, o);
    if (threadIdx.x == 0) partial[0] = rsqrtf(sum / n + 1e-6f);
  }
  __syncthreads();
  const float inv = partial[0];
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    y[size_t(blockIdx.x) * n + i] = __float2bfloat16(__bfloat162float(row[i]) * inv * __bfloat162float(w[i]));
  }
}

// Rotary embedding on q and k of `rows` tokens starting at position pos0 (+ *pos_offset on device).
__global__ void rope_kernel(bf16* q, bf16* k, int rows, int q_heads, int k_heads, int head_dim, int pos0,
                            const int* pos_offset) {
  const int row = blockIdx.x;
  const int pos = pos0 + row + (pos_offset ? *pos_offset : 0);
  const int half = head_dim / 2;
  for (int idx = threadIdx.x; idx < (q_heads + k_heads) * half; idx += blockDim.x) {
    const int head = idx / half, i = idx % half;
    bf16* base = head < q_heads ? q + (size_t(row) * q_heads + head) * head_dim
                                : k + (size_t(row) * k_heads + head - q_heads) * head_dim;
    const float freq = powf(10000.0f, -2.0f * i / head_dim);
    float s, c;
    sincosf(pos * freq, &s, &c);
    const float a = __bfloat162float(base[i]), b = __bfloat162float(base[i + half]);
    base[i] = __float2bfloat16(a * c - b * s);
    base[i + half] = __float2bfloat16(a * s + b * c);
  }
}

// Copies `rows` new k/v rows into the cache at position pos0 (+ *pos_offset).
__global__ void kv_append_kernel(const bf16* k, const bf16* v, bf16* k_cache, bf16* v_cache, int rows, int kv_dim,
                                 int pos0, const int* pos_offset) {
  const int pos = pos0 + (pos_offset ? *pos_offset : 0);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows * kv_dim; i += gridDim.x * blockDim.x) {
    k_cache[size_t(pos) * kv_dim + i] = k[i];
    v_cache[size_t(pos) * kv_dim + i] = v[i];
  }
}

// Attention for `rows` queries at positions pos0.. (+ *pos_offset), causal over the cache.
// One block per (query, head); scores in shared memory (max_len floats).
__global__ void attention_kernel(const bf16* q, const bf16* k_cache, const bf16* v_cache, bf16* out, int heads,
                                 int kv_heads, int head_dim, int pos0, const int* pos_offset) {
  extern __shared__ float scores[];
  const int row = blockIdx.x / heads, head = blockIdx.x % heads;
  const int kv_head = head / (heads / kv_heads);
  const int pos = pos0 + row + (pos_offset ? *pos_offset : 0);
  const int kv_dim = kv_heads * head_dim;
  const bf16* qh = q + (size_t(row) * heads + head) * head_dim;
  const float scale = rsqrtf(static_cast<float>(head_dim));
  for (int t = threadIdx.x; t <= pos; t += blockDim.x) {
    const bf16* kt = k_cache + size_t(t) * kv_dim + kv_head * head_dim;
    float dot = 0;
    for (int d = 0; d < head_dim; ++d) dot += __bfloat162float(qh[d]) * __bfloat162float(kt[d]);
    scores[t] = dot * scale;
  }
  __syncthreads();
  __shared__ float max_score, sum;
  if (threadIdx.x == 0) {
    float m = -1e30f;
    for (int t = 0; t <= pos; ++t) m = fmaxf(m, scores[t]);
    float s = 0;
    for (int t = 0; t <= pos; ++t) s += __expf(scores[t] - m);
    max_score = m;
    sum = s;
  }
  __syncthreads();
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float acc = 0;
    for (int t = 0; t <= pos; ++t) acc += __expf(scores[t] - max_score) * __bfloat162float(v_cache[size_t(t) * kv_dim + kv_head * head_dim + d]);
    out[(size_t(row) * heads + head) * head_dim + d] = __float2bfloat16(acc / sum);
  }
}

__global__ void silu_mul_kernel(const bf16* gate, const bf16* up, bf16* out, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float g = __bfloat162float(gate[i]);
    out[i] = __float2bfloat16(g / (1.0f + __expf(-g)) * __bfloat162float(up[i]));
  }
}

__global__ void add_kernel(bf16* x, const bf16* y, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    x[i] = __float2bfloat16(__bfloat162float(x[i]) + __bfloat162float(y[i]));
  }
}

// One block: argmax over the logits, then the embedding row of the winner becomes x; pos += 1.
__global__ void argmax_embed_kernel(const bf16* logits, int vocab, const bf16* embedding, bf16* x, int hidden,
                                    int* token, int* pos_offset) {
  __shared__ float best_value[256];
  __shared__ int best_index[256];
  float v = -1e30f;
  int idx = 0;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float l = __bfloat162float(logits[i]);
    if (l > v) {
      v = l;
      idx = i;
    }
  }
  best_value[threadIdx.x] = v;
  best_index[threadIdx.x] = idx;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s && best_value[threadIdx.x + s] > best_value[threadIdx.x]) {
      best_value[threadIdx.x] = best_value[threadIdx.x + s];
      best_index[threadIdx.x] = best_index[threadIdx.x + s];
    }
    __syncthreads();
  }
  const int winner = best_index[0];
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) x[i] = embedding[size_t(winner) * hidden + i];
  if (threadIdx.x == 0) {
    *token = winner;
    *pos_offset += 1;
  }
}

struct Layer {
  bf16 *wq, *wk, *wv, *wo, *wgate, *wup, *wdown, *norm1, *norm2, *k_cache, *v_cache;
};

struct Model {
  Config c;
  std::vector<Layer> layers;
  bf16 *embedding, *final_norm, *lm_head;
  // Activations sized for the prompt (decode uses the first row).
  bf16 *x, *xn, *q, *k, *v, *attn, *o, *gate, *up, *act, *down, *logits;
  int *token, *pos_offset;
};

bf16* alloc_init(size_t n, unsigned seed, float scale) {
  bf16* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(bf16)));
  init_kernel<<<1024, 256>>>(p, n, seed, scale);
  CHECK(cudaGetLastError());
  return p;
}

// y[rows x n_out] = x[rows x n_in] * W^T, W stored [n_out x n_in] row-major (a GEMV when rows = 1).
void linear(cublasHandle_t h, const bf16* x, const bf16* w, bf16* y, int rows, int n_in, int n_out) {
  const float one = 1.0f, zero = 0.0f;
  CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n_out, rows, n_in, &one, w, CUDA_R_16BF, n_in, x, CUDA_R_16BF,
                          n_in, &zero, y, CUDA_R_16BF, n_out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

int blocks_for(size_t n) { return static_cast<int>(std::min<size_t>((n + 255) / 256, 4096)); }

// One forward pass over `rows` tokens at positions pos0.. (+ *pos_offset when decoding).
void forward(Model& m, cublasHandle_t h, cudaStream_t s, int rows, int pos0, const int* pos_offset) {
  const Config& c = m.c;
  const int hd = c.head_dim();
  for (auto& L : m.layers) {
    rmsnorm_kernel<<<rows, 256, 0, s>>>(m.x, L.norm1, m.xn, c.hidden);
    linear(h, m.xn, L.wq, m.q, rows, c.hidden, c.hidden);
    linear(h, m.xn, L.wk, m.k, rows, c.hidden, c.kv_dim());
    linear(h, m.xn, L.wv, m.v, rows, c.hidden, c.kv_dim());
    rope_kernel<<<rows, 256, 0, s>>>(m.q, m.k, rows, c.heads, c.kv_heads, hd, pos0, pos_offset);
    kv_append_kernel<<<blocks_for(size_t(rows) * c.kv_dim()), 256, 0, s>>>(m.k, m.v, L.k_cache, L.v_cache, rows,
                                                                           c.kv_dim(), pos0, pos_offset);
    attention_kernel<<<rows * c.heads, 128, c.max_len() * sizeof(float), s>>>(m.q, L.k_cache, L.v_cache, m.attn,
                                                                              c.heads, c.kv_heads, hd, pos0, pos_offset);
    linear(h, m.attn, L.wo, m.o, rows, c.hidden, c.hidden);
    add_kernel<<<blocks_for(size_t(rows) * c.hidden), 256, 0, s>>>(m.x, m.o, size_t(rows) * c.hidden);
    rmsnorm_kernel<<<rows, 256, 0, s>>>(m.x, L.norm2, m.xn, c.hidden);
    linear(h, m.xn, L.wgate, m.gate, rows, c.hidden, c.ffn);
    linear(h, m.xn, L.wup, m.up, rows, c.hidden, c.ffn);
    silu_mul_kernel<<<blocks_for(size_t(rows) * c.ffn), 256, 0, s>>>(m.gate, m.up, m.act, size_t(rows) * c.ffn);
    linear(h, m.act, L.wdown, m.down, rows, c.ffn, c.hidden);
    add_kernel<<<blocks_for(size_t(rows) * c.hidden), 256, 0, s>>>(m.x, m.down, size_t(rows) * c.hidden);
  }
  // The LM head runs on the last row only.
  const size_t last = size_t(rows - 1) * c.hidden;
  rmsnorm_kernel<<<1, 256, 0, s>>>(m.x + last, m.final_norm, m.xn, c.hidden);
  linear(h, m.xn, m.lm_head, m.logits, 1, c.hidden, c.vocab);
  argmax_embed_kernel<<<1, 256, 0, s>>>(m.logits, c.vocab, m.embedding, m.x, c.hidden, m.token, m.pos_offset);
}

bool parse(int argc, char** argv, Config& c) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](int& out) {
      if (i + 1 >= argc) return false;
      out = std::atoi(argv[++i]);
      return out > 0 || a == "--warmup";
    };
    bool ok = true;
    if (a == "--hidden") ok = next(c.hidden);
    else if (a == "--ffn") ok = next(c.ffn);
    else if (a == "--heads") ok = next(c.heads);
    else if (a == "--kv-heads") ok = next(c.kv_heads);
    else if (a == "--layers") ok = next(c.layers);
    else if (a == "--vocab") ok = next(c.vocab);
    else if (a == "--prompt-len") ok = next(c.prompt_len);
    else if (a == "--output-len") ok = next(c.output_len);
    else if (a == "--warmup") ok = next(c.warmup);
    else if (a == "--iters") ok = next(c.iters);
    else if (a == "--cuda-graph" && i + 1 < argc) c.cuda_graph = std::string(argv[++i]) == "on";
    else if (a == "--cuda-profiler-capture") c.profiler_capture = true;
    else ok = false;
    if (!ok) {
      std::fprintf(stderr, "decode_bench: bad option %s (see the header of decode_bench.cu)\n", a.c_str());
      return false;
    }
  }
  if (c.hidden % c.heads || c.heads % c.kv_heads || c.head_dim() % 2) {
    std::fprintf(stderr, "decode_bench: hidden must divide into heads, heads into kv-heads\n");
    return false;
  }
  return true;
}

int main(int argc, char** argv) {
  Model m;
  if (!parse(argc, argv, m.c)) return 2;
  const Config& c = m.c;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  CHECK_BLAS(cublasSetStream(h, s));
  // A fixed workspace lets cuBLAS calls be captured into a CUDA graph.
  void* workspace = nullptr;
  const size_t workspace_bytes = 32u << 20;
  CHECK(cudaMalloc(&workspace, workspace_bytes));
  CHECK_BLAS(cublasSetWorkspace(h, workspace, workspace_bytes));

  unsigned seed = 1;
  const float ws = 0.05f;
  for (int l = 0; l < c.layers; ++l) {
    Layer L;
    L.wq = alloc_init(size_t(c.hidden) * c.hidden, seed++, ws);
    L.wk = alloc_init(size_t(c.kv_dim()) * c.hidden, seed++, ws);
    L.wv = alloc_init(size_t(c.kv_dim()) * c.hidden, seed++, ws);
    L.wo = alloc_init(size_t(c.hidden) * c.hidden, seed++, ws);
    L.wgate = alloc_init(size_t(c.ffn) * c.hidden, seed++, ws);
    L.wup = alloc_init(size_t(c.ffn) * c.hidden, seed++, ws);
    L.wdown = alloc_init(size_t(c.hidden) * c.ffn, seed++, ws);
    L.norm1 = alloc_init(c.hidden, seed++, 2.0f);
    L.norm2 = alloc_init(c.hidden, seed++, 2.0f);
    L.k_cache = alloc_init(size_t(c.max_len()) * c.kv_dim(), seed++, 0.0f);
    L.v_cache = alloc_init(size_t(c.max_len()) * c.kv_dim(), seed++, 0.0f);
    m.layers.push_back(L);
  }
  m.embedding = alloc_init(size_t(c.vocab) * c.hidden, seed++, 1.0f);
  m.final_norm = alloc_init(c.hidden, seed++, 2.0f);
  m.lm_head = alloc_init(size_t(c.vocab) * c.hidden, seed++, ws);
  const size_t rows = c.prompt_len;
  for (bf16** a : {&m.x, &m.xn, &m.q, &m.attn, &m.o, &m.down}) *a = alloc_init(rows * c.hidden, seed++, 1.0f);
  for (bf16** a : {&m.k, &m.v}) *a = alloc_init(rows * c.kv_dim(), seed++, 1.0f);
  for (bf16** a : {&m.gate, &m.up, &m.act}) *a = alloc_init(rows * c.ffn, seed++, 1.0f);
  m.logits = alloc_init(c.vocab, seed++, 0.0f);
  CHECK(cudaMalloc(&m.token, sizeof(int)));
  CHECK(cudaMalloc(&m.pos_offset, sizeof(int)));
  CHECK(cudaDeviceSynchronize());

  // Bytes each projection reads per decode step (all layers): the weights dominate at batch 1.
  const double mb = 1.0 / (1 << 20);
  const double qo = 2.0 * c.hidden * c.hidden * 2 * c.layers, kv = 2.0 * c.kv_dim() * c.hidden * 2 * c.layers;
  const double ffn = 3.0 * c.ffn * c.hidden * 2 * c.layers, head = 1.0 * c.vocab * c.hidden * 2;
  std::printf("bytes_per_step_MiB q+o=%.1f k+v=%.1f gate+up+down=%.1f lm_head=%.1f total=%.1f\n", qo * mb, kv * mb,
              ffn * mb, head * mb, (qo + kv + ffn + head) * mb);

  cudaGraphExec_t graph_exec = nullptr;
  cudaEvent_t e0, e1, e2;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventCreate(&e2));
  double ttft_sum = 0, tpot_sum = 0;
  int measured = 0;
  for (int it = 0; it < c.warmup + c.iters; ++it) {
    const bool measure = it >= c.warmup;
    const std::string tag = measure ? "measure" : "warmup";
    if (measure && c.profiler_capture) CHECK(cudaProfilerStart());
    CHECK(cudaMemsetAsync(m.pos_offset, 0, sizeof(int), s));
    CHECK(cudaEventRecord(e0, s));
    nvtxRangePushA((tag + ":prefill").c_str());
    forward(m, h, s, c.prompt_len, 0, nullptr);
    nvtxRangePop();
    CHECK(cudaEventRecord(e1, s));
    // The prefill's argmax set pos_offset to 1: decode position = prompt_len - 1 + pos_offset.
    if (c.cuda_graph && !graph_exec) {
      cudaGraph_t graph;
      CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      forward(m, h, s, 1, c.prompt_len - 1, m.pos_offset);
      CHECK(cudaStreamEndCapture(s, &graph));
      CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));
      CHECK(cudaGraphDestroy(graph));
    }
    for (int step = 0; step < c.output_len; ++step) {
      nvtxRangePushA((tag + ":decode_step").c_str());
      if (c.cuda_graph) CHECK(cudaGraphLaunch(graph_exec, s));
      else forward(m, h, s, 1, c.prompt_len - 1, m.pos_offset);
      nvtxRangePop();
    }
    CHECK(cudaEventRecord(e2, s));
    CHECK(cudaStreamSynchronize(s));
    if (measure && c.profiler_capture) CHECK(cudaProfilerStop());
    float prefill_ms = 0, decode_ms = 0;
    CHECK(cudaEventElapsedTime(&prefill_ms, e0, e1));
    CHECK(cudaEventElapsedTime(&decode_ms, e1, e2));
    if (measure) {
      ttft_sum += prefill_ms;
      tpot_sum += decode_ms / c.output_len;
      ++measured;
    }
  }
  int token = 0;
  CHECK(cudaMemcpy(&token, m.token, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("TTFT_ms=%.3f TPOT_ms=%.4f last_token=%d cuda_graph=%s layers=%d hidden=%d prompt=%d output=%d\n",
              ttft_sum / measured, tpot_sum / measured, token, c.cuda_graph ? "on" : "off", c.layers, c.hidden,
              c.prompt_len, c.output_len);
  return 0;
}
