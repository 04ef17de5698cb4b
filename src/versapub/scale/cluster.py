"""Starting or reaching a Dask cluster.

``backend = "dask"`` with no scheduler starts a ``distributed.LocalCluster`` sized to the
machine (one single-threaded worker process per core, the memory shared between them);
``scheduler = "tcp://HOST:8786"`` connects to an existing one.  An address that does not
answer within ``timeout`` seconds is a one-paragraph error.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from versapub.errors import ConfigError
from versapub.scale import require_dask

#: Seconds to wait for a scheduler, and for its first worker.
CONNECT_TIMEOUT = 20.0
#: ``progress(description, completed, total)``.
Progress = Callable[[str, int, int], None]


def machine_workers() -> tuple[int, str]:
    """Workers and memory per worker for a LocalCluster on this machine: one per core,
    the memory split between them (leaving a quarter for the client)."""
    cores = os.cpu_count() or 1
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    per = max(int(total * 0.75 / cores), 1 << 30)
    return cores, f"{per // (1 << 20)}MiB"


def _quiet() -> None:
    """Dask's per-shuffle warnings are not the user's business."""
    for name in ("distributed", "distributed.shuffle", "distributed.shuffle._scheduler_plugin"):
        logging.getLogger(name).setLevel(logging.ERROR)


def local_worker_environ() -> dict[str, Any]:
    """The environment a LocalCluster's workers start with: Dask's, without its
    ``MALLOC_TRIM_THRESHOLD_``. Any fixed glibc malloc threshold makes numpy's lookups over
    a partition's codes (``np.take`` of a query's table: the workload, the checks) 2-3x
    slower (measured: 2.7 vs 0.95 ms per 10^6 codes); without it a worker keeps freed
    memory a little longer, which the benchmark's per-worker peaks include."""
    import dask

    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    return env


@contextmanager
def connect(
    scheduler: str | None = None,
    workers: int | None = None,
    memory_limit: str | None = None,
    timeout: float | None = None,
) -> Iterator[Any]:
    """A ``distributed.Client``: to ``scheduler`` (an address), else to a LocalCluster of
    ``workers`` single-threaded processes with ``memory_limit`` each (default: the
    machine's cores and memory); closed afterwards."""
    require_dask()
    import dask
    from distributed import Client, LocalCluster

    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    _quiet()
    if scheduler:
        try:
            client = Client(scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as exc:
            raise ConfigError(
                f"No Dask scheduler answers at {scheduler!r} within {timeout:g} s ({type(exc).__name__}). Start one "
                "(dask scheduler; dask worker ADDRESS on every machine), check the address and port, or leave out "
                "--scheduler to run a local cluster on this machine."
            ) from None
        try:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError):
                raise ConfigError(
                    f"The Dask scheduler at {scheduler!r} has no worker (none joined within {timeout:g} s): start "
                    f"workers with 'dask worker {scheduler}' on machines that see the input and the scratch "
                    "directory, then run again."
                ) from None
            yield client
        finally:
            client.close()
        return
    n, mem = machine_workers()
    with dask.config.set({"distributed.nanny.pre-spawn-environ": local_worker_environ()}):
        cluster = LocalCluster(
            n_workers=workers or n,
            threads_per_worker=1,
            memory_limit=memory_limit or mem,
            processes=True,
            dashboard_address=":0",
        )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


class WorkerLost(OSError):
    """A worker left the cluster while the client sent it data (a failure of the cluster,
    like a lost task: the run stops, nothing is written)."""


def _silent(description: str, done: int, total: int) -> None:
    """No progress."""


@dataclass(frozen=True)
class Runner:
    """A client and where its progress goes: runs lists of Dask tasks, reporting each
    finished task (``progress(label, finished, total)``: the CLI's bar with percentages)."""

    client: Any
    progress: Progress = _silent

    def run(self, tasks: Sequence[Any], label: str) -> list[Any]:
        """Every task's result, in order (tasks are ``dask.delayed`` objects)."""
        from distributed import as_completed

        futures = self.client.compute(list(tasks))
        total = len(futures)
        self.progress(label, 0, total)
        for done, _ in enumerate(as_completed(futures), start=1):
            self.progress(label, done, total)
        return list(self.client.gather(futures))

    def share(self, value: Any) -> Any:
        """``value`` sent once to every worker (a future that tasks take) instead of copied
        into every task of the graph.  A worker lost meanwhile is the cluster's failure
        (:class:`WorkerLost`), as a task's would be."""
        try:
            return self.client.scatter([value], broadcast=True)[0]
        except KeyError as exc:  # distributed names the worker it lost by its address
            raise WorkerLost(f"worker {exc} left while data was sent to every worker") from exc

    @property
    def n_workers(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))


def cluster_failure(exc: BaseException) -> bool:
    """An error of the cluster (not of versapub's own code): Dask's and distributed's
    errors (a killed worker, a lost or cancelled task), and the connection's."""
    import concurrent.futures

    mod = type(exc).__module__ or ""
    return mod.split(".")[0] in ("dask", "distributed") or isinstance(
        exc, OSError | TimeoutError | concurrent.futures.CancelledError
    )
