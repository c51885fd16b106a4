"""The reduce step: the digests of every trace (Parquet, digest.py) read back and handed to the C++
reducer, `_core.reduce_digests` (src/ranks/ranks_fleet_reduce.hpp), which runs the engine of
`kernscope ranks` on them: ranks numbered (declared rank, else distinct CUDA devices, else file
names, else order, with the evidence), collectives matched (communicator and sequence number, else
order with the window shifts `ranks` takes), clock offsets and their trust, waits, transfer,
stragglers, hangs, bus bandwidth against the link peak; and what only the fleet digests carry,
kernel and class totals across traces and utilisation from the busy bins on aligned clocks.
No rule is written here: this file loads the tables, calls the reducer and shapes its answer.
DuckDB serves `fleet.sql`: ad-hoc SQL over the digests and the reducer's tables.

The tables come back as pandas DataFrames (dicts of columns without pandas, as kernscope's own
frames), their columns named as `kernscope.ranks()` names the same figure (`group`, `index`,
`first_arrival_ns`, `comm_time_ns`, `wait_mean_per_rank_ns`, `bus_bw_gb_s`...; RENAMED below), every
time in ns and share in % named with its unit; docs/python.md lists the renames.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import numpy as np

from .digest import TABLES, schemas, table_dir


def note(kind: str, severity: str, text: str, count: int = 1) -> Dict[str, Any]:
    """A note as the C++ core gives them (include/kernscope/notes.hpp): a kind to count or filter on,
    its severity (info, data_loss or error), how many things it is about, and the sentence."""
    return {"kind": kind, "severity": severity, "count": count, "text": text}


NOT_TRUSTED = note("verdicts_withheld", "info",
                   "NOT TRUSTED: no straggler or hang verdict is given; the tables hold the figures as matched, untrusted")


def digest_files(out_dir: str) -> Dict[str, List[str]]:
    """Each digest table's files (OUT_DIR/TABLE/*.parquet, one per trace), sorted."""
    out = {}
    for table in TABLES:
        folder = table_dir(out_dir, table)
        out[table] = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".parquet")) \
            if os.path.isdir(folder) else []
    return out


def columns(table: str, files: List[str]) -> Dict[str, Any]:
    """One digest table of every trace as the reducer takes it: numbers as NumPy arrays over Arrow's
    buffers (a Python list holds an object per value: 5x the memory at 512 ranks), text and lists as
    Python lists. The Arrow table is dropped on return: the reduce holds the digests once."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    schema = schemas()[table]
    try:
        arrow = ds.dataset(files, schema=schema, format="parquet").to_table() if files else schema.empty_table()
    except pa.ArrowException:
        raise_for_other_schema(table, files, schema)
        raise
    out: Dict[str, Any] = {}
    for name in arrow.column_names:
        column = arrow.column(name)
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        out[name] = column.to_numpy() if numeric and column.null_count == 0 else column.to_pylist()
    if "notes" in out:  # Parquet keeps an empty list as null
        out["notes"] = [n or [] for n in out["notes"]]
    return out


def raise_for_other_schema(table: str, files: List[str], schema) -> None:
    """Names the first digest file whose columns are not this version's (a digest written by another
    kernscope, e.g. with its notes as sentences before they had kinds), as kernscope.Error."""
    import pyarrow.parquet as pq

    from .. import Error

    for path in files:
        theirs = pq.read_schema(path)
        for field in schema:
            index = theirs.get_field_index(field.name)
            if index < 0 or theirs.field(index).type != field.type:
                found = "missing" if index < 0 else str(theirs.field(index).type)
                raise Error(f"{path}: digest column {table}.{field.name} is {found}, this kernscope writes {field.type}: "
                            f"a digest of another kernscope version; digest the traces again")


# The reducer's column names (python/src/fleet_reduce_binding.cpp) -> the package's: the name
# `kernscope.ranks()` gives the same figure (its tables ranks, stragglers, collective_kinds and
# collectives), else the reducer's name with its unit. shaped() converts the values to match.
RENAMED: Dict[str, Dict[str, str]] = {
    "ranks": {"evidence": "rank_evidence", "comm_ns": "comm_time_ns", "overlap_ns": "overlapped_comm_ns",
              "wait_ns": "wait_time_ns", "tpot_ns": "tpot_p50_ns"},
    "kinds": {"wait_ns": "wait_mean_per_rank_ns", "median_bus_bandwidth": "median_bus_bw_gb_s",
              "max_bus_bandwidth": "max_bus_bw_gb_s"},
    "collectives": {"grp": "group", "num": "index", "first_arrival": "first_arrival_ns",
                    "last_arrival": "last_arrival_ns", "bus_bandwidth": "bus_bw_gb_s"},
    "utilization": {"mean_busy": "mean_busy_pct", "min_busy": "min_busy_pct"},
    "rank_utilization": {"busy_share": "busy_pct", "median_bin_busy": "median_bin_busy_pct",
                         "min_bin_busy": "min_bin_busy_pct"},
}
BANDWIDTHS = ("median_bus_bw_gb_s", "max_bus_bw_gb_s", "bus_bw_gb_s")  # bytes/s from the reducer; 0: no size
SHARES = ("mean_busy_pct", "min_busy_pct", "busy_pct", "median_bin_busy_pct", "min_bin_busy_pct")  # 0..1 from it
ARRIVALS = ("first_arrival_ns", "last_arrival_ns", "end_ns")  # the reference rank's clock from it


def shaped(name: str, table: Dict[str, Any]) -> Dict[str, Any]:
    """One reducer table with the package's names and units: bus bandwidth in GB/s (NaN where no
    collective carries its size, as ranks() leaves it empty), busy shares in %, TPOT NaN where the
    steps are not decode steps (the reducer's -1), and the collectives' times counted from the first
    matched collective's first arrival, as ranks() counts them (that origin, on the reference rank's
    clock, is the result's collectives_origin_ns)."""
    renamed = RENAMED.get(name, {})
    out: Dict[str, Any] = {renamed.get(column, column): values for column, values in table.items()}
    for column in BANDWIDTHS:
        if column in out:
            v = np.asarray(out[column], dtype=np.float64) / 1e9
            out[column] = np.where(v > 0, v, np.nan)
    for column in SHARES:
        if column in out:
            out[column] = np.asarray(out[column], dtype=np.float64) * 100.0
    if "tpot_p50_ns" in out:
        v = np.asarray(out["tpot_p50_ns"], dtype=np.float64)
        out["tpot_p50_ns"] = np.where(v >= 0, v, np.nan)
    if name == "collectives":
        origin = collectives_origin(table)
        for column in ARRIVALS:
            v = np.asarray(out[column], dtype=np.int64)
            out[column] = v - origin if origin is not None else v
    return out


def collectives_origin(table: Dict[str, Any]) -> Optional[int]:
    """The first matched collective's first arrival on the reference rank's clock (ns), None when
    none matched: the time ranks() and the fleet's collectives table count from."""
    arrivals = table.get("first_arrival", [])
    return int(min(arrivals)) if len(arrivals) else None


def frame(table: Dict[str, Any]):
    """A table as a pandas DataFrame; without pandas, the dict of columns (as kernscope's frames)."""
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame(table)


def records(table: Any, limit: Optional[int] = None) -> List[Dict[str, Any]]:
    """A table (DataFrame or dict of columns) as rows of plain Python values, NaN as None: for JSON
    and printing. `limit`: the first rows only."""
    if hasattr(table, "to_dict") and hasattr(table, "columns"):
        names = [str(c) for c in table.columns]
        columns = [table[c].iloc[:limit].tolist() for c in table.columns]
    else:
        names = list(table)
        columns = [v[:limit].tolist() if isinstance(v, np.ndarray) else list(v)[:limit] for v in table.values()]

    def plain(value: Any) -> Any:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and value != value:
            return None
        return value

    return [{n: plain(v) for n, v in zip(names, values)} for values in zip(*columns)] if columns else []


def arrow(table: Dict[str, Any]):
    """A table's columns as an Arrow table for DuckDB: NaN (no value) as NULL."""
    import pyarrow as pa

    return pa.table({name: pa.array(values, from_pandas=True) if isinstance(values, np.ndarray) else values
                     for name, values in table.items()})


def connect(files: Dict[str, List[str]], reduced: Dict[str, Any], tables: Dict[str, Dict[str, Any]]):
    """A DuckDB connection with a view per digest table (ranks, collectives, steps, kernels, busy:
    read from the Parquet files when queried) and per table of the reduce (`tables`, shaped: the
    names of the result's DataFrames): units (trace, part -> rank), offsets (its ranks table: clock
    offsets, waits, times last), matched (collectives present on every rank), stragglers, kinds,
    classes, kernel_totals, utilization, rank_utilization; and coll, each rank's collectives with
    its rank number. (`group` and `index`, names in SQL, are quoted there: matched."group".)"""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    for name, paths in files.items():
        if paths:
            listed = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}])")
        else:  # no trace wrote it: empty, with its schema
            con.register(name, schemas()[name].empty_table())
    con.register("units", pa.table(reduced["units"]))
    renamed = {"ranks": "offsets", "collectives": "matched", "kernels": "kernel_totals"}
    for name, table in tables.items():  # empty ones too (a column without values has type NULL)
        con.register(renamed.get(name, name), arrow(table))
    con.execute("CREATE VIEW coll AS SELECT u.rank, c.* FROM collectives c JOIN units u USING (trace, part)")
    return con


def reduce(out_dir: str) -> Dict[str, Any]:
    """Every result of the fleet (a dict: "tables", each a pandas DataFrame named by table, with
    ranks()'s column names; plus notes and scalars), and an open DuckDB connection under
    "connection" for further SQL."""
    from .. import _core

    files = digest_files(out_dir)
    reduced = _core.reduce_digests(*(columns(t, files[t]) for t in ("ranks", "collectives", "kernels", "busy")))
    result: Dict[str, Any] = {k: reduced[k] for k in ("ranks_read", "world_size", "world_evidence")}
    notes: List[Dict[str, Any]] = list(reduced["notes"])
    tables = {name: shaped(name, table) for name, table in reduced["tables"].items()}
    if reduced["ranks_read"] == 0:
        notes.append(note("nothing_to_reduce", "error", "no trace could be read: nothing to reduce"))
        result.update(notes=notes, tables={}, connection=connect(files, reduced, tables))
        return result
    if reduced["matching"]:
        result["matching"] = reduced["matching"]
    result["reference_rank"] = reduced["reference_rank"] if reduced["reference_rank"] >= 0 else None
    for key in ("noise_ns", "clocks_trusted", "matching_trusted", "verdicts_withheld", "distrust", "windows",
                "link_note", "sizes_note"):
        result[key] = reduced[key]
    # What is not trusted, said first (as `kernscope ranks` does, and the reducer's notes begin with
    # it): no verdict is drawn from it.
    notes = ([NOT_TRUSTED] if reduced["distrust"] else []) + notes
    result["collectives_origin_ns"] = collectives_origin(reduced["tables"]["collectives"])
    result.update(notes=notes, tables={name: frame(table) for name, table in tables.items()},
                  connection=connect(files, reduced, tables))
    return result
