#!/usr/bin/env python3
"""`kernscope stats` run as a program equals nsys's gold byte for byte, for every gold file of every
fixture with gold (tests/fixtures/nsys/*/gold): each report in CSV, TSV, JSON and the console table,
in ns/us/ms/sec, and under every filter case. The in-process golden suite renders tables directly;
this one goes through the command line: option parsing, -o file naming, skipped reports, exit codes.

usage: golden_cli_test.py KERNSCOPE FIXTURES_DIR [FIXTURE...]

What is not checked, and why, is in tests/golden/gold_skips.txt (shared with the C++ suites).
A gold file that is empty means nsys printed nothing: kernscope must then write nothing (an empty
file, or none because it skipped the report). Checked to fail: with one byte of a copied gold file
changed (cuda_api_sum.csv of llama_decode_h200, "," -> ";") this test reports that file and exits 1.
"""
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from compressed import decompress_any, strip_compression  # noqa: E402  (gzip, xz or plain by magic)

GOLD_SKIPS = Path(__file__).resolve().parent.parent / "golden" / "gold_skips.txt"
# gold/variants/<prefix>_<report>.<ext>: the prefix says what nsys was asked for.
VARIANTS = {
    "us": ("csv", "us"),
    "ms": ("csv", "ms"),
    "sec": ("csv", "s"),
    "tsv": ("tsv", "ns"),
    "json": ("json", "ns"),
    "col": ("table", "ns"),
}
EXTENSION = {"csv": "csv", "tsv": "tsv", "json": "json", "table": "txt"}


def read_skips():
    awaiting, differs = set(), {}
    for line in GOLD_SKIPS.read_text().splitlines():
        words = line.split()
        if not words or line.startswith("#"):
            continue
        if words[0] == "awaiting":
            awaiting.add(words[1])
        elif words[0] in ("differs", "differs-cli"):
            differs[(words[1], words[2])] = " ".join(words[3:])
    return awaiting, differs


def read_gold(path):
    data = path.read_bytes()
    return decompress_any(data)


def stem(path):
    """cuda_gpu_kern_sum_base.csv.xz -> cuda_gpu_kern_sum_base"""
    name = path.name
    if name.endswith((".gz", ".xz")):
        name = name[:-3]
    return name.rsplit(".", 1)[0]


def report_option(file_stem):
    """The -r argument for a gold file's stem: _base/_mangled are the :base/:mangled options."""
    for suffix in ("_base", "_mangled"):
        if file_stem.endswith(suffix):
            return file_stem[: -len(suffix)] + ":" + suffix[1:]
    return file_stem


def groups_of(gold):
    """(label, format, unit, filter args, {report option: gold file}) per kernscope invocation."""
    groups = []
    plain = {report_option(stem(f)): f for f in sorted(gold.iterdir())
             if f.is_file() and f.name not in ("analyze.txt", "analyze.txt.xz", "MANIFEST.txt")}
    groups.append(("plain", "csv", "ns", [], plain))
    by_prefix = defaultdict(dict)
    if (gold / "variants").is_dir():
        for f in sorted((gold / "variants").iterdir()):
            prefix, _, report = stem(f).partition("_")
            if prefix in VARIANTS:
                by_prefix[prefix][report_option(report)] = f
    for prefix, files in sorted(by_prefix.items()):
        fmt, unit = VARIANTS[prefix]
        groups.append(("variants/" + prefix, fmt, unit, [], files))
    if (gold / "filters").is_dir():
        for case in sorted((gold / "filters").iterdir()):
            flag, _, value = (case / "args.txt").read_text().rstrip("\r\n").partition(" ")
            files = {report_option(stem(f)): f for f in sorted(case.iterdir()) if f.name != "args.txt"}
            groups.append(("filters/" + case.name, "csv", "ns", [flag, value], files))
    return groups


def check_fixture(kernscope, fixture_dir, differs, tmp):
    """Returns (compared, skipped, failures) for one fixture."""
    name = fixture_dir.name
    trace = fixture_dir / "trace.sqlite.xz"
    gold = fixture_dir / "gold"
    compared, skipped, failures = 0, 0, []
    for label, fmt, unit, filters, files in groups_of(gold):
        out = Path(tmp) / name / label.replace("/", "_")
        out.mkdir(parents=True)
        cmd = [kernscope, "stats", "--format", fmt, "--timeunit", unit, *filters, "-o", str(out / "x")]
        for report in files:
            cmd += ["-r", report]
        cmd.append(str(trace))
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode not in (0, 2):
            failures.append(f"{name} {label}: exit {run.returncode}: {run.stderr.strip()}")
            continue
        for report, gold_file in files.items():
            rel = strip_compression(gold_file.relative_to(gold).as_posix())
            if (name, rel) in differs:
                skipped += 1
                print(f"SKIP {name} {rel}: {differs[(name, rel)]}")
                continue
            want = read_gold(gold_file)
            written = out / f"x_{report.replace(':', '_')}.{EXTENSION[fmt]}"
            got = written.read_bytes() if written.exists() else b""
            compared += 1
            if run.returncode == 2 and want:
                # kernscope refused (exit 2, one line on stderr) where nsys printed this report.
                failures.append(f"{name} {rel}: kernscope exited 2 ({run.stderr.strip()}) but nsys printed it")
            elif got != want:
                failures.append(f"{name} {rel}: differs from nsys ({first_difference(got, want)})")
    return compared, skipped, failures


def first_difference(got, want):
    a, b = got.decode(errors="replace").split("\n"), want.decode(errors="replace").split("\n")
    for i in range(max(len(a), len(b))):
        la = a[i] if i < len(a) else "<end>"
        lb = b[i] if i < len(b) else "<end>"
        if la != lb:
            return f"line {i + 1}: kernscope {la[:160]!r} nsys {lb[:160]!r}"
    return "identical"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    kernscope, fixtures = sys.argv[1], Path(sys.argv[2]) / "nsys"
    awaiting, differs = read_skips()
    names = sys.argv[3:] or sorted(d.name for d in fixtures.iterdir()
                                   if d.is_dir() and d.name not in awaiting and (d / "gold").is_dir())
    total, skipped, failures = 0, 0, []
    formats = set()
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            c, s, f = check_fixture(kernscope, fixtures / name, differs, tmp)
            total, skipped, failures = total + c, skipped + s, failures + f
            formats |= {g[1] for g in groups_of(fixtures / name / "gold")}
            print(f"{name}: {c} gold files compared, {s} skipped, {len(f)} failed")
    for line in failures:
        print("FAIL", line)
    # A run that compared nothing, or no table/JSON, would pass vacuously.
    if total == 0 or not {"csv", "json", "table"} <= formats:
        print(f"FAIL: compared {total} files in formats {sorted(formats)}: the gold is missing")
        return 1
    print(f"{total} gold files compared through the CLI, {skipped} skipped (gold_skips.txt), "
          f"{len(failures)} failed; formats {sorted(formats)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
