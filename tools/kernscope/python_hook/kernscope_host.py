# The host side of a traced Python program: each garbage collection and, with `kernscope record
# --sample cpu[:HZ]`, the Python stacks of every thread sampled on a timer, written into the trace
# file beside the tracer's CUDA records. Standard library only: `record` puts this file beside its
# sitecustomize, in programs that may not have kernscope installed. Nothing here needs CUDA.
#
# What lands in the trace (docs/interfaces.md, "Host side"):
#   - a collection: an NVTX push/pop range in domain "python" named "gc gen<G>" (category G), on the
#     thread that collected, and a mark in the same domain at its end, "gc gen<G>: <C> collected,
#     <U> uncollectable" (NVTX text is fixed when a range opens, before the counts are known);
#   - a stack sample: one COMPOSITE_EVENTS row (time, thread) and its frames in SAMPLING_CALLCHAINS
#     (stackDepth 0 the innermost frame; symbol the function's qualified name, module its file), the
#     tables Nsight Systems writes for --sample=cpu;
#   - KERNSCOPE_HOST_INFO (name, value): the sampler's rate asked and achieved, its cost, and what
#     is not measured (GIL waits; native frames: the sampler reads Python frames only).
# Times are CLOCK_REALTIME nanoseconds (time.time_ns), the clock of CUPTI's timestamps.
import array
import atexit
import ctypes
import gc
import os
import random
import socket
import sqlite3
import sys
import threading
import time

_DOMAIN = "python"
_GC_NAMES = ("gc gen0", "gc gen1", "gc gen2")  # made once: the callback allocates no names
_MAX_GC_EVENTS = 1_000_000                       # beyond this, collections are counted, not kept
_MAX_SAMPLES = 2_000_000                         # thread-samples kept (about 100 Hz x 5 h)
_MAX_SAMPLER_SHARE = 0.05                        # the sampler may hold the GIL this share of the time
_GIL_NOTE = ("not measured: CPython 3.10-3.13 have no public hook or counter for a thread's wait for the GIL, and a "
             "sampler written in Python runs only while it holds the GIL itself, so it never sees another thread "
             "holding it; nsys -t python-gil records the waits (out-of-process tools put uprobes on take_gil/drop_gil)")
# What --sample cpu can unwind (KERNSCOPE_HOST_INFO native_frames; docs/interfaces.md).
_NATIVE_NOTE = ("Python frames only (sys._current_frames: function and file, no line): native frames (CPython's C, "
                "extensions such as PyTorch's dispatcher and ATen, the CUDA runtime and driver) are not unwound, so time "
                "in a C call is charged to the Python frame that made it; a tick waits for the GIL, which a thread running "
                "Python yields within the switch interval (5 ms) and a C call holding it only when it returns; threads "
                "that never ran Python are not sampled; nsys --sample=cpu records native frames (kernscope samples native "
                "frames only in programs that are not Python)")


class GcRecorder:
    """Collections as (start_ns, end_ns, tid, generation, collected, uncollectable) through gc.callbacks.

    `nvtx`, when given, is an object with push(name, domain), pop(domain) and, optionally,
    mark(text, domain): the collection is then also an NVTX range (for nsys, or kernscope's tracer
    through NVTX) as it happens."""

    def __init__(self, nvtx=None):
        self.events = []
        self.dropped = 0
        self._nvtx = nvtx
        self._start = 0

    def install(self):
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def remove(self):
        try:
            gc.callbacks.remove(self._callback)
        except ValueError:
            pass

    def _callback(self, phase, info):
        generation = info.get("generation", 0)
        if phase == "start":
            self._start = time.time_ns()
            if self._nvtx is not None:
                self._nvtx.push(_GC_NAMES[generation] if 0 <= generation < 3 else "gc gen%d" % generation, _DOMAIN)
            return
        end = time.time_ns()
        collected = info.get("collected", 0)
        uncollectable = info.get("uncollectable", 0)
        if self._nvtx is not None:
            mark = getattr(self._nvtx, "mark", None)
            if mark is not None:
                mark(gc_mark_text(generation, collected, uncollectable), _DOMAIN)
            self._nvtx.pop(_DOMAIN)
        if len(self.events) < _MAX_GC_EVENTS:
            self.events.append((self._start, end, threading.get_native_id(), generation, collected, uncollectable))
        else:
            self.dropped += 1


def gc_mark_text(generation, collected, uncollectable):
    return "gc gen%d: %d collected, %d uncollectable" % (generation, collected, uncollectable)


# How long the program's exit waits for the sampler thread to let go of the frames it holds.
_STOP_WAIT_S = 60


class StackSampler:
    """A daemon thread that takes every other thread's Python stack (sys._current_frames) `hz` times
    a second. Each sample holds the GIL while it walks the frames: when that takes more than
    _MAX_SAMPLER_SHARE of the time, the rate is halved (and the trace says so)."""

    def __init__(self, hz):
        self.hz_asked = float(hz)
        self.period = 1.0 / float(hz)
        # Arrays, not lists of tuples: they hold no objects the garbage collector tracks, so the
        # samples never make the program's collections more frequent or longer.
        self.times = array.array("q")          # per sample round: time_ns
        self.sample_round = array.array("q")   # per thread-sample: its round,
        self.sample_tid = array.array("q")     # the native thread id,
        self.sample_stack = array.array("q")   # and the stack id
        self.stacks = {}      # tuple of code ids (innermost first) -> stack id
        self.codes = {}       # code id -> code object (kept alive so ids stay unique)
        self.native = {}      # threading ident -> native thread id
        self.names = {}       # native thread id -> name
        self.busy_ns = 0      # time spent sampling (GIL held)
        self.lowered = []     # (from_hz, to_hz)
        self.full = False
        self._stop = threading.Event()
        self._thread = None
        self.started_ns = self.stopped_ns = 0

    def start(self):
        self.started_ns = time.time_ns()
        self._thread = threading.Thread(target=self._run, name="kernscope-sampler", daemon=True)
        self._thread.start()

    def stop(self):
        if self._thread is None:
            return
        self._stop.set()
        if self._thread is not threading.current_thread():
            # Wait for the thread to end, not a second: a sample holds the frames it took, and a
            # frame that returned meanwhile keeps its locals alive, a file the program left open
            # (`json.dump(x, open(p, "w"))`) among them. If the interpreter finalized with the
            # sampler still inside a sample (starved of CPU for over a second on a loaded machine),
            # that file was never flushed: the program's last write was lost. The sampler only
            # waits on _stop, so it ends as soon as it runs; the cap is for a thread that cannot.
            self._thread.join(timeout=_STOP_WAIT_S)
            if self._thread.is_alive():
                sys.stderr.write("kernscope host: the sampler did not stop within %d s; files the program left "
                                 "open may not be flushed\n" % _STOP_WAIT_S)
        self.stopped_ns = time.time_ns()
        self._thread = None

    def _thread_ids(self):
        for t in threading.enumerate():
            if t.ident is not None and t.native_id is not None:
                self.native[t.ident] = t.native_id
                self.names[t.native_id] = t.name

    def _run(self):
        own = threading.get_ident()
        window_start = time.perf_counter()
        window_busy = 0.0
        next_time = time.perf_counter()
        # Each interval is the period times a uniform draw in [0.5, 1.5): the same rate on average,
        # but no phase lock with a loop whose period is a multiple of the sampling period (the native
        # sampler's test program, a 60 ms loop at 100 Hz, read 67 % for a 60 % function without it).
        jitter = random.Random()
        while not self._stop.is_set():
            next_time += self.period * jitter.uniform(0.5, 1.5)
            delay = next_time - time.perf_counter()
            if delay > 0:
                if self._stop.wait(delay):
                    break
            else:
                next_time = time.perf_counter()  # behind (the GIL was busy): do not catch up in a burst
            began = time.perf_counter()
            self._sample(own)
            spent = time.perf_counter() - began
            self.busy_ns += int(spent * 1e9)
            window_busy += spent
            if began - window_start >= 1.0:
                if window_busy / (began - window_start) > _MAX_SAMPLER_SHARE:
                    old = 1.0 / self.period
                    self.period *= 2.0
                    self.lowered.append((old, 1.0 / self.period))
                window_start, window_busy = began, 0.0
            if self.full:
                break

    def _sample(self, own):
        frames = sys._current_frames()
        now = time.time_ns()
        round_index = len(self.times)
        self.times.append(now)
        for ident, frame in frames.items():
            if ident == own:
                continue
            tid = self.native.get(ident)
            if tid is None:
                self._thread_ids()
                tid = self.native.get(ident)
                if tid is None:  # a thread started outside threading: its ident stands in
                    tid = ident & 0xFFFFFF
                    self.native[ident] = tid
            codes = []
            while frame is not None:
                code = frame.f_code
                key = id(code)
                if key not in self.codes:
                    self.codes[key] = code
                codes.append(key)
                frame = frame.f_back
            stack = tuple(codes)
            stack_id = self.stacks.get(stack)
            if stack_id is None:
                stack_id = self.stacks[stack] = len(self.stacks)
            self.sample_round.append(round_index)
            self.sample_tid.append(tid)
            self.sample_stack.append(stack_id)
        if len(self.sample_round) >= _MAX_SAMPLES:
            self.full = True

    def info(self):
        wall_ns = max(1, (self.stopped_ns or time.time_ns()) - self.started_ns)
        rounds = len(self.times)
        rows = [("sampler_hz_asked", "%g" % self.hz_asked),
                ("sampler_hz_achieved", "%.1f" % (rounds * 1e9 / wall_ns)),
                ("sampler_rounds", str(rounds)),
                ("sampler_busy_ns", str(self.busy_ns)),
                ("sampler_busy_share", "%.5f" % (self.busy_ns / wall_ns))]
        for old, new in self.lowered:
            rows.append(("sampler_lowered", "%g Hz -> %g Hz: sampling held the GIL over %d %% of the time"
                         % (old, new, int(_MAX_SAMPLER_SHARE * 100))))
        if self.full:
            rows.append(("sampler_stopped", "after %d thread-samples (the limit kept in memory)" % _MAX_SAMPLES))
        return rows


# A sampler waiting for the GIL during a collection gets it when the collection's callback, this
# hook's Python code, runs: those samples stand for the collection and are named for it.
_GC_FRAME = "[Python garbage collection]"


def code_symbol(code):
    if code is GcRecorder._callback.__code__:
        return _GC_FRAME
    return getattr(code, "co_qualname", None) or code.co_name


def code_module(code):
    return "" if code is GcRecorder._callback.__code__ else code.co_filename


def expand_output_path(pattern, pid, host, sequence):
    """The tracer's expansion of -o patterns (tracer_config.cpp): %p %h %n %% and %q{VAR}."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c != "%" or i + 1 == len(pattern):
            out.append(c)
            i += 1
            continue
        d = pattern[i + 1]
        i += 2
        if d == "p":
            out.append(str(pid))
        elif d == "h":
            out.append(host)
        elif d == "n":
            out.append(str(sequence))
        elif d == "%":
            out.append("%")
        elif d == "q" and i < len(pattern) and pattern[i] == "{":
            close = pattern.find("}", i + 1)
            if close < 0:
                out.append("%q")
                continue
            out.append(os.environ.get(pattern[i + 1:close], ""))
            i = close + 1
        else:
            out.append("%" + d)
    return "".join(out)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
  textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL,
  uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE IF NOT EXISTS ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE IF NOT EXISTS PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE IF NOT EXISTS META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE IF NOT EXISTS COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL,
  cpu INTEGER, threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL,
  module INTEGER NOT NULL, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER,
  originalIP INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
CREATE TABLE IF NOT EXISTS KERNSCOPE_HOST_INFO (name TEXT NOT NULL, value TEXT);
"""


def write_host_tables(path, pid, gc_recorder, sampler, extra_info=()):
    """Appends the host records to the trace at `path` (created with the tables it needs when the
    tracer wrote nothing there), in one transaction."""
    db = sqlite3.connect(path, timeout=10)
    try:
        db.executescript(_SCHEMA)
        created = db.execute("SELECT count(*) FROM PROCESSES").fetchone()[0] == 0
        global_pid = pid << 24
        next_string = (db.execute("SELECT max(id) FROM StringIds").fetchone()[0] or 0) + 1
        strings = {}

        def string_id(value):
            nonlocal next_string
            sid = strings.get(value)
            if sid is None:
                sid = strings[value] = next_string
                next_string += 1
            return sid

        with db:
            if created:
                name = os.path.basename(sys.executable or "python")
                db.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (global_pid, pid, name))
                db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', 'kernscope host hook')")
            events = gc_recorder.events if gc_recorder is not None else []
            if events:
                row = db.execute("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = ?", (_DOMAIN,)).fetchone()
                if row:
                    domain = row[0]
                else:
                    domain = (db.execute("SELECT max(domainId) FROM NVTX_EVENTS").fetchone()[0] or 0) + 1
                    db.execute("INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (?, 75, ?, ?, ?)",
                               (events[0][0], _DOMAIN, global_pid | events[0][2], domain))
                rows = []
                for start, end, tid, generation, collected, uncollectable in events:
                    gtid = global_pid | (tid & 0xFFFFFF)
                    name = _GC_NAMES[generation] if 0 <= generation < 3 else "gc gen%d" % generation
                    rows.append((start, end, 59, generation, name, gtid, domain))
                    rows.append((end, None, 34, generation, gc_mark_text(generation, collected, uncollectable), gtid, domain))
                db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, domainId) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            info = list(extra_info)
            if gc_recorder is not None:
                info.append(("gc_collections", str(len(events) + gc_recorder.dropped)))
                if gc_recorder.dropped:
                    info.append(("gc_dropped", str(gc_recorder.dropped)))
            if sampler is not None:
                first = (db.execute("SELECT max(id) FROM COMPOSITE_EVENTS").fetchone()[0] or 0) + 1
                frames_of = {}
                for stack, stack_id in sampler.stacks.items():
                    frames_of[stack_id] = [(string_id(code_symbol(sampler.codes[c])),
                                            string_id(code_module(sampler.codes[c]))) for c in stack]
                events_rows = []
                chain_rows = []
                for n, (round_index, tid, stack_id) in enumerate(
                        zip(sampler.sample_round, sampler.sample_tid, sampler.sample_stack)):
                    sample_id = first + n
                    events_rows.append((sample_id, sampler.times[round_index], global_pid | (tid & 0xFFFFFF)))
                    for depth, (symbol, module) in enumerate(frames_of[stack_id]):
                        chain_rows.append((sample_id, symbol, module, depth))
                db.executemany("INSERT INTO COMPOSITE_EVENTS (id, start, globalTid, cpuCycles) VALUES (?, ?, ?, 0)", events_rows)
                db.executemany("INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, unresolved, stackDepth) "
                               "VALUES (?, ?, ?, 0, ?)", chain_rows)
                known = {r[0] for r in db.execute("SELECT globalTid FROM ThreadNames")}
                sampled = set(sampler.sample_tid)
                names = [(string_id(name), global_pid | (tid & 0xFFFFFF)) for tid, name in sampler.names.items()
                         if tid in sampled and (global_pid | (tid & 0xFFFFFF)) not in known]
                db.executemany("INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, 0, ?)", names)
                info.extend(sampler.info())
                info.append(("native_frames", _NATIVE_NOTE))
            info.append(("gil_wait", _GIL_NOTE))
            db.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)", [(i, v) for v, i in strings.items()])
            db.executemany("INSERT INTO KERNSCOPE_HOST_INFO (name, value) VALUES (?, ?)", info)
        return created
    finally:
        db.close()


def parse_sample_option(text):
    """KERNSCOPE_SAMPLE: "" or "none" -> 0; "cpu" -> 100; "cpu:HZ" -> HZ (1..1000)."""
    text = (text or "").strip()
    if text in ("", "none"):
        return 0
    kind, _, rate = text.partition(":")
    if kind != "cpu":
        raise ValueError("KERNSCOPE_SAMPLE: '%s' is not cpu[:HZ]" % text)
    hz = float(rate) if rate else 100.0
    if not 1.0 <= hz <= 1000.0:
        raise ValueError("KERNSCOPE_SAMPLE: %g Hz is outside 1..1000" % hz)
    return hz


class HostRecording:
    """What the sitecustomize hook runs under `kernscope record`: collections always (unless
    KERNSCOPE_PYTHON_GC=0), stacks with KERNSCOPE_SAMPLE=cpu[:HZ]; written when the program ends."""

    def __init__(self, environ):
        self.environ = environ
        self.pid = os.getpid()
        self.gc = None if environ.get("KERNSCOPE_PYTHON_GC", "1") == "0" else GcRecorder()
        hz = parse_sample_option(environ.get("KERNSCOPE_SAMPLE", ""))
        self.sampler = StackSampler(hz) if hz > 0 else None
        self.done = False

    def start(self):
        if self.gc is not None:
            self.gc.install()
        if self.sampler is not None:
            self.sampler.start()
        os.register_at_fork(after_in_child=self._forked)
        atexit.register(self.finish)

    def _forked(self):
        # A child forked without exec has a copy of these records but not the sampler thread, and
        # is not traced (as the CUDA tracer): it writes nothing.
        self.done = True
        if self.gc is not None:
            self.gc.remove()

    def finish(self):
        if self.done:
            return
        self.done = True
        if self.gc is not None:
            self.gc.remove()
        if self.sampler is not None:
            self.sampler.stop()
        tracer_started = _finish_tracer(self.environ.get("KERNSCOPE_TRACER_PATH", ""))
        path = self._trace_path()
        if path is None:
            return
        if self.sampler is None and not (os.path.exists(path) and _written_by(path, self.pid)):
            # Collections alone, with no CUDA trace of this process to put them beside (a process that
            # never used the GPU: torch.compile's workers, a tokenizer pool): no file, as the tracer
            # writes none. With --sample the stacks are the point, so CPU-only processes keep theirs.
            return
        if not tracer_started and os.path.exists(path) and not _written_by(path, self.pid):
            # Another process's trace (a parent, when -o has no %p) or an earlier run's: never touched.
            root, ext = os.path.splitext(path)
            path = "%s.host-%d%s" % (root, self.pid, ext or ".sqlite")
            if os.path.exists(path):
                os.remove(path)  # this name is this pid's: an earlier run's leftover
        try:
            created = write_host_tables(path, self.pid, self.gc, self.sampler)
        except (sqlite3.Error, OSError) as exc:
            sys.stderr.write("kernscope host: cannot write %s: %s\n" % (path, exc))
            return
        if created:  # the tracer wrote no file for this process: `record` lists this one
            listing = self.environ.get("KERNSCOPE_FILE_LIST", "")
            if listing:
                with open(listing, "a") as f:
                    f.write(path + "\n")

    def _trace_path(self):
        """The tracer's file for this process (same pattern, same expansion), else a new one."""
        pattern = self.environ.get("KERNSCOPE_OUTPUT", "")
        if not pattern:
            return None
        host = socket.gethostname()
        if "%n" not in pattern:
            return expand_output_path(pattern, self.pid, host, 1)
        for n in range(1, 100001):
            candidate = expand_output_path(pattern, self.pid, host, n)
            if not os.path.exists(candidate):
                return candidate
            if _written_by(candidate, self.pid):
                return candidate
        return None


def _written_by(path, pid):
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        try:
            return db.execute("SELECT count(*) FROM PROCESSES WHERE pid = ?", (pid,)).fetchone()[0] > 0
        finally:
            db.close()
    except sqlite3.Error:
        return False


def _finish_tracer(library):
    """Lets the CUDA tracer, when it runs in this process, finish its file first (so the host rows
    are added to a complete file, with nobody else writing). True when it was running."""
    if not library:
        return False
    try:
        tracer = ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    except OSError:
        return False  # never loaded: the program did not start CUDA
    try:
        tracer.kernscope_tracer_finish()
    except AttributeError:
        return False
    return True
