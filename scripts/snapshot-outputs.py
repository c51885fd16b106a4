#!/usr/bin/env python3
"""Writes what every command prints on every trace of the fixtures (and the shared public traces,
where ../shared is beside the project) into one folder, so that two builds can be compared byte
for byte: a change meant to keep outputs the same (a speed-up, a refactor) must leave
`diff -r BEFORE AFTER` empty, and one meant to change them shows exactly where.

    scripts/snapshot-outputs.py --kernscope build/tools/kernscope/kernscope --out /tmp/before
    ... change, rebuild ...
    scripts/snapshot-outputs.py --kernscope build/tools/kernscope/kernscope --out /tmp/after
    diff -r /tmp/before /tmp/after

Each file holds the command line, the exit code, standard output and standard error (the
progress line is off). Options: --jobs N (default: the cores), --only SUBSTRING (traces whose
path holds it), --commands a,b (a subset of the commands below).
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRACE_SUFFIXES = (".sqlite", ".sqlite.gz", ".sqlite.xz", ".json", ".json.gz", ".json.xz")

# Each command with the formats it is compared in. HTML is left out: its page embeds the same
# document as the JSON, and its size would dominate the folder.
COMMANDS = {
    "info": [[], ["--format", "json"]],
    "stats": [[]],
    "tail": [[]],
    "ops": [[], ["--format", "json"]],
    "analyze": [[]],
    "steps": [[], ["--format", "json"]],
    "account": [[], ["--format", "json"]],
    "moe": [[]],
    "spec": [[]],
    "whatif": [["--change", "graphs"], ["--change", "no-sync", "--format", "json"]],
    "critical-path": [[]],
    "roofline": [[]],
    "host": [[]],
    "report": [[], ["--format", "json"]],
}


def traces(only):
    found = []
    for base in (ROOT / "tests" / "fixtures", ROOT.parent / "shared" / "fixtures" / "realworld"):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if not path.is_file() or not path.name.endswith(TRACE_SUFFIXES):
                continue
            # gold outputs and small descriptive JSON files are not traces
            if "gold" in path.parts or path.stat().st_size < 10_000:
                continue
            if only and only not in str(path):
                continue
            found.append(path)
    return found


def run_one(kernscope, out_dir, trace, command, extra):
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(trace.relative_to(ROOT.parent)))
    tag = "_".join(a.lstrip("-") for a in extra) or "default"
    target = out_dir / name / f"{command}.{re.sub(r'[^A-Za-z0-9._=-]+', '_', tag)}.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    argv = [kernscope, command, "-q", *extra, str(trace)]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=300)
        rc, stdout, stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, stdout, stderr = "timeout", b"", b""
    shown = " ".join([command, *extra, str(trace.relative_to(ROOT.parent))])
    target.write_bytes(f"$ kernscope {shown}\nexit {rc}\n--- stdout\n".encode() + stdout + b"\n--- stderr\n" + stderr)
    return rc


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernscope", default=str(ROOT / "build" / "tools" / "kernscope" / "kernscope"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", default="")
    parser.add_argument("--commands", default="")
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = [c for c in args.commands.split(",") if c] or list(COMMANDS)
    unknown = [c for c in wanted if c not in COMMANDS]
    if unknown:
        sys.exit(f"snapshot-outputs: unknown command(s) {', '.join(unknown)}; known: {', '.join(COMMANDS)}")
    jobs = [(t, c, extra) for t in traces(args.only) for c in wanted for extra in COMMANDS[c]]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        codes = list(pool.map(lambda j: run_one(args.kernscope, out_dir, *j), jobs))
    crashed = sum(1 for c in codes if c not in (0, 1, 2))
    print(f"{len(jobs)} outputs in {out_dir} ({crashed} neither exit 0, 1 nor 2)")


if __name__ == "__main__":
    main()
