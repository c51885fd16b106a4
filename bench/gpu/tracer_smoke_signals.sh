#!/bin/bash
# API records switched call by call inside capture ranges (cudaProfilerApi, NVTX) and after --delay, and a
# traced program ended by SIGTERM: its trace is finished (tracer info written) and it still dies by
# the signal (record exits 128+15).
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
KERN="select count(*) from CUPTI_ACTIVITY_KIND_KERNEL"
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
