#!/usr/bin/env bash
# Bad input gets one clear line on stderr and exit code 2; never a crash, a hang or partial output.
set -u
K=$1
FIX=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
GOOD="$FIX/nsys/llama_decode_h200/trace.sqlite.xz"
failures=0

expect_fail() {  # expect_fail NAME EXPECTED_SUBSTRING -- ARGS...
  local name=$1 want=$2
  shift 3
  timeout 60 "$K" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$T/err")
  if [ "$rc" -ne 2 ]; then echo "FAIL $name: exit code $rc, want 2"; failures=$((failures + 1)); return; fi
  if [ "$lines" -ne 1 ]; then echo "FAIL $name: $lines lines on stderr, want 1"; cat "$T/err"; failures=$((failures + 1)); return; fi
  if ! grep -qF -- "$want" "$T/err"; then echo "FAIL $name: stderr lacks '$want':"; cat "$T/err"; failures=$((failures + 1)); return; fi
  if [ -s "$T/out" ]; then echo "FAIL $name: wrote to stdout on error"; failures=$((failures + 1)); return; fi
  echo "ok   $name: $(cat "$T/err")"
}

printf 'not a database at all\n' >"$T/text.sqlite"
: >"$T/empty.sqlite"
head -c 3000000 <(xz -dc "$GOOD") >"$T/truncated.sqlite"
xz -dc "$GOOD" | head -c 3000000 | gzip -1 | head -c 200000 >"$T/truncated.sqlite.gz"
printf 'garbage' | gzip >"$T/garbage.sqlite.gz"
python3 - "$T/notnsys.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("create table t (x)"); c.commit()
PY
python3 - "$T/nocuda.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""create table META_DATA_EXPORT (name, value); create table StringIds (id integer primary key, value);
create table NVTX_EVENTS (start, end, eventType, text, globalTid); insert into NVTX_EVENTS values (0, 10, 59, 'x', 1);""")
c.commit()
PY

expect_fail missing_file "no such file" -- stats /nonexistent/trace.sqlite
expect_fail not_sqlite "unrecognized trace format" -- stats "$T/text.sqlite"
expect_fail empty_file "empty file" -- stats "$T/empty.sqlite"
expect_fail not_nsys "not an Nsight Systems export" -- stats "$T/notnsys.sqlite"
expect_fail truncated "truncated or corrupted" -- stats -r cuda_api_trace "$T/truncated.sqlite"
expect_fail truncated_gz "gzip" -- stats "$T/truncated.sqlite.gz"
expect_fail garbage_gz "holds neither an SQLite database nor JSON" -- stats "$T/garbage.sqlite.gz"
# The same for xz: cut short, damaged, not a trace inside.
xz -dc "$GOOD" | head -c 4000000 | xz -1 -c >"$T/whole_start.sqlite.xz"
head -c 100000 "$T/whole_start.sqlite.xz" >"$T/truncated.sqlite.xz"
expect_fail truncated_xz "truncated xz data" -- stats "$T/truncated.sqlite.xz"
python3 - "$T/whole_start.sqlite.xz" "$T/damaged.sqlite.xz" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(data) // 3, len(data) // 3 + 64):
    data[i] ^= 0x5A
open(sys.argv[2], "wb").write(data)
PY
expect_fail damaged_xz "corrupted xz data" -- stats "$T/damaged.sqlite.xz"
printf 'garbage' | xz -c >"$T/garbage.sqlite.xz"
expect_fail garbage_xz "holds neither an SQLite database nor JSON" -- stats "$T/garbage.sqlite.xz"
# A JSON trace cut short inside its compressed stream (a broken copy, a killed profiler) is an error
# for every command that reads one trace; --partial reads it up to its last complete event, and the
# report says so on its first line.
cp "$FIX/kineto/triton_example__triton_example.json.xz" "$T/whole.json.xz"
head -c "$(( $(stat -c %s "$T/whole.json.xz") / 2 ))" "$T/whole.json.xz" >"$T/cut.json.xz"
xz -dc "$FIX/kineto/llama_decode_h200_gen16.json.xz" | gzip -1 >"$T/whole.json.gz"
head -c "$(( $(stat -c %s "$T/whole.json.gz") / 2 ))" "$T/whole.json.gz" >"$T/half.json.gz"
expect_fail kineto_cut_xz_info "the file is cut short" -- info "$T/cut.json.xz"
expect_fail kineto_cut_gz_report "the file is cut short" -- report "$T/half.json.gz"
expect_fail kineto_cut_gz_moe "the file is cut short" -- moe "$T/half.json.gz"
if ! "$K" info --partial "$T/cut.json.xz" >"$T/cut.out" 2>&1 || ! grep -q "the file is cut short" "$T/cut.out"; then
  echo "FAIL kineto_cut_xz --partial: no 'the file is cut short' note:"; cat "$T/cut.out"; failures=$((failures + 1))
fi
if ! "$K" report --partial "$T/half.json.gz" >"$T/half.out" 2>/dev/null || ! head -1 "$T/half.out" | grep -q "PARTIAL: the file is cut short"; then
  echo "FAIL kineto_cut_gz report --partial: first line does not say partial:"; head -3 "$T/half.out"; failures=$((failures + 1))
else
  echo "ok   kineto_cut_gz report --partial: $(head -1 "$T/half.out" | cut -c1-120)"
fi
# Changes and options that name nothing kernscope knows (issue 47): one line naming the valid ones.
expect_fail whatif_unknown_class "is not an operation class (one of: gemm" -- whatif --change scale=nosuch:0.5 "$GOOD"
expect_fail whatif_unknown_roof_class "is not an operation class" -- whatif --change roof=nosuch "$GOOD"
expect_fail whatif_unknown_sync "is not a synchronization call (one of: cudaDeviceSynchronize" -- whatif --change no-sync=cudaFoo "$GOOD"
expect_fail account_unknown_option "kernscope account: error: unknown option --by" -- account --by x "$GOOD"
# kernscope fleet with the package but without its extra (pyarrow hidden): one line, not a worker's traceback.
VENV_PY="$(dirname "$K")/../../venv/bin/python"
if [ -x "$VENV_PY" ] && "$VENV_PY" -c "import kernscope.fleet" 2>/dev/null; then
  mkdir -p "$T/nopyarrow" && echo 'raise ImportError("No module named pyarrow")' >"$T/nopyarrow/pyarrow.py"
  PYTHONPATH="$T/nopyarrow" KERNSCOPE_PYTHON="$VENV_PY" expect_fail fleet_without_extra 'needs the Python package with its fleet extra' -- fleet "$FIX/ranks/tp2_decode_h200"
else
  echo "skip fleet_without_extra: no virtualenv with the package beside $K (make python)"
fi
expect_fail no_cuda "no CUDA data" -- stats "$T/nocuda.sqlite"
expect_fail unknown_report "unknown report" -- stats -r cuda_gpu_nonsense "$GOOD"
expect_fail bad_report_option "does not take the option" -- stats -r cuda_api_sum:base "$GOOD"
expect_fail bad_filter_time "invalid time" -- stats --filter-time 1x/2s "$GOOD"
expect_fail reversed_filter_time "start is after end" -- stats --filter-time 2s/1s "$GOOD"
expect_fail filter_without_slash "expected [START]/[END]" -- stats --filter-time 2s "$GOOD"
expect_fail nvtx_not_found "could not be found" -- stats --filter-nvtx nosuchrange "$GOOD"
expect_fail nvtx_index_out_of_range "could not be found" -- stats --filter-nvtx measure:prefill/1 "$GOOD"
expect_fail bad_format "unknown format" -- stats --format xml "$GOOD"
expect_fail bad_timeunit "invalid time unit" -- stats --timeunit fortnights "$GOOD"
expect_fail unknown_option "kernscope stats: error: unknown option --frobnicate (see kernscope stats --help)" -- stats --frobnicate "$GOOD"
expect_fail no_subcommand "kernscope --help" --
expect_fail unwritable_output "cannot write" -- stats -r cuda_api_sum -o /nonexistent/dir/out "$GOOD"
expect_fail info_missing "no such file" -- info /nonexistent.sqlite
expect_fail directory "is a directory" -- stats "$T"
# PyTorch profiler JSON: malformed, not a trace, a truncated gzip stream, an unrepairable event.
printf '{"schemaVersion": 1, "traceName": "x"}' | gzip >"$T/notrace.json.gz"
expect_fail kineto_no_events 'without "traceEvents"' -- report "$T/notrace.json.gz"
printf '{"traceEvents": [{"ph": "X", "ts": [}]}' >"$T/broken.json"
expect_fail kineto_broken_event "malformed trace event at byte 17" -- stats "$T/broken.json"
printf '{"traceEvents": 7}' >"$T/notarray.json"
expect_fail kineto_not_array '"traceEvents" is not an array' -- stats "$T/notarray.json"
# Empty traces exit alike whatever the format: a JSON trace with no complete event is an error.
printf '{"traceEvents": []}' >"$T/empty_events.json"
expect_fail kineto_empty "no complete trace event" -- info "$T/empty_events.json"
printf '{"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]}' >"$T/metadata_only.json"
expect_fail kineto_metadata_only "no complete trace event" -- stats "$T/metadata_only.json"
printf '[1, 2' >"$T/array.json"
expect_fail kineto_array_of_numbers "malformed trace event" -- info "$T/array.json"
xz -dc "$FIX/kineto/triton_example__triton_example.json.xz" | sed 's/"ph": "X",/"ph": "X",,/' >"$T/badkey.json"
expect_fail kineto_double_comma "malformed trace event" -- stats "$T/badkey.json"
expect_fail export_bad_format "unknown format 'svg' (expected perfetto or chrome)" -- export --format svg -o "$T/x.json" "$GOOD"
expect_fail export_unwritable "cannot write" -- export -o /nonexistent/dir/x.json.gz "$GOOD"
expect_fail record_no_command "no command to run" -- record
expect_fail record_not_found "command not found: no-such-program-xyz" -- record -- no-such-program-xyz
expect_fail record_unwritable "cannot write to /nonexistent" -- record -o /nonexistent/dir/t.sqlite -- true
expect_fail record_bad_api "--api must be default or all" -- record --api some -- true
expect_fail record_bad_graph_trace "--cuda-graph-trace must be node or graph" -- record --cuda-graph-trace nodes -- true
expect_fail record_bad_capture "--capture-range-end must be" -- record --capture-range cudaProfilerApi --capture-range-end later -- true
expect_fail record_bad_sample "--sample must be none, cpu or cpu:HZ" -- record --sample cpu:0 -- true
# Live capture (issue 30): sessions live in a folder of this test's own.
export KERNSCOPE_RUNTIME_DIR="$T/sessions"
expect_fail capture_bad_action "the action must be start, stop, status or window, not 'flush'" -- capture flush
expect_fail capture_no_session "no live capture session" -- capture start
expect_fail capture_gone_pid "no traced process 999999" -- capture status 999999
expect_fail capture_window_args "give --duration (e.g. 2s) or --steps N" -- capture window
expect_fail capture_bad_duration "--duration must be a positive time" -- capture window --duration 2x
mkdir -p "$T/sessions/old" && : >"$T/sessions/old/12345.sock"  # a killed process's leftover
expect_fail capture_stale "pid 12345 is gone" -- capture start old
expect_fail record_live_every "--for must be shorter than --every" -- record --every 1 --for 2 -- true
expect_fail record_live_when_alone "belong to live capture" -- record --when 2x -- true
expect_fail record_live_nsys "needs --backend kernscope" -- record --paused --backend nsys -- true
expect_fail record_between_windows_alone "belong to live capture" -- record --between-windows attached -- true
expect_fail record_between_windows_value "--between-windows: sometimes not in" -- record --paused --between-windows sometimes -- true
expect_fail record_between_windows_detached_alone "belong to live capture" -- record --between-windows detached -- true
# What --between-windows hands the tracer (its parser is unit-tested): the program sees it; without the option
# a KERNSCOPE_PAUSED_DETACH of the user's environment holds. Cases: NAME USER_ENV OPTION WANT.
while read -r name user option want; do
  user_env=(); [ "$user" != - ] && user_env=(KERNSCOPE_PAUSED_DETACH="$user")
  opts=(); [ "$option" != - ] && opts=(--between-windows "$option")
  env "${user_env[@]}" KERNSCOPE_RUNTIME_DIR="$T/sessions" timeout 60 "$K" record --paused "${opts[@]}" -- sh -c 'echo "child sees ${KERNSCOPE_PAUSED_DETACH:-unset}"' >"$T/out" 2>"$T/err"
  if grep -qx "child sees $want" "$T/out"; then echo "ok   record_between_windows_$name: KERNSCOPE_PAUSED_DETACH=$want"
  else echo "FAIL record_between_windows_$name: the program saw '$(cat "$T/out")', want $want"; failures=$((failures + 1)); fi
done <<'CASES'
detached - detached 1
attached - attached 0
default - - unset
user_env 0 - 0
option_over_user_env 0 detached 1
CASES
expect_fail record_session_dotdot "--session: session name '..'" -- record --paused --session .. -- true
: >"$T/sessions/old/777.sock"  # another launch's socket (capture_stale removed the first)
expect_fail record_session_in_use "session old is in use" -- record --paused --session old -- true
expect_fail host_bad_thread "--thread must be a thread id" -- host --thread -1 "$GOOD"
# Without a GPU (CI), the program never starts CUDA: no trace, said in one line, exit 2.
expect_fail record_no_cuda "no trace written" -- record -o "$T/t-%p.sqlite" -- true
# report --model: configs that are not decoder LLMs, missing lengths, unreadable files (the trace is read first).
M="$FIX/models"
expect_fail model_encoder_decoder "an encoder-decoder model" -- report --model "$M/t5-small.json" --prompt 8 --output-tokens 2 "$GOOD"
expect_fail model_vision "a vision model" -- report --model "$M/vit-base-patch16-224.json" --prompt 8 --output-tokens 2 "$GOOD"
expect_fail model_encoder_only "not a decoder-only language model" -- report --model "$M/bert-base-uncased.json" --prompt 8 --output-tokens 2 "$GOOD"
expect_fail model_no_lengths "--model needs --prompt and --output-tokens" -- report --model "$M/meta-llama-3-8b.json" "$GOOD"
expect_fail model_missing "cannot open model config" -- report --model "$T/none.json" --prompt 8 --output-tokens 2 "$GOOD"
expect_fail model_zero_batch "--batch needs a whole number of at least 1" -- report --model "$M/meta-llama-3-8b.json" --batch 0 --prompt 8 --output-tokens 2 "$GOOD"
printf 'name\tmatch\n' >"$T/peaks.tsv"
expect_fail model_bad_peaks "peaks.tsv" -- report --model "$M/meta-llama-3-8b.json" --prompt 8 --output-tokens 2 --peaks "$T/peaks.tsv" "$GOOD"
expect_fail model_peaks_alone "--peaks needs --model" -- report --peaks "$T/peaks.tsv" "$GOOD"
expect_fail whatif_unknown_change "not a change" -- whatif --change faster "$GOOD"
expect_fail whatif_bad_factor "is not a factor" -- whatif --change scale=gemm:-1 "$GOOD"
expect_fail whatif_roof_without_work "knows no work" -- critical-path --change roof=gemv "$GOOD"
expect_fail critical_path_unwritable "cannot write" -- critical-path --perfetto /nonexistent/dir/p.json "$GOOD"
printf 'not really a report' >"$T/run.nsys-rep"
PATH=/usr/bin:/bin expect_fail nsys_rep_without_nsys "nsys is not on PATH" -- stats "$T/run.nsys-rep"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all bad-input cases passed"
