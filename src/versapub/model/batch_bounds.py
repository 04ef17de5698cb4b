"""The bounds of :mod:`versapub.model.bounds` for a batch of ``AND`` queries naming the same
attributes of a table (a workload): the table is projected once onto those attributes and
every query's rows are matched at once (stacked masks gathered by the projection's codes),
so a workload of 1,000 queries costs a few passes over each table instead of 1,000.

Same rules as one query at a time: a plain table's count is exact; a generalized row counts
toward the lower bound when every leaf its values cover passes, toward the upper when some
does; in latent groups the QI rows matching (``a``) pair with the sensitive rows matching
(``b``): per group ``min(a, b)`` and ``max(0, a + b - |g|)``, and a free group's record may
take any listed combination (:mod:`versapub.model.group_bounds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.model.group_bounds import Groups
from versapub.model.sparse import Codes, Floats

Bools = npt.NDArray[np.bool_]
Masks = Mapping[str, Bools]
#: Matrix cells (queries x rows or groups) per chunk.
CELLS = 1 << 22
#: Below this many queries naming the same attributes, latent groups answer one at a time.
FEW = 8


def _project(columns: Sequence[Codes], weights: Floats) -> tuple[list[Codes], Floats, Codes]:
    """Distinct rows of ``columns`` with their summed weights, and each row's distinct row."""
    if not columns:
        return [], np.array([float(weights.sum())]), np.zeros(len(weights), dtype=np.int64)
    radix = [int(c.max(initial=0)) + 1 for c in columns]
    if float(np.prod(radix, dtype=np.float64)) < 2.0**62:
        key = np.zeros(len(weights), dtype=np.int64)
        for c, r in zip(columns, radix, strict=True):
            key = key * r + c
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        uniq, first, inv = np.unique(np.stack(columns, axis=1), axis=0, return_index=True, return_inverse=True)
    inv = inv.astype(np.int64).ravel()
    sums = np.bincount(inv, weights=weights, minlength=len(uniq)).astype(np.float64, copy=False)
    return [c[first] for c in columns], sums, inv


def _ext(mask: Bools, cover: Any, card: int) -> tuple[Bools, Bools]:
    """A mask over the extended codes (leaves, then a generalized table's labels): certainly
    and possibly passing."""
    if cover is None:
        return mask, mask
    inside = np.r_[0, np.cumsum(mask[cover.leaves])]
    passing = inside[cover.end] - inside[cover.start]
    size = cover.end - cover.start
    return np.r_[mask, passing == size], np.r_[mask, passing > 0]


def _match(
    attrs: Sequence[str], codes: Sequence[Codes], queries: Sequence[Masks], covers: Mapping[str, Any]
) -> tuple[Bools, Bools]:
    """``(queries, rows)``: whether each row certainly / possibly passes each query's atoms."""
    rows = len(codes[0]) if codes else 1
    lo = np.ones((len(queries), rows), dtype=bool)
    hi = np.ones((len(queries), rows), dtype=bool)
    for a, c in zip(attrs, codes, strict=True):
        card = len(queries[0][a])
        ext = [_ext(q[a], covers.get(a), card) for q in queries]
        lo_m = np.stack([e[0] for e in ext])
        hi_m = np.stack([e[1] for e in ext])
        got = lo_m[:, c]
        lo &= got
        hi &= hi_m[:, c] if a in covers else got
    return lo, hi


def rows_batch(
    columns: Mapping[str, Codes],
    counts: Floats,
    attrs: Sequence[str],
    queries: Sequence[Masks],
    covers: Mapping[str, Any] | None = None,
) -> tuple[Floats, Floats]:
    """Per query, the counts of rows certainly / possibly passing its atoms on ``attrs``."""
    covers = {a: c for a, c in (covers or {}).items() if a in attrs}
    cols, w, _ = _project([columns[a] for a in attrs], counts)
    lower = np.empty(len(queries))
    upper = np.empty(len(queries))
    step = max(1, CELLS // max(len(w), 1))
    for i in range(0, len(queries), step):
        lo, hi = _match(attrs, cols, queries[i : i + step], covers)
        lower[i : i + step] = lo @ w
        upper[i : i + step] = hi @ w
    return lower, upper


class _Side:
    """One side of latent groups projected onto a batch's attributes: a sparse
    ``(groups, combinations)`` matrix of counts and the distinct combinations' codes."""

    def __init__(self, groups: Codes, columns: Sequence[Codes], w: Floats, n_groups: int) -> None:
        combos, _, inv = _project(list(columns), w)
        self.codes = combos
        self.n_combos = len(combos[0]) if combos else 1
        import scipy.sparse as sp  # on first use: start-up of read-side commands

        self.matrix = sp.csr_matrix((w, (groups, inv)), shape=(n_groups, self.n_combos))

    def sums(self, match: Bools) -> Floats:
        """``(groups, queries)``: the weight of the combinations each query matches."""
        return np.asarray(self.matrix @ np.ascontiguousarray(match.T, dtype=np.float64))


def _rows(columns: Mapping[str, Codes], attrs: Sequence[str], q: Masks, n: int) -> Bools:
    out = np.ones(n, dtype=bool)
    for a in attrs:
        out &= q[a][columns[a]]
    return out


def _one_by_one(gr: Groups, qa: Sequence[str], sa: Sequence[str], queries: Sequence[Masks]) -> tuple[Floats, Floats]:
    """:func:`groups_batch` without free groups, one query at a time (exact sides)."""
    qi, g_q, c_q, s, g_s, c_s, n_groups = gr.qi, gr.g_q, gr.c_q, gr.s, gr.g_s, gr.c_s, gr.n_groups
    size = np.bincount(g_q, weights=c_q, minlength=n_groups)
    lower = np.empty(len(queries))
    upper = np.empty(len(queries))
    for i, q in enumerate(queries):
        a = np.bincount(g_q, weights=c_q * _rows(qi, qa, q, len(c_q)), minlength=n_groups) if qa else size
        b = np.bincount(g_s, weights=c_s * _rows(s, sa, q, len(c_s)), minlength=n_groups) if sa else size
        upper[i] = float(np.minimum(a, b).sum())
        lower[i] = float(np.maximum(0.0, a + b - size).sum())
    return lower, upper


def groups_batch(
    gr: Groups,
    attrs: Sequence[str],
    queries: Sequence[Masks],
    cache: dict[tuple[str, tuple[str, ...]], _Side] | None = None,
) -> tuple[Floats, Floats]:
    """Per query (atoms on ``attrs``), the fewest and most records over all pairings inside
    each latent group (module docstring): each side's counts per group and combination of
    the batch's attributes, times the queries' masks over the combinations (``cache`` keeps
    the projections between batches)."""
    qi, g_q, c_q, s, g_s, c_s, n_groups, free = gr.qi, gr.g_q, gr.c_q, gr.s, gr.g_s, gr.c_s, gr.n_groups, gr.free
    qa = tuple(a for a in attrs if a in qi)
    sa = tuple(a for a in attrs if a in s)
    cache = {} if cache is None else cache
    if len(queries) < FEW and ("q", qa) not in cache and not free.any():
        # Projecting costs a few passes: a few queries are cheaper one at a time.
        return _one_by_one(gr, qa, sa, queries)
    fixed = ~free[g_s]
    size = np.bincount(g_q, weights=c_q, minlength=n_groups).astype(np.float64)

    def side(which: str, key: tuple[str, ...]) -> _Side:
        if (which, key) not in cache:
            if which == "q":
                cache[which, key] = _Side(g_q, [qi[a] for a in key], c_q, n_groups)
            else:
                rows = fixed if which == "s" else ~fixed
                w = c_s[rows] if which == "s" else np.ones(int(rows.sum()))
                cache[which, key] = _Side(g_s[rows], [s[a][rows] for a in key], w, n_groups)
        return cache[which, key]

    q_side, s_side = side("q", qa), side("s", sa)
    lower = np.empty(len(queries))
    upper = np.empty(len(queries))
    step = max(1, CELLS // max(n_groups, 1))
    for i in range(0, len(queries), step):
        chunk = queries[i : i + step]
        _, q_hi = _match(qa, q_side.codes, chunk, {})
        s_lo, s_hi = _match(sa, s_side.codes, chunk, {})
        a = q_side.sums(q_hi)  # QI sides are exact: certainly = possibly
        hi_g = np.minimum(a, s_side.sums(s_hi))
        lo_g = np.maximum(0.0, a + s_side.sums(s_lo) - size[:, None])
        if free.any():
            f_side = side("f", sa)
            f_lo, f_hi = _match(sa, f_side.codes, chunk, {})
            may = f_side.sums(f_hi) > 0
            miss = f_side.sums(~f_lo) > 0
            hi_g = np.where(free[:, None], a * may, hi_g)
            lo_g = np.where(free[:, None], a * ~miss, lo_g)
        upper[i : i + step] = hi_g.sum(axis=0)
        lower[i : i + step] = lo_g.sum(axis=0)
    return lower, upper
