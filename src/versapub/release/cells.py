"""A generalized table as *runs*: every published value of an attribute covers the leaf
positions ``first .. last`` of the attribute's leaf order (a leaf covers its own position),
the form the functional-diversity paper's measures need (induced frequencies, the
fractional contribution of a generalized value to a count query, ID3 on generalized data).

Built from an in-memory table (:meth:`Cells.of_table`) or from a release's files
(:meth:`Cells.of_files`: the data file and its ``labels``/``order`` listings); an attribute
published exactly gets the leaf order of the values it publishes (in memory: its
dictionary; from files: text order).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.data.sql import connect, duckdb_source, ident
from versapub.data.table import EncodedTable

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Cells:
    """Rows of a generalized table: per attribute, ``first[a][i] .. last[a][i]`` (positions in
    ``order[a]``) and per row its record count; ``sensitive`` is the enforced rule's
    sensitive attribute (or ``None``); ``value[a][i]`` numbers row ``i``'s published value
    (two values may cover the same leaves: classes are told apart by what is published)."""

    attributes: tuple[str, ...]
    order: dict[str, tuple[str, ...]]
    first: dict[str, IntArray]
    last: dict[str, IntArray]
    counts: IntArray
    sensitive: str | None
    value: dict[str, IntArray] | None = None

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def width(self, a: str) -> IntArray:
        """Leaves each row's value of ``a`` covers."""
        return self.last[a] - self.first[a] + 1

    def classes(self) -> tuple[IntArray, int]:
        """Each row's equivalence class (distinct values of the non-sensitive attributes)."""
        qi = [a for a in self.attributes if a != self.sensitive]
        if not qi:
            return np.zeros(len(self.counts), dtype=np.int64), 1 if len(self.counts) else 0
        cols = (
            [self.value[a] for a in qi]
            if self.value is not None
            else [x for a in qi for x in (self.first[a], self.last[a])]
        )
        g = group_rows(cols, [int(c.max()) + 1 if len(c) else 1 for c in cols], with_inverse=True)
        assert g.inverse is not None
        return g.inverse.astype(np.int64), len(g.counts)

    def positions(self, table: EncodedTable, a: str) -> IntArray:
        """Each record's leaf position of ``a`` in this table's order (-1: a value the order
        lacks)."""
        col = table.column(a)
        where = {v: i for i, v in enumerate(self.order[a])}
        per_code = np.array([where.get(str(v), -1) for v in col.values], dtype=np.int64)
        return per_code[col.codes]

    @classmethod
    def of_table(cls, anon: Any) -> Cells:
        """From an in-memory generalized :class:`~versapub.anonymizers.base.AnonymizedTable`."""
        ct = anon.parts["data"]
        first: dict[str, IntArray] = {}
        last: dict[str, IntArray] = {}
        order: dict[str, tuple[str, ...]] = {}
        for j, a in enumerate(ct.names):
            dictionary = ct.dictionaries[j]
            assert dictionary is not None
            labels = anon.leaves.get(a)
            if labels is None:
                order[a] = tuple(str(v) for v in dictionary)
                code = ct.codes[j].astype(np.int64)
                first[a], last[a] = code, code.copy()
                continue
            order[a] = tuple(labels.order)
            pos = {leaf: i for i, leaf in enumerate(labels.order)}
            runs = np.array(
                [labels.spans.get(str(v), (pos.get(str(v), -1),) * 2) for v in dictionary], dtype=np.int64
            ).reshape(-1, 2)
            code = ct.codes[j].astype(np.int64)
            first[a], last[a] = runs[code, 0], runs[code, 1]
        sens = anon.sensitive_attributes[0] if anon.sensitive_attributes else None
        value = {a: ct.codes[j].astype(np.int64) for j, a in enumerate(ct.names)}
        return cls(tuple(ct.names), order, first, last, ct.counts.astype(np.int64), sens, value)

    @classmethod
    def of_files(cls, directory: str | Path, entry: Any, sensitive: str | None) -> Cells:
        """From a generalized table's files (``entry``: its parsed manifest entry)."""
        d = Path(directory)
        with connect() as con:
            con.execute(f"CREATE TABLE data AS SELECT * FROM {duckdb_source(d / entry.files['data'])}")
            con.execute(f"CREATE TABLE labels AS SELECT * FROM {duckdb_source(d / entry.files['labels'])}")
            con.execute(f"CREATE TABLE ord AS SELECT * FROM {duckdb_source(d / entry.files['order'])}")
            got = con.execute('SELECT CAST("count" AS BIGINT) c FROM data ORDER BY rowid').fetchnumpy()
            counts = np.asarray(got["c"], dtype=np.int64)
            first: dict[str, IntArray] = {}
            last: dict[str, IntArray] = {}
            order: dict[str, tuple[str, ...]] = {}
            value: dict[str, IntArray] = {}
            for a in entry.attributes:
                value[a] = np.asarray(
                    con.execute(
                        f"SELECT dense_rank() OVER (ORDER BY {ident(a)}) v FROM data ORDER BY rowid"
                    ).fetchnumpy()["v"],
                    dtype=np.int64,
                )
                lit = "'" + a.replace("'", "''") + "'"
                q = f"SELECT leaf FROM ord WHERE attribute = {lit} ORDER BY CAST(position AS BIGINT)"
                listed = [r[0] for r in con.execute(q).fetchall()]
                if not listed:  # published exactly: its values in text order
                    listed = [r[0] for r in con.execute(f"SELECT DISTINCT {ident(a)} FROM data ORDER BY 1").fetchall()]
                    con.execute(
                        f"CREATE OR REPLACE TABLE o AS SELECT unnest({_list(listed)}) leaf, "
                        f"unnest(range({len(listed)})) p"
                    )
                else:
                    con.execute(
                        f"CREATE OR REPLACE TABLE o AS SELECT leaf, CAST(position AS BIGINT) p FROM ord "
                        f"WHERE attribute = {lit}"
                    )
                runs = con.execute(
                    f"SELECT coalesce(CAST(l.first AS BIGINT), o.p), coalesce(CAST(l.last AS BIGINT), o.p) FROM "
                    f"data d LEFT JOIN labels l ON l.attribute = {lit} AND l.value = d.{ident(a)} "
                    f"LEFT JOIN o ON o.leaf = d.{ident(a)} ORDER BY d.rowid"
                ).fetchall()
                arr = np.array(runs, dtype=np.int64).reshape(-1, 2)
                order[a] = tuple(str(v) for v in listed)
                first[a], last[a] = arr[:, 0], arr[:, 1]
        return cls(tuple(entry.attributes), order, first, last, counts, sensitive, value)


def _list(values: list[str]) -> str:
    return "[" + ", ".join("'" + str(v).replace("'", "''") + "'" for v in values) + "]"
