"""The fleet tier (kernscope.fleet, `kernscope fleet`) on 8-rank sets made from a real DDP trace by
tests/ranks/make_rank_set.py: the generator's truths (clock offsets it chose, stragglers it injected,
ranks it cut, hung or left out), the source trace read with Python's json (kernel counts, busy time),
and `kernscope ranks` on the same set. The Dask path runs on a distributed.LocalCluster."""
import decimal
import json
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

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


def by_rank(rows):
    return {r["rank"]: r for r in rows}


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
        assert "distributedInfo" in ranks[int(rank)]["evidence"]
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
    collectives = {c["seq"]: c for c in result["tables"]["collectives"]}
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
        assert round(mine[rank]["wait_ns"]) == column(row, "Wait Time")
        assert mine[rank]["comm_ns"] == column(row, "Comm Time")
    theirs = [(column(r, "Rank"), column(r, "Times Last"), column(r, "Total Lead"), column(r, "Wait Caused"))
              for r in doc["tables"]["stragglers"]]
    assert [(r["rank"], r["times_last"], r["total_lead_ns"], r["wait_caused_ns"])
            for r in result["tables"]["stragglers"]] == theirs
    kinds = {column(r, "Kind"): r for r in doc["tables"]["collective_kinds"]}
    for row in result["tables"]["kinds"]:
        theirs = kinds[row["kind"]]
        assert row["count"] == column(theirs, "Count")
        assert row["transfer_ns"] == column(theirs, "Transfer")
        # The CLI's JSON rounds this median to whole ns.
        assert abs(row["median_spread_ns"] - column(theirs, "Median Spread")) <= 0.5
    lasts = [column(r, "Last Rank") for r in doc["tables"]["collectives"]]
    assert [c["last_rank"] for c in result["tables"]["collectives"]] == lasts


def test_one_export_of_two_processes(tmp_path):
    # A real nsys export holding two torchrun processes (tests/fixtures/ranks/README.md): truths from
    # sqlite3 there — 33 NCCL kernels per GPU, end differences (device 1 - device 0, start order)
    # median -22214 ns, median absolute deviation 3272 ns; one file, one clock: no offset applied.
    export = ROOT / "tests" / "fixtures" / "ranks" / "nsysai_mfu_2gpu_before.sqlite.xz"
    result = fleet.run([str(export)], str(tmp_path / "digests"), workers=1)
    ranks = by_rank(result["tables"]["ranks"])
    assert sorted(ranks) == [0, 1]
    assert all("by device id" in r["evidence"] and r["collectives"] == 33 for r in ranks.values())
    assert ranks[1]["end_difference_ns"] == -22214 and ranks[1]["offset_spread_ns"] == 3272
    assert ranks[1]["clock_offset_ns"] == 0
    doc = json.loads(subprocess.run([cli(), "ranks", str(export), "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    theirs = [(column(r, "Rank"), column(r, "Times Last"), column(r, "Total Lead")) for r in doc["tables"]["stragglers"]]
    assert [(r["rank"], r["times_last"], r["total_lead_ns"]) for r in result["tables"]["stragglers"]] == theirs


def kineto_events(path):
    with open_any(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)["traceEvents"]


def test_kernel_totals_and_busy_time_from_the_json(whole_set):
    base, _, result = whole_set
    kernels = [e for e in kineto_events(base / "set" / "rank0.trace.json.gz") if e.get("cat") == "kernel"]
    # Kernel counts: each rank file holds the source's kernels, so the fleet has 8 times each.
    counts = {}
    for e in kernels:
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    got = {r["name"]: r["count"] for r in result["tables"]["kernels"]}
    assert sum(got.values()) == 8 * len(kernels)
    plain = {name: count for name, count in counts.items() if not name.startswith("_Z")}  # the core demangles the rest
    assert plain
    for name, count in plain.items():
        assert got[name] == 8 * count, name
    # Rank 0's busy time: the union of its kernels' intervals (exact ns from the µs text).
    spans = sorted((int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000)) for e in kernels)
    busy, end = 0, None
    for start, stop in spans:
        if end is None or start > end:
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    names, rows = fleet.sql(str(base / "digests"),
                            "SELECT sum(busy_ns) FROM busy JOIN units USING (trace, part) WHERE rank = 0")
    assert rows[0][0] == busy


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
        want = [{k: v for k, v in r.items() if k != "path"} for r in local["tables"][table]]
        got = [{k: v for k, v in r.items() if k != "path"} for r in dask["tables"][table]]
        assert got == want, table
    # The work ran in the cluster's worker processes, not here.
    assert {r["worker_pid"] for r in dask["per_trace"]} - {os.getpid()}
    assert os.getpid() not in {r["worker_pid"] for r in dask["per_trace"]}


def test_bad_input_is_said_not_crashed(tmp_path):
    truth = make_set(tmp_path / "bad", "--seq", "--cut", "4", "--skip", "7", "--hang", "6:1")
    (tmp_path / "bad" / "rank9.trace.json").write_text("this is not a trace\n")
    result = fleet.run([str(tmp_path / "bad")], str(tmp_path / "digests"), workers=2)
    notes = "\n".join(result["notes"])
    assert "rank9.trace.json: not read" in notes
    assert notes.count("rank9.trace.json") == 2, notes  # the note's, and once in the reader's error
    assert "missing ranks: 7 " in notes
    assert "rank 4: the trace is cut short" in notes
    assert "rank 6 did not arrive at 1 collective" in notes
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
    assert {r["rank"]: r["clock_offset_ns"] for r in result["tables"]["ranks"]} == \
        {int(k): v for k, v in truth["offsets_ns"].items()}
    # Rank 3 lacks the first two collectives: outside its window, not a hang.
    assert len(result["tables"]["collectives"]) == truth["collectives"] - 2
    assert not any("did not arrive" in n for n in result["notes"])
    doc = json.loads(subprocess.run([cli(), "ranks", str(tmp_path / "late"), "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    assert [column(r, "Last Rank") for r in doc["tables"]["collectives"]] == \
        [c["last_rank"] for c in result["tables"]["collectives"]]


def test_bus_bandwidth_as_kernscope_ranks(whole_set):
    # The fleet now reads sizes into bus bandwidth as `kernscope ranks` does (the SQL reduce had none).
    base, _, result = whole_set
    doc = json.loads(subprocess.run([cli(), "ranks", str(base / "set"), "--format", "json"], capture_output=True,
                                    text=True, check=True).stdout)
    kinds = {column(r, "Kind"): r for r in doc["tables"]["collective_kinds"]}
    for row in result["tables"]["kinds"]:
        assert row["median_bus_bandwidth"] > 0
        assert row["median_bus_bandwidth"] / 1e9 == pytest.approx(column(kinds[row["kind"]], "Median Bus BW"), rel=1e-12)


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
