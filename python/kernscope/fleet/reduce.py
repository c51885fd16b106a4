"""The reduce step: the digests of every trace (Parquet, digest.py) read back and handed to the C++
reducer, `_core.reduce_digests` (src/ranks/ranks_fleet_reduce.hpp), which runs the engine of
`kernscope ranks` on them: ranks numbered (declared rank, else distinct CUDA devices, else file
names, else order, with the evidence), collectives matched (communicator and sequence number, else
order with the window shifts `ranks` takes), clock offsets and their trust, waits, transfer,
stragglers, hangs, bus bandwidth against the link peak; and what only the fleet digests carry,
kernel and class totals across traces and utilisation from the busy bins on aligned clocks.
No rule is written here: this file loads the tables, calls the reducer and shapes its answer.
DuckDB serves `fleet.sql`: ad-hoc SQL over the digests and the reducer's tables.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List

from .digest import TABLES, schemas, table_dir

NOT_TRUSTED = "NOT TRUSTED: no straggler or hang verdict is given; the tables hold the figures as matched, untrusted"


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
    arrow = ds.dataset(files, schema=schema, format="parquet").to_table() if files else schema.empty_table()
    out: Dict[str, Any] = {}
    for name in arrow.column_names:
        column = arrow.column(name)
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        out[name] = column.to_numpy() if numeric and column.null_count == 0 else column.to_pylist()
    if "notes" in out:  # Parquet keeps an empty list as null
        out["notes"] = [n or [] for n in out["notes"]]
    return out


def rows(table: Dict[str, List[Any]]) -> List[Dict[str, Any]]:
    names = list(table)
    return [dict(zip(names, values)) for values in zip(*table.values())]


def connect(files: Dict[str, List[str]], reduced: Dict[str, Any]):
    """A DuckDB connection with a view per digest table (ranks, collectives, steps, kernels, busy:
    read from the Parquet files when queried) and per table of the reducer: units (trace, part ->
    rank), offsets (its ranks table: clock offsets, waits, times last), matched (collectives present
    on every rank), stragglers, kinds, classes, kernel_totals, utilization, rank_utilization; and
    coll, each rank's collectives with its rank number."""
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
    for name, table in reduced["tables"].items():  # empty ones too (their columns' type is then NULL)
        con.register(renamed.get(name, name), pa.table(table))
    con.execute("CREATE VIEW coll AS SELECT u.rank, c.* FROM collectives c JOIN units u USING (trace, part)")
    return con


def reduce(out_dir: str) -> Dict[str, Any]:
    """Every result of the fleet (a dict: tables as lists of row dicts, plus notes and scalars),
    and an open DuckDB connection under "connection" for further SQL."""
    from .. import _core

    files = digest_files(out_dir)
    reduced = _core.reduce_digests(*(columns(t, files[t]) for t in ("ranks", "collectives", "kernels", "busy")))
    result: Dict[str, Any] = {k: reduced[k] for k in ("ranks_read", "world_size", "world_evidence")}
    notes: List[str] = list(reduced["set_notes"])
    if reduced["ranks_read"] == 0:
        notes.append("no trace could be read: nothing to reduce")
        result.update(notes=notes, tables={}, connection=connect(files, reduced))
        return result
    if reduced["matching"]:
        result["matching"] = reduced["matching"]
    result["reference_rank"] = reduced["reference_rank"] if reduced["reference_rank"] >= 0 else None
    for key in ("noise_ns", "clocks_trusted", "matching_trusted", "verdicts_withheld", "distrust", "windows",
                "link_note", "sizes_note"):
        result[key] = reduced[key]
    # What is not trusted, said first (as `kernscope ranks` does): no verdict is drawn from it.
    distrust = reduced["distrust"]
    notes = ([NOT_TRUSTED] + distrust if distrust else []) + notes + reduced["windows"] + reduced["analysis_notes"]
    result.update(notes=notes, tables={name: rows(table) for name, table in reduced["tables"].items()},
                  connection=connect(files, reduced))
    return result
