#!/usr/bin/env python3
"""nsys's command-line conventions kept by every kernscope command (issue 32, item 4).

- `-o FILE` on every analysis that prints: the file holds exactly what standard output would have, standard
  output stays empty, stderr says "wrote FILE"; `-o -` is standard output. (export and stats keep their own -o:
  a timeline file, a file per report as nsys stats does.)
- `stats --help-reports` lists every report by nsys's name and the title its table carries: checked against the
  title each report prints on the bundled trace (so the list cannot drift from the reports).
- `analyze --help-rules` lists every rule; every finding `analyze` gives on the fixtures names a listed rule;
  `analyze -r RULE[,RULE]` reports exactly those rules' findings; an unknown rule is one line and exit 2.
- Both listings run without a trace; a command without its trace is one line and exit 2.
usage: conventions_test.py KERNSCOPE FIXTURES_DIR"""
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from compressed import plain_copy  # noqa: E402

failures = []


def check(ok, what):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)


def run(*args):
    return subprocess.run([KERNSCOPE, *args], capture_output=True, text=True)


def main():
    global KERNSCOPE
    KERNSCOPE, fixtures = sys.argv[1], pathlib.Path(sys.argv[2])
    llama = plain_copy(fixtures / "nsys" / "llama_decode_h200" / "trace.sqlite.xz")
    kineto = plain_copy(fixtures / "kineto" / "llama_decode_h200_gen16.json.xz")

    # -o on every single-trace analysis that prints text.
    help_text = run("--help").stdout
    commands = [line.split()[0] for line in help_text.split("Subcommands:")[1].splitlines() if line.startswith("  ") and line.split()]
    skip = {"stats", "export", "record", "capture", "peaks", "fleet", "diff", "compare", "ranks", "roofline"}
    with tempfile.TemporaryDirectory() as tmp:
        for command in commands:
            if command in skip:
                continue
            plain = run(command, llama)
            out = pathlib.Path(tmp) / f"{command}.txt"
            written = run(command, "-o", str(out), llama)
            same = plain.returncode == written.returncode and out.exists() and out.read_text() == plain.stdout
            check(same and written.stdout == "" and f"wrote {out}" in written.stderr,
                  f"{command} -o FILE holds what standard output holds ({len(plain.stdout)} bytes)")
        dash = run("ops", "-o", "-", llama)
        check(dash.stdout == run("ops", llama).stdout and dash.stdout, "ops -o - is standard output")
        out = pathlib.Path(tmp) / "roofline.json"
        r = run("roofline", "--format", "json", "-o", str(out), kineto)
        check(r.returncode == 0 and json.loads(out.read_text()) is not None and r.stdout == "", "roofline --format json -o FILE")
        a, b = plain_copy(fixtures / "nsys" / "llama_decode_h200" / "trace.sqlite.xz"), kineto
        out = pathlib.Path(tmp) / "diff.txt"
        r = run("diff", "-o", str(out), a, b)
        check(r.returncode in (0, 1) and out.read_text() == run("diff", a, b).stdout, "diff -o FILE (two traces)")

    # stats --help-reports against the titles the reports print.
    listing = run("stats", "--help-reports")
    rows = [line.split(None, 1) for line in listing.stdout.splitlines() if line.startswith("  ") and len(line.split(None, 1)) == 2]
    listed = {name: title.strip() for name, title in rows if "_" in name}
    check(listing.returncode == 0 and len(listed) >= 14, f"stats --help-reports without a trace lists {len(listed)} reports")
    for name, title in listed.items():
        r = run("stats", "-r", name, llama)
        printed = next((line for line in r.stdout.splitlines() if line.startswith(" ** ")), "")
        if r.returncode == 0 and printed:
            check(printed == f" ** {title} ({name}):", f"stats -r {name} prints the listed title '{title}'")
        else:
            print(f"     stats -r {name}: nothing printed on this trace (exit {r.returncode}); its title not compared")

    # analyze --help-rules, -r.
    listing = run("analyze", "--help-rules")
    rules = [line.split()[0] for line in listing.stdout.splitlines() if line.startswith("  ")]
    check(listing.returncode == 0 and len(rules) >= 12, f"analyze --help-rules lists {len(rules)} rules")
    found = set()
    for trace in (llama, kineto, plain_copy(fixtures / "accounting" / "blocked.sqlite.xz"), plain_copy(fixtures / "accounting" / "copy.sqlite.xz")):
        doc = json.loads(run("analyze", "--format", "json", trace).stdout)
        findings = doc if isinstance(doc, list) else doc.get("findings", [])
        found |= {f["rule"] for f in findings}
    check(found and found <= set(rules), f"every rule analyze reported ({len(found)}: {sorted(found)}) is listed")
    both = json.loads(run("analyze", "--format", "json", "-r", "gpu_gaps,llm_launch_bound", llama).stdout)
    both = both if isinstance(both, list) else both.get("findings", [])
    check(sorted(f["rule"] for f in both) == ["gpu_gaps", "llm_launch_bound"], "analyze -r gpu_gaps,llm_launch_bound reports those two")
    repeated = json.loads(run("analyze", "--format", "json", "-r", "gpu_gaps", "-r", "llm_launch_bound", llama).stdout)
    repeated = repeated if isinstance(repeated, list) else repeated.get("findings", [])
    check(repeated == both, "-r repeated is -r with commas")
    bad = run("analyze", "-r", "no_such_rule", llama)
    check(bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no_such_rule" in bad.stderr, "an unknown rule: one line, exit 2")
    missing = run("analyze")
    check(missing.returncode == 2 and missing.stderr.count("\n") == 1, "analyze without a trace: one line, exit 2")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
