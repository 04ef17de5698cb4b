"""What ``--k 3`` and ``--k 5`` would cost a job that states no ``--k`` (issue 47, item 3),
computed on the input while publishing, so that the steward decides with numbers: the
records now in cells of fewer than k exactly published values (from the published tables),
and for the tables that publish columns exactly the recoding that would meet k (which
columns, to how many values) with the information it loses — the KL-divergence of those
columns' joint distribution from the recoded one spread uniformly over the leaves each
value covers (computed exactly on the input's distinct rows; the release's own KL would
change by other amounts).  Tables that Mondrian or Incognito anonymize meet k while they
generalize: their cost is not estimated, only whether their classes already meet it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from versapub.anonymizers.base import MeetsCellFloor
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.errors import VersapubError
from versapub.kinds import entry_of, get_kind
from versapub.publishing.choice import anon_for
from versapub.publishing.recoding import Recoding, choose
from versapub.publishing.steps import Columns, Guarded, Job
from versapub.publishing.tables import predicted_unguarded
from versapub.release.value import PublishedTable
from versapub.schema.model import Schema

#: The floors whose cost a job without ``--k`` is shown.
PREVIEWED = (3, 5)


def k_preview(
    job: Job, cols: Columns, rules: Guarded, schema: Schema, published: list[PublishedTable]
) -> dict[str, Any] | None:
    """Per previewed k: the records in cells below it now, and what meeting it would take
    (``None`` for a job with ``--k``, or on the Dask backend)."""
    table = cols.table
    if job.floor > 1 or not isinstance(table, EncodedTable):
        return None
    exact, generalizing = [], []
    for sub in schema.tables:
        anon = anon_for(sub, job.anon, rules.own_anon)
        if sub.enforces is not None and isinstance(anon, MeetsCellFloor):
            generalizing.append(sub.name)
        else:
            exact.append((sub.name, job.keys.of(predicted_unguarded(sub, anon, cols.keep))))
    sizes = [_cell_sizes(p, job.keys.of) for p in published]
    protected = frozenset(r.rhs for r in rules.reduction.rules)
    plain = frozenset(s.name for s in schema.tables if s.enforces is None)
    out: dict[str, Any] = {}
    for k in PREVIEWED:
        below = max((int((s < k).sum()) for s in sizes if len(s)), default=0)
        one: dict[str, Any] = {"records_below": below, "share_below": below / max(table.n_rows, 1)}
        try:
            recoding = choose(table, exact, k, job.hierarchies or {}, protected, plain)
        except VersapubError as exc:  # infeasible, or a hierarchy that cannot be used: said, never raised
            one["refused"] = str(exc)
            recoding = None
        if recoding is not None:
            one["recoded"] = _recoded(table, recoding)
            one["kl_recoded_columns"] = _kl(table, recoding)
        short = [p.name for p, s in zip(published, sizes, strict=True) if p.name in generalizing and s.min() < k]
        if short:
            one["generalized_further"] = short
        out[str(k)] = one
    keys = {} if job.keys.names is None else {"keys": list(job.keys.names)}
    return {"computed": "computed on the input while publishing", "k": out, **keys}


def _cell_sizes(p: PublishedTable, keyed: Callable[[list[str]], list[str]]) -> np.ndarray:
    """The sizes of a published table's cells of its key columns (``keyed``: the keys among
    its cell columns; one size per record's cell: a table with no key has one cell of all
    records)."""
    role, cols = get_kind(p.table.kind).cells(entry_of(p.name, p.table))
    cols = keyed(cols)
    part = p.table.parts[role]
    if not cols:
        return np.array([int(part.counts.sum())], dtype=np.int64)
    codes = [part.codes[part.names.index(a)] for a in cols]
    g = group_rows(codes, [int(c.max()) + 1 if len(c) else 1 for c in codes], with_inverse=True)
    assert g.inverse is not None
    size = np.bincount(g.inverse, weights=part.counts).astype(np.int64)
    return np.repeat(size, size)


def _recoded(table: EncodedTable, recoding: Recoding) -> dict[str, str]:
    """Per recoded column, in words: from how many values to how many."""
    out = {}
    for a, lv in recoding.levels.items():
        h = recoding.hierarchies[a]
        mapping = h.mapping(lv)  # once: a dictionary per value would cost values^2
        n = len({mapping[str(v)] for v in table.column(a).values})
        out[a] = "as * (its root)" if lv == h.height - 1 else f"in {n} values instead of {table.cardinality(a)}"
    return out


def _kl(table: EncodedTable, recoding: Recoding) -> float:
    """KL-divergence of the recoded columns' joint distribution from the recoded one, each
    value's mass spread uniformly over the leaves it covers (present in the input)."""
    cols = list(recoding.levels)
    g = group_rows([table.codes(a) for a in cols], [table.cardinality(a) for a in cols])
    p = g.counts / g.counts.sum()
    nodes, spread = [], np.ones(len(p))
    for a, keys in zip(cols, g.keys, strict=True):
        h = recoding.hierarchies[a]
        level = h.node_codes(table.column(a))[recoding.levels[a]]
        present = np.bincount(level, minlength=int(level.max()) + 1)  # leaves per node (the input's values)
        node = level[keys]
        nodes.append(node)
        spread = spread * present[node]
    cell = group_rows(nodes, [int(n.max()) + 1 for n in nodes], with_inverse=True)
    assert cell.inverse is not None
    mass = np.bincount(cell.inverse, weights=p)[cell.inverse]
    q = mass / spread
    return float(np.sum(p * np.log(p / q)))
