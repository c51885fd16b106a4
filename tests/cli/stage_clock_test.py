#!/usr/bin/env python3
"""The stage clock (base/stage_clock.hpp): with KERNSCOPE_PHASE_TIMES set, report prints one line per stage on
standard error — the reading, each analysis, each replay — with seconds that never go back, a resident set and a
peak that never falls; without it, no such line, and the output is the same either way.
usage: stage_clock_test.py KERNSCOPE FIXTURES_DIR"""
import os
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from compressed import plain_copy  # noqa: E402

kernscope, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
trace = plain_copy(fixtures / "nsys" / "llama_decode_h200" / "trace.sqlite.xz")
failures = []


def check(ok, what, got=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else f": {got[:400]!r}"))
    if not ok:
        failures.append(what)


def run(env_value):
    env = dict(os.environ)
    env.pop("KERNSCOPE_PHASE_TIMES", None)
    if env_value is not None:
        env["KERNSCOPE_PHASE_TIMES"] = env_value
    return subprocess.run([kernscope, "report", "-q", str(trace)], capture_output=True, text=True, env=env)


timed, plain = run("1"), run(None)
check(timed.returncode == 0 and plain.returncode == 0, "report exits 0 with and without the clock", timed.stderr + plain.stderr)
check(timed.stdout == plain.stdout, "the clock changes nothing on standard output")
check("kernscope: stage" not in plain.stderr, "no stage line without KERNSCOPE_PHASE_TIMES", plain.stderr)
line = re.compile(r"^kernscope: stage (\d+\.\d{3}) (.+) thread (\d+) rss (\d+\.\d) MiB peak (\d+\.\d) MiB$")
stages = [m for m in (line.match(x) for x in timed.stderr.splitlines()) if m]
names = [m.group(2) for m in stages]
for expected in ("start", "read done", "step windows done", "steps done", "account done", "diagnosis done", "advice done",
                 "analysis done"):
    check(expected in names, f"a '{expected}' stage", timed.stderr)
check(any(n.startswith("replay ") for n in names), "a line per replay", timed.stderr)
seconds = [float(m.group(1)) for m in stages]
check(seconds[0] == 0.0 and all(b >= a - 0.002 for a, b in zip(seconds, seconds[1:])),
      "seconds start at 0 and do not go back (concurrent stages print in turn)", str(seconds))
peaks = [float(m.group(5)) for m in stages]
check(all(b >= a for a, b in zip(peaks, peaks[1:])) and peaks[-1] > 0, "the peak never falls", str(peaks))
# The kernel keeps each thread's resident-page count apart and adds it up now and then, so a peak read at
# one instant can trail the resident set by a few pages a thread: the last peak holds every earlier one.
check(max(float(m.group(4)) for m in stages) <= peaks[-1] + 8.0, "the last peak holds every resident set printed",
      str([(m.group(4), m.group(5)) for m in stages]))
check("phase times: read" in timed.stderr, "the summary line of bench/gpu/report_phases.sh is still there", timed.stderr)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
