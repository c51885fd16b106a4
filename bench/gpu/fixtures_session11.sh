#!/usr/bin/env bash
# Makes, on the GPU host in one device call, real-world fixtures from the Llama decode workload of the
# bundled tests/fixtures/nsys/llama_decode_h200 trace (../shared/tools/llama_decode_workload.py, random-
# init Llama, bf16; defaults PROMPT=512, GEN=64 decode steps, BS=1), each step independent of the others:
#   kineto    the PyTorch-profiler sibling: the same workload with TORCHPROF=... (record_shapes=True)
#   pysample  nsys with -t cuda,nvtx,python-gil, CPU sampling, Python sampling and Python backtraces of
#             CUDA calls taking 10 us or more (the first option set nsys accepts, from the list below),
#             captured from the measured run's first NVTX range (measure:prefill) to the end, the
#             window of the kineto trace; exported with NVTX payloads (the Python frames), where
#             `nsys export` can; and the `nsys stats` reports about sampling or the GIL, where nsys has any
#   emit_nvtx nsys (--trace=cuda,nvtx) of bench/gpu/llama_decode_emit_nvtx.py: the same workload with its
#             measured decode loop inside torch.autograd.profiler.emit_nvtx(record_shapes=True)
#   bs8       nsys with the bundled trace's command (--trace=cuda,nvtx), BS=8
# A kineto, emit_nvtx or pysample output whose gzip is over COMMIT_MAX bytes (7,000,000: about the
# bundled trace's 6.9 MB) is made again with GEN=16 once every step has run, while time is left (bs8
# keeps GEN=64: it is the bundled trace's pair for diff tests). Then bench/gpu/gold_collect.sh
# collects the nsys gold of the three nsys fixtures (the versions to commit).
#
# Every command line, its exit code and seconds are logged (meta/commands.txt); nsys's messages are in
# meta/logs/. Results in $OUT (at most 8 files back, 16 MiB each, 64 MiB together; what does not fit is
# listed in summary.txt):
#   meta.tgz                 summary.txt, commands.txt, env.txt (GPU, driver, versions), logs/, each
#                            export's table counts, the Kineto and emit_nvtx checks, nsys's help texts,
#                            llama_pysample*_stats/ (the sampling/GIL stats CSVs)
#   <name>.sqlite.gz         the exports (llama_bs8, llama_emit_nvtx, llama_pysample; _gen16 when remade)
#   kineto_gen<N>.json.gz    the PyTorch-profiler traces
#   gold.tgz[.aa ...]        gold_collect.sh's gold: <fixture>/gold/... (cat the parts, then untar)
#
# On the development machine first: mkdir -p .gpu && cp -r /work/shared/tools .gpu/
# then: run(command="bash bench/gpu/fixtures_session11.sh", carry=[".gpu/tools"], kind="nvidia-h200",
#           timeout_s=600)
# FIXTURES_STEPS (default "bs8 kineto emit_nvtx pysample"): the steps to run; gold is collected for the
# nsys fixtures made in this run.
# FIXTURES_DEADLINE_S (default 500): seconds after the start by which packing begins; no step starts
# a command that could run past it.
set -uo pipefail
bench_gpu=$(cd "$(dirname "$0")" && pwd)  # not "here": gpu-nsys-env.sh sets its own
repo=$(cd "$bench_gpu/../.." && pwd)
out=${OUT:-/tmp/fixtures_out}
work=${FIXTURES_WORK:-/tmp/fixtures_work}
deadline=${FIXTURES_DEADLINE_S:-500}
commit_max=${COMMIT_MAX:-7000000}
short_gen=16
steps=${FIXTURES_STEPS:-bs8 kineto emit_nvtx pysample}
workload=$repo/.gpu/tools/llama_decode_workload.py
emit_workload=$bench_gpu/llama_decode_emit_nvtx.py
rm -rf "$work"
mkdir -p "$out" "$work/meta/logs"
meta=$work/meta
commands=$meta/commands.txt
summary=$meta/summary.txt
: > "$commands"
: > "$summary"

say() { echo "$*" | tee -a "$summary"; }
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
# Seconds a command may run: its own cap, or less so as to end before the deadline (0: do not start).
budget() { local left=$((deadline - SECONDS)); [ "$left" -lt 20 ] && { echo 0; return; }; [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }
# logged LABEL CAP_S COMMAND...: runs COMMAND under a time limit, its output in meta/logs/LABEL.log;
# the command line goes to commands.txt with its exit code and seconds.
logged() {
  local label=$1 limit; limit=$(budget "$2"); shift 2
  { printf '%s [%s] $' "$(date -u +%T)" "$label"; printf ' %q' "$@"; echo; } >> "$commands"
  if [ "$limit" = 0 ]; then echo "    -> not started: too close to the deadline" >> "$commands"; return 124; fi
  local t=$SECONDS rc
  timeout "$limit" "$@" > "$meta/logs/$label.log" 2>&1; rc=$?
  echo "    -> rc=$rc in $((SECONDS - t)) s (limit $limit s)" >> "$commands"
  return $rc
}
# nsys's progress bars, cut to their last state, and the lines that matter.
log_gist() { tr '\r' '\n' < "$meta/logs/$1.log" | grep -v '^\s*$\|^\[[0-9]/\|Processing [0-9]* events' | grep -i "$2" | head -"${3:-8}"; }
# Each table of an export with its row count; the export's product and schema versions.
tables() {
  python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for (v,) in c.execute("select value from META_DATA_EXPORT where name in ('EXPORT_PRODUCT_VERSION','EXPORT_SCHEMA_VERSION')"):
    print("version", v)
for (t,) in c.execute("select name from sqlite_master where type='table' order by name"):
    print(t, c.execute(f'select count(*) from "{t}"').fetchone()[0])
PY
}
# FILE.gz made in the background (the steps run in subshells: a marker file, not a pid, says it is
# under way); wait_gzips waits for all of them.
gzip_bg() { touch "$1.gz.pending"; ( gzip -9 -n -c "$1" > "$1.gz.tmp" && mv "$1.gz.tmp" "$1.gz"; rm -f "$1.gz.pending" ) & }
wait_gzips() {
  for _ in $(seq 1 240); do compgen -G "$work/*.pending" > /dev/null || return 0; sleep 1; done
  say "gzip still running after 240 s: $(ls "$work"/*.pending)"
}

# profile_export NAME "ENV=V ..." NSYS_PROFILE_ARGS... PROGRAM...: nsys profile, then the SQLite export
# (gzipped in the background) and its table counts.
profile_export() {
  local name=$1 envs=$2; shift 2
  rm -f "$work/$name.nsys-rep" "$work/$name.sqlite" "$work/$name.sqlite.gz"
  # shellcheck disable=SC2086
  logged "$name.profile" 300 env $envs "$NSYS" profile --force-overwrite=true -o "$work/$name" "$@" || return 1
  [ -f "$work/$name.nsys-rep" ] || { say "$name: nsys wrote no $name.nsys-rep"; return 1; }
  # NVTX payloads (Python sampling's and backtraces' frames are binary NVTX payloads) are left out
  # of the export unless asked for; the first run of this script (2026-11-23) lacked them.
  local payloads=()
  grep -q -- '--include-blobs' "$meta/nsys_export_help.txt" && payloads+=(--include-blobs=true)
  grep -q -- '--include-json' "$meta/nsys_export_help.txt" && payloads+=(--include-json=true)
  logged "$name.export" 200 "$NSYS" export --type sqlite "${payloads[@]}" --force-overwrite=true -o "$work/$name.sqlite" "$work/$name.nsys-rep" ||
    logged "$name.export_plain" 200 "$NSYS" export --type sqlite --force-overwrite=true -o "$work/$name.sqlite" "$work/$name.nsys-rep" || return 1
  tables "$work/$name.sqlite" > "$meta/$name.tables.txt" 2>&1
  gzip_bg "$work/$name.sqlite"
  say "$name: export $(size_of "$work/$name.sqlite") bytes; $(log_gist "$name.profile" 'TTFT_ms\|warn\|error\|fail\|not supported' 6 | tr '\n' ' ')"
}

step_env() {
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvidia-smi | sed -n 3p
    "$NSYS" --version
    python3 -c "import sys, torch, transformers; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__)"
    uname -r; nproc
    echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
  } > "$meta/env.txt" 2>&1
  cat "$meta/env.txt" | tee -a "$summary"
  "$NSYS" profile --help > "$meta/nsys_profile_help.txt" 2>&1
  "$NSYS" stats --help-reports > "$meta/nsys_stats_reports.txt" 2>&1
  "$NSYS" analyze --help-rules > "$meta/nsys_analyze_rules.txt" 2>&1
  "$NSYS" export --help > "$meta/nsys_export_help.txt" 2>&1
  say "nsys export's payload options: $(grep -o -- '--include-[a-z-]*' "$meta/nsys_export_help.txt" | sort -u | tr '\n' ' ')"
  say "nsys profile --help: $(grep -c . "$meta/nsys_profile_help.txt") lines; python options: $(grep -o -- '--python-[a-z-]*' "$meta/nsys_profile_help.txt" | sort -u | tr '\n' ' ')"
}

step_bs8() {  # GEN
  profile_export "llama_bs8${2:-}" "BS=8 GEN=$1" --trace=cuda,nvtx python3 "$workload"
}

step_emit_nvtx() {  # GEN [SUFFIX]
  local name=llama_emit_nvtx${2:-}
  profile_export "$name" "GEN=$1" --trace=cuda,nvtx python3 "$emit_workload" || return 1
  # emit_nvtx's ranges: "aten::NAME, seq = N, op_id = N, sizes = [[...]], ..." (the text is stored in
  # NVTX_EVENTS.text or, registered, in StringIds).
  python3 - "$work/$name.sqlite" > "$meta/$name.check.txt" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = "select coalesce(e.text, s.value) from NVTX_EVENTS e left join StringIds s on s.id = e.textId where e.eventType = 59"
texts = [t for (t,) in c.execute(q) if t]
aten = [t for t in texts if t.startswith("aten::")]
shaped = [t for t in aten if "sizes = [" in t]
print(f"push/pop ranges {len(texts)}, aten:: {len(aten)}, with sizes {len(shaped)}")
for name in ("aten::mm", "aten::linear", "aten::addmm", "aten::matmul"):
    ex = [t for t in shaped if t.startswith(name + ",")]
    print(name, len(ex), ex[0][:200] if ex else "")
PY
  say "$name: $(head -1 "$meta/$name.check.txt")"
}

step_kineto() {  # GEN
  local name=kineto_gen$1
  logged "$name" 300 env GEN="$1" TORCHPROF="$work/$name.json" python3 "$workload" || return 1
  python3 - "$work/$name.json" > "$meta/$name.check.txt" 2>&1 <<'PY'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
cats = collections.Counter(e.get("cat") for e in ev)
print("complete events by category:", dict(cats.most_common()))
for name in ("aten::mm", "aten::linear", "aten::addmm", "aten::matmul", "aten::bmm"):
    ops = [e for e in ev if e.get("cat") == "cpu_op" and e["name"] == name]
    dims = [e for e in ops if "Input Dims" in e.get("args", {})]
    print(f"{name}: {len(ops)} ops, {len(dims)} with Input Dims", dims[0]["args"]["Input Dims"] if dims else "")
steps = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].endswith("decode_step")]
print("user_annotation decode steps:", len(steps), "; top-level keys:", sorted(k for k in doc if k != "traceEvents"))
PY
  gzip_bg "$work/$name.json"
  say "$name: json $(size_of "$work/$name.json") bytes; $(log_gist "$name" TTFT_ms 1); $(grep -m1 '^aten::linear\|^aten::mm' "$meta/$name.check.txt")"
}

step_pysample() {  # GEN [SUFFIX]: the first option set nsys takes (or the one that worked before)
  local name=llama_pysample${2:-} opts
  # --python-backtrace needs the CUDA backtraces it hangs on (--cudabacktrace; nsys's default threshold,
  # 80 us, leaves nearly no launch); torch's NVTX strings are not registered, so the capture range
  # needs NSYS_NVTX_PROFILER_REGISTER_ONLY=0. (--sample=cpu, which the brief named, is accepted too:
  # the first run took it; --help lists process-tree.) The last set is the first run's, uncaptured.
  local capture="--capture-range=nvtx --nvtx-capture=measure:prefill --capture-range-end=none --env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0"
  local sets=(
    "--trace=cuda,nvtx,python-gil --sample=process-tree --cudabacktrace=all:10000 --python-backtrace=cuda --python-sampling=true $capture"
    "--trace=cuda,nvtx,python-gil --sample=process-tree --python-backtrace=cuda --python-sampling=true $capture"
    "--trace=cuda,nvtx,python-gil --sample=cpu --python-backtrace=cuda --python-sampling=true"
  )
  [ -f "$meta/pysample_options.txt" ] && sets=("$(cat "$meta/pysample_options.txt")")
  for opts in "${sets[@]}"; do
    # shellcheck disable=SC2086
    if profile_export "$name" "GEN=$1" $opts python3 "$workload"; then
      echo "$opts" > "$meta/pysample_options.txt"
      say "$name: nsys took: $opts"
      break
    fi
    say "$name: FAILED with: $opts: $(log_gist "$name.profile" . 3 | tr '\n' ' ')"
    [ "$(budget 100)" -ge 100 ] || return 1
  done
  [ -f "$work/$name.sqlite" ] || return 1
  # What the Python-related NVTX events hold: per domain and type, how many carry a payload.
  python3 - "$work/$name.sqlite" > "$meta/$name.check.txt" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
domains = {d: t for d, t in c.execute("select domainId, text from NVTX_EVENTS where eventType = 75")}
q = ("select domainId, eventType, count(*), count(binaryData), count(jsonText) + count(jsonTextId), min(start), max(start) "
     "from NVTX_EVENTS group by 1, 2")
for d, t, n, blobs, json, lo, hi in c.execute(q):
    print(f"domain {d} ({domains.get(d, 'default')}) type {t}: {n} events, {blobs} with binaryData, {json} with JSON, start {lo}..{hi}")
for (k,) in c.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME where callchainId is not null"):
    print("CUDA API calls with a callchain:", k)
PY
  say "$name: $(tr '\n' ';' < "$meta/$name.check.txt")"
  # nsys stats reports about sampling, the GIL or Python, where this nsys has any (2025.3.1's
  # reports/*.py hold none): each saved as CSV, as the gold files are.
  mkdir -p "$meta/${name}_stats"
  local r reports
  reports=$(grep -oiE '^\s*[a-z0-9_]*(sampl|gil|python|callchain|backtrace|sched)[a-z0-9_]*' "$meta/nsys_stats_reports.txt" | tr -d ' ' | sort -u)
  say "$name: sampling/GIL stats reports in this nsys: ${reports:-none}"
  for r in $reports; do
    (cd "$meta/${name}_stats" && logged "$name.stats.$r" 60 "$NSYS" stats --report "$r" --format csv --force-overwrite=true --output x "$work/$name.sqlite")
  done
}

# An output over commit_max is made again with GEN=$short_gen (under NAME_gen16), while time is left.
remake_short_if_big() {  # STEP FILE
  [ -f "$2" ] || return 0
  [ "$(size_of "$2")" -gt "$commit_max" ] || return 0
  say "$(basename "$2"): $(size_of "$2") bytes, over $commit_max: made again with GEN=$short_gen"
  if [ "$1" = kineto ]; then step_kineto "$short_gen"; else "step_$1" "$short_gen" "_gen$short_gen"; fi
}

# The version of each nsys fixture to commit: GEN=64 where its gzip fits, else GEN=16.
chosen() {  # NAME -> path of the .sqlite.gz to commit
  local full=$work/$1.sqlite.gz short=$work/$1_gen$short_gen.sqlite.gz
  if [ -f "$full" ] && [ "$(size_of "$full")" -le "$commit_max" ]; then echo "$full"
  elif [ -f "$short" ]; then echo "$short"
  elif [ -f "$full" ]; then echo "$full"; fi
}

step_gold() {
  local names=() n f
  for n in bs8 emit_nvtx pysample; do
    f=$(chosen "llama_$n")
    [ -n "$f" ] || continue
    mkdir -p "$repo/tests/fixtures/nsys/llama_decode_${n}_h200"
    cp "$f" "$repo/tests/fixtures/nsys/llama_decode_${n}_h200/trace.sqlite.xz"
    names+=("llama_decode_${n}_h200")
    say "gold: llama_decode_${n}_h200 from $(basename "$f")"
  done
  [ ${#names[@]} -gt 0 ] || return 1
  GOLD_JOBS=$(nproc) logged gold 200 bash "$bench_gpu/gold_collect.sh" --dest "$work/gold" --logs "$meta/gold_logs" "${names[@]}"
  say "gold: $(log_gist gold 'gold:' 10 | tr '\n' ' ')"
  tar czf "$work/gold.tgz" -C "$work/gold" .
}

# ---------------------------------------------------------------------------------------------------
source "$repo/.gpu/tools/gpu-nsys-env.sh" > "$meta/logs/nsys_env.log" 2>&1
if [ ! -x "${NSYS:-}" ]; then say "no nsys: $(cat "$meta/logs/nsys_env.log")"; fi
step_env
say "== primary steps (GEN=64)"
for s in $steps; do
  ( "step_$s" 64 ) || say "step $s (GEN=64) FAILED (see meta/logs, commands.txt)"
  say "   t=$SECONDS s"
done
wait_gzips
say "== sizes: $(cd "$work" && ls -l ./*.gz 2>/dev/null | awk '{printf "%s=%s ", $9, $5}')"
say "== remakes with GEN=$short_gen of outputs over $commit_max bytes"
for s in emit_nvtx pysample; do
  ( remake_short_if_big "$s" "$work/llama_$s.sqlite.gz" ) || say "remake $s FAILED"
done
( remake_short_if_big kineto "$work/kineto_gen64.json.gz" ) || say "remake kineto FAILED"
wait_gzips
say "   t=$SECONDS s"
say "== gold"
( step_gold ) || say "gold FAILED"
say "   t=$SECONDS s"

# ---------------------------------------------------------------------------------------------------
# Packing, most wanted first: each group whole (a file over 15 MiB is cut into parts) while the files
# number at most 8 and weigh at most 62 MiB together.
say "== packing"
candidates=()
for n in bs8 emit_nvtx pysample; do f=$(chosen "llama_$n"); [ -n "$f" ] && candidates+=("$f"); done
if [ -f "$work/kineto_gen64.json.gz" ] && [ "$(size_of "$work/kineto_gen64.json.gz")" -le "$commit_max" ]; then
  candidates+=("$work/kineto_gen64.json.gz")
else
  for f in "$work/kineto_gen$short_gen.json.gz" "$work/kineto_gen64.json.gz"; do [ -f "$f" ] && candidates+=("$f"); done
fi
[ -f "$work/gold.tgz" ] && candidates+=("$work/gold.tgz")
for f in "$work"/llama_*.sqlite.gz; do  # the other versions, last
  case " ${candidates[*]} " in *" $f "*) ;; *) [ -f "$f" ] && candidates+=("$f") ;; esac
done
count=1; total=0; cap=$((62 * 1024 * 1024)); part=$((15 * 1024 * 1024))
for f in "${candidates[@]}"; do
  s=$(size_of "$f"); parts=$(( (s + part - 1) / part ))
  if [ $((count + parts)) -gt 8 ] || [ $((total + s)) -gt $cap ]; then say "left out: $(basename "$f") ($s bytes)"; continue; fi
  if [ "$parts" -gt 1 ]; then split -b "$part" "$f" "$out/$(basename "$f")."; else cp "$f" "$out/"; fi
  count=$((count + parts)); total=$((total + s)); say "back: $(basename "$f") ($s bytes, $parts file(s))"
done
say "== done at t=$SECONDS s"
tar czf "$out/meta.tgz" -C "$work" meta
