#!/usr/bin/env python3
"""`kernscope host` and `steps` on nsys-schema SQLite: a synthetic export whose answers hold by
construction, and (when given) a real nsys export made with -t python-gil --sample=cpu, checked
against the same quantities computed with sqlite3.

Synthetic (times in ns, tables from src/tracer/nsys_schema.sql plus nsys's sampling tables):
  - thread 1 (globalTid 100<<24|1) launches one kernel per step; four NVTX ranges decode_step:
    [0,1 ms) [1,2 ms) [2,3 ms) [3,6 ms); median wall 1 ms, so step 3 is slow by 2 ms;
  - TensorRT-LLM's GC marker ("Python GC", start/end range, default domain) [3.5,5.5 ms) in step 3:
    steps says GCs 1, GC 2 ms there, and host says collections explain the slow step (2 of 2 ms);
  - "GIL Trace" ranges: thread 1 waits [0.2,0.5) ms and [1.5,1.6) ms; thread 2 ("worker") holds
    [0.1,0.4) and [1.5,1.7) ms: wait 0.4 ms in all, 0.1 ms per step (6.7 % of 6 ms: a finding), the
    worker held it 0.3 ms of those waits;
  - CPU samples of thread 1 every 0.25 ms, t = 0 .. 5.75 ms: f at steps 0-2 (12) and at 4..6 ms (8),
    g at 3..4 ms (4); a sample period of 0.25 ms: f 20 x 0.25 / 4 = 1.25 ms per step, g 0.25 ms;
    thread 2 has 3 samples too (not counted), each one frame whose symbol is missing (address 0xdead).
Breaking check (2026-11-23): expecting 1 ns of GIL wait in step 3 fails; so would counting
thread 2's own wait (step 2 would show 0.1 ms) or a slow-step factor of 3 or more (no GC finding).
Usage: host_nsys_test.py KERNSCOPE SCHEMA_SQL [REAL_EXPORT.sqlite[.gz|.xz] STEP_RANGE]
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

MS = 1_000_000
PID = 100
T1 = (PID << 24) | 1
T2 = (PID << 24) | 2


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run_json(kernscope, *args):
    out = subprocess.run([kernscope, *args[:-1], "--format", "json", args[-1]], capture_output=True, text=True)
    if out.returncode != 0:
        fail(" ".join(args) + ": " + out.stderr)
    return json.loads(out.stdout)


def build(path, schema):
    db = sqlite3.connect(path)
    db.executescript(open(schema).read())
    db.executescript("DROP TABLE KERNSCOPE_TRACER_INFO; DROP TABLE KERNSCOPE_GPU_SAMPLES;")  # an nsys export
    db.executescript("""
      CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER,
        threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
      CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL,
        kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER,
        unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));""")
    strings = ["cudaLaunchKernel_v7000", "decode_step", "k1", "Holding GIL", "Waiting for GIL", "main", "worker",
               "f", "libx.so", "g", "root", "", "Python GC"]
    sid = {s: i + 1 for i, s in enumerate(strings)}
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, s) for s, i in sid.items()])
    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3')")
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (PID << 24, PID))
    db.executemany("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 0, ?)",
                   [(sid["main"], T1), (sid["worker"], T2)])
    steps = [(0, 1 * MS), (1 * MS, 2 * MS), (2 * MS, 3 * MS), (3 * MS, 6 * MS)]
    for i, (s, e) in enumerate(steps):
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?, ?, 59, 'decode_step', ?, 0)",
                   (s, e, T1))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)", (s + 10_000, s + 15_000, T1, i + 1, sid["cudaLaunchKernel_v7000"]))
        db.execute("""INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
                      demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
                      staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
                      VALUES (?, ?, 0, 1, 7, ?, ?, ?, ?, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?)""",
                   (s + 20_000, s + 100_000, i + 1, PID << 24, sid["k1"], sid["k1"], i))
    db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) VALUES (?, ?, 60, ?, ?, 0)",
               (3_500_000, 5_500_000, sid["Python GC"], T1))
    db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (0, 75, 'GIL Trace', ?, 2)", (T1,))
    gil = [(200_000, 500_000, "Waiting for GIL", T1), (1_500_000, 1_600_000, "Waiting for GIL", T1),
           (100_000, 400_000, "Holding GIL", T2), (1_500_000, 1_700_000, "Holding GIL", T2),
           (2_000_000, 2_100_000, "Waiting for GIL", T2)]  # thread 2's own wait: not the host thread's
    db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) VALUES (?, ?, 59, ?, ?, 2)",
                   [(s, e, sid[t], g) for s, e, t, g in gil])
    sample = 0
    for k in range(24):
        sample += 1
        leaf = "g" if 12 <= k < 16 else "f"
        db.execute("INSERT INTO COMPOSITE_EVENTS VALUES (?, ?, 0, 1, ?, 0)", (sample, k * 250_000, T1))
        db.executemany("INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, unresolved, originalIP, stackDepth) VALUES (?, ?, ?, 0, 0, ?)",
                       [(sample, sid[leaf], sid["libx.so"], 0), (sample, sid["root"], sid["libx.so"], 1)])
    for k in range(3):
        sample += 1
        db.execute("INSERT INTO COMPOSITE_EVENTS VALUES (?, ?, 0, 1, ?, 0)", (sample, k * 300_000, T2))
        db.execute("INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, unresolved, originalIP, stackDepth) VALUES (?, ?, ?, 1, ?, 0)",
                   (sample, sid[""], sid["libx.so"], 0xDEAD))
    db.commit()
    db.close()


def check_synthetic(kernscope, schema):
    work = tempfile.mkdtemp(prefix="kernscope-host-nsys-")
    path = os.path.join(work, "synthetic.sqlite")
    build(path, schema)
    doc = run_json(kernscope, "host", path)
    group = doc["host_groups"][0]
    if group["Steps"] != 4 or group["GIL Wait per Step (ns)"] != 100_000 or not group["Top GIL Holder"].startswith("2 (worker)"):
        fail("groups: %s" % group)
    if group["GC per Step (ns)"] != 500_000 or group["Collections"] != 1:
        fail("GC per step: %s" % group)
    own = {r["Function"]: r["Own per Step (ns)"] for r in doc["host_functions"]}
    if own.get("f (libx.so)") != 1_250_000 or own.get("g (libx.so)") != 250_000 or own.get("root (libx.so)", 0) != 0:
        fail("functions: %s" % doc["host_functions"])
    total = {r["Function"]: r["Total per Step (ns)"] for r in doc["host_functions"]}
    if total.get("root (libx.so)") != 1_500_000:
        fail("root's total: %s" % total)
    waits = [r["GIL Wait (ns)"] for r in doc["host_steps"]]
    if waits != [300_000, 100_000, 0, 0]:
        fail("GIL wait per step: %s" % waits)
    if not any("garbage collection explains the slow" in f and "100 %" in f for f in doc["findings"]):
        fail("GC finding: %s" % doc["findings"])
    if not any("waits for the GIL 0.10 ms" in f and "thread 2 (worker) 0.07 ms" in f for f in doc["findings"]):
        fail("GIL finding: %s" % doc["findings"])
    steps = run_json(kernscope, "steps", path)
    rows = steps["steps"] if isinstance(steps, dict) else steps
    if [(r["GCs"], r["GC (ns)"]) for r in rows] != [(0, 0), (0, 0), (0, 0), (1, 2 * MS)]:
        fail("steps' GC columns: %s" % rows)
    info = subprocess.run([kernscope, "info", path], capture_output=True, text=True).stdout
    if "3 sampled frames have no symbol" not in info:
        fail("info lacks the unresolved-frames note:\n" + info)
    collapsed = subprocess.run([kernscope, "host", "--format", "collapsed", path], capture_output=True, text=True).stdout
    if ":decode_step [decode];root (libx.so);f (libx.so) 20" not in collapsed.splitlines():
        fail("collapsed:\n" + collapsed)
    print("synthetic export: GIL waits, holders, GC, functions and steps' GC columns as constructed")


def check_real(kernscope, path, step_range):
    work = tempfile.mkdtemp(prefix="kernscope-host-real-")
    plain = os.path.join(work, "real.sqlite")
    if path.endswith((".gz", ".xz")):
        with open_any(path) as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copy(path, plain)
    doc = run_json(kernscope, "host", "--step-range", step_range, plain)
    db = sqlite3.connect(plain)
    launcher = db.execute("""SELECT r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
                             WHERE s.value LIKE 'cudaLaunchKernel%' GROUP BY 1 ORDER BY count(*) DESC LIMIT 1""").fetchone()[0]
    steps = db.execute("""SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds t ON t.id = n.textId
                          WHERE coalesce(n.text, t.value) = ? AND n.eventType IN (59, 60) ORDER BY n.start""", (step_range,)).fetchall()
    gil_domain = db.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'GIL Trace'").fetchone()
    python_domain = db.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'Python Periodic Sampling'").fetchone()
    python_samples = python_domain and db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND domainId = ? AND globalTid = ?",
                                                  (python_domain[0], launcher)).fetchone()[0] > 0
    want_wait, want_samples = [], []
    for s, e in steps:
        if python_samples:  # nsys's Python samples of the thread, used instead of its CPU samples
            want_samples.append(db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND domainId = ? AND globalTid = ? "
                                           "AND start >= ? AND start < ?", (python_domain[0], launcher, s, e)).fetchone()[0])
        else:
            want_samples.append(db.execute("SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = ? AND start >= ? AND start < ?",
                                           (launcher, s, e)).fetchone()[0])
        if gil_domain:
            want_wait.append(db.execute("""SELECT coalesce(sum(max(0, min(?, n.end) - max(?, n.start))), 0) FROM NVTX_EVENTS n
                                           JOIN StringIds t ON t.id = n.textId WHERE n.domainId = ? AND t.value = 'Waiting for GIL'
                                           AND n.globalTid = ? AND n.start < ? AND n.end > ?""",
                                        (e, s, gil_domain[0], launcher, e, s)).fetchone()[0])
    db.close()
    got_samples = [r["Samples"] for r in doc["host_steps"]]
    if got_samples != want_samples:
        fail("samples per step %s, sqlite3 says %s" % (got_samples, want_samples))
    if gil_domain:
        got_wait = [r["GIL Wait (ns)"] for r in doc["host_steps"]]
        if got_wait != want_wait:
            fail("GIL wait per step %s, sqlite3 says %s" % (got_wait, want_wait))
    if python_samples:
        # The innermost frame of the step's first Python sample, read from its JSON payload by hand.
        s, e = steps[0]
        payload = db_first_payload(plain, python_domain[0], launcher, s, e)
        functions = [r["Function"] for r in doc["host_functions"]]
        if payload not in functions:
            fail("the first sample's innermost frame %r is not among host's functions %s" % (payload, functions[:10]))
    print("real export: %d steps, samples and GIL waits per step equal sqlite3's (e.g. step 0: %d samples, %s ns waiting)"
          % (len(steps), want_samples[0], want_wait[0] if want_wait else "no GIL data,"))


def db_first_payload(path, domain, tid, start, end):
    db = sqlite3.connect(path)
    text = db.execute("SELECT jsonText FROM NVTX_EVENTS WHERE eventType = 34 AND domainId = ? AND globalTid = ? AND start >= ? "
                      "AND start < ? ORDER BY start LIMIT 1", (domain, tid, start, end)).fetchone()[0]
    frame = json.loads(text)["Python Periodic Sampling"]["Frames"][0]
    name, file = (db.execute("SELECT value FROM StringIds WHERE id = ?", (i,)).fetchone()[0] for i in (frame["Function"], frame["File"]))
    db.close()
    return "%s (%s)" % (name.replace("&lt;", "<").replace("&gt;", ">"), os.path.basename(file))


def main():
    kernscope, schema = sys.argv[1], sys.argv[2]
    check_synthetic(kernscope, schema)
    if len(sys.argv) > 4:
        check_real(kernscope, sys.argv[3], sys.argv[4])


if __name__ == "__main__":
    main()
