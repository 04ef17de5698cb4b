"""Mondrian on a Dask cluster: the ``mondrian`` anonymizer's path for a table whose records
are not in memory (:class:`versapub.scale.table.DaskTable`).

The same algorithm as :func:`versapub.anonymizers.generalizing.mondrian.partition` (LeFevre, DeWitt &
Ramakrishnan, ICDE 2006, ``Anonymize(partition)``), in two phases:

* **rounds on the cluster** while some open partition holds more than
  :data:`LOCAL_RECORDS` records: every record's partition is a file of ids beside its part
  of codes; per round one pass applies the last round's cuts and computes each partition's
  histogram of the chosen dimension's ranks (its median: the cut), and a second the
  candidate parts' sensitive histograms (the guarantee's test), sizes and ranges (the next
  round's widths).  Only partitions' bounds and cuts travel; no record leaves its worker.
  Partitions that already fit are left for the next phase;
* **closing locally**: partitions are packed into buckets of at most
  :data:`LOCAL_RECORDS` records, each bucket's records gathered on one worker (through the
  scratch directory) and cut to the end by the in-memory ``partition`` resumed from their
  state.  Partitions evolve independently of each other (their widths, medians and tests
  are their own; the table-wide spans and the guarantee's context are fixed), so the
  classes are those of one in-memory run on the whole table (tested).

The classes' labels are then made global (one dictionary per attribute, in text order, as
every published file's value order), and the cells counted and hash-partitioned like every
count table on the cluster (:func:`versapub.scale.table.materialize`).
"""

from __future__ import annotations

import itertools
import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, Labels
from versapub.anonymizers.generalizing.generalize import (
    Dimension,
    IntArray,
    class_cover,
    class_stats,
    leaf_order,
    published_values,
)
from versapub.anonymizers.generalizing.mondrian_cuts import partition, segment_starts, smallest_group
from versapub.data.groupby import group_rows
from versapub.data.histograms import combine_achieved
from versapub.privacy.guarantees.base import Guarantee, Histograms
from versapub.privacy.rules import Rule
from versapub.scale.hold import hold

if TYPE_CHECKING:
    from versapub.data.counts import CountTable
    from versapub.scale.table import DaskTable

#: Partitions of at most this many records are cut to the end on one worker, in memory
#: (about 1 GB of a worker's memory per million records and 17 dimensions at most).
LOCAL_RECORDS = 2_000_000
#: A candidate part's key: ``partition * KEY + part`` (a part: 0/1 of an ordered cut, or a
#: hierarchy node).
KEY = np.int64(1 << 32)
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Spec:
    """What every task needs: the quasi-identifiers as dimensions, the sensitive attribute
    (``None``: k-anonymity of the quasi-identifiers, every record's value 0) and the
    columns kept exactly beside the classes."""

    dims: tuple[Dimension, ...]
    s: str | None
    s_card: int
    kept: tuple[str, ...]

    @property
    def qi(self) -> list[str]:
        return [d.attribute for d in self.dims]


@dataclass(frozen=True)
class Cuts:
    """One round's cuts, per partition id: the dimension cut (-1: none), an ordered cut's
    threshold (ranks ``<= thr`` go left), a hierarchical cut's level (its children's)."""

    dim: IntArray
    thr: IntArray
    level: IntArray


@dataclass(frozen=True)
class Moves:
    """The partitions a round split: candidate keys (sorted) and the new partition id of each."""

    cuts: Cuts
    keys: IntArray
    ids: IntArray


# -- inside the workers -----------------------------------------------------------------------------
def _load(file: str, names: Sequence[str]) -> dict[str, IntArray]:
    import pyarrow.parquet as pq

    t = pq.read_table(file, columns=list(dict.fromkeys(names)))
    return {n: t.column(n).to_numpy().astype(np.int64) for n in t.column_names}


def _part_of(cols: dict[str, IntArray], seg: IntArray, cuts: Cuts, spec: Spec) -> tuple[Bools, IntArray]:
    """Which records are in a cut partition, and each one's part (0/1 for an ordered cut, the
    child node for a hierarchical one)."""
    known = seg < len(cuts.dim)
    dim = np.where(known, cuts.dim[np.minimum(seg, len(cuts.dim) - 1)], -1)
    part = np.zeros(len(seg), dtype=np.int64)
    for j, d in enumerate(spec.dims):
        at = np.flatnonzero(dim == j)
        if not len(at):
            continue
        code = cols[d.attribute][at]
        if d.nodes is None:
            part[at] = d.rank[code] > cuts.thr[seg[at]]
        else:
            part[at] = np.stack(d.nodes)[cuts.level[seg[at]], code]
    return dim >= 0, part


def _save(path: str, seg: IntArray) -> None:
    tmp = f"{path}.{uuid.uuid4().hex[:8]}.tmp"
    with open(tmp, "wb") as f:
        np.save(f, seg.astype(np.int32))
    os.replace(tmp, path)


def _segments(codes_file: str, seg_in: str | None, seg_out: str, moves: Moves | None, spec: Spec) -> IntArray:
    """The part's partition ids after the last round's moves, written to a new file
    ``seg_out`` (never over ``seg_in``: a task run twice gives the same file)."""
    if seg_in is None:
        seg = np.zeros(_rows(codes_file), dtype=np.int64)
    else:
        seg = np.load(seg_in).astype(np.int64)
        if moves is not None:
            cols = _load(codes_file, [d.attribute for d in spec.dims])
            cut, part = _part_of(cols, seg, moves.cuts, spec)
            at = np.flatnonzero(cut)
            if len(at):
                seg[at] = moves.ids[np.searchsorted(moves.keys, seg[at] * KEY + part[at])]
    _save(seg_out, seg)
    return seg


def _rows(file: str) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(file).metadata.num_rows)


def _medians_part(
    codes_file: str, seg_in: str | None, seg_out: str, moves: Moves | None, ordered: Cuts, spec: Spec
) -> tuple[IntArray, IntArray]:
    """Apply the last round's moves; then, per partition cut on an ordered dimension, the
    records per rank of that dimension: ``(partition * KEY + rank, records)``."""
    hold("mondrian")  # a test's seam (versapub.scale.hold); nothing otherwise
    seg = _segments(codes_file, seg_in, seg_out, moves, spec)
    cols = _load(codes_file, [d.attribute for d in spec.dims])
    known = seg < len(ordered.dim)
    dim = np.where(known, ordered.dim[np.minimum(seg, len(ordered.dim) - 1)], -1)
    keys = []
    for j, d in enumerate(spec.dims):
        at = np.flatnonzero(dim == j)
        if len(at):
            keys.append(seg[at] * KEY + d.rank[cols[d.attribute][at]])
    if not keys:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    uniq, counts = np.unique(np.concatenate(keys), return_counts=True)
    return uniq.astype(np.int64), counts.astype(np.int64)


def _parts_part(codes_file: str, seg_file: str, cuts: Cuts, spec: Spec) -> dict[str, Any]:
    """Per candidate part of a cut partition: its records per sensitive value, and per
    ordered dimension the smallest and largest width of its records."""
    seg = np.load(seg_file).astype(np.int64)
    names = [d.attribute for d in spec.dims] + ([spec.s] if spec.s else [])
    cols = _load(codes_file, names)
    cut, part = _part_of(cols, seg, cuts, spec)
    at = np.flatnonzero(cut)
    cand = seg[at] * KEY + part[at]
    s = cols[spec.s][at] if spec.s else np.zeros(len(at), dtype=np.int64)
    uniq, inv = np.unique(cand, return_inverse=True)
    inv = inv.astype(np.int64).ravel()
    pair, pc = np.unique(inv * spec.s_card + s, return_counts=True)
    lo = np.full((len(uniq), len(spec.dims)), np.inf)
    hi = np.full((len(uniq), len(spec.dims)), -np.inf)
    for j, d in enumerate(spec.dims):
        if d.nodes is None:
            w = d.width[cols[d.attribute][at]]
            np.minimum.at(lo[:, j], inv, w)
            np.maximum.at(hi[:, j], inv, w)
    return {
        "cand": uniq,
        "pair_cand": uniq[pair // spec.s_card],
        "pair_s": pair % spec.s_card,
        "pair_n": pc,
        "lo": lo,
        "hi": hi,
    }


def _scatter_part(
    codes_file: str,
    seg_in: str | None,
    seg_out: str,
    moves: Moves | None,
    spec: Spec,
    bucket_of: IntArray,
    out: str,
    i: int,
    names: Sequence[str],
) -> None:
    """The part's records (after the last round's moves) written per bucket
    (``out/bucket-B/part-I.npz``: the partition id and the codes of ``names``)."""
    seg = _segments(codes_file, seg_in, seg_out, moves, spec)
    cols = _load(codes_file, names)
    b = bucket_of[seg]
    order = np.argsort(b, kind="stable")
    bs = b[order]
    edges = np.flatnonzero(np.r_[True, bs[1:] != bs[:-1], True])
    for lo, hi in itertools.pairwise(edges):
        rows = order[lo:hi]
        d = Path(out) / f"bucket-{int(bs[lo]):05d}"
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".part-{i:05d}.{uuid.uuid4().hex[:8]}.npz"
        arrays: dict[str, Any] = {f"c{k}": cols[n][rows].astype(np.int32) for k, n in enumerate(names)}
        np.savez(tmp, seg=seg[rows].astype(np.int32), **arrays)
        os.replace(tmp, d / f"part-{i:05d}.npz")


def _close_bucket(
    directory: str,
    names: Sequence[str],
    spec: Spec,
    guarantee: Guarantee,
    ids: IntArray,
    level: IntArray,
    tried: Bools,
    open_: Bools,
    out: str,
) -> dict[str, Any]:
    """One bucket's partitions cut to the end in memory (resumed from their state: ``ids``
    sorted, with their ``level``, ``tried`` and ``open_``); its cells written to ``out``
    with each class's cover; returns the classes' statistics and the covers used."""
    hold("mondrian")  # a test's seam (versapub.scale.hold); nothing otherwise
    files = sorted(Path(directory).glob("part-*.npz"))
    loaded = [np.load(f) for f in files]
    seg = np.concatenate([x["seg"] for x in loaded]).astype(np.int64)
    cols = {n: np.concatenate([x[f"c{k}"] for x in loaded]).astype(np.int64) for k, n in enumerate(names)}
    order = np.argsort(seg, kind="stable")
    seg = seg[order]
    cols = {n: c[order] for n, c in cols.items()}
    local = np.searchsorted(ids, seg)
    start = np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
    present = local[start]
    codes = [cols[d.attribute] for d in spec.dims]
    s = cols[spec.s] if spec.s else np.zeros(len(seg), dtype=np.int64)
    state = (start.astype(np.int64), level[present], tried[present], open_[present])
    perm, seg_start, lvl, _ = partition(list(spec.dims), codes, s, spec.s_card, guarantee, None, start=state)
    pos_seg, _ = segment_starts(seg_start, len(s))
    cls = np.empty(len(s), dtype=np.int64)
    cls[perm] = pos_seg
    n_cls = len(seg_start)
    cover = class_cover(list(spec.dims), codes, cls, n_cls, lvl)
    stats = class_stats(guarantee, cls, s, n_cls, spec.s_card)
    kept = [cols[k] for k in spec.kept]
    cells = group_rows([cls, s, *kept], [n_cls, spec.s_card, *(int(k.max()) + 1 if len(k) else 1 for k in kept)])
    c = cells.keys[0].astype(np.int64)
    arrays: dict[str, Any] = {f"a{j}": a[c] for j, (a, _) in enumerate(cover)}
    arrays |= {f"b{j}": b[c] for j, (_, b) in enumerate(cover)}
    arrays |= {f"k{j}": k.astype(np.int64) for j, k in enumerate(cells.keys[2:])}
    tmp = f"{out}.{uuid.uuid4().hex[:8]}.npz"
    np.savez(
        tmp,
        s=cells.keys[1].astype(np.int64),
        count=cells.counts.astype(np.int64),
        **arrays,
    )
    os.replace(tmp, out)
    used = [np.unique(np.stack([arrays[f"a{j}"], arrays[f"b{j}"]]), axis=1) for j in range(len(spec.dims))]
    return {"stats": stats, "used": used}


def _encode_bucket(file: str, names: Sequence[str], where: dict[str, tuple[str, int]], maps: Any) -> Any:
    """A bucket's cells as published codes (``names..., count``): each cover through its
    attribute's map (sorted keys ``a * width + b`` and their codes)."""
    import pandas as pd

    x = np.load(file)
    out: dict[str, Any] = {}
    for n in names:
        kind, j = where[n]
        if kind == "dim":
            keys, codes, width = maps[j]
            out[n] = codes[np.searchsorted(keys, x[f"a{j}"] * width + x[f"b{j}"])].astype(np.int32)
        elif kind == "s":
            out[n] = x["s"].astype(np.int32)
        else:
            out[n] = x[f"k{j}"].astype(np.int32)
    out["count"] = x["count"].astype(np.int64)
    return pd.DataFrame(out)


# -- the driver (the client) -------------------------------------------------------------------------
@dataclass
class _Partitions:
    """Every partition's state by id — the client's only record of the data: sizes, levels
    and nodes per dimension, dimensions tried, ranges of widths; ``alive`` is false for a
    partition replaced by its parts."""

    size: IntArray
    level: IntArray
    node: IntArray
    tried: Bools
    open_: Bools
    alive: Bools
    lo: npt.NDArray[np.float64]
    hi: npt.NDArray[np.float64]

    def add(self, size: IntArray, level: IntArray, node: IntArray, lo: Any, hi: Any) -> IntArray:
        first = len(self.size)
        self.size = np.r_[self.size, size]
        self.level = np.vstack([self.level, level])
        self.node = np.vstack([self.node, node])
        self.tried = np.vstack([self.tried, np.zeros(level.shape, dtype=bool)])
        self.open_ = np.r_[self.open_, np.ones(len(size), dtype=bool)]
        self.alive = np.r_[self.alive, np.ones(len(size), dtype=bool)]
        self.lo = np.vstack([self.lo, lo])
        self.hi = np.vstack([self.hi, hi])
        return np.arange(first, len(self.size), dtype=np.int64)


def _start(table: DaskTable, spec: Spec) -> _Partitions:
    """The whole table as one open partition (its ranges from the columns' value counts)."""
    d = len(spec.dims)
    level = np.array([[dim.top for dim in spec.dims]], dtype=np.int64).reshape(1, d)
    node = np.zeros((1, d), dtype=np.int64)
    lo, hi = np.zeros((1, d)), np.zeros((1, d))
    for j, dim in enumerate(spec.dims):
        present = np.flatnonzero(table.column(dim.attribute).counts() > 0)
        if dim.nodes is not None and len(present):
            node[0, j] = dim.nodes[dim.top][present[0]]
        elif len(present):
            lo[0, j], hi[0, j] = dim.width[present].min(), dim.width[present].max()
    one = np.ones(1, dtype=bool)
    return _Partitions(np.array([table.n_rows], np.int64), level, node, np.zeros((1, d), bool), one, one, lo, hi)


def _widths(p: _Partitions, segs: IntArray, dims: Sequence[Dimension], under: dict[int, Any]) -> Any:
    """Normalized width of every dimension in the partitions ``segs``, as ``partition``
    measures it (a hierarchy: the share of leaves under the partition's node)."""
    widths = np.zeros((len(segs), len(dims)))
    for j, dim in enumerate(dims):
        if dim.nodes is not None:
            lvl = p.level[segs, j]
            widths[:, j] = np.where(lvl > 0, under[j][lvl, p.node[segs, j]] / len(dim.values), 0.0)
        elif dim.span > 0:
            widths[:, j] = (p.hi[segs, j] - p.lo[segs, j]) / dim.span
    return widths


def _thresholds(med: list[tuple[IntArray, IntArray]], size: IntArray, m: int) -> IntArray:
    """Per partition cut on an ordered dimension, the largest rank going left: the lower
    median (the ``(length - 1) // 2``-th record in rank order) or, when no record is above
    it, the rank below (``partition``'s rule)."""
    thr = np.zeros(m, dtype=np.int64)
    keys = np.concatenate([k for k, _ in med]) if med else np.zeros(0, np.int64)
    if not len(keys):
        return thr
    uk, inv = np.unique(keys, return_inverse=True)
    total = np.bincount(inv.ravel(), weights=np.concatenate([c for _, c in med])).astype(np.int64)
    seg, rank = uk // KEY, uk % KEY
    first = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
    within = np.cumsum(total) - np.repeat(np.cumsum(total)[first] - total[first], np.diff(np.r_[first, len(uk)]))
    half = (size[seg] - 1) // 2
    at = (within > half) & (within - total <= half)
    med_rank = np.zeros(m, dtype=np.int64)
    med_rank[seg[at]] = rank[at]
    top = np.full(m, -1, dtype=np.int64)
    np.maximum.at(top, seg, rank)
    return np.where(med_rank == top, med_rank - 1, med_rank)


def _decide(
    p: _Partitions, parts: list[dict[str, Any]], cuts: Cuts, segs: IntArray, spec: Spec, guarantee: Guarantee
) -> Moves:
    """``partition``'s decisions for the cut partitions ``segs`` from their candidate parts:
    split when every part satisfies the guarantee and there are two or more, descend a
    level when a hierarchy's one child holds them all, else mark the dimension tried."""
    m, d = len(p.size), len(spec.dims)
    cand = np.concatenate([x["cand"] for x in parts])
    uc, inv = np.unique(cand, return_inverse=True)
    inv = inv.astype(np.int64).ravel()
    lo = np.full((len(uc), d), np.inf)
    hi = np.full((len(uc), d), -np.inf)
    np.minimum.at(lo, inv, np.concatenate([x["lo"] for x in parts]))
    np.maximum.at(hi, inv, np.concatenate([x["hi"] for x in parts]))
    idx = np.searchsorted(uc, np.concatenate([x["pair_cand"] for x in parts]))
    uk, pinv = np.unique(idx * spec.s_card + np.concatenate([x["pair_s"] for x in parts]), return_inverse=True)
    pn = np.bincount(pinv.ravel(), weights=np.concatenate([x["pair_n"] for x in parts])).astype(np.int64)
    group = uk // spec.s_card
    ok = np.asarray(guarantee.groups_satisfied(Histograms(group, pn, len(uc), uk % spec.s_card)))
    size = np.bincount(group, weights=pn, minlength=len(uc)).astype(np.int64)
    cseg, cpart = uc // KEY, uc % KEY
    seg_ok = np.ones(m, dtype=bool)
    np.logical_and.at(seg_ok, cseg, ok)
    n_parts = np.bincount(cseg, minlength=m)
    hier = np.array([dim.nodes is not None for dim in spec.dims], dtype=bool)
    cut_hier = np.zeros(m, dtype=bool)
    cut_hier[segs] = hier[cuts.dim[segs]]
    split = seg_ok & (n_parts >= 2)
    descend = seg_ok & (n_parts == 1) & cut_hier
    failed = np.zeros(m, dtype=bool)
    failed[segs] = True
    failed &= ~(split | descend)
    p.tried[failed, cuts.dim[failed]] = True
    down = descend[cseg]  # a hierarchy's one child holds them all: go down a level
    p.level[cseg[down], cuts.dim[cseg[down]]] -= 1
    p.node[cseg[down], cuts.dim[cseg[down]]] = cpart[down]
    new = split[cseg]
    owner, dim = cseg[new], cuts.dim[cseg[new]]
    level, node = p.level[owner].copy(), p.node[owner].copy()
    h = hier[dim]
    level[np.flatnonzero(h), dim[h]] -= 1
    node[np.flatnonzero(h), dim[h]] = cpart[new][h]
    p.open_[split] = False
    p.alive[split] = False
    ids = p.add(size[new], level, node, lo[new], hi[new])
    return Moves(Cuts(np.where(split, cuts.dim, -1), cuts.thr, cuts.level), uc[new], ids)  # only split ones move


def publish_on_cluster(
    table: DaskTable,
    rule: Rule | None,
    kept: Sequence[str],
    dims: Sequence[Dimension],
    guarantee: Guarantee,
    progress: Callable[[str], None] | None = None,
) -> AnonymizedTable:
    """The generalized table of Mondrian's classes of ``table`` (module docstring)."""
    say = progress or (lambda msg: None)
    work = table.scratch / f"mondrian-{uuid.uuid4().hex[:10]}"
    work.mkdir(parents=True)
    try:
        spec = Spec(tuple(dims), rule.rhs if rule else None, table.cardinality(rule.rhs) if rule else 1, tuple(kept))
        files = [str(f) for f in sorted(table.codes_path.glob("*.parquet"))]
        shared = table.runner.share(spec)  # once: a future dropped and scattered again may be lost meanwhile
        p, seg_files, moves, rounds = _rounds(table, spec, shared, guarantee, files, work, say)
        return _close(table, spec, shared, guarantee, files, work, p, seg_files, moves, rule, rounds, say)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _rounds(
    table: DaskTable,
    spec: Spec,
    shared: Any,
    guarantee: Guarantee,
    files: list[str],
    work: Path,
    say: Callable[[str], None],
) -> tuple[_Partitions, list[str | None], Moves | None, int]:
    """Mondrian's rounds on the cluster while an open partition holds more than
    :data:`LOCAL_RECORDS` records; the partitions, the files of partition ids and the
    moves of the last round (not yet applied to them)."""
    from dask import delayed

    dims, d, runner = spec.dims, len(spec.dims), table.runner
    smallest = smallest_group(guarantee)
    under = {
        j: np.stack([np.bincount(lv, minlength=int(np.stack(dim.nodes).max()) + 1) for lv in dim.nodes])
        for j, dim in enumerate(dims)
        if dim.nodes is not None
    }
    hier = np.array([dim.nodes is not None for dim in dims], dtype=bool)
    p = _start(table, spec)
    moves: Moves | None = None
    seg_files: list[str | None] = [None] * len(files)
    rounds = 0
    while d:
        active = np.flatnonzero(p.open_ & (p.size > LOCAL_RECORDS))
        if not len(active):
            break
        rounds += 1
        widths = _widths(p, active, dims, under)
        widths[p.tried[active]] = -1.0
        widths[p.size[active] < 2 * smallest] = -1.0
        choice = np.argmax(widths, axis=1)
        can = widths[np.arange(len(active)), choice] > 0
        p.open_[active[~can]] = False
        segs, choice = active[can], choice[can]
        m = len(p.size)
        dim_of = np.full(m, -1, dtype=np.int64)
        dim_of[segs] = choice
        ordered = Cuts(np.where(hier[np.maximum(dim_of, 0)], -1, dim_of), dim_of, dim_of)
        out = [str(work / f"seg-{rounds}-{i:05d}.npy") for i in range(len(files))]
        med = runner.run(
            [
                delayed(_medians_part)(f, s, o, moves, ordered, shared)
                for f, s, o in zip(files, seg_files, out, strict=True)
            ],
            f"on the cluster: Mondrian round {rounds}, medians",
        )
        for old in seg_files:
            if old is not None:
                Path(old).unlink(missing_ok=True)
        seg_files = list(out)
        moves = None
        if not len(segs):
            continue
        level_of = np.where(dim_of >= 0, p.level[np.arange(m), np.maximum(dim_of, 0)] - 1, 0)
        cuts = Cuts(dim_of, _thresholds(med, p.size, m), np.maximum(level_of, 0))
        parts = runner.run(
            [delayed(_parts_part)(f, s, cuts, shared) for f, s in zip(files, seg_files, strict=True)],
            f"on the cluster: Mondrian round {rounds}, the parts' histograms",
        )
        moves = _decide(p, parts, cuts, segs, spec, guarantee)
        big = int((p.open_ & (p.size > LOCAL_RECORDS)).sum())
        say(
            f"Mondrian round {rounds} on the cluster: {int(p.alive.sum()):,} partitions, {big:,} still over "
            f"{LOCAL_RECORDS:,} records"
        )
    return p, seg_files, moves, rounds


def _buckets(size: IntArray) -> IntArray:
    """Consecutive partitions packed into buckets of about :data:`LOCAL_RECORDS` records,
    numbered 0, 1, ... without gaps (a partition larger than the limit, closed on the
    cluster, would otherwise skip numbers and leave empty buckets)."""
    before = np.cumsum(size) - size
    _, dense = np.unique(before // max(LOCAL_RECORDS, 1), return_inverse=True)
    return dense.astype(np.int64).ravel()


def _published(
    spec: Spec, closed: list[dict[str, Any]]
) -> tuple[dict[int, Any], dict[str, Any], dict[str, Labels], list[str]]:
    """Per dimension, the published values of the cells every bucket used: the code maps,
    the dictionaries, the generalized labels' leaves and notes on renamed hierarchy nodes."""
    maps: dict[int, Any] = {}
    dicts: dict[str, Any] = {}
    leaves: dict[str, Labels] = {}
    notes: list[str] = []
    for j, dim in enumerate(spec.dims):
        used = np.unique(np.concatenate([c["used"][j] for c in closed], axis=1), axis=1)
        keys, codes, dictionary, (labels, spans), width = published_values(dim, used)
        maps[j] = (keys, codes, width)
        dicts[dim.attribute] = dictionary
        if spans:
            leaves[dim.attribute] = Labels(leaf_order(dim), spans)
        shown = set(labels)
        notes += [
            f"the hierarchy of {dim.attribute!r} names two things {old!r}: its level-{k} node is published as {new!r}"
            for old, k, new in dim.renamed
            if new in shown
        ]
    return maps, dicts, leaves, notes


def _summary(
    guarantee: Guarantee, stats: list[dict[str, Any]], rows: int, cluster: dict[str, int], notes: list[str]
) -> dict[str, Any]:
    """The table's figures for the report, from every bucket's."""
    sizes: dict[int, int] = {}
    for st in stats:
        for k, v in st["group_sizes"].items():
            sizes[int(k)] = sizes.get(int(k), 0) + int(v)
    return {
        "rows": rows,
        "groups": sum(int(st["groups"]) for st in stats),
        "group_sizes": dict(sorted(sizes.items())),
        "achieved": combine_achieved(guarantee, [float(st["achieved"]) for st in stats]) if stats else None,
        "discernibility": sum(int(st["discernibility"]) for st in stats),
        "cluster": cluster,
        **({"notes": notes} if notes else {}),
    }


def _close(
    table: DaskTable,
    spec: Spec,
    shared: Any,
    guarantee: Guarantee,
    files: list[str],
    work: Path,
    p: _Partitions,
    seg_files: list[str | None],
    moves: Moves | None,
    rule: Rule | None,
    rounds: int,
    say: Callable[[str], None],
) -> AnonymizedTable:
    """Every partition cut to the end in memory, bucket by bucket; the published cells."""
    import dask.dataframe as dd
    import pandas as pd
    from dask import delayed

    from versapub.scale.table import materialize

    runner = table.runner
    names = list(dict.fromkeys([*spec.qi, *([spec.s] if spec.s else []), *spec.kept]))
    ids = np.flatnonzero(p.alive)
    bucket = _buckets(p.size[ids])
    bucket_of = np.full(len(p.size), -1, dtype=np.int64)
    bucket_of[ids] = bucket
    n_buckets = int(bucket.max()) + 1 if len(bucket) else 0
    say(f"Mondrian: {len(ids):,} partitions closed locally in {n_buckets} bucket(s) of records")
    spread = work / "buckets"
    runner.run(
        [
            delayed(_scatter_part)(
                f, s, str(work / f"final-{i:05d}.npy"), moves, shared, bucket_of, str(spread), i, names
            )
            for i, (f, s) in enumerate(zip(files, seg_files, strict=True))
        ],
        "on the cluster: Mondrian, gathering each bucket's records",
    )
    g = runner.share(guarantee)
    cells = [str(work / f"cells-{b:05d}.npz") for b in range(n_buckets)]
    closed = runner.run(
        [
            delayed(_close_bucket)(
                str(spread / f"bucket-{b:05d}"),
                names,
                shared,
                g,
                ids[bucket == b],
                p.level[ids[bucket == b]],
                p.tried[ids[bucket == b]],
                p.open_[ids[bucket == b]],
                cells[b],
            )
            for b in range(n_buckets)
        ],
        "on the cluster: Mondrian, cutting each bucket's partitions in memory",
    )
    shutil.rmtree(spread, ignore_errors=True)
    maps, dicts, leaves, notes = _published(spec, closed)
    where: dict[str, tuple[str, int]] = {d.attribute: ("dim", j) for j, d in enumerate(spec.dims)}
    if spec.s:
        where[spec.s] = ("s", 0)
        dicts[spec.s] = table.column(spec.s).values
    for j, k in enumerate(spec.kept):
        where[k] = ("kept", j)
        dicts[k] = table.column(k).values
    order = [a for a in table.names if a in where]
    meta = pd.DataFrame({**{n: pd.Series([], dtype="int32") for n in order}, "count": pd.Series([], dtype="int64")})
    shared_maps = runner.share(maps)
    frame = dd.from_delayed(
        [delayed(_encode_bucket)(c, order, where, shared_maps) for c in cells], meta=meta, verify_meta=False
    )
    ct = materialize(
        frame,
        order,
        order,
        [len(dicts[n]) for n in order],
        runner,
        table.scratch / f"generalized-{uuid.uuid4().hex[:10]}",
        [dicts[n] for n in order],
    )
    cluster = {"rounds": rounds, "buckets": n_buckets}
    summary = _summary(guarantee, [c["stats"] for c in closed], ct.n_rows, cluster, notes)
    return AnonymizedTable(
        table.names,
        "generalized",
        rule,
        {"data": cast("CountTable", ct)},  # a count table on the cluster (the backend seam's Counts)
        summary,
        leaves=leaves,
        kept=tuple(spec.kept),
    )
