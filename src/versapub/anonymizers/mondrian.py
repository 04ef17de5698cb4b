"""Mondrian (LeFevre, DeWitt, Ramakrishnan, ICDE 2006): strict multidimensional
partitioning.

Algorithm (the paper's ``Anonymize(partition)``): if no allowable cut exists, the
partition becomes an equivalence class; otherwise choose a dimension, cut it, and recurse
on both sides.  Here:

* **dimension**: the one with the widest *normalized range* inside the partition — an
  ordered attribute's ``(max − min) / (max − min over the table)`` (values as numbers when
  every value is one, else their ranks in value order), a hierarchical attribute's share
  of the leaves under the partition's current node; when the cut on that dimension is not
  allowable, the next widest is tried (``docs/choices.md``);
* **cut**: an ordered attribute at the median (``lhs = {t: t.A <= median}``, the rest
  ``rhs``; when every record is ``<= median``, ``lhs = {t: t.A < median}``); a
  hierarchical attribute is specialized one level down its hierarchy, one part per child
  node present (a multiway cut; a partition whose values all lie under one child just
  descends);
* **allowable**: every part is non-empty and satisfies the guarantee (its own per-group
  test: k-anonymity, any l-diversity, t-closeness against the table's distribution).

Vectorized: the records are a permutation in which every partition is a contiguous range;
each round cuts *every* open partition at once (one ``lexsort`` over the open records,
``reduceat`` for ranges and medians, one group-by for the parts' histograms); there is no
Python loop over records or partitions.  A class publishes, per ordered attribute, the
range of values its records hold (``[lo, hi]``, or the value) and, per hierarchical
attribute, the lowest node covering its records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.anonymizers.generalize import (
    Dimension,
    IntArray,
    KeepingColumns,
    class_cover,
    class_stats,
    classes_table,
    dimensions,
    target,
)
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.plugins import Param
from versapub.privacy.base import Guarantee, Histograms
from versapub.privacy.rules import Rule


def _starts(seg_start: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """Segment of every position, and every segment's length."""
    lengths = np.diff(np.r_[seg_start, n])
    return np.repeat(np.arange(len(seg_start), dtype=np.int64), lengths), lengths


def _smallest_k(guarantee: Guarantee) -> int:
    """The fewest records a group satisfying ``guarantee`` can have, from its test: the
    smallest size at which a group of all-distinct values passes (at most 64 tried) — the
    best case for k-anonymity and every l-diversity form; 1 for a guarantee that compares
    with the table's distribution (t-closeness), where no such probe is a bound."""
    if guarantee.needs():
        return 1
    for size in range(1, 65):
        h = Histograms(np.zeros(size, np.int64), np.ones(size, np.int64), 1, np.arange(size, dtype=np.int64))
        try:
            if guarantee.groups_satisfied(h).all():
                return size
        except (ValueError, IndexError):  # a guarantee bound to a domain smaller than the probe
            return 1
    return 1


def _histograms(part: IntArray, s: IntArray, n_parts: int, s_card: int) -> Histograms:
    key = part * s_card + s
    uniq, counts = np.unique(key, return_counts=True)
    return Histograms(uniq // s_card, counts.astype(np.int64), n_parts, uniq % s_card)


def partition(
    dims: Sequence[Dimension],
    codes: Sequence[IntArray],
    s: IntArray,
    s_card: int,
    guarantee: Guarantee,
    progress: Callable[[str], None] | None = None,
) -> tuple[IntArray, IntArray, IntArray]:
    """Mondrian's partitions: (permutation of the records, start of every partition in it,
    each partition's current hierarchy level per dimension)."""
    n, d = len(s), len(dims)
    smallest = _smallest_k(guarantee)
    perm = np.arange(n, dtype=np.int64)
    # Every record's rank per dimension (int32: 4 bytes per record and dimension).
    rank = (
        np.stack([dim.rank.astype(np.int32)[c] for dim, c in zip(dims, codes, strict=True)])
        if d
        else (np.zeros((0, n), np.int32))
    )
    hier = np.array([dim.hierarchical for dim in dims], dtype=bool)
    spans = np.array([dim.span for dim in dims], dtype=np.float64)
    # Per hierarchical dimension: node ids (levels x codes) and leaves under each node (levels x nodes).
    nodes = {j: np.stack(dim.nodes) for j, dim in enumerate(dims) if dim.nodes is not None}
    under = {j: np.stack([np.bincount(lv, minlength=int(m.max()) + 1) for lv in m]) for j, m in nodes.items()}
    seg_start = np.zeros(1, dtype=np.int64)
    level = np.array([[dim.top for dim in dims]], dtype=np.int64).reshape(1, d)
    tried = np.zeros((1, d), dtype=bool)
    open_ = np.ones(1, dtype=bool)
    rounds = 0
    while open_.any() and d:
        rounds += 1
        seg, _ = _starts(seg_start, n)
        pos = np.flatnonzero(open_[seg])  # open positions, ascending: each open segment contiguous
        oseg, rec = seg[pos], perm[pos]
        segs = np.flatnonzero(open_)
        first = np.searchsorted(oseg, segs)
        # Normalized width of every dimension inside every open segment.
        widths = np.zeros((len(segs), d))
        for j, dim in enumerate(dims):
            if j in nodes:
                lvl = level[segs, j]
                node = nodes[j][lvl, codes[j][rec[first]]]
                widths[:, j] = np.where(lvl > 0, under[j][lvl, node] / len(dim.values), 0.0)
            elif spans[j] > 0:
                w = dim.width[codes[j][rec]]
                widths[:, j] = (np.maximum.reduceat(w, first) - np.minimum.reduceat(w, first)) / spans[j]
        widths[tried[segs]] = -1.0
        # A partition smaller than two of the smallest groups the guarantee accepts cannot be cut.
        widths[np.diff(np.r_[first, len(oseg)]) < 2 * smallest] = -1.0
        choice = np.argmax(widths, axis=1)
        can = widths[np.arange(len(segs)), choice] > 0
        open_[segs[~can]] = False
        if not can.any():
            break
        segs, choice = segs[can], choice[can]
        dim_of = np.full(len(seg_start), -1, dtype=np.int64)
        dim_of[segs] = choice
        keep = dim_of[oseg] >= 0
        pos, oseg, rec = pos[keep], oseg[keep], rec[keep]
        dpos = dim_of[oseg]
        order = np.lexsort((rank[dpos, rec], oseg))  # segments keep their places; sorted inside
        rec, oseg, dpos = rec[order], oseg[order], dpos[order]
        perm[pos] = rec
        key = rank[dpos, rec]
        starts = np.flatnonzero(np.r_[True, oseg[1:] != oseg[:-1]])
        length = np.diff(np.r_[starts, len(oseg)])
        # Ordered dimensions: left of the (lower) median, or strictly below it when nothing is above.
        med = np.repeat(key[starts + (length - 1) // 2], length)
        left = key <= med
        everything = np.repeat(np.add.reduceat(left.astype(np.int64), starts) == length, length)
        part_key = np.where(np.where(everything, key < med, left), 0, 1)
        # Hierarchical dimensions: the child node one level down.
        for j, m in nodes.items():
            at = np.flatnonzero(dpos == j)
            if len(at):
                part_key[at] = m[level[oseg[at], j] - 1, codes[j][rec[at]]]
        change = np.r_[True, (oseg[1:] != oseg[:-1]) | (part_key[1:] != part_key[:-1])]
        part = np.cumsum(change) - 1
        ok = guarantee.groups_satisfied(_histograms(part, s[rec], int(part[-1]) + 1, s_card))
        part_start = np.flatnonzero(change)
        part_seg = oseg[part_start]
        n_parts = np.bincount(part_seg, minlength=len(seg_start))
        seg_ok = np.ones(len(seg_start), dtype=bool)
        np.logical_and.at(seg_ok, part_seg, ok)
        cut_hier = np.zeros(len(seg_start), dtype=bool)
        cut_hier[segs] = hier[choice]
        split = seg_ok & (n_parts >= 2)
        descend = seg_ok & (n_parts == 1) & cut_hier  # every value under one child: go down a level
        failed = np.zeros(len(seg_start), dtype=bool)
        failed[segs] = True
        failed &= ~(split | descend)
        tried[failed, dim_of[failed]] = True
        level[descend, dim_of[descend]] -= 1
        # Allowed cuts: each cut segment is replaced by its parts (fresh: nothing tried yet).
        new = split[part_seg]
        owner = part_seg[new]
        kept = ~split
        child_level = level[owner]
        went_down = hier[dim_of[owner]]
        child_level[np.flatnonzero(went_down), dim_of[owner][went_down]] -= 1
        starts_all = np.r_[seg_start[kept], pos[part_start[new]]]
        o = np.argsort(starts_all, kind="stable")
        seg_start = starts_all[o]
        level = np.vstack([level[kept], child_level])[o]
        tried = np.vstack([tried[kept], np.zeros((len(owner), d), dtype=bool)])[o]
        open_ = np.r_[open_[kept], np.ones(len(owner), dtype=bool)][o]
        if progress is not None:
            progress(f"Mondrian round {rounds}: {len(seg_start):,} partitions, {int(open_.sum()):,} still open")
    return perm, seg_start, level


class Mondrian(KeepingColumns):
    """Strict multidimensional Mondrian (see the module docstring); no parameters.  Ordered
    attributes are cut at the median; attributes with a hierarchy (``--hierarchy
    ATTR=FILE``) are specialized down it."""

    name = "mondrian"
    max_rules = 1
    parameter_constraints: ClassVar[dict[str, Param]] = {}
    glossary: ClassVar[str] = (
        "Mondrian (LeFevre, DeWitt & Ramakrishnan, ICDE 2006): strict multidimensional partitioning; partitions are "
        "cut at the median of one attribute at a time while both halves still meet the guarantee."
    )

    def params(self) -> dict[str, Any]:
        return {}

    def publish(
        self,
        table: EncodedTable,
        rules: Rule | Sequence[Rule],
        guarantee: Guarantee,
        rng: np.random.Generator,
        progress: Callable[[str], None] | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        keep: Sequence[str] = (),
    ) -> AnonymizedTable:
        del rng  # deterministic
        goal = target(table, rules, self.name, keep)
        qi = list(goal.qi)
        dims = dimensions(table, qi, hierarchies)
        codes = [table.codes(a).astype(np.int64) for a in qi]
        s = goal.codes
        whole = _histograms(np.zeros(len(s), dtype=np.int64), s, 1, goal.cardinality)
        if not guarantee.groups_satisfied(whole).all():
            what = f"rule '{goal.rule}'" if goal.rule else f"quasi-identifiers {qi}"
            raise InfeasibleError(
                f"Mondrian cannot satisfy {guarantee.describe()} for {what}: even the whole table, "
                "as one equivalence class, does not."
            )
        perm, seg_start, level = partition(dims, codes, s, goal.cardinality, guarantee, progress)
        seg, _ = _starts(seg_start, len(s))
        cls = np.empty(len(s), dtype=np.int64)
        cls[perm] = seg
        n_cls = len(seg_start)
        cover = class_cover(dims, codes, cls, n_cls, level)
        stats = class_stats(guarantee, cls, s, n_cls, goal.cardinality)
        return classes_table(table, goal, dims, cls, cover, stats)
