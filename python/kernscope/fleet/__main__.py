"""`kernscope fleet` / `python -m kernscope.fleet`: a set of traces as ranks, at fleet scale.

    kernscope fleet traces/ [--out DIGESTS] [--executor local|dask] [--scheduler ADDR] [--workers N]
                            [--bin-ms MS] [--format text|json] [--sql QUERY]
    kernscope fleet --from-digests DIGESTS [--sql QUERY]

Bad input (no traces, an unknown executor, a folder without digests) is one line on stderr and exit
code 2; a trace that cannot be read is a note, and the others are still reduced.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional

from .reduce import records

TEXT_TABLES = (
    ("ranks", ["rank", "rank_evidence", "collectives", "clock_offset_ns", "clock_trusted", "wait_time_ns",
               "times_last", "comm_time_ns", "overlapped_comm_ns", "compute_ns"]),
    ("stragglers", ["rank", "times_last", "total_lead_ns", "wait_caused_ns"]),
    ("kinds", ["kind", "count", "wait_mean_per_rank_ns", "transfer_ns", "median_spread_ns", "median_transfer_ns",
               "median_bus_bw_gb_s"]),
    ("classes", ["op_class", "kernels", "total_ns", "traces", "mean_per_trace_ns"]),
    ("rank_utilization", ["rank", "busy_pct", "median_bin_busy_pct", "min_bin_busy_pct", "bins"]),
)
TEXT_ROWS = 20  # rows of each table printed (--format json and --sql give them all)


def parser(prog: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", help="DIR, GLOB or FILES: one trace per rank (or exports holding several)")
    ap.add_argument("--out", help="folder for the Parquet digests (kept); default: a temporary folder")
    ap.add_argument("--from-digests", metavar="DIR", help="reduce digests written earlier instead of reading traces")
    ap.add_argument("--executor", default="local", choices=["local", "dask"],
                    help="local: a process pool here; dask: a Dask cluster (--scheduler, else a local one)")
    ap.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786); default: a LocalCluster here")
    ap.add_argument("--workers", type=int, default=0, help="worker processes (0: one per core)")
    ap.add_argument("--bin-ms", type=float, default=1.0, help="utilisation bin, ms of each rank's clock")
    ap.add_argument("--format", default="text", choices=["text", "json"])
    ap.add_argument("--sql", help="a DuckDB query on the digests (views ranks, collectives, steps, kernels, busy) and "
                                  "the reduce's tables (units, offsets, matched, stragglers, kinds, classes, "
                                  "kernel_totals, utilization, rank_utilization, coll); printed as CSV")
    return ap


def cell(value: Any) -> str:
    if isinstance(value, float):  # (records() gives NaN as None: no value, an empty cell)
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.0f}"
    return "" if value is None else str(value)


def print_table(name: str, table: Any, columns: List[str], out, limit: int = TEXT_ROWS) -> None:
    """A result table (a DataFrame, or a dict of columns without pandas): its first `limit` rows,
    the named columns, right-aligned under their names."""
    out.write(f"\n{name}\n")
    rows = records(table, limit)
    if not rows:
        out.write("  (none)\n")
        return
    missing = [c for c in columns if c not in rows[0]]
    if missing:  # a renamed column: say so, not a blank column
        raise KeyError(f"fleet table {name} has no column {', '.join(missing)}")
    cells = [[cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    out.write("  " + "  ".join(c.rjust(w) for c, w in zip(columns, widths)) + "\n")
    for row in cells:
        out.write("  " + "  ".join(v.rjust(w) for v, w in zip(row, widths)) + "\n")


def print_text(result: Dict[str, Any], out) -> None:
    out.write(f"{result['ranks_read']} rank(s) read; world size {result['world_size']} ({result['world_evidence']})\n")
    if "matching" in result:
        out.write(f"collectives matched {result['matching']}; reference rank {result['reference_rank']}; "
                  f"matching {'trusted' if result['matching_trusted'] else 'NOT trusted'}; "
                  f"clocks {'trusted' if result['clocks_trusted'] else 'NOT trusted'}; "
                  f"straggling counted above a lead of {result['noise_ns']} ns"
                  f"{' (verdicts withheld)' if result['verdicts_withheld'] else ''}\n")
    if "digest_seconds" in result:
        out.write(f"digests: {result['traces']} trace(s) in {result['digest_seconds']:.2f} s; "
                  f"reduce {result['reduce_seconds']:.2f} s\n")
    for note in result["notes"]:
        out.write(f"note: {note['text']}\n")
    tables = result["tables"]
    for name, columns in TEXT_TABLES:
        if name in tables:
            print_table(name, tables[name], columns, out)


def as_json(result: Dict[str, Any]) -> Dict[str, Any]:
    """The result for --format json: each table as a list of row objects (its DataFrame's records,
    NaN as null), the rest as it is."""
    return dict(result, tables={name: records(table) for name, table in result["tables"].items()})


def fail(message: str) -> int:
    sys.stderr.write(f"kernscope: error: {message}\n")
    return 2


def main(argv: Optional[List[str]] = None, prog: str = "python -m kernscope.fleet") -> int:
    args = parser(prog).parse_args(argv)
    from .. import Error
    from . import reduce as reduce_digests  # the function (the package exports it over its module)
    from . import run

    if args.from_digests:
        if args.traces:
            return fail("give traces or --from-digests, not both")
        if not os.path.isdir(os.path.join(args.from_digests, "ranks")):
            return fail(f"{args.from_digests}: no digests there (expected {args.from_digests}/ranks/*.parquet)")
    elif not args.traces:
        return fail("no traces given (DIR, GLOB or FILES)")
    if args.bin_ms <= 0:
        return fail("--bin-ms must be positive")
    if args.scheduler and args.executor != "dask":
        return fail("--scheduler is for --executor dask")
    temporary = None
    try:
        if args.from_digests:
            result = reduce_digests(args.from_digests)
        else:
            out_dir = args.out
            if out_dir is None:
                temporary = tempfile.TemporaryDirectory(prefix="kernscope-fleet-")
                out_dir = temporary.name
            result = run(args.traces, out_dir, args.executor, args.workers or None, args.scheduler,
                         int(args.bin_ms * 1e6))
        if result["ranks_read"] == 0:
            for note in result["notes"]:
                sys.stderr.write(f"kernscope: {note['text']}\n")
            return fail("no trace of the set could be read")
        con = result.pop("connection")
        if args.sql:
            cursor = con.execute(args.sql)
            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow([d[0] for d in cursor.description])
            writer.writerows(cursor.fetchall())
        elif args.format == "json":
            json.dump(as_json(result), sys.stdout, indent=1, default=str)
            sys.stdout.write("\n")
        else:
            print_text(result, sys.stdout)
        return 0
    except Error as e:
        return fail(str(e))
    except Exception as e:  # DuckDB's errors on a bad --sql, Dask's on an unreachable scheduler
        if type(e).__module__.startswith(("duckdb", "_duckdb", "distributed")) or isinstance(e, OSError):
            return fail(f"{type(e).__name__}: {e}")
        raise
    finally:
        if temporary is not None:
            temporary.cleanup()


if __name__ == "__main__":
    sys.exit(main())
