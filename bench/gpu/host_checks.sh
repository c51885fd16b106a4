#!/bin/bash
# The host side (issue 19) on the GPU machine, each step printing what it found beside what to expect.
# Run from the repository root on the GPU machine (see tracer_env.sh: .gpu/bin holds kernscope and the
# tracer). Needs torch + transformers (the eager Llama of ../shared/tools/llama_decode_workload.py).
#
# usage: bench/gpu/host_checks.sh [CHECK...]     (no CHECK: all of them, in this order)
#   llama        kernscope record --sample cpu on the eager Llama (GEN=64): `kernscope host` per decode
#                step (expect: the thread that launches, decode steps ~10-15 ms on the host, functions
#                under transformers' LlamaForCausalLM.forward / LlamaDecoderLayer.forward, the
#                "[Python garbage collection]" frame rare), `report` and the collapsed stacks
#   pyspy        the same workload under py-spy (when pip can install it) for plausibility: its top
#                functions by own time beside kernscope's (same order expected, shares within ~10 points)
#   cost         whole-program cost of the sampler: TPOT with `record` alone vs `record --sample cpu`
#                vs `record --sample cpu:1000`, interleaved, 3 rounds (expect: 100 Hz within noise)
#   nsys         an nsys export with -t cuda,nvtx,python-gil --sample=cpu: `kernscope host` reads its
#                CPU samples and GIL ranges (GIL waits per decode step; compare the NVTX sums of
#                'Waiting for GIL' with nsys stats -r nvtx_sum on the same file)
ALL="llama pyspy cost nsys"
CHECKS="${*:-$ALL}"
for c in $CHECKS; do
  case " $ALL " in
    *" $c "*) ;;
    *) echo "unknown check: $c" >&2; exit 2 ;;
  esac
done
source "$(dirname "$0")/tracer_env.sh"
W=$R/.gpu/tools/llama_decode_workload.py
[ -f "$W" ] || W=$R/../shared/tools/llama_decode_workload.py
cd /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

check_llama() {
  rm -f /tmp/h-*.sqlite
  GEN=64 $K record --sample cpu -o /tmp/h-%p.sqlite -- python3 "$W" 2>&1 | tail -3
  local f; f=$(ls -t /tmp/h-*.sqlite | head -1)
  echo "host info: $(q "$f" "select name, value from KERNSCOPE_HOST_INFO")"
  $K host --step-range measure:decode_step --limit 12 "$f"
  $K host --step-range measure:decode_step --format collapsed "$f" | sort -k2 -n -r -t' ' | head -5 | cut -c1-400
  $K report "$f" | tail -25
}

check_pyspy() {
  python3 -m pip install -q py-spy >/dev/null 2>&1 || { echo "py-spy: cannot install, skipped"; return; }
  GEN=64 python3 -m py_spy record -r 100 -f raw -o /tmp/pyspy.txt -- python3 "$W" >/dev/null 2>&1
  echo "py-spy top own-time frames (raw stacks, innermost last):"
  python3 - <<'PY'
import collections
own = collections.Counter()
total = 0
for line in open("/tmp/pyspy.txt"):
    stack, _, n = line.rstrip().rpartition(" ")
    leaf = stack.split(";")[-1].split(" (")[0]
    own[leaf] += int(n); total += int(n)
for name, n in own.most_common(10):
    print(f"  {100.0 * n / total:5.1f} %  {name}")
PY
}

tpot() { grep -o "TPOT[^,]*" | head -1; }
check_cost() {
  for round in 1 2 3; do
    echo "round $round: record: $(GEN=64 $K record -o /tmp/c0-%p.sqlite -- python3 "$W" 2>/dev/null | tpot)"
    echo "round $round: record --sample cpu: $(GEN=64 $K record --sample cpu -o /tmp/c1-%p.sqlite -- python3 "$W" 2>/dev/null | tpot)"
    echo "round $round: record --sample cpu:1000: $(GEN=64 $K record --sample cpu:1000 -o /tmp/c2-%p.sqlite -- python3 "$W" 2>/dev/null | tpot)"
  done
  local f; f=$(ls -t /tmp/c1-*.sqlite | head -1)
  echo "sampler's own account (100 Hz): $(q "$f" "select name, value from KERNSCOPE_HOST_INFO where name like 'sampler%'")"
}

check_nsys() {
  [ -x "$NSYS" ] || { echo "nsys not found"; return; }
  GEN=16 "$NSYS" profile --force-overwrite=true -o /tmp/hn --trace=cuda,nvtx,python-gil --sample=cpu --python-sampling=true \
    python3 "$W" >/dev/null 2>&1
  "$NSYS" export --type sqlite --force-overwrite=true -o /tmp/hn.sqlite /tmp/hn.nsys-rep >/dev/null 2>&1
  $K host --step-range measure:decode_step --limit 10 /tmp/hn.sqlite
  echo "nsys nvtx_sum, GIL rows:"; "$NSYS" stats -r nvtx_sum --format csv /tmp/hn.sqlite 2>/dev/null | grep -i gil
}

for c in $CHECKS; do echo "== $c"; "check_$c"; done
