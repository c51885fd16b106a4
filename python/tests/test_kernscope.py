"""The Python package against Nsight Systems' own outputs and independent readings of the fixtures."""
import csv
import decimal
import sqlite3
import io
import json
import re
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kernscope
from kernscope import annotate
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from compressed import decompress_any, gold_text, open_any, plain_copy  # noqa: E402  (gzip, xz or plain by magic)

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"
LLAMA = FIXTURES / "nsys" / "llama_decode_h200"
KINETO = FIXTURES / "kineto" / "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.xz"


@pytest.fixture(scope="module")
def llama():
    return kernscope.open(str(LLAMA / "trace.sqlite.xz"))


def gold_csv(path):
    return list(csv.DictReader(io.StringIO(gold_text(path))))


def test_stats_json_equals_nsys_json(llama):
    # nsys's own `--format json` output for this export: as a DataFrame's records, and as the
    # rendered JSON text, byte for byte.
    for report in ("cuda_gpu_kern_sum", "cuda_api_sum"):
        gold = LLAMA / "gold" / "variants" / f"json_{report}.json"
        want = json.loads(gold_text(gold))
        # The DataFrame holds nsys's rows and values; its columns are named in Python's one scheme
        # (snake_case, unit suffix), in nsys's order.
        frame = llama.stats(report)
        assert len(frame.columns) == len(want[0])
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in frame.columns)
        assert frame.values.tolist() == [list(row.values()) for row in want]
        assert frame.columns[list(want[0]).index("Total Time (ns)")] == "total_time_ns"
        assert llama.stats(report, format="json") == gold_text(gold)
        assert json.loads(llama.run("stats", report=report, format="json")) == want


def test_stats_with_filters_equal_nsys(llama):
    cases = sorted((LLAMA / "gold" / "filters").iterdir())
    assert len(cases) >= 4
    for case in cases:
        args = (case / "args.txt").read_text().split()
        kwargs = {"filter_time" if args[0] == "--filter-time" else "filter_nvtx": args[1]}
        want = gold_text(case / "cuda_gpu_kern_sum.csv")
        if not want.strip():  # nsys printed nothing: the range does not exist, an error here
            with pytest.raises(kernscope.Error):
                llama.stats("cuda_gpu_kern_sum", **kwargs)
            continue
        rows = llama.stats("cuda_gpu_kern_sum", **kwargs)
        gold = list(csv.DictReader(io.StringIO(want)))
        assert rows["name"].tolist() == [g["Name"] for g in gold], case.name
        assert rows["total_time_ns"].tolist() == [int(g["Total Time (ns)"]) for g in gold], case.name


def test_kernel_frame_matches_nsys_summary(llama):
    k = llama.kernels()
    gold = gold_csv(LLAMA / "gold" / "cuda_gpu_kern_sum.csv")
    by_name = k.groupby("name", observed=True)["duration_ns"].agg(["count", "sum"])
    for row in gold:
        assert by_name.loc[row["Name"], "count"] == int(row["Instances"])
        assert by_name.loc[row["Name"], "sum"] == int(row["Total Time (ns)"])
    assert len(k) == sum(int(r["Instances"]) for r in gold)


def test_columns_are_zero_copy_read_only_views(llama):
    columns = llama._core.kernel_columns()
    start = columns["start_ns"]
    assert start.dtype == np.int64 and not start.flags.writeable
    frame = llama.kernels()
    assert np.shares_memory(frame["start_ns"].to_numpy(), start)
    # The view outlives the Python objects that made it: the C++ trace is shared with it.
    del frame, columns
    assert int(start[0]) > 0


def test_api_nvtx_memops_and_samples(llama):
    api = llama.api_calls()
    gold = gold_csv(LLAMA / "gold" / "cuda_api_sum.csv")
    assert len(api) == sum(int(r["Num Calls"]) for r in gold)
    nvtx = llama.nvtx()
    assert (nvtx["text"] == "measure:decode_step").sum() == 64
    mem = llama.memops()
    gold_mem = gold_csv(LLAMA / "gold" / "cuda_gpu_mem_time_sum.csv")
    assert len(mem) == sum(int(r["Count"]) for r in gold_mem)
    assert set(mem["op"]) <= {"memcpy", "memset"}
    samples = llama.samples()
    assert len(samples) == 0 and "sm_clock_mhz" in samples.columns


def test_graph_execs_equal_sqlite(tmp_path):
    # nsys --cuda-graph-trace=graph export: the frame holds every row of its graph-trace table.
    src = FIXTURES / "graph_trace" / "nsys_graph_level_h100.sqlite.xz"
    db = tmp_path / "g.sqlite"
    db.write_bytes(decompress_any(src.read_bytes()))
    rows = sqlite3.connect(db).execute(
        "SELECT start, end, graphExecId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE ORDER BY start").fetchall()
    g = kernscope.open(str(src)).graph_execs()
    assert len(g) == len(rows) == 200
    assert list(g["start_ns"]) == [r[0] for r in rows]
    assert int(g["duration_ns"].sum()) == sum(r[1] - r[0] for r in rows)
    assert set(g["graph_exec_id"]) == {r[2] for r in rows}
    assert "correlation" in g.columns  # named as in the kernel, copy and API frames, to join on
    node_level = kernscope.open(str(LLAMA / "trace.sqlite.xz")).graph_execs()
    assert len(node_level) == 0 and "graph_id" in node_level.columns


def test_kineto_kernels_equal_python_json():
    with open_any(KINETO, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    durations = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            durations.setdefault(e["name"], []).append(int(decimal.Decimal(e["dur"]) * 1000))
    t = kernscope.open(str(KINETO))
    assert t.info["format"] == "kineto-json"
    k = t.kernels()
    got = k.groupby("name", observed=True)["duration_ns"].agg(["count", "sum"])
    assert len(got) == len(durations)
    for name, values in durations.items():
        assert got.loc[name, "count"] == len(values)
        assert got.loc[name, "sum"] == sum(values)


def test_tabular_analyses_are_dataframes(llama):
    tail = llama.tail(by="kernel", limit=5)
    assert set(tail) == {"tail_by_total", "tail_candidates"}
    assert len(tail["tail_by_total"]) == 5
    # The rows by total time come in descending order of total time.
    totals = tail["tail_by_total"]["total_time_ns"].tolist()
    assert totals == sorted(totals, reverse=True) and totals[0] > 0
    steps = llama.steps()
    per_step = steps["steps"]
    # The fixture's NVTX ranges: 64 warm-up and 64 measured decode steps, one measured prefill
    # (and its warm-up), as its workload (tools/llama_decode_workload.py) issued them.
    assert (per_step["phase"] == "decode").sum() == 128
    assert set(steps["step_groups"]["name"]) >= {":measure:decode_step", ":warmup:decode_step"}
    ops = llama.ops(detail=True)
    assert set(ops) == {"ops", "ops_detail"}
    assert ops["ops_detail"]["name"].nunique() == len(ops["ops_detail"])


def test_whatif_and_critical_path(llama):
    # Replayed as traced, every measured decode step keeps its time; with CUDA graphs the eager decode
    # (13 ms, its kernels about 1.7 ms) is predicted far shorter, and never shorter than its kernels.
    none = llama.whatif()
    groups = none["whatif_groups"].set_index("group")
    decode = groups.loc[":measure:decode_step"]
    assert decode["steps"] == 64 and decode["predicted_ns"] == decode["traced_ns"]
    graphed = llama.whatif(change=["graphs"])["whatif_groups"].set_index("group").loc[":measure:decode_step"]
    assert 1.5e6 < graphed["predicted_ns"] < 0.5 * decode["traced_ns"]
    doc = json.loads(llama.run("whatif", format="json", change=["graphs", "host=0.5"]))
    assert doc["changes"] == ["graphs", "host=0.5"] and doc["headline_group"] == ":measure:decode_step"
    path = llama.critical_path()
    rows = path[path["group"] == ":measure:decode_step"]
    assert abs(rows["share_pct"].sum() - 100) < 0.01
    with pytest.raises(kernscope.Error, match="not a change"):
        llama.whatif(change=["faster"])


def test_whatif_of_ranks_in_files_of_their_own():
    # tests/fixtures/ranks/tp2_decode_h200: rank 1 slept 2 ms before the first all-reduce of steps
    # 4, 9, ..., 39 (its README), so rank 0's step 4 waited 2 ms inside that all-reduce. Without the
    # host's own work, the ranks replayed together lose that wait; rank 0 replayed alone keeps it.
    tp2 = FIXTURES / "ranks" / "tp2_decode_h200"
    together = kernscope.whatif(tp2 / "rank0.sqlite.xz", tp2 / "rank1.sqlite.xz", change=["host=0"])["whatif"]
    assert set(together["rank"]) == {0, 1}
    step4 = together[(together["rank"] == 0) & (together["step"] == 4)].iloc[0]
    assert step4["traced_ns"] > 2.5e6 and step4["predicted_ns"] < 1e6
    alone = kernscope.open(str(tp2 / "rank0.sqlite.xz")).whatif(change=["host=0"])["whatif"]
    assert alone[alone["step"] == 4].iloc[0]["predicted_ns"] > 2e6


def test_documents_are_dicts(llama):
    assert llama.report()["schema"] == "kernscope.report/1"
    assert any(f["rule"] == "llm_launch_bound" for f in llama.analyze()["findings"])
    info = llama.info
    assert info["format"] == "nsys-sqlite" and info["counts"]["kernels"] == 90287


def _single_trace_analyses():
    return [s for s in kernscope.analyses() if s["max_traces"] == 1]  # diff, compare: test_diff.py


def test_the_registry_lists_every_analysis_python_runs():
    names = {s["name"] for s in kernscope.analyses()}
    assert names >= {"info", "stats", "tail", "ops", "analyze", "steps", "report", "export"}
    for spec in _single_trace_analyses():
        assert hasattr(kernscope.Trace, spec["name"].replace("-", "_")), spec["name"]


@pytest.mark.parametrize("spec", _single_trace_analyses(), ids=lambda s: s["name"])
def test_every_analysis_runs_through_python_as_through_the_cli(spec, tmp_path):
    """Walks the registry: each analysis and format gives the same text from Python as from the CLI
    (one case per analysis, so pytest's workers share them; the trace decompressed once per run)."""
    cli = os.environ.get("KERNSCOPE_CLI")
    assert cli, "set KERNSCOPE_CLI to the kernscope binary (make test does)"
    trace = plain_copy(LLAMA / "trace.sqlite.xz")
    llama = _opened(trace)
    name = spec["name"]
    for fmt in spec["formats"]:
        if name == "export":
            cli_out, py_out = tmp_path / f"cli.{fmt}.json", tmp_path / f"py.{fmt}.json"
            subprocess.run([cli, name, "--format", fmt, "-o", str(cli_out), trace], check=True, capture_output=True)
            summary = llama.export(str(py_out), format=fmt)
            assert summary["path"] == str(py_out) and summary["events"] > 0
            assert cli_out.read_bytes() == py_out.read_bytes(), fmt
            continue
        got = subprocess.run([cli, name, "--format", fmt, trace], check=True, capture_output=True, text=True).stdout
        assert got.strip(), (name, fmt)
        assert llama.run(name, format=fmt) == got, (name, fmt)
        if fmt == "json" and name != "stats":  # stats prints one JSON array per report, as nsys does
            json.loads(got)


_OPENED = {}


def _opened(path):
    """One opened Trace per file and test process (the module's `llama` fixture opens the .xz itself)."""
    if path not in _OPENED:
        _OPENED[path] = kernscope.open(path)
    return _OPENED[path]


def test_json_outputs_stay_valid_with_control_characters_in_names(tmp_path):
    # A kernel and an NVTX range whose names hold a tab, a newline, a quote and a byte that is not
    # UTF-8: every JSON output must still parse (the findings JSON escaped only three characters).
    con = sqlite3.connect(LLAMA_COPY(tmp_path))
    con.execute("UPDATE StringIds SET value = value || '\t\"x\n' || char(1) WHERE id = "
                "(SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1)")
    con.commit()
    con.close()
    t = kernscope.open(str(tmp_path / "llama.sqlite"))
    checked = 0
    for name, spec in {s["name"]: s for s in kernscope.analyses()}.items():
        if "json" in spec["formats"] and spec["max_traces"] == 1:
            # stats prints one JSON array per report, as nsys does: ask for one report.
            options = {"report": "cuda_gpu_kern_sum"} if name == "stats" else {}
            assert json.loads(t.run(name, format="json", **options)) is not None, name
            checked += 1
    assert checked >= 6
    rows = t.stats("cuda_gpu_kern_sum")
    assert rows["name"].str.contains("\t\"x\n\x01").sum() == 1


def LLAMA_COPY(tmp_path):
    out = tmp_path / "llama.sqlite"
    with open_any(LLAMA / "trace.sqlite.xz", "rb") as f:
        out.write_bytes(f.read())
    return str(out)


def test_export_reads_back(llama, tmp_path):
    out = tmp_path / "timeline.json.gz"
    summary = llama.export(str(out))
    assert summary["flows"] > 0
    again = kernscope.open(str(out))
    assert again.stats("cuda_gpu_kern_sum").equals(llama.stats("cuda_gpu_kern_sum"))


def test_errors_carry_the_cli_message(tmp_path, llama):
    with pytest.raises(kernscope.Error, match="no such file"):
        kernscope.open(str(tmp_path / "missing.sqlite"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": 7}')
    with pytest.raises(kernscope.Error, match='"traceEvents" is not an array'):
        kernscope.open(str(bad))
    with pytest.raises(kernscope.Error, match="unknown report"):
        llama.stats("no_such_report")
    with pytest.raises(kernscope.Error):
        llama.stats("cuda_gpu_kern_sum", filter_time="bogus")


def test_without_pandas_frames_are_dicts_of_arrays():
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "import kernscope\n"
        f"t = kernscope.open({str(LLAMA / 'trace.sqlite.xz')!r})\n"
        "k = t.kernels()\n"
        "assert isinstance(k, dict) and k['start_ns'].dtype.name == 'int64'\n"
        "assert k['name'][0].startswith('void')\n"
        "print(len(k['start_ns']))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert int(out) == 90287


class FakeProfiler:
    def __init__(self):
        self.calls = []

    def start(self):
        self.calls.append("start")

    def stop(self):
        self.calls.append("stop")


def test_steps_start_and_stop_around_the_chosen_iterations(monkeypatch):
    monkeypatch.delenv("KERNSCOPE_PROFILE_START_STOP", raising=False)
    profiler = FakeProfiler()
    seen = []
    s = annotate.steps(2, 4, profiler=profiler)
    for i in s(range(8)):
        seen.append((i, s.active))
    assert profiler.calls == ["start", "stop"]
    assert [i for i, active in seen if active] == [2, 3, 4]
    # The environment chooses several spans; a span open at the end is closed.
    monkeypatch.setenv("KERNSCOPE_PROFILE_START_STOP", "1-1,5-9")
    profiler = FakeProfiler()
    s = annotate.steps(0, 0, profiler=profiler)
    active = [i for i in s(range(7)) if s.active]
    assert active == [1, 5, 6]
    assert profiler.calls == ["start", "stop", "start", "stop"]
    with pytest.raises(ValueError):
        annotate.parse_iterations("5-2")


def test_nvtx_range_as_context_manager_and_decorator():
    calls = []

    @annotate.range("decorated", domain="kernscope-test")
    def work(x):
        calls.append(x)
        return x * 2

    with annotate.range("outer"):
        assert work(21) == 42
    assert calls == [21]
    assert isinstance(kernscope._core.nvtx_available, bool)


def test_kernel_frame_carries_step_phase_and_class(llama):
    k = llama.kernels()
    steps = llama.steps()["steps"]
    # Each step's kernel time is the sum of the durations of the kernels the frame puts in it.
    by_step = k[k["step"] >= 0].groupby("step")["duration_ns"].sum()
    kernel_time = steps.set_index("step")["kernel_time_ns"]
    assert len(by_step) == len(steps)
    assert (by_step == kernel_time.loc[by_step.index]).all()
    # Kernels of decode steps are in phase decode; every instance of a kernel name has one class.
    decode_steps = set(steps.loc[steps["phase"] == "decode", "step"])
    assert (k.loc[k["step"].isin(decode_steps), "phase"] == "decode").all()
    assert k["op_class"].notna().all()
    assert k.groupby("name", observed=True)["op_class"].nunique().max() == 1
    memops = llama.memops()
    assert "step" in memops.columns and len(memops["step"]) == len(memops)


def test_tables_hold_every_row_unless_a_limit_is_asked(llama):
    """tail and roofline print 20 rows on the CLI; their DataFrames hold every row (issue 32: a sum over a
    silently cut table was wrong), and limit= still cuts them on request."""
    cli = os.environ.get("KERNSCOPE_CLI")
    assert cli, "set KERNSCOPE_CLI to the kernscope binary (make test does)"
    trace = plain_copy(LLAMA / "trace.sqlite.xz")
    every = subprocess.run([cli, "tail", "--limit", "0", "--format", "csv", trace], check=True, capture_output=True, text=True).stdout
    cut = subprocess.run([cli, "tail", "--format", "csv", trace], check=True, capture_output=True, text=True).stdout
    rows_all = len(list(csv.DictReader(io.StringIO(every))))
    assert rows_all > len(list(csv.DictReader(io.StringIO(cut)))), "the bundled trace has more kernels than the CLI's 20 rows"
    tables = llama.tail()  # by total time and by tail score, both over every kernel
    assert {name: len(frame) for name, frame in tables.items()} == {"tail_by_total": rows_all, "tail_candidates": rows_all}
    assert {len(frame) for frame in llama.tail(limit=5).values()} == {5}
    emit = plain_copy(FIXTURES / "nsys" / "llama_decode_emit_nvtx_h200" / "trace.sqlite.xz")
    every = subprocess.run([cli, "roofline", "--limit", "0", "--format", "csv", emit], check=True, capture_output=True, text=True).stdout
    kernels = len(list(csv.DictReader(io.StringIO(every))))
    assert kernels > 20, "the emit_nvtx trace has more kernels with shapes than the CLI's 20 rows"
    assert len(kernscope.open(emit).roofline()) == kernels


def test_output_writes_the_text_of_a_format(llama, tmp_path):
    """output= (the CLI's -o) writes the text of the format given and returns what it wrote; without
    format= a table analysis has no text to write, which is said instead of writing an empty file."""
    out = tmp_path / "ops.csv"
    written = llama.ops(format="csv", output=str(out))
    assert written["path"] == str(out) and written["bytes"] == out.stat().st_size > 0
    assert out.read_text() == llama.ops(format="csv")
    with pytest.raises(kernscope.Error, match="give format="):
        llama.ops(output=str(tmp_path / "frames.csv"))
    assert not (tmp_path / "frames.csv").exists()


def test_version_and_a_clean_namespace():
    # The version has one home (CMakeLists.txt's project(kernscope VERSION ...)); dir() lists what the
    # package offers, not what it imports for itself (typing names, numpy, json).
    import re
    cmake = open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")).read()
    assert kernscope.__version__ == re.search(r"project\(kernscope VERSION ([0-9.]+)", cmake).group(1)
    names = dir(kernscope)
    for leaked in ("Any", "Dict", "List", "Optional", "Union", "np", "json", "logging", "Frame"):
        assert leaked not in names, leaked
    for offered in ("open", "Trace", "Error", "annotate", "report_names", "analyses", "ranks", "diff", "__version__"):
        assert offered in names, offered


@pytest.mark.parametrize("name", ["info", "analyze", "report"])
def test_documents_reach_python_as_values_equal_to_the_cli_json(name):
    """Documents come to Python as values built from the document (no JSON text in between): they must
    equal what the CLI's --format json prints, read by Python's own json module, types included (an
    int where the text has no fraction)."""
    cli = os.environ.get("KERNSCOPE_CLI")
    assert cli, "set KERNSCOPE_CLI to the kernscope binary (make test does)"
    for trace in (plain_copy(LLAMA / "trace.sqlite.xz"), str(FIXTURES / "whatif" / "decode_bench.after.sqlite.xz")):
        got = kernscope.open(trace).run(name)
        text = subprocess.run([cli, name, "-q", "--format", "json", trace], check=True, capture_output=True, text=True).stdout
        expected = json.loads(text)

        def same(a, b, where):
            assert type(a) is type(b), (where, a, b)
            if isinstance(a, dict):
                assert list(a) == list(b), (where, list(a), list(b))
                for k in a:
                    same(a[k], b[k], f"{where}.{k}")
            elif isinstance(a, list):
                assert len(a) == len(b), where
                for i, (x, y) in enumerate(zip(a, b)):
                    same(x, y, f"{where}[{i}]")
            else:
                assert a == b, (where, a, b)

        same(got, expected, name)


def test_a_document_with_output_writes_its_json_and_says_what_was_written(tmp_path):
    """output= without format= writes a document's JSON text (what the CLI's -o writes) and returns what
    was written, as before documents reached Python as values."""
    path = tmp_path / "report.json"
    summary = kernscope.open(str(FIXTURES / "whatif" / "decode_bench.after.sqlite.xz")).run("report", output=str(path))
    assert summary["path"] == str(path) and summary["format"] == "json" and summary["bytes"] == path.stat().st_size
    assert json.loads(path.read_text())["schema"] == "kernscope.report/1"
