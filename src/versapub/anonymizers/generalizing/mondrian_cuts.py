"""Mondrian's partitioning (LeFevre, DeWitt, Ramakrishnan, ICDE 2006): the vectorized
rounds of median cuts over records in memory, which :mod:`versapub.anonymizers.generalizing.mondrian`
publishes and :mod:`versapub.anonymizers.generalizing.mondrian_cluster` resumes per bucket of
partitions on a Dask cluster (the rules are in :mod:`versapub.anonymizers.generalizing.mondrian`'s
docstring)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.generalizing.floor import cells_ok
from versapub.anonymizers.generalizing.generalize import Dimension, IntArray
from versapub.privacy.guarantees.base import Guarantee, Histograms


def segment_starts(seg_start: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """Segment of every position, and every segment's length."""
    lengths = np.diff(np.r_[seg_start, n])
    return np.repeat(np.arange(len(seg_start), dtype=np.int64), lengths), lengths


def smallest_group(guarantee: Guarantee) -> int:
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


#: Partitions to resume: (start of each in the records' order, level per dimension, the
#: dimensions tried without an allowable cut, still open).
State = tuple[IntArray, IntArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]


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
    start: State | None = None,
    budget: int = 0,
    research: int | None = None,
    floor: tuple[IntArray, int] | None = None,
) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.bool_]]:
    """Mondrian's partitions: (permutation of the records, start of every partition in it,
    each partition's current hierarchy level per dimension, whether it is suppressed).

    ``budget`` (local suppression, ARX's semantics: at most this many records): a cut one of
    whose parts fails the guarantee is still allowed when another part satisfies it and the
    failing parts' records fit in what is left of the budget; those parts are suppressed
    (closed, published with every quasi-identifier at its root by the caller) instead of
    the partition staying whole.  Cuts are granted in the records' order, round by round,
    until the budget is spent.  ``start`` resumes partitions
    already cut elsewhere (the Dask backend's rounds: :mod:`versapub.anonymizers.generalizing.mondrian_cluster`):
    the records ordered so that each is a contiguous range, with its state; partitions
    evolve independently of each other, so the classes are those of one run from the whole
    table.  ``research``: only the first ``research`` records are published, the others are
    the population's (a guarantee checked against the population: each part's histogram
    counts the research records, its ``population`` the others; ``s`` of the population's
    records is ignored).  ``floor``: each record's kept-values cell and ``k``, every (part,
    cell) holding at least ``k`` records (:mod:`versapub.anonymizers.generalizing.floor`)."""
    n, d = len(s), len(dims)
    smallest = max(smallest_group(guarantee), floor[1] if floor is not None else 1)
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
    seg_start, level, tried, open_ = _initial(dims, start)
    sup = np.zeros(len(seg_start), dtype=bool)
    budget_left = int(budget)
    rounds = 0
    while open_.any() and d:
        rounds += 1
        seg, _ = segment_starts(seg_start, n)
        pos = np.flatnonzero(open_[seg])  # open positions, ascending: each open segment contiguous
        oseg, rec = seg[pos], perm[pos]
        segs = np.flatnonzero(open_)
        first = np.searchsorted(oseg, segs)
        widths = _widths(dims, codes, (nodes, under, spans), level[segs], rec, first)
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
        part_key = _part_keys(rank[dpos, rec], oseg, dpos, rec, nodes, level, codes)
        change = np.r_[True, (oseg[1:] != oseg[:-1]) | (part_key[1:] != part_key[:-1])]
        part = np.cumsum(change) - 1
        ok = _parts_ok(guarantee, part, rec, s, s_card, research)
        if floor is not None:
            ok &= cells_ok(part, rec, *floor)
        part_start = np.flatnonzero(change)
        part_seg = oseg[part_start]
        parts_of = np.bincount(part_seg, minlength=len(seg_start))
        seg_ok = np.ones(len(seg_start), dtype=bool)
        np.logical_and.at(seg_ok, part_seg, ok)
        drop = np.zeros(len(part_start), dtype=bool)  # failing parts suppressed within the budget
        if budget_left > 0:
            budget_left, drop = _rescue(budget_left, part_start, len(oseg), part_seg, ok, seg_ok, parts_of)
        cut_hier = np.zeros(len(seg_start), dtype=bool)
        cut_hier[segs] = hier[choice]
        split = seg_ok & (parts_of >= 2)
        descend = seg_ok & (parts_of == 1) & cut_hier  # every value under one child: go down a level
        failed = np.zeros(len(seg_start), dtype=bool)
        failed[segs] = True
        failed &= ~(split | descend)
        tried[failed, dim_of[failed]] = True
        level[descend, dim_of[descend]] -= 1
        state = (seg_start, level, tried, open_, sup)
        seg_start, level, tried, open_, sup = _replace_cut(state, split, part_seg, pos[part_start], drop, hier, dim_of)
        if progress is not None:
            progress(f"Mondrian round {rounds}: {len(seg_start):,} partitions, {int(open_.sum()):,} still open")
    return perm, seg_start, level, sup


def _part_keys(
    key: npt.NDArray[np.integer],
    oseg: IntArray,
    dpos: IntArray,
    rec: IntArray,
    nodes: dict[int, Any],
    level: IntArray,
    codes: Sequence[IntArray],
) -> IntArray:
    """Each record's part of its segment's cut (records sorted by segment, then by ``key``,
    their rank on the segment's chosen dimension ``dpos``): an ordered dimension's left of
    the (lower) median, or strictly below it when nothing is above; a hierarchical one's
    child node one level down."""
    starts = np.flatnonzero(np.r_[True, oseg[1:] != oseg[:-1]])
    length = np.diff(np.r_[starts, len(oseg)])
    med = np.repeat(key[starts + (length - 1) // 2], length)
    left = key <= med
    everything = np.repeat(np.add.reduceat(left.astype(np.int64), starts) == length, length)
    part_key = np.where(np.where(everything, key < med, left), 0, 1)
    for j, m in nodes.items():
        at = np.flatnonzero(dpos == j)
        if len(at):
            part_key[at] = m[level[oseg[at], j] - 1, codes[j][rec[at]]]
    return part_key


def _parts_ok(
    guarantee: Guarantee, part: IntArray, rec: IntArray, s: IntArray, s_card: int, research: int | None
) -> npt.NDArray[np.bool_]:
    """Whether each part satisfies the guarantee: its records' histogram, or with a
    population (``research``: the first records are published) the research records'
    histograms and the population's records counted per part."""
    n_parts = int(part[-1]) + 1
    if research is None:
        return guarantee.groups_satisfied(_histograms(part, s[rec], n_parts, s_card))
    mine = rec < research
    h = _histograms(part[mine], s[rec[mine]], n_parts, s_card)
    pop = np.bincount(part[~mine], minlength=n_parts)
    return guarantee.groups_satisfied(Histograms(h.group, h.count, n_parts, h.value, pop))


def _replace_cut(
    state: tuple[Any, Any, Any, Any, Any],
    split: npt.NDArray[np.bool_],
    part_seg: IntArray,
    part_pos: IntArray,
    drop: npt.NDArray[np.bool_],
    hier: npt.NDArray[np.bool_],
    dim_of: IntArray,
) -> tuple[Any, Any, Any, Any, Any]:
    """The allowed cuts made: each cut segment (``split``) replaced by its parts (fresh:
    nothing tried yet; a hierarchical cut's parts one level down), in the records' order;
    ``state`` is (segment starts, levels, tried dimensions, open, suppressed)."""
    seg_start, level, tried, open_, sup = state
    new = split[part_seg]
    owner = part_seg[new]
    kept = ~split
    child_level = level[owner]
    went_down = hier[dim_of[owner]]
    child_level[np.flatnonzero(went_down), dim_of[owner][went_down]] -= 1
    starts_all = np.r_[seg_start[kept], part_pos[new]]
    o = np.argsort(starts_all, kind="stable")
    tried = np.vstack([tried[kept], np.zeros((len(owner), tried.shape[1]), dtype=bool)])[o]
    return (
        starts_all[o],
        np.vstack([level[kept], child_level])[o],
        tried,
        np.r_[open_[kept], ~drop[new]][o],
        np.r_[sup[kept], drop[new]][o],
    )


def _initial(dims: Sequence[Dimension], start: State | None) -> tuple[IntArray, IntArray, Any, Any]:
    """The partitions' state to start from: one partition of every record at the tops, or
    ``start`` (partitions already cut elsewhere)."""
    d = len(dims)
    if start is None:
        level = np.array([[dim.top for dim in dims]], dtype=np.int64).reshape(1, d)
        return np.zeros(1, dtype=np.int64), level, np.zeros((1, d), dtype=bool), np.ones(1, dtype=bool)
    seg_start, level = np.array(start[0], dtype=np.int64), np.array(start[1], dtype=np.int64)
    return seg_start, level, np.array(start[2], dtype=bool), np.array(start[3], dtype=bool)


def _widths(
    dims: Sequence[Dimension],
    codes: Sequence[IntArray],
    shape: tuple[dict[int, Any], dict[int, Any], npt.NDArray[np.float64]],
    level: IntArray,
    rec: IntArray,
    first: IntArray,
) -> npt.NDArray[np.float64]:
    """The normalized width of every dimension inside every open segment (``level``: the
    segments' levels; ``rec``: their records, each segment contiguous from ``first``;
    ``shape``: the hierarchical dimensions' nodes and leaves under each, and the ordered
    ones' spans)."""
    nodes, under, spans = shape
    widths = np.zeros((len(first), len(dims)))
    for j, dim in enumerate(dims):
        if j in nodes:
            lvl = level[:, j]
            node = nodes[j][lvl, codes[j][rec[first]]]
            widths[:, j] = np.where(lvl > 0, under[j][lvl, node] / len(dim.values), 0.0)
        elif spans[j] > 0:
            w = dim.width[codes[j][rec]]
            widths[:, j] = (np.maximum.reduceat(w, first) - np.minimum.reduceat(w, first)) / spans[j]
    return widths


def _rescue(
    budget_left: int,
    part_start: IntArray,
    n_open: int,
    part_seg: IntArray,
    ok: npt.NDArray[np.bool_],
    seg_ok: npt.NDArray[np.bool_],
    parts_of: IntArray,
) -> tuple[int, npt.NDArray[np.bool_]]:
    """Local suppression within the budget: cuts with a failing part are allowed when another
    part satisfies the guarantee and the failing parts' records fit in what is left, in the
    records' order while the budget lasts.  Returns the budget left and the parts dropped;
    ``seg_ok`` is updated (the rescued segments)."""
    n_seg = len(seg_ok)
    part_size = np.diff(np.r_[part_start, n_open])
    bad = np.bincount(part_seg, weights=np.where(ok, 0, part_size), minlength=n_seg).astype(np.int64)
    good = np.bincount(part_seg, weights=ok, minlength=n_seg)
    cand = np.flatnonzero(~seg_ok & (parts_of >= 2) & (good >= 1))
    take = cand[np.cumsum(bad[cand]) <= budget_left]
    drop = np.zeros(len(part_start), dtype=bool)
    if len(take):
        budget_left -= int(bad[take].sum())
        rescued = np.zeros(n_seg, dtype=bool)
        rescued[take] = True
        seg_ok |= rescued
        drop = rescued[part_seg] & ~ok
    return budget_left, drop
