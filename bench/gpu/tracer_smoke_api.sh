#!/bin/bash
# After the API-record refactor: launches recorded with and without capture ranges, whole graphs in ranges.
source "$(dirname "$0")/tracer_env.sh"
cd /tmp
nvcc -std=c++20 -O2 -arch=sm_90 $R/bench/gpu/launch_cost.cu -o /tmp/launch_cost || exit 1
LAUNCH="select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id=r.nameId where s.value like '%Launch%'"
$K record --nvml-interval 0 -o /tmp/a.sqlite -- /tmp/launch_cost eager 8000 1 >/dev/null 2>&1
echo "no range: kernels $(q /tmp/a.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/a.sqlite "$LAUNCH") (16000 expected)"
$K record --nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat -o /tmp/e1.sqlite -- /tmp/launch_cost eager-ab 8000 3 >/dev/null 2>&1
echo "ranges: kernels $(q /tmp/e1.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL') launches $(q /tmp/e1.sqlite "$LAUNCH") (24000 expected)"
$K record --nvml-interval 0 --capture-range=cudaProfilerApi --capture-range-end=repeat --cuda-graph-trace graph -o /tmp/g.sqlite -- /tmp/launch_cost graph-ab 9600 3 >/dev/null 2>&1; echo "rc=$?"
echo "graph ranges: execs $(q /tmp/g.sqlite 'select count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE') (900 expected)"
