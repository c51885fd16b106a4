"""The fleet tier: many traces (hundreds of ranks) reduced to digests and analysed as one set.

    from kernscope import fleet
    result = fleet.run(["traces/"], out_dir="digests", executor="local", workers=8)
    result["tables"]["stragglers"]        # a pandas DataFrame; result["notes"] says what is odd
    [n["text"] for n in result["notes"] if n["kind"] == "missing_ranks"]   # each note: kind, severity, count, text
    fleet.sql("digests", "SELECT rank, sum(busy_ns) FROM busy JOIN units USING (trace, part) GROUP BY rank")

Tables: ranks, stragglers, kinds, collectives (its times from collectives_origin_ns), classes,
kernels, utilization, rank_utilization; pandas DataFrames (dicts of columns without pandas) whose
columns are named as kernscope.ranks() names the same figure (rank_evidence, comm_time_ns,
wait_time_ns, group, index, first_arrival_ns, wait_mean_per_rank_ns, bus_bw_gb_s...), times in ns
and shares in % named with their unit (docs/python.md lists the renames).

Map: each trace is read by the C++ core and reduced to small tables (digest.py) written as Parquet
(OUT/ranks, collectives, steps, kernels, busy: one file per trace), in a local process pool or on a
Dask cluster (executors.py). Reduce (reduce.py): those files read back and handed to the C++
reducer, the engine of `kernscope ranks` (ranks numbered, collectives matched with window shifts,
clock offsets, waits and transfer, stragglers, hangs, bus bandwidth), which adds kernel and class
totals across traces and utilisation. DuckDB answers ad-hoc SQL over the digests and its tables.
Memory: one trace per worker at a time; the reduce holds only digests.
"""
from __future__ import annotations

import os
import resource
import time
from typing import Any, Dict, List, Optional

from . import executors
from .digest import TABLES
from .reduce import note, reduce

__all__ = ["run", "digest", "reduce", "sql", "TABLES"]

DEFAULT_BIN_NS = 1_000_000  # 1 ms of each rank's clock per utilisation bin


def digest(arguments: List[str], out_dir: str, executor: str = "local", workers: Optional[int] = None,
           scheduler: Optional[str] = None, bin_ns: int = DEFAULT_BIN_NS) -> Dict[str, Any]:
    """Digests every trace that DIR/GLOB/FILE `arguments` name into `out_dir`. Returns the paths,
    the per-trace results (seconds, worker peak RSS, error) and the failures."""
    from .. import _core

    paths = _core.expand_trace_arguments([str(a) for a in arguments])
    os.makedirs(out_dir, exist_ok=True)
    for table in TABLES:  # stale digests of another set would join this one
        folder = os.path.join(out_dir, table)
        if os.path.isdir(folder):
            for f in os.listdir(folder):
                if f.endswith((".parquet", ".parquet.part")):
                    os.remove(os.path.join(folder, f))
    workers = max(1, min(workers or os.cpu_count() or 1, len(paths)))  # no idle workers to start
    started = time.perf_counter()
    results = sorted(executors.run(executor, paths, out_dir, bin_ns, workers, scheduler), key=lambda r: r["trace"])
    return {"paths": paths, "results": results, "seconds": time.perf_counter() - started,
            "failed": [r for r in results if r["error"]]}


def run(arguments: List[str], out_dir: str, executor: str = "local", workers: Optional[int] = None,
        scheduler: Optional[str] = None, bin_ns: int = DEFAULT_BIN_NS) -> Dict[str, Any]:
    """digest() then reduce(): the fleet's results, with a note per trace that could not be read."""
    mapped = digest(arguments, out_dir, executor, workers, scheduler, bin_ns)
    started = time.perf_counter()
    result = reduce(out_dir)
    result["reduce_seconds"] = time.perf_counter() - started
    result["digest_seconds"] = mapped["seconds"]
    result["traces"] = len(mapped["paths"])
    result["per_trace"] = mapped["results"]
    # This process's peak (KiB): the reduce and the gathered results; workers report their own.
    result["driver_peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["notes"] = [note("trace_not_read", "error", f"{r['path']}: not read ({r['error']})")
                       for r in mapped["failed"]] + result["notes"]
    return result


def sql(out_dir: str, query: str):
    """Runs `query` on a folder of digests: the views ranks, collectives, steps, kernels, busy and
    the reduce's tables with the columns of its DataFrames (units: trace, part -> rank; offsets: per
    rank; matched: collectives on every rank, its "group" and "index" quoted in SQL; stragglers,
    kinds, classes, kernel_totals, utilization, rank_utilization; coll: each rank's collectives with
    its rank; reduce.connect). Returns (column names, rows)."""
    con = reduce(out_dir)["connection"]
    cursor = con.execute(query)
    return [d[0] for d in cursor.description], cursor.fetchall()
