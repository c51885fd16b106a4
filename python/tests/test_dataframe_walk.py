"""Issue 32, item 2: one naming scheme and numbers as numbers in every DataFrame the Python API
returns. Every tabular analysis of the registry runs on three traces (an nsys export, a Kineto
decode trace and an MoE trace), and diff/compare on a pair; every table is walked: columns are
snake_case with unit suffixes, nothing numeric is held as text, yes/no columns are bool, and the
tables hold every row (limit= not given)."""
import pathlib
import re

import pandas as pd
import pytest

import kernscope

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"
TRACES = [
    FIXTURES / "nsys" / "llama_decode_h200" / "trace.sqlite.xz",
    FIXTURES / "kineto" / "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.xz",
    FIXTURES / "moe" / "hf_mixtral_skewed_h100" / "trace.json.xz",
]
CONTROL = FIXTURES / "kineto" / "trace_diff__control__control.json.xz"
TEST = FIXTURES / "kineto" / "trace_diff__test__test.json.xz"
SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
# A number written as text ("7.08 %", "12,345", "3.2 ms"): what a DataFrame must hold as a number.
NUMBER_AS_TEXT = re.compile(r"\s*[-+]?[0-9][0-9,]*(\.[0-9]+)?\s*(%|ns|us|ms|s|MB|GB)?\s*")
UNIT_WORDS = ("time", "duration", "start", "end", "wall", "gpu", "host")


def frames_of(result):
    if isinstance(result, pd.DataFrame):
        return {"": result}
    if isinstance(result, dict) and all(isinstance(v, pd.DataFrame) for v in result.values()):
        return result
    return {}


def check_frame(where, frame):
    problems = []
    for column in frame.columns:
        if not SNAKE.fullmatch(str(column)):
            problems.append(f"{where}: column {column!r} is not snake_case")
        values = frame[column].dropna()
        if frame[column].dtype == object and len(values):
            texts = [v for v in values if isinstance(v, str)]
            if texts and len(texts) == len(values) and all(NUMBER_AS_TEXT.fullmatch(v) for v in texts):
                problems.append(f"{where}: column {column!r} holds numbers as text ({texts[:2]})")
            if texts and set(texts) <= {"yes", "no"}:
                problems.append(f"{where}: column {column!r} holds yes/no as text")
    return problems


def single_trace_analyses():
    return [s["name"] for s in kernscope.analyses() if s["max_traces"] == 1 and s["shape"] == "tables"]


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.parent.name)
def test_every_table_of_every_analysis_has_one_naming_scheme(path):
    trace = kernscope.open(str(path))
    problems, walked = [], 0
    for name in single_trace_analyses():
        if name == "stats":
            result = trace.stats(["cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "nvtx_sum", "cuda_gpu_trace"])
        else:
            try:
                result = getattr(trace, name.replace("-", "_"))()
            except kernscope.Error as e:  # an analysis the trace cannot feed (no steps, no ranks): said, not a frame
                assert str(e), name
                continue
        for table, frame in frames_of(result).items():
            walked += 1
            problems += check_frame(f"{path.parent.name} {name} {table}", frame)
    assert walked >= 10, walked
    assert not problems, "\n".join(problems)


def test_multi_trace_tables_have_one_naming_scheme():
    problems = []
    for name, frames in (("diff", kernscope.diff(str(CONTROL), str(TEST), fail_if=["total_kernel_time > +1000%"])),
                         ("compare", kernscope.compare(str(CONTROL), str(TEST), label=["control", "test"]))):
        for table, frame in frames_of(frames).items():
            problems += check_frame(f"{name} {table}", frame)
    assert not problems, "\n".join(problems)


def test_durations_stay_in_ns_whatever_the_time_unit():
    trace = kernscope.open(str(TRACES[0]))
    ns = trace.stats("cuda_gpu_kern_sum")
    us = trace.stats("cuda_gpu_kern_sum", time_unit="us")
    assert list(ns.columns) == list(us.columns) and "total_time_ns" in ns.columns
    assert ns["total_time_ns"].tolist() == us["total_time_ns"].tolist()


def test_folders_and_globs_are_read_as_on_the_command_line():
    folder = FIXTURES / "ranks" / "tp2_decode_h200"
    files = sorted(str(p) for p in folder.glob("rank*.sqlite.xz"))
    by_folder = kernscope.ranks(str(folder))["ranks"]
    by_glob = kernscope.ranks(str(folder / "rank*.sqlite.xz"))["ranks"]
    by_files = kernscope.ranks(*files)["ranks"]
    assert len(by_files) == 2
    pd.testing.assert_frame_equal(by_folder, by_files)
    pd.testing.assert_frame_equal(by_glob, by_files)
    with pytest.raises(kernscope.Error, match="no trace files"):
        kernscope.ranks(str(FIXTURES / "ncu"))


def test_ranks_over_paths_reads_each_trace_in_cpp(monkeypatch):
    """kernscope.ranks(paths) reads the traces as the CLI does, one at a time, each freed once
    digested (AnalysisSpec::reads_paths), never opened whole in Python: the same tables as the
    traces opened first, with Python's opening made to fail."""
    folder = FIXTURES / "ranks" / "tp2_decode_h200"
    files = sorted(str(p) for p in folder.glob("rank*.sqlite.xz"))
    opened = kernscope.ranks(*[kernscope.open(f) for f in files])
    text = kernscope.ranks(*files, format="csv", table="stragglers")

    def refuse(path):
        raise AssertionError(f"opened in Python: {path}")

    monkeypatch.setattr(kernscope._core, "open", refuse)
    by_paths = kernscope.ranks(*files)
    assert set(by_paths) == set(opened)
    for name in opened:
        pd.testing.assert_frame_equal(by_paths[name], opened[name])
    assert kernscope.ranks(str(folder), format="csv", table="stragglers") == text


def test_type_stubs_name_everything_the_extension_exports():
    """python/kernscope/_core.pyi is kept by hand: every function, class and Trace method the C++
    extension exports is declared there."""
    from kernscope import _core

    stub = (pathlib.Path(kernscope.__file__).with_name("_core.pyi")).read_text()
    declared = set(re.findall(r"^\s*(?:def|class)\s+(\w+)", stub, re.M)) | set(re.findall(r"^(\w+)\s*:", stub, re.M))
    exported = {n for n in dir(_core) if not n.startswith("_")} | {n for n in dir(_core.Trace) if not n.startswith("_")}
    assert exported - declared == set()
