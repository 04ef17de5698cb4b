"""Identity disclosure from a collection of marginals: k-link and k-combinatorial
anonymity (Kifer & Gehrke, Definitions 6 and 7 of §3), over induced attributes.

* **k-link** (Definition 6): every marginal is k-anonymous — each non-zero cell of its
  non-sensitive attributes counts at least ``k``.
* **k-combinatorial** (Definition 7): for every cell ``t`` of the non-sensitive domain,
  either every table consistent with the marginals has ``T(t) = 0`` or some consistent
  table has ``T(t) >= k``; it fails exactly at cells whose sharp upper bound
  ``U(t) = max T(t)`` over consistent tables lies in ``[1, k-1]``.  *Consistent* means
  consistent with the whole marginals, the sensitive attribute included: marginals
  ``{a, s}`` and ``{b, s}`` bound ``T(a, b)`` by ``Σ_s min(T(a, s), T(b, s))``, which can be
  far below ``min(T(a), T(b))``.

  - When at most one marginal holds the sensitive attribute ``S``, summing ``S`` out is
    exact (any table consistent with the projections extends to ``S`` inside that one
    marginal: a transportation problem with equal margins), so the bounds are those of the
    non-sensitive projections.
  - A decomposable collection of projections (or, with ``S`` in several marginals, a
    decomposable collection including ``S``): Dobra's bound is sharp.  The marginals holding
    ``S`` form a connected subtree of the junction tree; given ``s`` they are a decomposable
    collection whose bound at ``(t, s)`` is ``min_i T_Ei(t, s)``, reached for every ``s`` at
    once (the slices are independent), so that subtree acts as one marginal ``W`` over the
    non-sensitive attributes it holds, ``W(t) = Σ_s min_{i ∋ S} T_Ei(t_Ei, s)``, computed on
    the join of those marginals' supports.  The others attach to it by 2-way couplings, so
    ``U(t) = min(W(t), min_{i ∌ S} T_Ei(t_Ei))`` (module :mod:`versapub.marginals.graph`).  A
    cell fails iff it lies in the join of the supports and some factor is below ``k``: the
    supports are fully reduced by semi-joins along the junction tree (Yannakakis) and any
    row left with a count in ``[1, k-1]`` names failing cells.
  - Otherwise: exact bounds by integer programming (CP-SAT, one maximization of
    ``Σ_s T(t, s)`` per cell ``t`` of the join of the supports) when that join has at most
    ``ILP_MAX_CELLS`` cells, else a refusal naming the obstacle and the marginal that
    triangulates it.

Every marginal of a consistent collection is a projection of one table, so a failing
k-link cell always fails k-combinatorial anonymity too (``1 <= T(t) <= U(t) <= T_i(c) <
k`` at a record's cell); the converse does not hold (the example above).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from versapub.data.groupby import group_rows
from versapub.errors import ConfigError
from versapub.marginals import graph
from versapub.marginals.space import Codes, Key, Table, shown
from versapub.model.programs import consistent_program as _program
from versapub.model.programs import support_join
from versapub.model.sparse import JOIN_MAX_ROWS, JoinTooLarge, joint_ids, match_rows

#: Cells of the join of the supports beyond which a non-decomposable collection is refused.
ILP_MAX_CELLS = 20_000
#: Seconds CP-SAT may spend per cell.
ILP_SECONDS = 10.0

Show = Callable[[Key, int], str]


@dataclass(frozen=True)
class Failure:
    """A cell that fails: in ``table`` (a marginal's cell) or of the domain (``table`` None)."""

    table: str | None
    cell: tuple[tuple[str, str], ...]
    count: float
    why: str

    def describe(self) -> str:
        where = f"marginal {self.table}" if self.table else "the domain"
        cell = ", ".join(f"{a}={v}" for a, v in self.cell) or "(all records)"
        return f"{where}, cell ({cell}): {self.why}"

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "cell": dict(self.cell), "count": self.count, "why": self.why}


@dataclass(frozen=True)
class Outcome:
    """One check's result: ``ok``, how it was decided, and failing cells (first few)."""

    check: str
    ok: bool
    method: str
    failures: tuple[Failure, ...] = ()
    n_failures: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        if self.ok:
            return f"{self.check} holds ({self.method})"
        shown_ = "; ".join(f.describe() for f in self.failures[:3])
        more = f" (and {self.n_failures - 3} more)" if self.n_failures > 3 else ""
        return f"{self.check} fails at {self.n_failures} cell(s) ({self.method}): {shown_}{more}"

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "ok": self.ok,
            "method": self.method,
            "message": self.message,
            "n_failures": self.n_failures,
            "failures": [f.to_json() for f in self.failures[:20]],
            **self.details,
        }


def _cell(t: Table, i: int, show: Show) -> tuple[tuple[str, str], ...]:
    """The row's values at the finest level of each attribute (what a reader sees)."""
    out: dict[str, tuple[int, str]] = {}
    for k, col in zip(t.keys, t.columns, strict=True):
        if k[0] not in out or k[1] < out[k[0]][0]:
            out[k[0]] = (k[1], show(k, int(col[i])))
    return tuple((shown((a, lv)), v) for a, (lv, v) in out.items())


def k_link(tables: Sequence[Table], k: int, show: Show) -> Outcome:
    """k-link anonymity (the paper's definition): every non-zero cell of every marginal counts at least ``k``."""
    fails: list[Failure] = []
    total = 0
    for t in tables:
        bad = np.flatnonzero((t.counts > 0) & (t.counts < k))
        total += len(bad)
        order = bad[np.argsort(t.counts[bad], kind="stable")]
        fails += [
            Failure(t.name, _cell(t, int(i), show), float(t.counts[i]), f"{int(t.counts[i])} record(s) < k = {k}")
            for i in order[:5]
        ]
    fails.sort(key=lambda f: f.count)
    return Outcome(
        "k-link anonymity", not total, f"every marginal's smallest non-zero cell against k = {k}", tuple(fails), total
    )


def _ids(t: Table, keys: Sequence[Key], cards: dict[Key, int], other: Sequence[Codes]) -> tuple[Codes, Codes]:
    return joint_ids([t.column(k) for k in keys], list(other), [cards[k] for k in keys])


def reduce_supports(tables: Sequence[Table], cards: dict[Key, int]) -> list[np.ndarray]:
    """Yannakakis' full reducer over a decomposable collection: per table, which non-zero
    rows extend to a tuple of the join of all supports (semi-joins up, then down, the
    junction tree)."""
    alive = [t.counts > 0 for t in tables]
    found = graph.tree([frozenset(t.keys) for t in tables])
    assert found is not None
    jt = found
    keep = jt.keep
    # Tables contained in a kept one are reduced against it (both ways) first.
    parent_of = {}
    for i, t in enumerate(tables):
        if i not in keep:
            parent_of[i] = next(j for j in keep if set(t.keys) <= set(tables[j].keys))

    def semi(a: int, b: int) -> None:  # keep rows of a whose shared values occur in b's live rows
        shared = [k for k in tables[a].keys if k in tables[b].keys]
        if not shared:
            if not alive[b].any():
                alive[a][:] = False
            return
        ta, tb = tables[a], tables[b]
        la, lb = joint_ids(
            [ta.column(k) for k in shared], [tb.column(k)[alive[b]] for k in shared], [cards[k] for k in shared]
        )
        present = np.zeros(int(max(la.max(initial=-1), lb.max(initial=-1))) + 1, dtype=bool)
        present[lb] = True
        alive[a] &= present[la]

    for i, j in parent_of.items():
        semi(j, i)
    idx = [keep[c] for c in range(len(keep))]
    for c in reversed(jt.order):  # bottom-up
        if c in jt.parent:
            semi(idx[jt.parent[c]], idx[c])
    for c in jt.order:  # top-down
        if c in jt.parent:
            semi(idx[c], idx[jt.parent[c]])
    for i, j in parent_of.items():
        semi(i, j)
    return alive


def _reduced_failures(
    tables: Sequence[Table], cards: dict[Key, int], k: int, show: Show, why: Callable[[Table, int], str]
) -> tuple[list[Failure], int]:
    """Rows of a decomposable collection that survive Yannakakis' full reducer with a
    count in ``[1, k-1]`` (the failing cells lie inside them), the first few described."""
    alive = reduce_supports(tables, cards)
    fails: list[Failure] = []
    total = 0
    for t, ok in zip(tables, alive, strict=True):
        bad = np.flatnonzero(ok & (t.counts > 0) & (t.counts < k))
        total += len(bad)
        fails += [
            Failure(t.name, _cell(t, int(i), show), float(t.counts[i]), why(t, int(i)))
            for i in bad[np.argsort(t.counts[bad], kind="stable")][:5]
        ]
    fails.sort(key=lambda f: f.count)
    return fails, total


def sensitive_part(
    tables: Sequence[Table], cards: dict[Key, int], sensitive: Key, max_rows: int = JOIN_MAX_ROWS
) -> Table:
    """The marginals holding ``sensitive`` as one marginal ``W`` over their non-sensitive
    attributes: ``W(t) = Σ_s min_i T_i(t_i, s)`` over the join of their supports (the
    module docstring; decomposable collections only)."""
    cells = support_join(tables, cards, max_rows)
    least = np.full(len(cells[sensitive]), np.inf)
    for t in tables:
        at = match_rows([t.column(kk) for kk in t.keys], [cells[kk] for kk in t.keys], [cards[kk] for kk in t.keys])
        least = np.minimum(least, t.counts[at])
    keys = sorted({kk for t in tables for kk in t.keys if kk != sensitive}, key=str)
    name = "+".join(t.name for t in tables)
    if not keys:
        return Table(name, (), (), np.array([least.sum()], dtype=np.float64))
    g = group_rows([cells[kk] for kk in keys], [cards[kk] for kk in keys], with_inverse=True)
    assert g.inverse is not None
    w = np.bincount(g.inverse, weights=least, minlength=len(g.counts)).astype(np.float64)
    return Table(name, tuple(keys), tuple(c.astype(np.int64) for c in g.keys), w)


def k_combinatorial(
    tables: Sequence[Table],
    cards: dict[Key, int],
    k: int,
    show: Show,
    sensitive: Key | None = None,
    witness: Table | None = None,
    max_cells: int = ILP_MAX_CELLS,
) -> Outcome:
    """k-combinatorial anonymity (Definition 7; module docstring) of the marginals
    ``tables`` (the sensitive attribute ``sensitive`` included where they hold it).
    ``witness``: a table consistent with the marginals (the data itself) over their
    non-sensitive keys, whose cells with ``>= k`` records need no bound."""
    holders = [t for t in tables if sensitive is not None and sensitive in t.keys]
    ns = [t.project([kk for kk in t.keys if kk != sensitive], cards) for t in tables]
    name = "k-combinatorial anonymity"
    if len(holders) <= 1:  # S summed out exactly
        if graph.tree([frozenset(t.keys) for t in ns]) is None:
            return _by_ilp(ns, cards, k, show, witness, max_cells, None)
        fails, total = _reduced_failures(
            ns,
            cards,
            k,
            show,
            lambda t, i: (
                f"every cell of the domain inside it has Dobra's upper bound "
                f"min_i T_i <= {int(t.counts[i])} < k = {k}, and some consistent table puts records there"
            ),
        )
        return Outcome(name, not total, "decomposable: Dobra's sharp bounds", tuple(fails), total)
    assert sensitive is not None
    if graph.tree([frozenset(t.keys) for t in tables]) is None:
        return _by_ilp(list(tables), cards, k, show, witness, max_cells, sensitive)
    try:
        w = sensitive_part(holders, cards, sensitive)
    except JoinTooLarge as exc:
        raise ConfigError(
            f"k-combinatorial anonymity with {shown(sensitive)} in {len(holders)} marginals needs the join of their "
            f"supports, which here has {exc.rows:,} rows (versapub stops at {JOIN_MAX_ROWS:,}); publish "
            f"{shown(sensitive)} in fewer marginals."
        ) from None
    rest = [p for t, p in zip(tables, ns, strict=True) if sensitive not in t.keys]
    s_name = shown(sensitive)

    def why(t: Table, i: int) -> str:
        if t is w:
            return (
                f"every cell of the domain inside it has the upper bound Σ_{s_name} min_i T_i(., {s_name}) = "
                f"{int(t.counts[i])} < k = {k} over the marginals holding {s_name}, and some consistent table "
                "puts records there"
            )
        return (
            f"every cell of the domain inside it has Dobra's upper bound <= {int(t.counts[i])} < k = {k}, and "
            "some consistent table puts records there"
        )

    fails, total = _reduced_failures([w, *rest], cards, k, show, why)
    method = f"decomposable with {s_name}: Dobra's sharp bounds, {s_name} summed over {len(holders)} marginals"
    return Outcome(name, not total, method, tuple(fails), total)


def _domain_cells(
    cells: dict[Key, Any], cards: dict[Key, int], ns_keys: list[Key], bound: Any
) -> tuple[Any, list[Any], Any]:
    """The cells of the non-sensitive domain: a representative joined row of each, its joined
    rows (with their sensitive values), and its capacity (the sum of their bounds)."""
    n_cells = len(bound)
    if ns_keys:
        g = group_rows([cells[kk] for kk in ns_keys], [cards[kk] for kk in ns_keys], with_inverse=True)
        assert g.inverse is not None
        cell_of, n_t = g.inverse, len(g.counts)
    else:
        cell_of, n_t = np.zeros(n_cells, dtype=np.int64), 1
    first = np.full(n_t, -1, dtype=np.int64)
    first[cell_of[::-1]] = np.arange(n_cells - 1, -1, -1)
    members_of = np.split(np.argsort(cell_of, kind="stable"), np.cumsum(np.bincount(cell_of, minlength=n_t))[:-1])
    cap = np.bincount(cell_of, weights=bound.astype(np.float64), minlength=n_t).astype(np.int64)
    return first, members_of, cap


def _by_ilp(
    tables: Sequence[Table],
    cards: dict[Key, int],
    k: int,
    show: Show,
    witness: Table | None,
    max_cells: int,
    sensitive: Key | None,
) -> Outcome:
    """Exact upper bounds of ``Σ_s T(t, s)`` (``T(t)`` without ``sensitive``) by integer
    programming over the join of the supports."""
    from ortools.sat.python import cp_model

    why = graph.why_not([frozenset(t.keys) for t in tables], shown)
    try:
        cells = support_join(tables, cards, max_cells)
    except JoinTooLarge as exc:
        raise ConfigError(
            f"The collection is not decomposable: {why}. k-combinatorial anonymity of a non-decomposable collection "
            f"is decided by integer programming over the join of the marginals' supports, which here has "
            f"{exc.rows:,} cells (versapub stops at {max_cells:,}); add that marginal or publish fewer."
        ) from None
    keys = list(cells)
    n_cells = len(cells[keys[0]]) if keys else 1
    model, x, bound = _program(tables, cells, cards, n_cells)
    # The cells t of the non-sensitive domain: the join's rows without S (each with its S values).
    ns_keys = [kk for kk in keys if kk != sensitive]
    first, members_of, cap = _domain_cells(cells, cards, ns_keys, bound)
    n_t = len(first)
    known = np.zeros(n_t, dtype=np.int64)
    if witness is not None:
        wk = [kk for kk in witness.keys if kk in ns_keys]
        at = match_rows([witness.column(kk) for kk in wk], [cells[kk][first] for kk in wk], [cards[kk] for kk in wk])
        known = np.where(at >= 0, np.rint(witness.counts[np.maximum(at, 0)]), 0).astype(np.int64)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = ILP_SECONDS
    solver.parameters.num_workers = 1
    fails: list[Failure] = []
    total = 0
    undecided = 0
    solved = 0

    def cell(c: int) -> tuple[tuple[str, str], ...]:
        return tuple((shown(kk), show(kk, int(cells[kk][first[c]]))) for kk in ns_keys)

    for c in map(int, np.flatnonzero((known < k) & (cap >= 1))):
        if cap[c] < k and known[c] >= 1:
            upper = int(cap[c])  # a record's cell with a small bound: U in [known, cap]
        else:
            model.maximize(sum(x[int(i)] for i in members_of[c]))
            status = solver.solve(model)
            solved += 1
            if status == cp_model.INFEASIBLE:
                raise ConfigError("The marginals disagree: no table has them all as its marginals.")
            found = round(solver.objective_value) if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else 0
            upper = found if status == cp_model.OPTIMAL else int(solver.best_objective_bound)
            if found >= k:
                continue
            if status != cp_model.OPTIMAL and not (found >= 1 and upper < k):
                undecided += 1  # neither proved safe nor proved failing within the time: fails (safe side)
                total += 1
                if len(fails) < 5:
                    fails.append(
                        Failure(
                            None,
                            cell(c),
                            float(upper),
                            f"undecided within {ILP_SECONDS:g} s (a table "
                            f"with {found} record(s) here found, bound {upper})",
                        )
                    )
                continue
        if 1 <= upper < k:
            total += 1
            if len(fails) < 5:
                fails.append(
                    Failure(
                        None,
                        cell(c),
                        float(upper),
                        f"every consistent table holds at most {upper} < k = "
                        f"{k} records here, and some holds at least one",
                    )
                )
    method = f"not decomposable ({why}); exact bounds by integer programming over {n_cells:,} cells, {solved} solved"
    return Outcome(
        "k-combinatorial anonymity",
        not total,
        method,
        tuple(fails),
        total,
        {"cells": n_cells, "solved": solved, "undecided": undecided},
    )


__all__ = [
    "JOIN_MAX_ROWS",
    "Failure",
    "Outcome",
    "k_combinatorial",
    "k_link",
    "reduce_supports",
    "sensitive_part",
    "support_join",
]
