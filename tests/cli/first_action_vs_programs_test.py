#!/usr/bin/env python3
"""report's first action against programs built with a known bottleneck (issue 46, "Done when").

Each program was traced by `kernscope record` with its defaults, then changed for real and run again
(bench/gpu/bottlenecks/ and bench/gpu/whatif/; their step times are the programs' own clocks, in
tests/fixtures/bottlenecks/truth.json and bench/gpu/whatif/results/steps_h200_2026-11-27.tsv). The
first action of `report --format json` on the "before" trace must act on the known bottleneck's
account part, stand for the fix that was made (its what-if change), and predict a saving per step
within 20 % of the saving measured after making the fix (untraced medians, before minus after).

usage: first_action_vs_programs_test.py KERNSCOPE FIXTURES WHATIF_TSV
"""
import csv
import json
import pathlib
import statistics
import subprocess
import sys


def report(kernscope, trace):
    r = subprocess.run([kernscope, "report", "-q", "--format", "json", str(trace)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"report failed on {trace}: {r.stderr}")
    return json.loads(r.stdout)


def whatif_pair_savings(tsv):
    rows = list(csv.DictReader(open(tsv), delimiter="\t"))
    out = {}
    for pair in {r["pair"] for r in rows}:
        med = {v: statistics.median(float(r["step_ms"]) for r in rows if r["pair"] == pair and r["variant"] == v and r["traced"] == "no")
               for v in ("before", "after")}
        out[pair] = med["before"] - med["after"]
    return out


def main():
    kernscope, fixtures, tsv = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    truth = json.load(open(fixtures / "bottlenecks" / "truth.json"))["programs"]
    measured = {name: p["before"]["untraced"]["step_ms_median"] - p["after"]["untraced"]["step_ms_median"] for name, p in truth.items()}
    measured.update(whatif_pair_savings(tsv))
    # trace, the known bottleneck's part (a prefix of account part names), the fix's change (None: the
    # fix is not one the replay models, so no saving is compared), and why.
    cases = [
        (fixtures / "bottlenecks" / "pageable_d2h.before.sqlite.xz", "pageable_d2h", "copy", "overlap-copies",
         "a 704-byte device-to-host cudaMemcpyAsync into pageable memory blocks the host behind 4 ms of kernels each step"),
        (fixtures / "bottlenecks" / "python_gaps.before.sqlite.xz", "python_gaps", "host.unrecorded", "host=0",
         "2.9 ms of unannotated Python between launches each step, traced with record's defaults (its thread CPU clocks)"),
        (fixtures / "bottlenecks" / "warmup50x.before.sqlite.xz", "warmup50x", "gpu.gemm", None,
         "GPU-bound matmul steps after a first step 45x as long (the warm-up must not decide it)"),
        (fixtures / "whatif" / "nosync.before.sqlite.xz", "nosync", "blocked", "no-sync",
         "a cudaStreamSynchronize per step serialises 1.5 ms of host work with 2 ms of kernels"),
        (fixtures / "whatif" / "copies.before.sqlite.xz", "copies", "copy", "overlap-copies",
         "a 64 MiB pageable cudaMemcpy each step"),
        (fixtures / "whatif" / "decode_bench.after.sqlite.xz", None, "gpu.", None,
         "a decode replayed as CUDA graphs, GPU-bound: no CUDA-graph advice"),
    ]
    failures = []
    for trace, program, part, change, why in cases:
        r = report(kernscope, trace)
        actions = r["next_actions"]
        if not actions:
            failures.append(trace.name)
            print(f"FAIL {trace.name}: no action ({why})")
            continue
        # One replay, one claim: no two actions carry the prediction of the same change.
        claimed = [x["change"] for x in actions if x["predicted"]]
        if len(claimed) != len(set(claimed)):
            failures.append(trace.name)
            print(f"FAIL {trace.name}: a change's saving claimed twice: {claimed}")
        a = actions[0]
        ok = a["part"].startswith(part) and (change is None or a["change"] == change)
        line = f"{trace.name}: first action {a['kind']} on {a['part']} (change {a['change']}); expected {part}* ({why})"
        if change is not None and ok:
            p = a["predicted"]
            if not p:
                ok = False
                line += f"; not predicted: {a['why_not_predicted']}"
            else:
                predicted = (p["from_ns"] - p["to_ns"]) / 1e6
                error = (predicted - measured[program]) / measured[program]
                ok = abs(error) <= 0.20
                line += f"; saving per step predicted {predicted:.3f} ms, measured {measured[program]:.3f} ms ({100 * error:+.1f} %)"
        if part == "gpu." and a["kind"] in ("cuda-graphs",):
            ok = False
        print(("ok   " if ok else "FAIL ") + line)
        if not ok:
            failures.append(trace.name)
    if failures:
        sys.exit(f"failed: {', '.join(failures)}")


if __name__ == "__main__":
    main()
