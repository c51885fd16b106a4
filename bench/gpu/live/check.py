"""Checks a live-capture trace (issue 30) against what the program says it launched, with Python's
sqlite3 (independent of kernscope's reader) and with `kernscope steps` (the steps kernscope keeps).

  check.py windows TRACE EXPECTED_JSON KERNSCOPE   each window holds exactly the program's launches
  check.py tail TRACE EXPECTED_JSON KERNSCOPE      one window per slow step, the last N steps in it
  check.py procs TRACE...                          every process of the launch recorded one window
  check.py cut TRACE KERNSCOPE                     a program killed in a window: readable, said cut
  check.py detached TRACE EXPECTED_JSON KERNSCOPE  windows of record --paused with CUPTI detached between
                                                   them: kernels, API records, NVTX ranges, devices, one clock
Prints one line per finding and exits 1 when one fails."""
import json, sqlite3, subprocess, sys

failed = False


def say(ok, text):
    global failed
    failed |= not ok
    print(("PASS " if ok else "FAIL ") + text, flush=True)


def windows_of(db):
    return db.execute("select id, start, end, openedBy, closedBy from KERNSCOPE_CAPTURE_WINDOWS order by start").fetchall()


def launched_in(db, start, end):
    """Kernels whose launch call started in [start, end): what CUPTI records while recording is on."""
    return db.execute(
        "select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join CUPTI_ACTIVITY_KIND_RUNTIME r on r.correlationId = k.correlationId "
        "where r.start >= ? and r.start < ?", (start, end if end is not None else 1 << 62)).fetchone()[0]


def steps(trace, kernscope):
    out = subprocess.run([kernscope, "steps", trace, "--step-range", "decode_step", "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        return [], out.stderr
    return json.loads(out.stdout), out.stderr


def check_windows(trace, expected, kernscope):
    exp = json.load(open(expected))
    db = sqlite3.connect(trace)
    wins = windows_of(db)
    say(len(wins) == 3, f"3 windows recorded: {[(w[3], w[4]) for w in wins]}")
    total = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    inside = sum(launched_in(db, w[1], w[2]) for w in wins)
    say(total == inside, f"every kernel of the trace was launched inside a window: {inside} of {total}")
    for i, want in enumerate(exp["window_kernels"]):
        got = launched_in(db, wins[i][1], wins[i][2])
        say(got == want, f"window {i + 1} ({wins[i][3]}): {got} kernels launched inside, the program counted {want}")
    rows, notes = steps(trace, kernscope)
    for i, want in enumerate(exp["window_steps"]):
        got = [r for r in rows if wins[i][1] <= r["Start (ns)"] < wins[i][2]]
        say(len(got) == want, f"window {i + 1}: {len(got)} whole steps kept by kernscope steps, expected {want}")
    third = [r for r in rows if wins[2][1] <= r["Start (ns)"] < wins[2][2]]
    length = (wins[2][2] - wins[2][1]) / 1e9
    say(0.29 <= length <= 0.35 and len(third) > 0, f"the timed window lasted {length:.3f} s (asked 0.3 s); {len(third)} whole steps in it")


def check_tail(trace, expected, kernscope):
    exp = json.load(open(expected))
    db = sqlite3.connect(trace)
    wins = windows_of(db)
    say(len(wins) == len(exp["slow_steps"]), f"{len(wins)} windows for {len(exp['slow_steps'])} slow steps: {[w[3] for w in wins]}")
    ranges = db.execute("select start, end from NVTX_EVENTS where text = 'decode_step' and end is not null order by start").fetchall()
    for w in wins:
        inside = [(s, e) for s, e in ranges if s >= w[1] and e <= w[2]]
        slow = [e - s for s, e in inside if e - s > 40e6]
        say(len(inside) == 4, f"window {w[0]}: {len(inside)} whole step ranges (keep 4): {[round((e - s) / 1e6, 2) for s, e in inside]}")
        say(len(slow) == 1 and inside and inside[-1][1] - inside[-1][0] > 40e6, f"window {w[0]}: its last step is the slow one")
    rows, notes = steps(trace, kernscope)
    say(len(rows) == 4 * len(wins), f"kernscope steps keeps {len(rows)} steps (4 per window)")


def check_procs(traces):
    for t in traces:
        db = sqlite3.connect(t)
        wins = windows_of(db)
        k = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        say(len(wins) == 1 and k > 0, f"{t}: {len(wins)} window(s) ({[w[3] for w in wins]}), {k} kernels")
    say(len(traces) == 2, f"{len(traces)} processes traced (the program and its child)")


def check_cut(trace, kernscope):
    out = subprocess.run([kernscope, "info", trace], capture_output=True, text=True)
    text = out.stdout + out.stderr
    say(out.returncode == 0, f"kernscope info reads the killed program's trace (exit {out.returncode})")
    say("still open" in text and "cut short" in text, "it says the trace and its window were cut: " +
        " | ".join(l.strip() for l in text.splitlines() if "cut" in l or "window" in l)[:400])


def check_detached(trace, expected, kernscope):
    """live_windows detached: start/stop windows and a timed one, CUPTI detached between them (or
    attached with --between-windows attached: the same must hold)."""
    exp = json.load(open(expected))
    db = sqlite3.connect(trace)
    wins = windows_of(db)
    n = len(exp["window_kernels"])
    say(len(wins) == n + 1, f"{len(wins)} windows recorded ({n} start/stop and a timed one)")
    total = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    inside = sum(launched_in(db, w[1], w[2]) for w in wins)
    say(total == inside and total > 0, f"every kernel of the trace was launched inside a window: {inside} of {total}")
    for i, want in enumerate(exp["window_kernels"]):
        start, end = wins[i][1], wins[i][2]
        after = wins[i - 1][2] + 2 * 10**8 if i > 0 else start - 10**9  # the window before has ended
        got = launched_in(db, start, end)
        # By the GPU's own timestamps, apart from the API records: the kernels ran after the window
        # opened (window and kernel times in one clock) and before 0.2 s after it closed.
        gpu = db.execute("select count(*), min(start) - ?, max(end) - ? from CUPTI_ACTIVITY_KIND_KERNEL where start >= ? and start < ?",
                         (start, end, after, end + 2 * 10**8)).fetchone()
        api = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME where start >= ? and start < ?", (start, end)).fetchone()[0]
        nvtx = db.execute("select count(*) from NVTX_EVENTS where text = 'decode_step' and start >= ? and start < ?", (start, end)).fetchone()[0]
        say(got == want, f"window {i + 1}: {got} kernels launched inside (by API record), the program counted {want}")
        say(gpu[0] == want and gpu[1] is not None and gpu[1] > 0, f"window {i + 1}: {gpu[0]} kernels ran from {(gpu[1] or 0) / 1e6:.3f} ms after "
            f"the window opened to {(gpu[2] or 0) / 1e6:.3f} ms after it closed (GPU timestamps, same clock)")
        say(api >= want, f"window {i + 1}: {api} API records (at least one launch call per kernel)")
        say(nvtx == exp["window_steps"][i], f"window {i + 1}: {nvtx} decode_step NVTX ranges, the program ran {exp['window_steps'][i]}")
    devices = db.execute("select count(*) from TARGET_INFO_GPU").fetchone()[0]
    say(devices >= 1, f"{devices} device row(s) in TARGET_INFO_GPU")
    info = dict(db.execute("select name, value from KERNSCOPE_TRACER_INFO").fetchall())
    print("info: " + "; ".join(f"{k}={info.get(k)}" for k in ("paused_cupti", "cupti_finalized", "api_records", "cupti_clock_offset_ns", "buffers_free_at_end",
                                                               "buffers_kept_by_cupti", "dropped_records", "cupti_api_version")))
    # The calls recorded: by default only those that launch, copy, allocate or wait (the tracer's
    # default_api list); recorded by kind (a detached window), every call.
    names = [n for (n,) in db.execute("select distinct s.value from CUPTI_ACTIVITY_KIND_RUNTIME r join StringIds s on s.id = r.nameId")]
    defaults = ("cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset", "cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaHostRegister",
                "cudaHostUnregister", "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaStreamWaitEvent",
                "cudaEventRecord", "cudaEventQuery", "cudaStreamQuery", "cudaProfilerStart", "cudaProfilerStop", "cuLaunch",
                "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc", "cuCtxSynchronize",
                "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent", "cuEventRecord", "cuProfilerStart", "cuProfilerStop")
    others = sorted(n for n in names if not n.startswith(defaults))
    if str(info.get("api_records", "")).startswith("default"):
        say(not others, f"API records of the default calls only ({info.get('api_records')}): {sorted(names)}")
    else:
        print(f"info: calls recorded ({info.get('api_records')}): {sorted(names)}")
    bad = db.execute("select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME where end < start or correlationId = 0").fetchone()[0]
    say(bad == 0, f"{bad} API records with an end before their start or no correlation id")
    length = (wins[-1][2] - wins[-1][1]) / 1e9
    # The timed window's end moves by the time its start took (a re-attach): it lasts what was asked.
    say(0.299 <= length <= 0.31, f"the timed window lasted {length:.3f} s (asked 0.3 s)")
    out = subprocess.run([kernscope, "info", trace], capture_output=True, text=True)
    say(out.returncode == 0, f"kernscope info reads it (exit {out.returncode})")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "windows": check_windows(*sys.argv[2:5])
    elif mode == "tail": check_tail(*sys.argv[2:5])
    elif mode == "procs": check_procs(sys.argv[2:])
    elif mode == "cut": check_cut(*sys.argv[2:4])
    elif mode == "detached": check_detached(*sys.argv[2:5])
    sys.exit(1 if failed else 0)
