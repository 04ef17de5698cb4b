"""Local suppression of key values until every cell of the key variables holds ``k`` records
(sdcMicro's ``localSuppression``/``kAnon``; ``--suppression-mode cells``, issue 65).

A suppressed value is published as the missing value (empty) and read as sdcMicro reads it
with ``alpha = 1``: it *matches any value*.  A record's cell size ``f_i`` is the number of
records compatible with it — equal on every key where neither is missing
(:func:`~versapub.privacy.risk.missing_match.compatible_sizes`); suppressing a value never
lowers any record's ``f_i``, so a table that holds ``k`` keeps holding it whatever is
suppressed later, and the tables of a release are treated one after the other.

The heuristic works on distinct combinations, not records (every record of a combination is
treated alike), in passes as sdcMicro's: each pass measures every combination's size with
each key left out in turn (what suppressing that key alone would give, a lower bound — other
suppressions of the pass only add matches) and suppresses, in every short combination, the
*least important* key whose suppression alone reaches ``k``; where none does, the key that
brings it closest (ties: the less important).  Importance is the steward's order (most
important first, suppressed last); without one, sdcMicro's default: a key with more distinct
values is less important.  A pass suppresses one value per short combination; passes repeat
until none is short.  Then a restoring sweep takes back, most important key first, every
suppression the cells can spare (a suppression made in a pass whose other suppressions
already met ``k``): the count is compared with sdcMicro's in ``benchmarks/keys.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.data.table import Column, EncodedTable
from versapub.errors import InfeasibleError
from versapub.privacy.risk.missing_match import compatible_sizes

IntArray = npt.NDArray[np.int64]
#: The published missing value (an empty cell).
MISSING = ""
#: A restoring sweep tries at most this many distinct suppressed combinations (each try is one
#: comparison with every combination); beyond, the suppressions stand as the passes made them.
RESTORE_MAX = 20_000


@dataclass(frozen=True)
class Suppressed:
    """What local suppression did: the table with the suppressed values empty, per column
    the values suppressed (cells), and the records with at least one suppressed value."""

    table: EncodedTable
    cells: Mapping[str, int]
    records: int

    def to_manifest(self, k: int, keys: Sequence[Sequence[str]]) -> dict[str, object]:
        """The manifest's ``suppressed`` block (docs/release-format.md)."""
        return {
            "mode": "cells",
            "k": k,
            "reading": "matches any value",
            "cells": {a: int(n) for a, n in self.cells.items() if n},
            "records": int(self.records),
            "keys": [list(s) for s in keys],
        }


def importance_order(table: EncodedTable, columns: Sequence[str], given: Sequence[str] = ()) -> list[str]:
    """``columns`` from the one suppressed first (least important) to the one suppressed
    last: the reverse of ``given`` (most important first) for the columns it names, after
    every column it does not name ordered by sdcMicro's default (more distinct values: less
    important, suppressed first; ties by position)."""
    named = [a for a in given if a in columns]
    rest = sorted((a for a in columns if a not in named), key=lambda a: (-table.cardinality(a), columns.index(a)))
    return [*rest, *reversed(named)]


class _Cells:
    """The distinct combinations of the key columns, their codes (the missing value a code
    of its own per column) and their records."""

    def __init__(self, table: EncodedTable, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.missing: list[int] = []
        codes = []
        for a in self.columns:
            col = table.column(a)
            where = np.flatnonzero(col.values == MISSING)
            self.missing.append(int(where[0]) if len(where) else col.cardinality)
            codes.append(col.codes)
        self.cards = [table.cardinality(a) + 1 for a in self.columns]
        g = group_rows(codes, self.cards, with_inverse=True)
        assert g.inverse is not None
        self.inverse = g.inverse
        self.codes = np.stack([k.astype(np.int64) for k in g.keys])  # (columns, combinations)
        self.counts = g.counts.astype(np.int64)
        self.start = self.codes.copy()

    def sizes(self, cols: Sequence[int]) -> IntArray:
        """Per combination, the records compatible with it on the columns ``cols``."""
        return compatible_sizes(
            [self.codes[j] for j in cols], [self.cards[j] for j in cols], [self.missing[j] for j in cols], self.counts
        )

    def is_missing(self, j: int) -> npt.NDArray[np.bool_]:
        return np.asarray(self.codes[j] == self.missing[j])


def suppress_cells(
    table: EncodedTable,
    tables: Sequence[Sequence[str]],
    k: int,
    suppressible: frozenset[str],
    importance: Sequence[str] = (),
) -> Suppressed:
    """``table`` with key values suppressed until, in every column set of ``tables`` (each
    table's key columns), every record is compatible with at least ``k`` records; only the
    ``suppressible`` columns are touched (a rule's sensitive attribute stays).  Refused
    (:class:`InfeasibleError`) when a combination stays short with every suppressible key of
    its table suppressed."""
    every = sorted({a for cols in tables for a in cols}, key=table.names.index)
    if not every or k <= 1:
        return Suppressed(table, {}, 0)
    cells = _Cells(table, every)
    order = importance_order(table, [a for a in every if a in suppressible], importance)
    rank = {a: i for i, a in enumerate(order)}  # 0: suppressed first
    sets = [[every.index(a) for a in cols] for cols in tables if cols]
    for cols in sets:
        _meet(cells, cols, k, [j for j in cols if every[j] in rank], rank, every)
    _restore(cells, sets, k, sorted(rank, key=lambda a: -rank[a]), every)
    return _result(table, cells, every)


def _meet(cells: _Cells, cols: list[int], k: int, free: list[int], rank: Mapping[str, int], names: list[str]) -> None:
    """Passes over one table's columns until every combination holds ``k``."""
    while True:
        size = cells.sizes(cols)
        short = np.flatnonzero(size < k)
        if not len(short):
            return
        # what suppressing each key alone would give every short combination (-1: already empty)
        gain = np.full((len(free), len(short)), -1, dtype=np.int64)
        for i, j in enumerate(free):
            can = ~cells.is_missing(j)[short]
            left = [c for c in cols if c != j]
            alone = cells.sizes(left)[short] if left else np.full(len(short), int(cells.counts.sum()))
            gain[i] = np.where(can, alone, -1)
        by_rank = np.argsort([rank[names[j]] for j in free], kind="stable")  # least important first
        gain = gain[by_rank]
        if not len(free) or (gain < 0).all(axis=0).any():
            stuck = short if not len(free) else short[(gain < 0).all(axis=0)]
            _infeasible(names, cols, k, int(size[stuck].min()))
        reaches = gain >= k
        first = np.where(reaches.any(axis=0), reaches.argmax(axis=0), _closest(gain))
        chosen = np.asarray(free, dtype=np.int64)[by_rank][first]
        cells.codes[chosen, short] = np.asarray(cells.missing)[chosen]


def _infeasible(names: list[str], cols: list[int], k: int, size: int) -> None:
    raise InfeasibleError(
        f"local suppression cannot bring every cell of ({', '.join(names[j] for j in cols)}) to k = {k}: with "
        f"every key that may be suppressed left empty, a cell holds {size} record(s) (the other keys are a rule's "
        "protected attribute). Lower --k, name fewer --keys, or remove records instead (--suppression-mode remove "
        "with --suppression)."
    )


def _closest(gain: IntArray) -> IntArray:
    """Per column of ``gain`` (rows: keys, least important first), the row of the largest
    size, the first (least important) among equals."""
    return np.asarray(np.argmax(gain == gain.max(axis=0, keepdims=True), axis=0))


def _restore(cells: _Cells, sets: list[list[int]], k: int, order: list[str], names: list[str]) -> None:
    """Take back suppressions the cells can spare, most important key first: a combination's
    value is restored when, with it back, the combination and every combination it stops
    matching still hold ``k`` in every table holding the column.  The candidates are first
    sized all at once (each restored alone, its own size); the survivors are tried one by
    one against the sizes kept up to date."""
    sizes = {tuple(cols): cells.sizes(cols) for cols in sets}
    tried = 0
    for a in order:
        j = names.index(a)
        mine = [cols for cols in sets if j in cols]
        done = np.flatnonzero((cells.codes[j] != cells.start[j]) & (cells.start[j] != cells.missing[j]))
        for cols in mine:
            done = done[_own_sizes(cells, cols, done, j) >= k]
        for r in done.tolist():
            if tried >= RESTORE_MAX:
                return
            tried += 1
            changes = [_spare(cells, cols, sizes[tuple(cols)], k, r, j) for cols in mine]
            if all(c is not None for c in changes):
                cells.codes[j, r] = cells.start[j, r]
                for cols, change in zip(mine, changes, strict=True):
                    assert change is not None
                    size = sizes[tuple(cols)]
                    size[change[0]] -= cells.counts[r]
                    size[r] = change[1]


def _own_sizes(cells: _Cells, cols: list[int], rows: IntArray, j: int) -> IntArray:
    """Each of ``rows``'s size with its value of column ``j`` restored, the others as they
    are (the rows as extra combinations holding no record)."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    queries = cells.codes[:, rows].copy()
    queries[j] = cells.start[j, rows]
    both = np.concatenate([cells.codes, queries], axis=1)
    counts = np.concatenate([cells.counts, np.zeros(len(rows), dtype=np.int64)])
    got = compatible_sizes(
        [both[c] for c in cols], [cells.cards[c] for c in cols], [cells.missing[c] for c in cols], counts
    )
    mine = got[len(cells.counts) :]
    # a query is compatible with its own row (suppressed there): count the row once, as restored
    return np.asarray(mine, dtype=np.int64)


def _spare(cells: _Cells, cols: list[int], size: IntArray, k: int, r: int, j: int) -> tuple[IntArray, int] | None:
    """With combination ``r``'s value of column ``j`` restored, do ``r`` and every
    combination that matched ``r`` only through the suppressed value still hold ``k``
    (``size``: every combination's size now)?  The combinations that stop matching and
    ``r``'s new size; ``None``: not spared."""
    # the rows that could match: those equal (or empty) on r's most varied non-empty key, then all keys
    set_ = [c for c in cols if cells.codes[c, r] != cells.missing[c]]
    if set_:
        c0 = max(set_, key=lambda c: cells.cards[c])
        near = np.flatnonzero((cells.codes[c0] == cells.codes[c0, r]) | (cells.codes[c0] == cells.missing[c0]))
    else:  # every key of r is empty: r matches every combination
        near = np.arange(len(cells.counts))
    codes, miss = cells.codes[np.ix_(np.asarray(cols, dtype=np.int64), near)], np.asarray(cells.missing)[cols][:, None]
    row = cells.codes[cols, r][:, None]
    match = ((codes == row) | (codes == miss) | (row == miss)).all(axis=0)
    jj = cols.index(j)
    value = cells.start[j, r]
    after = match & ((codes[jj] == value) | (codes[jj] == cells.missing[j]))
    own = int(cells.counts[near[after]].sum())
    lost = near[match & ~after]
    if own < k or (len(lost) and (size[lost] - cells.counts[r] < k).any()):
        return None
    return lost, own


def _result(table: EncodedTable, cells: _Cells, names: list[str]) -> Suppressed:
    """The table with every suppressed value empty, and the counts."""
    counts: dict[str, int] = {}
    hit = np.zeros(len(cells.counts), dtype=bool)
    for j, a in enumerate(names):
        now = cells.codes[j] == cells.missing[j]
        new = now & (cells.start[j] != cells.missing[j])
        counts[a] = int(cells.counts[new].sum())
        hit |= new
        if not new.any():
            continue
        col = table.column(a)
        gone = new[cells.inverse]
        if MISSING in set(col.values.tolist()):
            codes = np.where(gone, cells.missing[j], col.codes).astype(col.codes.dtype)
            table = table.replace(Column(a, codes, col.values))
        else:  # "" sorts before every other value: codes shift by one
            values = np.concatenate([np.array([MISSING], dtype=object), col.values])
            codes = np.where(gone, 0, col.codes + 1).astype(col.codes.dtype)
            table = table.replace(Column(a, codes, values))
    return Suppressed(table, counts, int(cells.counts[hit].sum()))


__all__ = ["MISSING", "RESTORE_MAX", "Suppressed", "importance_order", "suppress_cells"]
