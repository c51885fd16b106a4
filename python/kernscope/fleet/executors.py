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
    one trace at a time; results as they complete. Safe in a script without a __main__ guard: the
    workers never import the caller's script (worker.py says why)."""
    tasks: "queue.Queue[Optional[int]]" = queue.Queue()
    for i in range(len(paths)):
        tasks.put(i)
    results: "queue.Queue[Dict[str, Any]]" = queue.Queue()

    def feed(process: subprocess.Popen) -> None:
        while True:
            try:
                i = tasks.get_nowait()
            except queue.Empty:
                break
            process.stdin.write(f"{i}\t{paths[i]}\n")
            process.stdin.flush()
            line = process.stdout.readline()
            if not line:  # the worker died (killed, out of memory): this trace failed, the rest go on
                results.put({"trace": i, "path": paths[i], "error": f"digest worker exited ({process.wait()})", "rows": {}})
                return
            results.put(json.loads(line))

    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    processes = [subprocess.Popen([sys.executable, "-m", "kernscope.fleet.worker", out_dir, str(int(bin_ns))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
                 for _ in range(max(1, min(workers, len(paths))))]
    threads = [threading.Thread(target=feed, args=(p,), daemon=True) for p in processes]
    for t in threads:
        t.start()
    try:
        for _ in range(len(paths)):
            yield results.get()
    finally:
        for p in processes:
            if p.stdin:
                p.stdin.close()
        for t in threads:
            t.join()
        for p in processes:
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
