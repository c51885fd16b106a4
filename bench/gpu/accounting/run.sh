#!/bin/bash
# Does `kernscope account` name the right bottleneck? Six programs built to have a known one, each traced
# and accounted on the GPU machine; prints, per program, the expected bottleneck beside the accounting's
# for the steady-state group, the category shares, and whether the six categories sum to each step's wall
# within 1 % (summarize.py), then the API calls, kernels and copies of the group's middle step (step_calls.py).
#
#   copy       copy_bound.cu: 256 MiB pageable H2D cudaMemcpyAsync + tiny kernel + sync   expect copy (copy.h2d, pageable)
#   blocked    blocked.cu: short kernel + 5 ms cudaLaunchHostFunc + cudaStreamSynchronize  expect blocked (cudaStreamSynchronize)
#   framework  framework.py: NVTX "data" range of 20 ms CPU work + small matmul (PyTorch)  expect host (host.framework)
#   llama      ../shared/tools/llama_decode_workload.py, eager, bs 1 (group :measure:decode_step)  expect host (host.launch)
#   graph      examples/decode_bench with CUDA graphs on (group :measure:decode_step)          expect gpu
#   torchprof  the eager Llama with TORCHPROF= (a PyTorch-profiler trace), accounted from its JSON  expect host
#
# Run from the repository root on the GPU machine (binaries under .gpu/, see bench/gpu/tracer_env.sh; the
# Llama workload from .gpu/tools/ or ../shared/tools/).
# usage: bench/gpu/accounting/run.sh [PROGRAM...]     (no PROGRAM: all six, in this order)
#        bench/gpu/accounting/run.sh prepare          (here, before the call: fills .gpu/, see below)
# `prepare` (on the development machine, from the repository root) packs stripped copies of
# build/tools/kernscope/kernscope and build/src/tracer/libkernscope_tracer.so, the libraries they need that
# the GPU machine lacks (libfmt, libsimdjson, libsqlite3) and the Llama workload into .gpu/pack.tar.xz
# (about 2.5 MB: the working tree that travels is limited to 64 MiB, carry .gpu); run.sh unpacks it there.
# Writes under $OUT (or /tmp/acct/out): bundle.tar holding keep/NAME.account.json.gz, keep/NAME.sqlite.gz
# (or torchprof.json.gz) when under 1 MB gzipped, and keep/summary.tsv; with ALL_TRACES=1 every trace,
# gzipped, beside it (NAME.sqlite.gz, torchprof.json.gz), to account again elsewhere.
ALL="copy blocked framework llama graph torchprof"
if [ "${1:-}" = prepare ]; then
  G=$PWD/.gpu && S=$(mktemp -d) || exit 1
  mkdir -p "$S/bin" "$S/lib" "$S/tools" "$G" || exit 1
  strip -o "$S/bin/kernscope" build/tools/kernscope/kernscope || exit 1
  strip -o "$S/bin/libkernscope_tracer.so" build/src/tracer/libkernscope_tracer.so || exit 1
  for l in libfmt.so libsimdjson.so libsqlite3.so; do
    f=$(ldd build/tools/kernscope/kernscope | awk -v l=$l '$1 ~ "^"l {print $3}')
    [ -n "$f" ] && cp -L "$f" "$S/lib/"
  done
  cp ../shared/tools/llama_decode_workload.py "$S/tools/" || exit 1
  tar -C "$S" -cf - bin lib tools | xz --x86 --lzma2=preset=9e -c > "$G/pack.tar.xz" || exit 1
  rm -rf "$S"
  echo "wrote .gpu/pack.tar.xz ($(stat -c %s "$G/pack.tar.xz") bytes): carry .gpu"
  exit 0
fi
PROGS="${*:-$ALL}"
if [ ! -x .gpu/bin/kernscope ] && [ -f .gpu/pack.tar.xz ]; then
  python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
fi
source "$(dirname "$0")/../tracer_env.sh"
A=$R/bench/gpu/accounting
W=$R/.gpu/tools/llama_decode_workload.py
[ -f "$W" ] || W=$R/../shared/tools/llama_decode_workload.py
T=/tmp/acct
O=${OUT:-$T/out}
rm -rf "$T/run" && mkdir -p "$T/run" "$O/keep" || exit 1
cd "$T/run" || exit 1
LIMIT=${LIMIT:-300}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvidia-smi | grep -o "CUDA Version: [0-9.]*"
nvcc --version | tail -1
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" 2>&1 | tail -1
echo "kernscope: $(md5sum "$R/.gpu/bin/kernscope" | cut -c1-12)  tracer: $(md5sum "$KERNSCOPE_TRACER_LIB" | cut -c1-12)"

build() {  # build NAME SOURCE [nvcc args...]
  local name=$1 src=$2; shift 2
  [ -x "$T/$name" ] || nvcc -O2 -std=c++17 -arch=sm_90 "$src" "$@" -o "$T/$name" || { echo "build of $name failed"; return 1; }
}

# account NAME EXPECTED GROUP TRACE: account json, summary, the middle step's calls, keep what is small.
account() {
  local name=$1 expected=$2 group=$3 trace=$4
  local js=$T/run/$name.account.json
  $K account --format json "$trace" > "$js" 2> "$T/run/$name.account.err" || { echo "[$name] account failed:"; head -5 "$T/run/$name.account.err"; return 1; }
  python3 "$A/summarize.py" "$name" "$expected" "$js" "$group" > "$T/run/$name.summary" 2>&1
  grep -v "^MIDSTEP" "$T/run/$name.summary"
  grep "^SUMMARY" "$T/run/$name.summary" | cut -d' ' -f2- >> "$O/keep/summary.tsv"
  gzip -c "$js" > "$O/keep/$name.account.json.gz"
  local mid; mid=$(grep "^MIDSTEP" "$T/run/$name.summary" | cut -d' ' -f2-)
  case "$trace" in
    *.sqlite)
      if [ -n "$mid" ]; then
        set -- $mid
        echo "[$name] inside step $3 (the group's middle step):"
        python3 "$A/step_calls.py" "$trace" "$1" "$2"
      fi
      ;;
  esac
  local gz=$T/run/$(basename "$trace" | sed "s/-[0-9]*\.sqlite$/.sqlite/").gz
  gzip -c "$trace" > "$gz"
  local sz; sz=$(stat -c %s "$gz")
  if [ "$sz" -lt 1000000 ]; then cp "$gz" "$O/keep/"; echo "[$name] trace kept in the bundle ($sz bytes gzipped)"
  else echo "[$name] trace $sz bytes gzipped"; fi
  [ -n "${ALL_TRACES:-}" ] && cp "$gz" "$O/"
}

# record NAME -- CMD...: kernscope record, prints the program's own line(s), sets TRACE.
record() {
  local name=$1; shift 2
  rm -f "$T/run/$name"-*.sqlite
  timeout $LIMIT $K record -o "$T/run/$name-%p.sqlite" -- "$@" > "$T/run/$name.log" 2>&1
  echo "[$name] record exit $?: $(grep -v '^\s*$' "$T/run/$name.log" | grep -iv warn | tail -2 | tr '\n' ' ' | cut -c1-300)"
  TRACE=$(ls -S "$T/run/$name"-*.sqlite 2>/dev/null | head -1)
  [ -n "$TRACE" ] || { echo "[$name] no trace written"; return 1; }
  echo "[$name] trace $(basename "$TRACE"): $(du -h "$TRACE" | cut -f1)"
}

run_copy() {
  build copy_bound "$A/copy_bound.cu" || return
  record copy -- "$T/copy_bound" && account copy copy/copy.h2d step "$TRACE"
}
run_blocked() {
  build blocked "$A/blocked.cu" || return
  record blocked -- "$T/blocked" && account blocked blocked/blocked.cudaStreamSynchronize step "$TRACE"
}
run_framework() {
  record framework -- python3 "$A/framework.py" && account framework host/host.framework step "$TRACE"
}
run_llama() {
  record llama -- python3 "$W" && account llama host/host.launch :measure:decode_step "$TRACE"
}
run_graph() {
  build decode_bench "$R/examples/decode_bench/decode_bench.cu" -lcublas || return
  record graph -- "$T/decode_bench" --iters 1 --warmup 1 --cuda-graph on && account graph gpu :measure:decode_step "$TRACE"
}
run_torchprof() {
  rm -f "$T/run/torchprof.json"
  TORCHPROF=$T/run/torchprof.json timeout $LIMIT python3 "$W" > "$T/run/torchprof.log" 2>&1
  echo "[torchprof] exit $?: $(tail -1 "$T/run/torchprof.log" | cut -c1-300)"
  [ -f "$T/run/torchprof.json" ] || { echo "[torchprof] no trace written"; return 1; }
  echo "[torchprof] trace torchprof.json: $(du -h "$T/run/torchprof.json" | cut -f1)"
  account torchprof "host/host.launch|host.framework" "" "$T/run/torchprof.json"
}

: > "$O/keep/summary.tsv"
for p in $PROGS; do
  case " $ALL " in *" $p "*) ;; *) echo "unknown program: $p" >&2; exit 2 ;; esac
  echo "== $p"
  t0=$(date +%s)
  "run_$p"
  echo "[$p] took $(( $(date +%s) - t0 )) s"
done
echo "== summary (name, expected, measured, without the first step, verdict, shares %, top part, sums)"
cat "$O/keep/summary.tsv"
(cd "$O" && tar cf bundle.tar keep && rm -rf keep)
