#!/usr/bin/env python3
"""bench/host_vs_pyspy.py on synthetic collapsed stacks whose shares are known by construction.

kernscope's file: 100 decode samples, own time A.forward 60, B.forward 30, helper 10 (and 50 prefill samples
that must not count). py-spy's file: 100 stacks through the decode line (w.py:20): A.forward 55, B.forward 35,
helper 10, and 40 through the prefill line (w.py:16) that must not count. A and B's methods share the bare
name `forward`, told apart only by reading w.py (written here) with --resolve.
Expected: by qualified name A +5.0 points, B -5.0, helper 0; by bare name (no readable file) forward 90 vs 90.
usage: host_vs_pyspy_test.py   (exit 0 when every check passes)"""
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "bench" / "host_vs_pyspy.py"
sys.path.insert(0, str(ROOT / "bench"))
import host_vs_pyspy  # noqa: E402

SOURCE = """\
import time
class A:
    def forward(self):
        return helper()          # line 4
class B:
    def forward(self):
        return helper()          # line 7
def helper():
    return time.sleep(0)         # line 9
def run():
    x = 0
    a = A()
    b = B()
    for i in range(3):
        x += 1
        a.forward()              # line 16: the prefill
    for i in range(3):
        x += 1
        x += 2
        a.forward(); b.forward() # line 20: a decode step
run()
"""

failures = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run_tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as d:
    d = pathlib.Path(d)
    src = d / "w.py"
    src.write_text(SOURCE)
    ks = d / "ks.txt"
    ks.write_text("\n".join([
        "measure:decode_step [decode];<module> (w.py);run (w.py);A.forward (w.py) 60",
        "measure:decode_step [decode];<module> (w.py);run (w.py);B.forward (w.py) 30",
        "measure:decode_step [decode];<module> (w.py);run (w.py);A.forward (w.py);helper (w.py) 4",
        "measure:decode_step [decode];<module> (w.py);run (w.py);B.forward (w.py);helper (w.py) 6",
        "measure:prefill [prefill];<module> (w.py);run (w.py);A.forward (w.py) 50",
    ]) + "\n")
    ps = d / "ps.txt"
    ps.write_text("\n".join([
        f"<module> ({src}:21);run ({src}:20);forward ({src}:4) 55",
        f"<module> ({src}:21);run ({src}:20);forward ({src}:7) 35",
        f"<module> ({src}:21);run ({src}:20);forward ({src}:7);helper ({src}:9) 10",
        f"<module> ({src}:21);run ({src}:16);forward ({src}:4) 40",
        " 7",  # py-spy's line for samples without a Python frame: skipped
    ]) + "\n")
    through = r"^run \(.*w\.py:20\)$"

    r = host_vs_pyspy.compare(ks, ps, through=through, resolve=True)
    shares = {x["function"]: (round(100 * x["kernscope"], 6), round(100 * x["pyspy"], 6)) for x in r["rows"]}
    check(f"qualified names resolved from w.py: {shares}",
          r["matched_by"] == "qualname" and shares == {"A.forward": (60.0, 55.0), "B.forward": (30.0, 35.0), "helper": (10.0, 10.0)})
    check(f"decode samples only: {r['kernscope_samples']}, {r['pyspy_samples']}", (r["kernscope_samples"], r["pyspy_samples"]) == (100, 100))
    check(f"largest difference 5 points: {r['max_diff_points']}", abs(r["max_diff_points"] - 5.0) < 1e-9)

    # Without the file (or --resolve), both sides fall back to bare names: forward 90 against 90.
    gone = d / "gone.txt"
    gone.write_text(ps.read_text().replace(str(src), str(d / "not-there" / "w.py")))
    r = host_vs_pyspy.compare(ks, gone, through=through, resolve=True)
    shares = {x["function"]: round(100 * x["kernscope"], 6) for x in r["rows"]}
    check(f"unreadable file: matched by bare name {shares}, {r['max_diff_points']}, {r['matched_by']}", r["matched_by"] == "name" and shares == {"forward": 90.0, "helper": 10.0}
          and r["max_diff_points"] < 1e-9 and r["unresolved"])

    # py-spy 0.4 on CPython 3.11+ names methods by their qualified names itself: no file needed.
    qual = d / "qual.txt"
    qual.write_text(ps.read_text().replace(f"forward ({src}:4)", "A.forward (/elsewhere/w.py:4)")
                    .replace(f"forward ({src}:7)", "B.forward (/elsewhere/w.py:7)"))
    r = host_vs_pyspy.compare(ks, qual, through=through)
    shares = {x["function"]: round(100 * x["pyspy"], 6) for x in r["rows"]}
    check(f"py-spy's own qualified names: {shares}", r["matched_by"] == "qualname" and shares == {"A.forward": 55.0, "B.forward": 35.0, "helper": 10.0})

    out = run_tool(ks, ps, "--through", through, "--resolve", "--max-diff", 6)
    check("CLI: within 6 points, exit 0", out.returncode == 0 and "+5.0  A.forward (w.py)" in out.stdout)
    out = run_tool(ks, ps, "--through", through, "--resolve", "--max-diff", 4)
    check(f"CLI: over 4 points, exit 1 (got {out.returncode})", out.returncode == 1)

    bad = d / "bad.txt"
    bad.write_text("a;b;c\n")
    for args, why in [((bad, ps), "a line without a count"), ((ks, d / "none.txt"), "a missing file"),
                      ((ks, ps, "--groups", "nothing-like-this"), "no group selected"),
                      ((ks, ps, "--through", "nothing-like-this"), "no py-spy stack selected")]:
        out = run_tool(*args)
        check(f"bad input ({why}): exit 2, one line", out.returncode == 2 and out.stderr.count("\n") == 1 and not out.stdout)

sys.exit(1 if failures else 0)
