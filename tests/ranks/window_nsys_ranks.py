#!/usr/bin/env python3
"""Cuts a real nsys export holding several rank processes into sampled rank windows, with the truth.

A "sampled" trace is a window of the run that starts or ends in the middle of it (nsys --delay /
--duration, a cut export, a profiler schedule): ranks' windows then begin and end at different
collectives. This script makes such sets from a real export (one process per rank, as torchrun
writes them), so what kernscope ranks should say is known without kernscope:

  --from PROC:K   process PROC (0, 1, ... in ascending pid order) keeps events from its K-th NCCL
                  kernel on (the cut lies halfway between the (K-1)-th kernel's end and the K-th's start)
  --to PROC:K     ... up to and including its K-th NCCL kernel (halfway to the next one)
  --drop PROC:K   process PROC's K-th NCCL kernel is deleted, the window kept (a call it never made)
  --one-file      write one export with every process (one clock), else one file per process
                  (rank<P>.sqlite: each its own file, so kernscope must estimate their clocks)
  --offset PROC:NS  add NS to every time of process PROC's rows (a clock that reads differently;
                  with one file per process)

NCCL kernels are counted per process in start order (index 0 = first in the source). Rows of the
tables with a start time (kernels, runtime calls, NVTX, copies, memsets, syncs) outside a process's
window are deleted; a file per process keeps that process's rows only. The truth file OUT.truth.json
lists, per process, the source indices of the NCCL kernels it kept, their kernel names, starts and
ends (ns, the source's clock, before any --offset), so a matching can be checked collective by collective.
"""
import argparse
import json
import os
import shutil
import sqlite3
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

TIMED = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_MEMCPY",
         "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "PROFILER_OVERHEAD", "OSRT_API"]
PID = "((({col}) >> 24) & 16777215)"


def open_copy(source, path):
    with open_any(source, "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return sqlite3.connect(path)


def columns(con, table):
    return [r[1] for r in con.execute(f"PRAGMA table_info({table})")]


def nccl_kernels(con):
    """pid -> [(start, end, name)] of its NCCL kernels in start order."""
    out = {}
    for pid, start, end, name in con.execute(
            f"SELECT {PID.format(col='k.globalPid')}, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'nccl%' ORDER BY k.start"):
        out.setdefault(pid, []).append((start, end, name))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--from", dest="start", action="append", default=[], metavar="PROC:K")
    ap.add_argument("--to", dest="stop", action="append", default=[], metavar="PROC:K")
    ap.add_argument("--drop", action="append", default=[], metavar="PROC:K")
    ap.add_argument("--one-file", action="store_true")
    ap.add_argument("--offset", action="append", default=[], metavar="PROC:NS")
    args = ap.parse_args()
    if args.offset and args.one_file:
        sys.exit("window_nsys_ranks: --offset needs one file per process")

    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "source.sqlite")
    con = open_copy(args.source, work)
    kernels = nccl_kernels(con)
    pids = sorted(kernels)
    if len(pids) < 2:
        sys.exit("window_nsys_ranks: the source holds fewer than two processes with NCCL kernels")

    def parse(specs):
        return {int(a): int(b) for a, b in (s.split(":") for s in specs)}

    start_at, stop_at, offsets = parse(args.start), parse(args.stop), parse(args.offset)
    drops = {}
    for a, b in (s.split(":") for s in args.drop):
        drops.setdefault(int(a), set()).add(int(b))
    windows, kept = {}, {}
    for p, pid in enumerate(pids):
        ks = kernels[pid]
        lo, hi = -(1 << 62), 1 << 62
        first, last = 0, len(ks) - 1
        if p in start_at:
            first = start_at[p]
            lo = (ks[first - 1][1] + ks[first][0]) // 2 if first > 0 else ks[0][0] - 1
        if p in stop_at:
            last = stop_at[p]
            hi = (ks[last][1] + ks[last + 1][0]) // 2 if last + 1 < len(ks) else ks[-1][1] + 1
        windows[pid] = (lo, hi)
        kept[p] = [i for i in range(first, last + 1) if i not in drops.get(p, set())]

    def cut(c, only_pid=None):
        for table in TIMED:
            if table not in [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]:
                continue
            cols = columns(c, table)
            who = "globalPid" if "globalPid" in cols else "globalTid" if "globalTid" in cols else None
            if who is None or "start" not in cols:
                continue
            pid_of = PID.format(col=who)
            if only_pid is not None:
                c.execute(f"DELETE FROM {table} WHERE {pid_of} <> ?", (only_pid,))
            for pid, (lo, hi) in windows.items():
                end = "end" if "end" in cols else "start"
                c.execute(f"DELETE FROM {table} WHERE {pid_of} = ? AND (start < ? OR coalesce({end}, start) > ?)", (pid, lo, hi))
        for p, pid in enumerate(pids):
            for i in drops.get(p, set()):
                start, end, _ = kernels[pid][i]
                c.execute(f"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE {PID.format(col='globalPid')} = ? AND start = ? AND end = ?",
                          (pid, start, end))
        if only_pid is not None and pids.index(only_pid) in offsets:
            shift = offsets[pids.index(only_pid)]
            for table in TIMED:
                if table not in [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]:
                    continue
                cols = columns(c, table)
                for col in ("start", "end"):
                    if col in cols:
                        c.execute(f"UPDATE {table} SET {col} = {col} + ? WHERE {col} IS NOT NULL", (shift,))
        c.commit()
        c.execute("VACUUM")

    con.close()
    if args.one_file:
        path = os.path.join(args.out, "export.sqlite")
        os.replace(work, path)
        c = sqlite3.connect(path)
        cut(c)
        c.close()
    else:
        for p, pid in enumerate(pids):
            path = os.path.join(args.out, f"rank{p}.sqlite")
            shutil.copyfile(work, path)
            c = sqlite3.connect(path)
            cut(c, only_pid=pid)
            c.close()
        os.remove(work)
    truth = {
        "source": os.path.basename(args.source),
        "one_file": args.one_file,
        "offsets": {str(p): offsets.get(p, 0) for p in range(len(pids))},
        "pids": pids,
        "kept": {str(p): [{"index": i, "name": kernels[pids[p]][i][2], "start": kernels[pids[p]][i][0],
                           "end": kernels[pids[p]][i][1]} for i in kept[p]] for p in range(len(pids))},
    }
    with open(os.path.normpath(args.out) + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
