#!/usr/bin/env python3
"""Checks `whatif --change scale=gemm:R` on queued_window.py's "before" trace against the "after"
program's measured step time (bench/gpu/whatif/queued_window.sh made both).

R: the mean GEMM kernel's time, after over before (kernels classed gemm by `kernscope ops`, which
tests/fixtures/op_classes checks by hand; both variants run the same GEMMs, half as deep after). Measured: the untraced runs' medians (each run's own
median step). The saving predicted (traced step less predicted step) is compared with the saving
measured (before less after), within TOLERANCE of it; the whole traced window (its first step waits for
the warm-up step's queued kernels) predicted against the after program's traced window, within half
TOLERANCE.

usage: queued_window_check.py KERNSCOPE DIR [--tolerance 0.2] [--baseline OTHER_KERNSCOPE]
  DIR holds steps.tsv, before.json.gz, after.json.gz. --baseline: the same prediction by another build,
  printed beside (it is not checked).
"""
import argparse
import csv
import json
import pathlib
import statistics
import subprocess
import sys


def run_json(kernscope, *args):
    r = subprocess.run([kernscope, *args, "-q", "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def gemm_ns_per_kernel(kernscope, trace):
    rows = run_json(kernscope, "ops", str(trace))
    gemm = [r for r in rows if r["Class"] == "gemm"]
    if not gemm:
        sys.exit(f"no gemm class in {trace}")
    return gemm[0]["Total Time (ns)"] / gemm[0]["Instances"], gemm[0]["Instances"]


def predicted(kernscope, trace, change, span=False):
    w = run_json(kernscope, "whatif", "--change", change, str(trace))
    if span:  # the whole replayed window: its first step waits for the work queued before it
        return w["traced_span_ns"] / 1e6, w["predicted_span_ns"] / 1e6
    group = next(g for g in w["groups"] if g["group"] == w["headline_group"])
    return group["traced_step_ns"] / 1e6, group["predicted_step_ns"] / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernscope")
    ap.add_argument("dir")
    ap.add_argument("--tolerance", type=float, default=0.2)
    ap.add_argument("--baseline")
    a = ap.parse_args()
    d = pathlib.Path(a.dir)
    rows = list(csv.DictReader(open(d / "steps.tsv"), delimiter="\t"))
    measured = {v: statistics.median(float(r["step_ms"]) for r in rows if r["variant"] == v and r["traced"] == "no")
                for v in ("before", "after")}
    g_before, n_before = gemm_ns_per_kernel(a.kernscope, d / "before.json.gz")
    g_after, n_after = gemm_ns_per_kernel(a.kernscope, d / "after.json.gz")
    ratio = g_after / g_before
    change = f"scale=gemm:{ratio:.4f}"
    traced, pred = predicted(a.kernscope, d / "before.json.gz", change)
    same_traced, same = predicted(a.kernscope, d / "before.json.gz", "scale=gemm:1")
    saving_measured = measured["before"] - measured["after"]
    saving_predicted = traced - pred
    error = (saving_predicted - saving_measured) / saving_measured
    print(f"measured (untraced medians): before {measured['before']:.3f} ms, after {measured['after']:.3f} ms, saving {saving_measured:.3f} ms")
    print(f"GEMM kernel time: before {g_before / 1e3:.1f} us ({n_before} kernels), after {g_after / 1e3:.1f} us ({n_after}): {change}")
    print(f"replayed unchanged: {same_traced:.3f} -> {same:.3f} ms")
    print(f"predicted: {traced:.3f} -> {pred:.3f} ms, saving {saving_predicted:.3f} ms ({error:+.1%} of the measured saving)")
    # The window (3 steps; the first waits for the warm-up step's queued work, whose launches the
    # trace lacks): predicted for the before trace against the after trace's traced window. The
    # median step above is one of the two later steps, whose launches are traced.
    span_traced, span_pred = predicted(a.kernscope, d / "before.json.gz", change, span=True)
    _, span_after = predicted(a.kernscope, d / "after.json.gz", "scale=gemm:1", span=True)
    span_error = span_pred / span_after - 1
    print(f"window: before traced {span_traced:.3f} ms, predicted {span_pred:.3f} ms; after traced {span_after:.3f} ms ({span_error:+.1%})")
    if a.baseline:
        b_traced, b_pred = predicted(a.baseline, d / "before.json.gz", change)
        b_error = ((b_traced - b_pred) - saving_measured) / saving_measured
        _, b_span = predicted(a.baseline, d / "before.json.gz", change, span=True)
        print(f"baseline {a.baseline}: step {b_traced:.3f} -> {b_pred:.3f} ms, saving {b_traced - b_pred:.3f} ms ({b_error:+.1%}); "
              f"window predicted {b_span:.3f} ms ({b_span / span_after - 1:+.1%} of the after trace's)")
    ok = abs(error) <= a.tolerance and abs(span_error) <= a.tolerance / 2 and abs(same - same_traced) <= 0.001 * same_traced
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
