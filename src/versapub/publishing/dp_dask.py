"""Differential privacy on the Dask backend (issue 67): the records of a file too large for
memory stay on the cluster; what comes to this process is the exact counts of the marginals
the mechanism declares it reads (``marginals_read``: the workload, MST's columns and pairs,
AIM's candidates), counted in one pass over the records
(:func:`versapub.scale.marginals.count_marginals`) and handed to the mechanism as a
:class:`~versapub.mechanisms.precounted.Precounted` — the same counts as over the records,
so the noise, the ledger and the fit are the in-memory path's; the fit runs on the small
domain in this process.

Nothing read here is published: the counts are exact, like the in-memory records, and only
their noisy marginals leave."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from versapub.errors import ClusterError, VersapubError
from versapub.mechanisms.precounted import Precounted

Progress = Callable[[str, int, int], None]
#: What the job counts, from the table read on the cluster: the declared domains and the
#: marginals the mechanism reads.
Plan = Callable[[Any], tuple[Mapping[str, Sequence[str]], Sequence[tuple[str, ...]]]]


@dataclass(frozen=True)
class DaskInput:
    """The counted input, the columns removed first, and how it was read (the manifest's
    ``backend`` block)."""

    counts: Precounted
    removed: tuple[str, ...]
    backend: dict[str, Any]


def counted_on_dask(cfg: Any, dest: Path, identifying: Sequence[str], plan: Plan, progress: Progress) -> DaskInput:
    """Read ``cfg.input`` on a Dask cluster (``cfg.scheduler``, else a LocalCluster), drop
    the ``identifying`` columns (as in memory) and count the marginals ``plan`` names over
    its domains; the cluster and its scratch directory are gone when this returns."""
    from versapub.io import workdirs
    from versapub.scale import require_dask
    from versapub.scale.cluster import Runner, cluster_failure, connect
    from versapub.scale.marginals import count_marginals
    from versapub.scale.read import read_dask

    require_dask()
    scratch = workdirs.dask_scratch(dest, cfg.scratch)
    progress("starting the Dask cluster" if not cfg.scheduler else f"connecting to {cfg.scheduler}", 0, 0)
    with connect(cfg.scheduler, cfg.workers, cfg.worker_memory) as client:
        runner = Runner(client, progress)
        try:
            workdirs.claim(scratch)
            table = read_dask(cfg.input, runner, scratch, cfg.read_options())
            removed = tuple(a for a in table.names if a in set(identifying))
            table = table.select([a for a in table.names if a not in removed])
            domains, marginals = plan(table)
            counts = count_marginals(table, marginals, domains)
            precounted = Precounted(
                tuple(table.names),
                {a: tuple(str(v) for v in domains[a]) for a in table.names},
                counts,
                str(cfg.input),
            )
            backend = {
                "name": "dask",
                "scheduler": cfg.scheduler or "LocalCluster",
                "workers": runner.n_workers,
                "partitions": table.n_parts,
                "measured_on": (
                    f"the exact counts of the {len(marginals)} marginal(s) the mechanism reads, counted on the "
                    "cluster in one pass over the records"
                ),
            }
        except Exception as exc:
            if isinstance(exc, VersapubError) or not cluster_failure(exc):
                raise
            raise ClusterError(
                f"The Dask cluster failed while counting the records ({type(exc).__name__}: {str(exc)[:300]}). "
                f"Nothing was written to {dest} and the intermediate files were removed. A worker may have died "
                "(out of memory: give workers more memory, or the input more partitions) or the scheduler gone "
                "away; run again once the cluster is healthy."
            ) from exc
        finally:
            workdirs.remove(scratch)
    return DaskInput(precounted, removed, backend)
