#!/usr/bin/env python3
"""The fleet's results and `kernscope ranks` on fixed rank sets, recorded before a change and compared
after it (issue 26: the fleet's reduce moved from DuckDB SQL to the C++ reducer; every table must stay).

    fleet_reduce_compare.py record OUT.json WORK_DIR KERNSCOPE   # sets made once under WORK_DIR
    fleet_reduce_compare.py compare BEFORE.json AFTER.json

The sets: three made by tests/ranks/make_rank_set.py from the real DDP trace (as python/tests/
test_fleet.py makes them: whole with sequence numbers; cut, skipped, hung and an unreadable file;
4 ranks without sequence numbers whose rank 3 starts 2 collectives late) and the real exports of
tests/fixtures/ranks. `compare` reads every table column and scalar BEFORE holds and says each
difference (exact for integers and text; floats within 1e-9 relative, counted apart); columns only
AFTER holds are listed as added. Exit 1 when anything differs, 0 when all is the same.
Needs the kernscope package importable (with pyarrow and duckdb).
"""
import json
import math
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "fixtures" / "ranks" / "hta__nccl_parser_config__nccl_data.json.xz"
GENERATOR = ROOT / "tests" / "ranks" / "make_rank_set.py"
MADE = {"whole": ["--seq"], "bad": ["--seq", "--cut", "4", "--skip", "7", "--hang", "6:1"],
        "late": ["--ranks", "4", "--late-start", "3:2"]}
FIXTURES = {"nsys_2proc": ROOT / "tests" / "fixtures" / "ranks" / "nsysai_mfu_2gpu_before.sqlite.xz",
            "tp2_decode": ROOT / "tests" / "fixtures" / "ranks" / "tp2_decode_h200",
            "tp2_decode_nsys": ROOT / "tests" / "fixtures" / "ranks" / "tp2_decode_nsys_h200" / "trace.sqlite.xz"}
# What differs from run to run, not from the reduce: timings, memory, the worker processes.
VOLATILE = {"connection", "reduce_seconds", "digest_seconds", "per_trace", "driver_peak_rss_kb"}


def sets(work):
    out = {}
    for name, args in MADE.items():
        folder = work / name
        if not folder.is_dir():
            subprocess.run([sys.executable, str(GENERATOR), str(SOURCE), str(folder), *args], check=True)
            if name == "bad":
                (folder / "rank9.trace.json").write_text("this is not a trace\n")
        out[name] = str(folder)
    out.update({name: str(path) for name, path in FIXTURES.items()})
    return out


def record(out_path, work, kernscope):
    from kernscope import fleet

    work = pathlib.Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    doc = {}
    for name, target in sets(work).items():
        result = fleet.run([target], str(work / f"{name}.digests"), workers=2)
        kept = {k: v for k, v in result.items() if k not in VOLATILE}
        ranks = subprocess.run([kernscope, "ranks", target, "--format", "json"], capture_output=True, text=True)
        doc[name] = {"fleet": kept, "ranks": json.loads(ranks.stdout) if ranks.returncode == 0 else ranks.stderr}
        print(f"{name}: {result['ranks_read']} ranks, {len(result['tables'].get('collectives', []))} matched collectives",
              file=sys.stderr)
    pathlib.Path(out_path).write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")


def same(a, b):
    if isinstance(a, float) and isinstance(b, (int, float)) or isinstance(b, float) and isinstance(a, (int, float)):
        return "exact" if a == b else "near" if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) else None
    return "exact" if a == b else None


def compare_tables(where, before, after, lines, counts):
    for table, rows in before.items():
        if table not in after:
            lines.append(f"{where}: table {table} gone")
            continue
        theirs = after[table]
        if len(rows) != len(theirs):
            lines.append(f"{where}: table {table}: {len(rows)} rows before, {len(theirs)} after")
        added = sorted(set().union(*(r.keys() for r in theirs)) - set().union(*(r.keys() for r in rows))) if rows and theirs else []
        if added:
            lines.append(f"{where}: table {table}: columns added {added}")
        for i, (r, t) in enumerate(zip(rows, theirs)):
            for column, value in r.items():
                verdict = same(value, t.get(column, "<missing>"))
                if verdict is None:
                    lines.append(f"{where}: table {table} row {i} {column}: {value!r} before, {t.get(column, '<missing>')!r} after")
                else:
                    counts[verdict] += 1


def compare(before_path, after_path):
    before = json.loads(pathlib.Path(before_path).read_text())
    after = json.loads(pathlib.Path(after_path).read_text())
    lines, counts = [], {"exact": 0, "near": 0}
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            lines.append(f"{name}: not in {after_path}")
            continue
        f_old, f_new = old["fleet"], new["fleet"]
        for key, value in f_old.items():
            if key == "tables":
                compare_tables(f"{name} fleet", value, f_new.get("tables", {}), lines, counts)
            elif same(value, f_new.get(key, "<missing>")) is None:
                lines.append(f"{name} fleet {key}: {json.dumps(value)} before, {json.dumps(f_new.get(key, '<missing>'))} after")
        for key in sorted(set(f_new) - set(f_old)):
            lines.append(f"{name} fleet: key added {key} = {json.dumps(f_new[key])[:200]}")
        if old["ranks"] != new["ranks"]:
            lines.append(f"{name}: `kernscope ranks --format json` differs")
    for line in lines:
        print(line)
    print(f"{counts['exact']} table cells equal exactly, {counts['near']} within 1e-9 relative; {len(lines)} difference(s)")
    return 1 if lines else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "record":
        record(*sys.argv[2:])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
