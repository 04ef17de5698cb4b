"""Identity disclosure from a collection of marginals: k-link and k-combinatorial
anonymity (Kifer & Gehrke, the definitions of §3), on the marginals' non-sensitive parts
over induced attributes.

* **k-link**: every marginal is k-anonymous — each non-zero cell counts at least ``k``.
* **k-combinatorial**: for every cell ``t`` of the non-sensitive domain, either every
  table consistent with the marginals has ``T(t) = 0`` or some consistent table has
  ``T(t) >= k``; it fails exactly at cells whose sharp upper bound ``U(t)`` lies in
  ``[1, k-1]``.  For a decomposable collection Dobra's bound is sharp,
  ``U(t) = min_i T_Ei(t_Ei)`` (the bound of the paper's §6, extended to anonymized marginals
  by the reduction), so a cell fails iff it lies in the join of the marginals' supports and
  some marginal counts it below ``k``: the supports are fully reduced by semi-joins along
  the junction tree (Yannakakis) and any row left with a count in ``[1, k-1]`` names
  failing cells.  A collection that is not decomposable gets exact bounds by integer
  programming (CP-SAT, one maximization per cell of the join of the supports) when that
  join has at most ``ILP_MAX_CELLS`` cells, else a refusal naming the obstacle and the
  marginal that triangulates it.

Every marginal of a consistent collection is a projection of one table, so a failing
k-link cell always fails k-combinatorial anonymity too (``1 <= T(t) <= U(t) <= T_i(c) <
k`` at a record's cell); for decomposable collections the converse holds as well.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from versapub.errors import ConfigError
from versapub.marginals import graph
from versapub.marginals.space import Codes, Key, Table, shown
from versapub.model.sparse import JOIN_MAX_ROWS, JoinTooLarge, join_on, joint_ids, match_rows

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
        return {"check": self.check, "ok": self.ok, "method": self.method, "message": self.message,
                "n_failures": self.n_failures, "failures": [f.to_json() for f in self.failures[:20]],
                **self.details}  # fmt: skip


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
        fails += [Failure(t.name, _cell(t, int(i), show), float(t.counts[i]), f"{int(t.counts[i])} record(s) < k = {k}")
                  for i in order[:5]]  # fmt: skip
    fails.sort(key=lambda f: f.count)
    return Outcome("k-link anonymity", not total, f"every marginal's smallest non-zero cell against k = {k}",
                   tuple(fails), total)  # fmt: skip


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
        la, lb = joint_ids([ta.column(k) for k in shared], [tb.column(k)[alive[b]] for k in shared],
                           [cards[k] for k in shared])  # fmt: skip
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


def k_combinatorial(tables: Sequence[Table], cards: dict[Key, int], k: int, show: Show,
                    witness: Table | None = None, max_cells: int = ILP_MAX_CELLS) -> Outcome:  # fmt: skip
    """k-combinatorial anonymity (module docstring).  ``witness``: a table consistent with the
    marginals (the data itself), whose cells with ``>= k`` records need no bound."""
    sets = [frozenset(t.keys) for t in tables]
    if graph.tree(sets) is not None:
        alive = reduce_supports(tables, cards)
        fails: list[Failure] = []
        total = 0
        for t, ok in zip(tables, alive, strict=True):
            bad = np.flatnonzero(ok & (t.counts > 0) & (t.counts < k))
            total += len(bad)
            fails += [Failure(t.name, _cell(t, int(i), show), float(t.counts[i]),
                              f"every cell of the domain inside it has Dobra's upper bound min_i T_i <= "
                              f"{int(t.counts[i])} < k = {k}, and some consistent table puts records there")
                      for i in bad[np.argsort(t.counts[bad], kind="stable")][:5]]  # fmt: skip
        fails.sort(key=lambda f: f.count)
        return Outcome("k-combinatorial anonymity", not total, "decomposable: Dobra's sharp bounds", tuple(fails),
                       total)  # fmt: skip
    return _by_ilp(tables, cards, k, show, witness, max_cells)


def support_join(tables: Sequence[Table], cards: dict[Key, int], max_rows: int) -> dict[Key, Codes]:
    """The join of the marginals' supports (non-zero rows) over all their keys."""
    cols: dict[Key, Codes] = {}
    n = 1
    for t in tables:
        live = t.counts > 0
        tc = {kk: c[live] for kk, c in zip(t.keys, t.columns, strict=True)}
        shared = [kk for kk in t.keys if kk in cols]
        if shared:
            lid, rid = joint_ids([cols[kk] for kk in shared], [tc[kk] for kk in shared], [cards[kk] for kk in shared])
        else:
            lid, rid = np.zeros(n, dtype=np.int64), np.zeros(int(live.sum()), dtype=np.int64)
        li, ri = join_on(lid, rid, max_rows)
        cols = {kk: c[li] for kk, c in cols.items()}
        for kk in t.keys:
            if kk not in cols:
                cols[kk] = tc[kk][ri]
        n = len(li)
    return cols


def _by_ilp(tables: Sequence[Table], cards: dict[Key, int], k: int, show: Show, witness: Table | None,
            max_cells: int) -> Outcome:  # fmt: skip
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
    model = cp_model.CpModel()
    bound = np.full(n_cells, np.iinfo(np.int64).max, dtype=np.int64)
    rows_of = []
    for t in tables:
        at = (match_rows([t.column(kk) for kk in t.keys], [cells[kk] for kk in t.keys], [cards[kk] for kk in t.keys])
              if t.keys else np.zeros(n_cells, dtype=np.int64))  # fmt: skip
        bound = np.minimum(bound, np.rint(t.counts[at]).astype(np.int64))
        rows_of.append(at)
    x = [model.new_int_var(0, int(b), f"x{i}") for i, b in enumerate(bound)]
    for t, at in zip(tables, rows_of, strict=True):
        order = np.argsort(at, kind="stable")
        starts = np.searchsorted(at[order], np.arange(len(t.counts) + 1))
        for r in range(len(t.counts)):
            members = order[starts[r] : starts[r + 1]]
            if not len(members):
                raise ConfigError(f"The marginals disagree: a non-zero cell of {t.name} extends to no cell that the "
                                  "other marginals allow (they are not marginals of one table).")  # fmt: skip
            model.add(sum(x[int(i)] for i in members) == round(float(t.counts[r])))
    known = np.zeros(n_cells, dtype=np.int64)
    if witness is not None:
        at = match_rows([witness.column(kk) for kk in keys], [cells[kk] for kk in keys], [cards[kk] for kk in keys])
        known = np.where(at >= 0, np.rint(witness.counts[np.maximum(at, 0)]), 0).astype(np.int64)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = ILP_SECONDS
    solver.parameters.num_workers = 1
    fails: list[Failure] = []
    total = 0
    undecided = 0
    solved = 0
    for i in np.flatnonzero((known < k) & (bound >= 1)):
        if bound[i] < k and known[i] >= 1:
            upper = int(bound[i])  # a record's cell with a small bound: U in [known, bound]
        else:
            model.maximize(x[int(i)])
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
                    cell = tuple((shown(kk), show(kk, int(cells[kk][i]))) for kk in keys)
                    fails.append(Failure(None, cell, float(upper), f"undecided within {ILP_SECONDS:g} s (a table "
                                         f"with {found} record(s) here found, bound {upper})"))  # fmt: skip
                continue
        if 1 <= upper < k:
            total += 1
            if len(fails) < 5:
                cell = tuple((shown(kk), show(kk, int(cells[kk][i]))) for kk in keys)
                fails.append(Failure(None, cell, float(upper), f"every consistent table holds at most {upper} < k = "
                                     f"{k} records here, and some holds at least one"))  # fmt: skip
    method = (f"not decomposable ({why}); exact bounds by integer programming over {n_cells:,} cells, "
              f"{solved} solved")  # fmt: skip
    return Outcome("k-combinatorial anonymity", not total, method, tuple(fails), total,
                   {"cells": n_cells, "solved": solved, "undecided": undecided})  # fmt: skip


__all__ = ["JOIN_MAX_ROWS", "Failure", "Outcome", "k_combinatorial", "k_link", "reduce_supports", "support_join"]
