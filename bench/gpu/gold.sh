#!/bin/bash
# Runs on the GPU machine: collects nsys's report/rule scripts and gold outputs for kernscope's tests.
set -x
cd "$(dirname "$0")"
G=$PWD
source tools/gpu-nsys-env.sh
NSYSDIR=$(dirname "$(readlink -f "$NSYS")")
"$NSYS" --version > /tmp/nsys_version.txt
mkdir -p /tmp/res/scripts
R=$(find /opt/nvidia -type d -name reports -path '*target-linux-x64*' | head -1)
echo "reports dir: $R"
cp -r "$R" /tmp/res/scripts/ ; cp -r "$(dirname "$R")/rules" /tmp/res/scripts/ 2>/dev/null
find "$(dirname "$R")" -maxdepth 3 -name '*.py' | grep -v -e '/reports/' -e '/rules/' | head -50 > /tmp/res/scripts/other_py.txt
cp -r "$(dirname "$R")/python" /tmp/res/scripts/ 2>/dev/null
"$NSYS" stats --help > /tmp/res/stats_help.txt 2>&1
"$NSYS" stats --help-reports > /tmp/res/help_reports.txt 2>&1
"$NSYS" analyze --help-rules > /tmp/res/help_rules.txt 2>&1
for r in cuda_gpu_kern_sum cuda_api_sum cuda_gpu_trace nvtx_gpu_proj_sum nvtx_kern_sum osrt_sum cuda_gpu_mem_time_sum; do "$NSYS" stats --help-reports $r >> /tmp/res/help_reports_each.txt 2>&1; done
REPORTS="cuda_gpu_kern_sum cuda_gpu_kern_sum:base cuda_gpu_kern_sum:mangled cuda_api_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum cuda_kern_exec_sum cuda_gpu_trace cuda_api_gpu_sum cuda_api_trace nvtx_sum nvtx_pushpop_sum nvtx_startend_sum nvtx_kern_sum nvtx_gpu_proj_sum osrt_sum"
RA=""; for r in $REPORTS; do RA="$RA --report $r"; done
for f in llama_decode_h200 graph_tiny_kernels_h200 cloverleaf_perlmutter; do
  d=/tmp/res/gold/$f; mkdir -p $d/plain $d/v
  gunzip -c fixtures/nsys/$f/trace.sqlite.gz > /tmp/$f.sqlite
  "$NSYS" stats $RA --format csv --force-overwrite=true --output $d/plain/x /tmp/$f.sqlite > $d/plain/stdout.txt 2>&1
  "$NSYS" stats --report cuda_gpu_kern_sum --report cuda_api_sum --report nvtx_sum --report cuda_gpu_mem_time_sum --format csv --timeunit us --force-overwrite=true --output $d/v/us /tmp/$f.sqlite > /dev/null 2>&1
  "$NSYS" stats --report cuda_gpu_kern_sum --report cuda_api_sum --format json --force-overwrite=true --output $d/v/json /tmp/$f.sqlite > /dev/null 2>&1
  "$NSYS" stats --report cuda_gpu_kern_sum --report cuda_api_sum --report nvtx_sum --report cuda_gpu_mem_time_sum --format column --force-overwrite=true --output $d/v/col /tmp/$f.sqlite > /dev/null 2>&1
  "$NSYS" stats --report cuda_gpu_kern_sum --report cuda_api_sum --report nvtx_sum > $d/v/console.txt 2>&1 /tmp/$f.sqlite
done
bash $G/gold_filters.sh
gzip -r /tmp/res/gold
cp /tmp/nsys_version.txt /tmp/res/
tar czf $OUT/res.tgz -C /tmp res
ls -la $OUT
