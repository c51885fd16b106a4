#!/usr/bin/env python3
"""`kernscope host` on PyTorch-profiler traces without samples reads the host's functions from the
ranges the profiler timed (issue 27): its python_function events (with_stack=True), else its cpu_op
events. The truth is computed here from the JSON itself (exact decimal microseconds): on the thread
of the profiler step, every range of that category starting inside the step; own time = the range's
time less its direct children's; names with " at 0x...>" (the object a built-in method ran on) are one
function. The 5 functions with the most own time, and their own and total times per step, must equal
kernscope's host_functions table within 2 ns (rounding of the microsecond decimals), and each step's
top function its host_steps column.

usage: kineto_host_functions_check.py KERNSCOPE TRACE.json.gz [TRACE.json.gz ...]"""
import os
import collections
import csv
import decimal
import io
import json
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def ns(us):
    return int((decimal.Decimal(us) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def truth(path):
    with open_any(path, "rt", encoding="utf-8") as f:
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") in ("user_annotation", "cpu_op", "Operator")]
    category = "python_function" if any(e.get("cat") == "python_function" and e.get("tid") == steps[0]["tid"] for e in events) else "cpu_op"
    cats = {"python_function"} if category == "python_function" else {"cpu_op", "Operator"}  # "Operator": PyTorch before 1.9
    per_step = []
    own, total = collections.Counter(), collections.Counter()
    for step in steps:
        t0, t1 = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
        ranges = sorted(((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), ADDRESS.sub("", e["name"]))
                         for e in events if e.get("ph") == "X" and e.get("cat") in cats and e.get("tid") == step["tid"]
                         and not str(e["name"]).startswith("ProfilerStep#")),
                        key=lambda r: (r[0], -r[1]))
        mine = collections.Counter()
        stack = []
        own_of = {}
        for i, (s, e, name) in enumerate(ranges):
            while stack and ranges[stack[-1]][1] <= s:
                stack.pop()
            own_of[i] = e - s
            if stack:
                parent = stack[-1]
                own_of[parent] -= min(e, ranges[parent][1]) - s
            outermost = all(ranges[k][2] != name for k in stack)
            stack.append(i)
            if t0 <= s < t1:
                if outermost:
                    total[name] += e - s
        for i, (s, e, name) in enumerate(ranges):
            if t0 <= s < t1:
                own[name] += own_of[i]
                mine[name] += own_of[i]
        per_step.append(max(mine.items(), key=lambda kv: kv[1])[0] if mine else "")
    return category, len(steps), own, total, per_step


def tables(kernscope, path):
    r = subprocess.run([kernscope, "host", "--format", "json", path], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def main():
    kernscope, paths = sys.argv[1], sys.argv[2:]
    failures = 0
    for path in paths:
        category, steps, own, total, per_step = truth(path)
        doc = tables(kernscope, path)
        rows = {r["Function"]: r for r in doc["host_functions"]}
        top = own.most_common(5)
        problems = []
        for name, value in top:
            row = rows.get(name)
            if row is None:
                problems.append(f"{name}: not in kernscope's table")
                continue
            if abs(row["Own per Step (ns)"] - value // steps) > 2 or abs(row["Total per Step (ns)"] - total[name] // steps) > 2:
                problems.append(f"{name}: own {row['Own per Step (ns)']} / total {row['Total per Step (ns)']} per step, "
                                f"by hand {value // steps} / {total[name] // steps}")
        got_top = [r["Top Function (own)"] for r in doc["host_steps"]]
        if got_top != per_step:
            problems.append(f"top function per step {got_top}, by hand {per_step}")
        if not any(n["kind"] == "host_functions_from_ranges" and category in n["text"] for n in doc.get("notes", [])):
            problems.append(f"the notes do not say the functions come from {category} ranges")
        print(f"{'FAIL' if problems else 'ok  '} {path}: {category} ranges, {steps} steps, top {top[0][0] if top else '-'}")
        for p in problems:
            print("       " + p)
        failures += bool(problems)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
