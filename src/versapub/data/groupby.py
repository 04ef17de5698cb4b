"""Vectorized group-by over encoded columns (``COUNT(*) GROUP BY ...``).

Columns are folded into one ``int64`` key in mixed radix; when the product of the
cardinalities would overflow, the partial key is first compressed to dense ranks
(``np.unique``), which keeps lexicographic order.  Dense small key spaces are counted
with ``np.bincount``, larger ones by sorting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_KEY_LIMIT = 1 << 62
#: Key spaces up to this size (and at most 8x the row count) are counted densely.
_DENSE_LIMIT = 1 << 24


@dataclass(frozen=True)
class Grouping:
    """Result of :func:`group_rows`: ``keys[j]`` are the distinct code combinations
    (one array per column, sorted lexicographically), ``counts`` their frequencies and
    ``inverse[i]`` the group index of input row *i* (only if requested)."""

    keys: tuple[npt.NDArray[np.int32], ...]
    counts: npt.NDArray[np.int64]
    inverse: npt.NDArray[np.int64] | None


def combined_key(
    columns: Sequence[npt.NDArray[np.integer]], cards: Sequence[int]
) -> tuple[npt.NDArray[np.int64], int, bool]:
    """One ``int64`` key per row whose order is the lexicographic order of the columns.

    Returns the key, the size of its key space, and whether the key had to be compressed
    to dense ranks (then it no longer decodes by mixed radix).
    """
    n = len(columns[0]) if columns else 0
    key = np.zeros(n, dtype=np.int64)
    space = 1
    compressed = False
    for col, card in zip(columns, cards, strict=True):
        card = max(int(card), 1)
        if space * card >= _KEY_LIMIT:
            uniq, inv = np.unique(key, return_inverse=True)
            key = inv.astype(np.int64).ravel()
            space = len(uniq)
            compressed = True
        key = key * card + col.astype(np.int64, copy=False)
        space *= card
    return key, space, compressed


def group_rows(
    columns: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    *,
    with_inverse: bool = False,
) -> Grouping:
    """Count the distinct combinations of ``columns`` (codes with the given cardinalities)."""
    cards = [max(int(c), 1) for c in cards]
    if not columns:
        raise ValueError("group_rows needs at least one column")
    key, space, compressed = combined_key(columns, cards)
    n = len(key)
    inverse: npt.NDArray[np.int64] | None = None
    first: npt.NDArray[np.int64] | None = None
    if space <= _DENSE_LIMIT and space <= 8 * max(n, 1):
        full = np.bincount(key, minlength=space)
        present = np.flatnonzero(full)
        counts = full[present].astype(np.int64)
        ukeys = present.astype(np.int64)
        if with_inverse:
            rank = np.zeros(space, dtype=np.int64)
            rank[present] = np.arange(len(present))
            inverse = rank[key]
        if compressed:
            first = np.unique(key, return_index=True)[1].astype(np.int64)
    else:
        if with_inverse:
            ukeys, idx, inv, cnt = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
            inverse = inv.astype(np.int64).ravel()
        else:
            ukeys, idx, cnt = np.unique(key, return_index=True, return_counts=True)
        first = idx.astype(np.int64)
        counts = cnt.astype(np.int64)
    if first is not None:
        keys = tuple(np.asarray(col)[first].astype(np.int32) for col in columns)
    else:  # decode the mixed-radix key
        rest = ukeys.copy()
        out = []
        for card in reversed(cards):
            out.append((rest % card).astype(np.int32))
            rest //= card
        keys = tuple(reversed(out))
    return Grouping(keys, counts, inverse)


def cell_sizes_among(
    codes: Sequence[npt.NDArray[np.integer]], wanted: Sequence[npt.NDArray[np.integer]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """How many rows of ``codes`` (one array per column) share each row's combination of
    ``wanted`` (the same columns): ``(ids, sizes)`` where ``ids[i]`` numbers ``wanted``'s row
    ``i``'s distinct combination and ``sizes[id]`` counts the rows of ``codes`` holding it.
    Exact for any number of columns and cardinalities: the key is built column by column and
    renumbered among ``wanted``'s combinations after each (never above ``len(wanted[0])``),
    rows holding a combination ``wanted`` lacks dropped on the way."""
    m = len(wanted[0]) if wanted else 0
    if not wanted:
        return np.zeros(m, dtype=np.int64), np.array([len(codes[0]) if codes else 0], dtype=np.int64)
    if m == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    want = np.zeros(m, dtype=np.int64)
    have = np.zeros(len(codes[0]), dtype=np.int64)
    keep = np.ones(len(have), dtype=bool)
    for c, w in zip(codes, wanted, strict=True):
        w64, c64 = np.asarray(w, dtype=np.int64), np.asarray(c, dtype=np.int64)
        card = int(max(w64.max(initial=0), c64.max(initial=0))) + 1
        known, want = np.unique(want * card + w64, return_inverse=True)
        want = want.ravel().astype(np.int64)
        key = have * card + c64
        at = np.minimum(np.searchsorted(known, key), len(known) - 1)
        keep &= known[at] == key
        have = at.astype(np.int64)
    sizes = np.bincount(have[keep], minlength=int(want.max(initial=-1)) + 1).astype(np.int64)
    return want, sizes


def unique_rows(
    rows: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of a 2-D integer array: each one's first row, every row's distinct
    row, and how many rows each holds (a stable sort of the rows, then their boundaries)."""
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(len(rows))
    ranked = rows[order]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    ids = np.cumsum(new) - 1
    inverse = np.empty(len(rows), dtype=np.int64)
    inverse[order] = ids
    return order[new].astype(np.int64), inverse, np.bincount(ids).astype(np.int64)
