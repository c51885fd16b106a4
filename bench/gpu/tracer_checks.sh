#!/bin/bash
# Checks of kernscope's tracer on a real GPU, each printing what it found beside what is expected.
# Run from the repository root on the GPU machine (see tracer_env.sh).
#
# usage: bench/gpu/tracer_checks.sh [CHECK...]     (no CHECK: all of them, in this order)
#   api-records     launches recorded without a capture range, inside cudaProfilerApi ranges (also
#                   with --api all), after --delay, inside NVTX ranges; whole graphs inside ranges
#   signals         a program ended by SIGTERM (C++, then Python sending it to itself): its trace is
#                   finished and it still dies by the signal
#   fork            a Python program that forks after CUDA started (multiprocessing's fork context):
#                   a returning and a terminated child; nothing hangs, the parent's trace is complete
#                   (TRACER_LIB: the tracer library to use instead of the current one)
#   children        spawned multiprocessing workers (a Pool and two Processes) and a subprocess:
#                   each traced into a file of its own (-o ...-%p.sqlite)
#   capture         capture ranges on decode_bench: cudaProfilerApi (repeat), nvtx:measure:prefill
#                   (stop, then repeat)
#   nsys-backend    kernscope record --backend nsys
#   killed          a program killed by SIGKILL (the file keeps what was flushed) and one ended by
#                   SIGTERM forwarded through record
#   torch-profiler  the PyTorch profiler inside a traced program (CUPTI held by both): no hang, no crash
#   exit-status     the program's exit status comes back through record
#   nvtx-python     torch.cuda.nvtx ranges of a Python program reach the trace
ALL="api-records signals fork children capture nsys-backend killed torch-profiler exit-status nvtx-python"
CHECKS="${*:-$ALL}"
for c in $CHECKS; do
  case " $ALL " in
    *" $c "*) ;;
    *) echo "unknown check: $c" >&2; awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" >&2; exit 2 ;;
  esac
done
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
KERN="select count(*) from CUPTI_ACTIVITY_KIND_KERNEL"
DECODE_SMALL="--layers 2 --iters 2 --warmup 1 --output-len 16 --prompt-len 128"
DECODE_LONG="--layers 2 --iters 200 --output-len 64 --prompt-len 128"

build_launch_cost() { [ -x /tmp/launch_cost ] || nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1; }
build_decode_bench() { [ -x /tmp/db ] || nvcc -O2 -std=c++17 -arch=sm_90 $R/examples/decode_bench/decode_bench.cu -lcublas -o /tmp/db || exit 1; }

check_api_records() {
  build_launch_cost
  $K record --nvml-interval 0 -o /tmp/a.sqlite -- /tmp/launch_cost eager 8000 1 >/dev/null 2>&1
  echo "no range: kernels $(q /tmp/a.sqlite "$KERN") launches $(q /tmp/a.sqlite "$LAUNCH") (16000 expected)"
  $K record --nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat -o /tmp/e1.sqlite -- /tmp/launch_cost eager-ab 8000 3 >/dev/null 2>&1
  echo "ranges: kernels $(q /tmp/e1.sqlite "$KERN") launches $(q /tmp/e1.sqlite "$LAUNCH") (24000 expected)"
  echo "ranges: other API calls recorded $(q /tmp/e1.sqlite "select s.value, count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId group by 1")"
  $K record --nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat --api all -o /tmp/e2.sqlite -- /tmp/launch_cost eager-ab 8000 3 >/dev/null 2>&1
  echo "ranges --api all: kernels $(q /tmp/e2.sqlite "$KERN") launches $(q /tmp/e2.sqlite "$LAUNCH") (24000 expected)"
  $K record --nvml-interval 0 --delay 1 -o /tmp/d.sqlite -- /tmp/launch_cost eager 400000 6 >/dev/null 2>&1
  echo "delay 1 s: kernels $(q /tmp/d.sqlite "$KERN") launches $(q /tmp/d.sqlite "$LAUNCH") (about equal, > 0)"
  $K record --nvml-interval 0 --capture-range=nvtx:cap --capture-range-end=repeat -o /tmp/n.sqlite -- python3 -c "
import torch
x = torch.ones(1024, device='cuda')
for i in range(6):
    if i % 2 == 0: torch.cuda.nvtx.range_push('cap')
    for _ in range(1000): x = x * 1.0
    if i % 2 == 0: torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
" >/dev/null 2>&1
  echo "nvtx ranges: kernels $(q /tmp/n.sqlite "$KERN") launches $(q /tmp/n.sqlite "$LAUNCH") (3000 each expected)"
  $K record --nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat --cuda-graph-trace graph -o /tmp/g.sqlite -- /tmp/launch_cost graph-ab 9600 3 >/dev/null 2>&1; echo "rc=$?"
  echo "graph ranges: execs $(q /tmp/g.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE') (900 expected)"
}

check_signals() {
  build_launch_cost
  echo "== SIGTERM after 3 s (C++ program, then Python)"
  timeout -s TERM 3 $K record --nvml-interval 10 -o /tmp/t.sqlite -- /tmp/launch_cost eager 100000000 1; echo "record rc=$? (124 from timeout)"
  echo "tracer info: $(q /tmp/t.sqlite "select name, value from KERNSCOPE_TRACER_INFO where name in ('dropped_records','tracer')") kernels $(q /tmp/t.sqlite "$KERN") samples $(q /tmp/t.sqlite 'select count(*) from KERNSCOPE_GPU_SAMPLES')"
  $K record --nvml-interval 0 -o /tmp/tp.sqlite -- python3 -c "
import os, signal, threading, torch
x = torch.ones(1024, device='cuda')
threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
while True: x = x * 1.0001
"; echo "python record rc=$? (143 expected)"
  echo "python tracer info: $(q /tmp/tp.sqlite "select value from KERNSCOPE_TRACER_INFO where name='tracer'") kernels $(q /tmp/tp.sqlite "$KERN")"
}

check_fork() {
  rm -f /tmp/f-*.sqlite
  KERNSCOPE_TRACER_LIB=${TRACER_LIB:-$KERNSCOPE_TRACER_LIB} timeout 60 $K record --nvml-interval 0 -o /tmp/f-%p.sqlite -- python3 -c "
import multiprocessing as mp, time, torch
x = torch.ones(1024, device='cuda')
for _ in range(100): x = x * 1.0
torch.cuda.synchronize()
ctx = mp.get_context('fork')
t = time.time(); p = ctx.Process(target=lambda: None); p.start(); p.join()
print(f'returning child: exit {p.exitcode} after {time.time() - t:.2f} s', flush=True)
p = ctx.Process(target=time.sleep, args=(100,)); p.start(); time.sleep(0.5)
t = time.time(); p.terminate(); p.join()
print(f'terminated child: exit {p.exitcode} after {time.time() - t:.2f} s', flush=True)
for _ in range(100): x = x * 1.0
torch.cuda.synchronize()
"
  echo "record rc=$? (124: hung)"
  for f in /tmp/f-*.sqlite; do echo "$f kernels $(q $f "$KERN") (201+ expected)"; done
}

check_children() {
  cat > /tmp/mp.py <<'PY'
import multiprocessing as mp, subprocess, sys
def work(i):
    import torch
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(50 + i):
        x = x * 1.0001
    torch.cuda.synchronize()
    return i
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:  # workers that return to the pool
        print(pool.map(work, [0, 1]))
    ps = [ctx.Process(target=work, args=(i,)) for i in range(2)]  # processes that end after their work
    for p in ps: p.start()
    for p in ps: p.join()
    print("exit codes", [p.exitcode for p in ps])
    # and a child started by exec (subprocess)
    subprocess.run([sys.executable, "-c", "import torch; torch.ones(3, device='cuda').sum().item()"], check=True)
PY
  rm -f /tmp/mp-*.sqlite
  timeout 120 $K record -o /tmp/mp-%p.sqlite -- python3 /tmp/mp.py 2>&1 | grep -v "^kernscope tracer"
  for f in /tmp/mp-*.sqlite; do echo "$f kernels $(q $f "$KERN")"; done
}

check_capture() {
  build_decode_bench
  echo "== cudaProfilerApi (measured iterations only: expect 2 prefills, 32 decode steps)"
  timeout 100 $K record --capture-range cudaProfilerApi --capture-range-end repeat -o /tmp/cap.sqlite -- /tmp/db $DECODE_SMALL --cuda-profiler-capture --cuda-graph off 2>&1 | tail -2
  $K stats -r nvtx_sum -f csv /tmp/cap.sqlite
  echo "== nvtx:measure:prefill (expect only the first measured prefill with stop)"
  timeout 100 $K record --capture-range nvtx:measure:prefill -o /tmp/nv.sqlite -- /tmp/db $DECODE_SMALL --cuda-graph off 2>&1 | tail -1
  $K stats -r nvtx_sum -f csv /tmp/nv.sqlite; $K info /tmp/nv.sqlite | grep -A3 Events
  echo "== nvtx:measure:prefill with repeat: the capture range records its own range"
  timeout 100 $K record --capture-range nvtx:measure:prefill --capture-range-end repeat -o /tmp/nvr.sqlite -- /tmp/db --layers 2 --iters 2 --warmup 1 --output-len 4 --prompt-len 128 --cuda-graph off 2>&1 | tail -1
  $K stats -r nvtx_sum -f csv /tmp/nvr.sqlite
}

check_nsys_backend() {
  build_decode_bench
  PATH=$(dirname "$NSYS"):$PATH timeout 200 $K record --backend nsys -o /tmp/viansys -- /tmp/db $DECODE_SMALL 2>&1 | tail -3
  $K stats -r cuda_gpu_kern_sum /tmp/viansys.sqlite | head -6
}

check_killed() {
  build_decode_bench
  echo "== killed mid-run (SIGKILL after 3 s): the file keeps what was flushed"
  (timeout -s KILL 3 $K record -o /tmp/killed.sqlite -- /tmp/db $DECODE_LONG > /dev/null 2>&1); echo "rc=$?"
  sleep 1; ls -la /tmp/killed.sqlite*; $K info /tmp/killed.sqlite 2>&1 | grep -A3 "Events\|error"
  echo "== program killed by SIGTERM forwarded through record"
  timeout -s TERM 3 $K record -o /tmp/term.sqlite -- /tmp/db $DECODE_LONG > /tmp/term.out 2>&1; echo "rc=$?"; tail -3 /tmp/term.out
  $K info /tmp/term.sqlite 2>&1 | grep -A2 "Events\|error"
}

check_torch_profiler() {
  PROMPT=64 GEN=8 TORCHPROF=/tmp/tp.json timeout 200 $K record -o /tmp/tpr.sqlite -- python3 $R/.gpu/tools/llama_decode_workload.py 2>&1 | tail -4; echo "rc=${PIPESTATUS[0]}"
  ls -la /tmp/tp.json /tmp/tpr.sqlite 2>&1
  $K info /tmp/tpr.sqlite | tail -4
}

check_exit_status() {
  timeout 60 $K record -o /tmp/x.sqlite -- python3 -c "import torch; torch.ones(1,device='cuda'); raise SystemExit(7)" 2>/dev/null; echo "rc=$? (7 expected)"
}

check_nvtx_python() {
  cat > /tmp/nvtx_test.py <<'PY'
import torch, os
print("NVTX_INJECTION64_PATH", os.environ.get("NVTX_INJECTION64_PATH"))
x = torch.ones(1000, device="cuda")
for i in range(3):
    with torch.cuda.nvtx.range(f"step{i}"):
        x = x * 2
torch.cuda.synchronize()
PY
  $K record -o /tmp/nvtx.sqlite -- python3 /tmp/nvtx_test.py
  $K stats -r nvtx_sum /tmp/nvtx.sqlite | head
}

for c in $CHECKS; do
  echo "=== $c"
  "check_${c//-/_}"
done
