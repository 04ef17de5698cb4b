"""Count tables: duplicate-free ``(values..., count)`` tables, the only form in which
versapub publishes data (so no row order can link tables to each other or to the input)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from versapub.data.groupby import group_rows
from versapub.data.grouping import GROUP_ID, Grouping
from versapub.data.table import EncodedTable

if TYPE_CHECKING:
    from versapub.privacy.base import Guarantee

#: Rows per written batch: text is materialized one batch at a time.
WRITE_BATCH = 1 << 17


@dataclass(frozen=True)
class GroupSummary:
    """Groups of a grouped count table checked against a guarantee: how many fail, the
    guarantee's measure of the weakest (:meth:`Guarantee.achieved`), and ``{size: groups}``."""

    n_groups: int
    failing: int
    achieved: float | None
    sizes: dict[int, int]


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

    def cell_counts(self, names: Sequence[str]) -> npt.NDArray[np.int64]:
        """Records per distinct combination of ``names`` (the other columns summed out)."""
        if not names:
            return np.array([self.total], dtype=np.int64)
        idx = [self.names.index(c) for c in names]
        g = group_rows([self.codes[i] for i in idx], [int(self.codes[i].max()) + 1 if self.n_rows else 1 for i in idx],
                       with_inverse=True)  # fmt: skip
        assert g.inverse is not None
        return np.bincount(g.inverse, weights=self.counts, minlength=len(g.counts)).astype(np.int64)

    def group_summary(self, guarantee: Guarantee, value: str, group: str = GROUP_ID) -> GroupSummary:
        """The groups of column ``group`` with their histograms of ``value`` against ``guarantee``."""
        from versapub.privacy.base import Histograms

        gi = self.column(group).astype(np.int64)
        n_groups = int(gi.max()) + 1 if self.n_rows else 0
        h = Histograms(gi, self.counts, n_groups, self.column(value).astype(np.int64))
        ok = np.asarray(guarantee.groups_satisfied(h))
        sizes = h.sizes()
        v, c = np.unique(sizes, return_counts=True)
        return GroupSummary(n_groups, int((~ok).sum()), float(guarantee.achieved(h)),
                            {int(a): int(b) for a, b in zip(v, c, strict=True)})  # fmt: skip

    def _batches(self) -> Iterator[pa.RecordBatch]:
        dicts = [None if v is None else pa.array(v.astype(str), type=pa.string()) for v in self.dictionaries]
        names = [*self.names, "count"]
        for lo in range(0, max(self.n_rows, 1), WRITE_BATCH):
            hi = min(lo + WRITE_BATCH, self.n_rows)
            arrays = []
            for codes, values in zip(self.codes, dicts, strict=True):
                chunk = pa.array(codes[lo:hi])
                arrays.append(chunk.cast(pa.int64()) if values is None else values.take(chunk))
            arrays.append(pa.array(self.counts[lo:hi], type=pa.int64()))
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    def write(self, path: Path, fmt: str) -> None:
        """The table as one CSV or Parquet file (values decoded, ``count`` last)."""
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        batches = self._batches()
        first = next(batches)
        if fmt == "parquet":
            with pq.ParquetWriter(path, first.schema) as pw:
                pw.write_batch(first)
                for b in batches:
                    pw.write_batch(b)
        else:
            opts = pacsv.WriteOptions(quoting_style="needed")
            with pacsv.CSVWriter(path, first.schema, write_options=opts) as cw:
                cw.write_batch(first)
                for b in batches:
                    cw.write_batch(b)


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


def grouped_count_tables(
    table: EncodedTable, grouping: Grouping, layouts: Sequence[Sequence[str]], rng: np.random.Generator
) -> list[CountTable]:
    """In memory: every record's group (ranks inside its bucket from one shuffle of the
    records, then a random relabelling of the groups) and one count table per layout
    (attribute names, with :data:`GROUP_ID` where the group column goes)."""
    s = table.codes(grouping.sensitive)
    n = len(s)
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(s[shuffled], kind="stable")]  # bucket after bucket, random inside
    bucket = s[order].astype(np.int64)
    rank = np.arange(n, dtype=np.int64) - grouping.start[bucket]
    group = np.empty(n, dtype=np.int64)
    group[order] = grouping.of(bucket, rank)
    group = rng.permutation(grouping.n_groups).astype(np.int64)[group]  # ids are not creation order
    out = []
    for layout in layouts:
        cols = [group if a == GROUP_ID else table.codes(a) for a in layout]
        cards = [grouping.n_groups if a == GROUP_ID else table.cardinality(a) for a in layout]
        g = group_rows(cols, cards)
        dicts = tuple(None if a == GROUP_ID else table.column(a).values for a in layout)
        out.append(CountTable(tuple(layout), g.keys, dicts, g.counts))
    return out
