#!/bin/bash
# The tracer's samplers recorded for real (run after a change to tracer/sampling_loop.hpp, nvml_sampler
# or thread_cpu_sampler): NVML samples and the launching thread's CPU clocks in a short torch loop with Python work between launches and a host
# sleep between requests; prints their row counts and the account (host.unrecorded, idle).
# usage: bash bench/gpu/steps/run.sh prepare   (here: fills .gpu/, carry .gpu)
#        bash bench/gpu/samplers_check.sh       (on the GPU machine, from the repository root)
set -u
python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
source bench/gpu/tracer_env.sh
cat > /tmp/loop.py <<'PY'
import time, torch
x = torch.randn(2048, 2048, device="cuda")
for r in range(4):
    for i in range(20):
        y = x @ x
        s = sum(range(20000))   # Python work between launches
    torch.cuda.synchronize()
    time.sleep(0.05)            # a pause between requests
print("done")
PY
timeout 120 $K record -o /tmp/loop-%p.sqlite -- python3 /tmp/loop.py; echo "record exit $?"
f=$(ls -S /tmp/loop-*.sqlite | head -1)
python3 - "$f" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for t in ("KERNSCOPE_THREAD_CPU", "KERNSCOPE_GPU_SAMPLES", "CUPTI_ACTIVITY_KIND_KERNEL"):
    try: print(t, db.execute(f"select count(*) from {t}").fetchone()[0])
    except Exception as e: print(t, e)
print("busy/idle stretches:", db.execute("select busy, count(*), sum(end-start)/1e6, sum(cpuNs)/1e6 from KERNSCOPE_THREAD_CPU group by busy").fetchall())
PY
timeout 60 $K account -q "$f" | tail -8
timeout 60 $K info -q "$f" | grep -i -E "gpu samples|nvml|thread" | head
