"""Incognito (LeFevre, DeWitt, Ramakrishnan, SIGMOD 2005): full-domain generalization.

Every quasi-identifier is generalized to one level of its hierarchy (an attribute without
hierarchy has two levels: its values and ``*``); a *node* is a vector of levels.  The
paper's search:

* **subsets first** (Apriori, its Figure 5): for ``i = 1 .. |QI|``, the candidate nodes of
  every ``i``-subset of the quasi-identifiers are those whose every ``(i-1)``-subset
  projection satisfied the guarantee (*subset property*);
* **rollup** (its breadth-first search with marking): inside a subset's lattice, nodes are
  visited from the most specific up; a node that satisfies the guarantee marks all its
  generalizations as satisfying without checking them (*generalization property*).

Both properties hold for k-anonymity, every l-diversity form, t-closeness, beta-likeness,
delta-disclosure and k-map (merging classes keeps them: a merged class's distribution lies
between its parts', its size above theirs).  Counts come from one group-by of the table over every
quasi-identifier and the sensitive attribute; a node's classes are that group-by's rows
mapped to the node's levels and summed (never a re-scan of the records).

**Suppression** (``suppression`` = the largest share of records, as ARX allows): a node
satisfies when the records of its classes that fail the guarantee number at most
``floor(suppression x n)``; with ``suppression_mode="remove"`` (the default, ARX's
semantics) those records are removed — published in no table — and with ``"class"`` they
are published with every quasi-identifier at its root, one more class, which must satisfy
the guarantee too (:mod:`~versapub.anonymizers.generalizing.suppression`,
``docs/choices.md``).  A budget breaks both pruning properties (a generalization may
suppress fewer records), so with suppression every node of the full lattice is checked.

**Choice among the minimal satisfying nodes** (``utility``): ``"kl"`` (default) the lowest
KL-divergence of the table's maximum-entropy estimate (each class spread uniformly over
the leaves it covers), ``"discernibility"`` (Bayardo & Agrawal: ``Σ |E|²``, suppressed
records counting ``n`` each), or ``"loss"`` (the mean normalized certainty penalty:
``(leaves covered − 1) / (domain size − 1)`` per record and attribute; suppressed: 1).
Ties: the lower node (sum of levels), then the first in level order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest
from versapub.anonymizers.generalizing.floor import (
    CellFloor,
    floored,
    kept_cells,
    kept_floor_first,
    require_floor,
)
from versapub.anonymizers.generalizing.generalize import (
    IntArray,
    KeepingColumns,
    Target,
    class_stats,
    classes_table,
    dimensions,
    target,
    target_names,
)
from versapub.anonymizers.generalizing.incognito_search import Counted, Lattice, Minimal
from versapub.anonymizers.generalizing.population import in_table_codes, joint_table, refuse_suppression
from versapub.anonymizers.generalizing.suppression import MODES, kept_rows, reasons, with_removed
from versapub.data.groupby import group_rows
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.plugins import Param, validated
from versapub.privacy.guarantees.base import Guarantee, Histograms
from versapub.privacy.rules import Rule

UTILITIES = ("kl", "discernibility", "loss")


#: The most lattice nodes Incognito may have to check: over every subset of the
#: quasi-identifiers (its search, ``prod(h + 1) - 1``), or every node of the full lattice with
#: suppression (``prod(h)``); beyond it the job is refused at once with the number.
MAX_SEARCH = 20_000_000


def _require_searchable(lattice: Lattice, qi: Sequence[str], everything: bool) -> None:
    """Refuse a lattice too large to search, before searching it (issue 44: 18
    quasi-identifiers sat at 5 % for ten minutes)."""
    heights = lattice.heights
    size = math.prod(heights) if everything else math.prod(h + 1 for h in heights) - 1
    if size > MAX_SEARCH:
        what = (
            "its full lattice (with suppression every node is checked)"
            if everything
            else "the lattices of every subset"
        )
        raise InfeasibleError(
            f"Incognito would have to check up to {size:,} generalization nodes ({what}: {len(qi)} quasi-identifiers "
            f"with {', '.join(f'{a} {h}' for a, h in zip(qi, heights, strict=True))} levels), more than "
            f"{MAX_SEARCH:,}; it would not finish. Use fewer quasi-identifiers (without --detach-others the other "
            "columns stay exact beside the classes; declare harmless ones --insensitive), give hierarchies with "
            "fewer levels, or use --anonymizer mondrian, whose cost does not grow with the lattice."
        )


@dataclass(frozen=True)
class Outcome:
    """A node checked: does it satisfy (within the suppression budget), and what it suppresses."""

    ok: bool
    suppressed: int


class Incognito(KeepingColumns):
    """Full-domain generalization with Incognito's search (see the module docstring).

    ``suppression``: the largest share of records that may be suppressed (0 to < 1);
    ``utility``: ``kl``, ``discernibility`` or ``loss`` chooses among minimal nodes;
    ``suppression_mode``: ``remove`` (ARX: suppressed records in no table) or ``class``
    (published as one class at the roots)."""

    name = "incognito"
    #: Meets the job's floor on published cells while it climbs the lattice.
    meets_k = True
    #: Runs on the Dask backend too (the lattice over distinct rows counted there).
    out_of_core = True
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "suppression": Param("number", low=0, high=1, high_open=True),
        "utility": Param("choice", choices=tuple(UTILITIES)),
        "suppression_mode": Param("choice", choices=MODES),
    }
    glossary: ClassVar[str] = (
        "Incognito (LeFevre, DeWitt & Ramakrishnan, SIGMOD 2005): full-domain generalization; every quasi-"
        "identifier is generalized to one level of its hierarchy, the minimal satisfying levels found bottom-up."
    )
    max_rules = 1

    def __init__(self, suppression: float = 0.0, utility: str = "kl", suppression_mode: str = "remove") -> None:
        got = validated(
            self.name,
            self.parameter_constraints,
            {"suppression": suppression, "utility": utility, "suppression_mode": suppression_mode},
        )
        self.suppression = float(got["suppression"])
        self.utility = got["utility"]
        self.suppression_mode = str(got["suppression_mode"])

    def params(self) -> dict[str, Any]:
        return {"suppression": self.suppression, "utility": self.utility, "suppression_mode": self.suppression_mode}

    @property
    def in_memory_only(self) -> str | None:
        """Why this configuration needs the records in memory (None: it runs on Dask too)."""
        if self.suppression > 0 and self.suppression_mode == "remove":
            return (
                "removing suppressed records (suppression > 0, suppression_mode = remove) takes them out of the "
                "records in memory; use suppression_mode = class there"
            )
        return None

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        table = request.table
        if request.guarantee.checked_population() is not None:
            refuse_suppression(self.name, self.suppression)
        budget = math.floor(self.suppression * table.n_rows)
        if request.k > 1 and table.in_memory:  # issue 65: short kept cells' records removed within the budget
            counted = request.floor_kept(target(table, request.rules, self.name, request.keep).kept)
            mode = (self.name, self.suppression, self.suppression_mode)
            return kept_floor_first(request, counted, mode, budget, self._climbed)
        return self._climbed(request, budget)

    def _climbed(self, request: PublishRequest, budget: int) -> AnonymizedTable:
        """The lattice searched and the best minimal node applied, at most ``budget`` records
        suppressed."""
        table, guarantee = request.table, request.guarantee
        tested, cells = self._floor(request)
        found = self.minimal_nodes(
            table, request.rules, tested, request.progress, request.hierarchies, request.keep, cells
        )
        goal, lattice, keys, counts, minimal = found.goal, found.lattice, found.keys, found.counts, found.minimal
        s_card = _searched_card(goal.cardinality, cells)
        qi = list(goal.qi)
        n = table.n_rows
        say = request.say
        say(f"Incognito: {found.checked:,} nodes checked, {len(minimal)} minimal node(s); choosing by {self.utility}")
        scores = [self._score(lattice, keys, counts, v, tested, budget, s_card, n) for v in minimal]
        best = minimal[int(np.argmin(scores))]
        search = {
            "node": dict(zip(qi, best, strict=True)),
            "nodes_checked": found.checked,
            "minimal_nodes": len(minimal),
            "utility": {self.utility: float(min(scores))},
        }
        if not table.in_memory:  # the node applied to the records on the cluster
            from versapub.anonymizers.generalizing.incognito_cluster import publish_on_cluster

            g = [lattice.gen[j][lv][k] for j, (lv, k) in enumerate(zip(best, keys, strict=False))]
            cls = _group(g, [len(lattice.under[j][lv]) for j, lv in enumerate(best)], len(counts))
            sup = _failing(cls, keys[-1], counts, tested, s_card)[cls]
            return publish_on_cluster(table, found, best, sup, guarantee, search)
        codes = found.joint or [table.codes(a).astype(np.int64) for a in qi]
        searched = goal if cells is None else SimpleNamespace(codes=_searched(goal.codes, cells), cardinality=s_card)
        cls, cover, gone, counted = _classes(lattice, codes, best, tested, budget, searched, found.population)
        suppressed = int(gone.sum())
        if self.suppression_mode == "remove" and suppressed:
            return self._removing(request, found, best, cls, cover, gone, search)
        stats = class_stats(
            guarantee, cls, goal.codes.astype(np.int64), int(cls.max()) + 1, goal.cardinality, population=counted
        )
        stats.update(search, suppressed_records=suppressed)
        if budget and not suppressed and self.suppression_mode == "class":
            unused = _unused_budget(lattice, keys, counts, tested, budget, s_card)
            if unused:
                say(unused)
                stats["suppression_unused"] = unused
        out = classes_table(table, goal, found.dims, cls, cover, stats)
        return in_table_codes(out, table, found.joint_table) if found.joint_table is not None else out

    def _removing(
        self,
        request: PublishRequest,
        found: Minimal,
        best: tuple[int, ...],
        cls: IntArray,
        cover: list[tuple[IntArray, IntArray]],
        gone: npt.NDArray[np.bool_],
        search: dict[str, Any],
    ) -> AnonymizedTable:
        """The table of the classes kept at ``best``, the failing classes' records removed
        (class 0 of :func:`_classes`; their rows and reasons with it)."""
        keep, removed = kept_rows(gone)
        lattice = found.lattice
        codes = found.joint or [request.table.codes(a).astype(np.int64) for a in found.goal.qi]
        g = [lattice.gen[j][lv][c[removed]] for j, (c, lv) in enumerate(zip(codes, best, strict=True))]
        by_class = _group(g, [len(lattice.under[j][lv]) for j, lv in enumerate(best)], len(removed))
        sizes = np.bincount(by_class).astype(np.int64)
        table = request.table.take(keep)
        mine = target(table, request.rules, self.name, request.keep)
        mine_cls = cls[keep] - 1  # class 0 held the removed records
        n_cls = int(mine_cls.max()) + 1 if len(mine_cls) else 0
        stats = class_stats(request.guarantee, mine_cls, mine.codes, n_cls, mine.cardinality)
        stats.update(search, suppressed_records=0)
        out = classes_table(table, mine, found.dims, mine_cls, [(lv[1:], nd[1:]) for lv, nd in cover], stats)
        why = reasons(sizes[sizes > 0], request.k, request.guarantee)
        return with_removed(out, removed, why, self.suppression, request.table.n_rows)

    def _floor(self, request: PublishRequest) -> tuple[Guarantee, IntArray | None]:
        """The guarantee the search tests and the kept-values cells searched beside the
        sensitive value: the job's floor on published cells is k-anonymity of the classes,
        or, with kept columns, every (class, kept values) cell holding ``k`` records
        (:class:`~versapub.anonymizers.generalizing.floor.CellFloor`)."""
        guarantee, table = request.guarantee, request.table
        if request.k <= 1 or not table.in_memory:
            return floored(guarantee, request.k), None
        kept = request.floor_kept(target(table, request.rules, self.name, request.keep).kept)
        cells = kept_cells(table, kept)
        require_floor(request.k, cells, self.name, kept)
        if not kept:
            return floored(guarantee, request.k), None
        return CellFloor(floored(guarantee, request.k), int(cells.max()) + 1, request.k), cells

    def minimal_nodes(
        self,
        table: EncodedTable,
        rules: Rule | Sequence[Rule],
        guarantee: Guarantee,
        progress: Callable[[str], None] | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        keep: Sequence[str] = (),
        cells: IntArray | None = None,
    ) -> Minimal:
        """Every minimal node satisfying the guarantee (no other satisfying node is below
        it in every level), in order of level sum; :class:`InfeasibleError` when none.
        ``cells``: each record's kept-values cell, searched beside the sensitive value (the
        distinct rows then carry ``s * cells + cell``: the guarantee is a :class:`CellFloor`)."""
        say = progress or (lambda msg: None)
        population = guarantee.checked_population()
        joint: list[IntArray] | None = None
        counted: Counted | None = None
        source = table  # the attributes' domains: the table's, or joint with the population's
        if table.in_memory:
            goal = target(table, rules, self.name, keep)
            if population is not None:  # one dictionary per attribute over the research records and the population
                source = joint_table(table, goal.qi, population)
                joint = [source.codes(a)[: table.n_rows].astype(np.int64) for a in goal.qi]
                pop = group_rows(
                    [source.codes(a)[table.n_rows :] for a in goal.qi], [source.cardinality(a) for a in goal.qi]
                )
                counted = ([k.astype(np.int64) for k in pop.keys], pop.counts.astype(np.int64))
            base = group_rows(
                [*(joint or [table.codes(a).astype(np.int64) for a in goal.qi]), _searched(goal.codes, cells)],
                [*(source.cardinality(a) for a in goal.qi), _searched_card(goal.cardinality, cells)],
            )
            keys, base_counts = [k.astype(np.int64) for k in base.keys], base.counts.astype(np.int64)
        else:  # a table on a Dask cluster: the distinct rows counted there (a distributed group-by)
            from versapub.anonymizers.generalizing.incognito_cluster import distinct_rows

            rule_, qi_, kept_ = target_names(table, rules, self.name, keep)
            card = table.cardinality(rule_.rhs) if rule_ else 1
            goal = Target(rule_, qi_, np.zeros(0, dtype=np.int64), card, kept=kept_)  # codes stay on the cluster
            keys, base_counts = distinct_rows(table, qi_, rule_.rhs if rule_ else None)  # type: ignore[arg-type]
        rule = goal.rule
        qi = list(goal.qi)
        full = {a: _flat(source, a) for a in qi if a not in (hierarchies or {})}
        dims = dimensions(source, qi, {**full, **(hierarchies or {})})
        lattice = Lattice(
            tuple(tuple(dim.nodes or ()) for dim in dims),
            tuple(tuple(np.bincount(lv) for lv in (dim.nodes or ())) for dim in dims),
        )
        s_card = _searched_card(goal.cardinality, cells)
        n = table.n_rows
        budget = math.floor(self.suppression * n)
        _require_searchable(lattice, qi, budget > 0)
        checked, removing = 0, self.suppression_mode == "remove"
        projected: dict[tuple[int, ...], tuple[list[IntArray], IntArray, Counted | None]] = {}

        def check(attrs: tuple[int, ...], levels: tuple[int, ...]) -> Outcome:
            """A node's check on the group-by projected to its attributes (and S), kept for
            the subset being searched (its candidates are checked one after another)."""
            nonlocal checked
            checked += 1
            if attrs not in projected:
                projected.clear()
                cols = [keys[j] for j in attrs] + [keys[-1]]
                g = group_rows(cols, [int(c.max()) + 1 if len(c) else 1 for c in cols], with_inverse=True)
                assert g.inverse is not None
                sub_keys: list[IntArray] = [np.zeros(0, np.int64)] * (len(qi) + 1)
                for j, k in zip([*attrs, len(qi)], g.keys, strict=True):
                    sub_keys[j] = k.astype(np.int64)
                total = np.bincount(g.inverse, weights=base_counts, minlength=len(g.counts)).astype(np.int64)
                projected[attrs] = (sub_keys, total, _project(counted, attrs, len(qi)))
            sub_keys, total, pop_rows = projected[attrs]
            return _check(lattice, sub_keys, total, attrs, levels, guarantee, budget, s_card, pop_rows, removing)

        everything = tuple(range(len(qi)))
        if budget:  # the pruning properties fail with suppression: every node of the full lattice
            every = list(itertools.product(*(range(h) for h in lattice.heights)))
            say(f"Incognito with suppression: checking all {len(every):,} nodes")
            sat = {everything: {v for v in every if check(everything, v).ok}}
        else:
            sat = _search(lattice, check, say)
        found = sorted(sat.get(everything, set()), key=lambda v: (sum(v), v))
        minimal = [
            v for v in found if not any(u != v and all(a <= b for a, b in zip(u, v, strict=True)) for u in found)
        ]
        if not qi:
            minimal = [()]
            whole = _check(lattice, keys, base_counts, (), (), guarantee, budget, s_card, counted, removing)
            if not whole.ok:
                minimal = []
        if not minimal:
            raise InfeasibleError(
                f"Incognito found no full-domain generalization of {qi} satisfying {guarantee.describe()} for rule "
                f"'{rule}'"
                + (f" with at most {self.suppression:.1%} of records suppressed" if budget else "")
                + "; allow suppression, give coarser hierarchies, or weaken the guarantee."
            )
        return Minimal(
            goal, dims, lattice, keys, base_counts, minimal, checked, joint, counted, source if joint else None
        )

    def _score(
        self,
        lattice: Lattice,
        keys: Sequence[IntArray],
        counts: IntArray,
        node: tuple[int, ...],
        guarantee: Guarantee,
        budget: int,
        s_card: int,
        n: int,
    ) -> float:
        qi_keys, s = keys[:-1], keys[-1]
        g = [lattice.gen[j][lv][k] for j, (lv, k) in enumerate(zip(node, qi_keys, strict=True))]
        cls = _group(g, [int(x.max()) + 1 if len(x) else 1 for x in g], len(counts))
        # without a budget a minimal node suppresses nothing (and a population model needs no recount)
        fail = _failing(cls, s, counts, guarantee, s_card) if budget else np.zeros(int(cls.max()) + 1, dtype=bool)
        sup = fail[cls]
        size = np.bincount(cls, weights=counts).astype(np.float64)
        if self.utility == "discernibility":
            return float((size[~fail] ** 2).sum() + counts[sup].sum() * n)
        leaves = [lattice.under[j][lv][gj] for j, (lv, gj) in enumerate(zip(node, g, strict=True))]
        if self.utility == "loss":
            dom = [len(lattice.gen[j][0]) for j in range(len(node))]
            ncp = [np.where(sup, 1.0, (lf - 1) / max(d - 1, 1)) for lf, d in zip(leaves, dom, strict=True)]
            per = np.mean(ncp, axis=0) if ncp else np.zeros(len(counts))
            return float((per * counts).sum() / n)
        # KL of the table's estimate: class (with s) count spread over the leaves it covers.
        cs = group_rows([np.where(sup, -1, cls) + 1, s], [len(size) + 1, s_card], with_inverse=True)
        assert cs.inverse is not None
        cell = np.bincount(cs.inverse, weights=counts, minlength=len(cs.counts))[cs.inverse]
        spread = np.prod([np.where(sup, 1.0, lf) for lf in leaves], axis=0) if leaves else np.ones(len(counts))
        if sup.any():  # suppressed records: spread over the whole domain of every quasi-identifier
            spread = np.where(sup, float(np.prod([len(lattice.gen[j][0]) for j in range(len(node))])), spread)
        p = counts / n
        q = cell / n / spread
        return float(np.sum(p * (np.log(p) - np.log(q))))


def _searched(codes: IntArray, cells: IntArray | None) -> IntArray:
    """The sensitive codes the search groups by: with kept cells, ``s * cells + cell``."""
    if cells is None:
        return codes
    return codes.astype(np.int64) * (int(cells.max()) + 1) + cells


def _searched_card(cardinality: int, cells: IntArray | None) -> int:
    return cardinality if cells is None else cardinality * (int(cells.max()) + 1)


def _flat(table: EncodedTable, attribute: str) -> Hierarchy:
    """A two-level hierarchy (the values, then ``*``) for an attribute without one."""
    return Hierarchy(attribute, tuple((str(v), "*") for v in table.column(attribute).values), "<values, *>")


def _group(columns: Sequence[IntArray], cards: Sequence[int], n: int) -> IntArray:
    if not columns:
        return np.zeros(n, dtype=np.int64)
    g = group_rows(columns, cards, with_inverse=True)
    assert g.inverse is not None
    return g.inverse


def _failing(
    cls: IntArray,
    s: IntArray,
    counts: IntArray,
    guarantee: Guarantee,
    s_card: int,
    population: IntArray | None = None,
) -> npt.NDArray[np.bool_]:
    """Per class: does its sensitive histogram fail the guarantee?  ``population``: each
    class's population count (classes may then have no research record)."""
    n_cls = len(population) if population is not None else int(cls.max()) + 1 if len(cls) else 0
    if s_card == 1:  # no sensitive attribute (k-anonymity of the quasi-identifiers): sizes only
        size = np.bincount(cls, weights=counts, minlength=n_cls).astype(np.int64)
        ids = np.arange(n_cls, dtype=np.int64)
        h = Histograms(ids, size, n_cls, np.zeros(n_cls, np.int64), population)
        return np.asarray(~guarantee.groups_satisfied(h))
    g = group_rows([cls, s], [n_cls, s_card], with_inverse=True)
    assert g.inverse is not None
    total = np.bincount(g.inverse, weights=counts, minlength=len(g.counts)).astype(np.int64)
    h = Histograms(g.keys[0].astype(np.int64), total, n_cls, g.keys[1].astype(np.int64), population)
    return np.asarray(~guarantee.groups_satisfied(h))


def _project(counted: Counted | None, attrs: tuple[int, ...], m: int) -> Counted | None:
    """The population's distinct rows projected to ``attrs`` (codes at every attribute's
    index, empty elsewhere), their counts summed."""
    if counted is None:
        return None
    keys, weights = counted
    if not attrs:
        return [np.zeros(0, np.int64)] * m, np.array([int(weights.sum())], dtype=np.int64)
    g = group_rows(
        [keys[j] for j in attrs], [int(keys[j].max()) + 1 if len(keys[j]) else 1 for j in attrs], with_inverse=True
    )
    assert g.inverse is not None
    out: list[IntArray] = [np.zeros(0, np.int64)] * m
    for j, k in zip(attrs, g.keys, strict=True):
        out[j] = k.astype(np.int64)
    return out, np.bincount(g.inverse, weights=weights, minlength=len(g.counts)).astype(np.int64)


def _joint_classes(
    g: Sequence[IntArray], gp: Sequence[IntArray], cards: Sequence[int], n: int, n_pop: int
) -> tuple[IntArray, IntArray, int]:
    """Classes of the research rows' and the population rows' generalized codes, numbered
    together: (research rows' classes, population rows' classes, number of classes)."""
    if not g:
        return np.zeros(n, dtype=np.int64), np.zeros(n_pop, dtype=np.int64), 1
    both = _group([np.concatenate([a, b]) for a, b in zip(g, gp, strict=True)], cards, n + n_pop)
    return both[:n], both[n:], int(both.max()) + 1


#: Spaces of generalized values up to this size are counted densely by the size-only check.
DENSE_CLASSES = 1 << 16


def _unused_budget(
    lattice: Lattice, keys: Sequence[IntArray], counts: IntArray, guarantee: Guarantee, budget: int, s_card: int
) -> str | None:
    """Why a suppression budget went unused though the records failing the guarantee at the
    original values would fit in it: together they fail it too (ARX's semantics as Incognito
    reads it here: the suppressed records form one class that must meet the guarantee — with
    k-anonymity fewer than k outliers can never be suppressed).  None when that is not why."""
    every = tuple(range(len(lattice.heights)))
    got = _check(lattice, keys, counts, every, (0,) * len(every), guarantee, budget, s_card)
    if got.ok or not 0 < got.suppressed <= budget:
        return None
    return (
        f"Incognito could not use its suppression budget ({budget:,} records): the {got.suppressed:,} record(s) that "
        "fail the guarantee at the original values would fit in it, but suppressed they form one class that must "
        "meet the guarantee too, and together they fail it (with k-anonymity: fewer than k outliers); none "
        "suppressed, the quasi-identifiers generalized instead"
    )


def _check(
    lattice: Lattice,
    keys: Sequence[IntArray],
    counts: IntArray,
    attrs: tuple[int, ...],
    levels: tuple[int, ...],
    guarantee: Guarantee,
    budget: int,
    s_card: int,
    population: Counted | None = None,
    remove: bool = False,
) -> Outcome:
    """Does the node (``levels`` of quasi-identifiers ``attrs``) satisfy the guarantee,
    suppressing at most ``budget`` records (whose class must satisfy it too)?  With the
    population's rows (a guarantee checked against it), every class of either counts,
    each with its population (no suppression then)."""
    g = [lattice.gen[j][lv][keys[j]] for j, lv in zip(attrs, levels, strict=True)]
    cards = [len(lattice.under[j][lv]) for j, lv in zip(attrs, levels, strict=True)]
    if population is not None:
        pkeys, pcounts = population
        gp = [lattice.gen[j][lv][pkeys[j]] for j, lv in zip(attrs, levels, strict=True)]
        cls, pcls, n_cls = _joint_classes(g, gp, cards, len(counts), len(pcounts))
        pop = np.bincount(pcls, weights=pcounts, minlength=n_cls).astype(np.int64)
        return Outcome(not _failing(cls, keys[-1], counts, guarantee, s_card, pop).any(), 0)
    if s_card == 1 and math.prod(cards) <= max(DENSE_CLASSES, 4 * len(counts)):
        # sizes only (k-anonymity of the quasi-identifiers): one bincount over the dense
        # space of generalized values; a node that passes needs nothing else
        key = np.zeros(len(counts), dtype=np.int64)
        for col, card in zip(g, cards, strict=True):
            key = key * card + col
        size = np.bincount(key, weights=counts, minlength=math.prod(cards))
        size = size[size > 0].astype(np.int64)
        m = len(size)
        hist = Histograms(np.arange(m, dtype=np.int64), size, m, np.zeros(m, dtype=np.int64))
        if bool(np.all(guarantee.groups_satisfied(hist))):
            return Outcome(True, 0)
    cls = _group(g, cards, len(counts))
    s = keys[-1]
    fail = _failing(cls, s, counts, guarantee, s_card)
    if not fail.any():
        return Outcome(True, 0)
    sup = fail[cls]
    n_sup = int(counts[sup].sum())
    if n_sup > budget:
        return Outcome(False, n_sup)
    if remove:  # ARX's semantics: the failing classes' records are published nowhere
        return Outcome(True, n_sup)
    rest = _failing(np.zeros(int(sup.sum()), dtype=np.int64), s[sup], counts[sup], guarantee, s_card)
    return Outcome(not rest.any(), n_sup)


def _search(
    lattice: Lattice, check: Callable[[tuple[int, ...], tuple[int, ...]], Outcome], say: Callable[[str], None]
) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """Satisfying nodes of every subset of the quasi-identifiers (Incognito's main loop)."""
    m = len(lattice.heights)
    sat: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for size in range(1, m + 1):
        subsets = list(itertools.combinations(range(m), size))
        for attrs in subsets:
            cands = _candidates(lattice, sat, attrs)
            sat[attrs] = _rollup(cands, lambda v, a=attrs: check(a, v).ok)  # type: ignore[misc]
        say(f"Incognito: subsets of {size} of {m} quasi-identifiers done ({100 * size // m}%)")
        if not any(sat[a] for a in subsets):
            break
    return sat


def _candidates(
    lattice: Lattice, sat: dict[tuple[int, ...], set[tuple[int, ...]]], attrs: tuple[int, ...]
) -> list[tuple[int, ...]]:
    """Nodes over ``attrs`` whose every one-smaller projection satisfied (subset property)."""
    if len(attrs) == 1:
        return [(lv,) for lv in range(lattice.heights[attrs[0]])]
    head = sat.get(attrs[:-1], set())
    last = attrs[-1]
    # The other one-smaller subsets (all but the last attribute dropped one at a time).
    checks = [
        ([i for i in range(len(attrs)) if i != drop], sat.get(attrs[:drop] + attrs[drop + 1 :], set()))
        for drop in range(len(attrs) - 1)
    ]
    out = []
    for v in head:
        for lv in range(lattice.heights[last]):
            node = (*v, lv)
            if all(tuple(node[i] for i in keep) in found for keep, found in checks):
                out.append(node)
    return out


def _rollup(cands: list[tuple[int, ...]], ok: Callable[[tuple[int, ...]], bool]) -> set[tuple[int, ...]]:
    """Visit candidates from the most specific up; a satisfying node marks every candidate
    that generalizes it (no check)."""
    if not cands:
        return set()
    order = sorted(cands, key=lambda v: (sum(v), v))
    arr = np.asarray(order, dtype=np.int64)
    marked = np.zeros(len(order), dtype=bool)
    for i, v in enumerate(order):
        if marked[i]:
            continue
        if ok(v):
            marked |= (arr >= arr[i]).all(axis=1)
    return {order[i] for i in np.flatnonzero(marked)}


def _classes(
    lattice: Lattice,
    codes: Sequence[IntArray],
    node: tuple[int, ...],
    guarantee: Guarantee,
    budget: int,
    s_col: Any,
    population: Counted | None = None,
) -> tuple[IntArray, list[tuple[IntArray, IntArray]], npt.NDArray[np.bool_], IntArray | None]:
    """Every record's class at ``node`` (failing classes merged into one class at the
    roots, class 0), each class's (level, node) per quasi-identifier, which records are
    suppressed, and (with the population's rows) each class's population count."""
    g = [lattice.gen[j][lv][c] for j, (c, lv) in enumerate(zip(codes, node, strict=True))]
    cards = [len(lattice.under[j][lv]) for j, lv in enumerate(node)]
    n = len(codes[0]) if codes else len(s_col.codes)
    if population is not None:
        pkeys, pcounts = population
        gp = [lattice.gen[j][lv][k] for j, (k, lv) in enumerate(zip(pkeys, node, strict=True))]
        joint, pcls, n_joint = _joint_classes(g, gp, cards, n, len(pcounts))
        ids, cls = np.unique(joint, return_inverse=True)
        where = np.full(n_joint, -1, dtype=np.int64)
        where[ids] = np.arange(len(ids))
        mine = where[pcls] >= 0
        counted = np.bincount(where[pcls][mine], weights=pcounts[mine], minlength=len(ids)).astype(np.int64)
        cls = cls.astype(np.int64).ravel()
        return cls, _cover(lattice, g, cls, node, False), np.zeros(n, dtype=bool), counted
    cls = _group(g, cards, n)
    s = s_col.codes.astype(np.int64)
    fail = (
        _failing(cls, s, np.ones(len(s), dtype=np.int64), guarantee, s_col.cardinality)
        if budget
        else np.zeros(int(cls.max()) + 1 if len(cls) else 0, dtype=bool)
    )
    sup = fail[cls]
    if sup.any():
        cls = np.where(sup, -1, cls)
    ids, cls = np.unique(cls, return_inverse=True)
    cls = cls.astype(np.int64).ravel()
    return cls, _cover(lattice, g, cls, node, bool(ids[0] == -1)), sup, None


def _cover(
    lattice: Lattice, g: Sequence[IntArray], cls: IntArray, node: tuple[int, ...], suppressed: bool
) -> list[tuple[IntArray, IntArray]]:
    """Each class's (level, node) per quasi-identifier (``suppressed``: class 0 holds the
    suppressed records, every quasi-identifier at its root)."""
    n_cls = int(cls.max()) + 1 if len(cls) else 0
    first = np.full(n_cls, -1, dtype=np.int64)
    first[cls[::-1]] = np.arange(len(cls) - 1, -1, -1)
    cover = []
    for j, lv in enumerate(node):
        top = len(lattice.gen[j]) - 1
        level = np.full(n_cls, lv, dtype=np.int64)
        nodes = g[j][first]
        if suppressed:
            level[0] = top
            nodes[0] = 0
        cover.append((level, nodes))
    return cover
