"""Exact marginals of a table on the cluster in one pass (issue 67): each task reads a share
of the parts of codes, maps every code to its position in the column's declared domain and
adds each marginal's ``bincount`` into its own dense arrays; this process sums the tasks'
arrays. Nothing but the marginals leaves the workers (a few arrays per task, their size the
marginals' cells, bounded by the mechanism's own cell limit)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.errors import InputError

Counts = npt.NDArray[np.int64]


def _chunk_marginals(
    files: Sequence[str],
    remaps: Mapping[str, npt.NDArray[np.int64]],
    marginals: Sequence[tuple[str, ...]],
    sizes: Mapping[str, int],
) -> list[Counts]:
    """The marginals of the records in ``files`` (a task's share of the parts)."""
    import pyarrow.parquet as pq

    columns = sorted({a for m in marginals for a in m})
    out = [np.zeros(math.prod(sizes[a] for a in m), dtype=np.int64) for m in marginals]
    for f in files:
        part = pq.read_table(f, columns=columns)
        pos = {a: remaps[a][part.column(a).to_numpy()] for a in columns}
        for i, m in enumerate(marginals):
            key = np.ravel_multi_index(tuple(pos[a] for a in m), [sizes[a] for a in m]) if len(m) > 1 else pos[m[0]]
            out[i] += np.bincount(key, minlength=len(out[i]))
    return out


def domain_positions(values: Any, counts: Any, domain: Sequence[str], column: str) -> npt.NDArray[np.int64]:
    """Each code of a column (``values`` its dictionary, ``counts`` the records per code) as
    its position in the declared ``domain``; a value some record holds outside it is refused
    (the domain is public knowledge: the data may not widen it)."""
    position = {str(v): i for i, v in enumerate(domain)}
    texts = [str(v) for v in values]
    outside = [v for v, c in zip(texts, counts, strict=True) if c > 0 and v not in position]
    if outside:
        raise InputError(
            f"Column {column!r} holds {outside[0]!r}, which its declared domain does not list ({len(domain)} "
            "values); declare every value the column may take (its domain is public knowledge, never read from "
            "the data)."
        )
    return np.array([position.get(v, 0) for v in texts], dtype=np.int64)


def count_marginals(
    table: Any, marginals: Sequence[tuple[str, ...]], domains: Mapping[str, Sequence[str]]
) -> dict[tuple[str, ...], Counts]:
    """The exact counts of ``marginals`` over ``domains`` of a
    :class:`~versapub.scale.table.DaskTable` (dense, C order), in one pass over its parts."""
    from dask import delayed

    columns = sorted({a for m in marginals for a in m})
    remaps = {a: domain_positions(table.column(a).values, table.column(a).counts(), domains[a], a) for a in columns}
    sizes = {a: len(domains[a]) for a in columns}
    files = [str(f) for f in sorted(Path(table.codes_path).glob("*.parquet"))]
    runner = table.runner
    n_tasks = max(1, min(len(files), 2 * max(runner.n_workers, 1)))
    shared = runner.share(remaps)
    tasks = [delayed(_chunk_marginals)(files[i::n_tasks], shared, list(marginals), sizes) for i in range(n_tasks)]
    parts = runner.run(tasks, f"on the cluster: counting {len(marginals)} marginal(s)")
    return {m: np.sum([p[i] for p in parts], axis=0).astype(np.int64) for i, m in enumerate(marginals)}
