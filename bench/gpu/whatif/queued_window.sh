#!/bin/bash
# queued_window.py's two variants (--inner 8192, the "before", and 4096, the change made for real),
# untraced and under the PyTorch profiler, in interleaved rounds.
# Run on the GPU machine from the repository root; needs only python3 with torch.
# Writes under $OUT (or /tmp/queued_window): steps.tsv (variant, round, traced, step_ms), log.txt,
# before.json.gz / after.json.gz (the Kineto traces) and runs/*.json (every run's own JSON).
# Environment: ROUNDS (4), STEPS (20 untraced, the traced window holds 3).
# Analysed here, not there: bench/gpu/whatif/queued_window_check.py.
set -u
B=$(dirname "$0")
O=${OUT:-/tmp/queued_window}
ROUNDS=${ROUNDS:-4}
STEPS=${STEPS:-20}
mkdir -p "$O/runs"
LOG=$O/log.txt
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
} 2>&1 | tee "$LOG"
printf "variant\tround\ttraced\tstep_ms\n" > "$O/steps.tsv"
inner() { [ "$1" = before ] && echo 8192 || echo 4096; }
# Round r: before, after untraced, then before, after traced (the traces of the last round are kept):
# the GPU's clocks drift over a run of runs, so each comparison is made within the same rounds.
for r in $(seq 1 "$ROUNDS"); do
  for v in before after; do
    j=$O/runs/$v.$r.json
    timeout 120 python3 "$B/queued_window.py" --inner "$(inner $v)" --steps "$STEPS" --json "$j" >> "$LOG" 2>&1
    python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print(f\"$v\t$r\tno\t{t['step_ms']:.4f}\")" "$j" >> "$O/steps.tsv"
  done
  for v in before after; do
    j=$O/runs/$v.$r.traced.json
    timeout 120 python3 "$B/queued_window.py" --inner "$(inner $v)" --steps 3 --profile "$O/$v.json.gz" --json "$j" >> "$LOG" 2>&1
    python3 -c "import json,sys; t=json.load(open(sys.argv[1])); print(f\"$v\t$r\tyes\t{t['step_ms']:.4f}\")" "$j" >> "$O/steps.tsv"
  done
done
cat "$O/steps.tsv" | tee -a "$LOG"
ls -la "$O" | tee -a "$LOG"
