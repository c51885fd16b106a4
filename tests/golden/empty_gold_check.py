#!/usr/bin/env python3
"""Gold files in which nsys printed no rows: nothing to compare but that kernscope prints none either
(which the golden suites check), so they are counted apart here, each with the reason the trace
gives, read from the export with sqlite3 (not from kernscope):

  no-table    the export lacks a table the report reads (nsys skips the report, saying so on stderr)
  no-rows     the table the report reads holds no row of the kind it counts (no start/end NVTX ranges
              for nvtx_startend_sum, no OS runtime calls for osrt_sum, ...)
  filtered    a report under gold/filters/: the trace has the data, the filter keeps none of it
  known       a case gold_skips.txt already lists as differing from nsys (an export nsys refuses)
  no-finding  an analyze rule's file (gold/analyze/RULE.json, gold/analyze_options/RULE.csv at other
              thresholds) where the rule found nothing

An empty gold file for which the export has the data and no reason holds fails the check: its gold
should hold what nsys prints (bench/gpu/gold_collect.sh), or the reason belongs here.

usage: empty_gold_check.py FIXTURES GOLD_SKIPS
"""
import gzip
import lzma
import os
import pathlib
import sqlite3
import sys
import tempfile

# The tables (and the rows of them) each report reads, by report name prefix.
KERNELS = ("CUPTI_ACTIVITY_KIND_KERNEL", "1")
RUNTIME = ("CUPTI_ACTIVITY_KIND_RUNTIME", "1")
MEMCPY = ("CUPTI_ACTIVITY_KIND_MEMCPY", "1")
MEMSET = ("CUPTI_ACTIVITY_KIND_MEMSET", "1")
RANGES = ("NVTX_EVENTS", "eventType IN (59, 60)")
NEEDS = [
    ("cuda_api_gpu_sum", [RUNTIME], [KERNELS, MEMCPY, MEMSET]),
    ("cuda_api_sum", [RUNTIME], []),
    ("cuda_api_trace", [RUNTIME], []),
    ("cuda_gpu_kern_gb_sum", [KERNELS], []),
    ("cuda_gpu_kern_sum", [KERNELS], []),
    ("cuda_gpu_mem_size_sum", [], [MEMCPY, MEMSET]),
    ("cuda_gpu_mem_time_sum", [], [MEMCPY, MEMSET]),
    ("cuda_gpu_trace", [("TARGET_INFO_GPU", "1")], [KERNELS, MEMCPY, MEMSET]),
    ("cuda_kern_exec", [KERNELS, RUNTIME], []),
    ("nvtx_pushpop", [("NVTX_EVENTS", "eventType = 59")], []),
    ("nvtx_startend", [("NVTX_EVENTS", "eventType = 60")], []),
    ("nvtx_kern_sum", [RANGES, KERNELS], []),
    ("nvtx_gpu_proj", [RANGES], [KERNELS, MEMCPY, MEMSET]),
    ("nvtx_sum", [RANGES], []),
    ("osrt", [("OSRT_API", "1")], []),
    ("um_", [("CUDA_UM_CPU_PAGE_FAULT_EVENTS", "1")], []),
]


def needs_of(report):
    for prefix, every, any_of in NEEDS:
        if report.startswith(prefix):
            return every, any_of
    return None


def holds_rows(path):
    raw = lzma.open(path).read() if path.suffix == ".xz" else path.read_bytes()
    text = raw.decode(errors="replace").strip()
    if text in ("", "[]", "{}"):
        return False
    if path.name.removesuffix(".xz").endswith((".csv", ".tsv")):
        return sum(1 for line in text.splitlines() if line.strip()) > 1  # more than the header
    return True


def open_export(trace):
    raw = trace.read_bytes()
    if raw[:6] == b"\xfd7zXZ\x00":
        raw = lzma.decompress(raw)
    elif raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    tmp = tempfile.NamedTemporaryFile(suffix=".sqlite", delete=False)
    tmp.write(raw)
    tmp.close()
    return sqlite3.connect(tmp.name), tmp.name


def main():
    fixtures, skips = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    known = set()
    for line in skips.read_text().splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] in ("differs", "differs-cli"):
            known.add((words[1], words[2]))
    counts, failures, compared = {}, [], 0
    for gold in sorted(p for p in fixtures.rglob("gold") if p.is_dir()):
        traces = [p for p in gold.parent.iterdir() if p.name.startswith("trace.sqlite")]
        if not traces:
            continue
        db, path = open_export(traces[0])
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

        def rows(table, where):
            if table not in tables:
                return None
            return db.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0]

        fixture = gold.parent.name
        for f in sorted(p for p in gold.rglob("*") if p.is_file()):
            rel = str(f.relative_to(gold)).removesuffix(".xz")
            if f.name in ("MANIFEST.txt", "command.txt") or rel in ("analyze.txt", "analyze_options/analyze.txt"):
                continue
            if holds_rows(f):
                compared += 1
                continue
            name = pathlib.Path(rel).name
            if rel.startswith("variants/"):  # another format of a report: col_, json_, ms_, sec_, tsv_, us_
                name = name.split("_", 1)[1]
            needs = needs_of(name)
            reason = None
            if rel.startswith(("analyze/", "analyze_options/")):
                reason = "no-finding"  # the rule found nothing at these thresholds; kernscope must find nothing too
            elif (fixture, rel) in known or (fixture, rel.removeprefix("variants/")) in known:
                reason = "known"
            elif needs is not None:
                every, any_of = needs
                counted = [rows(t, w) for t, w in every]
                optional = [rows(t, w) for t, w in any_of]
                if any(c is None for c in counted) or (any_of and all(c is None for c in optional)):
                    reason = "no-table"
                elif any(c == 0 for c in counted) or (any_of and all((c or 0) == 0 for c in optional)):
                    reason = "no-rows"
            if reason is None and rel.startswith("filters/"):
                reason = "filtered"
            if reason is None:
                failures.append(f"{fixture}/gold/{rel}")
                continue
            counts[reason] = counts.get(reason, 0) + 1
        db.close()
        os.unlink(path)
    total = sum(counts.values())
    print(f"{compared} gold files hold rows; {total} hold none (nothing to compare but that kernscope prints none too): " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if failures:
        print("empty gold with the data in the export and no reason:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
