"""The map step: one trace -> its digest tables as Parquet files (one file per table per trace).

Runs in a worker process (local pool or Dask): the C++ core opens the trace, reduces it to small
tables (_core.fleet_digest: ranks, collectives with own-clock times, steps, kernel totals and tails,
busy time in bins) and frees it; only those tables are written, so memory follows one trace at a
time per worker and the reduce never sees raw events.
"""
from __future__ import annotations

import os
import resource
import time
from typing import Any, Dict

TABLES = ("ranks", "collectives", "steps", "kernels", "busy")


def schemas():
    """Each table's Arrow schema, stated once so that files of every trace (empty ones included)
    read as one dataset. `trace` numbers the trace in the set; `part` its rank within the file (a
    file may hold several processes)."""
    import pyarrow as pa

    i64, f64, text = pa.int64(), pa.float64(), pa.string()
    # A note as `kernscope info --format json` writes one (include/kernscope/notes.hpp).
    note = pa.struct([("kind", text), ("severity", text), ("count", i64), ("text", text)])
    return {
        "ranks": pa.schema([("trace", i64), ("part", i64), ("path", text), ("global_pid", i64),
                            ("declared_rank", i64), ("declared_world_size", i64), ("backend", text),
                            ("device", i64), ("device_name", text), ("kernels", i64), ("first_ns", i64),
                            ("last_ns", i64), ("comm_ns", i64), ("overlap_ns", i64), ("compute_ns", i64),
                            ("collectives", i64), ("identity", text), ("step_method", text),
                            ("step_name", text), ("tpot_ns", f64), ("notes", pa.list_(note))]),
        "collectives": pa.schema([("trace", i64), ("part", i64), ("kind", text), ("grp", text), ("seq", i64),
                                  ("idx", i64), ("bytes", i64), ("group_size", i64), ("algorithm", text),
                                  ("protocol", text), ("dtype", text), ("start_ns", i64), ("end_ns", i64),
                                  ("step", i64), ("win", i64), ("layer", i64)]),
        "steps": pa.schema([("trace", i64), ("part", i64), ("start_ns", i64), ("end_ns", i64),
                            ("gpu_span_ns", i64)]),
        "kernels": pa.schema([("trace", i64), ("name", text), ("op_class", text), ("count", i64),
                              ("total_ns", i64), ("mean_ns", f64), ("p50_ns", f64), ("p95_ns", f64),
                              ("p99_ns", f64), ("max_ns", i64)]),
        "busy": pa.schema([("trace", i64), ("part", i64), ("start_ns", i64), ("bin_ns", i64), ("busy_ns", i64)]),
    }


def table_dir(out_dir: str, table: str) -> str:
    return os.path.join(out_dir, table)


def digest_one(trace_index: int, path: str, out_dir: str, bin_ns: int) -> Dict[str, Any]:
    """Digests one trace into OUT_DIR/TABLE/trace-NNNNNN.parquet. Never raises for a bad trace:
    the result says what went wrong (the set's other traces are still reduced)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .. import _core

    started = time.perf_counter()
    result: Dict[str, Any] = {"trace": trace_index, "path": path, "error": None, "rows": {}}
    try:
        tables = _core.fleet_digest(path, int(bin_ns))
    except _core.Error as e:
        result["error"] = str(e)
    else:
        name = f"trace-{trace_index:06d}.parquet"
        schema = schemas()
        for table in TABLES:
            columns = tables[table]
            n = len(next(iter(columns.values()))) if columns else 0
            columns = {"trace": [trace_index] * n, **columns}
            arrow = pa.table(columns, schema=schema[table])
            os.makedirs(table_dir(out_dir, table), exist_ok=True)
            # Written whole then renamed: a reduce never reads half a file.
            final = os.path.join(table_dir(out_dir, table), name)
            pq.write_table(arrow, final + ".part")
            os.replace(final + ".part", final)
            result["rows"][table] = n
    result["seconds"] = time.perf_counter() - started
    # The worker's peak resident memory so far (KiB on Linux): a pool worker's running maximum.
    result["worker_peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["worker_pid"] = os.getpid()
    return result
