"""Maxent l-diversity of a collection of marginals (Kifer & Gehrke: defined in §3, checked
as in §6).

The maximum-entropy distribution consistent with the marginals must satisfy the
l-diversity form for every combination of non-sensitive values.  Only marginals holding
the sensitive attribute ``S`` matter (§6's proposition on them, for a decomposable
collection); each must be l-diverse by itself (§6's proposition on intermediate results);
then **Algorithm 1** runs on a junction tree of those marginals:
bottom-up, each node joins its children's intermediate results with expected counts
``I_v(t_v) · I_x(t_x) / T_{v∩x}(t_{v∩x})``, and after every join ``prune`` drops the
*anonymized groups* (rows with equal non-sensitive values, as vectors over ``S``) that
cannot hold a violation found later.  At the root the surviving groups are checked; by
their Theorem 1 (correctness of pruning) a violating cell, if any exists, survives.

**Pruning.**  Every later step multiplies a group's vector component-wise by a positive
vector that depends only on the block's values (the relevant attributes), and the
supported forms — frequency, entropy and recursive (c, l) — have satisfying vectors that
form a convex cone (:data:`versapub.marginals.spec.MAXENT_FORMS`).  So a group whose
direction lies in the convex hull of the other groups' directions in its block is
satisfied whenever they are, at every later step: such groups are pruned (the paper's
"not on the convex hull").  Extreme points are found per block: the arg-max and arg-min
of every coordinate are kept at once; in a block with more groups than sensitive values
the hull's vertices come from qhull (scipy's ``ConvexHull``) for a few sensitive values,
else the others are tested by a linear program (scipy's HiGHS; :data:`HULL_LP_BUDGET` tests per
check, and none after :data:`LP_TRIAL` tests that pruned less than :data:`LP_MIN_YIELD` of
the groups tested — pruning is an optimization, keeping is always safe;
a block with at most as many groups as values is kept whole, its groups in general
position all being extreme).  For recursive (c, l) with ``l = |C|`` the
paper's **ratio pruning** keeps, per block and ordered pair of sensitive values, the group
maximizing their ratio.

A collection whose ``S``-marginals are not decomposable is checked on the dense
maximum-entropy joint fitted by iterative proportional fitting over their finest induced
attributes.  :func:`relaxed_diversity` is the paper's relaxed check for large joins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from versapub.data.groupby import group_rows
from versapub.errors import ConfigError
from versapub.marginals import graph
from versapub.marginals.identity import Failure, Outcome
from versapub.marginals.space import Codes, Floats, Key, Table, shown
from versapub.model.sparse import JoinTooLarge, join_on, joint_ids, match_rows
from versapub.privacy.guarantees.base import Guarantee, Histograms

#: Linear programs (hull membership tests) per check.
HULL_LP_BUDGET = 5_000
#: Blocks with more groups than this keep their non-extreme groups (no LP).
HULL_LP_MAX_POINTS = 400
#: Up to this many sensitive values a block's hull comes from qhull (beyond: LPs).
QHULL_MAX_VALUES = 6
#: After this many linear programs, stop testing if fewer than this share pruned a group
#: (in many dimensions nearly every group is extreme; keeping is always safe).
LP_TRIAL = 200
LP_MIN_YIELD = 0.05
#: Rows an intermediate join of Algorithm 1 may reach.
JOIN_LIMIT = 30_000_000
#: Cells of the dense joint the non-decomposable (IPF) path may use.
IPF_MAX_CELLS = 1 << 23
IPF_TOL = 1e-10
IPF_MAX_ITER = 2_000
#: Histograms are scaled to this total before the guarantee's own test.
SCALE = 1e6

Show = Callable[[Key, int], str]


@dataclass(frozen=True)
class Groups:
    """Anonymized groups: non-sensitive values (``keys``) and a vector over ``S`` each."""

    keys: dict[Key, Codes]
    vec: Floats

    def __len__(self) -> int:
        return len(self.vec)

    def take(self, rows: np.ndarray) -> Groups:
        return Groups({k: c[rows] for k, c in self.keys.items()}, self.vec[rows])


@dataclass
class Context:
    """What the checks need besides the tables: the sensitive key and its number of
    values, every key's cardinality, how to show a value, and (for the IPF path) each
    key's coarser node of a finer one and its leaves per node."""

    s: Key
    m: int
    cards: Mapping[Key, int]
    show: Show
    parent: Callable[[Key, Key], Codes] | None = None
    width: Callable[[Key], Codes] | None = None


def groups_of(t: Table, ctx: Context) -> Groups:
    """The table as anonymized groups (rows pivoted on the sensitive column)."""
    rest = [i for i, k in enumerate(t.keys) if k != ctx.s]
    s = t.column(ctx.s)
    if rest:
        g = group_rows([t.columns[i] for i in rest], [ctx.cards[t.keys[i]] for i in rest], with_inverse=True)
        assert g.inverse is not None
        gid, keys = g.inverse, {t.keys[i]: k.astype(np.int64) for i, k in zip(rest, g.keys, strict=True)}
        n_g = len(g.counts)
    else:
        gid, keys, n_g = np.zeros(len(s), dtype=np.int64), {}, 1
    vec = np.zeros((n_g, ctx.m), dtype=np.float64)
    np.add.at(vec, (gid, s), t.counts)
    return Groups(keys, vec)


def satisfied(g: Guarantee, vec: Floats) -> np.ndarray:
    """The guarantee's own test on each row of ``vec`` (counts over ``S``); a row of zeros
    (a cell of probability 0) is satisfied.  Rows of whole counts are tested exactly;
    fractional rows (expected counts) are first scaled to :data:`SCALE`, so that the
    guarantee's rounding of group sizes is harmless."""
    out = np.ones(len(vec), dtype=bool)
    tot = vec.sum(axis=1)
    whole = np.all(np.abs(vec - np.rint(vec)) < 1e-9, axis=1)
    for rows, v in ((np.flatnonzero((tot > 0) & whole), None), (np.flatnonzero((tot > 0) & ~whole), SCALE)):
        if not len(rows):
            continue
        x = np.rint(vec[rows]) if v is None else vec[rows] / tot[rows, None] * v
        grp, val = np.nonzero(x > 0)
        h = Histograms(grp, x[grp, val], len(rows), val)
        out[rows] = np.asarray(g.groups_satisfied(h), dtype=bool)
    return out


def _failures(gr: Groups, ok: np.ndarray, table: str | None, ctx: Context, what: str) -> list[Failure]:
    bad = np.flatnonzero(~ok)
    tot = gr.vec.sum(axis=1)
    share = np.divide(gr.vec.max(axis=1), tot, out=np.zeros_like(tot), where=tot > 0)
    bad = bad[np.argsort(-share[bad], kind="stable")]
    out = []
    for i in bad[:5]:
        cell: dict[str, tuple[int, str]] = {}
        for k, c in gr.keys.items():
            if k[0] not in cell or k[1] < cell[k[0]][0]:
                cell[k[0]] = (k[1], ctx.show(k, int(c[i])))
        top = int(np.argmax(gr.vec[i]))
        present = int((gr.vec[i] > 0).sum())
        out.append(
            Failure(
                table,
                tuple((shown((a, lv)), v) for a, (lv, v) in cell.items()),
                float(share[i]),
                f"{what}: P({shown(ctx.s)} = {ctx.show(ctx.s, top)}) = {share[i]:.3f} with {present} possible value(s)",
            )
        )
    return out


def _block(gr: Groups, by: Sequence[Key], ctx: Context) -> Codes:
    if not by:
        return np.zeros(len(gr), dtype=np.int64)
    g = group_rows([gr.keys[k] for k in by], [ctx.cards[k] for k in by], with_inverse=True)
    assert g.inverse is not None
    return g.inverse


def _per_block_extremes(block: Codes, score: Floats) -> np.ndarray:
    """Rows holding the per-block maximum of any column of ``score`` (ties kept)."""
    order = np.argsort(block, kind="stable")
    b = block[order]
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    s = score[order]
    mx = np.maximum.reduceat(s, starts, axis=0)
    seg = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(b)]))
    hit = (s >= mx[seg]).any(axis=1)
    keep = np.zeros(len(block), dtype=bool)
    keep[order[hit]] = True
    return keep


class Pruner:
    """``prune`` of Algorithm 1 (module docstring); counts its linear programs."""

    def __init__(self, guarantee: Guarantee, m: int, lp_budget: int = HULL_LP_BUDGET, enabled: bool = True) -> None:
        ratio = guarantee.name == "recursive-cl-diversity" and guarantee.params().get("l") == m
        self.mode = ("ratio" if ratio else "hull") if enabled else "none"
        self.lp_left = lp_budget
        self.lp_tests = 0
        self.lp_pruned = 0
        self.pruned = 0

    def __call__(self, gr: Groups, by: Sequence[Key], ctx: Context) -> Groups:
        if len(gr) <= 1 or self.mode == "none":
            return gr
        tot = gr.vec.sum(axis=1)
        live = np.flatnonzero(tot > 0)  # a cell of probability 0 can never violate
        gr = gr.take(live)
        block = _block(gr, by, ctx)
        p = gr.vec / gr.vec.sum(axis=1, keepdims=True)
        first = _distinct_directions(block, p)
        gr, block, p = gr.take(first), block[first], p[first]
        if self.mode == "ratio":
            with np.errstate(divide="ignore", invalid="ignore"):
                lp = np.log(p)
                pairs = [(i, j) for i in range(ctx.m) for j in range(ctx.m) if i != j]
                score = np.stack([lp[:, i] - lp[:, j] for i, j in pairs], axis=1) if pairs else lp
            score = np.nan_to_num(score, nan=-np.inf)
            keep = _per_block_extremes(block, score)
        else:
            keep = _per_block_extremes(block, np.concatenate([p, -p], axis=1))
            if ctx.m > 2:
                keep |= self._lp(block, p, keep)
            # With two sensitive values the coordinate extremes are the whole hull.
        self.pruned += int(len(keep) - keep.sum()) + int(len(tot) - len(live))
        return gr.take(np.flatnonzero(keep))

    def _lp(self, block: Codes, p: Floats, keep: np.ndarray) -> np.ndarray:
        """Groups not yet known extreme that are vertices of their block's convex hull (or
        not tested: budget spent, block too large).  Up to :data:`QHULL_MAX_VALUES`
        sensitive values the hull's vertices come from qhull (scipy's ``ConvexHull`` in the
        simplex's affine coordinates); beyond, or for a flat block qhull refuses, each group
        is tested by a linear program: is it a convex combination of the others?"""
        out = np.zeros(len(block), dtype=bool)
        order = np.argsort(block, kind="stable")
        b = block[order]
        starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        ends = np.r_[starts[1:], len(b)]
        m = p.shape[1]
        for lo, hi in zip(starts, ends, strict=True):
            rows = order[lo:hi]
            todo = rows[~keep[rows]]
            if not len(todo):
                continue
            if hi - lo <= m or hi - lo > HULL_LP_MAX_POINTS:
                out[todo] = True  # no more points than values: in general position all are extreme
                continue
            vertices = _qhull_vertices(p[rows]) if m <= QHULL_MAX_VALUES else None
            if vertices is not None:
                out[rows[vertices]] = True
                continue
            unprofitable = self.lp_tests >= LP_TRIAL and self.lp_pruned < LP_MIN_YIELD * self.lp_tests
            if self.lp_left < len(todo) or unprofitable:
                out[todo] = True
                continue
            from scipy.optimize import linprog

            for r in todo:
                others = rows[rows != r]
                self.lp_left -= 1
                self.lp_tests += 1
                res = linprog(np.zeros(len(others)), A_eq=p[others].T, b_eq=p[r], bounds=(0, None), method="highs")
                out[r] = res.status != 0  # infeasible: an extreme point (kept)
                self.lp_pruned += int(not out[r])
        return out


def _distinct_directions(block: Codes, p: Floats) -> Codes:
    """One row per (block, direction): rows sorted by block and a random projection of
    their direction, a row dropped only when it equals the one before it exactly (to 12
    decimals) — never two rows that merely share a projection."""
    q = np.round(p, 12)
    h = q @ np.random.default_rng(0).random(q.shape[1])  # a fixed projection: deterministic order
    order = np.lexsort((h, block))
    qs = q[order]
    same = np.r_[False, (block[order][1:] == block[order][:-1]) & (qs[1:] == qs[:-1]).all(axis=1)]
    return np.sort(order[~same])


def _qhull_vertices(points: Floats) -> np.ndarray | None:
    """Indices of the hull's vertices and of the points within roundoff of its facets
    (points on the simplex: drop the last coordinate), or ``None`` when qhull cannot
    build it (a flat block)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(points[:, :-1], qhull_options="Qc")  # Qc: points within roundoff of a facet are kept too
    except (QhullError, ValueError):
        return None
    return np.union1d(hull.vertices, hull.coplanar[:, 0] if len(hull.coplanar) else []).astype(np.int64)


def _den_rows(den: Groups, gr: Groups, ctx: Context) -> Floats:
    """The separator's vector (``den``) at each group of ``gr`` (zeros where it has none)."""
    shared = list(den.keys)
    if not shared:
        return np.broadcast_to(den.vec[0], gr.vec.shape) if len(den) else np.zeros_like(gr.vec)
    at = match_rows([den.keys[k] for k in shared], [gr.keys[k] for k in shared], [ctx.cards[k] for k in shared])
    out = den.vec[np.maximum(at, 0)]
    out[at < 0] = 0.0
    return out


def _join(v: Groups, x: Groups, den: Groups, ctx: Context) -> Groups:
    """``I_v ⋈ I_x`` with expected counts ``I_v · I_x / T_sep`` (vectors over ``S``;
    ``den``: the child's own marginal over the separator)."""
    shared = list(den.keys)
    if shared:
        lid, rid = joint_ids([v.keys[k] for k in shared], [x.keys[k] for k in shared], [ctx.cards[k] for k in shared])
    else:
        lid, rid = np.zeros(len(v), dtype=np.int64), np.zeros(len(x), dtype=np.int64)
    li, ri = join_on(lid, rid, JOIN_LIMIT)
    d = _den_rows(den, x, ctx)[ri]
    vec = np.divide(v.vec[li] * x.vec[ri], d, out=np.zeros((len(li), ctx.m)), where=d > 0)
    keys = {k: c[li] for k, c in v.keys.items()}
    keys.update({k: c[ri] for k, c in x.keys.items() if k not in keys})
    return Groups(keys, vec)


def _ns(keys: Sequence[Key], ctx: Context) -> list[Key]:
    return [k for k in keys if k != ctx.s]


def maxent_diversity(
    tables: Sequence[Table],
    guarantee: Guarantee,
    ctx: Context,
    cache: dict[object, Groups] | None = None,
    prune: bool = True,
) -> Outcome:
    """Maxent diversity (the paper's definition) on the marginals holding ``S`` (module
    docstring).  ``cache`` keeps each subtree's pruned result across calls (an incremental
    search recomputes only the branch a new marginal touches); ``prune`` False: the plain
    joins (a benchmark's reference)."""
    check = f"maxent {guarantee.name}"
    held = [t for t in tables if ctx.s in t.keys]
    if not held:
        raise ConfigError(
            f"No marginal holds the sensitive attribute {ctx.s[0]!r}; a collection publishes it in at "
            "least one marginal."
        )
    fails: list[Failure] = []
    n_bad = 0
    for t in held:  # §6: a marginal not diverse by itself fails
        gr = groups_of(t, ctx)
        ok = satisfied(guarantee, gr.vec)
        if not ok.all():
            n_bad += int((~ok).sum())
            fails += _failures(gr, ok, t.name, ctx, "by itself")
    if n_bad:
        why = "a marginal is not diverse by itself (§6: then neither is the estimate)"
        return Outcome(check, False, why, tuple(fails[:10]), n_bad)
    every = [frozenset(t.keys) for t in tables]
    if graph.tree(every) is None:  # dropping marginals without S needs the whole collection decomposable (§6)
        return _dense_check(tables, guarantee, ctx, check, graph.why_not(every, shown))
    found = graph.tree([frozenset(t.keys) for t in held])
    assert found is not None  # §6: the marginals holding S are then decomposable too
    jt = found
    keep = jt.keep
    nodes = [held[i] for i in keep]
    pruner = Pruner(guarantee, ctx.m, enabled=prune)
    cache = cache if cache is not None else {}
    children: dict[int, list[int]] = {}
    for c, p in jt.parent.items():
        children.setdefault(p, []).append(c)
    done: dict[int, Groups] = {}
    largest = 0
    try:
        for c in reversed(jt.order):  # children before parents
            below = frozenset().union(*(_subtree(c, children, nodes)))
            rel = _ns(jt.sep[c], ctx) if c in jt.parent else None
            memo = (below, pruner.mode, None if rel is None else frozenset(rel))
            hit = cache.get(memo)
            if hit is not None:
                done[c] = hit
                continue
            iv = groups_of(nodes[c], ctx)
            for d in children.get(c, []):
                den = groups_of(nodes[d].project(jt.sep[d], ctx.cards), ctx)
                iv = _join(iv, done[d], den, ctx)
                largest = max(largest, len(iv))
                iv = pruner(iv, _ns(nodes[c].keys, ctx), ctx)
            if rel is not None:
                iv = pruner(iv, rel, ctx)
            done[c] = iv
            cache[memo] = iv
    except JoinTooLarge as exc:
        raise ConfigError(
            f"Checking maxent {guarantee.name} needs a join of {exc.rows:,} rows (versapub stops at {JOIN_LIMIT:,}); "
            "publish fewer marginals holding the sensitive attribute, or use the relaxed check (--relaxed)."
        ) from None
    root = done[jt.order[0]]
    ok = satisfied(guarantee, root.vec)
    method = (
        f"Algorithm 1 on a junction tree of {len(nodes)} marginal(s), {pruner.mode} pruning, largest join "
        f"{largest:,} groups, {len(root):,} group(s) checked at the root"
    )
    details = {"largest_join": largest, "root_groups": len(root), "pruned": pruner.pruned, "pruning": pruner.mode}
    if ok.all():
        return Outcome(check, True, method, details=details)
    return Outcome(
        check,
        False,
        method,
        tuple(_failures(root, ok, None, ctx, "maximum-entropy estimate")),
        int((~ok).sum()),
        details,
    )


def _subtree(c: int, children: Mapping[int, list[int]], nodes: Sequence[Table]) -> list[frozenset[frozenset[Key]]]:
    out = [frozenset([frozenset(nodes[c].keys)])]
    for d in children.get(c, []):
        out += _subtree(d, children, nodes)
    return out


def _dense_check(held: Sequence[Table], guarantee: Guarantee, ctx: Context, check: str, why: str) -> Outcome:
    """The maximum-entropy joint of a non-decomposable collection (every marginal, with or
    without ``S``) by IPF over the finest induced attributes, then every cell."""
    if ctx.parent is None or ctx.width is None:
        raise ConfigError(f"The collection is not decomposable ({why}).")
    finest: dict[str, int] = {}
    for t in held:
        for a, lv in t.keys:
            finest[a] = min(lv, finest.get(a, lv))
    keys = [(a, lv) for a, lv in finest.items() if (a, lv) != ctx.s]
    shape = [ctx.cards[k] for k in keys] + [ctx.m]
    size = int(np.prod(shape, dtype=np.float64))
    if size > IPF_MAX_CELLS:
        raise ConfigError(
            f"The collection is not decomposable ({why}); checking it needs the "
            f"dense joint of {size:,} cells (versapub stops at {IPF_MAX_CELLS:,})."
        )
    grid = np.indices(shape).reshape(len(shape), -1)
    q = np.ones(size, dtype=np.float64)
    for j, k in enumerate(keys):
        q *= ctx.width(k)[grid[j]]
    targets = []
    for t in held:
        level: dict[str, int] = {}
        for a, lv in t.keys:
            level[a] = min(lv, level.get(a, lv))
        own = [(a, lv) for a, lv in level.items()]
        idx = np.zeros(size, dtype=np.int64)
        cards = []
        for kk in own:
            if kk == ctx.s:
                col = grid[-1]
            else:
                fine = (kk[0], finest[kk[0]])
                j = keys.index(fine)
                col = grid[j] if fine == kk else ctx.parent(fine, kk)[grid[j]]
            idx = idx * ctx.cards[kk] + col
            cards.append(ctx.cards[kk])
        tgt = np.zeros(int(np.prod(cards, dtype=np.float64)) if cards else 1)
        tk = np.zeros(len(t.counts), dtype=np.int64)
        for kk in own:
            tk = tk * ctx.cards[kk] + t.column(kk)
        np.add.at(tgt, tk, t.counts)
        targets.append((idx, tgt / tgt.sum()))
    q /= q.sum()
    for _ in range(IPF_MAX_ITER):
        err = 0.0
        for idx, tgt in targets:
            cur = np.bincount(idx, weights=q, minlength=len(tgt))
            q *= np.divide(tgt, cur, out=np.zeros_like(tgt), where=cur > 0)[idx]
            err = max(err, float(np.abs(cur - tgt).max()))
        if err < IPF_TOL:
            break
    vec = q.reshape(-1, ctx.m)
    cells = grid[: len(keys), :: ctx.m]
    gr = Groups({k: cells[j].astype(np.int64) for j, k in enumerate(keys)}, vec)
    ok = satisfied(guarantee, vec)
    method = f"not decomposable ({why}); the maximum-entropy joint by IPF over {size:,} cells"
    if ok.all():
        return Outcome(check, True, method)
    return Outcome(
        check, False, method, tuple(_failures(gr, ok, None, ctx, "maximum-entropy estimate")), int((~ok).sum())
    )


def relaxed_diversity(tables: Sequence[Table], l: int, epsilon: float, ctx: Context) -> Outcome:
    """The paper's relaxed check (§6): with every marginal's counts divided by its
    separator's (``T'_v = T_v / T_{v∩parent(v)}``), a sensitive value is *kept* in a group
    of ``v`` when ``T'_v >= epsilon · max_s T'_v``; groups join as bit vectors (AND) and,
    per block, duplicates and groups whose kept values include another's are pruned.
    Passing means: every combination of non-sensitive values has at least ``l`` values
    ``s`` with ``P(s | t) >= epsilon^p · max_s' P(s' | t)`` (``p``: marginals holding ``S``;
    each of the ``p`` factors of ``P(s | t)`` loses at most a factor ``epsilon``)."""
    if not 0 < epsilon <= 1:
        raise ConfigError(f"The relaxation epsilon must be in (0, 1], got {epsilon!r}.")
    if ctx.m > 63:
        raise ConfigError(f"The relaxed check handles at most 63 sensitive values, {shown(ctx.s)} has {ctx.m}.")
    held = [t for t in tables if ctx.s in t.keys]
    sets = [frozenset(t.keys) for t in held]
    found = graph.tree(sets)
    check = f"relaxed maxent l-diversity (l = {l}, epsilon = {epsilon:g})"
    if found is None:
        raise ConfigError(f"The relaxed check needs decomposable marginals; {graph.why_not(sets, shown)}.")
    jt = found
    keep = jt.keep
    nodes = [held[i] for i in keep]
    children: dict[int, list[int]] = {}
    for c, p in jt.parent.items():
        children.setdefault(p, []).append(c)
    powers = (np.uint64(1) << np.arange(ctx.m, dtype=np.uint64)).astype(np.uint64)

    def bits(c: int) -> Groups:
        gr = groups_of(nodes[c], ctx)
        vec = gr.vec
        if c in jt.parent:
            d = _den_rows(groups_of(nodes[c].project(jt.sep[c], ctx.cards), ctx), gr, ctx)
            vec = np.divide(vec, d, out=np.zeros_like(vec), where=d > 0)
        on = (vec > 0) & (vec >= epsilon * vec.max(axis=1, keepdims=True))
        word = (on.astype(np.uint64) * powers).sum(axis=1, dtype=np.uint64)
        return Groups(gr.keys, word.reshape(-1, 1).astype(np.float64))  # exact below 2^53

    def prune(gr: Groups, by: Sequence[Key]) -> Groups:
        block = _block(gr, by, ctx)
        word = gr.vec[:, 0].astype(np.uint64)
        _, first = np.unique(np.column_stack([block, word.astype(np.int64)]), axis=0, return_index=True)
        gr, block, word = gr.take(np.sort(first)), block[np.sort(first)], word[np.sort(first)]
        li, ri = join_on(block, block, JOIN_LIMIT)
        sub = (li != ri) & ((word[li] & word[ri]) == word[ri]) & (word[li] != word[ri])
        drop = np.zeros(len(gr), dtype=bool)
        drop[li[sub]] = True  # li has every value of ri and more: never the worse group
        return gr.take(np.flatnonzero(~drop))

    done: dict[int, Groups] = {}
    for c in reversed(jt.order):
        iv = bits(c)
        for d in children.get(c, []):
            x = done[d]
            shared = [k for k in iv.keys if k in x.keys]
            if shared:
                lid, rid = joint_ids(
                    [iv.keys[k] for k in shared], [x.keys[k] for k in shared], [ctx.cards[k] for k in shared]
                )
            else:
                lid, rid = np.zeros(len(iv), dtype=np.int64), np.zeros(len(x), dtype=np.int64)
            li, ri = join_on(lid, rid, JOIN_LIMIT)
            word = iv.vec[li, 0].astype(np.uint64) & x.vec[ri, 0].astype(np.uint64)
            keys = {k: cc[li] for k, cc in iv.keys.items()}
            keys.update({k: cc[ri] for k, cc in x.keys.items() if k not in keys})
            iv = prune(Groups(keys, word.reshape(-1, 1).astype(np.float64)), _ns(nodes[c].keys, ctx))
        if c in jt.parent:
            iv = prune(iv, _ns(jt.sep[c], ctx))
        done[c] = iv
    root = done[jt.order[0]]
    largest = max((len(g) for g in done.values()), default=0)
    word = root.vec[:, 0].astype(np.uint64)
    count = np.array([bin(int(w)).count("1") for w in np.unique(word)], dtype=np.int64)
    ones = count[np.searchsorted(np.unique(word), word)]
    ok = ones >= l
    method = f"relaxed Algorithm 1 on {len(nodes)} marginal(s), {len(root):,} group(s) at the root"
    if ok.all():
        return Outcome(check, True, method, details={"largest_join": largest})
    fails = []
    for i in np.flatnonzero(~ok)[:5]:
        cell = tuple((shown(k), ctx.show(k, int(c[i]))) for k, c in root.keys.items())
        fails.append(
            Failure(
                None,
                cell,
                float(ones[i]),
                f"only {int(ones[i])} value(s) within epsilon of the most frequent (l = {l})",
            )
        )
    return Outcome(check, False, method, tuple(fails), int((~ok).sum()), {"largest_join": largest})
