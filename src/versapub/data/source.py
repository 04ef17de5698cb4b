"""The backend seam: what the publishing pipeline asks of a table.

Two implementations: :class:`~versapub.data.table.EncodedTable` (the whole table in
memory as dictionary-encoded arrays) and :class:`versapub.scale.table.DaskTable` (a
Dask cluster; ``pip install 'versapub[dask]'``).  Everything from the rules to the
anonymizers that run on both (Anatomy, plain tables) uses only this protocol:

* ``names``, ``n_rows``, ``n_dropped`` (records dropped by the missing-value policy),
  ``source``, ``sha256``;
* ``column(name)``: the global dictionary (``values``, sorted text), ``cardinality`` and
  ``counts()`` (records per value) — feasibility, identifier screening, guarantees'
  context;
* ``select(names)``: the table restricted to some attributes (a sub-table);
* ``count_table(names)``: ``COUNT(*) GROUP BY names`` (a plain table);
* ``grouped_count_tables(grouping, layouts, rng)``: records grouped by their bucket and
  random rank (:class:`~versapub.data.grouping.Grouping`, Anatomy), one count table per
  layout;
* ``in_memory``: whether the codes themselves can be read (``codes(name)``), which the
  other anonymizers, GD's scoring and the in-memory release model need;
* ``register_duckdb(con)``: the records for the independent verifier (codes and
  dictionaries as DuckDB relations), however they are stored;
* ``count_queries(queries)``: the true answers of COUNT queries (the utility workload);
* ``pair_counts(pairs)``: the joint counts of pairs of attributes (the proxy screen).

A count table a backend returns has ``names``, ``dictionaries``, ``n_rows``, ``total``,
``cell_sizes(names)``, ``group_summary(guarantee, value)``, ``write(path, fmt)`` and, for
the release's utility out of core, ``marginal``, ``weighted_queries``, ``paired_queries``
(an Anatomy QIT with its ST) and ``register_duckdb``: :class:`~versapub.data.counts.CountTable`
in memory; a partitioned one on a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from versapub.data.counts import GroupSummary
    from versapub.data.grouping import Grouping
    from versapub.data.histograms import GroupTest


class ColumnInfo(Protocol):
    """An attribute's global dictionary and value counts."""

    @property
    def name(self) -> str: ...

    @property
    def values(self) -> npt.NDArray[np.object_]: ...

    @property
    def cardinality(self) -> int: ...

    def counts(self) -> npt.NDArray[np.int64]: ...


class Counts(Protocol):
    """A published count table (``values..., count``), in memory or partitioned."""

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def n_rows(self) -> int: ...

    @property
    def total(self) -> int: ...

    def cell_sizes(self, names: Sequence[str]) -> dict[int, int]: ...

    def group_summary(self, guarantee: GroupTest, value: str, group: str = ...) -> GroupSummary: ...

    def write(self, path: Path, fmt: str) -> None: ...

    def marginal(self, name: str) -> npt.NDArray[np.int64]: ...

    def weighted_queries(self, queries: Sequence[Any]) -> npt.NDArray[np.float64]: ...

    def register_duckdb(self, con: Any, name: str) -> None: ...


#: Joint counts of two attributes: codes of the first, codes of the second, records of each pair.
PairCounts = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]


class Source(Protocol):
    """A table as the pipeline sees it (module docstring)."""

    in_memory: bool

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def n_rows(self) -> int: ...

    @property
    def n_dropped(self) -> int: ...

    @property
    def source(self) -> str: ...

    @property
    def sha256(self) -> str | None: ...

    def column(self, name: str) -> ColumnInfo: ...

    def cardinality(self, name: str) -> int: ...

    def select(self, names: Sequence[str]) -> Source: ...

    def count_table(self, names: Sequence[str]) -> Counts: ...

    def grouped_count_tables(
        self, grouping: Grouping, layouts: Sequence[Sequence[str]], rng: np.random.Generator
    ) -> Sequence[Counts]: ...

    def register_duckdb(self, con: Any) -> None:
        """For the independent verifier: a relation ``original_codes`` (the codes) and a
        table ``dict_<attribute>`` (``value``, ``code``) per attribute."""
        ...

    def count_queries(self, queries: Sequence[Any]) -> npt.NDArray[np.int64]:
        """Per COUNT query (``{attribute: allowed codes}``), the records it counts."""
        ...

    def sample_codes(self, names: Sequence[str], size: int, rng: np.random.Generator) -> dict[str, Any]:
        """The codes of ``names`` for ``size`` records drawn without replacement by ``rng``
        (every record when there are no more), in input order."""
        ...

    def cells_among(self, names: Sequence[str], wanted: Mapping[str, Any]) -> tuple[Any, Any]:
        """For rows of codes ``wanted`` (per column of ``names``): a dense id of each row's
        combination and, per id, the records of the whole table holding it
        (:func:`versapub.data.groupby.cell_sizes_among`)."""
        ...

    def pair_counts(self, pairs: Sequence[tuple[str, str]]) -> list[PairCounts]:
        """Per pair of attributes ``(a, b)``, their joint counts: the distinct code pairs and
        the records of each (how much an unprotected column reveals a protected one), all in
        one pass over the records."""
        ...


@runtime_checkable
class OutOfCore(Protocol):
    """Optional capability of a decomposition or an anonymizer: it runs on any
    :class:`Source` — it needs the columns' dictionaries and counts, count tables and
    grouped count tables, never a record's codes — so it runs on the Dask backend."""

    out_of_core: Literal[True]
