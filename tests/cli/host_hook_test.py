#!/usr/bin/env python3
"""The Python side of `record`'s host hook (tools/kernscope/python_hook/kernscope_host.py), no GPU:
  - GC ranges through a stub NVTX: push "gc gen<G>" in domain python, a mark with the counts, pop;
    a forced gc.collect() gives a gen-2 range whose counts equal what gc.collect() returned;
  - KERNSCOPE_SAMPLE parsing and the -o pattern expansion (the tracer's rules, tracer_config.cpp);
  - writing into a file the CUDA tracer finished: its StringIds ids and NVTX domains are kept
    (new strings get new ids, an existing "python" domain is reused), samples' frames innermost first;
  - with %n in the pattern, the file holding this pid is the one appended to;
  - a rate the host cannot sustain is halved, and said;
  - a trace of another process at the path (-o without %p) is left alone: the host rows go beside it;
  - a sampler stalled at the program's exit does not lose the program's unclosed file's write.
Breaking check (2026-11-23): making the writer start StringIds at 1 fails (a duplicate id).
Usage: host_hook_test.py HOOK_DIR
"""
import gc
import os
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, sys.argv[1])
import kernscope_host as host  # noqa: E402


def check(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


class StubNvtx:
    def __init__(self):
        self.calls = []

    def push(self, name, domain):
        self.calls.append(("push", name, domain))

    def pop(self, domain):
        self.calls.append(("pop", domain))

    def mark(self, text, domain):
        self.calls.append(("mark", text, domain))


def test_gc_ranges():
    nvtx = StubNvtx()
    recorder = host.GcRecorder(nvtx)
    recorder.install()
    junk = []
    for _ in range(1000):
        a = []
        a.append(a)
        junk.append(a)
    del junk
    collected = gc.collect()
    recorder.remove()
    full = [e for e in recorder.events if e[3] == 2]
    check(full, "no gen-2 collection recorded: %s" % recorder.events)
    start, end, tid, generation, got, uncollectable = full[-1]
    check(got == collected, "collected %d, gc.collect() said %d" % (got, collected))
    check(start <= end and tid == threading.get_native_id(), "times or thread wrong: %s" % (full[-1],))
    last = nvtx.calls[-3:]
    check(last == [("push", "gc gen2", "python"), ("mark", "gc gen2: %d collected, %d uncollectable" % (collected, uncollectable),
                                                    "python"), ("pop", "python")], "NVTX calls: %s" % last)


def test_options():
    check(host.parse_sample_option("") == 0 and host.parse_sample_option("none") == 0, "none")
    check(host.parse_sample_option("cpu") == 100 and host.parse_sample_option("cpu:250") == 250, "cpu[:HZ]")
    for bad in ("gpu", "cpu:0", "cpu:5000", "cpu:x"):
        try:
            host.parse_sample_option(bad)
        except ValueError:
            continue
        check(False, "accepted %r" % bad)
    os.environ["KS_TEST_VAR"] = "rank3"
    check(host.expand_output_path("out/%h-%p-%n-%q{KS_TEST_VAR}-%%.sqlite", 42, "node", 2) == "out/node-42-2-rank3-%.sqlite",
          "pattern expansion")
    check(host.expand_output_path("a%q{NO_CLOSE", 1, "h", 1) == "a%q{NO_CLOSE", "unclosed %q")


def tracer_like_file(path, pid):
    db = sqlite3.connect(path)
    db.executescript(host._SCHEMA)
    db.execute("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'MainThread')")
    db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (5, 75, 'python', ?, 3)",
               ((pid << 24) | 7,))
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (pid << 24, pid))
    db.commit()
    db.close()


def test_append_to_tracer_file():
    work = tempfile.mkdtemp(prefix="kernscope-hook-")
    pid = os.getpid()
    path = os.path.join(work, "t.sqlite")
    tracer_like_file(path, pid)
    recorder = host.GcRecorder()
    recorder.events.append((100, 200, 7, 1, 5, 0))
    sampler = host.StackSampler(100)

    def inner():
        time.sleep(0.3)

    t = threading.Thread(target=inner, name="worker")
    sampler.start()
    t.start()
    t.join()
    sampler.stop()
    created = host.write_host_tables(path, pid, recorder, sampler)
    check(not created, "the tracer's file was taken for a new one")
    db = sqlite3.connect(path)
    check(db.execute("SELECT value FROM StringIds WHERE id = 1").fetchone()[0] == "cudaLaunchKernel_v7000", "kept ids")
    check(db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75").fetchone()[0] == 1, "one python domain")
    rows = db.execute("SELECT eventType, text, domainId, category FROM NVTX_EVENTS WHERE eventType IN (59, 34) ORDER BY start").fetchall()
    check(rows == [(59, "gc gen1", 3, 1), (34, "gc gen1: 5 collected, 0 uncollectable", 3, 1)], "GC rows: %s" % rows)
    leaf = db.execute("""SELECT s.value FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol
                         JOIN COMPOSITE_EVENTS e ON e.id = c.id JOIN ThreadNames t ON t.globalTid = e.globalTid
                         JOIN StringIds n ON n.id = t.nameId WHERE n.value = 'worker' AND c.stackDepth = 0""").fetchall()
    check(leaf and all(v.endswith(".inner") for (v,) in leaf), "the worker's innermost frames: %s" % leaf[:5])
    info = dict(db.execute("SELECT name, value FROM KERNSCOPE_HOST_INFO"))
    check(info.get("sampler_hz_asked") == "100" and "gil_wait" in info and info.get("gc_collections") == "1", "info %s" % info)
    db.close()


def test_sequence_pattern():
    work = tempfile.mkdtemp(prefix="kernscope-hook-")
    pid = os.getpid()
    other = os.path.join(work, "t-1.sqlite")
    tracer_like_file(other, pid + 1)  # another process's trace took %n = 1
    mine = os.path.join(work, "t-2.sqlite")
    tracer_like_file(mine, pid)
    recording = host.HostRecording({"KERNSCOPE_OUTPUT": os.path.join(work, "t-%n.sqlite")})
    check(recording._trace_path() == mine, "picked %s" % recording._trace_path())


def test_rate_lowered():
    # A rate the host cannot sustain: with no share of the time allowed for sampling, each second of
    # sampling halves the rate, and the trace says so.
    saved = host._MAX_SAMPLER_SHARE
    host._MAX_SAMPLER_SHARE = 0.0
    try:
        sampler = host.StackSampler(400)
        sampler.start()
        time.sleep(2.4)
        sampler.stop()
    finally:
        host._MAX_SAMPLER_SHARE = saved
    lowered = [value for name, value in sampler.info() if name == "sampler_lowered"]
    check(len(lowered) >= 1 and lowered[0].startswith("400 Hz -> 200 Hz"), "lowering: %s" % sampler.info())


def test_other_process_file_kept():
    # -o without %p: a CPU-only Python child finds its parent's trace at the path; it writes beside it.
    work = tempfile.mkdtemp(prefix="kernscope-hook-")
    parent = os.path.join(work, "run.sqlite")
    tracer_like_file(parent, os.getpid() + 1)
    before = open(parent, "rb").read()
    recording = host.HostRecording({"KERNSCOPE_OUTPUT": parent, "KERNSCOPE_SAMPLE": "cpu"})
    recording.gc.events.append((1, 2, 3, 0, 0, 0))
    recording.finish()
    check(open(parent, "rb").read() == before, "the parent's trace was changed")
    mine = os.path.join(work, "run.host-%d.sqlite" % os.getpid())
    check(os.path.exists(mine), "no file beside it: %s" % os.listdir(work))


def test_gc_only_process_writes_nothing():
    # A Python process that never used CUDA (no tracer file of its own) and no --sample: its collections
    # alone make no file (torch.compile's workers would each leave one), and the parent's is untouched.
    work = tempfile.mkdtemp(prefix="kernscope-hook-")
    parent = os.path.join(work, "run.sqlite")
    tracer_like_file(parent, os.getpid() + 1)
    before = open(parent, "rb").read()
    for pattern in (parent, os.path.join(work, "run-%p.sqlite")):
        recording = host.HostRecording({"KERNSCOPE_OUTPUT": pattern})
        recording.gc.events.append((1, 2, 3, 0, 0, 0))
        recording.finish()
    check(open(parent, "rb").read() == before, "the parent's trace was changed")
    check(sorted(os.listdir(work)) == ["run.sqlite"], "files written: %s" % os.listdir(work))


# A program that leaves its last output file open (json.dump(x, open(p, "w"))) relies on the file
# being closed, and flushed, when its last reference goes. A sample holds the frames it took: a
# sampler starved of CPU at the program's exit (here: stalled 4 s while it holds the writing
# function's frame) must still let go before the interpreter finalizes, or the write is lost (a
# fresh-clone `make test` under load once read an empty file from host_known_truth's workload).
# Breaking check (2026-12-06): the old 1 s join in StackSampler.stop leaves the file empty.
STALLED_PROGRAM = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import kernscope_host as host
sampled = host.StackSampler._sample
def stalled(self, own):
    frames = sys._current_frames()  # held, as a sample holds them while it walks them
    if any(f.f_code.co_name == "write" for f in frames.values()):
        time.sleep(4)  # the GIL is free: the program goes on and exits meanwhile
    del frames
    sampled(self, own)
host.StackSampler._sample = stalled
host.HostRecording({"KERNSCOPE_SAMPLE": "cpu:500", "KERNSCOPE_OUTPUT": sys.argv[3]}).start()
def write(path):
    fp = open(path, "w")  # never closed: closed when its last reference goes
    fp.write("x" * 5000)
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:  # long enough to be sampled
        pass
write(sys.argv[2])
"""


def test_program_output_kept_when_sampler_stalls():
    import subprocess
    work = tempfile.mkdtemp(prefix="kernscope-hook-")
    program = os.path.join(work, "program.py")
    with open(program, "w") as f:
        f.write(STALLED_PROGRAM)
    output = os.path.join(work, "out.txt")
    subprocess.run([sys.executable, program, sys.argv[1], output, os.path.join(work, "t-%p.sqlite")], check=True,
                   timeout=120)
    size = os.path.getsize(output)
    check(size == 5000, "the program's unclosed output file holds %d of 5000 bytes after exit" % size)


test_gc_ranges()
test_program_output_kept_when_sampler_stalls()
test_other_process_file_kept()
test_gc_only_process_writes_nothing()
test_rate_lowered()
test_options()
test_append_to_tracer_file()
test_sequence_pattern()
print("host hook checks passed")
