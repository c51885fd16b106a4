#!/bin/bash
# Tracer fidelity (vs nsys) and overhead (vs no profiler, nsys, PyTorch profiler), interleaved.
source "$(dirname "$0")/tracer_env.sh"
source $R/.gpu/tools/gpu-nsys-env.sh >/dev/null 2>&1
cd /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -arch=sm_90 $R/.gpu/graph_workload.cu -o /tmp/app || exit 1
echo "== NVTX debug"
python3 - <<'PY' > /tmp/nvtx_test.py
PY
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
echo "== graph workload, interleaved: none / kernscope / nsys (5 rounds)"
for i in 1 2 3 4 5; do
  echo "none $(/tmp/app 2000)"
  echo "kernscope $($K record --nvml-interval 10 -o /tmp/g.sqlite -- /tmp/app 2000 2>/dev/null)"
  echo "nsys $("$NSYS" profile --trace=cuda,nvtx --cuda-graph-trace=node --force-overwrite=true -o /tmp/g_nsys /tmp/app 2000 2>/dev/null | grep graph_us)"
done
echo "== fidelity: graph workload"
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/g_nsys.sqlite /tmp/g_nsys.nsys-rep >/dev/null 2>&1
$K stats -r cuda_gpu_kern_sum:mangled -f csv /tmp/g.sqlite > /tmp/g_ks.csv
$K stats -r cuda_gpu_kern_sum:mangled -f csv /tmp/g_nsys.sqlite > /tmp/g_ns.csv
cat /tmp/g_ks.csv /tmp/g_ns.csv
echo "== llama, interleaved: none / kernscope / nsys / torch profiler (3 rounds)"
W=$R/.gpu/tools/llama_decode_workload.py
for i in 1 2 3; do
  echo "none $(python3 $W 2>/dev/null | tail -1)"
  echo "kernscope $($K record -o /tmp/l.sqlite -- python3 $W 2>/dev/null | tail -1)"
  echo "nsys $("$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o /tmp/l_nsys python3 $W 2>/dev/null | grep TPOT)"
  echo "torchprof $(TORCHPROF=/tmp/l_torch.json python3 $W 2>/dev/null | tail -1)"
done
echo "== fidelity: llama"
"$NSYS" export --type sqlite --force-overwrite=true -o /tmp/l_nsys.sqlite /tmp/l_nsys.nsys-rep >/dev/null 2>&1
$K stats -r cuda_gpu_kern_sum:mangled -f csv /tmp/l.sqlite > /tmp/l_ks.csv
$K stats -r cuda_gpu_kern_sum:mangled -f csv /tmp/l_nsys.sqlite > /tmp/l_ns.csv
$K stats -r nvtx_sum -f csv /tmp/l.sqlite > /tmp/l_ks_nvtx.csv
$K stats -r nvtx_sum -f csv /tmp/l_nsys.sqlite > /tmp/l_ns_nvtx.csv
python3 - <<'PY'
import csv
def load(p):
    return {r["Name"]: r for r in csv.DictReader(open(p))}
for tag, a, b in (("graph", "/tmp/g_ks.csv", "/tmp/g_ns.csv"), ("llama", "/tmp/l_ks.csv", "/tmp/l_ns.csv")):
    ks, ns = load(a), load(b)
    names = set(ks) | set(ns)
    same = sum(1 for n in names if n in ks and n in ns and ks[n]["Instances"] == ns[n]["Instances"])
    devs = []
    for n in names:
        if n in ks and n in ns:
            devs.append((abs(float(ks[n]["Avg (ns)"]) / float(ns[n]["Avg (ns)"]) - 1), n, ks[n]["Avg (ns)"], ns[n]["Avg (ns)"]))
    devs.sort(reverse=True)
    print(f"{tag}: {len(ks)} kernel names (kernscope), {len(ns)} (nsys); same name+count: {same}; "
          f"only kernscope: {len(set(ks)-set(ns))}, only nsys: {len(set(ns)-set(ks))}")
    print(f"  mean-duration deviation: max {devs[0][0]*100:.2f} %, median {sorted(d[0] for d in devs)[len(devs)//2]*100:.2f} %")
    print("  worst:", [(round(d[0]*100, 2), d[1][:50], d[2], d[3]) for d in devs[:3]])
    tk = sum(int(r["Instances"]) for r in ks.values()); tn = sum(int(r["Instances"]) for r in ns.values())
    print(f"  kernels: kernscope {tk}, nsys {tn}")
for f in ("/tmp/l_ks_nvtx.csv", "/tmp/l_ns_nvtx.csv"):
    rows = list(csv.DictReader(open(f))) if open(f).readline().startswith("Time") else []
    print(f, [(r["Range"], r["Instances"], r["Avg (ns)"]) for r in rows][:6])
PY
cp /tmp/l.sqlite /tmp/g.sqlite $OUT/ 2>/dev/null
