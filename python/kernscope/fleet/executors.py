"""Where the per-trace digests run: a local process pool (the default) or a Dask cluster.

Both call digest.digest_one for each trace and yield its result as it completes. Dask: a scheduler
address (tcp://host:8786) runs the work on that cluster (every worker must see the traces and the
output folder at the same paths, e.g. a shared file system); "local" starts a
distributed.LocalCluster of `workers` processes on this machine.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any, Dict, Iterator, List, Optional

from .digest import digest_one


def run_local(paths: List[str], out_dir: str, bin_ns: int, workers: int) -> Iterator[Dict[str, Any]]:
    """`workers` worker processes (kernscope.fleet.worker, started with this interpreter), each fed
    one trace at a time; results as they complete, exactly one per trace. Safe in a script without a
    __main__ guard: the workers never import the caller's script (worker.py says why). A worker that
    dies (killed, out of memory) fails the trace it held and is started again for the rest."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out_dir = os.path.abspath(out_dir)

    def start() -> subprocess.Popen:
        # Run from the package's own folder: `python -m` puts the working folder first on sys.path,
        # where a folder named kernscope would shadow the package.
        return subprocess.Popen([sys.executable, "-m", "kernscope.fleet.worker", out_dir, str(int(bin_ns))],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
                                cwd=package_root, env=env)

    tasks: "queue.Queue[int]" = queue.Queue()
    for i in range(len(paths)):
        tasks.put(i)
    results: "queue.Queue[Dict[str, Any]]" = queue.Queue()
    live: List[subprocess.Popen] = []

    def failed(i: int, why: str) -> Dict[str, Any]:
        return {"trace": i, "path": paths[i], "error": why, "rows": {}}

    def feed() -> None:
        process = start()
        live.append(process)
        while True:
            try:
                i = tasks.get_nowait()
            except queue.Empty:
                break
            try:
                process.stdin.write(json.dumps([i, os.path.abspath(paths[i])]) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
                result = json.loads(line) if line else None
            except (OSError, ValueError) as e:  # a broken pipe, a line that is not a result
                result, line = None, ""
                why = f"digest worker failed ({type(e).__name__}: {e})"
            else:
                why = ""
            if result is not None:
                results.put(result)
                continue
            # The worker is gone (or spoke nonsense): this trace failed; a new worker takes the rest.
            try:
                process.kill()
            except OSError:
                pass
            code = process.wait()
            results.put(failed(i, why or f"digest worker exited ({code})"))
            process = start()
            live.append(process)

    threads = [threading.Thread(target=feed, daemon=True) for _ in range(max(1, min(workers, len(paths))))]
    for t in threads:
        t.start()
    try:
        for _ in range(len(paths)):
            yield results.get()
    finally:
        for t in threads:
            t.join()
        for p in live:
            if p.stdin:
                p.stdin.close()
        for p in live:
            p.wait()


def run_dask(paths: List[str], out_dir: str, bin_ns: int, workers: int,
             scheduler: Optional[str]) -> Iterator[Dict[str, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed as dask_completed
    except ImportError as e:  # pragma: no cover - the package's fleet extra installs it
        raise RuntimeError("--executor dask needs the 'distributed' package (pip install 'kernscope[fleet]')") from e
    cluster = None
    if not scheduler or scheduler == "local":
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = client.map(digest_one, list(range(len(paths))), paths, [out_dir] * len(paths),
                             [bin_ns] * len(paths), pure=False)
        for future in dask_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run(executor: str, paths: List[str], out_dir: str, bin_ns: int, workers: int,
        scheduler: Optional[str] = None) -> Iterator[Dict[str, Any]]:
    if executor == "local":
        return run_local(paths, out_dir, bin_ns, workers)
    if executor == "dask":
        return run_dask(paths, out_dir, bin_ns, workers, scheduler)
    raise ValueError(f"unknown executor '{executor}' (local or dask)")
