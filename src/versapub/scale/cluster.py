"""Starting or reaching a Dask cluster.

``backend = "dask"`` with no scheduler starts a ``distributed.LocalCluster`` sized to the
machine (one single-threaded worker process per core, the memory shared between them);
``scheduler = "tcp://HOST:8786"`` connects to an existing one.  An address that does not
answer within ``timeout`` seconds is a one-paragraph error.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from versapub.errors import ConfigError
from versapub.scale import require_dask

#: Seconds to wait for a scheduler.
CONNECT_TIMEOUT = 20.0


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


@contextmanager
def connect(scheduler: str | None = None, workers: int | None = None, memory_limit: str | None = None,
            timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:  # fmt: skip
    """A ``distributed.Client``: to ``scheduler`` (an address), else to a LocalCluster of
    ``workers`` single-threaded processes with ``memory_limit`` each (default: the
    machine's cores and memory); closed afterwards."""
    require_dask()
    from distributed import Client, LocalCluster

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
            yield client
        finally:
            client.close()
        return
    n, mem = machine_workers()
    cluster = LocalCluster(n_workers=workers or n, threads_per_worker=1, memory_limit=memory_limit or mem,
                           processes=True, dashboard_address=None)  # fmt: skip
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
