"""Global recoding of the exactly published columns to meet the job's floor on published
cells (``--k``, ``--max-risk``; issue 47): Anatomy's QIT, the MSA decomposition's and a
plain sub-table publish their non-sensitive columns exactly, so with ``--k K`` those columns
are generalized — the same way in every table, one level of a hierarchy per column (the
user's where given, else one built from the values: numbers in consecutive pairs, then
pairs of pairs, ...; text and dates straight to ``*``) — until every such table's cells hold
``K`` records, or (``--suppression``) until the records of the cells still short fit in the
budget and are removed.  Of the minimal such nodes the one that loses least is chosen
(full-domain generalization, as ARX's global recoding, searched as Incognito searches:
``docs/choices.md``).  The recoded table is published; the manifest's ``recoded`` says what
each published value covers (never listing a value it hides: the root as the rest, a built
group of numbers by its bounds), so the verifier recodes the original itself and every
check reads the release as one over the recoded values."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from versapub.anonymizers.base import Anonymizer, MeetsCellFloor, PublishesExactly, RecodesLocally
from versapub.data.groupby import group_rows
from versapub.data.hierarchy import Hierarchy
from versapub.data.hierarchy_build import grouped
from versapub.data.source import Source
from versapub.data.table import EncodedTable, is_missing_value
from versapub.errors import ConfigError, HierarchyError, InfeasibleError
from versapub.publishing.choice import anon_for
from versapub.publishing.local_suppression import suppress_cells
from versapub.publishing.steps import Columns, Guarded, Job
from versapub.publishing.tables import kept_in, predicted_unguarded
from versapub.release.value import Removal
from versapub.schema.model import Schema

#: Lattices up to this many nodes are searched whole for their minimal nodes; in a larger
#: one a minimal node is found by descending from the roots.
LATTICE_MAX = 1024


@dataclass(frozen=True)
class Recoding:
    """Per recoded attribute its hierarchy and level (> 0), and whether the hierarchy was
    built from the values (not given)."""

    hierarchies: Mapping[str, Hierarchy]
    levels: Mapping[str, int]
    built: frozenset[str] = frozenset()
    #: The records removed instead of generalizing further (the job's ``suppression``).
    removed: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if set(self.levels) != set(self.hierarchies) or any(lv < 1 for lv in self.levels.values()):
            raise ValueError("a recoding gives every recoded attribute a hierarchy and a level above the leaves")

    def apply(self, table: EncodedTable) -> EncodedTable:
        """``table`` with every recoded column replaced by its values at their level."""
        for a, lv in self.levels.items():
            table = table.replace(self.hierarchies[a].generalize(table.column(a), lv))
        return table

    def to_manifest(self) -> dict[str, Any]:
        """Per attribute: its level, the hierarchy's name and each published value with what
        it covers (values covering only themselves left out), without listing the input's
        values the recoding hides (docs/release-format.md): the root covers ``{"rest":
        true}`` — every value no other published value covers —, a built hierarchy's group
        of numbers ``{"from": lowest, "to": highest}`` (the bounds its label shows), and
        only a level of a hierarchy the steward gave lists its leaves."""
        out: dict[str, Any] = {}
        for a, lv in self.levels.items():
            h = self.hierarchies[a]
            groups: dict[str, list[str]] = {}
            for leaf, value in h.mapping(lv).items():
                groups.setdefault(value, []).append(leaf)
            out[a] = {
                "level": lv,
                "hierarchy": "built from the values (numbers in pairs of consecutive values)"
                if a in self.built
                else Path(h.source).name,  # its file's name, never its path (a path can itself be confidential)
                "covers": _covers(groups, lv == h.height - 1 and len(groups) == 1, a in self.built),
            }
        return out

    def notes(self) -> list[str]:
        """The recoding in sentences for the summary and the report: the columns published
        as their root (*) in one, each column published at a coarser level in one."""
        out = []
        if self.levels == {} and self.removed is not None:
            return ["no column needed generalizing: removing the records of the short cells met the k you asked for"]
        roots = [a for a, lv in self.levels.items() if lv == self.hierarchies[a].height - 1]
        for a, lv in self.levels.items():
            if a in roots:
                continue
            h = self.hierarchies[a]
            where = (
                "a hierarchy built from its values (pairs of consecutive values)"
                if a in self.built
                else "its hierarchy"
            )
            n = len(set(h.mapping(lv).values()))
            out.append(
                f"{a} is published at level {lv} of {h.height - 1} of {where} ({n} values) in every table, so that "
                "every cell of the key variables holds the k you asked for"
            )
        if roots:
            out.append(
                f"{', '.join(roots)} {'is' if len(roots) == 1 else 'are'} published as "
                f"{'its' if len(roots) == 1 else 'their'} root (*) in every table: no finer level met the k you asked "
                "for within the suppression budget at a smaller loss of information (name the columns an "
                "adversary knows with --keys to count only those, or allow more --suppression)"
            )
        return out


def hierarchy_for(table: EncodedTable, attribute: str, given: Mapping[str, Hierarchy]) -> tuple[Hierarchy, bool]:
    """The user's hierarchy of ``attribute``, or one built from its values: numbers in
    consecutive pairs, level after level, then ``*``; other values (text, dates) straight
    to ``*`` — alphabetical neighbours are no meaningful group, and a group of them could
    only be written in the manifest by listing the values it hides; whether it was built."""
    if attribute in given:
        return given[attribute], False
    values = [str(v) for v in table.column(attribute).values]
    flat = Hierarchy.from_rows(attribute, [[v, "*"] for v in values], source="<values, *>")
    if not all(_number(v) is not None for v in values if not is_missing_value(v)):
        return flat, True
    try:
        return grouped(attribute, values, 2), True
    except HierarchyError:  # a single value: only the root above it
        return flat, True


def _number(text: str) -> float | None:
    """``text`` as a finite number (``None``: not one)."""
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _covers(groups: Mapping[str, list[str]], root: bool, built: bool) -> dict[str, Any]:
    """The ``covers`` of one recoded attribute (see :meth:`Recoding.to_manifest`): the root
    as ``rest``; a built group of numbers as its bounds when every group's bounds are
    disjoint as numbers; any other group as its leaves."""
    out: dict[str, Any] = {}
    spans: list[tuple[float, float]] = []
    for value, leaves in sorted(groups.items()):
        if leaves == [value]:
            continue
        nums = {x: _number(x) for x in leaves}
        if root:
            out[value] = {"rest": True}
        elif built and all(x is not None for x in nums.values()):
            lo = min(leaves, key=lambda x: nums[x] or 0.0)
            hi = max(leaves, key=lambda x: nums[x] or 0.0)
            out[value] = {"from": lo, "to": hi}
            spans.append((nums[lo] or 0.0, nums[hi] or 0.0))
        else:
            out[value] = sorted(leaves)
    spans.sort()
    if any(a[1] >= b[0] for a, b in itertools.pairwise(spans)):  # "1" and "1.0" apart: list them
        return {v: sorted(groups[v]) if isinstance(c, dict) and "from" in c else c for v, c in out.items()}
    return out


def choose(
    table: EncodedTable,
    tables: Sequence[tuple[str, Sequence[str]]],
    floor: int,
    given: Mapping[str, Hierarchy],
    protected: frozenset[str],
    fallback: frozenset[str] = frozenset(),
    budget: int = 0,
    lattice_max: int = LATTICE_MAX,
    cascade: bool = True,
) -> Recoding | None:
    """The recoding of the columns of ``tables`` (name, exactly published columns) that are
    not ``protected`` (a rule's sensitive attribute stays exact) that brings every table's
    smallest cell to ``floor``; ``None`` when every table meets it already or nothing can
    be recoded.  ``budget``: records that may be removed instead (ARX's suppression limit:
    the records of cells still short, and of the cells their removal leaves short, until
    none is), the recoding then carrying them.  A table that even the roots leave short is
    refused (:class:`InfeasibleError`, naming the largest k it can meet) unless it is in
    ``fallback`` (a plain table, then generalized on its own: ``tables.floored_plain``).
    ``lattice_max``: the largest lattice searched whole (in a larger one a node is found by
    descending from the roots).  ``cascade``: removing a short cell's records may leave
    others short (records removed); without it (local suppression, which never shrinks a
    cell) the records of the cells short at the node are what the budget bounds.  Nodes are
    compared by :meth:`_Search.loss`, the information the node and its suppression lose."""
    need = [(name, list(cols)) for name, cols in tables if cols and _smallest(table, cols) < floor]
    if not need:
        return None
    search = _Search(table, need, floor, given, protected, cascade)
    if search.removed(search.top) > budget:  # even the roots leave too many short: those tables go
        need = _feasible(table, need, floor, protected, fallback, (search.removed(search.top), budget))
        if not need:
            return None
        search = _Search(table, need, floor, given, protected, cascade)
    if not search.recodable and not budget:
        return None
    whole = math.prod(search.heights) <= lattice_max
    best = _minimal(search, budget) if whole else _descend(search, budget)
    if best is not None:
        return search.recoding(best)
    raise InfeasibleError(  # a hierarchy whose top level holds several nodes
        f"--k {floor} cannot be met by generalizing {', '.join(search.recodable)}: at the top level of their "
        "hierarchies some cells stay short; give hierarchies that end in one root (*), or allow --suppression."
    )


def _minimal(search: _Search, budget: int) -> tuple[int, ...] | None:
    """The node that loses least (:meth:`_Search.loss`: generalization and suppression)
    among those that meet the floor within the budget; a node whose generalization alone
    loses more than the best found is never checked, and, with no budget, nodes above a
    node that meets the floor (which meet it too, their cells being unions of its, and lose
    more) neither."""
    best: tuple[float, int, tuple[int, ...]] | None = None
    found: list[tuple[int, ...]] = []
    order = sorted(itertools.product(*(range(h) for h in search.heights)), key=lambda v: (search.generalized(v), v))
    for levels in order:
        if not budget and not any(levels):
            continue
        if best is not None and search.generalized(levels) >= best[0]:
            break  # ordered by generalization loss: no later node can lose less
        if not budget and any(all(a >= b for a, b in zip(levels, f, strict=True)) for f in found):
            continue
        gone = search.removed(levels)
        if gone <= budget:
            found.append(levels)
            key = (search.loss(levels, gone), gone, levels)
            best = key if best is None or key < best else best
    return None if best is None else best[2]


def _descend(search: _Search, budget: int) -> tuple[int, ...] | None:
    """A node of a lattice too large to search whole: from the roots down, one level at a
    time, each time lowering the column whose lowering saves most information
    (:meth:`_Search.loss`) while the floor is still met within the budget; the node that
    lost least on the way is kept.  Where no column can be lowered the descent ends."""
    levels = list(search.top)
    gone = search.removed(levels)
    if gone > budget:
        return None
    best = (search.loss(levels, gone), tuple(levels))
    while True:
        trials = []
        for j in (j for j, lv in enumerate(levels) if lv):
            trial = [*levels[:j], levels[j] - 1, *levels[j + 1 :]]
            trials.append((search.generalized(trial), j, trial))
        for _, _, trial in sorted(trials):
            gone = search.removed(trial)
            if gone <= budget:
                levels = trial
                best = min(best, (search.loss(levels, gone), tuple(levels)))
                break
        else:
            return best[1]


def _feasible(
    table: EncodedTable,
    need: list[tuple[str, list[str]]],
    floor: int,
    protected: frozenset[str],
    fallback: frozenset[str],
    removal: tuple[int, int] = (0, 0),
) -> list[tuple[str, list[str]]]:
    """The tables the roots can bring to ``floor`` (a ``fallback`` table that they cannot
    is left out; any other is refused, naming the largest k it can meet and, ``removal``,
    the records suppression would remove at the roots against its budget)."""
    short = [(name, cols, _smallest(table, [a for a in cols if a in protected])) for name, cols in need]
    refused = [(name, cols, top) for name, cols, top in short if top < floor and name not in fallback]
    if refused:
        name, cols, top = refused[0]
        kept = [a for a in cols if a in protected]
        raise InfeasibleError(
            f"--k {floor} cannot be met in table {name}: even with {', '.join(a for a in cols if a not in kept)} "
            f"generalized to their roots a cell of {', '.join(kept)} (exact: a rule protects them) holds {top} "
            f"record(s). The largest k this table can meet is {top}; lower --k, "
            + (
                f"allow --suppression {math.ceil(1000 * removal[0] / table.n_rows) / 1000:g} or more (at the roots "
                f"{removal[0]:,} of {table.n_rows:,} records stay in cells of fewer than {floor}; --suppression "
                f"allows {removal[1]:,}), "
                if 0 < math.ceil(1000 * removal[0] / max(table.n_rows, 1)) < 1000
                else "(no --suppression would do: removing the short cells' records leaves others short until no "
                "record is left) "
                if removal[0]
                else "allow --suppression, "
            )
            + "or drop or protect columns."
        )
    return [(name, cols) for name, cols, top in short if top >= floor]


class _Search:
    """The recoding lattice of the tables ``need``: their columns' distinct rows, the
    recodable columns' hierarchies and node codes, and what a node leaves short."""

    def __init__(
        self,
        table: EncodedTable,
        need: list[tuple[str, list[str]]],
        floor: int,
        given: Mapping[str, Hierarchy],
        protected: frozenset[str],
        cascade: bool = True,
    ) -> None:
        self.need, self.floor, self.cascade = need, floor, cascade
        self.recodable = sorted({a for _, c in need for a in c if a not in protected}, key=table.names.index)
        self.hier: dict[str, Hierarchy] = {}
        self.built: set[str] = set()
        for a in self.recodable:
            self.hier[a], was_built = hierarchy_for(table, a, given)
            if was_built:
                self.built.add(a)
        every = sorted({a for _, c in need for a in c}, key=table.names.index)
        self.rows = group_rows(
            [table.codes(a) for a in every], [table.cardinality(a) for a in every], with_inverse=True
        )
        self.codes = {a: self.rows.keys[i].astype(np.int64) for i, a in enumerate(every)}
        self.nodes = {a: self.hier[a].node_codes(table.column(a)) for a in self.recodable}
        self.heights = [self.hier[a].height for a in self.recodable]
        self.top = tuple(h - 1 for h in self.heights)
        self.n = int(self.rows.counts.sum())
        self.losses = [self._intensity(table, a) for a in self.recodable]

    def _intensity(self, table: EncodedTable, a: str) -> list[float]:
        """Per level of ``a``'s hierarchy, the share of ``a``'s information a record loses on
        average: ``(values under its node - 1) / (values - 1)`` over the values the table
        holds (ARX's loss, the generalization intensity: 0 at the leaves, 1 at the root)."""
        counts = np.bincount(table.codes(a), minlength=table.cardinality(a)).astype(np.float64)
        card = int((counts > 0).sum())
        out = []
        for nodes in self.nodes[a]:
            under = np.bincount(nodes, weights=counts > 0)[nodes]
            out.append(float((counts * (under - 1)).sum() / max(card - 1, 1) / max(counts.sum(), 1)))
        return out

    def short(self, levels: Sequence[int]) -> np.ndarray:
        """Per distinct row: removed, because its cell in some table holds fewer than the
        floor — once the rows removed before are gone (repeated until none is added)."""
        at = dict(zip(self.recodable, levels, strict=True))
        inverses = []
        for _, cols in self.need:
            keys = [self.nodes[a][at[a]][self.codes[a]] if a in at else self.codes[a] for a in cols]
            g = group_rows(keys, [int(k.max()) + 1 for k in keys], with_inverse=True)
            assert g.inverse is not None
            inverses.append(g.inverse)
        gone = np.zeros(len(self.rows.counts), dtype=bool)
        while True:
            kept = np.where(gone, 0, self.rows.counts)
            more = gone.copy()
            for inv in inverses:
                more |= (np.bincount(inv, weights=kept)[inv] < self.floor) & ~gone
            if (more == gone).all() or not self.cascade:
                return more
            gone = more

    def removed(self, levels: Sequence[int]) -> int:
        return int(self.rows.counts[self.short(levels)].sum())

    def generalized(self, levels: Sequence[int]) -> float:
        """What the node's generalization loses: the columns' losses at their levels, summed."""
        return sum(loss[lv] for loss, lv in zip(self.losses, levels, strict=True))

    def loss(self, levels: Sequence[int], gone: int) -> float:
        """What the node loses with ``gone`` records suppressed: its generalization, the
        suppressed records' share counted as lost in every recodable column (removed: a
        record in no table; a value suppressed: at least one per record, counted as one)."""
        lost = len(self.recodable) if self.cascade else 1
        return self.generalized(levels) + lost * gone / max(self.n, 1)

    def recoding(self, levels: Sequence[int]) -> Recoding:
        chosen = {a: lv for a, lv in zip(self.recodable, levels, strict=True) if lv}
        gone = self.short(levels)
        assert self.rows.inverse is not None
        records = np.flatnonzero(gone[self.rows.inverse]).astype(np.int64) if gone.any() else None
        return Recoding({a: self.hier[a] for a in chosen}, chosen, frozenset(self.built & set(chosen)), records)


def _smallest(table: EncodedTable, cols: Sequence[str]) -> int:
    """The smallest cell of ``cols`` (the whole table without columns)."""
    if not cols:
        return table.n_rows
    g = group_rows([table.codes(a) for a in cols], [table.cardinality(a) for a in cols])
    return int(g.counts.min()) if len(g.counts) else 0


def exact_keys(job: Job, rules: Guarded, schema: Schema, keep: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each sub-table's key variables it will publish exactly beside its guarantee (name,
    keys), but those of the tables whose anonymizer meets the floor itself."""
    exact = []
    for sub in schema.tables:
        anon = anon_for(sub, job.anon, rules.own_anon)
        if sub.enforces is not None and isinstance(anon, MeetsCellFloor):
            continue
        exact.append((sub.name, job.keys.of(predicted_unguarded(sub, anon, keep))))
    return exact


def floor_admits(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> Callable[[Schema], bool]:
    """Whether a refinement of ``schema`` (GD's add-back) still meets the job's floor on the
    cells it publishes exactly: every guarded table's exactly published keys are those of a
    table of ``schema`` (the floor was met on them, and a cell of fewer columns is a union of
    cells) or leave no cell of the (recoded) table short.  A plain table always does (it is
    generalized on its own: :func:`~versapub.publishing.tables.floored_plain`).  The long
    sweep's case (issue 63): GD added ``age`` to an Anatomy table, whose QIT then published
    ``(age, income)`` exactly with every record alone, a floor the recoding never saw."""
    if job.floor <= 1:
        return lambda _: True
    met = [set(keys) for _, keys in exact_keys(job, rules, schema, cols.keep)]
    table = cols.table

    def admits(candidate: Schema) -> bool:
        guarded = {s.name for s in candidate.tables if s.enforces is not None}
        for name, keys in exact_keys(job, rules, candidate, cols.keep):
            if name not in guarded or any(set(keys) <= m for m in met):
                continue
            if not isinstance(table, EncodedTable) or _smallest(table, keys) < job.floor:
                return False
        return True

    return admits


def for_floor(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> tuple[Columns, Recoding | None]:
    """The job's columns with the exactly published ones recoded to meet its floor on the
    cells of their key variables (in memory; the tables a generalizing anonymizer meets it
    in are left to it), short cells then met by removing records or, with local suppression,
    by suppressing key values; and the recoding (``None``: none needed)."""
    if job.floor <= 1:
        return cols, None
    cols = replace(cols, notes=[*cols.notes, job.keys.reading()])
    for sub in schema.tables:
        if sub.enforces is not None:
            require_floor_honoured(anon_for(sub, job.anon, rules.own_anon), job.floor, sub.name)
    require_one_collection(job, cols, rules, schema)
    if not isinstance(cols.table, EncodedTable):
        return cols, None
    exact = exact_keys(job, rules, schema, cols.keep)
    plain = {sub.name for sub in schema.tables if sub.enforces is None}
    protected = frozenset(r.rhs for r in rules.reduction.rules)
    job.hook(f"generalizing exactly published columns to meet k = {job.floor}", 0, 1)
    n = cols.table.n_rows
    cells = job.keys.suppression_mode == "cells"
    budget = n if cells and not job.suppression else math.floor(job.suppression * n)
    recoding = choose(
        cols.table,
        exact,
        job.floor,
        job.hierarchies or {},
        protected,
        frozenset() if cells else frozenset(plain),
        budget,
        cascade=not cells,
    )
    if recoding is not None:
        _require_not_allowed(job, cols, recoding)
    if cells:
        _require_unshared_keys(job, schema, protected)
        return _locally_suppressed(job, cols, recoding, exact, protected)
    if recoding is None:
        return cols, None
    table, removal = recoding.apply(cols.table), None
    if recoding.removed is not None:
        keep = np.setdiff1d(np.arange(n, dtype=np.int64), recoding.removed, assume_unique=True)
        table = table.take(keep)
        require_still_feasible(cols.table, table, rules, len(recoding.removed), job.suppression)
        why = {f"in a cell of fewer than {job.floor} key values (the k you asked for)": len(recoding.removed)}
        removal = Removal(len(recoding.removed), why, job.suppression, math.floor(job.suppression * n), None)
    notes = [*cols.notes, *recoding.notes()]
    return replace(cols, table=table, notes=notes, unrecoded=cols.table, removed=removal), recoding


def require_still_feasible(
    before: Source, after: Source, rules: Guarded, removed: int, share: float, what: str | None = None
) -> None:
    """Removing the records of short cells must not make a rule infeasible (the long sweep's
    case, issue 63: a protected value in 52 % of the records left, above 1/l): refused before
    anything is anonymized, with the way out that works (without --suppression the columns are
    generalized instead and every record stays; ``what``: another removal and its ways out, in
    place of that sentence's)."""
    from versapub.privacy.feasibility import feasibility

    listed = list(rules.per_rule)
    was = {f.rule for f in feasibility(before, listed, rules.per_rule) if f.feasible}
    bad = [f for f in feasibility(after, listed, rules.per_rule) if not f.feasible and f.rule in was]
    if bad:
        if what is not None:
            raise InfeasibleError(what.format(left="; ".join(f.message() for f in bad), removed=removed, share=share))
        raise InfeasibleError(
            f"Removing the {removed:,} record(s) of cells below the floor (--suppression {share:g}) would leave "
            + "; ".join(f.message() for f in bad)
            + ": the rule(s) could no longer be met by the records left. Publish without --suppression (the "
            "columns are then generalized instead and every record stays), or with a smaller share."
        )


def _require_unshared_keys(job: Job, schema: Schema, protected: frozenset[str]) -> None:
    """Local suppression is read table by table (an empty value matching any value); tables
    joined on a key column would be read together as one collection, which has no reading
    for such a value: refused before anything is anonymized, with the ways out."""
    held: dict[str, list[str]] = {}
    for sub in schema.tables:
        for a in job.keys.of(sub.attributes):
            if a not in protected:
                held.setdefault(a, []).append(sub.name)
    shared = [(a, ts) for a, ts in held.items() if len(ts) > 1]
    if shared:
        a, ts = shared[0]
        raise ConfigError(
            f"--suppression-mode cells reads a suppressed value as matching any value within one table, but the key "
            f"{a!r} is published by tables {', '.join(ts)} (the decomposition shares it), which are read together "
            "as one collection of marginals where such a value has no reading. Use --decomposition uad (one table "
            "holds every key), name keys no two tables share (--keys), or --suppression-mode remove."
        )


def _require_not_allowed(job: Job, cols: Columns, recoding: Recoding) -> None:
    """A column the steward allowed to be published as it is (``--allow-unique``) cannot be
    recoded to meet the floor (issue 71): refused with the ways out."""
    allowed = [a for a in recoding.levels if a in cols.roles.allow_unique]
    if allowed:
        raise ConfigError(
            f"--allow-unique publishes {', '.join(map(repr, allowed))} as it is, but --k {job.floor} holds only with "
            f"{allowed[0]!r} generalized (to level {recoding.levels[allowed[0]]} of "
            f"{recoding.hierarchies[allowed[0]].height - 1} of its hierarchy). Name the key variables an adversary "
            f"knows without it (--keys), generalize it when it is read instead (--hierarchy {allowed[0]}=FILE:LEVEL in "
            "place of --allow-unique; versapub hierarchy build writes one), declare it --identifying (removed), or "
            "leave --k out."
        )


def _locally_suppressed(
    job: Job, cols: Columns, recoding: Recoding | None, exact: list[tuple[str, list[str]]], protected: frozenset[str]
) -> tuple[Columns, Recoding | None]:
    """The recoded table with key values suppressed until every exact table's key cells hold
    the floor (an empty value matching any value), the manifest's ``suppressed`` block and
    the summary's sentence."""
    assert isinstance(cols.table, EncodedTable)
    table = recoding.apply(cols.table) if recoding is not None and recoding.levels else cols.table
    keyed = [c for _, c in exact if c]
    # a microaggregated key keeps its groups whole (its values are never emptied: each stays held by k)
    grouped = {str(c) for r in job.treated if r.get("name") == "microaggregation" for c in r.get("columns") or []}
    free = frozenset(
        a for c in keyed for a in c if a not in protected and a not in cols.roles.allow_unique and a not in grouped
    )
    done = suppress_cells(table, keyed, job.floor, free, job.keys.importance)
    notes = [*cols.notes, *(recoding.notes() if recoding is not None and recoding.levels else [])]
    block = done.to_manifest(job.floor, keyed)
    if done.records:
        n = table.n_rows
        per = ", ".join(f"{a} {c:,}" for a, c in done.cells.items() if c)
        notes.append(
            f"Local suppression: {sum(done.cells.values()):,} key value(s) published empty in {done.records:,} of "
            f"{n:,} records ({done.records / max(n, 1):.2%}; per column: {per}), so that every cell of the key "
            f"variables holds at least {job.floor} records with an empty value matching any value"
        )
    if recoding is not None and not recoding.levels:
        recoding = None
    if not done.records and recoding is None:
        return replace(cols, suppressed=block), None
    return replace(cols, table=done.table, notes=notes, unrecoded=cols.table, suppressed=block), recoding


def require_floor_honoured(anon: Anonymizer, floor: int, table: str) -> None:
    """A floor on published cells (``--k``; ``--max-risk`` as ``ceil(1/R)``) is honoured by an
    anonymizer that meets it while it generalizes (:class:`MeetsCellFloor`: Mondrian,
    Incognito) or one that publishes its columns exactly (:class:`PublishesExactly`: Anatomy,
    multi-SA, the MSA decomposition — those columns are recoded to meet it); any other is
    refused before anything is anonymized (issue 63), naming the ones that can."""
    if isinstance(anon, MeetsCellFloor | PublishesExactly):
        return
    raise ConfigError(
        f"--k {floor} (a floor on published cells; --max-risk is read as one) cannot be honoured by the {anon.name} "
        f"anonymizer of table {table}: it generalizes to meet its guarantee but has no way to hold every published "
        "cell to a size. Use --anonymizer mondrian or incognito (they meet --k while they generalize) or anatomy "
        "(its exactly published columns are recoded to meet it), or publish without --k and read the cells' "
        "sizes in the summary."
    )


def require_one_collection(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> None:
    """With a floor, the tables are checked as one collection of marginals (``check --k``:
    k-link and k-combinatorial anonymity), which needs every attribute two tables share to be
    generalized by partitions of its leaves: an anonymizer that recodes each class on its own
    (:class:`RecodesLocally`: Mondrian) may not generalize an attribute another table also
    holds (GD's add-back shares attributes between tables). Refused before anything is
    anonymized (issue 63), naming the ways that can publish it."""
    held: dict[str, list[str]] = {}
    for sub in schema.tables:
        for a in sub.attributes:
            held.setdefault(a, []).append(sub.name)
    for sub in schema.tables:
        anon = anon_for(sub, job.anon, rules.own_anon)
        if sub.enforces is None or not isinstance(anon, RecodesLocally):
            continue
        exact = {r.rhs for r in sub.enforced_rules} | set(kept_in(sub, cols.keep))
        shared = [a for a in sub.attributes if a not in exact and len(held[a]) > 1]
        if shared:
            a = shared[0]
            raise ConfigError(
                f"--k {job.floor} is checked on the tables as one collection of marginals, but {anon.name} generalizes "
                f"{a!r} in table {sub.name} class by class (its ranges may overlap) while table "
                f"{next(t for t in held[a] if t != sub.name)} also publishes {a!r}: the two cannot be read together. "
                f"Use --anonymizer incognito (one generalization per attribute), --decomposition uad (every "
                "attribute in one table), or publish without --k."
            )


__all__ = [
    "LATTICE_MAX",
    "Recoding",
    "choose",
    "for_floor",
    "hierarchy_for",
    "require_floor_honoured",
    "require_one_collection",
]
