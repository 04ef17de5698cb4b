"""Dictionary-encoded microdata tables (the data model every layer works on).

Every attribute is discrete.  A column is stored once as contiguous ``int32`` codes
plus its dictionary: the distinct values as text, sorted by their text (Unicode code
point order).  Because code order equals value order, sorting rows by codes sorts
them by value, and output keeps the values' original spelling.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import cell_sizes_among
from versapub.errors import InputError

if TYPE_CHECKING:
    from versapub.data.counts import CountTable
    from versapub.data.grouping import Grouping
    from versapub.data.source import PairCounts

CODE_DTYPE = np.int32
Codes = npt.NDArray[np.int32]

#: Column names of the release format's own (``docs/release-format.md``); no attribute may
#: take them, in any letter case (the verifier reads files with SQL, whose names ignore case).
RESERVED_NAMES = ("count", "group_id")

#: The key under which the model keeps a table's latent group next to its attributes; a
#: column name can never equal it (control characters are refused in names).
GROUP_KEY = "\x00group"


def check_names(names: Sequence[str], source: str) -> None:
    """Refuse attribute names the release format reserves or that differ only in case."""
    reserved = [n for n in names if n.strip().lower() in RESERVED_NAMES]
    if reserved:
        raise InputError(
            f"{source}: column name(s) {', '.join(map(repr, reserved))} are reserved by the release format "
            f"(every published table has its own {' and '.join(map(repr, RESERVED_NAMES))} columns). Rename "
            "the column in the file (or select the others with --column) and publish again."
        )
    seen: dict[str, str] = {}
    for n in names:
        other = seen.setdefault(n.lower(), n)
        if other != n:
            raise InputError(
                f"{source}: columns {other!r} and {n!r} differ only in letter case; release files are checked "
                "with SQL, where names ignore case. Rename one of them."
            )


#: :meth:`EncodedTable.count_queries` matches queries against the distinct combinations of
#: the columns they name, weighted by their records, when those are at most this share of the
#: rows (issue 67: 1,000 queries on 1.4M records of 2,083 combinations, 7.0 s -> 0.3 s).
GROUPED_SHARE = 0.25


@dataclass(frozen=True)
class Column:
    """One encoded attribute: ``values[codes[i]]`` is row *i*'s value.

    ``values`` holds each distinct value once, sorted; ``codes`` is a contiguous
    ``int32`` array with entries in ``range(len(values))``.
    """

    name: str
    codes: Codes
    values: npt.NDArray[np.object_]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"A column name must be non-blank text, got {self.name!r}.")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in self.name):
            raise InputError(f"Column name {self.name!r} holds a control character; rename the column.")
        if self.codes.dtype != CODE_DTYPE or self.codes.ndim != 1:
            raise InputError(f"Column {self.name!r}: codes must be a 1-D int32 array.")
        if self.values.ndim != 1:
            raise InputError(f"Column {self.name!r}: the dictionary must be 1-D.")
        if len(self.codes) and (int(self.codes.min()) < 0 or int(self.codes.max()) >= len(self.values)):
            raise InputError(f"Column {self.name!r}: a code lies outside its dictionary.")

    @property
    def cardinality(self) -> int:
        """Number of distinct values (the attribute's domain size)."""
        return len(self.values)

    def decode(self, codes: npt.ArrayLike | None = None) -> npt.NDArray[np.object_]:
        """The values (as text) of ``codes`` (default: every row)."""
        idx = self.codes if codes is None else np.asarray(codes)
        return self.values[idx]

    def counts(self) -> npt.NDArray[np.int64]:
        """Frequency of every dictionary value (``bincount`` of the codes)."""
        return np.bincount(self.codes, minlength=self.cardinality).astype(np.int64)


def encode_values(name: str, raw: Sequence[str] | npt.NDArray[np.object_]) -> Column:
    """Dictionary-encode a sequence of text values into a sorted-dictionary :class:`Column`."""
    arr = np.asarray(raw, dtype=object)
    for v in arr[: min(len(arr), 1000)]:
        if not isinstance(v, str):
            raise InputError(
                f"Column {name!r} holds a non-text value {v!r}; versapub reads every "
                "attribute as text (convert the values to text first)."
            )
    values, inverse = np.unique(arr.astype(str), return_inverse=True)
    return Column(name, inverse.astype(CODE_DTYPE).ravel(), values.astype(object))


def is_missing_value(value: str) -> bool:
    """A cell is *missing* when it is empty or consists of whitespace only."""
    return value.strip() == ""


@dataclass(frozen=True)
class EncodedTable:
    """A microdata table: equally long encoded columns with unique names.

    ``n_dropped`` counts the input rows removed under the ``drop`` missing-value
    policy before encoding (reported, never silent); ``sha256`` is the input file's
    fingerprint when the reader computed it while reading (``None`` otherwise).
    """

    columns: tuple[Column, ...]
    n_dropped: int = 0
    source: str = "<memory>"
    sha256: str | None = None
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.columns:
            raise InputError(f"{self.source}: the table has no columns.")
        names = [c.name for c in self.columns]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(f"{self.source}: duplicate column name(s) {', '.join(map(repr, dup))}.")
        check_names(names, self.source)
        n = len(self.columns[0].codes)
        for c in self.columns:
            if len(c.codes) != n:
                raise InputError(
                    f"{self.source}: column {c.name!r} has {len(c.codes)} rows, "
                    f"column {self.columns[0].name!r} has {n}."
                )
        if n == 0:
            raise InputError(f"{self.source}: the table has no records; there is nothing to publish.")
        object.__setattr__(self, "_index", {c.name: i for i, c in enumerate(self.columns)})

    # -- construction -------------------------------------------------------------
    @classmethod
    def from_columns(
        cls,
        data: Mapping[str, Sequence[str]],
        *,
        missing: str = "error",
        source: str = "<memory>",
    ) -> EncodedTable:
        """Encode text columns (``{name: values}``), applying the missing-value policy.

        ``missing`` is ``"error"`` (default), ``"value"`` (an empty cell is an ordinary
        value) or ``"drop"`` (rows with an empty cell are dropped and counted).
        """
        from versapub.data.missing import MissingPolicy, apply_missing_policy

        policy = MissingPolicy.parse(missing)
        names = list(data)
        if not names:
            raise InputError(f"{source}: the table has no columns.")
        raw = {k: np.asarray(list(v), dtype=object) for k, v in data.items()}
        lengths = {len(v) for v in raw.values()}
        if len(lengths) > 1:
            raise InputError(f"{source}: columns have different lengths {sorted(lengths)}.")
        for k, v in raw.items():
            bad = [x for x in v[: min(len(v), 1000)] if x is not None and not isinstance(x, str)]
            if bad:
                raise InputError(
                    f"Column {k!r} holds a non-text value {bad[0]!r}; versapub reads every "
                    "attribute as text (convert the values to text first)."
                )
            v[np.array([x is None for x in v], dtype=bool)] = ""
        missing_masks = {
            k: np.fromiter((is_missing_value(x) for x in v), dtype=bool, count=len(v)) for k, v in raw.items()
        }
        keep = apply_missing_policy(policy, missing_masks, source)
        n_dropped = int((~keep).sum()) if keep is not None else 0
        cols = tuple(encode_values(k, raw[k] if keep is None else raw[k][keep]) for k in names)
        return cls(cols, n_dropped=n_dropped, source=source)

    # -- access -------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def n_rows(self) -> int:
        return len(self.columns[0].codes)

    def __len__(self) -> int:
        return self.n_rows

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def column(self, name: str) -> Column:
        try:
            return self.columns[self._index[name]]
        except KeyError:
            raise InputError(f"Unknown attribute {name!r}; the table has: {', '.join(self.names)}.") from None

    def codes(self, name: str) -> Codes:
        return self.column(name).codes

    def cardinality(self, name: str) -> int:
        return self.column(name).cardinality

    def select(self, names: Iterable[str]) -> EncodedTable:
        """The table restricted to ``names`` (in that order); codes are shared, not copied."""
        return EncodedTable(
            tuple(self.column(n) for n in names), n_dropped=self.n_dropped, source=self.source, sha256=self.sha256
        )

    def sample(self, n: int, rng: np.random.Generator) -> EncodedTable:
        """``n`` records drawn without replacement (kept in input order); each dictionary
        keeps only the values that occur in the sample."""
        if not 1 <= n <= self.n_rows:
            raise InputError(f"{self.source}: cannot sample {n} of {self.n_rows} records.")
        rows = np.sort(rng.choice(self.n_rows, size=n, replace=False))
        cols = []
        for c in self.columns:
            codes = c.codes[rows]
            present = np.flatnonzero(np.bincount(codes, minlength=c.cardinality))
            rank = np.zeros(c.cardinality, dtype=np.int32)
            rank[present] = np.arange(len(present), dtype=np.int32)
            cols.append(Column(c.name, rank[codes], c.values[present]))
        return EncodedTable(tuple(cols), source=f"{self.source} (sample of {n})")

    def take(self, rows: npt.NDArray[np.integer]) -> EncodedTable:
        """The records at ``rows`` (in that order); every dictionary kept whole, so codes keep
        their meaning (records removed by suppression: ``docs/choices.md``)."""
        cols = tuple(Column(c.name, c.codes[rows], c.values) for c in self.columns)
        return EncodedTable(cols, n_dropped=self.n_dropped, source=self.source, sha256=self.sha256)

    def sample_codes(self, names: Sequence[str], size: int, rng: np.random.Generator) -> dict[str, Codes]:
        """The codes of ``names`` for ``size`` records drawn without replacement (input order;
        every record when there are no more)."""
        n = self.n_rows
        rows = np.sort(rng.choice(n, size=size, replace=False)) if n > size else np.arange(n)
        return {c: self.codes(c)[rows] for c in names}

    def cells_among(
        self, names: Sequence[str], wanted: Mapping[str, npt.NDArray[np.integer]]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """:func:`versapub.data.groupby.cell_sizes_among` of ``wanted``'s rows over ``names``
        in the whole table."""
        return cell_sizes_among([self.codes(c) for c in names], [wanted[c] for c in names])

    def replace(self, column: Column) -> EncodedTable:
        """A table with ``column`` in place of the column of the same name."""
        i = self._index[column.name]
        cols = (*self.columns[:i], column, *self.columns[i + 1 :])
        return EncodedTable(cols, n_dropped=self.n_dropped, source=self.source, sha256=self.sha256)

    # -- the backend seam (versapub.data.source): what the pipeline asks of a table ------
    #: The table is in memory (its codes can be read; ``Source.in_memory``).
    in_memory = True

    def count_table(self, names: Sequence[str]) -> CountTable:
        """``SELECT names..., COUNT(*) GROUP BY names``."""
        from versapub.data.counts import count_table

        return count_table(self, names)

    def grouped_count_tables(
        self, grouping: Grouping, layouts: Sequence[Sequence[str]], rng: np.random.Generator
    ) -> list[CountTable]:
        """Records grouped by ``grouping`` (:mod:`versapub.data.grouping`), one count table
        per layout (names, with ``group_id`` where the group column goes)."""
        from versapub.data.counts import grouped_count_tables

        return grouped_count_tables(self, grouping, layouts, rng)

    def pair_counts(self, pairs: Sequence[tuple[str, str]]) -> list[PairCounts]:
        """Per pair of attributes, their distinct code pairs and the records of each."""
        from versapub.data.groupby import group_rows
        from versapub.data.parallel import map_ordered

        def one(pair: tuple[str, str]) -> PairCounts:  # independent pairs: on every core (data.parallel)
            a, b = pair
            g = group_rows([self.codes(a), self.codes(b)], [self.cardinality(a), self.cardinality(b)])
            return g.keys[0].astype(np.int64), g.keys[1].astype(np.int64), g.counts.astype(np.int64)

        return map_ordered(one, list(pairs))

    def count_queries(self, queries: Sequence[Mapping[str, npt.NDArray[np.int64]]]) -> npt.NDArray[np.int64]:
        """Per query (``{attribute: allowed codes}``), the records it counts."""
        from versapub.data.counts import match_weights
        from versapub.data.groupby import group_rows

        cols = {a: self.codes(a) for q in queries for a in q}
        cards = {a: self.cardinality(a) for a in cols}
        if cols and len(queries) > 1:
            # distinct combinations, not rows, as the unit: every query matched against the
            # table's combinations of the columns any query names, each weighted by its records
            g = group_rows(list(cols.values()), list(cards.values()))
            if len(g.counts) <= GROUPED_SHARE * self.n_rows:
                distinct = {a: np.asarray(k, dtype=np.int64) for a, k in zip(cols, g.keys, strict=True)}
                return np.rint(match_weights(distinct, g.counts, queries, cards)).astype(np.int64)
        return match_weights(cols, None, queries, cards).astype(np.int64)

    def register_duckdb(self, con: Any) -> None:
        """The table for DuckDB (the verifier): ``original_codes`` (the codes) and a table
        ``dict_<attribute>`` (``value``, ``code``) per attribute."""
        import pyarrow as pa

        from versapub.data.arrow import array_of, string_array

        con.register("original_codes", pa.table({c.name: array_of(c.codes) for c in self.columns}))
        for c in self.columns:
            codes = array_of(np.arange(c.cardinality, dtype=np.int64))
            con.register(f"dict_{c.name}", pa.table({"value": string_array(c.values.astype(str)), "code": codes}))

    @property
    def nbytes(self) -> int:
        """Bytes held by the code arrays (the encoded table's size)."""
        return sum(c.codes.nbytes for c in self.columns)

    def to_pydict(self) -> dict[str, list[str]]:
        """Decoded values per column (for small tables, tests and display)."""
        return {c.name: [str(v) for v in c.decode()] for c in self.columns}
