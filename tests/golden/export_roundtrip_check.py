#!/usr/bin/env python3
"""Checks `kernscope export` on real traces (nsys exports and Kineto JSON):
- the file is strict JSON (Python's json module) in the trace-event format;
- events on every (pid, tid) track are well nested, as viewers require;
- every flow start has its end, and each flow ends at the start of a GPU slice;
- reading the export back gives the same kernel, API, memory and NVTX summaries as the source
  (kernscope's reports on both; the timestamps are exact, so the numbers are identical).

usage: export_roundtrip_check.py KERNSCOPE FIXTURE_DIR"""
import os
import collections
import csv
import decimal
import json
import pathlib
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

REPORTS = ["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum"]


def run(kernscope, *args):
    return subprocess.run([kernscope, *args], check=True, capture_output=True, text=True).stdout


def stats_csv(kernscope, report, path):
    """(exit code, CSV) of one report; bad input such as a trace without CUDA data exits with 2."""
    r = subprocess.run([kernscope, "stats", "--report", report, "--format", "csv", str(path)], capture_output=True, text=True)
    return r.returncode, r.stdout


def check_structure(path):
    with open_any(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"]
    tracks = collections.defaultdict(list)
    starts, ends = {}, {}
    for e in events:
        if e["ph"] == "X":
            start = decimal.Decimal(e["ts"])
            tracks[(e["pid"], e["tid"])].append((start, start + decimal.Decimal(e["dur"])))
        elif e["ph"] == "s":
            starts[e["id"]] = e
        elif e["ph"] == "f":
            ends[e["id"]] = e
    problems = []
    for track, slices in tracks.items():
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end in slices:
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                problems.append(f"track {track}: slice [{start}, {end}] crosses the end of its parent {stack[-1]}")
                break
            stack.append(end)
    if set(starts) != set(ends):
        problems.append(f"{len(set(starts) ^ set(ends))} flows without both ends")
    gpu_starts = {(e["pid"], e["tid"], decimal.Decimal(e["ts"])) for e in events
                  if e["ph"] == "X" and e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_graph")}
    dangling = [i for i, e in ends.items() if (e["pid"], e["tid"], decimal.Decimal(e["ts"])) not in gpu_starts]
    if dangling:
        problems.append(f"{len(dangling)} flows do not end on a GPU slice")
    return problems, sum(len(s) for s in tracks.values()), len(starts)


def tie_blocks(csv_text):
    """The report's header, then its rows as runs of equal sort key (the first total column), in
    order. Rows within a run may legitimately come in another order after the round trip (names
    are interned in the export's event order, and ties keep name order, as nsys's SQL does), so a
    run is compared as a sorted list; any other change of order is a difference. (Checked by
    swapping two rows of different totals in kernscope's output for the export: the comparison of
    sorted lines this replaces passed every fixture, this fails every fixture that has rows.)"""
    lines = csv_text.splitlines()
    if not lines:
        return []
    header = next(csv.reader([lines[0]]))
    key = next((i for i, column in enumerate(header) if column.startswith("Total")), None)
    if key is None:
        return lines  # not a summary table: compared as it is
    blocks = [lines[0]]
    run_key, run = None, []
    for line, row in zip(lines[1:], csv.reader(lines[1:])):
        if run and row[key] != run_key:
            blocks.append((run_key, sorted(run)))
            run = []
        run_key = row[key]
        run.append(line)
    if run:
        blocks.append((run_key, sorted(run)))
    return blocks


def main():
    kernscope, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
    sources = (sorted((fixtures / "nsys").glob("*/trace.sqlite.xz")) + sorted((fixtures / "kineto").glob("*.json.xz")) +
               sorted((fixtures / "graph_trace").glob("*.sqlite.xz")))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for source in sources:
            out = pathlib.Path(tmp) / "export.json.gz"
            run(kernscope, "export", "-o", str(out), str(source))
            problems, slices, flows = check_structure(out)
            name = source.parent.name if source.name == "trace.sqlite.xz" else source.name
            if slices == 0:
                # Nothing on the timeline (a trace with no CUDA rows and no ranges): reading back a
                # JSON trace with no complete event is refused, exit code 2 with that reason.
                r = subprocess.run([kernscope, "info", str(out)], capture_output=True, text=True)
                if r.returncode != 2 or "no complete trace event" not in r.stderr:
                    failures += 1
                    print(f"FAIL {name}: an empty export read back with exit code {r.returncode}: {r.stderr.strip()}")
                else:
                    print(f"ok   {name}: nothing to export; reading the empty export back is refused as it should be")
                continue
            rows_compared = 0
            refused = 0  # reports kernscope refuses on the source (an export without CUDA data)
            for report in REPORTS:
                want_rc, want = stats_csv(kernscope, report, source)
                got_rc, got = stats_csv(kernscope, report, out)
                if want_rc != 0:
                    # Nothing to compare; the export must hold no rows for it either (read back as
                    # JSON, a trace without CUDA events has empty reports rather than being refused).
                    refused += 1
                    if got_rc == 0 and len(got.splitlines()) > 1:
                        problems.append(f"{report}: refused on the source (exit code {want_rc}), has rows after the round trip")
                    continue
                if got_rc != 0:
                    problems.append(f"{report}: exit code {got_rc} after the round trip")
                    continue
                if tie_blocks(got) != tie_blocks(want):
                    problems.append(f"{report} differs after the round trip")
                rows_compared += max(0, len(want.splitlines()) - 1)
            if rows_compared == 0 and refused < len(REPORTS):
                problems.append("no report has a row to compare")
            # Whole-graph executions come back as executions, with their GPU time.
            def graph_execs(path):
                counts = json.loads(run(kernscope, "info", "--format", "json", str(path)))["counts"]
                return counts.get("graph_execs") or 0
            if graph_execs(out) != graph_execs(source):
                problems.append(f"graph executions {graph_execs(source)} became {graph_execs(out)}")
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "; ".join(problems[:5]))
            else:
                compared = f"{rows_compared} rows" if refused < len(REPORTS) else "no CUDA data on either side"
                print(f"ok   {name}: {slices} slices, {flows} flows, {len(REPORTS)} reports equal ({compared})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
