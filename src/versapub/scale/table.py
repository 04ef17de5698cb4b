"""A table on a Dask cluster, behind the backend seam (:mod:`versapub.data.source`).

The records live in a scratch Parquet dataset of ``int32`` codes (one part per input
partition, global dictionaries: :mod:`versapub.scale.read`); only dictionaries and value
counts are ever in the client's memory.  A count table is *materialized* into the scratch
directory: counted inside every partition, shuffled (hash-partitioned on its ``key``
columns, so equal keys meet in one part), counted again and sorted inside each part —
one shuffle per table, and rows in value order inside every part.  Anatomy's grouped
tables are keyed on ``group_id``, so a QIT part and the ST part of the same number hold
the same groups and a group's checks and model need no further shuffle.
"""

from __future__ import annotations

import math
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from versapub.data.counts import GroupSummary
from versapub.data.groupby import cell_sizes_among, group_rows
from versapub.data.grouping import GROUP_ID, Grouping
from versapub.data.source import PairCounts
from versapub.errors import ConfigError, InputError
from versapub.scale.cluster import Runner

if TYPE_CHECKING:
    import duckdb

    from versapub.data.histograms import GroupTest

IntArray = npt.NDArray[np.int64]
#: Records per part of a materialized count table (the shuffle's output partitions).
ROWS_PER_PART = 4_000_000
#: A DaskTable small enough to be listed record by record (``to_pydict``: the exact attack).
PYDICT_MAX_ROWS = 100_000


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def parquet_glob(directory: Path) -> str:
    """A DuckDB source reading every part of a Parquet directory."""
    return f"read_parquet({_lit(directory / '*.parquet')})"


@dataclass(frozen=True)
class ColumnStats:
    """An attribute's global dictionary and value counts (no codes: they stay on the cluster)."""

    name: str
    values: npt.NDArray[np.object_]
    value_counts: IntArray

    @property
    def cardinality(self) -> int:
        return len(self.values)

    def counts(self) -> IntArray:
        return self.value_counts


# -- work done inside the workers (module-level functions: pickled by reference) ---------------
def _count(df: Any, names: Sequence[str], cards: Sequence[int]) -> Any:
    """``names..., count`` of one partition: its rows counted (a ``count`` column weights them),
    sorted by value (codes)."""
    import pandas as pd

    weight = df["count"].to_numpy(dtype=np.int64) if "count" in df.columns else None
    if not len(df):
        return pd.DataFrame({**{n: np.zeros(0, np.int32) for n in names}, "count": np.zeros(0, np.int64)})
    g = group_rows([df[n].to_numpy() for n in names], list(cards), with_inverse=weight is not None)
    counts = g.counts if weight is None else np.bincount(g.inverse, weights=weight, minlength=len(g.counts))  # type: ignore[arg-type]
    out = {n: k.astype(np.int32) for n, k in zip(names, g.keys, strict=True)}
    out["count"] = np.asarray(counts, dtype=np.int64)
    return pd.DataFrame(out)


def _assign(df: Any, grouping: Grouping, offsets: IntArray, relabel: npt.NDArray[np.int32], seed: int, p: int) -> Any:
    """Partition ``p``'s records with their group: each record's rank inside its bucket from
    a seeded random key ranked inside the partition, plus the partition's offset in the
    bucket (``offsets[p]``)."""
    s = df[grouping.sensitive].to_numpy().astype(np.int64)
    key = np.random.default_rng([seed, p]).random(len(s))
    order = np.lexsort((key, s))
    b = s[order]
    first = np.searchsorted(b, b, side="left")  # each bucket's first position in the sorted partition
    rank = np.empty(len(s), dtype=np.int64)
    rank[order] = np.arange(len(s), dtype=np.int64) - first + offsets[p][b]
    out = df.copy()
    out[GROUP_ID] = relabel[grouping.of(s, rank)].astype(np.int32)
    return out


def _read_part(file: str, columns: Sequence[str] | None) -> Any:
    """One Parquet part as a pandas frame (numpy dtypes: the codes are never missing)."""
    import pyarrow.parquet as pq

    return pq.read_table(file, columns=None if columns is None else list(columns)).to_pandas()


def part_frames(directory: Path, columns: Sequence[str] | None = None) -> list[Any]:
    """A Parquet directory as one delayed frame per file, in file order — never
    ``dd.read_parquet``, whose projection may fuse files into fewer partitions (a part's
    number must stay the same for every column set: :meth:`DaskTable.grouped_count_tables`
    ranks records per part)."""
    from dask import delayed

    return [delayed(_read_part)(str(f), columns) for f in sorted(directory.glob("*.parquet"))]


def from_parts(directory: Path, names: Sequence[str], dtypes: dict[str, str]) -> Any:
    """:func:`part_frames` as one Dask DataFrame of the columns ``names`` (one partition per file)."""
    import dask.dataframe as dd
    import pandas as pd

    meta = pd.DataFrame({n: pd.Series([], dtype=dtypes.get(n, "int32")) for n in names})
    return dd.from_delayed(part_frames(directory, names), meta=meta, verify_meta=False)


def _part_take(file: str, names: Sequence[str], rows: IntArray) -> dict[str, IntArray]:
    df = _read_part(file, names)
    return {n: df[n].to_numpy()[rows] for n in names}


def _part_cells_among(df: Any, names: Sequence[str], wanted: Sequence[IntArray]) -> IntArray:
    return cell_sizes_among([df[n].to_numpy() for n in names], wanted)[1]


def _bincounts(df: Any, cols: Sequence[str], cards: Sequence[int]) -> dict[str, IntArray]:
    return {c: np.bincount(df[c].to_numpy(), minlength=k).astype(np.int64) for c, k in zip(cols, cards, strict=True)}


def _pair_part(df: Any, pairs: Sequence[tuple[str, str, int]]) -> list[tuple[IntArray, IntArray]]:
    """One partition's joint counts of each pair ``(a, b, |b|)`` (keys ``a * |b| + b``)."""
    out = []
    for a, b, card_b in pairs:
        key = df[a].to_numpy().astype(np.int64) * card_b + df[b].to_numpy().astype(np.int64)
        uniq, counts = np.unique(key, return_counts=True)
        out.append((uniq.astype(np.int64), counts.astype(np.int64)))
    return out


def _part_summary(df: Any, guarantee: GroupTest, value: str, group: str) -> dict[str, Any]:
    from versapub.data.histograms import Histograms

    if not len(df):
        return {"groups": 0, "failing": 0, "achieved": None, "sizes": {}}
    ids, gi = np.unique(df[group].to_numpy(), return_inverse=True)
    h = Histograms(
        gi.astype(np.int64).ravel(),
        df["count"].to_numpy(dtype=np.int64),
        len(ids),
        df[value].to_numpy().astype(np.int64),
    )
    ok = np.asarray(guarantee.groups_satisfied(h))
    v, c = np.unique(h.sizes(), return_counts=True)
    return {
        "groups": len(ids),
        "failing": int((~ok).sum()),
        "achieved": float(guarantee.achieved(h)),
        "sizes": {int(a): int(b) for a, b in zip(v, c, strict=True)},
    }


def _part_cells(df: Any, names: Sequence[str], cards: Sequence[int]) -> dict[int, int]:
    if not len(df):
        return {}
    if not names:
        return {int(df["count"].sum()): 1}
    g = group_rows([df[n].to_numpy() for n in names], list(cards), with_inverse=True)
    assert g.inverse is not None
    sizes = np.bincount(g.inverse, weights=df["count"].to_numpy(dtype=np.int64), minlength=len(g.counts))
    v, c = np.unique(sizes.astype(np.int64), return_counts=True)
    return {int(a): int(b) for a, b in zip(v, c, strict=True)}


def _write_part(
    df: Any,
    file: str,
    names: Sequence[str] | None = None,
    dictionaries: Sequence[npt.NDArray[np.object_] | None] | None = None,
) -> tuple[int, int]:
    """Write one part (as codes; with ``dictionaries``, as the published text: ``group_id``
    and ``count`` stay integers); its rows and records."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    count = pa.array(df["count"].to_numpy(dtype=np.int64), pa.int64())
    if dictionaries is None:
        table = pa.Table.from_pandas(df, preserve_index=False)
    else:
        assert names is not None
        cols = [
            pa.array(df[n].to_numpy().astype(np.int64), pa.int64())
            if d is None
            else pa.array(d.astype(str), type=pa.string()).take(pa.array(df[n].to_numpy()))
            for n, d in zip(names, dictionaries, strict=True)
        ]
        table = pa.Table.from_arrays([*cols, count], names=[*names, "count"])
    pq.write_table(table, file)
    return len(df), int(pa.compute.sum(count).as_py() or 0)


def part_file(directory: Path, i: int) -> str:
    return str(directory / f"part-{i:05d}.parquet")


def _part_queries(df: Any, queries: Any, cards: dict[str, int], weighted: bool) -> npt.NDArray[np.float64]:
    from versapub.data.counts import match_weights

    cols = {a: df[a].to_numpy() for a in cards}
    w = df["count"].to_numpy(dtype=np.int64) if weighted else None
    return match_weights(cols, w, queries, cards)


def _pair_queries(
    left: Any, right: Any, mine: Any, theirs: Any, group: str, cards: dict[str, int]
) -> npt.NDArray[np.float64]:
    from versapub.data.counts import paired_weights

    lcols = {c: left[c].to_numpy() for c in left.columns if c != "count"}
    rcols = {c: right[c].to_numpy() for c in right.columns if c != "count"}
    return paired_weights(
        lcols,
        left["count"].to_numpy(dtype=np.int64),
        rcols,
        right["count"].to_numpy(dtype=np.int64),
        mine,
        theirs,
        group,
        cards,
    )


def _part_marginal(df: Any, name: str, card: int) -> IntArray:
    return np.bincount(df[name].to_numpy(), weights=df["count"].to_numpy(dtype=np.int64), minlength=card).astype(
        np.int64
    )


def _log_sum(df: Any, sizes: Any, roots: Any, others: Any, root: tuple[Any, Any]) -> float:
    from versapub.scale.spread import part_log_sum

    return part_log_sum(df, sizes, roots, others, root[0], root[1])


def _merge(dicts: Sequence[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for d in dicts:
        for k, v in d.items():
            out[int(k)] = out.get(int(k), 0) + int(v)
    return dict(sorted(out.items()))


# -- the count tables ----------------------------------------------------------------------------
@dataclass
class DaskCounts:
    """A count table materialized in the scratch directory (``path``: Parquet parts of
    codes and ``count``, hash-partitioned on ``key``, sorted inside each part)."""

    names: tuple[str, ...]
    dictionaries: tuple[npt.NDArray[np.object_] | None, ...]
    path: Path
    key: tuple[str, ...]
    cards: tuple[int, ...]
    runner: Runner
    n_rows: int = 0
    total: int = 0

    def frame(self) -> Any:
        return from_parts(self.path, [*self.names, "count"], {"count": "int64"})

    def _parts(self, label: str, fn: Any, *args: Any) -> list[Any]:
        from dask import delayed

        return self.runner.run([delayed(fn)(p, *args) for p in part_frames(self.path)], f"on the cluster: {label}")

    def cell_sizes(self, names: Sequence[str]) -> dict[int, int]:
        """``{records: cells}`` over ``names``; per part when the parts are keyed by a subset
        of ``names`` (else one more shuffle, keyed on ``names``)."""
        names = tuple(names)
        if not set(self.key) <= set(names):
            place = self.path.parent / f"cells-{uuid.uuid4().hex[:8]}"
            other = materialize(
                self.frame()[[*names, "count"]],
                names,
                names,
                self._cards(names),
                self.runner,
                place,
                self.dictionaries_of(names),
            )
            try:
                return other.cell_sizes(names)
            finally:
                shutil.rmtree(other.path, ignore_errors=True)
        return _merge(self._parts("cells of the published values", _part_cells, list(names), self._cards(names)))

    def _cards(self, names: Sequence[str]) -> list[int]:
        return [self.cards[self.names.index(n)] for n in names]

    def dictionaries_of(self, names: Sequence[str]) -> tuple[npt.NDArray[np.object_] | None, ...]:
        return tuple(self.dictionaries[self.names.index(n)] for n in names)

    def group_summary(self, guarantee: GroupTest, value: str, group: str = GROUP_ID) -> GroupSummary:
        """The groups' histograms of ``value`` against ``guarantee`` — per part, the parts
        being keyed by ``group``."""
        from versapub.data.histograms import combine_achieved

        if self.key != (group,):
            raise ValueError("group summaries need the parts keyed by the group")
        parts = self._parts("group statistics", _part_summary, guarantee, value, group)
        achieved = [p["achieved"] for p in parts if p["achieved"] is not None]
        return GroupSummary(
            sum(p["groups"] for p in parts),
            sum(p["failing"] for p in parts),
            combine_achieved(guarantee, achieved) if achieved else None,
            _merge([p["sizes"] for p in parts]),
        )

    def marginal(self, name: str) -> IntArray:
        """Records per code of column ``name``."""
        parts = self._parts("a marginal", _part_marginal, name, self.cards[self.names.index(name)])
        return np.sum(parts, axis=0).astype(np.int64)

    def weighted_queries(self, queries: Sequence[Any]) -> npt.NDArray[np.float64]:
        """Per query, the records of the rows its conditions on this table's columns allow."""
        cards = {n: c for n, c in zip(self.names, self.cards, strict=True)}
        shared = self.runner.share(list(queries))
        return np.sum(self._parts("query answers", _part_queries, shared, cards, True), axis=0)

    def paired_queries(
        self, other: DaskCounts, mine: Sequence[Any], theirs: Sequence[Any], group: str = GROUP_ID
    ) -> npt.NDArray[np.float64]:
        """``Σ_g a_g b_g / |g|`` per query pair, part by part (both tables keyed on ``group``
        with as many parts: part ``i`` of each holds the same groups)."""
        from dask import delayed

        if self.key != (group,) or other.key != (group,):
            raise ValueError("paired queries need both tables keyed by the group")
        lp, rp = part_frames(self.path), part_frames(other.path)
        if len(lp) != len(rp):
            raise ValueError("paired queries need the two tables in as many parts")
        cards = {**dict(zip(self.names, self.cards, strict=True)), **dict(zip(other.names, other.cards, strict=True))}
        shared_mine, shared_theirs = self.runner.share(list(mine)), self.runner.share(list(theirs))
        tasks = [
            delayed(_pair_queries)(a, b, shared_mine, shared_theirs, group, cards) for a, b in zip(lp, rp, strict=True)
        ]
        return np.sum(self.runner.run(tasks, "on the cluster: paired query answers"), axis=0)

    def spread_log_sum(
        self, sizes: dict[str, Any], roots: dict[str, Any], others: Sequence[tuple[str, int]]
    ) -> tuple[float, float]:
        """A generalized table's ``Σ c ln(n p~)`` over its records, each row spread over the
        ``sizes`` of its generalized values (:mod:`versapub.scale.spread`); rows whose every
        generalized value is a root (``roots``) add to the other rows with the same values of
        ``others``.  Returns the sum and the records in root rows."""
        from versapub.scale import spread

        got = self._parts("the model's density of root rows", spread.part_roots, sizes, roots, list(others))
        keys = np.concatenate([k for k, _, _ in got]) if got else np.zeros(0, np.int64)
        c = np.concatenate([x for _, x, _ in got]) if got else np.zeros(0)
        d = np.concatenate([x for _, _, x in got]) if got else np.zeros(0)
        uk, inv = np.unique(keys, return_inverse=True)
        rc = np.bincount(inv.ravel(), weights=c, minlength=len(uk))
        rd = np.bincount(inv.ravel(), weights=d, minlength=len(uk))
        shared = self.runner.share((uk, rd))
        rest = self._parts("the model's density of every row", _log_sum, sizes, roots, list(others), shared)
        return float(np.sum(rest)) + float(np.sum(rc * np.log(rd))) if len(uk) else float(np.sum(rest)), float(rc.sum())

    def spread_queries(self, queries: Sequence[Any], spans: dict[str, tuple[Any, ...]]) -> npt.NDArray[np.float64]:
        """Per query (``{attribute: allowed leaf positions}``), the records the rows put on
        allowed leaves (:func:`versapub.scale.spread.part_queries`)."""
        from versapub.scale import spread

        shared_q, shared_s = self.runner.share(list(queries)), self.runner.share(spans)
        return np.sum(self._parts("query answers", spread.part_queries, shared_q, shared_s), axis=0)

    def spread_marginal(self, name: str, first: Any, last: Any, m: int) -> npt.NDArray[np.float64]:
        """Records per leaf position of ``name`` with every row spread over its leaves."""
        from versapub.scale import spread

        return np.sum(self._parts("a marginal", spread.part_marginal, name, first, last, m), axis=0)

    def register_duckdb(self, con: Any, name: str) -> None:
        """The table's codes and counts as the DuckDB view ``name`` (over its parts)."""
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {parquet_glob(self.path)}")

    def write(self, path: Path, fmt: str) -> None:
        """The published form: a directory ``path`` of Parquet parts (text values), part
        ``i`` from part ``i`` of the count table."""
        from dask import delayed

        if fmt != "parquet":
            raise ConfigError(
                "A release published on Dask is written as Parquet (--format parquet): its large tables "
                "are directories of Parquet parts."
            )
        path.mkdir(parents=True, exist_ok=False)
        names, dicts = list(self.names), list(self.dictionaries)
        self.runner.run(
            [delayed(_write_part)(d, part_file(path, i), names, dicts) for i, d in enumerate(part_frames(self.path))],
            f"writing {path.name}",
        )


def materialize(
    frame: Any,
    names: Sequence[str],
    key: Sequence[str],
    cards: Sequence[int],
    runner: Runner,
    path: Path,
    dictionaries: Sequence[npt.NDArray[np.object_] | None],
) -> DaskCounts:
    """Count ``frame``'s rows by ``names`` (counted in each partition, shuffled on ``key``,
    counted again and sorted) into Parquet parts at ``path``."""
    import pandas as pd
    from dask import delayed

    names, key, cards = list(names), list(key), list(cards)
    meta = pd.DataFrame({**{n: pd.Series([], dtype="int32") for n in names}, "count": pd.Series([], dtype="int64")})
    pre = frame.map_partitions(_count, names, cards, meta=meta)
    moved = pre.shuffle(on=key, npartitions=frame.npartitions) if key else pre.repartition(npartitions=1)
    final = moved.map_partitions(_count, names, cards, meta=meta)
    path.mkdir(parents=True, exist_ok=False)
    done = runner.run(
        [delayed(_write_part)(d, part_file(path, i)) for i, d in enumerate(final.to_delayed())],
        f"on the cluster: counting {', '.join(names)}",
    )
    return DaskCounts(
        tuple(names),
        tuple(dictionaries),
        path,
        tuple(key),
        tuple(cards),
        runner,
        n_rows=sum(r for r, _ in done),
        total=sum(t for _, t in done),
    )


# -- the table -----------------------------------------------------------------------------------
@dataclass
class DaskTable:
    """A table on a Dask cluster (module docstring): its records are the scratch dataset of
    codes ``codes_path`` (one partition per file); ``stats`` holds each attribute's
    dictionary and value counts."""

    stats: dict[str, ColumnStats]
    n_rows: int
    codes_path: Path
    scratch: Path
    runner: Runner
    n_dropped: int = 0
    source: str = "<dask>"
    sha256: str | None = None
    _order: tuple[str, ...] = field(default=())

    #: The codes are on the cluster, not in this process.
    in_memory = False

    @property
    def names(self) -> tuple[str, ...]:
        return self._order or tuple(self.stats)

    def __contains__(self, name: object) -> bool:
        return name in self.stats

    def column(self, name: str) -> ColumnStats:
        try:
            return self.stats[name]
        except KeyError:
            raise InputError(f"Unknown attribute {name!r}; the table has: {', '.join(self.names)}.") from None

    def cardinality(self, name: str) -> int:
        return self.column(name).cardinality

    def codes(self, name: str) -> IntArray:
        raise ConfigError(
            f"The Dask backend keeps the codes of {name!r} on the cluster; this step needs them in "
            "memory (use the in-memory backend)."
        )

    def select(self, names: Sequence[str]) -> DaskTable:
        names = tuple(names)
        return DaskTable(
            {n: self.column(n) for n in names},
            self.n_rows,
            self.codes_path,
            self.scratch,
            self.runner,
            self.n_dropped,
            self.source,
            self.sha256,
            names,
        )

    @property
    def n_parts(self) -> int:
        """Partitions of the records (files of codes)."""
        return len(list(self.codes_path.glob("*.parquet")))

    def frame(self, names: Sequence[str]) -> Any:
        """The columns ``names`` as a Dask DataFrame of codes, one partition per part."""
        return from_parts(self.codes_path, names, {})

    def sample_codes(self, names: Sequence[str], size: int, rng: np.random.Generator) -> dict[str, IntArray]:
        """The codes of ``names`` for ``size`` records drawn without replacement (the memory
        table's draw over the parts' records in part order), each part reading its own."""
        import pyarrow.parquet as pq
        from dask import delayed

        files = sorted(self.codes_path.glob("*.parquet"))
        lengths = np.array([pq.ParquetFile(f).metadata.num_rows for f in files], dtype=np.int64)
        n = int(lengths.sum())
        rows = np.sort(rng.choice(n, size=size, replace=False)) if n > size else np.arange(n)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        cut = np.searchsorted(rows, starts)
        jobs = [
            delayed(_part_take)(str(f), list(names), rows[cut[i] : cut[i + 1]] - starts[i])
            for i, f in enumerate(files)
            if cut[i + 1] > cut[i]
        ]
        parts = self.runner.run(jobs, "on the cluster: drawing a sample of the records")
        return {c: np.concatenate([p[c] for p in parts]).astype(np.int64) for c in names}

    def cells_among(
        self, names: Sequence[str], wanted: Mapping[str, IntArray]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """:func:`versapub.data.groupby.cell_sizes_among` of ``wanted``'s rows over ``names``,
        summed over the parts on the cluster."""
        from dask import delayed

        w = [np.asarray(wanted[c], dtype=np.int64) for c in names]
        ids, _ = cell_sizes_among([c[:0] for c in w], w)
        jobs = [delayed(_part_cells_among)(p, list(names), w) for p in part_frames(self.codes_path, names)]
        sizes = np.zeros(int(ids.max(initial=-1)) + 1, dtype=np.int64)
        for part in self.runner.run(jobs, "on the cluster: sizes of the sampled records' cells"):
            sizes += part
        return ids, sizes

    def _place(self, what: str) -> Path:
        return self.scratch / f"{what}-{uuid.uuid4().hex[:10]}"

    def pair_counts(self, pairs: Sequence[tuple[str, str]]) -> list[PairCounts]:
        """The joint counts of each pair of attributes: every pair per part on the cluster in
        one pass, summed here (at most ``|a| × |b|`` code pairs each)."""
        from dask import delayed

        if not pairs:
            return []
        spec = [(a, b, max(self.cardinality(b), 1)) for a, b in pairs]
        cols = list(dict.fromkeys(c for a, b in pairs for c in (a, b)))
        parts = self.runner.run(
            [delayed(_pair_part)(p, spec) for p in part_frames(self.codes_path, cols)],
            f"on the cluster: joint counts of {len(pairs)} pair(s) of columns",
        )
        out: list[PairCounts] = []
        for i, (_, _, card_b) in enumerate(spec):
            keys = np.concatenate([part[i][0] for part in parts]) if parts else np.zeros(0, np.int64)
            counts = np.concatenate([part[i][1] for part in parts]) if parts else np.zeros(0, np.int64)
            uniq, inv = np.unique(keys, return_inverse=True)
            total = np.bincount(inv.ravel(), weights=counts, minlength=len(uniq)).astype(np.int64)
            out.append((uniq // card_b, uniq % card_b, total))
        return out

    def count_table(self, names: Sequence[str]) -> DaskCounts:
        """``COUNT(*) GROUP BY names``, keyed (partitioned) on every column."""
        names = tuple(names)
        cards = [self.cardinality(n) for n in names]
        return materialize(
            self.frame(names),
            names,
            names,
            cards,
            self.runner,
            self._place("plain"),
            [self.column(n).values for n in names],
        )

    def grouped_count_tables(
        self, grouping: Grouping, layouts: Sequence[Sequence[str]], rng: np.random.Generator
    ) -> list[DaskCounts]:
        """Records grouped without a global sort (module docstring); every table keyed on
        ``group_id``."""
        from dask import delayed

        s = grouping.sensitive
        m = self.cardinality(s)
        per = self.runner.run(
            [delayed(_bincounts)(p, [s], [m]) for p in part_frames(self.codes_path, [s])],
            f"on the cluster: counting {s} per part",
        )
        counts = np.stack([d[s] for d in per]) if per else np.zeros((0, m), dtype=np.int64)
        offsets = np.cumsum(counts, axis=0) - counts  # records of each bucket in earlier partitions
        seed = int(rng.integers(2**62))
        relabel = rng.permutation(grouping.n_groups).astype(np.int32)
        need = sorted({a for layout in layouts for a in layout if a != GROUP_ID} | {s})
        g_future, r_future, o_future = (self.runner.share(x) for x in (grouping, relabel, offsets))
        import pandas as pd

        meta = pd.DataFrame({**{a: pd.Series([], dtype="int32") for a in need}, GROUP_ID: pd.Series([], dtype="int32")})
        import dask.dataframe as dd

        parts = [
            delayed(_assign)(d, g_future, o_future, r_future, seed, p)
            for p, d in enumerate(part_frames(self.codes_path, need))
        ]
        grouped = dd.from_delayed(parts, meta=meta, verify_meta=False)
        out = []
        for layout in layouts:
            cards = [grouping.n_groups if a == GROUP_ID else self.cardinality(a) for a in layout]
            dicts = [None if a == GROUP_ID else self.column(a).values for a in layout]
            out.append(
                materialize(
                    grouped[list(layout)], layout, (GROUP_ID,), cards, self.runner, self._place("grouped"), dicts
                )
            )
        return out

    def count_queries(self, queries: Sequence[Any]) -> IntArray:
        """Per query (``{attribute: allowed codes}``), the records it counts, partition by
        partition on the cluster."""
        from dask import delayed

        attrs = sorted({a for q in queries for a in q})
        cards = {a: self.cardinality(a) for a in attrs}
        shared = self.runner.share(list(queries))
        tasks = [delayed(_part_queries)(d, shared, cards, False) for d in part_frames(self.codes_path, attrs)]
        return np.rint(np.sum(self.runner.run(tasks, "on the cluster: query answers"), axis=0)).astype(np.int64)

    def register_duckdb(self, con: duckdb.DuckDBPyConnection) -> None:
        """The table for DuckDB (the verifier, the out-of-core utility): a view
        ``original_codes`` over the scratch dataset of codes and a table
        ``dict_<attribute>`` (``value``, ``code``) each. The connection's memory limit and
        spill directory are its owner's (:func:`versapub.data.sql.connect`)."""
        import pyarrow as pa

        cols = ", ".join('"' + n.replace('"', '""') + '"' for n in self.names)
        con.execute(f"CREATE OR REPLACE VIEW original_codes AS SELECT {cols} FROM {parquet_glob(self.codes_path)}")
        for n in self.names:
            c = self.column(n)
            con.register(
                f"dict_{n}",
                pa.table(
                    {
                        "value": pa.array(c.values.astype(str), pa.string()),
                        "code": pa.array(np.arange(c.cardinality), pa.int64()),
                    }
                ),
            )

    def to_pydict(self) -> dict[str, list[str]]:
        """Decoded values per column (small tables only: the exact attack's records)."""
        if self.n_rows > PYDICT_MAX_ROWS:
            raise ConfigError(f"The table has {self.n_rows:,} records; it is not listed record by record.")
        import pyarrow.parquet as pq

        t = pq.read_table(str(self.codes_path), columns=list(self.names))
        return {n: [str(v) for v in self.column(n).values[t.column(n).to_numpy()]] for n in self.names}

    @property
    def nbytes(self) -> int:
        return 4 * self.n_rows * len(self.names)


def rows_per_part(n_rows: int) -> int:
    return max(1, math.ceil(n_rows / ROWS_PER_PART))
