"""Integer programs over the join of published tables' supports (shared by the
k-combinatorial check of :mod:`versapub.marginals.identity` and the count bounds of
:mod:`versapub.model.bounds`): a cell of the join for every combination all tables allow, a
count per cell, each table's row the sum of its cells.  Every table consistent with the
tables is a solution (a cell outside the join has a zero row in some table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from versapub.errors import ConfigError
from versapub.model.sparse import Codes, Floats, join_on, joint_ids, match_rows


class Counted(Protocol):
    """A table of counts: ``keys`` (attributes), their ``columns`` (codes) and ``counts``."""

    @property
    def name(self) -> str: ...
    @property
    def keys(self) -> tuple[Any, ...]: ...
    @property
    def columns(self) -> tuple[Codes, ...]: ...
    @property
    def counts(self) -> Floats: ...
    def column(self, key: Any) -> Codes: ...


def support_join(tables: Sequence[Counted], cards: Mapping[Any, int], max_rows: int) -> dict[Any, Codes]:
    """The join of the marginals' supports (non-zero rows) over all their keys."""
    cols: dict[Any, Codes] = {}
    n = 1
    for t in tables:
        live = t.counts > 0
        tc = {kk: c[live] for kk, c in zip(t.keys, t.columns, strict=True)}
        shared = [kk for kk in t.keys if kk in cols]
        if shared:
            lid, rid = joint_ids([cols[kk] for kk in shared], [tc[kk] for kk in shared], [cards[kk] for kk in shared])
        else:
            lid, rid = np.zeros(n, dtype=np.int64), np.zeros(int(live.sum()), dtype=np.int64)
        li, ri = join_on(lid, rid, max_rows)
        cols = {kk: c[li] for kk, c in cols.items()}
        for kk in t.keys:
            if kk not in cols:
                cols[kk] = tc[kk][ri]
        n = len(li)
    return cols


def consistent_program(
    tables: Sequence[Counted], cells: Mapping[Any, Any], cards: Mapping[Any, int], n_cells: int
) -> tuple[Any, list[Any], Any]:
    """The integer program over the join of the supports: a count per joined cell, bounded
    by every marginal's count there, each marginal's cell the sum of its joined cells."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    bound = np.full(n_cells, np.iinfo(np.int64).max, dtype=np.int64)
    rows_of = []
    for t in tables:
        at = (
            match_rows([t.column(kk) for kk in t.keys], [cells[kk] for kk in t.keys], [cards[kk] for kk in t.keys])
            if t.keys
            else np.zeros(n_cells, dtype=np.int64)
        )
        bound = np.minimum(bound, np.rint(t.counts[at]).astype(np.int64))
        rows_of.append(at)
    x = [model.new_int_var(0, int(b), f"x{i}") for i, b in enumerate(bound)]
    for t, at in zip(tables, rows_of, strict=True):
        order = np.argsort(at, kind="stable")
        starts = np.searchsorted(at[order], np.arange(len(t.counts) + 1))
        for r in range(len(t.counts)):
            members = order[starts[r] : starts[r + 1]]
            if not len(members):
                raise ConfigError(
                    f"The marginals disagree: a non-zero cell of {t.name} extends to no cell that the "
                    "other marginals allow (they are not marginals of one table)."
                )
            model.add(sum(x[int(i)] for i in members) == round(float(t.counts[r])))
    return model, x, bound
