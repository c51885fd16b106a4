#!/bin/bash
# Issue 44's traces: Hugging Face generate() (hf_generate.py here: a small random-init Llama and Mixtral, bf16)
# at batch 1 and 4, each run untraced (the program's truth alone), under `kernscope record`, under nsys and
# under torch.profiler (default options), plus torch.profiler with stacks and shapes (--stack) for both models at
# batch 1. Every run writes the program's own truth (forwards, tokens per forward, TTFT, per-token period) for
# the run it was made in; the log gets today's `kernscope steps` and `kernscope info` of each trace.
#
# usage: bench/gpu/steps/run.sh prepare     here, from the repository root: fills .gpu/ (carry .gpu)
#        bench/gpu/steps/run.sh             on the GPU machine, from the repository root
# `prepare` is bench/gpu/accounting/run.sh prepare (stripped kernscope + tracer + libfmt/libsimdjson/libsqlite3 in
# .gpu/pack.tar.xz) plus ../shared/tools/gpu-nsys-env.sh and its deb/ in .gpu/tools/ (nsys's missing libdw).
# Writes under $OUT (or /tmp/steps/out): hf_generate.tar (NAME.sqlite.xz for record, NAME.nsys.sqlite.xz,
# NAME.pt.trace.json.gz, NAME.truth.json; split into hf_generate.tar.partNN when over 15 MiB) and steps.log
# is written by the caller (pipe this script's output to it).
# Environment: BUDGET_S (default 480): no new run starts once fewer than 45 s of it (90 s for nsys) are left; CALLS, NEW, PROMPT
# (3, 10, 64); STACK_CALLS (2: the --stack runs make two calls, one warm-up and one after the gap, to keep them
# small); ONLY (a space-separated subset of the run names below).
set -u
if [ "${1:-}" = prepare ]; then
  bash bench/gpu/accounting/run.sh prepare || exit 1
  mkdir -p .gpu/tools || exit 1
  cp ../shared/tools/gpu-nsys-env.sh .gpu/tools/ && cp -r ../shared/tools/deb .gpu/tools/ || exit 1
  du -sh .gpu
  exit 0
fi

T0=$(date +%s)
BUDGET_S=${BUDGET_S:-480}
CALLS=${CALLS:-3}; NEW=${NEW:-10}; PROMPT=${PROMPT:-64}; STACK_CALLS=${STACK_CALLS:-2}
if [ ! -x .gpu/bin/kernscope ] && [ -f .gpu/pack.tar.xz ]; then
  python3 -c "import tarfile; tarfile.open('.gpu/pack.tar.xz').extractall('.gpu')" || exit 1
fi
source bench/gpu/tracer_env.sh          # R, K, KERNSCOPE_TRACER_LIB
source .gpu/tools/gpu-nsys-env.sh       # NSYS, LD_LIBRARY_PATH (libdw)
P=$R/bench/gpu/steps/hf_generate.py
W=/tmp/steps/run
O=${OUT:-/tmp/steps/out}
rm -rf "$W" && mkdir -p "$W/keep" "$O" || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cd "$W" || exit 1

echo "== machine ($(date -u +%FT%TZ))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvidia-smi | grep -o "CUDA Version: [0-9.]*"
nvcc --version | tail -1
python3 -c "import sys, torch, transformers; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__)" 2>&1 | tail -1
"$NSYS" --version
echo "kernscope: $($K --version 2>&1) md5 $(md5sum "$R/.gpu/bin/kernscope" | cut -c1-12)  tracer md5 $(md5sum "$KERNSCOPE_TRACER_LIB" | cut -c1-12)"

left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
room() {  # room NAME [SECONDS]: is there time for one more run (45 s, or SECONDS)?
  if [ "$(left)" -lt "${2:-45}" ]; then echo "[$1] skipped: $(left) s of the budget left"; return 1; fi
}
show() {  # show NAME TRACE: today's steps and info (for orientation; expected wrong)
  echo "[$1] kernscope steps:"; timeout 60 $K steps -q "$2" 2>&1 | head -40
  echo "[$1] kernscope info:"; timeout 60 $K info -q "$2" 2>&1 | head -40
}
prog() {  # prog NAME ARGS...: the program's own lines from NAME.log
  grep -E "^(call|experts|token clock|generate refused|torch.profiler trace)|Error|error" "$W/$1.log" | head -20 | sed "s/^/[$1]   /"
}

untraced() {  # untraced NAME ARGS...
  local n=$1; shift; room "$n" || return
  local t=$(date +%s.%N)
  timeout 150 python3 "$P" "$@" --truth "keep/$n.truth.json" > "$n.log" 2>&1
  echo "[$n] untraced exit $? ($(python3 -c "print(round($(date +%s.%N)-$t,1))") s)"; prog "$n"
}
record() {  # record NAME ARGS...
  local n=$1; shift; room "$n" || return
  local t=$(date +%s.%N)
  timeout 150 $K record -o "$W/$n-%p.sqlite" -- python3 "$P" "$@" --truth "keep/$n.truth.json" > "$n.log" 2>&1
  echo "[$n] record exit $? ($(python3 -c "print(round($(date +%s.%N)-$t,1))") s); files: $(ls "$W/$n"-*.sqlite 2>/dev/null | xargs -n1 basename 2>/dev/null | tr '\n' ' ')"
  prog "$n"; grep -i "kernscope" "$n.log" | head -5 | sed "s/^/[$n]   /"
  local tr; tr=$(ls -S "$W/$n"-*.sqlite 2>/dev/null | head -1)
  [ -n "$tr" ] || { echo "[$n] no trace"; return 1; }
  mv "$tr" "keep/$n.sqlite"; echo "[$n] trace $(stat -c %s "keep/$n.sqlite") bytes"
  show "$n" "keep/$n.sqlite"
}
nsys_run() {  # nsys_run NAME ARGS...
  local n=$1; shift; room "$n" 90 || return
  local t=$(date +%s.%N)
  timeout 200 "$NSYS" profile --trace=cuda,nvtx --force-overwrite=true -o "$W/$n" python3 "$P" "$@" --truth "keep/$n.truth.json" > "$n.log" 2>&1
  echo "[$n] nsys profile exit $? ($(python3 -c "print(round($(date +%s.%N)-$t,1))") s)"; prog "$n"
  [ -f "$W/$n.nsys-rep" ] || { echo "[$n] no report"; tail -5 "$n.log"; return 1; }
  timeout 120 "$NSYS" export --type sqlite --force-overwrite=true -o "keep/$n.nsys.sqlite" "$W/$n.nsys-rep" > "$n.export.log" 2>&1
  echo "[$n] export exit $? ($(python3 -c "print(round($(date +%s.%N)-$t,1))") s in all): $(stat -c %s "keep/$n.nsys.sqlite" 2>/dev/null) bytes (report $(stat -c %s "$W/$n.nsys-rep") bytes)"
  [ -f "keep/$n.nsys.sqlite" ] && show "$n" "keep/$n.nsys.sqlite"
}
torchprof() {  # torchprof NAME ARGS... (ARGS may hold --stack)
  local n=$1; shift; room "$n" || return
  local t=$(date +%s.%N)
  timeout 150 python3 "$P" "$@" --torchprof "keep/$n.pt.trace.json" --truth "keep/$n.truth.json" > "$n.log" 2>&1
  echo "[$n] torch.profiler exit $? ($(python3 -c "print(round($(date +%s.%N)-$t,1))") s)"; prog "$n"
  [ -f "keep/$n.pt.trace.json" ] && show "$n" "keep/$n.pt.trace.json"
}

RUNS="dense_bs1 moe_bs1 dense_bs4 moe_bs4"
for cfg in $RUNS; do
  m=${cfg%_bs*}; b=${cfg#*_bs}
  A=(--model "$m" --batch "$b" --prompt "$PROMPT" --new "$NEW" --calls "$CALLS")
  echo "== $cfg ($(left) s of the budget left)"
  for tool in untraced record nsys torchprof; do
    case " ${ONLY:-$tool} " in *" $tool "*|*" ${cfg}_$tool "*) ;; *) continue ;; esac
    case $tool in
      untraced) untraced "${cfg}_untraced" "${A[@]}" ;;
      record) record "${cfg}_record" "${A[@]}" ;;
      nsys) nsys_run "${cfg}_nsys" "${A[@]}" ;;
      torchprof) torchprof "${cfg}_torchprof" "${A[@]}" ;;
    esac
  done
done
for cfg in dense_bs1 moe_bs1; do
  case " ${ONLY:-stack} " in *" stack "*|*" ${cfg}_torchprof_stack "*) ;; *) continue ;; esac
  m=${cfg%_bs*}
  echo "== ${cfg}_torchprof_stack ($(left) s of the budget left)"
  torchprof "${cfg}_torchprof_stack" --model "$m" --batch 1 --prompt "$PROMPT" --new "$NEW" --calls "$STACK_CALLS" --stack
done

echo "== compressing ($(left) s of the budget left)"
cd keep || exit 1
for f in *.sqlite; do [ -f "$f" ] && xz -9 "$f" & done
for f in *.json; do case $f in *.truth.json) ;; *) gzip -9 "$f" & ;; esac; done
wait
ls -l
cd "$W" || exit 1
tar cf "$O/hf_generate.tar" -C keep . || exit 1
sz=$(stat -c %s "$O/hf_generate.tar")
echo "hf_generate.tar: $sz bytes"
if [ "$sz" -gt 15728640 ]; then
  split -b 15M -d "$O/hf_generate.tar" "$O/hf_generate.tar.part" && rm "$O/hf_generate.tar"
  ls -l "$O"
fi
echo "== done in $(( $(date +%s) - T0 )) s"
