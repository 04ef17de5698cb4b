"""Differentially private measurement on the Dask backend (issue 67): the records of a file
too large for memory stay on the cluster; what comes to this process is their distinct
combinations over the columns to measure, each with how many records hold it (one count
table, aggregated in every partition and shuffled). Every marginal a mechanism measures is
then a weighted count over those combinations (:class:`~versapub.data.table.CountedTable`,
:func:`versapub.mechanisms.measure.exact_counts`), the same counts as over the records, so
the noise, the ledger and the fit are the in-memory path's; the fit runs on the small domain
in this process.

Nothing read here is published: the distinct combinations and their counts are exact, like
the in-memory records, and only their noisy marginals leave."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from versapub.data.table import CODE_DTYPE, Column, CountedTable
from versapub.errors import ClusterError, InputError, VersapubError

Progress = Callable[[str, int, int], None]

#: The most distinct combinations brought into this process (about 8 bytes a column and a
#: count each: 10^7 combinations of 10 columns are under 1 GB).
MAX_DISTINCT = 10_000_000


@dataclass(frozen=True)
class DaskInput:
    """The counted input and how it was read (the manifest's ``backend`` block)."""

    table: CountedTable
    backend: dict[str, Any]
    removed: tuple[str, ...]


def counted_on_dask(cfg: Any, dest: Path, identifying: Sequence[str], progress: Progress) -> DaskInput:
    """Read ``cfg.input`` on a Dask cluster (``cfg.scheduler``, else a LocalCluster) and
    count its distinct combinations over every column but ``identifying`` (removed first,
    as in memory); the cluster and its scratch directory are gone when this returns."""
    from versapub.io import workdirs
    from versapub.scale import require_dask
    from versapub.scale.cluster import Runner, cluster_failure, connect
    from versapub.scale.read import read_dask
    from versapub.scale.table import materialize

    require_dask()
    scratch = workdirs.dask_scratch(dest, cfg.scratch)
    progress("starting the Dask cluster" if not cfg.scheduler else f"connecting to {cfg.scheduler}", 0, 0)
    with connect(cfg.scheduler, cfg.workers, cfg.worker_memory) as client:
        runner = Runner(client, progress)
        try:
            workdirs.claim(scratch)
            table = read_dask(cfg.input, runner, scratch, cfg.read_options())
            removed = tuple(a for a in table.names if a in set(identifying))
            names = [a for a in table.names if a not in removed]
            if not names:
                raise InputError("Every column is declared identifying: there is nothing to measure.")
            counts = materialize(
                table.frame(names),
                names,
                names,
                [table.cardinality(a) for a in names],
                runner,
                scratch / "distinct",
                [table.column(a).values for a in names],
            )
            if counts.n_rows > MAX_DISTINCT:
                raise InputError(
                    f"The columns to measure hold {counts.n_rows:,} distinct combinations, more than the "
                    f"{MAX_DISTINCT:,} a differentially private measurement on the Dask backend brings into this "
                    "process. Declare the many-valued columns identifying (they are then not measured), or "
                    "measure fewer columns."
                )
            progress(f"measuring on {counts.n_rows:,} distinct combinations of {table.n_rows:,} records", 0, 0)
            counted = _collected(counts.path, names, [table.column(a).values for a in names], str(cfg.input))
            backend = {
                "name": "dask",
                "scheduler": cfg.scheduler or "LocalCluster",
                "workers": runner.n_workers,
                "partitions": table.n_parts,
                "measured_on": "the distinct combinations of the measured columns, counted on the cluster",
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
    return DaskInput(counted, backend, removed)


def _collected(path: Path, names: Sequence[str], dictionaries: Sequence[Any], source: str) -> CountedTable:
    """The count table's Parquet parts at ``path`` as one :class:`CountedTable`."""
    import pyarrow.parquet as pq

    parts = [pq.read_table(f, columns=[*names, "count"]) for f in sorted(path.glob("*.parquet"))]
    parts = [p for p in parts if p.num_rows]
    if not parts:
        raise InputError(f"{source}: the input holds no records.")
    codes = {a: np.concatenate([p.column(a).to_numpy() for p in parts]).astype(CODE_DTYPE) for a in names}
    weights = np.concatenate([p.column("count").to_numpy() for p in parts]).astype(np.int64)
    cols = tuple(Column(a, codes[a], np.asarray(d, dtype=object)) for a, d in zip(names, dictionaries, strict=True))
    return CountedTable(cols, source=source, weights=weights)
