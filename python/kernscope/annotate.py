"""Annotations for PyTorch (or any Python) code: NVTX ranges, and profiling chosen iterations.

    from kernscope import annotate

    @annotate.range("decode_step")
    def step(): ...

    with annotate.range("prefill", domain="engine"):
        ...

    steps = annotate.steps(10, 20)          # profile iterations 10..20 (inclusive)
    for i in steps(range(100)):             # cudaProfilerStart before 10, Stop after 20
        ...

`kernscope record --capture-range=cudaProfilerApi` and `nsys profile --capture-range=cudaProfilerApi`
then record only those iterations. KERNSCOPE_PROFILE_START_STOP=A-B[,C-D] overrides the iterations.

    collections = annotate.gc_ranges()      # each garbage collection as an NVTX range "gc gen<G>"
                                            # in domain "python" (for nsys or kernscope record)
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import Callable, Iterable, Iterator, List, Optional, Tuple, TypeVar

from . import _core

T = TypeVar("T")


class range:  # noqa: N801 - reads like the NVTX call it wraps
    """An NVTX push/pop range: a context manager and a decorator."""

    def __init__(self, name: str, domain: Optional[str] = None):
        self.name = name
        self.domain = domain

    def __enter__(self) -> "range":
        _core.nvtx_push(self.name, self.domain)
        return self

    def __exit__(self, *exc) -> None:
        _core.nvtx_pop(self.domain)

    def __call__(self, function: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            with self:
                return function(*args, **kwargs)

        return wrapped


def parse_iterations(text: str) -> List[Tuple[int, int]]:
    """"A-B[,C-D]" (or "A") -> [(A, B), (C, D)]; inclusive iteration numbers."""
    spans: List[Tuple[int, int]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            a, b = int(first), int(last or first)
        except ValueError as exc:
            raise ValueError(f"KERNSCOPE_PROFILE_START_STOP: '{part}' is not A-B") from exc
        if a < 0 or b < a:
            raise ValueError(f"KERNSCOPE_PROFILE_START_STOP: '{part}' is not an increasing range")
        spans.append((a, b))
    return spans


class _ProfilerApi:
    """cudaProfilerStart/Stop through the driver (cuProfilerStart/Stop in libcuda), which every CUDA
    program has loaded; torch's wrappers when torch is imported."""

    def __init__(self):
        self._start = self._stop = None

    def _load(self) -> None:
        if self._start is not None:
            return
        try:
            import torch  # noqa: F401

            if torch.cuda.is_available():
                self._start, self._stop = torch.cuda.profiler.start, torch.cuda.profiler.stop
                return
        except ImportError:
            pass
        name = ctypes.util.find_library("cuda") or "libcuda.so.1"
        try:
            cuda = ctypes.CDLL(name)
            self._start, self._stop = cuda.cuProfilerStart, cuda.cuProfilerStop
        except OSError:
            self._start = self._stop = lambda: None  # no driver: nothing to start, nothing to record

    def start(self) -> None:
        self._load()
        self._start()

    def stop(self) -> None:
        self._load()
        self._stop()


class steps:  # noqa: N801
    """Starts the CUDA profiler before iteration `start` and stops it after `stop` (inclusive).

    Call `step()` at the top of each iteration, or wrap the loop's iterable: `for x in s(items)`.
    """

    def __init__(self, start: int, stop: int, profiler: Optional[object] = None):
        spans = [(start, stop)]
        env = os.environ.get("KERNSCOPE_PROFILE_START_STOP")
        if env:
            spans = parse_iterations(env)
        self.spans = spans
        self.iteration = -1
        self.active = False
        self._profiler = profiler or _ProfilerApi()

    def step(self) -> int:
        """Marks the start of the next iteration; returns its number."""
        self.iteration += 1
        i = self.iteration
        if self.active and not any(a <= i <= b for a, b in self.spans):
            self._profiler.stop()
            self.active = False
        if not self.active and any(a <= i <= b for a, b in self.spans):
            self._profiler.start()
            self.active = True
        return i

    def close(self) -> None:
        """Stops the profiler if a span is still open (the loop ended inside it)."""
        if self.active:
            self._profiler.stop()
            self.active = False

    def __call__(self, iterable: Iterable[T]) -> Iterator[T]:
        try:
            for item in iterable:
                self.step()
                yield item
        finally:
            self.close()


class _CoreNvtx:
    """NVTX through the extension (no marks: a collection's counts stay in GcRecorder.events)."""

    @staticmethod
    def push(name: str, domain: str) -> None:
        _core.nvtx_push(name, domain)

    @staticmethod
    def pop(domain: str) -> None:
        _core.nvtx_pop(domain)


def _host_module():
    """The recorder `kernscope record` injects (installed as kernscope/_host.py; the source tree's
    tools/kernscope/python_hook/kernscope_host.py when running from a checkout)."""
    try:
        from . import _host  # type: ignore[attr-defined]

        return _host
    except ImportError:
        import importlib.util

        source = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "kernscope", "python_hook", "kernscope_host.py")
        spec = importlib.util.spec_from_file_location("kernscope._host", source)
        if spec is None or not os.path.isfile(source):
            raise
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def gc_ranges(nvtx: Optional[object] = None):
    """Makes each garbage collection an NVTX push/pop range "gc gen<G>" in domain "python" on the
    collecting thread (what `kernscope record` records by itself), so nsys or kernscope's tracer
    see it as it happens. Returns the recorder: .events holds (start_ns, end_ns, native tid,
    generation, collected, uncollectable) per collection; .remove() stops it. `nvtx` replaces the
    NVTX calls (an object with push(name, domain) and pop(domain), and optionally mark(text, domain))."""
    recorder = _host_module().GcRecorder(nvtx if nvtx is not None else _CoreNvtx())
    recorder.install()
    return recorder
