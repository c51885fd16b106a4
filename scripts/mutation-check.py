#!/usr/bin/env python3
"""Puts plausible bugs into the code one at a time and says which the tests catch.

    scripts/mutation-check.py tests/mutations/2026-12-06.json [--only ID,ID] [--build build]

Each mutation in the list names a file, a piece of its text that must occur exactly once, what
replaces it, and why it is a plausible bug. For each: the text is replaced, the build is brought
up to date, and ctest runs every GoogleTest case (names with a dot) and the script tests the
mutation's "ctest" regex names (golden, CLI and truth tests), with the environment ctest gives
them; a mutation with "pytest" (test ids under python/tests) also has the Python extension rebuilt
(`make python`) and those tests run with KERNSCOPE_CLI set; the file is put back whatever happens (also on Ctrl-C or SIGTERM). A mutation is caught when the build or any of those tests fails. The summary
line counts them; `--json FILE` writes the per-mutation results. A mutation whose text is no
longer in its file is reported as stale (the code moved on: update the list), not as caught.

Run it on a clean tree: it rewrites files in place and restores them from memory.
"""
import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(cmd, cwd=ROOT, timeout=1800):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def check(mutation, build):
    path = ROOT / mutation["file"]
    original = path.read_text()
    if original.count(mutation["find"]) != 1:
        return "stale", f"text found {original.count(mutation['find'])} times in {mutation['file']}"
    path.write_text(original.replace(mutation["find"], mutation["replace"]))
    try:
        code, out = run(["cmake", "--build", str(build)])
        if code != 0:
            return "caught", "the build fails"
        regex = "\\." + (f"|{mutation['ctest']}" if mutation.get("ctest") else "")
        code, out = run(["ctest", "-R", regex, "-j2", "--timeout", "900"], cwd=build)
        if code != 0:
            failed = [line.split(" - ", 1)[-1].strip() for line in out.splitlines() if line.strip()[:1].isdigit() and " - " in line]
            return "caught", f"ctest: {'; '.join(failed[:4]) or 'failed'}"
        if mutation.get("pytest"):
            code, out = run(["make", "python", f"BUILD={build}"])
            if code != 0:
                return "caught", "the Python extension does not build"
            env = dict(os.environ, KERNSCOPE_CLI=str(build / "tools" / "kernscope" / "kernscope"))
            p = subprocess.run([str(build / "venv" / "bin" / "python"), "-m", "pytest", "-q", "-x", *mutation["pytest"]], cwd=ROOT,
                               capture_output=True, text=True, env=env, timeout=1800)
            if p.returncode != 0:
                failed = [line for line in p.stdout.splitlines() if line.startswith("FAILED")]
                return "caught", f"pytest: {'; '.join(failed[:2]) or 'failed'}"
        return "missed", "every test passed"
    finally:
        path.write_text(original)
        if mutation.get("pytest"):
            run(["cmake", "--build", str(build)])
            run(["make", "python", f"BUILD={build}"])  # the extension matching the restored sources


def main():
    # SIGTERM as an exception, so that the file being mutated is put back (the finally in check()).
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mutations")
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--only", default="")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    build = pathlib.Path(args.build).resolve()
    mutations = json.loads(pathlib.Path(args.mutations).read_text())
    only = {m for m in args.only.split(",") if m}
    results = []
    for m in mutations:
        if only and m["id"] not in only:
            continue
        t0 = time.time()
        verdict, detail = check(m, build)
        results.append({"id": m["id"], "verdict": verdict, "detail": detail, "seconds": round(time.time() - t0)})
        print(f"{m['id']:<32} {verdict:<7} {detail}", flush=True)
    # Leave the build matching the restored sources.
    run(["cmake", "--build", str(build)])
    caught = sum(r["verdict"] == "caught" for r in results)
    counted = sum(r["verdict"] in ("caught", "missed") for r in results)
    print(f"caught {caught} of {counted}" + (f" ({len(results) - counted} stale or in error)" if counted < len(results) else ""))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    sys.exit(0 if caught == counted else 1)


if __name__ == "__main__":
    main()
