#!/usr/bin/env python3
"""Facts about the what-if pairs' traces, read straight from the SQLite (no kernscope), for checking the
predictions by hand: per trace, for the NVTX ranges named measure:* that are steps, the number of steps,
the median host range length, the median step period (start of a step to the start of the next, and for the
last step nothing), the GPU throughput per step (from the first kernel/copy at or after the first measured
step's start to the end of the last GPU activity of the measured steps, over the steps), kernels and launch
calls per step, and the H2D copies (count, median duration, bandwidth, pageable or pinned source).
usage: trace_facts.py TRACE.sqlite[.gz] ...     (prints one block per trace)"""
import gzip
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile


def open_db(path):
    if path.endswith(".gz"):
        tmp = tempfile.NamedTemporaryFile(suffix=".sqlite", delete=False)
        with gzip.open(path) as f:
            shutil.copyfileobj(f, tmp)
        tmp.close()
        return sqlite3.connect(tmp.name), tmp.name
    return sqlite3.connect(path), None


def facts(path):
    db, tmp = open_db(path)
    try:
        ranges = db.execute("SELECT start, end, text FROM NVTX_EVENTS WHERE text LIKE 'measure:%step' AND end IS NOT NULL "
                            "ORDER BY start").fetchall()
        if not ranges:
            return f"{os.path.basename(path)}: no measure:*step ranges"
        name = ranges[0][2]
        starts = [r[0] for r in ranges]
        periods = [b - a for a, b in zip(starts, starts[1:])]
        host = [r[1] - r[0] for r in ranges]
        first, last_end = starts[0], ranges[-1][1]
        # GPU work launched inside the measured ranges: by the launching call's start.
        corr = [row for row in db.execute("SELECT start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                                          "WHERE start >= ? AND start <= ?", (first, last_end))]
        corr_ids = {c for _, c in corr}
        gpu = []
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
            gpu += [(s, e, t := table) for s, e, c in db.execute(f"SELECT start, end, correlationId FROM {table}")
                    if c in corr_ids]
        # Graph launches: the kernels of a graph carry the graph launch's correlation id.
        kernels = sum(1 for g in gpu if g[2].endswith("KERNEL"))
        names = dict(db.execute("SELECT id, value FROM StringIds"))
        calls = {}
        for (nid,) in db.execute("SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start >= ? AND start <= ?",
                                 (first, last_end)):
            n = names.get(nid, "?").split("_v")[0]
            calls[n] = calls.get(n, 0) + 1
        n = len(ranges)
        out = [f"{os.path.basename(path)}: group {name}, {n} steps"]
        out.append(f"  step period (start to next start) median {statistics.median(periods) / 1e6:.4f} ms "
                   f"[{min(periods) / 1e6:.4f} – {max(periods) / 1e6:.4f}]; host range median "
                   f"{statistics.median(host) / 1e6:.4f} ms")
        if gpu:
            g0, g1 = min(g[0] for g in gpu), max(g[1] for g in gpu)
            out.append(f"  GPU work of the measured steps: first start to last end / steps = {(g1 - g0) / n / 1e6:.4f} ms; "
                       f"from the first step's start to the last GPU end / steps = {(g1 - first) / n / 1e6:.4f} ms")
        out.append(f"  kernels per step {kernels / n:.1f}; CUDA calls per step: "
                   + ", ".join(f"{k} {v / n:.1f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])[:6]))
        copies = db.execute("SELECT start, end, bytes, srcKind, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                            "WHERE copyKind = 1 AND start >= ? AND start <= ?", (first, last_end + 10**9)).fetchall()
        if copies:
            d = [e - s for s, e, _, _, _ in copies]
            bw = [b / (e - s) for s, e, b, _, _ in copies]
            try:
                kind_names = {r[0]: r[-1].lower() for r in db.execute("SELECT * FROM ENUM_CUDA_MEM_KIND")}
            except sqlite3.Error:
                kind_names = {}
            kinds = sorted({kind_names.get(k, f"kind {k}") for _, _, _, k, _ in copies})
            streams = sorted({st for *_, st in copies})
            out.append(f"  H2D copies: {len(copies)} of {copies[0][2] / 2**20:.0f} MiB from {'/'.join(kinds)} memory, "
                       f"median {statistics.median(d) / 1e6:.4f} ms ({statistics.median(bw):.2f} GB/s), streams {streams}")
        return "\n".join(out)
    finally:
        db.close()
        if tmp:
            os.unlink(tmp)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(facts(p))
