#!/bin/bash
# Fidelity of kernscope's tracer against nsys: two traces of the same workload, one by
# `kernscope record`, one by nsys (exported to SQLite), compared through kernscope's own reports.
# Kernels are matched by mangled name (cuda_gpu_kern_sum:mangled): names on each side, names with
# equal counts, total kernels, and the deviation of the mean duration per name (median and max,
# with the worst three). NVTX ranges (nvtx_sum): range, instances and mean per side.
#
# usage: bench/gpu/tracer_fidelity.sh KERNSCOPE_TRACE.sqlite NSYS_TRACE.sqlite
# (overhead_processes.sh runs it on its last round's traces.)
source "$(dirname "$0")/tracer_env.sh"
if [ $# -ne 2 ]; then awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" >&2; exit 2; fi
KS=$1
NS=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
$K stats -r cuda_gpu_kern_sum:mangled -f csv "$KS" > "$T/ks.csv"
$K stats -r cuda_gpu_kern_sum:mangled -f csv "$NS" > "$T/ns.csv"
$K stats -r nvtx_sum -f csv "$KS" > "$T/ks_nvtx.csv"
$K stats -r nvtx_sum -f csv "$NS" > "$T/ns_nvtx.csv"
python3 - "$T" <<'PY'
import csv, sys
d = sys.argv[1]
def rows(name):  # a report's rows; none when kernscope said the trace lacks its data
    with open(f"{d}/{name}") as f:
        text = f.read()
    return list(csv.DictReader(text.splitlines())) if text.startswith("Time") else []
ks = {r["Name"]: r for r in rows("ks.csv")}
ns = {r["Name"]: r for r in rows("ns.csv")}
names = set(ks) | set(ns)
same = sum(1 for n in names if n in ks and n in ns and ks[n]["Instances"] == ns[n]["Instances"])
print(f"{len(ks)} kernel names (kernscope), {len(ns)} (nsys); same name+count: {same}; "
      f"only kernscope: {len(set(ks) - set(ns))}, only nsys: {len(set(ns) - set(ks))}")
devs = sorted(((abs(float(ks[n]["Avg (ns)"]) / float(ns[n]["Avg (ns)"]) - 1), n, ks[n]["Avg (ns)"], ns[n]["Avg (ns)"])
               for n in names if n in ks and n in ns), reverse=True)
if devs:
    median = sorted(x[0] for x in devs)[len(devs) // 2]
    print(f"mean-duration deviation per name: max {devs[0][0] * 100:.2f} %, median {median * 100:.2f} %")
    print("worst:", [(round(x[0] * 100, 2), x[1][:50], x[2], x[3]) for x in devs[:3]])
print(f"kernels: kernscope {sum(int(r['Instances']) for r in ks.values())}, nsys {sum(int(r['Instances']) for r in ns.values())}")
for tool, name in (("kernscope", "ks_nvtx.csv"), ("nsys", "ns_nvtx.csv")):
    print(f"NVTX ({tool}):", [(r["Range"], r["Instances"], r["Avg (ns)"]) for r in rows(name)][:6])
PY
