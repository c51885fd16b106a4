#!/usr/bin/env python3
"""kernscope whatif's predictions against real runs where the change was made for real (issue 29).

For each pair of tests/fixtures/whatif (README there; programs in bench/gpu/whatif/), the "before"
trace replayed with the pair's change must predict the "after" program's step time, as measured on
the GPU without a profiler (the median of 5 interleaved rounds in
bench/gpu/whatif/results/steps_h200_2026-11-27.tsv, the program's own timer): every pair within
20 %, the median absolute error of all pairs within 10 %. The Llama pair's traces (over 1 MB each) are
checked where their folder is given (the third argument), else listed as unchecked.

And `report` on the bundled Llama trace (tests/fixtures/nsys/llama_decode_h200) must lead with
CUDA graphs and state the predicted TPOT, within 20 % of the measured graphed Llama decode (the
pair's "after", untraced). That trace's decode runs 695 kernels per step (a DynamicCache), the
measured graphed one 830 (a StaticCache): the same model and shapes, not the same kernels, so this is
the looser of the two checks.

usage: whatif_pairs_check.py KERNSCOPE FIXTURE_DIR BENCH_RESULTS_TSV [LLAMA_TRACE_DIR]"""
import csv
import json
import pathlib
import re
import statistics
import subprocess
import sys

PAIRS = {  # pair: (change, the step group the program times)
    "decode_bench": ("graphs", ":measure:decode_step"),
    "nosync": ("no-sync", ":measure:step"),
    "copies": ("overlap-copies", ":measure:step"),
    "llama": ("graphs", ":measure:decode_step"),
}


def measured(tsv, variant):
    rows = list(csv.DictReader(open(tsv), delimiter="\t"))
    out = {}
    for pair in PAIRS:
        values = [float(r["step_ms"]) for r in rows if r["pair"] == pair and r["variant"] == variant and r["traced"] == "no"]
        if values:
            out[pair] = statistics.median(values)
    return out


def predict(kernscope, trace, change, group):
    r = subprocess.run([kernscope, "whatif", "--format", "json", str(trace), "--change", change], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"whatif failed on {trace}: {r.stderr}")
    for g in json.loads(r.stdout)["groups"]:
        if g["group"] == group:
            return g["predicted_step_ns"] / 1e6
    sys.exit(f"{trace}: no group {group}")


def main():
    kernscope, fixtures, tsv = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    llama_dir = pathlib.Path(sys.argv[4]) if len(sys.argv) > 4 else None
    after, before_ms = measured(tsv, "after"), measured(tsv, "before")
    failures, errors = [], []
    for pair, (change, group) in PAIRS.items():
        before = fixtures / "whatif" / f"{pair}.before.sqlite.xz"
        if not before.exists() and llama_dir and (llama_dir / f"{pair}.before.sqlite.gz").exists():
            before = llama_dir / f"{pair}.before.sqlite.gz"
        if not before.exists():
            print(f"UNCHECKED {pair}: {before.name} is not here (give its folder as the fourth argument)")
            continue
        predicted = predict(kernscope, before, change, group)
        error = (predicted - after[pair]) / after[pair]
        errors.append(abs(error))
        # Within 20 % of the step measured after, and nearer to it than to the step before: a change
        # that saves little (decode_bench's graphs: 2.86 -> 2.77 ms) must still be predicted to save
        # most of it (a replay that did nothing, 2.87 ms, is within 20 % of 2.77 too).
        change_ms = before_ms[pair] - after[pair]
        nearer = abs(predicted - after[pair]) <= 0.5 * abs(change_ms)
        ok = abs(error) <= 0.20 and nearer
        print(f"{'ok  ' if ok else 'FAIL'} {pair} --change {change}: predicted {predicted:.3f} ms, measured {before_ms[pair]:.3f} -> "
              f"{after[pair]:.3f} ms (untraced medians of 5), error {100 * error:+.1f} %, "
              f"{'within' if nearer else 'NOT within'} half the measured change of the after")
        if not ok:
            failures.append(pair)
    median_error = statistics.median(errors) if errors else 1.0
    print(f"median absolute error {100 * median_error:.1f} % over {len(errors)} pairs (at most 10 %)")
    if median_error > 0.10:
        failures.append("median error")
    # report on the bundled Llama trace leads with graphs and its predicted TPOT.
    bundled = fixtures / "nsys" / "llama_decode_h200" / "trace.sqlite.xz"
    r = subprocess.run([kernscope, "report", "--format", "json", str(bundled)], capture_output=True, text=True)
    actions = json.loads(r.stdout)["next_actions"] if r.returncode == 0 else []
    first = actions[0] if actions else {}
    predicted_to = (first.get("predicted") or {}).get("to_ns")
    if first.get("change") != "graphs" or first.get("predicted", {}).get("metric") != "TPOT" or not predicted_to:
        failures.append("report")
        print(f"FAIL report's first action is not CUDA graphs with a predicted TPOT: {str(first)[:300]}")
    else:
        predicted = predicted_to / 1e6
        error = (predicted - after["llama"]) / after["llama"]
        ok = abs(error) <= 0.20
        print(f"{'ok  ' if ok else 'FAIL'} report on the bundled Llama trace: TPOT with graphs {predicted:.3f} ms predicted, "
              f"the graphed Llama measured {after['llama']:.3f} ms, error {100 * error:+.1f} %")
        if not ok:
            failures.append("report")
    if failures:
        sys.exit(f"failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
