"""Records drawn from a written release as an adversary reads it (issue 45): the verifier's
own reading of each table kind's files, for the attacks on everything published
(:mod:`versapub.verify.adversary.adversary`).  Shares nothing with the publisher.

* a **plain** table: its rows, each ``count`` times — exactly what it says;
* an **anatomy** table: each QIT record with a sensitive value drawn from its group's ST
  rows in proportion to their counts (the group says no more);
* a **generalized** table: each row's records with every generalized value replaced by a
  leaf drawn uniformly from the run it covers (the order and labels listings);
* an **sa-groups** table: each QIT record with each sensitive value drawn uniformly from its
  group's set of that attribute.

Above ``limit`` records, a seeded uniform sample of them (rows drawn in proportion to their
counts).  Values are text, as in the files; a missing value is the empty string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from versapub.data.sql import connect, duckdb_source

Records = dict[str, npt.NDArray[np.object_]]


@dataclass(frozen=True)
class Drawn:
    """Records drawn from a table, and ``again``: for each column drawn at random (an Anatomy
    group's value, a generalized value's leaf), further independent draws of it for the same
    records — an attack scored over them reads the release's distribution, not one draw."""

    records: Records
    again: dict[str, list[npt.NDArray[np.object_]]] = field(default_factory=dict)


#: A kind's drawer: ``draw(directory, manifest entry, rng, limit, redraws) -> Drawn``.
Drawer = Callable[[Path, dict[str, Any], np.random.Generator, int, int], Drawn]


def _read(path: Path) -> pa.Table:
    with connect() as con:
        return con.sql(f"SELECT * FROM {duckdb_source(path)}").to_arrow_table()


def _text(col: pa.ChunkedArray | pa.Array) -> npt.NDArray[np.object_]:
    """A column's values as text ("" where missing): each distinct value written once, the
    rows indexing them (issue 67: no Python object per record of a 1.4M-row QIT)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    enc = pc.dictionary_encode(arr, null_encoding="encode")
    words = np.array(["" if v is None else str(v) for v in enc.dictionary.to_pylist()] or [""], dtype=object)
    return words[np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]


def _ints(col: pa.ChunkedArray | pa.Array) -> npt.NDArray[np.int64]:
    """A column of whole numbers (counts, group ids) as an array."""
    return np.asarray(pc.cast(col, pa.int64()).to_numpy(), dtype=np.int64)


def _rows(counts: npt.NDArray[np.int64], rng: np.random.Generator, limit: int) -> npt.NDArray[np.int64]:
    """Each row's index once per record it counts, or a seeded sample of ``limit`` records — in
    a seeded random order: the files' value order must not decide which of equally near
    records an attack meets first."""
    total = int(counts.sum())
    if total <= limit:
        rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    else:
        cum = np.cumsum(counts)
        rows = np.searchsorted(cum, rng.choice(total, size=limit, replace=False), side="right").astype(np.int64)
    return rows[rng.permutation(len(rows))]


def _counts(t: pa.Table) -> npt.NDArray[np.int64]:
    return _ints(t.column("count"))


def plain_records(d: Path, entry: dict[str, Any], rng: np.random.Generator, limit: int, redraws: int = 0) -> Drawn:
    t = _read(d / entry["files"]["data"])
    rows = _rows(_counts(t), rng, limit)
    return Drawn({a: _text(t.column(a))[rows] for a in entry["attributes"]})


def _draw_grouped(
    groups: npt.NDArray[np.int64],
    st_groups: npt.NDArray[np.int64],
    st_counts: npt.NDArray[np.int64],
    rng: np.random.Generator,
    draws: int = 1,
) -> list[npt.NDArray[np.int64]]:
    """``draws`` times, for each record of group ``groups[i]``, an ST row of that group drawn
    in proportion to ``st_counts`` (-1 when the group has no ST row); the ST sorted once."""
    if not len(st_groups):  # nothing published to draw from (every value withheld)
        return [np.full(len(groups), -1, dtype=np.int64) for _ in range(draws)]
    order = np.lexsort((np.arange(len(st_groups)), st_groups))
    g_sorted, c_sorted = st_groups[order], st_counts[order]
    cum = np.cumsum(c_sorted)
    start = np.searchsorted(g_sorted, groups, side="left")
    end = np.searchsorted(g_sorted, groups, side="right")
    present = end > start
    before = np.where(start > 0, cum[np.maximum(start - 1, 0)], 0)
    total = np.where(present, cum[np.maximum(end - 1, 0)] - before, 0)
    out = []
    for _ in range(draws):
        u = before + np.floor(rng.random(len(groups)) * np.maximum(total, 1)).astype(np.int64)
        at = np.searchsorted(cum, u, side="right")
        out.append(np.where(present, order[np.minimum(at, len(order) - 1)], -1))
    return out


def anatomy_records(d: Path, entry: dict[str, Any], rng: np.random.Generator, limit: int, redraws: int = 0) -> Drawn:
    qit = _read(d / entry["files"]["qit"])
    st = _read(d / entry["files"]["st"])
    rows = _rows(_counts(qit), rng, limit)
    groups = _ints(qit.column("group_id"))[rows]
    st_groups = _ints(st.column("group_id"))
    picks = _draw_grouped(groups, st_groups, _counts(st), rng, 1 + redraws)
    out: Records = {}
    again: dict[str, list[npt.NDArray[np.object_]]] = {}
    for a in entry["attributes"]:
        if a in qit.column_names:
            out[a] = _text(qit.column(a))[rows]
            continue
        vals = _text(st.column(a))  # a sensitive value of the ST, drawn; a withheld group's records stay missing
        drawn = [
            np.where(pick >= 0, vals[np.maximum(pick, 0)], "") if len(vals) else np.full(len(rows), "", object)
            for pick in picks
        ]
        out[a], again[a] = drawn[0], drawn[1:]
    return Drawn(out, again)


def generalized_records(
    d: Path, entry: dict[str, Any], rng: np.random.Generator, limit: int, redraws: int = 0
) -> Drawn:
    data = _read(d / entry["files"]["data"])
    labels = _read(d / entry["files"]["labels"])
    order = _read(d / entry["files"]["order"])
    rows = _rows(_counts(data), rng, limit)
    again: dict[str, list[npt.NDArray[np.object_]]] = {}
    lab_attr, lab_value = _text(labels.column("attribute")), _text(labels.column("value"))
    first = np.asarray([int(x) for x in labels.column("first").to_pylist()], dtype=np.int64)
    last = np.asarray([int(x) for x in labels.column("last").to_pylist()], dtype=np.int64)
    ord_attr, ord_leaf = _text(order.column("attribute")), _text(order.column("leaf"))
    ord_pos = np.asarray([int(x) for x in order.column("position").to_pylist()], dtype=np.int64)
    out: Records = {}
    for a in entry["attributes"]:
        values = _text(data.column(a))[rows]
        mine = lab_attr == a
        if not mine.any():
            out[a] = values
            continue
        runs = {str(v): (int(f), int(la)) for v, f, la in zip(lab_value[mine], first[mine], last[mine], strict=True)}
        leaves = np.empty(int(ord_pos[ord_attr == a].max()) + 1 if (ord_attr == a).any() else 0, dtype=object)
        leaves[ord_pos[ord_attr == a]] = ord_leaf[ord_attr == a]
        distinct, inv = np.unique(values.astype(str), return_inverse=True)  # per distinct value, not per record
        inv = np.asarray(inv, dtype=np.int64).ravel()
        is_label = np.array([v in runs for v in distinct], dtype=bool)[inv]
        lo = np.array([runs.get(v, (0, 0))[0] for v in distinct], dtype=np.int64)[inv]
        hi = np.array([runs.get(v, (0, 0))[1] for v in distinct], dtype=np.int64)[inv]
        draws = [lo + np.floor(rng.random(len(values)) * (hi - lo + 1)).astype(np.int64) for _ in range(1 + redraws)]
        if len(leaves):
            drawn = [np.where(is_label, leaves[np.minimum(x, len(leaves) - 1)], values) for x in draws]
        else:
            drawn = [values for _ in draws]
        out[a], again[a] = drawn[0], drawn[1:]
    return Drawn(out, again)


def sa_groups_records(d: Path, entry: dict[str, Any], rng: np.random.Generator, limit: int, redraws: int = 0) -> Drawn:
    qit = _read(d / entry["files"]["qit"])
    sets = _read(d / entry["files"]["sets"])
    rows = _rows(_counts(qit), rng, limit)
    groups = _ints(qit.column("group_id"))[rows]
    s_group = _ints(sets.column("group_id"))
    s_attr, s_value = _text(sets.column("attribute")), _text(sets.column("value"))
    out: Records = {}
    again: dict[str, list[npt.NDArray[np.object_]]] = {}
    for a in entry["attributes"]:
        if a in qit.column_names:
            out[a] = _text(qit.column(a))[rows]
            continue
        mine = s_attr == a
        vals = s_value[mine]
        drawn = []
        for _ in range(1 + redraws):
            pick = _draw_grouped(groups, s_group[mine], np.ones(int(mine.sum()), dtype=np.int64), rng)[0]
            drawn.append(
                np.where(pick >= 0, vals[np.maximum(pick, 0)], "") if len(vals) else np.full(len(rows), "", object)
            )
        out[a], again[a] = drawn[0], drawn[1:]
    return Drawn(out, again)
