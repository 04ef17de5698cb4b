"""Count tables: duplicate-free ``(values..., count)`` tables, the only form in which
versapub publishes data (so no row order can link tables to each other or to the input)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable


@dataclass(frozen=True)
class CountTable:
    """Columns of codes plus a ``count`` column, rows in value order (lexicographically by
    code, since dictionaries are sorted; a generalized table orders its rows by text).

    ``dictionaries[j]`` decodes column *j* (``None``: the column is an integer such as
    ``group_id``, published as is).  Validated: equal lengths, positive counts.
    """

    names: tuple[str, ...]
    codes: tuple[npt.NDArray[np.int32], ...]
    dictionaries: tuple[npt.NDArray[np.object_] | None, ...]
    counts: npt.NDArray[np.int64]

    def __post_init__(self) -> None:
        if not (len(self.names) == len(self.codes) == len(self.dictionaries)):
            raise ValueError("CountTable: names, codes and dictionaries differ in number")
        for c in self.codes:
            if len(c) != len(self.counts):
                raise ValueError("CountTable: a column and the counts differ in length")
        if len(self.counts) and int(self.counts.min()) <= 0:
            raise ValueError("CountTable: counts must be positive")

    @property
    def n_rows(self) -> int:
        return len(self.counts)

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def column(self, name: str) -> npt.NDArray[np.int32]:
        return self.codes[self.names.index(name)]

    def decoded(self, name: str) -> npt.NDArray[np.object_] | npt.NDArray[np.int32]:
        j = self.names.index(name)
        d = self.dictionaries[j]
        return self.codes[j] if d is None else d[self.codes[j]]


def count_table(
    table: EncodedTable,
    names: Sequence[str],
    extra: Sequence[tuple[str, npt.NDArray[np.integer], int]] = (),
) -> CountTable:
    """``SELECT names..., extra..., COUNT(*) GROUP BY ...`` over ``table``.

    ``extra`` adds integer columns (name, per-row values, cardinality), e.g. ``group_id``.
    """
    cols = [table.codes(n) for n in names] + [e[1] for e in extra]
    cards = [table.cardinality(n) for n in names] + [e[2] for e in extra]
    g = group_rows(cols, cards)
    dicts = tuple(table.column(n).values for n in names) + tuple(None for _ in extra)
    return CountTable((*names, *(e[0] for e in extra)), g.keys, dicts, g.counts)
