"""The fleet tier (kernscope.fleet, `kernscope fleet`) on 8-rank sets made from a real DDP trace by
tests/ranks/make_rank_set.py: the generator's truths (clock offsets it chose, stragglers it injected,
ranks it cut, hung or left out), the source trace read with Python's json (kernel counts, busy time,
collective times and sizes), the two-rank nsys exports read with sqlite3, and `kernscope ranks` on the
same set. The tables are DataFrames named as kernscope.ranks() names its columns (issue 47 item 7).
The Dask path runs on a distributed.LocalCluster."""
import decimal
import json
import lzma
import math
import os
import pathlib
import shutil
import sqlite3
import statistics
import subprocess
import sys

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")
pd = pytest.importorskip("pandas")

from kernscope import fleet  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "fixtures" / "ranks" / "hta__nccl_parser_config__nccl_data.json.xz"
GENERATOR = ROOT / "tests" / "ranks" / "make_rank_set.py"


def make_set(out, *args):
    subprocess.run([sys.executable, str(GENERATOR), str(SOURCE), str(out), *args], check=True)
    return json.loads(pathlib.Path(str(out) + ".truth.json").read_text())


def cli():
    path = os.environ.get("KERNSCOPE_CLI")
    assert path, "set KERNSCOPE_CLI to the kernscope binary (make test does)"
    return path


def column(row, prefix):
    for key, value in row.items():
        if key == prefix or key.startswith(prefix + " ("):
            return value
    raise KeyError(prefix)


def rows(table):
    """A fleet table's rows. The table must be a DataFrame (issue 47 item 7), not a list of dicts."""
    assert isinstance(table, pd.DataFrame), type(table)
    return table.to_dict("records")


def by_rank(table):
    return {r["rank"]: r for r in rows(table)}


@pytest.fixture(scope="module")
def whole_set(tmp_path_factory):
    base = tmp_path_factory.mktemp("fleet")
    truth = make_set(base / "set", "--seq")
    result = fleet.run([str(base / "set")], str(base / "digests"), executor="local", workers=2)
    return base, truth, result


def test_offsets_and_stragglers_recovered_exactly(whole_set):
    _, truth, result = whole_set
    assert result["ranks_read"] == 8 and result["world_size"] == 8
    assert "sequence number" in result["matching"]
    assert result["clocks_trusted"]
    ranks = by_rank(result["tables"]["ranks"])
    for rank, offset in truth["offsets_ns"].items():
        assert ranks[int(rank)]["clock_offset_ns"] == offset, f"rank {rank}"
        assert "distributedInfo" in ranks[int(rank)]["rank_evidence"]
    stragglers = by_rank(result["tables"]["stragglers"])
    for rank, times in truth["times_last"].items():
        if times == 0:
            assert int(rank) not in stragglers
        else:
            assert stragglers[int(rank)]["times_last"] == times
            delays = [i["delay_ns"] for i in truth["injected"] if i["rank"] == int(rank)]
            mean_lead = stragglers[int(rank)]["total_lead_ns"] / times
            assert abs(mean_lead - sum(delays) / len(delays)) < truth["max_jitter_ns"]
    # Every collective on every rank, and the injected one last where injected (sequence = index).
    collectives = {c["seq"]: c for c in rows(result["tables"]["collectives"])}
    assert len(collectives) == truth["collectives"]
    for injected in truth["injected"]:
        assert collectives[injected["collective"]]["last_rank"] == injected["rank"]


def test_same_answers_as_kernscope_ranks(whole_set):
    base, _, result = whole_set
    run = subprocess.run([cli(), "ranks", str(base / "set"), "--format", "json"], capture_output=True, text=True, check=True)
    doc = json.loads(run.stdout)
    assert result["reference_rank"] == doc["reference_rank"]
    assert result["verdicts_withheld"] is doc["verdicts_withheld"] is False
    assert result["noise_ns"] == doc["straggler_noise_ns"]
    mine = by_rank(result["tables"]["ranks"])
    for row in doc["tables"]["ranks"]:
        rank = column(row, "Rank")
        assert mine[rank]["clock_offset_ns"] == column(row, "Clock Offset")
        assert mine[rank]["offset_spread_ns"] == column(row, "Offset Spread")
        assert mine[rank]["times_last"] == column(row, "Times Last")
        assert mine[rank]["wait_time_ns"] == column(row, "Wait Time")
        assert mine[rank]["comm_time_ns"] == column(row, "Comm Time")
    theirs = [(column(r, "Rank"), column(r, "Times Last"), column(r, "Total Lead"), column(r, "Wait Caused"))
              for r in doc["tables"]["stragglers"]]
    assert [(r["rank"], r["times_last"], r["total_lead_ns"], r["wait_caused_ns"])
            for r in rows(result["tables"]["stragglers"])] == theirs
    kinds = {column(r, "Kind"): r for r in doc["tables"]["collective_kinds"]}
    for row in rows(result["tables"]["kinds"]):
        theirs = kinds[row["kind"]]
        assert row["count"] == column(theirs, "Count")
        assert row["transfer_ns"] == column(theirs, "Transfer")
        # The CLI's JSON rounds this median to whole ns.
        assert abs(row["median_spread_ns"] - column(theirs, "Median Spread")) <= 0.5
    lasts = [column(r, "Last Rank") for r in doc["tables"]["collectives"]]
    assert result["tables"]["collectives"]["last_rank"].tolist() == lasts


def test_one_export_of_two_processes(tmp_path):
    # A real nsys export holding two torchrun processes (tests/fixtures/ranks/README.md): truths from
    # sqlite3 there — 33 NCCL kernels per GPU, end differences (device 1 - device 0, start order)
    # median -22214 ns, median absolute deviation 3272 ns; one file, one clock: no offset applied.
    export = ROOT / "tests" / "fixtures" / "ranks" / "nsysai_mfu_2gpu_before.sqlite.xz"
    result = fleet.run([str(export)], str(tmp_path / "digests"), workers=1)
    ranks = by_rank(result["tables"]["ranks"])
    assert sorted(ranks) == [0, 1]
    assert all("by device id" in r["rank_evidence"] and r["collectives"] == 33 for r in ranks.values())
    assert ranks[1]["end_difference_ns"] == -22214 and ranks[1]["offset_spread_ns"] == 3272
    assert ranks[1]["clock_offset_ns"] == 0
    doc = json.loads(subprocess.run([cli(), "ranks", str(export), "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    theirs = [(column(r, "Rank"), column(r, "Times Last"), column(r, "Total Lead")) for r in doc["tables"]["stragglers"]]
    assert [(r["rank"], r["times_last"], r["total_lead_ns"]) for r in rows(result["tables"]["stragglers"])] == theirs


def kineto_events(path):
    with open_any(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)["traceEvents"]


def busy_ns(kernels):
    """The union of the kernels' intervals, exact ns from the µs text."""
    spans = sorted((int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000)) for e in kernels)
    busy, end = 0, None
    for start, stop in spans:
        if end is None or start > end:
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    return busy


def test_kernel_totals_and_busy_time_from_the_json(whole_set):
    base, _, result = whole_set
    kernels = [e for e in kineto_events(base / "set" / "rank0.trace.json.gz") if e.get("cat") == "kernel"]
    # Kernel counts: each rank file holds the source's kernels, so the fleet has 8 times each.
    counts = {}
    for e in kernels:
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    got = {r["name"]: r["count"] for r in rows(result["tables"]["kernels"])}
    assert sum(got.values()) == 8 * len(kernels)
    plain = {name: count for name, count in counts.items() if not name.startswith("_Z")}  # the core demangles the rest
    assert plain
    for name, count in plain.items():
        assert got[name] == 8 * count, name
    # Rank 0's busy time: the union of its kernels' intervals (exact ns from the µs text).
    names, found = fleet.sql(str(base / "digests"),
                             "SELECT sum(busy_ns) FROM busy JOIN units USING (trace, part) WHERE rank = 0")
    assert found[0][0] == busy_ns(kernels)


def test_sql_sees_the_reduce_tables(whole_set, tmp_path):
    # --sql's views of the reducer's tables hold its rows; an empty one (no rank ran collectives
    # here) is still a table to query.
    base, truth, result = whole_set
    _, rows = fleet.sql(str(base / "digests"), "SELECT rank, clock_offset_ns FROM offsets ORDER BY rank")
    assert rows == sorted((int(k), v) for k, v in truth["offsets_ns"].items())
    _, rows = fleet.sql(str(base / "digests"), "SELECT count(*) FROM matched")
    assert rows[0][0] == truth["collectives"]
    _, rows = fleet.sql(str(base / "digests"), "SELECT sum(times_last) FROM stragglers")
    assert rows[0][0] == sum(truth["times_last"].values())
    single = ROOT / "tests" / "fixtures" / "ranks" / "tp2_decode_h200" / "rank0.sqlite.xz"
    fleet.digest([str(single)], str(tmp_path / "one"), workers=1)
    _, rows = fleet.sql(str(tmp_path / "one"), "SELECT count(*) FROM stragglers")
    assert rows == [(0,)]


def test_dask_local_cluster_gives_the_same_results(whole_set, tmp_path):
    pytest.importorskip("distributed")
    base, _, local = whole_set
    dask = fleet.run([str(base / "set")], str(tmp_path / "digests"), executor="dask", workers=2)
    for table in ("ranks", "stragglers", "kinds", "collectives", "classes"):
        assert isinstance(dask["tables"][table], pd.DataFrame), table
        want = local["tables"][table].drop(columns="path", errors="ignore")
        got = dask["tables"][table].drop(columns="path", errors="ignore")
        pd.testing.assert_frame_equal(got, want, obj=table)
    # The work ran in the cluster's worker processes, not here.
    assert {r["worker_pid"] for r in dask["per_trace"]} - {os.getpid()}
    assert os.getpid() not in {r["worker_pid"] for r in dask["per_trace"]}


def test_bad_input_is_said_not_crashed(tmp_path):
    truth = make_set(tmp_path / "bad", "--seq", "--cut", "4", "--skip", "7", "--hang", "6:1")
    (tmp_path / "bad" / "rank9.trace.json").write_text("this is not a trace\n")
    result = fleet.run([str(tmp_path / "bad")], str(tmp_path / "digests"), workers=2)
    assert all(set(n) == {"kind", "severity", "count", "text"} for n in result["notes"]), result["notes"]

    def said(kind, severity, text):  # the notes of that kind, which must all have that severity; one says `text`
        of_kind = [n for n in result["notes"] if n["kind"] == kind]
        assert of_kind and all(n["severity"] == severity for n in of_kind), (kind, result["notes"])
        assert any(text in n["text"] for n in of_kind), (kind, text, of_kind)
        return of_kind

    unread = said("trace_not_read", "error", "rank9.trace.json: not read")
    assert unread[0]["text"].count("rank9.trace.json") == 2, unread  # the note's, and once in the reader's error
    assert said("missing_ranks", "data_loss", "missing ranks: 7 ")[0]["count"] == 1
    said("cut_short", "data_loss", "rank 4: the trace is cut short")
    hung = said("rank_did_not_arrive", "info", "rank 6 did not arrive at 1 collective")
    assert [n["count"] for n in hung if n["text"].startswith("rank 6 ")] == [1], hung
    # The digest keeps each rank's notes with their kinds: rank 4's trace was cut.
    cut = by_rank(result["tables"]["ranks"])[4]["notes"]
    assert [n["kind"] for n in cut] == ["cut_short"] and cut[0]["text"] == "the trace is cut short (its program was killed?)", cut
    ranks = by_rank(result["tables"]["ranks"])
    assert sorted(ranks) == [0, 1, 2, 3, 4, 5, 6]
    for rank in (0, 1, 2, 3, 5, 6):
        assert ranks[rank]["clock_offset_ns"] == truth["offsets_ns"][str(rank)]


def test_late_window_is_shifted_as_kernscope_ranks_does(tmp_path):
    # No sequence numbers, and rank 3's window starts at the 3rd collective. The fleet's reduce is
    # `kernscope ranks`'s engine (issue 26): it shifts rank 3's window by 2 into line, so every clock
    # offset is the generator's and the verdicts stand. (The SQL reduce before it matched without
    # shifts, paired different calls and withheld its verdicts on a 34 ms scatter.)
    truth = make_set(tmp_path / "late", "--ranks", "4", "--late-start", "3:2")
    result = fleet.run([str(tmp_path / "late")], str(tmp_path / "digests"), workers=2)
    assert result["matching"].startswith("by order") and "1 rank window(s) shifted" in result["matching"]
    assert result["matching_trusted"] and result["clocks_trusted"] and not result["verdicts_withheld"]
    assert any(n.startswith("rank 3, 0: its trace starts 2 collective(s) later") for n in result["windows"])
    assert {r["rank"]: r["clock_offset_ns"] for r in rows(result["tables"]["ranks"])} == \
        {int(k): v for k, v in truth["offsets_ns"].items()}
    # Rank 3 lacks the first two collectives: outside its window, not a hang.
    assert len(result["tables"]["collectives"]) == truth["collectives"] - 2
    assert not any(n["kind"] == "rank_did_not_arrive" or "did not arrive" in n["text"] for n in result["notes"])
    shifted = [n for n in result["notes"] if n["kind"] == "window_shifted"]
    assert [n["text"] for n in shifted] == result["windows"][:1] and shifted[0]["count"] == 2, shifted
    doc = json.loads(subprocess.run([cli(), "ranks", str(tmp_path / "late"), "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    assert [column(r, "Last Rank") for r in doc["tables"]["collectives"]] == \
        result["tables"]["collectives"]["last_rank"].tolist()


def test_bus_bandwidth_as_kernscope_ranks(whole_set):
    # The fleet now reads sizes into bus bandwidth as `kernscope ranks` does (the SQL reduce had none).
    base, _, result = whole_set
    doc = json.loads(subprocess.run([cli(), "ranks", str(base / "set"), "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    kinds = {column(r, "Kind"): r for r in doc["tables"]["collective_kinds"]}
    for row in rows(result["tables"]["kinds"]):
        assert row["median_bus_bw_gb_s"] > 0
        assert row["median_bus_bw_gb_s"] == pytest.approx(column(kinds[row["kind"]], "Median Bus BW"), rel=1e-12)


# --- The tables as DataFrames with kernscope.ranks()'s column names (issue 47 item 7) ----------------

# Fleet table -> (kernscope.ranks()'s table, the columns both give for the same figure, the row key).
# Written out by hand: a fleet column renamed away from ranks()'s name fails here (clock_trusted a
# bool in both, its reason in clock_note).
SHARED = {
    "ranks": ("ranks", ["rank", "clock_offset_ns", "end_difference_ns", "offset_spread_ns", "offset_samples", "clock_trusted",
                        "clock_note",
                        "collectives", "comm_time_ns", "overlapped_comm_ns", "wait_time_ns", "times_last",
                        "rank_evidence"], ["rank"]),
    "stragglers": ("stragglers", ["rank", "times_last", "collectives", "total_lead_ns", "wait_caused_ns"], ["rank"]),
    "kinds": ("collective_kinds", ["kind", "count", "wait_mean_per_rank_ns", "transfer_ns", "median_spread_ns",
                                   "median_transfer_ns", "sized", "bytes", "median_bus_bw_gb_s", "max_bus_bw_gb_s"],
              ["kind"]),
    "collectives": ("collectives", ["group", "seq", "index", "kind", "bytes", "first_arrival_ns", "spread_ns",
                                    "last_rank", "lead_ns", "mean_wait_ns", "transfer_ns", "bus_bw_gb_s"],
                    ["group", "index"]),
}
# The names the fleet gave before: none may come back.
OLD_NAMES = {"grp", "num", "first_arrival", "last_arrival", "bus_bandwidth", "median_bus_bandwidth",
             "max_bus_bandwidth", "evidence", "comm_ns", "overlap_ns", "wait_ns", "tpot_ns", "mean_busy",
             "min_busy", "busy_share", "median_bin_busy", "min_bin_busy"}
# Columns that are not a time or a share: counts, numbers, names, flags. Every other column must
# say its unit.
UNITLESS = {"rank", "rank_evidence", "path", "kernels", "collectives", "times_last", "offset_samples",
            "clock_trusted", "clock_note", "step_name", "notes", "kind", "count", "sized", "bytes", "group", "seq",
            "index", "step", "last_rank", "op_class", "traces", "name", "slowest_trace", "bin", "ranks",
            "least_busy_rank", "bins"}
UNITS = ("_ns", "_pct", "_gb_s")


def missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


@pytest.fixture(scope="module")
def rank_docs(whole_set):
    """Each generated rank trace of the whole set, read with Python's json (exact decimals)."""
    base, truth, _ = whole_set
    out = {}
    for rank in truth["offsets_ns"]:
        with open_any(base / "set" / f"rank{rank}.trace.json.gz", "rt") as f:
            out[int(rank)] = json.load(f, parse_float=decimal.Decimal)
    return out


def ns(us):
    return int(decimal.Decimal(us) * 1000)


def test_tables_are_dataframes_with_the_column_names_of_ranks(whole_set):
    import kernscope

    base, _, result = whole_set
    tables = result["tables"]
    assert set(tables) == {"ranks", "stragglers", "kinds", "collectives", "classes", "kernels", "utilization",
                           "rank_utilization"}
    for name, table in tables.items():
        assert isinstance(table, pd.DataFrame), (name, type(table))
        assert not set(table.columns) & OLD_NAMES, (name, set(table.columns) & OLD_NAMES)
    theirs = kernscope.ranks(str(base / "set"))
    for name, (their_name, shared, key) in SHARED.items():
        mine, other = tables[name], theirs[their_name]
        assert set(shared) <= set(mine.columns), (name, set(shared) - set(mine.columns))
        assert set(shared) <= set(other.columns), (their_name, set(shared) - set(other.columns))
        assert len(mine) == len(other) > 0, name
        # The same figure under the same name: ranks() rounds to whole ns.
        other_rows = {tuple(r[k] for k in key): r for r in rows(other)}
        for row in rows(mine):
            there = other_rows[tuple(row[k] for k in key)]
            for c in shared:
                a, b = row[c], there[c]
                if missing(a) or missing(b):
                    assert missing(a) and missing(b), (name, c, a, b)
                elif isinstance(b, str):
                    assert a == b, (name, c)
                elif c == "clock_trusted":  # a bool in both (numpy's or Python's)
                    assert str(a) in ("True", "False") and str(a) == str(b), (name, c, a, b)
                elif c.endswith("_ns"):
                    assert abs(a - b) <= 0.5, (name, c, a, b)
                else:
                    assert a == pytest.approx(b, rel=1e-9), (name, c, a, b)
    assert tables["collectives"]["bus_bw_gb_s"].notna().all()  # the set carries sizes: compared above
    # TPOT: the set's steps are training steps (ProfilerStep#N), so none, as ranks() leaves it empty.
    steps = {r["rank"]: r for r in rows(theirs["rank_steps"])}
    for row in rows(tables["ranks"]):
        assert missing(row["tpot_p50_ns"]) and missing(steps[row["rank"]]["tpot_p50_ns"])


def test_every_time_and_share_column_names_its_unit(whole_set):
    for name, table in whole_set[2]["tables"].items():
        for c in table.columns:
            assert c in UNITLESS or c.endswith(UNITS), f"{name}.{c} names no unit"


def test_collective_times_sizes_and_waits_from_the_traces(whole_set, rank_docs):
    # Each rank's NCCL kernels from its trace, put on the reference rank's clock with the generator's
    # offsets: arrivals (kernel starts), the common end, the transfer (end - last arrival, the source
    # kernel's own duration), sizes from the kernel's "In msg nelems" and dtype (PyTorch's names).
    DTYPE_BYTES = {"Float": 4, "Long": 8}
    _, truth, result = whole_set
    ref = result["reference_rank"]
    arrival, end, size, kind = {}, {}, {}, {}
    comm = {}
    for rank, doc in rank_docs.items():
        shift = truth["offsets_ns"][str(rank)] - truth["offsets_ns"][str(ref)]
        comm[rank] = 0
        for e in doc["traceEvents"]:
            if e.get("cat") != "kernel" or not e["name"].startswith(("ncclKernel_", "ncclDevKernel_")):
                continue
            seq = e["args"]["Seq"]
            arrival.setdefault(seq, {})[rank] = ns(e["ts"]) - shift
            end.setdefault(seq, set()).add(ns(e["ts"]) + ns(e["dur"]) - shift)
            comm[rank] += ns(e["dur"])
            size[seq] = e["args"]["In msg nelems"] * DTYPE_BYTES[e["args"]["dtype"]]
            kind[seq] = e["args"]["Collective name"]
    assert all(len(v) == 1 for v in end.values())  # the generator ends a collective together on every rank
    origin = min(min(a.values()) for a in arrival.values())
    base_ns = rank_docs[ref]["baseTimeNanoseconds"]  # Kineto's ts count from it
    assert result["collectives_origin_ns"] == base_ns + origin

    collectives = result["tables"]["collectives"]
    assert collectives["first_arrival_ns"].iloc[0] == 0
    n = truth["ranks"]
    factor = {"allreduce": 2 * (n - 1) / n, "broadcast": 1.0}  # nccl-tests' bus bandwidth factors
    checked = 0
    for row in rows(collectives):
        a = arrival[row["seq"]]
        stop = next(iter(end[row["seq"]]))
        assert row["first_arrival_ns"] == min(a.values()) - origin
        assert row["last_arrival_ns"] == max(a.values()) - origin
        assert row["end_ns"] == stop - origin
        assert row["bytes"] == size[row["seq"]]
        transfer = stop - max(a.values())
        # bytes per ns is GB/s.
        assert row["bus_bw_gb_s"] == pytest.approx(size[row["seq"]] / transfer * factor[kind[row["seq"]]], rel=1e-9)
        checked += 1
    assert checked == truth["collectives"]

    for rank, row in by_rank(result["tables"]["ranks"]).items():
        assert row["comm_time_ns"] == comm[rank]
        assert row["wait_time_ns"] == sum(max(a.values()) - a[rank] for a in arrival.values())
    names = {"allreduce": "all_reduce", "broadcast": "broadcast"}
    kinds = {r["kind"]: r for r in rows(result["tables"]["kinds"])}
    assert set(kinds) == {names[k] for k in kind.values()}
    for source_name, name in names.items():
        mine = [s for s in arrival if kind[s] == source_name]
        waits = sum(statistics.mean(max(arrival[s].values()) - t for t in arrival[s].values()) for s in mine)
        assert kinds[name]["wait_mean_per_rank_ns"] == pytest.approx(waits, rel=1e-12)
        bandwidths = [size[s] / (next(iter(end[s])) - max(arrival[s].values())) * factor[source_name] for s in mine]
        assert kinds[name]["median_bus_bw_gb_s"] == pytest.approx(statistics.median(bandwidths), rel=1e-9)
        assert kinds[name]["max_bus_bw_gb_s"] == pytest.approx(max(bandwidths), rel=1e-9)


def test_busy_shares_in_percent_from_the_json(whole_set, rank_docs):
    _, _, result = whole_set
    utilization = by_rank(result["tables"]["rank_utilization"])
    total = 0
    for rank, doc in rank_docs.items():
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        busy = busy_ns(kernels)
        first = min(ns(e["ts"]) for e in kernels)
        last = max(ns(e["ts"]) + ns(e["dur"]) for e in kernels)
        bins = math.ceil((last - first) / 1_000_000)  # 1 ms bins from the rank's first kernel
        assert utilization[rank]["bins"] == bins
        assert utilization[rank]["busy_pct"] == pytest.approx(100 * busy / (bins * 1_000_000), rel=1e-12)
        total += busy
    # Per bin of the set, the mean over the ranks there: times the ranks and the bin width, every
    # rank's busy time (each rank's bins fall in distinct bins of the set here).
    u = result["tables"]["utilization"]
    assert (u["mean_busy_pct"] / 100 * u["ranks"] * u["bin_ns"]).sum() == pytest.approx(total, rel=1e-9)
    assert (u["min_busy_pct"] <= u["mean_busy_pct"] + 1e-9).all()


TP2 = ROOT / "tests" / "fixtures" / "ranks" / "tp2_decode_h200"


@pytest.fixture(scope="module")
def tp2_truth(tmp_path_factory):
    """Per rank of the two-rank decode exports, from sqlite3: the NCCL kernels' summed durations and
    the median decode_step NVTX range (the decode steps' wall)."""
    out = {}
    for rank in (0, 1):
        path = tmp_path_factory.mktemp("tp2") / f"rank{rank}.sqlite"
        with lzma.open(TP2 / f"rank{rank}.sqlite.xz") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        con = sqlite3.connect(path)
        comm = con.execute("SELECT sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                           "JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE 'nccl%'").fetchone()[0]
        steps = [r[0] for r in con.execute("SELECT end - start FROM NVTX_EVENTS WHERE text = 'decode_step' "
                                           "AND end IS NOT NULL")]
        con.close()
        out[rank] = {"comm_time_ns": comm, "tpot_p50_ns": statistics.median(steps)}
    return out


def test_decode_ranks_from_sqlite(tp2_truth, tmp_path):
    result = fleet.run([str(TP2)], str(tmp_path / "digests"), workers=2)
    ranks = by_rank(result["tables"]["ranks"])
    for rank, truth in tp2_truth.items():
        assert ranks[rank]["comm_time_ns"] == truth["comm_time_ns"]
        assert ranks[rank]["tpot_p50_ns"] == truth["tpot_p50_ns"]
    # No collective in these exports carries its size: no bandwidth, NaN (not 0 GB/s).
    assert result["tables"]["collectives"]["bus_bw_gb_s"].isna().all()
    assert result["tables"]["kinds"]["median_bus_bw_gb_s"].isna().all()


def text_table(text, name):
    """A table `kernscope fleet` printed: its rows as dicts of cell text. Columns are right-aligned
    under their names (cells may hold spaces), so each cell ends where its name ends."""
    lines = text.splitlines()
    at = lines.index(name)
    header = lines[at + 1]
    names = header.split()
    ends, start = [], 0
    for c in names:
        start = header.index(c, start) + len(c)
        ends.append(start)
    out = []
    for line in lines[at + 2:]:
        if not line.strip():
            break
        out.append({c: line[(ends[i - 1] if i else 0):ends[i]].strip() for i, c in enumerate(names)})
    return out


def test_cli_prints_the_tables_under_their_names(tp2_truth, tmp_path):
    r = run_cli(str(TP2), "--workers", "2", "--out", str(tmp_path / "digests"))
    assert r.returncode == 0, r.stderr
    ranks = text_table(r.stdout, "ranks")
    assert list(ranks[0]) == ["rank", "rank_evidence", "collectives", "clock_offset_ns", "clock_trusted",
                              "wait_time_ns", "times_last", "comm_time_ns", "overlapped_comm_ns", "compute_ns"]
    for row in ranks:
        assert int(row["comm_time_ns"]) == tp2_truth[int(row["rank"])]["comm_time_ns"]
        assert row["rank_evidence"] == f"CUDA device id {row['rank']} of its NCCL kernels"
    assert list(text_table(r.stdout, "kinds")[0]) == ["kind", "count", "wait_mean_per_rank_ns", "transfer_ns",
                                                       "median_spread_ns", "median_transfer_ns",
                                                       "median_bus_bw_gb_s"]
    assert text_table(r.stdout, "kinds")[0]["median_bus_bw_gb_s"] == ""  # no sizes: an empty cell, not nan
    # JSON: each table a list of row objects under the same names; no value is null, not NaN.
    r = run_cli("--from-digests", str(tmp_path / "digests"), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "NaN" not in r.stdout
    doc = json.loads(r.stdout)
    assert all(isinstance(t, list) for t in doc["tables"].values())
    ranks = {row["rank"]: row for row in doc["tables"]["ranks"]}
    for rank, truth in tp2_truth.items():
        assert ranks[rank]["comm_time_ns"] == truth["comm_time_ns"]
        assert ranks[rank]["tpot_p50_ns"] == truth["tpot_p50_ns"]
    assert doc["tables"]["collectives"][0]["first_arrival_ns"] == 0
    assert doc["tables"]["collectives"][0]["bus_bw_gb_s"] is None


def test_without_pandas_tables_are_dicts_of_columns(whole_set):
    # pandas is not in the fleet extra: without it the tables are dicts of columns (as kernscope's
    # frames are), under the same names, and `kernscope fleet` still prints them.
    base, truth, _ = whole_set
    hidden = base / "no_pandas"  # `import pandas` fails there (as where it is not installed)
    hidden.mkdir(exist_ok=True)
    (hidden / "pandas.py").write_text("raise ImportError('No module named pandas')\n")
    code = (
        "import io\n"
        "from kernscope import fleet\n"
        "from kernscope.fleet.__main__ import print_text\n"
        f"r = fleet.reduce({str(base / 'digests')!r})\n"
        "t = r['tables']\n"
        "assert all(isinstance(v, dict) for v in t.values())\n"
        "out = io.StringIO(); r.pop('connection'); print_text(r, out)\n"
        "assert 'wait_time_ns' in out.getvalue()\n"
        "print(list(t['ranks']['rank']), list(t['collectives']['first_arrival_ns'])[0], sorted(t['collectives']))\n"
    )
    import kernscope
    package_root = os.path.dirname(os.path.dirname(kernscope.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hidden), package_root]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(str(list(range(truth["ranks"]))) + " 0 ")
    assert "'group'" in done.stdout and "'first_arrival_ns'" in done.stdout and "'grp'" not in done.stdout


def test_malformed_digests_are_a_clear_error():
    from kernscope import _core

    empty = {"trace": [], "part": []}
    with pytest.raises(ValueError, match="table ranks has no column path"):
        _core.reduce_digests(empty, {}, {}, {})
    # One rank of a trace at part 1 with no part 0: the digests were not written whole.
    from kernscope.fleet.digest import schemas
    row = {name: [None] for name in schemas()["ranks"].names}
    row.update(trace=[0], part=[1], path=["a.json"], global_pid=[-1], declared_rank=[0], declared_world_size=[1],
               backend=[""], device=[0], device_name=[""], kernels=[1], first_ns=[0], last_ns=[1], comm_ns=[0],
               overlap_ns=[0], compute_ns=[0], collectives=[0], identity=[""], step_method=[""], step_name=[""],
               tpot_ns=[-1.0], notes=[[]])
    tables = [{name: [] for name in schemas()[t].names} for t in ("collectives", "kernels", "busy")]
    with pytest.raises(ValueError, match="ranks table lacks a part of trace 0"):
        _core.reduce_digests(row, *tables)
    row["part"] = [0]
    assert _core.reduce_digests(row, *tables)["ranks_read"] == 1
    # A rank's notes come back with their kinds: a cut trace is said per rank, by its kind.
    cut = {"kind": "cut_short", "severity": "data_loss", "count": 1, "text": "the trace is cut short (its program was killed?)"}
    row["notes"] = [[cut]]
    notes = _core.reduce_digests(row, *tables)["notes"]
    assert dict(cut, text="rank 0: " + cut["text"]) in notes, notes
    # Notes without kinds (sentences alone) or of an unknown severity are refused, not guessed.
    row["notes"] = [[cut["text"]]]
    with pytest.raises(ValueError, match="ranks.notes: a note is not a dict"):
        _core.reduce_digests(row, *tables)
    row["notes"] = [[dict(cut, severity="fatal")]]
    with pytest.raises(ValueError, match="severity is 'fatal'"):
        _core.reduce_digests(row, *tables)


def test_a_digest_of_another_version_is_named(whole_set, tmp_path):
    # Digests written while a rank's notes were sentences (a list of strings, not of kind, severity,
    # count and text): the reduce names the file and what to do, not a pyarrow traceback.
    import pyarrow as pa
    import pyarrow.parquet as pq
    import kernscope

    base, _, _ = whole_set
    old = tmp_path / "digests"
    shutil.copytree(base / "digests", old)
    for path in (old / "ranks").glob("*.parquet"):
        table = pq.read_table(path)
        sentences = pa.array([[n["text"] for n in notes or []] for notes in table.column("notes").to_pylist()], pa.list_(pa.string()))
        pq.write_table(table.set_column(table.schema.get_field_index("notes"), "notes", sentences), path)
    with pytest.raises(kernscope.Error, match=r"trace-000000\.parquet: digest column ranks\.notes is list<.*string>.*digest the traces again"):
        fleet.reduce(str(old))


def run_cli(*args):
    # `kernscope fleet` runs KERNSCOPE_PYTHON -m kernscope.fleet: this interpreter, which has the package.
    env = dict(os.environ, KERNSCOPE_PYTHON=sys.executable)
    return subprocess.run([cli(), "fleet", *args], capture_output=True, text=True, env=env)


def test_cli_errors_are_one_line_exit_2(tmp_path):
    for args, message in ((["/no/such/dir"], "no such file or directory"),
                          ([], "no traces given"),
                          (["--from-digests", str(tmp_path)], "no digests there")):
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("kernscope: error:") and message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_cli_sql_on_kept_digests(whole_set, tmp_path):
    base, truth, _ = whole_set
    out = tmp_path / "kept"
    r = run_cli(str(base / "set"), "--out", str(out), "--workers", "2",
                "--sql", "SELECT rank, count(*) AS n FROM coll GROUP BY rank ORDER BY rank")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["rank,n"] + [f"{k},{truth['collectives']}" for k in range(8)]
    # The digests stay and reduce again without the traces.
    r = run_cli("--from-digests", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert {row["rank"]: row["clock_offset_ns"] for row in json.loads(r.stdout)["tables"]["ranks"]} == \
        {int(k): v for k, v in truth["offsets_ns"].items()}


def test_fleet_run_from_a_script_without_a_main_guard(tmp_path):
    # Issue 32: a plain script (no `if __name__ == "__main__":`) calling fleet.run() with several
    # workers. Worker processes that imported the script again would start the fleet again in each
    # worker and die (BrokenProcessPool); the result here is the fleet's, once.
    folder = ROOT / "tests" / "fixtures" / "ranks" / "tp2_decode_h200"  # two rank traces
    script = tmp_path / "plain_script.py"
    script.write_text(
        "from kernscope import fleet\n"
        f"result = fleet.run([{str(folder)!r}], {str(tmp_path / 'digests')!r}, workers=2)\n"
        "print('RANKS', result['ranks_read'], 'TRACES', result['traces'])\n")
    import kernscope
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(kernscope.__file__)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("RANKS") == 1 and "TRACES 2" in done.stdout, done.stdout


def test_failed_digests_are_results_not_a_hang(tmp_path):
    # A digest that cannot be written (its table folder is a file) and a path with a newline in
    # it: each trace gets a result, the run ends (it once waited forever once its workers had died).
    folder = ROOT / "tests" / "fixtures" / "ranks" / "tp2_decode_h200"
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "rank\nzero.sqlite.xz").symlink_to(folder / "rank0.sqlite.xz")
    out = tmp_path / "digests"
    out.mkdir()
    (out / "ranks").write_text("not a folder")
    script = tmp_path / "run.py"
    script.write_text(
        "import json\nfrom kernscope import fleet\n"
        f"r = fleet.digest([{str(folder)!r}, {str(odd)!r}], {str(out)!r}, workers=1)\n"
        "print(json.dumps([(x['path'], x['error']) for x in r['results']]))\n")
    import kernscope
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(kernscope.__file__)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(results) == 3
    assert all(error for _, error in results), results  # none could write its digest
    assert any(path.endswith("rank\nzero.sqlite.xz") for path, _ in results)
