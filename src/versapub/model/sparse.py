"""Sparse tables of numbers over encoded attributes (only observed value combinations).

A :class:`SparseFn` maps value combinations of some attributes to a float (a
probability, a message, a count).  Rows are distinct; lookups and group sums are
vectorized through joint dense ranks (:func:`versapub.data.groupby.group_rows`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows

#: :func:`expand` refuses joins producing more rows than this.
JOIN_MAX_ROWS = 30_000_000

Codes = npt.NDArray[np.int64]


class JoinTooLarge(Exception):
    """An :func:`expand` join would exceed ``JOIN_MAX_ROWS`` rows."""

    def __init__(self, rows: int) -> None:
        super().__init__(rows)
        self.rows = rows


Floats = npt.NDArray[np.float64]


def joint_ids(
    left: Sequence[npt.NDArray[np.integer]], right: Sequence[npt.NDArray[np.integer]], cards: Sequence[int]
) -> tuple[Codes, Codes]:
    """Dense ids of the value combinations of ``left`` rows and ``right`` rows in one
    id space (equal combinations get equal ids)."""
    if not left:
        return np.zeros(len_rows(left), dtype=np.int64), np.zeros(len_rows(right), dtype=np.int64)
    nl = len(left[0])
    cols = [np.concatenate([a, b]) for a, b in zip(left, right, strict=True)]
    inv = group_rows(cols, cards, with_inverse=True).inverse
    assert inv is not None
    return inv[:nl], inv[nl:]


def len_rows(cols: Sequence[npt.NDArray[np.integer]]) -> int:
    return len(cols[0]) if cols else 0


def match_rows(
    table: Sequence[npt.NDArray[np.integer]], query: Sequence[npt.NDArray[np.integer]], cards: Sequence[int]
) -> Codes:
    """For every query row, the index of the equal (distinct) table row, or -1."""
    if not table:
        n_q = len(query[0]) if query else 1
        return np.zeros(n_q, dtype=np.int64)
    if math.prod(max(int(c), 1) for c in cards) < 1 << 62:  # one mixed-radix key: sort the table once
        keys, order = _sorted_keys(table, cards)
        q = np.zeros(len(query[0]), dtype=np.int64)
        valid = np.ones(len(q), dtype=bool)  # a code outside its attribute's range matches nothing
        for col, card in zip(query, cards, strict=True):
            valid &= (col >= 0) & (col < max(int(card), 1))
            q = q * max(int(card), 1) + col.astype(np.int64, copy=False)
        at = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        hit = (keys[at] == q) & valid if len(keys) else np.zeros(len(q), dtype=bool)
        return np.where(hit, order[at], -1)
    lid, rid = joint_ids(table, query, cards)
    space = int(max(lid.max(initial=-1), rid.max(initial=-1))) + 1
    where = np.full(space, -1, dtype=np.int64)
    where[lid] = np.arange(len(lid), dtype=np.int64)
    return where[rid]


#: Sorted keys of recently matched tables, by the identity of their columns (held too, so
#: an id cannot be reused while its entry lives): a join in chunks matches the same table.
_SORTED: dict[tuple[int, ...], tuple[tuple[Codes, Codes], Sequence[npt.NDArray[np.integer]]]] = {}
_SORTED_LOCK = threading.Lock()
_SORTED_ENTRIES = 8


def _sorted_keys(table: Sequence[npt.NDArray[np.integer]], cards: Sequence[int]) -> tuple[Codes, Codes]:
    """The table's rows as sorted mixed-radix keys, and each sorted key's row."""
    ident = (*map(id, table), *(int(c) for c in cards))
    with _SORTED_LOCK:
        hit = _SORTED.get(ident)
    if hit is not None:
        return hit[0]
    key = np.zeros(len(table[0]), dtype=np.int64)
    for col, card in zip(table, cards, strict=True):
        key = key * max(int(card), 1) + col.astype(np.int64, copy=False)
    order = np.argsort(key, kind="stable").astype(np.int64)
    value = (key[order], order)
    with _SORTED_LOCK:
        _SORTED[ident] = (value, table)
        while len(_SORTED) > _SORTED_ENTRIES:
            _SORTED.pop(next(iter(_SORTED)))
    return value


def join_on(left_key: Codes, right_key: Codes, max_rows: int | None = None) -> tuple[Codes, Codes]:
    """All pairs ``(i, j)`` with ``left_key[i] == right_key[j]`` (an equi-join); raises
    :class:`JoinTooLarge` before building more than ``max_rows`` pairs."""
    lo = np.argsort(left_key, kind="stable")
    ro = np.argsort(right_key, kind="stable")
    rk = right_key[ro]
    start = np.searchsorted(rk, left_key[lo], side="left")
    end = np.searchsorted(rk, left_key[lo], side="right")
    n = end - start
    if max_rows is not None and int(n.sum()) > max_rows:
        raise JoinTooLarge(int(n.sum()))
    li = np.repeat(lo, n)
    offsets = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    ri = ro[np.repeat(start, n) + offsets]
    return li, ri


@dataclass(frozen=True)
class SparseFn:
    """``attrs -> value`` on listed (distinct) combinations; absent combinations are 0."""

    attrs: tuple[str, ...]
    codes: tuple[Codes, ...]
    values: Floats
    cards: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.attrs) != len(self.codes) or len(self.attrs) != len(self.cards):
            raise ValueError("SparseFn: attrs, codes and cards differ in number")
        for c in self.codes:
            if len(c) != len(self.values):
                raise ValueError("SparseFn: a column and the values differ in length")

    @classmethod
    def scalar(cls, value: float) -> SparseFn:
        return cls((), (), np.array([value], dtype=np.float64), ())

    @property
    def total(self) -> float:
        return float(self.values.sum())

    def lookup(self, records: Mapping[str, npt.NDArray[np.integer]]) -> Floats:
        """The value at each record (records give codes for at least ``attrs``)."""
        if not self.attrs:
            n = len(next(iter(records.values()))) if records else 1
            return np.full(n, self.values[0] if len(self.values) else 0.0)
        idx = match_rows(self.codes, [records[a] for a in self.attrs], self.cards)
        out = np.zeros(len(idx), dtype=np.float64)
        hit = idx >= 0
        out[hit] = self.values[idx[hit]]
        return out


def group_sum(
    attrs: Sequence[str],
    columns: Mapping[str, npt.NDArray[np.integer]],
    cards: Mapping[str, int],
    weights: Floats,
) -> SparseFn:
    """``SELECT attrs, SUM(weight) GROUP BY attrs`` (rows with zero total are dropped)."""
    attrs = tuple(attrs)
    if not attrs:
        return SparseFn.scalar(float(weights.sum()))
    g = group_rows([columns[a] for a in attrs], [cards[a] for a in attrs], with_inverse=True)
    assert g.inverse is not None
    sums = np.bincount(g.inverse, weights=weights, minlength=len(g.counts))
    keep = sums != 0
    return SparseFn(
        attrs,
        tuple(k.astype(np.int64)[keep] for k in g.keys),
        sums[keep].astype(np.float64),
        tuple(cards[a] for a in attrs),
    )


def sample_conditional(row_keys: Codes, weights: Floats, query_keys: Codes, rng: np.random.Generator) -> Codes:
    """For every query, a row index drawn among rows with the same key, proportionally to
    ``weights`` (-1 where no row has the key or the weights sum to 0)."""
    order = np.argsort(row_keys, kind="stable")
    keys = row_keys[order]
    cum = np.cumsum(weights[order])
    start = np.searchsorted(keys, query_keys, side="left")
    end = np.searchsorted(keys, query_keys, side="right")
    before = np.where(start > 0, cum[np.maximum(start - 1, 0)], 0.0)
    total = np.where(end > start, cum[np.maximum(end - 1, 0)] - before, 0.0)
    u = rng.random(len(query_keys)) * total + before
    pos = np.searchsorted(cum, u, side="right")
    pos = np.clip(pos, start, np.maximum(end - 1, start))
    out = order[np.minimum(pos, len(order) - 1)] if len(order) else np.zeros(len(query_keys), dtype=np.int64)
    return np.where(total > 0, out, -1)


def expand(columns: Mapping[str, Codes], weights: Floats, msg: SparseFn) -> tuple[dict[str, Codes], Floats]:
    """Multiply rows by a message that may carry attributes the rows lack: the rows are
    joined with the message's rows on the attributes they share, and the message's other
    attributes become new columns (a row matching several message rows is repeated)."""
    shared = [i for i, a in enumerate(msg.attrs) if a in columns]
    extra = [i for i, a in enumerate(msg.attrs) if a not in columns]
    n = len(weights)
    if shared:
        lid, rid = joint_ids(
            [columns[msg.attrs[i]] for i in shared], [msg.codes[i] for i in shared], [msg.cards[i] for i in shared]
        )
    else:
        lid, rid = np.zeros(n, dtype=np.int64), np.zeros(len(msg.values), dtype=np.int64)
    li, ri = join_on(lid, rid, JOIN_MAX_ROWS)
    out = {a: c[li] for a, c in columns.items()}
    for i in extra:
        out[msg.attrs[i]] = msg.codes[i][ri]
    return out, weights[li] * msg.values[ri]
