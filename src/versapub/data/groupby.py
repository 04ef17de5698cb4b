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
