# The --filter-time / --filter-nvtx cases of the gold (sourced by gold_collect.sh): one line per case,
#   FIXTURE CASE FLAG VALUE
# VALUE is the rest of the line (it may hold spaces). gold/filters/CASE/args.txt records "FLAG VALUE"
# and tests/golden/nsys_golden_test.cpp splits it at the first space. filt1..filt12 keep the names the
# first gold had. A range that does not exist (nosuchrange) is a case too: nsys then prints nothing.
# Windows are in the export's own timestamps (nsys's grammar: ns us ms s m h).
gold_filter_cases() {
  cat <<'EOF'
llama_decode_h200 filt1 --filter-nvtx measure:decode_step
llama_decode_h200 filt2 --filter-nvtx measure:decode_step/3
llama_decode_h200 filt3 --filter-nvtx measure:prefill
llama_decode_h200 filt4 --filter-nvtx nosuchrange
llama_decode_h200 filt5 --filter-time 20s/20s500ms
llama_decode_h200 filt6 --filter-time 21s/
llama_decode_h200 filt7 --filter-time /18s1ms
llama_decode_h200 filt8 --filter-time 20s300ms100us/21s
llama_decode_h200 filt9 --filter-nvtx measure:decode_step@NoDomain
cloverleaf_perlmutter filt10 --filter-time 600ms/700ms
cloverleaf_perlmutter filt11 --filter-time 800ms/
graph_tiny_kernels_h200 filt12 --filter-time 450ms/460ms
fuser_h200 nvtx_run_fusion --filter-nvtx FusionExecutorCache::runFusionWithInputs
fuser_h200 nvtx_run_fusion_2 --filter-nvtx FusionExecutorCache::runFusionWithInputs/1
fuser_h200 time_8s4_9s --filter-time 8s400ms/9s
mordred_quadro_rtx6000 time_6s3_6s7 --filter-time 6s300ms/6s700ms
mordred_quadro_rtx6000 nvtx_absent --filter-nvtx anything
nsysai_h100_2gpu_1s time_155s6_156s --filter-time 155s600ms/156s
nsysai_h100_2gpu_1s time_from_156s1 --filter-time 156s100ms/
nsysai_mfu_2gpu_before nccl_group_start_3 --filter-nvtx ncclGroupStart/3
nsysai_mfu_2gpu_before time_60s2_60s3 --filter-time 60s200ms/60s300ms
nsysai_mfu_2gpu_after nccl_send --filter-nvtx ncclSend
nsysai_mfu_2gpu_after time_73s_73s1 --filter-time 73s/73s100ms
gaps_memset_sync nvtx_gaps --filter-nvtx gaps
gaps_memset_sync nvtx_memset_sync --filter-nvtx memset_sync
EOF
}
