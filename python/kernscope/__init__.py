"""kernscope: where GPU time goes in LLM inference.

    import kernscope
    t = kernscope.open("run.sqlite")          # Nsight Systems export, or a PyTorch-profiler JSON
    t.kernels()                               # pandas DataFrame (dict of numpy arrays without pandas)
    t.stats("cuda_gpu_kern_sum")              # DataFrame: the rows and columns of `kernscope stats`
    t.steps()                                 # every analysis of the CLI is a method: steps, ops, tail...
    t.report()                                # the diagnosis, as `kernscope report --format json`

Numeric columns share the C++ trace's memory (read-only numpy views), but for the ids of threads,
processes, devices, contexts, streams and graph nodes, which the trace keeps dictionary-coded and
hands out as copies; name columns are pandas
categoricals over the trace's string table. Errors raise kernscope.Error with the CLI's message.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Union

import numpy as np

from . import _core
from . import annotate

Error = _core.Error
_log = logging.getLogger("kernscope")

__version__: str = _core.__version__

__all__ = ["open", "Trace", "Error", "annotate", "report_names", "analyses"]


def __dir__() -> List[str]:
    """What the package offers (its analyses included), not the names it imports for itself."""
    return sorted(set(__all__) | {"__version__"})

try:  # pandas is optional: without it, frames are dicts of numpy arrays
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the no-pandas test in a subprocess
    _pd = None

_NO_STRING = np.uint32(0xFFFFFFFF)
Frame = Union["_pd.DataFrame", Dict[str, np.ndarray]]


def report_names() -> List[str]:
    """The nsys-compatible report names `Trace.stats` accepts."""
    return list(_core.report_names())


def open(path: str, partial: bool = False) -> "Trace":  # noqa: A001 - the natural name, as in the CLI
    """Opens a trace: Nsight Systems .sqlite/.nsys-rep, or PyTorch-profiler .json; .sqlite and .json also gzip- or xz-compressed.
    A trace cut short (it ends inside an event) raises, unless `partial`: then it is read up to its last whole event."""
    return Trace(_core.open(str(path), partial))


class Trace:
    """A loaded trace. Frames are built on demand; numeric columns are zero-copy views (ids: copies)."""

    def __init__(self, core: "_core.Trace"):
        self._core = core
        self._strings: Optional[np.ndarray] = None
        self._categories = None  # the string table as a pandas Index, built once
        self._context: Optional[Dict[str, Any]] = None  # class, step and phase per operation

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
        """One row per kernel: times (ns), device, stream, correlation, launch geometry, names, and
        its operation class, step (index into `steps()`, -1 outside any step) and phase."""
        frame = self._frame(self._core.kernel_columns(), ["name", "short_name"])
        context = self._operation_context()
        extra = {
            "op_class": self._labels(context["kernel_class"], context["class_names"]),
            "step": context["kernel_step"],
            "phase": self._labels(context["kernel_phase"], context["phase_names"]),
        }
        if _pd is None:
            frame.update(extra)
            return frame
        return frame.assign(**extra)

    def _operation_context(self) -> Dict[str, Any]:
        if self._context is None:
            self._context = self._core.operation_context()
        return self._context

    def _labels(self, codes: np.ndarray, names: List[str]):
        """Codes into `names` (-1: none) as a categorical, or an object array without pandas."""
        if _pd is not None:
            return _pd.Categorical.from_codes(codes.astype(np.int64), categories=names)
        table = np.array(list(names) + [None], dtype=object)
        return table[np.where(codes < 0, len(names), codes)]

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
        context = self._operation_context()
        data["step"] = np.concatenate([context["memcpy_step"], context["memset_step"]])
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

    # --- analyses: one method per row of the library's registry (see _install_analyses) --------
    def run(self, analysis: str, *, format: Optional[str] = None, time_unit: Optional[str] = None,
            filter_time: Optional[str] = None, filter_nvtx: Optional[str] = None, **options: Any) -> Any:
        """Runs analysis `analysis` of the registry (the same code path as `kernscope ANALYSIS`).

        Tabular analyses return a DataFrame (a dict of DataFrames named by table when there are
        several); documents (info, analyze, report) return the document as a dict (the values the
        CLI's --format json prints, built from the document itself, not from that text), export what
        it wrote. With format= ("csv", "json", "table", "text", ...) the result is the CLI's text for
        that format, byte for byte."""
        spec = _SPECS.get(analysis)
        if spec is None:
            raise Error(f"unknown analysis '{analysis}' (known: {', '.join(_SPECS)})")
        values = _option_values(spec, options)
        rendered = format is not None  # a format asked for: the CLI's text, as it prints it
        if not rendered:
            values = _all_rows(spec, values)
            # Tables as frames; a document's values as objects, straight from the document (no JSON text).
            # output= writes a document's JSON text to the file (and gives back what was written).
            writes = "output" in values and spec["shape"] != "tables"
            format = "frames" if spec["shape"] == "tables" else ("json" if writes else "object" if "json" in spec["formats"] else "")
        tables, text, messages, summary, document = self._core.run(analysis, values, format, time_unit or "",
                                                                    filter_time or "", filter_nvtx or "")
        for message in messages:
            _log.info("kernscope: %s", message)
        if summary is not None:  # what an analysis that writes a file wrote (export, output=)
            return summary
        if rendered:
            return text
        if format == "frames":
            frames = {t["report"]: self._table_frame(t["columns"]) for t in tables}
            return next(iter(frames.values())) if len(frames) == 1 else frames
        return document

    def _table_frame(self, columns: Dict[str, Any]) -> Frame:
        return columns if _pd is None else _pd.DataFrame(columns)

    @property
    def info(self) -> Dict[str, Any]:
        """`kernscope info --format json` (source, span, devices, counts, processes, threads, NVTX,
        what is missing) plus the reader's notes, metadata and distributed-run details."""
        document = self.run("info")
        extra = self._core.info()
        for key in ("notes", "metadata", "distributed"):
            document[key] = extra[key]
        return document

    def stats(self, report: Union[str, List[str]], **kwargs: Any) -> Any:
        """nsys-compatible report(s) as DataFrames (`kernscope stats`): nsys's rows and values, columns
        in Python's one scheme (snake_case with the unit as a suffix: "Total Time (ns)" is
        total_time_ns). format="csv"/"json"/... gives nsys's text with nsys's headers."""
        return self.run("stats", report=report, **kwargs)

    def export(self, path: str, format: str = "perfetto", **kwargs: Any) -> Dict[str, Any]:
        """Writes a timeline for ui.perfetto.dev / chrome://tracing (.json or .json.gz)."""
        return self.run("export", output=str(path), format=format, **kwargs)

    def __repr__(self) -> str:
        info = self.info
        return f"<kernscope.Trace {info['format']} {info['path']!r}>"


# --- the registry's analyses as Trace methods ------------------------------------------------------
_SPECS: Dict[str, Dict[str, Any]] = {spec["name"]: spec for spec in _core.analyses()}


def analyses() -> List[Dict[str, Any]]:
    """The analyses of the registry: name, summary, options, formats, result shape."""
    return list(_SPECS.values())


def _option_values(spec: Dict[str, Any], options: Dict[str, Any]) -> Dict[str, List[str]]:
    known = {o["name"].replace("-", "_"): o for o in spec["options"]}
    values: Dict[str, List[str]] = {}
    for key, value in options.items():
        option = known.get(key)
        if option is None:
            raise Error(f"{spec['name']}: unknown option '{key}' (known: {', '.join(known) or 'none'})")
        if value is None or value is False:
            continue
        if option["kind"] == "flag":
            values[option["name"]] = []
        elif isinstance(value, (list, tuple)):
            values[option["name"]] = [str(v) for v in value]
        else:
            values[option["name"]] = [str(value)]
    return values


def _all_rows(spec: Dict[str, Any], values: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """Tables and documents hold every row unless limit= is given: the CLI's `--limit` default (20
    rows, for reading on a screen) would otherwise cut a DataFrame silently, so a sum over it would be
    wrong. The CLI's text (format=...) keeps the CLI's default."""
    if any(o["name"] == "limit" for o in spec["options"]) and "limit" not in values:
        return dict(values, limit=["0"])
    return values


def _analysis_method(spec: Dict[str, Any]):
    def method(self: Trace, **kwargs: Any) -> Any:
        return self.run(spec["name"], **kwargs)

    lines = [spec["summary"], "", "Options (keyword arguments):"]
    for o in spec["options"]:
        default = f" [default: {o['default']}]" if o["default"] else ""
        lines.append(f"    {o['name'].replace('-', '_')}: {o['help']}{default}")
    lines.append("    format, time_unit, filter_time, filter_nvtx: as Trace.run")
    method.__name__ = spec["name"].replace("-", "_")
    method.__doc__ = "\n".join(lines)
    return method


def _label_of(item: Any) -> str:
    path = item._core.info()["path"] if isinstance(item, Trace) else str(item)
    name = path.rsplit("/", 1)[-1]
    for ext in (".gz", ".xz", ".sqlite", ".json", ".nsys-rep", ".pt.trace"):
        if name.endswith(ext) and len(name) > len(ext):
            name = name[: -len(ext)]
    return name


def _paths(item: Any) -> List[str]:
    """A path argument as the CLI reads it: a file, or a folder or glob of trace files (sorted)."""
    return _core.expand_trace_arguments([str(item)])


def _trace_group(item: Any) -> List["_core.Trace"]:
    """A trace (path or Trace), or a list of them: several runs of one program. A folder or glob
    stands for the traces in it, as on the command line."""
    items = list(item) if isinstance(item, (list, tuple)) else [item]
    if not items:
        raise Error("an empty group of traces")
    group: List["_core.Trace"] = []
    for i in items:
        group += [i._core] if isinstance(i, Trace) else [_core.open(p) for p in _paths(i)]
    return group


def _multi_result(result: Any, rendered: bool) -> Any:
    """An analysis over several traces, as returned: its text when a format was asked for, else
    every table by name (diff: diff_phases, diff_classes, diff_kernels, diff_kernel_tails,
    diff_nvtx, diff_gates), even when empty."""
    tables, text, messages, _summary, _exit_code = result
    for message in messages:
        _log.info("kernscope: %s", message)
    if rendered:
        return text
    return {t["report"]: (t["columns"] if _pd is None else _pd.DataFrame(t["columns"])) for t in tables}


def _multi_analysis_function(spec: Dict[str, Any]):
    """kernscope.NAME(a, b, ...) for an analysis over several traces (diff, compare). Each argument
    is a path, a Trace, or a list of them (several runs of one side: the gate's noise)."""
    def function(*traces: Any, format: Optional[str] = None, time_unit: Optional[str] = None,
                 filter_time: Optional[str] = None, filter_nvtx: Optional[str] = None, **options: Any) -> Any:
        if not spec["max_traces"]:
            # Any number of traces (ranks, compare): a folder or glob is its traces, one each, as in the CLI.
            traces = tuple(p for t in traces for p in ([t] if isinstance(t, (Trace, list, tuple)) else _paths(t)))
        if len(traces) < spec["min_traces"] or (spec["max_traces"] and len(traces) > spec["max_traces"]):
            raise Error(f"{spec['name']} takes {spec['min_traces']}"
                        f"{'' if spec['max_traces'] == spec['min_traces'] else ' or more'} traces, got {len(traces)}")
        values = _option_values(spec, options)
        rendered = format is not None
        if spec["reads_paths"] and not filter_time and not filter_nvtx and \
                all(not isinstance(t, (Trace, list, tuple)) for t in traces):
            # Paths to an analysis that keeps a digest of each trace (ranks): read in C++ one at a
            # time, each freed once digested, as the CLI reads them, not opened whole here first.
            result = _core.run_paths(spec["name"], [[str(t)] for t in traces],
                                     values if rendered else _all_rows(spec, values),
                                     format if rendered else "frames", time_unit or "")
            return _multi_result(result, rendered)
        groups = [_trace_group(t) for t in traces]
        labels = []
        for t, group in zip(traces, groups):
            items = list(t) if isinstance(t, (list, tuple)) else [t]
            labels.append(_label_of(items[0]) + (f" ({len(group)} runs)" if len(group) > 1 else ""))
        if not rendered:
            values = _all_rows(spec, values)
        return _multi_result(_core.run_groups(
            spec["name"], groups, labels, values, format if rendered else "frames", time_unit or "",
            filter_time or "", filter_nvtx or ""), rendered)

    lines = [spec["summary"], "", "Arguments: the traces (paths, Traces, or lists of them for repeated runs).",
             "Options (keyword arguments):"]
    for o in spec["options"]:
        if o["name"] in spec["trace_group_options"]:
            continue
        default = f" [default: {o['default']}]" if o["default"] else ""
        lines.append(f"    {o['name'].replace('-', '_')}: {o['help']}{default}")
    lines.append("    format, time_unit, filter_time, filter_nvtx: as Trace.run")
    function.__name__ = spec["name"]
    function.__doc__ = "\n".join(lines)
    return function


def _install_analyses() -> None:
    for name, spec in _SPECS.items():
        if spec["max_traces"] != 1:  # over several traces: a module function, kernscope.diff(a, b)
            globals()[name] = _multi_analysis_function(spec)
            __all__.append(name)
        if spec["max_traces"] != 1 and not spec["one_trace_too"]:
            continue
        if not hasattr(Trace, name.replace("-", "_")):  # stats, export and info have hand-written signatures above
            # critical-path is Trace.critical_path: a Python name has no hyphen.
            setattr(Trace, name.replace("-", "_"), _analysis_method(spec))


_install_analyses()
