"""kernscope: where GPU time goes in LLM inference.

    import kernscope
    t = kernscope.open("run.sqlite")          # Nsight Systems export, or a PyTorch-profiler JSON
    t.kernels()                               # pandas DataFrame (dict of numpy arrays without pandas)
    t.stats("cuda_gpu_kern_sum")              # the same rows as `kernscope stats --format json`
    t.report()                                # the diagnosis, as `kernscope report --format json`

Numeric columns share the C++ trace's memory (read-only numpy views); name columns are pandas
categoricals over the trace's string table. Errors raise kernscope.Error with the CLI's message.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Union

import numpy as np

from . import _core
from . import annotate

Error = _core.Error

__all__ = ["open", "Trace", "Error", "annotate", "report_names"]

try:  # pandas is optional: without it, frames are dicts of numpy arrays
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the no-pandas test in a subprocess
    _pd = None

_NO_STRING = np.uint32(0xFFFFFFFF)
Frame = Union["_pd.DataFrame", Dict[str, np.ndarray]]


def report_names() -> List[str]:
    """The nsys-compatible report names `Trace.stats` accepts."""
    return list(_core.report_names())


def open(path: str) -> "Trace":  # noqa: A001 - the natural name, as in the CLI
    """Opens a trace: Nsight Systems .sqlite/.sqlite.gz/.nsys-rep, or PyTorch-profiler .json/.json.gz."""
    return Trace(_core.open(str(path)))


class Trace:
    """A loaded trace. Frames are built on demand; numeric columns are zero-copy views."""

    def __init__(self, core: "_core.Trace"):
        self._core = core
        self._strings: Optional[np.ndarray] = None
        self._categories = None  # the string table as a pandas Index, built once

    # --- metadata -----------------------------------------------------------------------------
    @property
    def info(self) -> Dict[str, Any]:
        """Source format, devices, processes, rank, and what the source lacks (notes)."""
        return self._core.info()

    def _string_table(self) -> np.ndarray:
        if self._strings is None:
            self._strings = np.array(self._core.strings(), dtype=object)
        return self._strings

    def _names(self, ids: np.ndarray):
        table = self._string_table()
        if _pd is not None:
            codes = ids.astype(np.int64)
            codes[ids == _NO_STRING] = -1
            if self._categories is None:
                self._categories = _pd.Index(table, dtype=object)
            return _pd.Categorical.from_codes(codes, categories=self._categories, validate=False)
        out = np.empty(len(ids), dtype=object)
        valid = ids != _NO_STRING
        out[valid] = table[ids[valid]]
        out[~valid] = None
        return out

    def _frame(self, columns: Dict[str, np.ndarray], name_columns: List[str]) -> Frame:
        data: Dict[str, Any] = {}
        for key, values in columns.items():
            data[key] = self._names(values) if key in name_columns else values
        if "start_ns" in data and "end_ns" in data:
            data["duration_ns"] = columns["end_ns"] - columns["start_ns"]
        if _pd is None:
            return data
        # copy=False keeps the numeric columns as views of the trace's memory where pandas allows.
        return _pd.DataFrame(data, copy=False)

    # --- events -------------------------------------------------------------------------------
    def kernels(self) -> Frame:
        """One row per kernel: times (ns), device, stream, correlation, launch geometry, names."""
        return self._frame(self._core.kernel_columns(), ["name", "short_name"])

    def memops(self) -> Frame:
        """Memory copies and memsets, one row each; `op` says which ("memcpy" or "memset")."""
        copies = self._core.memcpy_columns()
        sets = self._core.memset_columns()
        shared = ["start_ns", "end_ns", "global_pid", "device", "stream", "correlation", "bytes"]
        data = {key: np.concatenate([copies[key], sets[key]]) for key in shared}
        n_copies, n_sets = len(copies["start_ns"]), len(sets["start_ns"])
        minus_one = np.full(n_sets, -1, dtype=np.int32)
        data["copy_kind"] = np.concatenate([copies["copy_kind"], minus_one])
        data["src_kind"] = np.concatenate([copies["src_kind"], minus_one])
        data["dst_kind"] = np.concatenate([copies["dst_kind"], sets["mem_kind"]])
        data["op"] = np.array(["memcpy"] * n_copies + ["memset"] * n_sets, dtype=object)
        data["duration_ns"] = data["end_ns"] - data["start_ns"]
        return data if _pd is None else _pd.DataFrame(data, copy=False)

    def api_calls(self) -> Frame:
        """CUDA runtime and driver calls: times, thread (global tid), correlation, name."""
        return self._frame(self._core.api_columns(), ["name"])

    def nvtx(self) -> Frame:
        """NVTX events (ranges, marks, domain creations); Kineto's framework ranges included."""
        return self._frame(self._core.nvtx_columns(), ["text"])

    def samples(self) -> Frame:
        """GPU samples (NVML: clocks, power, temperature, utilization); empty when not recorded."""
        columns = self._core.sample_columns()
        data = dict(columns)
        return data if _pd is None else _pd.DataFrame(data, copy=False)

    def graph_execs(self) -> Frame:
        """Whole CUDA-graph executions (graphs traced as units: nsys --cuda-graph-trace=graph or
        kernscope record --cuda-graph-trace graph); empty when graphs were traced node by node."""
        data = dict(self._core.graph_exec_columns())
        data["duration_ns"] = data["end_ns"] - data["start_ns"]
        return data if _pd is None else _pd.DataFrame(data, copy=False)

    # --- reports and analyses (the CLI's JSON) --------------------------------------------------
    def stats(self, report: str, filter_time: Optional[str] = None, filter_nvtx: Optional[str] = None,
              time_unit: str = "ns") -> List[Dict[str, Any]]:
        """An nsys-compatible report's rows, as `kernscope stats --format json` prints them."""
        return json.loads(self._core.stats(report, filter_time, filter_nvtx, time_unit))

    def tail(self, by: str = "kernel", limit: int = 20) -> Dict[str, Any]:
        """p50/p95/p99/max and tail score per kernel, API call or NVTX range (`by`)."""
        return json.loads(self._core.tail(by, limit))

    def analyze(self) -> Dict[str, Any]:
        """Rule findings (nsys's rules and the LLM rules), as `kernscope analyze --format json`."""
        return json.loads(self._core.analyze())

    def report(self) -> Dict[str, Any]:
        """The whole diagnosis, as `kernscope report --format json`."""
        return json.loads(self._core.report())

    def export(self, path: str, format: str = "perfetto") -> Dict[str, int]:
        """Writes a timeline for ui.perfetto.dev / chrome://tracing (.json or .json.gz)."""
        events, flows, overlap_tracks = self._core.export(str(path), format)
        return {"events": events, "flows": flows, "overlap_tracks": overlap_tracks}

    def __repr__(self) -> str:
        info = self.info
        return f"<kernscope.Trace {info['format']} {info['path']!r}>"
