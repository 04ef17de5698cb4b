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

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest
from versapub.anonymizers.generalizing.floor import floored, kept_cells, kept_floor_first, require_floor
from versapub.anonymizers.generalizing.generalize import (
    Dimension,
    IntArray,
    KeepingColumns,
    Target,
    class_cover,
    class_stats,
    classes_table,
    dimensions,
    root_cover,
    target,
    target_names,
)
from versapub.anonymizers.generalizing.mondrian_cuts import partition, segment_starts
from versapub.anonymizers.generalizing.population import in_table_codes, joint_table, refuse_suppression
from versapub.anonymizers.generalizing.suppression import MODES, kept_rows, reasons, with_removed
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InfeasibleError
from versapub.plugins import Param, validated
from versapub.privacy.guarantees.base import Guarantee, Histograms
from versapub.privacy.guarantees.population import Population
from versapub.privacy.rules import Rule


class Mondrian(KeepingColumns):
    """Strict multidimensional Mondrian (see the module docstring).  Ordered attributes are
    cut at the median; attributes with a hierarchy (``--hierarchy ATTR=FILE``) are
    specialized down it.  ``suppression``: the largest share of records that may be
    suppressed (0 to < 1, ARX's semantics): a cut whose failing parts fit in the budget is
    made and those parts' records are removed, in no table (``suppression_mode="remove"``,
    the default) or published with every quasi-identifier at its root (``"class"``: one
    more class, which must satisfy the guarantee too: ``docs/choices.md``)."""

    name = "mondrian"
    max_rules = 1
    #: Meets the job's floor on published cells while it cuts (in memory).
    meets_k = True
    #: Each class's ranges are its own (:class:`~versapub.anonymizers.base.RecodesLocally`).
    recodes_locally = True
    #: Runs on the Dask backend too (rounds of cuts from per-partition histograms there).
    out_of_core = True
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "suppression": Param("number", low=0, high=1, high_open=True),
        "suppression_mode": Param("choice", choices=MODES),
    }
    glossary: ClassVar[str] = (
        "Mondrian (LeFevre, DeWitt & Ramakrishnan, ICDE 2006): strict multidimensional partitioning; partitions are "
        "cut at the median of one attribute at a time while both halves still meet the guarantee."
    )

    def __init__(self, suppression: float = 0.0, suppression_mode: str = "remove") -> None:
        got = validated(
            self.name, self.parameter_constraints, {"suppression": suppression, "suppression_mode": suppression_mode}
        )
        self.suppression = float(got["suppression"])
        self.suppression_mode = str(got["suppression_mode"])

    def params(self) -> dict[str, Any]:
        return {"suppression": self.suppression, "suppression_mode": self.suppression_mode}

    @property
    def in_memory_only(self) -> str | None:
        """Why this configuration needs the records in memory (None: it runs on Dask too)."""
        if self.suppression > 0:
            return (
                "its local suppression (suppression > 0) spends one budget across every partition's cuts in memory; "
                "use suppression = 0 or incognito with suppression there"
            )
        return None

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        table = request.table
        if not table.in_memory:  # a table on a Dask cluster: the same algorithm in rounds there
            return self._on_cluster(request)
        goal = target(table, request.rules, self.name, request.keep)
        population = request.guarantee.checked_population()
        if population is not None:  # delta-presence, k-map: the population's records cut alongside
            refuse_suppression(self.name, self.suppression)
            if goal.kept and request.k > 1:
                raise ConfigError(
                    f"Mondrian checks {request.guarantee.name} against the population by cutting both tables "
                    f"together, and cannot also hold --k {request.k} on the cells the kept columns "
                    f"({', '.join(goal.kept)}) make beside its classes. Generalize them with the quasi-identifiers "
                    "(--detach-others), or publish without --k."
                )
            # the job's floor on published cells holds too (issue 63: it was left out here)
            return _against_population(
                table,
                goal,
                list(goal.qi),
                floored(request.guarantee, request.k),
                population,
                request.progress,
                request.hierarchies,
            )
        budget = math.floor(self.suppression * table.n_rows)
        counted = request.floor_kept(goal.kept)
        if request.k > 1 and counted:  # issue 65: short kept cells' records removed within the budget
            mode = (self.name, self.suppression, self.suppression_mode)
            return kept_floor_first(request, counted, mode, budget, self._partitioned)
        return self._partitioned(request, budget)

    def _partitioned(self, request: PublishRequest, budget: int) -> AnonymizedTable:
        """Mondrian's partitioning of an in-memory table, at most ``budget`` records suppressed."""
        table, guarantee, progress, hierarchies = (
            request.table,
            request.guarantee,
            request.progress,
            request.hierarchies,
        )
        goal = target(table, request.rules, self.name, request.keep)
        qi = list(goal.qi)
        dims = dimensions(table, qi, hierarchies)
        codes = [table.codes(a).astype(np.int64) for a in qi]
        s = goal.codes
        _require_whole(guarantee, np.bincount(s, minlength=goal.cardinality), goal.rule, qi)
        counted = request.floor_kept(goal.kept)
        cells = kept_cells(table, counted) if request.k > 1 else None
        if cells is not None:
            require_floor(request.k, cells, self.name, counted)
        # The floor on published cells: k-anonymity of the classes, or of (class, kept values) cells.
        search = floored(guarantee, request.k) if not counted else guarantee
        cell_floor = (cells, request.k) if cells is not None and counted else None
        args = (dims, codes, s, goal.cardinality, search, progress)
        perm, seg_start, level, sup = partition(*args, budget=budget, floor=cell_floor)
        removing = self.suppression_mode == "remove"
        if (
            sup.any()
            and not removing
            and not _suppressed_class_ok(search, perm, seg_start, sup, s, goal.cardinality, cell_floor)
        ):
            if progress is not None:  # together they fail: suppress nothing, generalize instead
                progress("Mondrian: the records suppression would remove fail the guarantee together; none suppressed")
            perm, seg_start, level, sup = partition(*args, floor=cell_floor)
        seg, _ = segment_starts(seg_start, len(s))
        if removing and sup.any():  # ARX's semantics: the failing parts' records are published nowhere
            return _removing(request, goal, dims, codes, (perm, seg, level, sup), guarantee, self.suppression)
        # Suppressed partitions are one class (the last), every quasi-identifier at its root.
        ids = np.cumsum(~sup) - 1
        n_cls = int((~sup).sum()) + int(sup.any())
        ids[sup] = n_cls - 1
        cls = np.empty(len(s), dtype=np.int64)
        cls[perm] = ids[seg]
        top = np.vstack([level[~sup], np.array([[dim.top for dim in dims]], dtype=np.int64)])[:n_cls]
        cover = class_cover(dims, codes, cls, n_cls, top)
        if sup.any():
            root_cover(dims, cover, n_cls - 1)
        stats = class_stats(guarantee, cls, s, n_cls, goal.cardinality)
        if budget:  # suppression asked for: how many records it took (0 when none could be)
            stats["suppressed_records"] = int(np.bincount(seg, minlength=len(seg_start))[sup].sum())
        return classes_table(table, goal, dims, cls, cover, stats)

    def _on_cluster(self, request: PublishRequest) -> AnonymizedTable:
        from versapub.anonymizers.generalizing.mondrian_cluster import publish_on_cluster

        table, guarantee = request.table, request.guarantee
        rule, qi, kept = target_names(table, request.rules, self.name, request.keep)
        counts = table.column(rule.rhs).counts() if rule else np.array([table.n_rows], dtype=np.int64)
        _require_whole(guarantee, counts, rule, list(qi))
        dims = dimensions(table, qi, request.hierarchies)
        return publish_on_cluster(table, rule, kept, dims, guarantee, request.progress)


def _removing(
    request: PublishRequest,
    goal: Target,
    dims: Sequence[Dimension],
    codes: Sequence[IntArray],
    parts: tuple[IntArray, IntArray, IntArray, npt.NDArray[np.bool_]],
    guarantee: Guarantee,
    share: float,
) -> AnonymizedTable:
    """The table of the partitions kept, the suppressed partitions' records removed (their
    rows and the reasons with it); ``parts``: :func:`partition`'s permutation, each record's
    segment (in permutation order), the levels and the suppressed segments."""
    perm, seg, level, sup = parts
    n = len(goal.codes)
    gone = np.empty(n, dtype=bool)
    gone[perm] = sup[seg]
    ids = np.cumsum(~sup) - 1
    part = np.empty(n, dtype=np.int64)
    part[perm] = seg
    cls = np.empty(n, dtype=np.int64)
    cls[perm] = ids[seg]
    keep, removed = kept_rows(gone)
    n_cls = int((~sup).sum())
    cover = class_cover(dims, [c[keep] for c in codes], cls[keep], n_cls, level[~sup])
    table = request.table.take(keep)
    mine = target(table, request.rules, "mondrian", request.keep)
    stats = class_stats(guarantee, cls[keep], mine.codes, n_cls, mine.cardinality)
    sizes = np.bincount(part[removed], minlength=len(sup))[sup].astype(np.int64)
    out = classes_table(table, mine, dims, cls[keep], cover, stats)
    return with_removed(out, removed, reasons(sizes, request.k, request.guarantee), share, n)


def _against_population(
    table: EncodedTable,
    goal: Target,
    qi: list[str],
    guarantee: Guarantee,
    population: Population,
    progress: Callable[[str], None] | None,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> AnonymizedTable:
    """Mondrian for a guarantee checked against the population (delta-presence, k-map):
    the research records and the population's are partitioned together (every cut splits
    both; a part's test counts its research records and its population records), so each
    class covers the population records of its region and no other class's
    (``docs/choices.md``).  Parts without research records publish nothing."""
    joint = joint_table(table, qi, population)
    n, big_n = table.n_rows, population.size
    dims = dimensions(joint, qi, hierarchies)
    codes = [joint.codes(a).astype(np.int64) for a in qi]
    s = goal.codes.astype(np.int64)
    _require_whole(guarantee, np.bincount(s, minlength=goal.cardinality), goal.rule, qi, big_n)
    points = np.concatenate([s, np.zeros(big_n, dtype=np.int64)])
    perm, seg_start, level, _ = partition(dims, codes, points, goal.cardinality, guarantee, progress, research=n)
    seg, _ = segment_starts(seg_start, n + big_n)
    part = np.empty(n + big_n, dtype=np.int64)
    part[perm] = seg
    held = np.bincount(part[:n], minlength=len(seg_start)) > 0
    n_cls = int(held.sum())
    cls_all = (np.cumsum(held) - 1)[part]
    inside = held[part]
    cover = class_cover(dims, [c[inside] for c in codes], cls_all[inside], n_cls, level[held])
    counted = np.bincount(cls_all[n:][inside[n:]], minlength=n_cls)
    cls = cls_all[:n]
    stats = class_stats(guarantee, cls, s, n_cls, goal.cardinality, population=counted)
    return in_table_codes(classes_table(table, goal, dims, cls, cover, stats), table, joint)


def _suppressed_class_ok(
    guarantee: Guarantee,
    perm: IntArray,
    seg_start: IntArray,
    sup: npt.NDArray[np.bool_],
    s: IntArray,
    s_card: int,
    floor: tuple[IntArray, int] | None = None,
) -> bool:
    """Do the suppressed partitions' records, as one class, satisfy the guarantee (and the
    floor on its (class, kept values) cells)?"""
    seg, _ = segment_starts(seg_start, len(s))
    held = perm[sup[seg]]
    if floor is not None and len(held):
        per_cell = np.bincount(floor[0][held])
        if per_cell[per_cell > 0].min() < floor[1]:
            return False
    return bool(_one_class(guarantee, np.bincount(s[held], minlength=s_card)))


def _one_class(guarantee: Guarantee, counts: IntArray, population: int | None = None) -> bool:
    v = np.flatnonzero(counts)
    whole = Histograms(
        np.zeros(len(v), dtype=np.int64),
        np.asarray(counts)[v].astype(np.int64),
        1,
        v.astype(np.int64),
        None if population is None else np.array([population], dtype=np.int64),
    )
    return bool(guarantee.groups_satisfied(whole).all())


def _require_whole(
    guarantee: Guarantee, counts: IntArray, rule: Rule | None, qi: list[str], population: int | None = None
) -> None:
    """Mondrian's first step: the whole table, as one class, must satisfy the guarantee
    (``population``: the population's size, for a guarantee checked against it)."""
    if not _one_class(guarantee, counts, population):
        what = f"rule '{rule}'" if rule else f"quasi-identifiers {qi}"
        raise InfeasibleError(
            f"Mondrian cannot satisfy {guarantee.describe()} for {what}: even the whole table, "
            "as one equivalence class, does not."
        )
