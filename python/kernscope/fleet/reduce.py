"""The reduce step: the digests of every trace (Parquet, digest.py) read as one set through DuckDB.

Ranks are numbered by the core's rules (_core.number_ranks: declared rank, else distinct CUDA
devices, else file names, else order, with the evidence). Collectives are matched by identity
(communicator and sequence number where every rank's collectives of a communicator carry one),
else by position within the communicator; clock offsets, skew, stragglers and waits follow
`kernscope ranks` (src/ranks/ranks_skew.hpp), written as SQL over the digests:
  - reference: the lowest rank with collectives; a rank's offset is the median of its collectives'
    end-time differences to the reference's (kinds whose kernels end together; send/receive only
    when fewer than 3 of those), its spread their median absolute deviation; a rank in the
    reference's file shares its clock (no offset);
  - trusted when at least 3 collectives agree to within max(5 us, 10 % of the median transfer);
  - per collective present on every rank, on aligned clocks: spread, each rank's wait (last arrival -
    its arrival), transfer (median end - last arrival), the last rank and its lead over the
    second-last; a lead of at least max(2 us, 3 x the worst offset spread) counts as straggling;
  - as `kernscope ranks`, no straggler or hang verdict from what is not trusted: where the matching
    (ranks holding different numbers of an order-matched communicator's collectives, or matched
    collectives that differ in kind or size) or the clocks are not trusted, that is said first
    ("distrust") and "verdicts_withheld" is set; the tables keep the figures.
Not done here (use `kernscope ranks` on the set): window shifts when ranks' order-matched windows
start at different collectives (and the end-time checks that confirm an order matching), and bus
bandwidth against a link peak.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List

from .digest import TABLES, schemas, table_dir

ENDS_TOGETHER = "kind NOT IN ('send_recv', 'all_to_all', 'other')"


def connect(out_dir: str):
    """A DuckDB connection with one view per digest table (ranks, collectives, steps, kernels,
    busy) over OUT_DIR/TABLE/*.parquet; a table no trace wrote is an empty view of its schema."""
    import duckdb

    con = duckdb.connect()
    for table in TABLES:
        folder = table_dir(out_dir, table)
        files = sorted(f for f in os.listdir(folder) if f.endswith(".parquet")) if os.path.isdir(folder) else []
        if files:
            pattern = os.path.join(folder, "*.parquet").replace("'", "''")
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{pattern}')")
        else:
            empty = schemas()[table].empty_table()
            con.register(f"{table}_empty", empty)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM {table}_empty")
    return con


def number_ranks(con) -> Dict[str, Any]:
    """Adds the table `units` (trace, part, rank, evidence, path): every digested rank, numbered."""
    import pyarrow as pa

    from .. import _core

    rows = con.execute("SELECT trace, part, path, global_pid, declared_rank, declared_world_size, device, notes "
                       "FROM ranks ORDER BY trace, part").fetchall()
    numbered = _core.number_ranks([r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows],
                                  [r[5] for r in rows], [r[6] for r in rows], [list(r[7] or []) for r in rows])
    units = pa.table({"trace": [r[0] for r in rows], "part": [r[1] for r in rows],
                      "rank": pa.array(numbered["rank"], pa.int64()),
                      "evidence": pa.array(numbered["evidence"], pa.string()),
                      "path": pa.array([r[2] for r in rows], pa.string())})
    con.register("units_arrow", units)
    con.execute("CREATE TEMP TABLE units AS SELECT * FROM units_arrow")
    return {"world_size": numbered["world_size"], "world_evidence": numbered["world_evidence"],
            "notes": list(numbered["notes"])}


def match_collectives(con, notes: List[str], doubts: List[str]) -> str:
    """Tables `coll` (each rank's collectives with their matching number `num`) and `reference`;
    how they were matched, a note where order matching is doubtful, and in `doubts` why the matching
    is not trusted."""
    con.execute("""
        CREATE TEMP TABLE coll_all AS
        SELECT u.rank, u.path, c.* EXCLUDE (trace, part)
        FROM collectives c JOIN units u USING (trace, part)""")
    con.execute("""
        CREATE TEMP TABLE grp_mode AS
        SELECT grp, bool_and(seq >= 0) AS by_seq FROM coll_all GROUP BY grp""")
    # A rank's first collective with a given number wins (as ranks_skew keeps the first).
    con.execute("""
        CREATE TEMP TABLE coll AS
        SELECT * FROM (
          SELECT c.*, g.by_seq, CASE WHEN g.by_seq THEN c.seq ELSE c.idx END AS num
          FROM coll_all c JOIN grp_mode g USING (grp))
        QUALIFY row_number() OVER (PARTITION BY rank, grp, num ORDER BY start_ns, idx) = 1""")
    con.execute("CREATE TEMP TABLE reference AS SELECT min(rank) AS rank FROM coll")
    seq_groups, order_groups = con.execute(
        "SELECT count(*) FILTER (WHERE by_seq), count(*) FILTER (WHERE NOT by_seq) FROM grp_mode").fetchone()
    if order_groups == 0:
        return "by identity: communicator and sequence number from the traces"
    # Order matching pairs the k-th collectives; ranks holding different numbers of them in a
    # communicator (a window started or ended elsewhere) may pair different calls.
    uneven = con.execute("""
        SELECT grp, min(n), max(n) FROM (SELECT grp, rank, count(*) AS n FROM coll WHERE NOT by_seq GROUP BY grp, rank)
        GROUP BY grp HAVING min(n) <> max(n) ORDER BY grp""").fetchall()
    for grp, low, high in uneven:
        notes.append(f"communicator {grp}: ranks hold {low} to {high} collectives and are matched by order without "
                     "window shifts here; `kernscope ranks` shifts late windows into line")
        doubts.append(f"communicator {grp}: ranks hold {low} to {high} collectives, matched by order without window shifts")
    if seq_groups > 0:
        return f"by sequence number in {seq_groups} communicator(s), by order in {order_groups}"
    return "by order within each communicator (the traces carry no sequence numbers)"


def clock_offsets(con) -> None:
    """Table `offsets` (rank, offset_ns, end_difference_ns, spread_ns, samples, shared_clock,
    trusted, why) for every rank, and the scalars in `clock_limits` (trust_limit, noise_ns)."""
    con.execute(f"""
        CREATE TEMP TABLE end_diffs AS
        SELECT o.rank, (o.end_ns - r.end_ns) AS diff, r.{ENDS_TOGETHER} AS together
        FROM coll o JOIN coll r ON r.grp = o.grp AND r.num = o.num AND r.rank = (SELECT rank FROM reference)
        WHERE o.rank <> (SELECT rank FROM reference)""")
    con.execute("""
        CREATE TEMP TABLE used_diffs AS
        WITH counts AS (SELECT rank, count(*) FILTER (WHERE together) AS together_n FROM end_diffs GROUP BY rank)
        SELECT d.rank, d.diff, c.together_n < 3 AS point_to_point
        FROM end_diffs d JOIN counts c USING (rank)
        WHERE d.together OR c.together_n < 3""")
    con.execute("""
        CREATE TEMP TABLE diff_medians AS
        SELECT rank, median(diff) AS end_difference_ns, count(*) AS samples, bool_or(point_to_point) AS point_to_point
        FROM used_diffs GROUP BY rank""")
    # Transfer scale for the trust limit: per collective present on every rank, its shortest kernel.
    con.execute("""
        CREATE TEMP TABLE clock_limits AS
        WITH complete AS (
          SELECT grp, num, min(end_ns - start_ns) AS shortest FROM coll GROUP BY grp, num
          HAVING count(*) = (SELECT count(*) FROM units))
        SELECT greatest(5000.0, 0.1 * coalesce((SELECT median(shortest) FROM complete), 0)) AS trust_limit""")
    con.execute("""
        CREATE TEMP TABLE offsets AS
        WITH spreads AS (
          SELECT u.rank, median(abs(u.diff - m.end_difference_ns)) AS spread_ns
          FROM used_diffs u JOIN diff_medians m USING (rank) GROUP BY u.rank),
        ref_path AS (SELECT DISTINCT path FROM units WHERE rank = (SELECT rank FROM reference))
        SELECT un.rank,
               un.rank = (SELECT rank FROM reference) AS is_reference,
               un.path IN (SELECT path FROM ref_path) AS shared_clock,
               coalesce(m.end_difference_ns, 0) AS end_difference_ns,
               coalesce(s.spread_ns, 0) AS spread_ns,
               coalesce(m.samples, 0) AS samples,
               coalesce(m.point_to_point, false) AS point_to_point
        FROM units un LEFT JOIN diff_medians m USING (rank) LEFT JOIN spreads s USING (rank)""")
    con.execute("""
        CREATE OR REPLACE TEMP TABLE offsets AS
        SELECT rank, end_difference_ns, spread_ns, samples, shared_clock,
               CASE WHEN is_reference OR shared_clock THEN 0.0 ELSE end_difference_ns END AS offset_ns,
               CASE WHEN is_reference OR (shared_clock AND samples > 0) THEN true
                    WHEN samples < 3 THEN false
                    ELSE spread_ns <= (SELECT trust_limit FROM clock_limits) END AS trusted,
               CASE WHEN is_reference THEN 'reference'
                    WHEN samples = 0 THEN 'no collective in common with the reference: clock unknown'
                    WHEN shared_clock THEN 'same file as the reference: one clock, no offset applied'
                    WHEN samples < 3 THEN 'fewer than 3 collectives in common'
                    WHEN spread_ns > (SELECT trust_limit FROM clock_limits)
                      THEN 'collective ends scatter by ' || CAST(trunc(spread_ns) AS BIGINT) || ' ns (more than '
                           || CAST(trunc((SELECT trust_limit FROM clock_limits)) AS BIGINT)
                           || ' ns): clocks drift or matching is wrong'
                    WHEN point_to_point THEN 'from send/receive ends (they need not end together: less exact)'
                    ELSE '' END AS why
        FROM offsets""")
    con.execute("""
        ALTER TABLE clock_limits ADD COLUMN noise_ns BIGINT;
        UPDATE clock_limits SET noise_ns = CAST(trunc(greatest(2000.0, 3 * (SELECT max(spread_ns) FROM offsets))) AS BIGINT)""")


def skew(con) -> None:
    """Tables `matched` (one row per collective present on every rank, aligned clocks) and
    `arrivals` (its per-rank arrival and wait)."""
    con.execute("""
        CREATE TEMP TABLE aligned AS
        SELECT c.rank, c.grp, c.num, c.by_seq, c.kind, c.bytes, c.step, c.win, c.layer,
               c.start_ns - CAST(round(o.offset_ns) AS BIGINT) AS arrival,
               c.end_ns - CAST(round(o.offset_ns) AS BIGINT) AS finish
        FROM coll c JOIN offsets o USING (rank)""")
    con.execute("""
        CREATE TEMP TABLE complete_keys AS
        SELECT grp, num FROM aligned GROUP BY grp, num HAVING count(*) = (SELECT count(*) FROM units)""")
    con.execute("""
        CREATE TEMP TABLE arrivals AS
        SELECT a.*, max(a.arrival) OVER w AS last_arrival,
               a.finish - first_value(a.finish) OVER (w ORDER BY a.rank) AS end_from_first,
               first_value(a.finish) OVER (w ORDER BY a.rank) AS first_end
        FROM aligned a JOIN complete_keys USING (grp, num)
        WINDOW w AS (PARTITION BY a.grp, a.num)""")
    con.execute("""
        CREATE TEMP TABLE matched AS
        WITH per AS (
          SELECT grp, num, any_value(by_seq) AS by_seq,
                 arg_min(kind, rank) AS kind, max(bytes) AS bytes,
                 arg_min(step, CASE WHEN rank = (SELECT rank FROM reference) THEN -1 ELSE rank END) AS step,
                 count(*) AS ranks, min(arrival) AS first_arrival, max(arrival) AS last_arrival,
                 any_value(first_end) + CAST(round(median(end_from_first)) AS BIGINT) AS end_ns,
                 avg(last_arrival - arrival) AS mean_wait_ns,
                 min(rank) FILTER (WHERE arrival = last_arrival) AS last_rank
          FROM arrivals GROUP BY grp, num)
        SELECT p.*, p.last_arrival - p.first_arrival AS spread_ns,
               greatest(0, p.end_ns - p.last_arrival) AS transfer_ns,
               CASE WHEN p.ranks > 1 THEN p.last_arrival - (
                   SELECT max(a.arrival) FROM arrivals a
                   WHERE a.grp = p.grp AND a.num = p.num AND a.rank <> p.last_rank) ELSE 0 END AS lead_ns
        FROM per p""")


def incomplete(con) -> None:
    """Table `not_arrived` (rank, collectives): collectives the others ran while this rank's trace
    was still recording but which it never launched (a hang or a divergent code path)."""
    con.execute("""
        CREATE TEMP TABLE partial AS
        SELECT grp, num, min(arrival) AS first_arrival, max(arrival) AS last_arrival
        FROM aligned GROUP BY grp, num HAVING count(*) < (SELECT count(*) FROM units)""")
    con.execute("""
        CREATE TEMP TABLE not_arrived AS
        SELECT un.rank, count(*) AS collectives
        FROM partial p CROSS JOIN units un
        JOIN ranks r ON r.trace = un.trace AND r.part = un.part
        JOIN offsets o ON o.rank = un.rank
        WHERE NOT EXISTS (SELECT 1 FROM aligned a WHERE a.grp = p.grp AND a.num = p.num AND a.rank = un.rank)
          AND r.collectives > 0
          AND r.last_ns - CAST(round(o.offset_ns) AS BIGINT) >= p.first_arrival
          AND r.first_ns - CAST(round(o.offset_ns) AS BIGINT) <= p.last_arrival
        GROUP BY un.rank ORDER BY un.rank""")


RESULT_QUERIES = {
    "ranks": """
        SELECT un.rank, un.evidence, un.path, r.kernels, r.collectives, r.comm_ns, r.overlap_ns, r.compute_ns,
               coalesce(w.wait_ns, 0) AS wait_ns, coalesce(s.times_last, 0) AS times_last,
               CAST(round(o.offset_ns) AS BIGINT) AS clock_offset_ns, o.end_difference_ns, o.spread_ns AS offset_spread_ns,
               o.samples AS offset_samples, o.trusted AS clock_trusted, o.why AS clock_note,
               r.step_name, r.tpot_ns, r.notes
        FROM units un JOIN ranks r USING (trace, part) JOIN offsets o USING (rank)
        LEFT JOIN (SELECT rank, sum(last_arrival - arrival) AS wait_ns FROM arrivals GROUP BY rank) w USING (rank)
        LEFT JOIN stragglers s USING (rank)
        ORDER BY un.rank""",
    "stragglers": "SELECT * FROM stragglers ORDER BY times_last DESC, wait_caused_ns DESC, rank",
    "kinds": """
        SELECT kind, count(*) AS count, sum(mean_wait_ns) AS wait_ns, sum(transfer_ns) AS transfer_ns,
               median(spread_ns) AS median_spread_ns, median(transfer_ns) AS median_transfer_ns,
               count(*) FILTER (WHERE bytes > 0) AS sized, sum(bytes) FILTER (WHERE bytes > 0) AS bytes
        FROM matched GROUP BY kind ORDER BY sum(mean_wait_ns) + sum(transfer_ns) DESC""",
    "collectives": """
        SELECT grp, CASE WHEN by_seq THEN num ELSE -1 END AS seq, num, kind, bytes, step, first_arrival,
               last_arrival, end_ns, spread_ns, transfer_ns, mean_wait_ns, last_rank, lead_ns
        FROM matched ORDER BY first_arrival""",
    "classes": """
        SELECT op_class, sum(count) AS kernels, sum(total_ns) AS total_ns, count(DISTINCT trace) AS traces,
               sum(total_ns) / count(DISTINCT trace) AS mean_per_trace_ns
        FROM kernels GROUP BY op_class ORDER BY total_ns DESC""",
    "kernels": """
        SELECT name, any_value(op_class) AS op_class, count(*) AS traces, sum(count) AS count,
               sum(total_ns) AS total_ns, min(total_ns) AS min_trace_total_ns, max(total_ns) AS max_trace_total_ns,
               arg_max(trace, total_ns) AS slowest_trace, median(p50_ns) AS median_p50_ns,
               max(p99_ns) AS max_p99_ns, max(max_ns) AS max_ns
        FROM kernels GROUP BY name ORDER BY total_ns DESC""",
    "utilization": """
        WITH b AS (
          SELECT un.rank, bu.start_ns - CAST(round(o.offset_ns) AS BIGINT) AS aligned_start, bu.bin_ns, bu.busy_ns
          FROM busy bu JOIN units un USING (trace, part) JOIN offsets o USING (rank)),
        t0 AS (SELECT min(aligned_start) AS t0 FROM b)
        SELECT CAST((aligned_start - t0) // bin_ns AS BIGINT) AS bin, any_value(bin_ns) AS bin_ns,
               count(DISTINCT rank) AS ranks, avg(busy_ns / bin_ns) AS mean_busy, min(busy_ns / bin_ns) AS min_busy,
               arg_min(rank, busy_ns) AS least_busy_rank
        FROM b, t0 GROUP BY ALL ORDER BY bin""",
    "rank_utilization": """
        SELECT un.rank, sum(busy_ns) / sum(bin_ns) AS busy_share, median(busy_ns / bin_ns) AS median_bin_busy,
               min(busy_ns / bin_ns) AS min_bin_busy, count(*) AS bins
        FROM busy JOIN units un USING (trace, part) GROUP BY un.rank ORDER BY un.rank""",
}


def reduce(out_dir: str) -> Dict[str, Any]:
    """Every result of the fleet (a dict: tables as lists of row dicts, plus notes and scalars),
    and the open DuckDB connection under "connection" for further SQL."""
    con = connect(out_dir)
    numbering = number_ranks(con)
    notes: List[str] = list(numbering["notes"])
    doubts: List[str] = []  # why the matching is not trusted
    n_units = con.execute("SELECT count(*) FROM units").fetchone()[0]
    result: Dict[str, Any] = {"ranks_read": n_units, "world_size": numbering["world_size"],
                              "world_evidence": numbering["world_evidence"]}
    if n_units == 0:
        notes.append("no trace could be read: nothing to reduce")
        result.update(notes=notes, tables={}, connection=con)
        return result
    matching = match_collectives(con, notes, doubts)
    differ = con.execute("""
        SELECT count(*) FROM (SELECT grp, num FROM coll GROUP BY grp, num
                              HAVING count(DISTINCT kind) > 1 OR count(DISTINCT bytes) FILTER (WHERE bytes >= 0) > 1)""").fetchone()[0]
    if differ:
        doubts.append(f"{differ} matched collective(s) differ in kind or size across ranks")
    any_collectives = con.execute("SELECT count(*) FROM coll").fetchone()[0] > 0
    if any_collectives:
        result["matching"] = matching
    else:
        notes.append("no rank ran NCCL collectives: nothing to match")
    clock_offsets(con)
    skew(con)
    incomplete(con)
    noise_ns = con.execute("SELECT noise_ns FROM clock_limits").fetchone()[0]
    con.execute(f"""
        CREATE TEMP TABLE stragglers AS
        SELECT last_rank AS rank, count(*) AS times_last, sum(lead_ns) AS total_lead_ns,
               sum(CAST(round(mean_wait_ns * ranks) AS BIGINT)) AS wait_caused_ns
        FROM matched WHERE ranks >= 2 AND lead_ns >= {int(noise_ns)} GROUP BY last_rank""")
    result["reference_rank"] = con.execute("SELECT rank FROM reference").fetchone()[0]
    result["noise_ns"] = noise_ns
    result["clocks_trusted"] = bool(con.execute("SELECT bool_and(trusted) FROM offsets").fetchone()[0])
    result["matching_trusted"] = not doubts
    result["verdicts_withheld"] = bool(doubts) or not result["clocks_trusted"]
    # What is not trusted, said first: no straggler or hang verdict is drawn from it.
    distrust = [f"matching: {d}" for d in doubts]
    if any_collectives:
        distrust += [f"clocks: rank {rank}: {why}" for rank, why in
                     con.execute("SELECT rank, why FROM offsets WHERE NOT trusted ORDER BY rank").fetchall()]
    result["distrust"] = distrust
    if distrust:
        notes[:0] = ["NOT TRUSTED: no straggler or hang verdict is given; the tables hold the figures as matched, untrusted"] + distrust
    for rank, count in con.execute("SELECT rank, collectives FROM not_arrived").fetchall():
        if result["verdicts_withheld"]:
            notes.append(f"rank {rank} lacks {count} collective(s) the others ran while its trace recorded: "
                         "no hang verdict while the matching or the clocks are not trusted")
        else:
            notes.append(f"rank {rank} did not arrive at {count} collective(s) the others ran while its trace was "
                         "still recording (hang or divergent code path?)")
    tables = {}
    for name, query in RESULT_QUERIES.items():
        cursor = con.execute(query)
        columns = [d[0] for d in cursor.description]
        tables[name] = [dict(zip(columns, row)) for row in cursor.fetchall()]
    result.update(notes=notes, tables=tables, connection=con)
    return result
