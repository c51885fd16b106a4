"""kernscope.diff / kernscope.compare from Python: the registry's multi-trace analyses as module
functions. Expected values: sums with Python's json over the traces, and the CLI's text."""
import sys
import collections
import decimal
import json
import os
import pathlib
import subprocess

import pytest

import kernscope
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))
from compressed import open_any  # noqa: E402  (gzip, xz or plain by magic)

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"
CONTROL = FIXTURES / "kineto" / "trace_diff__control__control.json.xz"
TEST = FIXTURES / "kineto" / "trace_diff__test__test.json.xz"


def kernel_sums(path):
    with open_any(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    sums = collections.defaultdict(lambda: [0, 0])
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel"):
            sums[e["name"]][0] += 1
            sums[e["name"]][1] += int((decimal.Decimal(str(e.get("dur", 0))) * 1000).quantize(1, decimal.ROUND_HALF_UP))
    return sums


def test_diff_frames_match_independent_sums():
    frames = kernscope.diff(str(CONTROL), str(TEST))
    assert set(frames) >= {"diff_phases", "diff_classes", "diff_kernels", "diff_kernel_tails", "diff_nvtx", "diff_gates"}
    kernels = frames["diff_kernels"].set_index("name")
    for column, path in (("A", CONTROL), ("B", TEST)):
        for name, (count, total) in kernel_sums(path).items():
            assert kernels.loc[name, f"count_{column.lower()}"] == count, name
            assert kernels.loc[name, f"total_{column.lower()}_ns"] == total, name


def test_diff_accepts_traces_and_groups_and_renders_as_the_cli():
    a, b = kernscope.open(str(CONTROL)), kernscope.open(str(TEST))
    text = kernscope.diff(a, b, format="csv")
    cli = os.environ.get("KERNSCOPE_CLI")
    if cli:
        got = subprocess.run([cli, "diff", "--format", "csv", str(CONTROL), str(TEST)], check=True,
                             capture_output=True, text=True).stdout
        assert text == got
    frames = kernscope.diff([a, a], [b, b], fail_if=["total_kernel_time > +1000%"])
    gates = frames["diff_gates"]
    assert list(gates["failed"]) == [False]
    assert gates["noise_from"][0].endswith("runs")
    assert gates["change_unit"][0] == "%" and isinstance(gates["change"][0], float)


def test_compare_labels_and_errors():
    frames = kernscope.compare(str(CONTROL), str(TEST), label=["control", "test"])
    assert "control_ns" in frames["compare_steps"].columns
    assert list(frames["compare_classes"].columns) == ["class", "control_ns", "test_ns"]
    with pytest.raises(kernscope.Error):
        kernscope.diff(str(CONTROL))
    with pytest.raises(kernscope.Error, match="METRIC OP CHANGE"):
        kernscope.diff(str(CONTROL), str(TEST), fail_if="tpot >> 5")
