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


def combined_key(columns: Sequence[npt.NDArray[np.integer]], cards: Sequence[int]) -> tuple[npt.NDArray[np.int64], int]:
    """One ``int64`` key per row whose order is the lexicographic order of the columns.

    Returns the key and the size of its key space.  Compresses to dense ranks when the
    mixed-radix product would overflow.
    """
    n = len(columns[0]) if columns else 0
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for col, card in zip(columns, cards, strict=True):
        card = max(int(card), 1)
        if space * card >= _KEY_LIMIT:
            uniq, inv = np.unique(key, return_inverse=True)
            key = inv.astype(np.int64).ravel()
            space = len(uniq)
        key = key * card + col.astype(np.int64, copy=False)
        space *= card
    return key, space


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
    key, space = combined_key(columns, cards)
    n = len(key)
    inverse: npt.NDArray[np.int64] | None
    if space <= _DENSE_LIMIT and space <= 8 * max(n, 1):
        full = np.bincount(key, minlength=space)
        present = np.flatnonzero(full)
        counts = full[present].astype(np.int64)
        ukeys = present.astype(np.int64)
        if with_inverse:
            rank = np.zeros(space, dtype=np.int64)
            rank[present] = np.arange(len(present))
            inverse = rank[key]
        else:
            inverse = None
    else:
        if with_inverse:
            ukeys, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
            inverse = inv.astype(np.int64).ravel()
        else:
            ukeys, counts = np.unique(key, return_counts=True)
            inverse = None
        counts = counts.astype(np.int64)
    if len(columns) == 1:
        return Grouping((ukeys.astype(np.int32),), counts, inverse)
    # Recover each column's code for every distinct key: take one representative row.
    first = _first_occurrence(key, ukeys, inverse)
    keys = tuple(np.asarray(col)[first].astype(np.int32) for col in columns)
    return Grouping(keys, counts, inverse)


def _first_occurrence(
    key: npt.NDArray[np.int64],
    ukeys: npt.NDArray[np.int64],
    inverse: npt.NDArray[np.int64] | None,
) -> npt.NDArray[np.int64]:
    """Row index of one occurrence of every distinct key (ukeys sorted)."""
    if inverse is None:
        inverse = np.searchsorted(ukeys, key)
    first = np.empty(len(ukeys), dtype=np.int64)
    # Reverse assignment leaves the first occurrence in place (last write wins).
    rows = np.arange(len(key) - 1, -1, -1, dtype=np.int64)
    first[inverse[::-1]] = rows
    return first
