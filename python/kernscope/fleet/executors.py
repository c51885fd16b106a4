"""Where the per-trace digests run: a local process pool (the default) or a Dask cluster.

Both call digest.digest_one for each trace and yield its result as it completes. Dask: a scheduler
address (tcp://host:8786) runs the work on that cluster (every worker must see the traces and the
output folder at the same paths, e.g. a shared file system); "local" starts a
distributed.LocalCluster of `workers` processes on this machine.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Dict, Iterator, List, Optional

from .digest import digest_one


def run_local(paths: List[str], out_dir: str, bin_ns: int, workers: int) -> Iterator[Dict[str, Any]]:
    # spawn: the parent may hold threads (DuckDB, Dask) that a fork would copy mid-state.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=context) as pool:
        futures = [pool.submit(digest_one, i, p, out_dir, bin_ns) for i, p in enumerate(paths)]
        for future in as_completed(futures):
            yield future.result()


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
