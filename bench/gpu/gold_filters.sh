# Filter variants (time and NVTX) on the fixtures.
RS="--report cuda_gpu_kern_sum --report cuda_api_sum --report cuda_gpu_mem_time_sum --report nvtx_sum --report cuda_gpu_trace --report cuda_kern_exec_sum --report nvtx_kern_sum"
i=0
run() { f=$1; shift; i=$((i+1)); d=/tmp/res/gold/$f/filt$i; mkdir -p $d; echo "$*" > $d/args.txt; "$NSYS" stats $RS --format csv --force-overwrite=true --output $d/x "$@" /tmp/$f.sqlite > $d/stdout.txt 2>&1; echo "rc=$?" >> $d/args.txt; }
run llama_decode_h200 --filter-nvtx measure:decode_step
run llama_decode_h200 --filter-nvtx measure:decode_step/3
run llama_decode_h200 --filter-nvtx measure:prefill
run llama_decode_h200 --filter-nvtx nosuchrange
run llama_decode_h200 --filter-time 20s/20s500ms
run llama_decode_h200 --filter-time 21s/
run llama_decode_h200 --filter-time /18s1ms
run llama_decode_h200 --filter-time 20s300ms100us/21s
run llama_decode_h200 --filter-nvtx measure:decode_step@NoDomain
run cloverleaf_perlmutter --filter-time 600ms/700ms
run cloverleaf_perlmutter --filter-time 800ms/
run graph_tiny_kernels_h200 --filter-time 450ms/460ms
