#!/usr/bin/env python3
"""The README's sample output, from the command its marker names (so it is never typed by hand).

A marker `<!-- sample: kernscope ARGS [| head -N] -->` is followed by a ```text block: this script runs
the command (with KERNSCOPE, default build/tools/kernscope/kernscope) and writes its output into the
block; with --check it exits 1 when the block differs (tests/cli/readme_sample_test.sh runs that).

    scripts/update-readme-sample.py [--check] [KERNSCOPE]
"""
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- sample: (.*?) -->\n```text\n(.*?)```\n", re.S)


def output_of(command, kernscope):
    head = None
    if "|" in command:
        command, pipe = command.split("|", 1)
        m = re.fullmatch(r"\s*head -(\d+)\s*", pipe)
        if not m:
            sys.exit(f"update-readme-sample: only '| head -N' may follow the command: {pipe!r}")
        head = int(m.group(1))
    args = shlex.split(command)
    if args[0] != "kernscope":
        sys.exit(f"update-readme-sample: the sample must be a kernscope command: {command!r}")
    run = subprocess.run([kernscope] + args[1:], cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"update-readme-sample: {command} exited {run.returncode}: {run.stderr.strip()}")
    lines = run.stdout.splitlines(keepends=True)
    return "".join(lines[:head] if head else lines)


def main():
    check = "--check" in sys.argv[1:]
    rest = [a for a in sys.argv[1:] if a != "--check"]
    kernscope = rest[0] if rest else str(ROOT / "build/tools/kernscope/kernscope")
    readme = (ROOT / "README.md").read_text()
    samples = list(MARKER.finditer(readme))
    if not samples:
        sys.exit("update-readme-sample: README.md has no <!-- sample: ... --> block")
    updated = MARKER.sub(lambda m: f"<!-- sample: {m.group(1)} -->\n```text\n{output_of(m.group(1), kernscope)}```\n", readme)
    if check:
        if updated != readme:
            print("README.md's sample differs from what its command prints now: run scripts/update-readme-sample.py")
            sys.exit(1)
        print(f"README.md's {len(samples)} sample block(s) equal what their commands print")
        return
    (ROOT / "README.md").write_text(updated)
    print(f"wrote {len(samples)} sample block(s) into README.md")


if __name__ == "__main__":
    main()
