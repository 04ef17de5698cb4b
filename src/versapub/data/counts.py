"""Count tables: duplicate-free ``(values..., count)`` tables, the only form in which
versapub publishes data (so no row order can link tables to each other or to the input)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from versapub.data.arrow import array_of, string_array
from versapub.data.groupby import group_rows
from versapub.data.grouping import GROUP_ID, Grouping
from versapub.data.parallel import map_ordered, pieces, threads

if TYPE_CHECKING:
    from versapub.data.histograms import GroupTest

#: Rows per written batch: text is materialized one batch at a time.
WRITE_BATCH = 1 << 17
#: Queries run in threads over tables of at least this many rows (below, a thread costs more than it saves).
PARALLEL_ROWS = 1 << 15


class Coded(Protocol):
    """What counting asks of a table (an :class:`~versapub.data.table.EncodedTable`): its
    codes, their cardinality and each column's values."""

    def codes(self, name: str) -> npt.NDArray[Any]: ...

    def cardinality(self, name: str) -> int: ...

    def column(self, name: str) -> Any: ...


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

    def cell_sizes(self, names: Sequence[str]) -> dict[int, int]:
        """``{records: cells}`` over the distinct combinations of ``names`` (the other
        columns summed out): how many cells hold each number of records."""
        if not names:
            return {self.total: 1}
        idx = [self.names.index(c) for c in names]
        g = group_rows(
            [self.codes[i] for i in idx],
            [int(self.codes[i].max()) + 1 if self.n_rows else 1 for i in idx],
            with_inverse=True,
        )
        assert g.inverse is not None
        sizes = np.bincount(g.inverse, weights=self.counts, minlength=len(g.counts)).astype(np.int64)
        v, c = np.unique(sizes, return_counts=True)
        return {int(a): int(b) for a, b in zip(v, c, strict=True)}

    def group_summary(self, guarantee: GroupTest, value: str, group: str = GROUP_ID) -> GroupSummary:
        """The groups of column ``group`` with their histograms of ``value`` against ``guarantee``."""
        from versapub.data.histograms import Histograms

        gi = self.column(group).astype(np.int64)
        n_groups = int(gi.max()) + 1 if self.n_rows else 0
        h = Histograms(gi, self.counts, n_groups, self.column(value).astype(np.int64))
        ok = np.asarray(guarantee.groups_satisfied(h))
        sizes = h.sizes()
        v, c = np.unique(sizes, return_counts=True)
        return GroupSummary(
            n_groups,
            int((~ok).sum()),
            float(guarantee.achieved(h)),
            {int(a): int(b) for a, b in zip(v, c, strict=True)},
        )

    def marginal(self, name: str) -> npt.NDArray[np.int64]:
        """Records per code of column ``name`` (the others summed out)."""
        j = self.names.index(name)
        card = len(d) if (d := self.dictionaries[j]) is not None else int(self.codes[j].max(initial=-1)) + 1
        return np.bincount(self.codes[j], weights=self.counts, minlength=card).astype(np.int64)

    def weighted_queries(self, queries: Sequence[Mapping[str, npt.NDArray[np.int64]]]) -> npt.NDArray[np.float64]:
        """Per query (``{attribute: allowed codes}``), the records of the rows whose values
        every condition on this table's columns allows (conditions on others are ignored)."""
        return match_weights(
            {n: self.codes[i] for i, n in enumerate(self.names)},
            self.counts,
            queries,
            {n: self._card(n) for n in self.names},
        )

    def paired_queries(
        self,
        other: CountTable,
        mine: Sequence[Mapping[str, npt.NDArray[np.int64]]],
        theirs: Sequence[Mapping[str, npt.NDArray[np.int64]]],
        group: str = GROUP_ID,
    ) -> npt.NDArray[np.float64]:
        """Per query pair: ``Σ_g a_g b_g / |g|`` — ``a_g`` this table's records of group ``g``
        that ``mine[i]`` allows, ``b_g`` those of ``other`` that ``theirs[i]`` allows,
        ``|g|`` the group's records in ``other`` (an Anatomy QIT and ST)."""
        return paired_weights(
            {n: self.codes[i] for i, n in enumerate(self.names)},
            self.counts,
            {n: other.codes[i] for i, n in enumerate(other.names)},
            other.counts,
            mine,
            theirs,
            group,
            {**{n: self._card(n) for n in self.names}, **{n: other._card(n) for n in other.names}},
        )

    def register_duckdb(self, con: Any, name: str) -> None:
        """The table's codes and counts as the DuckDB relation ``name``."""
        con.register(
            name, pa.table({**{n: c for n, c in zip(self.names, self.codes, strict=True)}, "count": self.counts})
        )

    def _card(self, name: str) -> int:
        j = self.names.index(name)
        d = self.dictionaries[j]
        return len(d) if d is not None else int(self.codes[j].max(initial=-1)) + 1

    def _batches(self) -> Iterator[pa.RecordBatch]:
        dicts = [None if v is None else string_array(v.astype(str)) for v in self.dictionaries]
        names = [*self.names, "count"]
        for lo in range(0, max(self.n_rows, 1), WRITE_BATCH):
            hi = min(lo + WRITE_BATCH, self.n_rows)
            arrays = []
            for codes, values in zip(self.codes, dicts, strict=True):
                chunk = array_of(codes[lo:hi])
                arrays.append(chunk.cast(pa.int64()) if values is None else values.take(chunk))
            arrays.append(array_of(np.asarray(self.counts[lo:hi], dtype=np.int64)))
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
    table: Coded,
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
    table: Coded, grouping: Grouping, layouts: Sequence[Sequence[str]], rng: np.random.Generator
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


Queries = Sequence[Mapping[str, npt.NDArray[np.int64]]]


def _luts(queries: Queries, cards: Mapping[str, int]) -> list[dict[str, npt.NDArray[np.bool_]]]:
    out = []
    for q in queries:
        luts = {}
        for a, vals in q.items():
            if a in cards:
                lut = np.zeros(cards[a], dtype=bool)
                lut[np.asarray(vals, dtype=np.int64)] = True
                luts[a] = lut
        out.append(luts)
    return out


def _mask_into(
    mask: npt.NDArray[np.bool_],
    spare: npt.NDArray[np.bool_],
    luts: Mapping[str, npt.NDArray[np.bool_]],
    columns: Mapping[str, npt.NDArray[np.integer]],
) -> None:
    """``mask`` := the rows every lookup table allows, in place (``spare``: scratch of the
    same length). No array is allocated per query: a Dask worker's allocator returns freed
    memory to the system at once (``MALLOC_TRIM_THRESHOLD_``), which made a fresh mask per
    query three times slower there."""
    mask.fill(True)
    for a, lut in luts.items():
        np.take(lut, columns[a], out=spare)
        mask &= spare


def match_weights(
    columns: Mapping[str, npt.NDArray[np.integer]],
    weights: npt.NDArray[np.integer] | None,
    queries: Queries,
    cards: Mapping[str, int],
) -> npt.NDArray[np.float64]:
    """Per query: the weight (records) of the rows every condition on ``columns`` allows
    (``weights`` None: one record per row)."""
    n = len(next(iter(columns.values()))) if columns else 0
    out = np.zeros(len(queries), dtype=np.float64)
    w = None if weights is None else weights.astype(np.float64)
    all_luts = _luts(queries, cards)

    def answer(part: range) -> None:  # one piece of the queries, in one thread (data.parallel)
        mask, spare = np.empty(n, dtype=bool), np.empty(n, dtype=bool)
        for i in part:
            _mask_into(mask, spare, all_luts[i], columns)
            out[i] = float(np.count_nonzero(mask)) if w is None else float(np.sum(w, where=mask))

    map_ordered(answer, pieces(len(queries), threads()) if n >= PARALLEL_ROWS else [range(len(queries))])
    return out


def paired_weights(
    left: Mapping[str, npt.NDArray[np.integer]],
    left_w: npt.NDArray[np.integer],
    right: Mapping[str, npt.NDArray[np.integer]],
    right_w: npt.NDArray[np.integer],
    mine: Queries,
    theirs: Queries,
    group: str,
    cards: Mapping[str, int],
) -> npt.NDArray[np.float64]:
    """:meth:`CountTable.paired_queries` on arrays (the groups of both sides in one id space)."""
    ids, inv = np.unique(np.concatenate([left[group], right[group]]), return_inverse=True)
    inv = inv.astype(np.int64).ravel()
    gl, gr = inv[: len(left_w)], inv[len(left_w) :]
    size = np.bincount(gr, weights=right_w, minlength=len(ids))
    out = np.zeros(len(mine), dtype=np.float64)
    lm, rm = _luts(mine, cards), _luts(theirs, cards)
    ml, ms = np.empty(len(left_w), dtype=bool), np.empty(len(left_w), dtype=bool)
    mr, rs = np.empty(len(right_w), dtype=bool), np.empty(len(right_w), dtype=bool)
    lw, rw = left_w.astype(np.float64), right_w.astype(np.float64)
    wl, wr = np.empty(len(left_w)), np.empty(len(right_w))
    inv_size = np.divide(1.0, size, out=np.zeros(len(ids)), where=size > 0)
    for i in range(len(mine)):
        _mask_into(ml, ms, lm[i], left)
        _mask_into(mr, rs, rm[i], right)
        np.multiply(lw, ml, out=wl)
        np.multiply(rw, mr, out=wr)
        a_g = np.bincount(gl, weights=wl, minlength=len(ids))
        b_g = np.bincount(gr, weights=wr, minlength=len(ids))
        out[i] = float(np.dot(a_g * b_g, inv_size))
    return out
