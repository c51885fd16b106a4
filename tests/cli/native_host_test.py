#!/usr/bin/env python3
"""`kernscope host` on a trace of native stacks (no GPU): the file comes from the native sampler's unit test
(NativeRecording.SamplesANonPythonProgramAndWritesItsFile, run first as this test's fixture), whose main thread
spends 60 / 30 / 10 % of each 60 ms iteration in busy_sixty / busy_thirty / busy_ten, nominally (it spins on the
clock), and measures each call's wall time (TRACE.measured: a loaded machine stretches the calls it deschedules).
Checked from `kernscope host --format json`: each function's total share on the thread the command picks (the
one with most samples: the test has no CUDA launches) within 0.06 of the measured share,
the frames named with this binary as their module, and the notes word the sampler's cost as CPU time.
Breaking check (done once, 2026-11-26): swapping the measured shares of busy_sixty and busy_thirty fails.
Usage: native_host_test.py KERNSCOPE_BINARY TRACE
"""
import json
import subprocess
import sys


def main():
    kernscope, trace = sys.argv[1], sys.argv[2]
    run = subprocess.run([kernscope, "host", "--format", "json", "--limit", "0", trace], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr)
        return 1
    doc = json.loads(run.stdout)
    shares = {}
    for row in doc["host_functions"]:
        for name in ("busy_sixty", "busy_thirty", "busy_ten"):
            if name in row["Function"] and "(kernscope_native_sampler_tests)" in row["Function"]:
                shares[name] = float(row["Total (%)"]) / 100
    measured = {}
    with open(trace + ".measured") as f:
        for line in f:
            name, value = line.split()
            measured[name] = float(value)
    failures = []
    for name in ("busy_sixty", "busy_thirty", "busy_ten"):
        expected = measured[name]
        got = shares.get(name)
        print(f"{name}: total share {got} (measured by the program {expected})")
        if got is None or abs(got - expected) > 0.06:
            failures.append(name)
    notes = " ".join(doc["notes"])
    if "of one CPU" not in notes or "interpreter lock" in notes:
        failures.append("cost note: " + notes)
    if failures:
        print("FAILED:", failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
