"""Many queries at once: sparse functions whose values carry a batch dimension.

A :class:`BatchFn` is a :class:`~versapub.model.sparse.SparseFn` with one row of values
per query of a batch (shape ``(batch, rows)``).  The release model answers a whole COUNT
workload with one message pass per batch.  Inside a factor, every query weights the
factor's rows by values looked up at a few keys per row (its indicator mask of an
attribute at the row's code, a child's message at the row's separator value, a group's
sum at the row's group); the rows' weights are summed per output key.  Both steps are one
linear map: the distinct combinations of the looked-up keys (usually far fewer than the
rows) get each query's product of values, a ``(batch, combinations)`` matrix, which is
multiplied by the sparse ``combinations x outputs`` matrix of the rows' probabilities
(:func:`batch_reduce`).  A batch of at most ``SMALL_BATCH`` queries instead weights the
rows directly, one vectorized pass per query (cheaper than building the matrix); there is
never a Python loop over rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.model.sparse import Codes, Floats, match_rows

#: Queries per batch are chosen so that ``batch x rows`` stays below this many floats.
BATCH_CELLS = 1 << 22
#: Up to this many queries, :func:`batch_reduce` sums with one ``bincount`` per query.
SMALL_BATCH = 4

Matrix = npt.NDArray[np.float64]
BatchMasks = Mapping[str, npt.NDArray[np.bool_]]  # attribute -> (batch, card) indicators
#: A per-row key (codes) and the per-query values at each key: ``values[b, key[row]]``.
Gather = tuple[Codes, npt.NDArray[np.floating] | npt.NDArray[np.bool_]]


#: Row groupings and row matchings reused across batches, keyed by the identity of the
#: code arrays they were computed from (the arrays are held too, so an id cannot be reused
#: while its entry lives).  A message pass over the same tables asks the same questions
#: for every batch; only the query values change.
_MEMO: dict[tuple[Any, ...], tuple[Any, Any, int]] = {}
_MEMO_LOCK = threading.Lock()
#: The memo's values (not the arrays it only holds on to) stay below this many bytes.
MEMO_MAX_BYTES = 256 << 20
#: ... and at most this many entries (each also holds on to the arrays it was computed from).
MEMO_MAX_ENTRIES = 64


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return 0


def remember(key: tuple[Any, ...], keep: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, or its value from the last time ``key`` was asked (oldest entries
    dropped beyond ``MEMO_MAX_ENTRIES`` or ``MEMO_MAX_BYTES``)."""
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
    if hit is not None:
        return hit[0]
    value = compute()
    size = _nbytes(value)
    if size <= MEMO_MAX_BYTES // 4:
        with _MEMO_LOCK:
            _MEMO[key] = (value, keep, size)
            while len(_MEMO) > MEMO_MAX_ENTRIES or sum(v[2] for v in _MEMO.values()) > MEMO_MAX_BYTES:
                _MEMO.pop(next(iter(_MEMO)))
    return value


@dataclass(frozen=True)
class BatchFn:
    """``attrs -> value`` per query: ``values[b, i]`` for query ``b`` at row ``i``."""

    attrs: tuple[str, ...]
    codes: tuple[Codes, ...]
    values: Matrix
    cards: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.values.ndim != 2:
            raise ValueError("BatchFn: values must be (batch, rows)")
        if len(self.attrs) != len(self.codes) or any(len(c) != self.values.shape[1] for c in self.codes):
            raise ValueError("BatchFn: attrs, codes and values disagree")

    def gather(self, records: Mapping[str, npt.NDArray[np.integer]], n: int) -> Gather:
        """The key of each of ``n`` records into this function's rows (absent: a zero column)."""
        if not self.attrs:
            return np.zeros(n, dtype=np.int64), self.values[:, :1]
        cols = [records[a] for a in self.attrs]
        key = ("match", *map(id, self.codes), *map(id, cols))
        idx = remember(key, (self.codes, cols), lambda: match_rows(self.codes, cols, self.cards))
        width = self.values.shape[1]
        padded = np.concatenate([self.values, np.zeros((self.values.shape[0], 1))], axis=1)
        return np.where(idx >= 0, idx, width), padded


def batch_reduce(gathers: Sequence[Gather], p: Floats, out: Codes, n_out: int, batch: int) -> Matrix:
    """``(batch, n_out)``: ``Σ_rows p[row] · Π_k values_k[b, key_k[row]]`` per output id."""
    if not gathers:
        return np.broadcast_to(np.bincount(out, weights=p, minlength=n_out), (batch, n_out))
    width = max(vals.shape[0] for _, vals in gathers)
    if width <= SMALL_BATCH:  # a few queries: weight the rows directly
        return np.broadcast_to(
            np.stack([_direct(gathers, p, out, n_out, min(b, width - 1)) for b in range(width)]), (batch, n_out)
        )
    if len(gathers) == 1:
        inv, v = gathers[0][0], np.asarray(gathers[0][1], dtype=np.float64)
    else:
        g = group_rows([k for k, _ in gathers], [vals.shape[1] for _, vals in gathers], with_inverse=True)
        assert g.inverse is not None
        inv = g.inverse
        v = np.ones((1, len(g.counts)), dtype=np.float64)
        for (_, vals), key in zip(gathers, g.keys, strict=True):
            v = v * vals[:, key]
    import scipy.sparse as sp  # on first use: start-up of read-side commands

    a = sp.csr_matrix((p, (out, inv)), shape=(n_out, v.shape[1]))  # outputs x combinations
    res = np.asarray(a @ v.T).T
    return np.broadcast_to(res, (batch, n_out)) if res.shape[0] != batch else res


def _direct(gathers: Sequence[Gather], p: Floats, out: Codes, n_out: int, b: int) -> Floats:
    """Query ``b`` of :func:`batch_reduce` row by row: the indicator gathers combined as
    booleans first, then the numeric ones, then one sum per output."""
    keep: npt.NDArray[np.bool_] | None = None
    w = p
    for key, vals in gathers:
        row = vals[min(b, vals.shape[0] - 1)]
        if row.dtype == np.bool_:
            hit = np.take(row, key)
            keep = hit if keep is None else keep & hit
        else:
            w = w * np.take(row, key)
    if n_out == 1:
        return np.array([float(w @ keep) if keep is not None else float(w.sum())])
    if keep is not None:  # positions, then gathers: ~6x faster than boolean indexing
        at = np.flatnonzero(keep)
        return np.bincount(out[at], weights=w[at], minlength=n_out).astype(np.float64)
    return np.bincount(out, weights=w, minlength=n_out).astype(np.float64)


def batch_group_sum(
    by: Sequence[str],
    columns: Mapping[str, Codes],
    cards: Mapping[str, int],
    p: Floats,
    gathers: Sequence[Gather],
    batch: int,
) -> BatchFn:
    """Per query, ``SELECT by, SUM(p · Π gathers) GROUP BY by`` (every group present in the
    rows is kept, even where a query's sum is 0)."""
    by = tuple(by)
    if not by:
        out = np.zeros(len(p), dtype=np.int64)
        return BatchFn((), (), batch_reduce(gathers, p, out, 1, batch), ())
    cols = [columns[a] for a in by]

    def grouping() -> tuple[Codes, tuple[Codes, ...]]:
        g = group_rows(cols, [cards[a] for a in by], with_inverse=True)
        assert g.inverse is not None
        return g.inverse, tuple(k.astype(np.int64) for k in g.keys)

    inverse, keys = remember(("group", *map(id, cols)), tuple(cols), grouping)
    values = batch_reduce(gathers, p, inverse, len(keys[0]), batch)
    return BatchFn(by, keys, values, tuple(cards[a] for a in by))


def mask_gathers(columns: Mapping[str, Codes], masks: BatchMasks) -> list[Gather]:
    """One gather per mask on an attribute the rows have."""
    return [(columns[a], m) for a, m in masks.items() if a in columns]
