"""Sequential Sweep (the functional-diversity paper, §4): local recoding of the
quasi-identifiers along an order of their generalizations, then generalization of
sensitive values in the last, most general equivalence class.

* **Items** (§4.1–4.2): every *level vector* of the quasi-identifiers' taxonomies (one level
  per attribute; an attribute without a hierarchy has two, its values and ``*``).  A QI
  value at a level vector retains the information ``I = mean_i I(S_i,j)``, where
  ``I(S_i,j)`` is the mean information ``1 - log|leaves(v)| / log m_i`` of attribute ``i``'s
  nodes at level ``j`` (Definition 14's measure).  Items are visited in the order ``≺_I``
  (Definition 26): more information first, ties by the level vector, more specific first
  attribute by attribute.  There are ``H = Π h_i`` items (``h_i`` levels of attribute ``i``).
* **Sweep** (§4.2, Steps 4–10): every tuple starts at the first item (its base QI value).
  At each item the tuples still open form equivalence classes by their QI values
  generalized to the item's levels.  A class that satisfies the requirement is closed.  A
  violating class removes tuples whose removal most reduces the induced frequency of its
  dominant sensitive value (§4.4: a tuple holding the dominant value), one at a time, until
  it satisfies — or is empty, when it holds fewer distinct values than any satisfying class
  needs; the removed tuples go to their *next EC* (Definition 30): their QI value
  generalized to the next item.  All open tuples are therefore at the same item, and each
  moves at most ``H`` times (Theorem 32's ``O(H·|T|)``).
* **Sensitive generalization** (§4.3, Step 11): the tuples left at the last item (every QI
  at its root) form one class; while it violates, the most frequent leaf among the top
  ``k`` of the smallest violated ``F(k) <= phi(k)`` has tuples covering it generalized up the
  sensitive taxonomy to the next level where their node is wider (those at the lowest
  level first: they put the most weight on it), at most to ``max_sensitive_level``.  Under
  such a cap the leftovers may not be fixable although the whole table is (the workflow
  checks that first): whole closed classes then rejoin the last one, most general first.
  Without a taxonomy the sensitive attribute has two levels, its values and ``*``.

Everything works on counts of distinct (quasi-identifier, sensitive value) combinations —
tuples with equal values are interchangeable except for which records a class keeps, which
is a seeded random choice — and every step is vectorized over those rows and classes
(``docs/choices.md`` lists the choices the paper leaves open).  The output is a
``generalized`` table whose quasi-identifiers *and* sensitive values may be taxonomy nodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest, SensitiveReach
from versapub.anonymizers.generalizing.generalize import Dimension, cells_table, dimension, published_histograms, target
from versapub.data.groupby import combined_key, group_rows
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InfeasibleError
from versapub.plugins import Param, validated
from versapub.privacy.guarantees.base import Guarantee
from versapub.privacy.guarantees.tolerance import at_most
from versapub.privacy.rules import Rule

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
TOL = 1e-9


def flat_hierarchy(table: EncodedTable, attribute: str) -> Hierarchy:
    """A two-level hierarchy (the values, then ``*``) for an attribute without one."""
    return Hierarchy(attribute, tuple((str(v), "*") for v in table.column(attribute).values), "<values, *>")


def level_information(dim: Dimension) -> Floats:
    """Per level of ``dim`` (0: leaves), the mean information of its nodes, ``1 - log|leaves|
    / log m`` over the nodes holding values of the column (1 when ``m <= 1``)."""
    assert dim.nodes is not None
    m = len(dim.values)
    out = []
    for k in range(len(dim.nodes)):
        width = np.bincount(dim.nodes[k])
        width = width[width > 0]
        out.append(1.0 if m <= 1 else float(np.mean(1 - np.log(width) / math.log(m))))
    return np.asarray(out)


#: The most items (level vectors) Sequential Sweep visits.
MAX_ITEMS = 2_000_000


def item_order(dims: Sequence[Dimension]) -> IntArray:
    """Every level vector (rows; 0 = leaf), in the order ``≺_I`` (Definition 26): more
    retained information first, ties by the level vector, more specific first; the vector
    of roots (no information) last."""
    heights = [len(d.nodes or ()) for d in dims]
    if not dims:
        return np.zeros((1, 0), dtype=np.int64)
    total = math.prod(heights)
    if total > MAX_ITEMS:
        raise ConfigError(
            "Sequential Sweep visits every combination of the quasi-identifiers' levels: "
            f"{' x '.join(map(str, heights))} = {total:,} here, more than {MAX_ITEMS:,}. Use fewer quasi-identifiers "
            "or hierarchies with fewer levels."
        )
    grid = np.stack(np.meshgrid(*(np.arange(h) for h in heights), indexing="ij"), axis=-1).reshape(-1, len(dims))
    info = np.mean([level_information(d)[grid[:, i]] for i, d in enumerate(dims)], axis=0)
    root = (grid == np.asarray(heights) - 1).all(axis=1)
    order = np.lexsort((*(grid[:, i] for i in range(len(dims) - 1, -1, -1)), -np.round(info, 12), root))
    return np.asarray(grid[order], dtype=np.int64)


def phi_array(bound: Sequence[float], m: int) -> Floats:
    """``phi(1) .. phi(m)``: the bound's values, 1 after its last."""
    out = np.ones(max(m, 1))
    b = np.asarray(bound[:m], dtype=np.float64)
    out[: len(b)] = b
    return out


def width_needed(phi: Floats) -> int:
    """The fewest distinct values a satisfying class holds: ``w`` equally frequent values
    have ``F(k) = k/w``, which meets ``phi`` iff ``w >= k/phi(k)`` wherever ``phi(k) < 1``;
    a class with fewer distinct values fails for that ``k`` however its counts are cut."""
    k = np.arange(1, len(phi) + 1)
    below = phi < 1 - TOL
    return int(np.max(np.ceil(k[below] / phi[below] - TOL))) if below.any() else 1


@dataclass(frozen=True)
class Cells:
    """Sensitive counts per class, sorted by class then count (decreasing) then value:
    ``cls``, ``value``, ``count``; per class its first cell ``start``, cell number ``n``
    and record number ``size``."""

    cls: IntArray
    value: IntArray
    count: IntArray
    start: IntArray
    n: IntArray
    size: IntArray
    #: Where each cell came from in the input of :meth:`of`.
    perm: IntArray

    @classmethod
    def of(cls_, ec: IntArray, value: IntArray, count: IntArray, n_cls: int) -> Cells:
        top = int(count.max()) + 1 if len(count) else 1
        vals = int(value.max()) + 1 if len(value) else 1
        if n_cls * top * vals < 1 << 62:  # one int64 sort key: class, count (decreasing), value
            order = np.argsort((ec * top + (top - 1 - count)) * vals + value, kind="stable")
        else:
            order = np.lexsort((value, -count, ec))
        ec, value, count = ec[order], value[order], count[order]
        n = np.bincount(ec, minlength=n_cls).astype(np.int64)
        start = (np.cumsum(n) - n).astype(np.int64)
        size = np.bincount(ec, weights=count, minlength=n_cls).astype(np.int64)
        return cls_(ec, value, count, start, n, size, order.astype(np.int64))

    @property
    def rank(self) -> IntArray:
        return np.arange(len(self.cls), dtype=np.int64) - self.start[self.cls]


def state_after(cells: Cells, removed: IntArray) -> IntArray:
    """Each cell's count after ``removed[c]`` tuples left class ``c`` one at a time, always a
    tuple of a currently most frequent value (§4.4; ties: the later value in the class's
    order).  The top ``j`` values end level at ``q`` or ``q + 1``, where ``j`` is the most
    values that removing ``removed`` levels down to the ``j``-th count."""
    c = cells.count
    rank = cells.rank
    csum = np.cumsum(c)
    prefix = csum - (csum - c)[cells.start[cells.cls]]  # P_j: the class's top-(rank + 1) sum
    r = removed[cells.cls]
    cost = prefix - (rank + 1) * c  # removals that bring the top (rank + 1) down to c_rank
    j = np.bincount(cells.cls, weights=(cost <= r).astype(np.float64), minlength=len(removed)).astype(np.int64)
    jj = np.maximum(j, 1)[cells.cls]
    pj = prefix[cells.start + np.maximum(j, 1) - 1][cells.cls]
    left = pj - r
    q, rem = left // jj, left % jj
    top = rank < jj
    return np.where(top, q + (rank < rem), c)


def satisfied(cells: Cells, counts: IntArray, removed: IntArray, phi: Floats) -> npt.NDArray[np.bool_]:
    """Per class: with ``counts`` as its cells' counts (``removed`` records gone), does
    ``F(k) <= phi(k)`` hold for every ``k``?  (An emptied class holds.)"""
    c = counts  # levelled from the top: still in each class's decreasing order
    rank = cells.rank
    csum = np.cumsum(c)
    top = csum - (csum - c)[cells.start[cells.cls]]
    size = (cells.size - removed)[cells.cls]
    bound = phi[np.minimum(rank, len(phi) - 1)]
    bad = ~at_most(top, bound * size) & (size > 0)
    return np.bincount(cells.cls, weights=bad.astype(np.float64), minlength=len(removed)) == 0


def _capped_ok(cells: Cells, cap: IntArray, phi: Floats) -> npt.NDArray[np.bool_]:
    """Per class: does it satisfy with every count capped at ``cap`` (its own)?"""
    counts = np.minimum(cells.count, cap[cells.cls])
    removed = cells.size - np.bincount(cells.cls, weights=counts, minlength=len(cap)).astype(np.int64)
    return satisfied(cells, counts, removed, phi)


def removals(cells: Cells, phi: Floats, need: int) -> IntArray:
    """Per class, how many tuples leave it (dominant value first, one at a time) before it
    satisfies the bound: 0 when it does; all when it holds fewer than ``need`` distinct
    values; otherwise the first satisfying state.  ``F(k)`` is not monotone in the number
    removed (removing one of several equally frequent values can raise ``F(k)``), but it is
    along the *caps* (every count cut to ``L``), and the first satisfying state lies after
    the last failing cap ``L + 1`` and no later than cap ``L`` (a property the tests check
    against the one-at-a-time process): a binary search over ``L``, then a scan of the
    states between the two caps."""
    n_cls = len(cells.size)
    ok0 = satisfied(cells, cells.count, np.zeros(n_cls, dtype=np.int64), phi)
    out = np.where(ok0, 0, cells.size)
    todo = ~ok0 & (cells.n >= need)
    if not todo.any():
        return out
    top = cells.count[cells.start]  # c_1 per class
    lo = np.zeros(n_cls, dtype=np.int64)  # cap 0 (empty) satisfies
    hi = np.where(todo, top - 1, 0)  # cap c_1 (nothing removed) fails
    while (lo < hi).any():
        mid = np.where(lo < hi, (lo + hi + 1) // 2, lo)
        ok = _capped_ok(cells, mid, phi)
        lo = np.where((lo < hi) & ok, mid, lo)
        hi = np.where((lo < hi) & ~ok, mid - 1, hi)
    level = lo  # the largest satisfying cap L; cap L + 1 fails
    removed_above = np.bincount(
        cells.cls, weights=np.maximum(cells.count - level[cells.cls] - 1, 0), minlength=n_cls
    ).astype(np.int64)
    j = np.bincount(cells.cls, weights=(cells.count > level[cells.cls]).astype(np.float64), minlength=n_cls).astype(
        np.int64
    )
    t_first = np.where(todo, j, 0)  # t = j is cap L itself
    scan = np.flatnonzero(todo & (j > 1))
    if len(scan):
        # Pairs (class, t) for t = 1 .. j - 1: the top j - t values at L + 1, the next t at L.
        reps = j[scan] - 1
        pair_cls = np.repeat(scan, reps)
        pair_t = np.arange(int(reps.sum()), dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps) + 1
        per = cells.n[pair_cls]
        cell_pair = np.repeat(np.arange(len(pair_cls), dtype=np.int64), per)
        idx = np.repeat(cells.start[pair_cls], per) + (
            np.arange(int(per.sum()), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
        )
        rank = cells.rank[idx]
        lv = level[pair_cls][cell_pair]
        jj, tt = j[pair_cls][cell_pair], pair_t[cell_pair]
        counts = np.where(rank < jj - tt, lv + 1, np.where(rank < jj, lv, cells.count[idx]))
        size = np.bincount(cell_pair, weights=counts, minlength=len(pair_cls)).astype(np.int64)
        virtual = Cells(cell_pair, cells.value[idx], counts, np.cumsum(per) - per, per, size, idx)
        ok = satisfied(virtual, counts, np.zeros(len(pair_cls), dtype=np.int64), phi)
        first = np.full(n_cls, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, pair_cls[ok], pair_t[ok])
        t_first = np.where(first < np.iinfo(np.int64).max, np.minimum(first, t_first), t_first)
    return np.where(todo, removed_above + t_first, out)


class SequentialSweep:
    """Sequential Sweep (see the module docstring).  ``max_sensitive_level`` caps how far
    sensitive values may be generalized (0: never; ``None``: up to the root)."""

    name = "sequential-sweep"
    #: Why it does not run on the Dask backend (the refusal's reason).
    in_memory_only = "its sweeps move single records between groups"
    max_rules = 1

    #: Parameters other generalizing anonymizers take that this one declines, and why.
    not_offered: ClassVar[dict[str, str]] = {
        "suppression": (
            "Suppression as ARX does it removes whole classes that fail, so a removed record lies in no published "
            "class and the verifier can check it against the input; "
            "Sequential Sweep's classes are local recodings whose regions overlap, so a removed record would still lie "
            "in a published class (docs/choices.md). Its own remedy for a skewed table is "
            "generalizing the sensitive values (max_sensitive_level); or use mondrian or "
            "incognito with suppression=S."
        )
    }
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "max_sensitive_level": Param("whole", low=0, optional=True, why="0: never generalize sensitive values")
    }
    glossary: ClassVar[str] = (
        "Sequential Sweep (§4 of the functional-diversity paper): Mondrian-like partitioning that may also "
        "generalize the sensitive values up their taxonomy, so that every class meets functional (tau, lambda)-"
        "diversity on the induced frequencies."
    )

    def __init__(self, max_sensitive_level: int | None = None) -> None:
        got = validated(self.name, self.parameter_constraints, {"max_sensitive_level": max_sensitive_level})
        self.max_sensitive_level = got["max_sensitive_level"]

    def params(self) -> dict[str, Any]:
        return {"max_sensitive_level": self.max_sensitive_level}

    # -- the optional capability the workflow checks feasibility with ------------------
    def sensitive_reach(
        self, table: EncodedTable, rule: Rule, guarantee: Guarantee, hierarchies: Mapping[str, Hierarchy] | None
    ) -> SensitiveReach:
        """The rule's sensitive column with every value generalized as far as allowed, and
        the eligible ranges up to there (for the guarantee's lambda, when it has one)."""
        from versapub.privacy.guarantees.eligible import describe_ranges, induced, ranges

        col = table.column(rule.rhs)
        h = (hierarchies or {}).get(rule.rhs) or flat_hierarchy(table, rule.rhs)
        top = h.height - 1
        level = top if self.max_sensitive_level is None else min(self.max_sensitive_level, top)
        found = ranges(col, h, max(level, 0), include_root=True)
        cap = "no limit" if self.max_sensitive_level is None else f"max_sensitive_level = {self.max_sensitive_level}"
        note = (
            f"sequential-sweep may generalize {rule.rhs!r} up to level {level} of {top} ({cap}); the eligible "
            f"requirements: {describe_ranges(found, guarantee.params().get('lambda'))}"
        )
        return SensitiveReach(level, induced(col, h, level) * table.n_rows, note)

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        table, guarantee, hierarchies = request.table, request.guarantee, request.hierarchies
        rng = request.rng
        goal = target(table, request.rules, self.name)
        if goal.rule is None:
            raise ValueError("sequential-sweep protects a sensitive attribute")
        bound = guarantee.cumulative_bound()
        if bound is None:
            raise ConfigError(
                f"The sequential-sweep anonymizer enforces bounds on cumulative frequencies: functional (tau, lambda)-"
                f"diversity, or frequency l-diversity (its case tau = 1/l, lambda = l); {guarantee.name} is not one. "
                "Use mondrian or incognito for it."
            )
        say = request.say
        hier = dict(hierarchies or {})
        s = goal.rule.rhs
        s_dim = dimension(table, s, hier.get(s) or flat_hierarchy(table, s))
        qdims = [dimension(table, a, hier.get(a) or flat_hierarchy(table, a)) for a in goal.qi]
        m = goal.cardinality
        phi = phi_array(bound, m)
        need = width_needed(phi)
        base = group_rows([*(table.codes(a) for a in goal.qi), goal.codes], [*(d.values.size for d in qdims), m])
        qcodes = [k.astype(np.int64) for k in base.keys[:-1]]
        svals = base.keys[-1].astype(np.int64)
        items = item_order(qdims)
        sweep = _sweep(qdims, qcodes, svals, base.counts.astype(np.int64), items, phi, need, m, rng, say)
        rows, item, cnt = sweep.closed
        last_rows, last_cnt = sweep.last
        s_top = len(s_dim.nodes or ()) - 1
        cap = s_top if self.max_sensitive_level is None else min(self.max_sensitive_level, s_top)
        ec = _classes_of(qdims, qcodes, rows, item, items)
        s_level, s_rows, s_cnt, reopened = _generalize_last(
            s_dim, svals, last_rows, last_cnt, (rows, item, cnt), ec, phi, cap, say
        )
        if reopened is not None:
            rows, item, cnt = reopened
        # Closed parts: QI at their item's levels, exact sensitive value; the last class: QI
        # at the roots, sensitive values at their levels.
        top_item = items[-1]
        part_rows = np.r_[rows, s_rows]
        levels = np.vstack([items[item], np.tile(top_item, (len(s_rows), 1))]) if len(items[0]) else None
        counts = np.r_[cnt, s_cnt].astype(np.int64)
        cover = []
        for j, dim in enumerate(qdims):
            assert dim.nodes is not None and levels is not None
            lv = levels[:, j]
            code = qcodes[j][part_rows]
            node = np.zeros(len(lv), dtype=np.int64)
            for k in np.unique(lv):
                at = lv == k
                node[at] = dim.nodes[int(k)][code[at]]
            cover.append((lv, node))
        sl = np.r_[np.zeros(len(rows), dtype=np.int64), s_level]
        sv = svals[part_rows]
        assert s_dim.nodes is not None
        snode = np.zeros(len(sl), dtype=np.int64)
        for k in np.unique(sl):
            at = sl == k
            snode[at] = s_dim.nodes[int(k)][sv[at]]
        out = cells_table(table, goal, qdims, cover, counts, {}, s_dim=s_dim, s_cover=(sl, snode))
        h = published_histograms(out)
        ok = guarantee.groups_satisfied(h)
        if not ok.all():  # never publish a violation: a bug, not bad input
            raise AssertionError(f"Sequential Sweep produced {int((~ok).sum())} classes that violate the requirement")
        sizes = h.sizes()
        size_values, size_counts = np.unique(sizes, return_counts=True)
        gen = np.bincount(sl, weights=counts, minlength=s_top + 1).astype(np.int64)
        stats = {
            "rows": out.parts["data"].n_rows,
            "groups": h.n_groups,
            "group_sizes": {int(k): int(v) for k, v in zip(size_values, size_counts, strict=True)},
            "achieved": guarantee.achieved(h),
            "discernibility": int((sizes.astype(np.int64) ** 2).sum()),
            "items": len(items),
            "items_visited": sweep.items_visited,
            "moves": sweep.moves,
            "last_class_records": int(s_cnt.sum()),
            "sensitive_generalized": int(gen[1:].sum()),
            "sensitive_levels": {int(k): int(v) for k, v in enumerate(gen) if v},
            "max_sensitive_level": cap,
        }
        say(
            f"Sequential Sweep: {h.n_groups:,} classes, {stats['sensitive_generalized']:,} sensitive values generalized"
        )
        return replace(out, stats=stats)


@dataclass(frozen=True)
class Sweep:
    """The sweep's outcome: closed parts (distinct-row index, item, records), the tuples
    left at the last item (row, records), and figures for the report."""

    closed: tuple[IntArray, IntArray, IntArray]
    last: tuple[IntArray, IntArray]
    moves: int
    items_visited: int


#: Item x open-row pairs evaluated at once (see :func:`_sweep`).
BATCH_CELLS = 1 << 21


def _sweep(
    qdims: Sequence[Dimension],
    qcodes: Sequence[IntArray],
    svals: IntArray,
    counts: IntArray,
    items: IntArray,
    phi: Floats,
    need: int,
    m: int,
    rng: np.random.Generator,
    say: Callable[[str], None],
) -> Sweep:
    """Steps 4–10: visit the items in order with every open tuple (module docstring).

    Items are evaluated in batches: the open tuples' classes at several consecutive items
    at once; when no class of the first ``b`` items keeps a tuple, those items changed
    nothing and are passed, and the first item where some class keeps tuples is applied
    (exactly the one-item-at-a-time outcome; the batch grows while items pass).  A class
    keeps tuples iff it holds ``need`` distinct values, which fewer open tuples cannot
    create: the batch's later items where no class could keep any are passed as well."""
    n_items = len(items)
    d = len(qdims)
    prio = rng.permutation(len(svals))  # tuples of one (class, value) cell move in this order
    row = np.arange(len(svals), dtype=np.int64)  # open parts: distinct-row index and records
    cnt = counts.copy()
    closed: list[tuple[IntArray, IntArray, IntArray]] = []  # rows, their item, their records kept
    moves = 0
    shown = -1
    # Per attribute, node ids as one (levels x codes) array; mixed radix over leaf counts.
    node_tab = [np.vstack(dim.nodes) if dim.nodes is not None else np.zeros((1, 1), np.int64) for dim in qdims]
    radix = [int(t.max()) + 1 for t in node_tab]
    space = math.prod(radix)
    j, batch = 0, 1
    while j < n_items - 1 and len(row):
        p = len(row)
        wide = space * m >= 1 << 62  # key spaces beyond int64: keys compressed item by item
        room = (1 << 62) // ((p if wide else space) * m)
        b_n = max(1, min(batch, n_items - 1 - j, BATCH_CELLS // p, room))
        its = items[j : j + b_n]
        keys, width = _batch_keys(node_tab, radix, its, [qcodes[i][row] for i in range(d)], space, wide)
        ec_comp = (np.arange(b_n, dtype=np.int64)[:, None] * width + keys).ravel()  # a class: (item, key)
        weights = np.tile(cnt, b_n)
        # Prefilter: a class needs at least ``need`` records to keep any; hashing the class keys into
        # buckets, a bucket's records bound its classes' sizes from above, so rows in small buckets
        # are hopeless without sorting them.
        kept = _prefilter(ec_comp, weights, need)
        cand_any = False
        if len(kept):
            # One sort gives the classes (item, key) and their cells (item, key, value).
            comp = ec_comp[kept] * m + np.tile(svals[row], b_n)[kept]
            order = np.argsort(comp)
            cs = comp[order]
            change = np.r_[True, cs[1:] != cs[:-1]]
            cell_start = np.flatnonzero(change)
            cell_of = np.empty(len(comp), dtype=np.int64)
            cell_of[order] = np.cumsum(change) - 1
            cell_cnt = np.add.reduceat(weights[kept][order], cell_start).astype(np.int64)
            cell_comp = cs[cell_start]
            ec_key = cell_comp // m
            ec_of_cell = np.cumsum(np.r_[True, ec_key[1:] != ec_key[:-1]]) - 1
            # Only classes with enough distinct values can keep tuples.
            cand = (np.bincount(ec_of_cell) >= need)[ec_of_cell]
            cand_any = bool(cand.any())
        if cand_any:
            sub_ec = np.unique(ec_of_cell[cand], return_inverse=True)[1].ravel().astype(np.int64)
            cells = Cells.of(sub_ec, cell_comp[cand] % m, cell_cnt[cand], int(sub_ec.max()) + 1)
            remove = removals(cells, phi, need)
            keeps = np.flatnonzero(remove < cells.size)
        else:
            keeps = np.zeros(0, dtype=np.int64)
        if not len(keeps):
            moves += b_n * int(cnt.sum())
            j += b_n
            batch = min(2 * batch, n_items)
            continue
        # The first item where a class keeps tuples; apply it.
        cand_idx = np.flatnonzero(cand)
        cell_item = (cell_comp // m) // width
        first_cell = cand_idx[cells.perm[cells.start[keeps]]]
        b = int(cell_item[first_cell].min())
        moving = cell_cnt.copy()  # hopeless classes send everything on
        moving[cand_idx[cells.perm]] = cells.count - state_after(cells, remove)
        lo, hi = np.searchsorted(kept, [b * p, (b + 1) * p])
        moved = _moved(cnt, kept[lo:hi] - b * p, cell_of[lo:hi], moving, prio[row])
        k = cnt - moved > 0
        closed.append((row[k], np.full(int(k.sum()), j + b, dtype=np.int64), (cnt - moved)[k]))
        moves += b * int(cnt.sum()) + int(moved.sum())
        nxt = moved > 0
        row, cnt = row[nxt], moved[nxt]
        # Items of the batch after b where no class could keep a tuple stay so for the smaller
        # set of open tuples (fewer tuples: fewer distinct values per class): pass them.
        later = np.unique(cell_item[cand_idx])
        later = later[later > b]
        skip = int(later[0]) if len(later) else b_n
        moves += (skip - b - 1) * int(cnt.sum())
        j += skip
        batch = max(1, 2 * b)
        shown = _say_progress(say, j, n_items, int(cnt.sum()), shown)
    cat = lambda i: np.concatenate([c[i] for c in closed]) if closed else np.zeros(0, dtype=np.int64)  # noqa: E731
    return Sweep((cat(0), cat(1), cat(2)), (row, cnt), moves, min(j, n_items - 1))


def _say_progress(say: Callable[[str], None], j: int, n_items: int, still_open: int, shown: int) -> int:
    """A line at every tenth of the items; returns the tenth last shown."""
    pct = 100 * j // max(n_items - 1, 1)
    if pct // 10 != shown:
        say(f"Sequential Sweep: item {j:,} of {n_items:,} ({pct}%), {still_open:,} records still open")
    return pct // 10


def _batch_keys(
    node_tab: Sequence[IntArray],
    radix: Sequence[int],
    its: IntArray,
    row_codes: Sequence[IntArray],
    space: int,
    wide: bool,
) -> tuple[IntArray, int]:
    """The open tuples' class keys at each item of the batch (``its``: items x attributes'
    levels; ``row_codes``: the open tuples' codes per attribute), and the key space's width:
    mixed radix over the nodes, or compressed item by item when the space exceeds int64
    (``wide``)."""
    b_n, p = len(its), len(row_codes[0]) if row_codes else 0
    if wide:
        keys = np.stack(
            [
                np.unique(
                    combined_key([node_tab[i][its[b, i]][c] for i, c in enumerate(row_codes)], radix)[0],
                    return_inverse=True,
                )[1].ravel()
                for b in range(b_n)
            ]
        ).astype(np.int64)
        return keys, p
    keys = np.zeros((b_n, p), dtype=np.int64)
    for i, c in enumerate(row_codes):
        levels = its[:, i]
        if (levels == levels[0]).all():  # one level across the batch: a broadcast row
            keys = keys * radix[i] + node_tab[i][levels[0]][c][None, :]
        else:
            keys = keys * radix[i] + node_tab[i][:, c][levels]
    return keys, space


def _prefilter(ec_comp: IntArray, weights: IntArray, need: int) -> IntArray:
    """The rows whose class may keep tuples: a class needs at least ``need`` records; hashing
    the class keys into buckets, a bucket's records bound its classes' sizes from above, so
    rows in small buckets are hopeless without sorting them."""
    bits = max(10, int(2 * len(ec_comp)).bit_length())
    bucket = ((ec_comp.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)).astype(np.int64)
    return np.flatnonzero(np.bincount(bucket, weights=weights, minlength=1 << bits)[bucket] >= need)


def _moved(cnt: IntArray, at: IntArray, cell: IntArray, moving: IntArray, prio: IntArray) -> IntArray:
    """How many of each open row's records move on at the applied item: rows outside the
    kept ones (hopeless there) move whole; a cell's ``moving`` records are taken from its
    rows (``at``, in cells ``cell``) in a seeded random priority (``prio``, per open row)."""
    moved = cnt.copy()
    rorder = np.argsort(cell * (int(prio.max()) + 1 if len(prio) else 1) + prio[at])
    c_sorted, cell_sorted = cnt[at][rorder], cell[rorder]
    before = np.cumsum(c_sorted) - c_sorted
    first = np.r_[0, np.flatnonzero(np.diff(cell_sorted)) + 1] if len(cell_sorted) else np.zeros(0, np.int64)
    start_of = np.zeros(len(moving), dtype=np.int64)
    start_of[cell_sorted[first]] = before[first]
    moved[at[rorder]] = np.clip(moving[cell_sorted] - (before - start_of[cell_sorted]), 0, c_sorted)
    return moved


def _classes_of(
    qdims: Sequence[Dimension], qcodes: Sequence[IntArray], rows: IntArray, item: IntArray, items: IntArray
) -> IntArray:
    """Each closed part's class: its item and its QI nodes at the item's levels."""
    cols = [item]
    for i, dim in enumerate(qdims):
        assert dim.nodes is not None
        lv = items[item, i]
        node = np.zeros(len(rows), dtype=np.int64)
        for k in np.unique(lv):
            at = lv == k
            node[at] = dim.nodes[int(k)][qcodes[i][rows[at]]]
        cols.append(node)
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    g = group_rows(cols, [int(c.max()) + 1 for c in cols], with_inverse=True)
    assert g.inverse is not None
    return g.inverse.astype(np.int64)


def _generalize_last(
    s_dim: Dimension,
    svals: IntArray,
    rows: IntArray,
    cnt: IntArray,
    closed: tuple[IntArray, IntArray, IntArray],
    ec: IntArray,
    phi: Floats,
    cap: int,
    say: Callable[[str], None],
) -> tuple[IntArray, IntArray, IntArray, tuple[IntArray, IntArray, IntArray] | None]:
    """Step 11 (§4.3): the class of the tuples left at the last item, its sensitive values
    generalized until it satisfies.  Returns per part its sensitive level, row and records,
    and the closed parts when some classes had to be reopened (below; ``ec``: each closed
    part's class)."""
    assert s_dim.nodes is not None
    reopened = None
    if not len(rows):
        return np.zeros(0, np.int64), rows, cnt, None
    state = _LastClass(s_dim, svals, rows, cnt, cap)
    if not state.generalize(phi):
        # Under a cap the leftovers may not be fixable although the whole table is (the
        # workflow checked that): whole closed classes rejoin this one, most general first.
        c_rows, c_item, c_cnt = closed
        first_item = np.full(int(ec.max()) + 1 if len(ec) else 0, -1, dtype=np.int64)
        np.maximum.at(first_item, ec, c_item)
        by_generality = np.argsort(-first_item, kind="stable")
        take = 1
        while True:
            take = min(2 * take, len(by_generality))
            back = np.isin(ec, by_generality[:take])
            state = _LastClass(s_dim, svals, np.r_[rows, c_rows[back]], np.r_[cnt, c_cnt[back]], cap)
            if state.generalize(phi):
                reopened = (c_rows[~back], c_item[~back], c_cnt[~back])
                say(
                    f"Sequential Sweep: {int(c_cnt[back].sum()):,} records of {take:,} closed classes rejoined the "
                    f"last one (sensitive generalization capped at level {cap})"
                )
                break
            if take == len(by_generality):
                raise InfeasibleError(
                    "Sequential Sweep could not satisfy the requirement with sensitive values generalized at most to "
                    f"level {cap}, even with every record in one class; raise --max-sensitive-level."
                )
    lv, r, c = state.parts()
    return lv, r, c, reopened


class _LastClass:
    """The last class's tuples by (distinct row, sensitive level): the greedy of §4.3."""

    def __init__(self, s_dim: Dimension, svals: IntArray, rows: IntArray, cnt: IntArray, cap: int) -> None:
        assert s_dim.nodes is not None
        self.dim, self.cap = s_dim, cap
        self.nodes = s_dim.nodes
        m = len(s_dim.values)
        self.m = m
        leaf = svals[rows]
        # x[k, v]: records whose base value is v, published at level k.
        self.x = np.zeros((len(self.nodes), m), dtype=np.int64)
        np.add.at(self.x[0], leaf, cnt)
        self.rows, self.cnt, self.leaf = rows, cnt, leaf
        self.width = [np.bincount(nd) for nd in self.nodes]  # leaves per node, per level
        self.n = int(cnt.sum())

    def induced(self) -> Floats:
        f = np.zeros(self.m)
        for k, nd in enumerate(self.nodes):
            mass = np.bincount(nd, weights=self.x[k], minlength=len(self.width[k]))
            f += (mass / self.width[k])[nd]
        return f / max(self.n, 1)

    def generalize(self, phi: Floats) -> bool:
        """Raise tuples one level at a time (in batches) until the class satisfies; False
        when no allowed move can fix it."""
        while True:
            f = self.induced()
            order = np.argsort(-f, kind="stable")
            cum = np.cumsum(f[order])
            viol = np.flatnonzero(~at_most(cum, phi[: len(cum)]))
            if not len(viol):
                return True
            k_star = int(viol[0])
            excess = float(cum[k_star] - phi[k_star])
            moved = False
            for a in order[: k_star + 1]:  # the top k*: the most frequent leaf that can be reduced
                width = [int(self.width[k][self.nodes[k][a]]) for k in range(len(self.nodes))]
                for k in range(min(self.cap, len(self.nodes) - 1)):
                    up = next((u for u in range(k + 1, self.cap + 1) if width[u] > width[k]), None)
                    if up is None:  # no allowed level spreads it wider
                        continue
                    under = self.nodes[k] == self.nodes[k][a]
                    avail = self.x[k] * under
                    total = int(avail.sum())
                    if not total:
                        continue
                    gain = (1 / width[k] - 1 / width[up]) / self.n
                    batch = max(1, min(total, math.ceil(excess / gain - TOL)))
                    self._raise(k, up, avail, batch)
                    moved = True
                    break
                if moved:
                    break
            if not moved:
                return False

    def _raise(self, k: int, up: int, avail: IntArray, batch: int) -> None:
        """Move ``batch`` records from level ``k`` to ``up`` among those ``avail`` counts
        (largest first: one published label per node, so which leaves does not matter to
        the frequencies)."""
        order = np.argsort(-avail, kind="stable")
        take = np.minimum(avail[order], np.maximum(batch - (np.cumsum(avail[order]) - avail[order]), 0))
        moved = np.zeros_like(avail)
        moved[order] = take
        self.x[k] -= moved
        self.x[up] += moved

    def parts(self) -> tuple[IntArray, IntArray, IntArray]:
        """(sensitive level, distinct row, records) per part: each base value's records at
        each level, taken from its rows in order."""
        lv_out: list[IntArray] = []
        row_out: list[IntArray] = []
        cnt_out: list[IntArray] = []
        order = np.argsort(self.leaf, kind="stable")
        leaf, rows, cnt = self.leaf[order], self.rows[order], self.cnt[order]
        before = np.cumsum(cnt) - cnt
        first = np.r_[0, np.flatnonzero(np.diff(leaf)) + 1] if len(leaf) else np.zeros(0, np.int64)
        start_of = np.zeros(self.m, dtype=np.int64)
        start_of[leaf[first]] = before[first]
        within = before - start_of[leaf]  # records of the same base value before this row
        lo = np.zeros(self.m, dtype=np.int64)
        for k in range(len(self.nodes)):
            hi = lo + self.x[k]
            take = np.clip(np.minimum(within + cnt, hi[leaf]) - np.maximum(within, lo[leaf]), 0, None)
            at = take > 0
            lv_out.append(np.full(int(at.sum()), k, dtype=np.int64))
            row_out.append(rows[at])
            cnt_out.append(take[at])
            lo = hi
        return np.concatenate(lv_out), np.concatenate(row_out), np.concatenate(cnt_out)
