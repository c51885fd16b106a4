#!/usr/bin/env python3
"""Step time against each program's own clock (issue 47's uncaught mutation: TPOT of overlapping decode
steps not taken from the GPU period read 102.9 ms for decode_bench.after, whose program measured 2.80 ms,
and every test passed).

tests/fixtures/whatif: six programs traced by `kernscope record` on an H200; the folder's README table gives
each traced run's own step time (CUDA events around the decode loop, or the measured loop's wall between two
device synchronizations, over its steps). Checked, from `kernscope report --format json`: for the LLM decode
loops the TPOT p50; for the others (no LLM inference: no TPOT) the GPU period p50 of the measured group
(`:measure:...`, its decode phase where it has one): within 3 % of the program's figure. The truth is read
from the README table, not typed here.
Breaking check (2026-12-06): step_latency.cpp's read_tpot made never to take the GPU period for overlapping
steps (`pipelined = false && ...`) gives decode_bench.after 102.877 ms (+3576 %) and decode_bench.before
21.004 ms (+631 %): this test fails on both.
usage: step_time_vs_programs_test.py KERNSCOPE FIXTURES_DIR"""
import json
import os
import re
import subprocess
import sys


def main():
    kernscope, folder = sys.argv[1], os.path.join(sys.argv[2], "whatif")
    rows = re.findall(r"^\| `([\w.]+\.sqlite\.xz)` \|[^|]*\|[^|]*\| `([^`]+)` \((\d+)\) \| ([\d.]+) \|", open(os.path.join(folder, "README.md")).read(), re.M)
    failures = 0
    if len(rows) < 6:
        print(f"FAIL: {len(rows)} rows read from {folder}/README.md's table, want 6")
        sys.exit(1)
    for name, group, count, traced in rows:
        doc = json.loads(subprocess.run([kernscope, "report", "-q", "--format", "json", os.path.join(folder, name)],
                                        capture_output=True, text=True, check=True).stdout)["steps"]
        truth = float(traced)
        if doc["tpot"]["count"] > 0:
            got, what = doc["tpot"]["p50_ns"] / 1e6, "TPOT p50"
        else:
            groups = [g for g in doc["groups"] if g["name"].lstrip(":") == group.lstrip(":")]
            groups.sort(key=lambda g: g["phase"] != "decode")
            got, what = (groups[0]["gpu_period"]["p50_ns"] / 1e6, f"{group} GPU period p50") if groups else (0.0, "no group " + group)
        ok = abs(got / truth - 1) <= 0.03
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {what} {got:.4f} ms, the program's {truth:.4f} ms ({100 * (got / truth - 1):+.1f} %)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
