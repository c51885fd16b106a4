#!/usr/bin/env python3
"""The fleet's results and `kernscope ranks` on fixed rank sets, recorded before a change and compared
after it (issue 26: the fleet's reduce moved from DuckDB SQL to the C++ reducer; every table must stay).

    fleet_reduce_compare.py record OUT.json WORK_DIR KERNSCOPE   # sets made once under WORK_DIR
    fleet_reduce_compare.py compare BEFORE.json AFTER.json [WORK_DIR]

The sets: three made by tests/ranks/make_rank_set.py from the real DDP trace (as python/tests/
test_fleet.py makes them: whole with sequence numbers; cut, skipped, hung and an unreadable file;
4 ranks without sequence numbers whose rank 3 starts 2 collectives late) and the real exports of
tests/fixtures/ranks. `compare` reads every table column and scalar BEFORE holds and says each
difference (exact for integers and text; floats within 1e-9 relative, counted apart); columns only
AFTER holds are listed as additions (not differences). Two columns name one of several equal candidates, which the SQL
reduce chose in no stated order: kernels.slowest_trace (the trace with the highest total) and
utilization.least_busy_rank (the rank at the bin's minimum); with WORK_DIR (the digests `record`
kept) a difference there is checked against the digests and counted as a tie, not a difference,
where both values are at the maximum (minimum). Also said, for each record: on which sets the
fleet and `kernscope ranks` disagree (clock offsets, stragglers, last ranks, verdicts withheld).
Exit 1 when anything differs, 0 when all is the same.
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
    from kernscope.fleet.reduce import records

    work = pathlib.Path(work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    doc = {}
    for name, target in sets(work).items():
        result = fleet.run([target], str(work / f"{name}.digests"), workers=2)
        kept = {k: v for k, v in result.items() if k not in VOLATILE}
        kept["tables"] = {k: records(v) for k, v in kept["tables"].items()}  # DataFrames as rows, to compare as JSON
        ranks = subprocess.run([kernscope, "ranks", target, "--format", "json"], capture_output=True, text=True)
        doc[name] = {"fleet": kept, "ranks": json.loads(ranks.stdout) if ranks.returncode == 0 else ranks.stderr}
        print(f"{name}: {result['ranks_read']} ranks, {len(records(result['tables']['collectives'])) if 'collectives' in result['tables'] else 0} matched collectives",
              file=sys.stderr)
    pathlib.Path(out_path).write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")


def same(a, b):
    if isinstance(a, float) and isinstance(b, (int, float)) or isinstance(b, float) and isinstance(a, (int, float)):
        return "exact" if a == b else "near" if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) else None
    return "exact" if a == b else None


def tied(digests):
    """From a folder of digests: per kernel name the traces at its highest total, and per
    utilisation bin the ranks at its lowest busy time (busy bins on the reducer's clock offsets,
    counted from the earliest aligned start), derived here in SQL as a check of the reducer."""
    from kernscope import fleet
    from kernscope.fleet.reduce import records

    _, rows = fleet.sql(digests, "SELECT name, trace FROM (SELECT name, trace, total_ns, "
                                 "max(total_ns) OVER (PARTITION BY name) AS top FROM kernels) WHERE total_ns = top")
    slowest = {}
    for name, trace in rows:
        slowest.setdefault(name, set()).add(trace)
    _, rows = fleet.sql(digests, """
        WITH b AS (SELECT u.rank, bu.start_ns - o.clock_offset_ns AS s, bu.bin_ns, bu.busy_ns
                   FROM busy bu JOIN units u USING (trace, part) JOIN offsets o USING (rank))
        SELECT (s - (SELECT min(s) FROM b)) // bin_ns AS bin, rank, busy_ns FROM b""")
    bins = {}
    for b, rank, busy in rows:
        bins.setdefault(b, []).append((busy, rank))
    least = {b: {rank for busy, rank in v if busy == min(v)[0]} for b, v in bins.items()}
    return slowest, least


def compare_tables(where, before, after, lines, added_lines, counts, ties=None):
    for table, rows in before.items():
        if table not in after:
            lines.append(f"{where}: table {table} gone")
            continue
        theirs = after[table]
        if len(rows) != len(theirs):
            lines.append(f"{where}: table {table}: {len(rows)} rows before, {len(theirs)} after")
        added = sorted(set().union(*(r.keys() for r in theirs)) - set().union(*(r.keys() for r in rows))) if rows and theirs else []
        if added:
            added_lines.append(f"{where}: table {table}: columns added {added}")
        for i, (r, t) in enumerate(zip(rows, theirs)):
            for column, value in r.items():
                verdict = same(value, t.get(column, "<missing>"))
                if verdict is None and ties and (table, column) == ("kernels", "slowest_trace"):
                    verdict = "tie" if {value, t[column]} <= ties[0].get(r["name"], set()) else None
                if verdict is None and ties and (table, column) == ("utilization", "least_busy_rank"):
                    verdict = "tie" if r["bin"] == t["bin"] and {value, t[column]} <= ties[1].get(r["bin"], set()) else None
                if verdict is None:
                    lines.append(f"{where}: table {table} row {i} {column}: {value!r} before, {t.get(column, '<missing>')!r} after")
                else:
                    counts[verdict] += 1


def ranks_column(row, prefix):
    return next(v for k, v in row.items() if k == prefix or k.startswith(prefix + " ("))


def disagreements(doc):
    """Sets where the fleet and `kernscope ranks` differ on clock offsets, stragglers, the last rank
    of each matched collective or whether verdicts are withheld (sets `ranks` refuses are skipped)."""
    out = []
    for name, d in doc.items():
        ranks, fleet = d["ranks"], d["fleet"]
        if not isinstance(ranks, dict):
            continue
        r, f = ranks["tables"], fleet["tables"]
        checks = {
            "clock offsets": ([(ranks_column(x, "Rank"), ranks_column(x, "Clock Offset")) for x in r["ranks"]],
                              [(x["rank"], x["clock_offset_ns"]) for x in f["ranks"]]),
            "stragglers": ([tuple(ranks_column(x, c) for c in ("Rank", "Times Last", "Total Lead", "Wait Caused"))
                            for x in r["stragglers"]],
                           [(x["rank"], x["times_last"], x["total_lead_ns"], x["wait_caused_ns"]) for x in f["stragglers"]]),
            "last ranks": ([ranks_column(x, "Last Rank") for x in r["collectives"]], [x["last_rank"] for x in f["collectives"]]),
            "verdicts withheld": (ranks["verdicts_withheld"], fleet["verdicts_withheld"]),
        }
        out += [f"{name}: fleet and `kernscope ranks` differ on {what}" for what, (a, b) in checks.items() if a != b]
    return out


def compare(before_path, after_path, work=None):
    before = json.loads(pathlib.Path(before_path).read_text())
    after = json.loads(pathlib.Path(after_path).read_text())
    lines, added, counts = [], [], {"exact": 0, "near": 0, "tie": 0}
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            lines.append(f"{name}: not in {after_path}")
            continue
        f_old, f_new = old["fleet"], new["fleet"]
        for key, value in f_old.items():
            if key == "tables":
                ties = tied(os.path.join(work, f"{name}.digests")) if work else None
                compare_tables(f"{name} fleet", value, f_new.get("tables", {}), lines, added, counts, ties)
            elif same(value, f_new.get(key, "<missing>")) is None:
                lines.append(f"{name} fleet {key}: {json.dumps(value)} before, {json.dumps(f_new.get(key, '<missing>'))} after")
        for key in sorted(set(f_new) - set(f_old)):
            added.append(f"{name} fleet: key added {key} = {json.dumps(f_new[key])[:200]}")
        if old["ranks"] != new["ranks"]:
            lines.append(f"{name}: `kernscope ranks --format json` differs")
    for line in added + lines:
        print(line)
    for label, doc in (("before", before), ("after", after)):
        split = disagreements(doc)
        print(f"{label}: " + ("; ".join(split) if split else "the fleet agrees with `kernscope ranks` on every set it reads"))
    print(f"{counts['exact']} table cells equal exactly, {counts['near']} within 1e-9 relative, {counts['tie']} another of "
          f"equal candidates; {len(added)} addition(s), {len(lines)} difference(s)")
    return 1 if lines else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "record":
        record(*sys.argv[2:])
        return 0
    if len(sys.argv) in (4, 5) and sys.argv[1] == "compare":
        return compare(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
