"""Multi-SA publishing (Appendix B, Algorithm 3 of Jin et al.): one table, every rule at once.

QI = the attributes on no rule's right-hand side, SA = the others ``A_1 .. A_m``.  The
table must satisfy ``A \\ A_i -> A_i`` for every ``A_i``: inside every published group,
for every SA ``A_i`` and every combination ``w`` of the other SAs,
``l · count(A_i = v, others = w) <= count(others = w)``.

* **Selection (Algorithm 3, lines 2–3; the BIP).**  The paper has one binary variable per
  tuple and maximizes the number selected subject to the constraint above over the whole
  selection.  The constraints only look at a tuple's SA values, so tuples with equal SA
  values are interchangeable: we solve the same program with one *integer* variable per
  distinct SA combination ``w`` (``0 <= x_w <= count_w``), which has the same optimum, and
  then pick which ``x_w`` tuples of each combination are selected with the seeded
  generator.  Solver: OR-Tools CP-SAT with a time limit; if the limit stops it, its best
  solution is used (still feasible, so still safe) and the manifest says it was not
  proven optimal.
* **Repetition (line 14, "go to step 2").**  The union of two feasible selections is
  feasible (the constraints are sums), so after a maximum selection no non-empty
  feasible subset of the remaining tuples exists: the loop always ends at its second
  BIP, and the remaining tuples form the suppressed group (lines 4–9).  We therefore
  solve once.
* **Group anonymization (line 13).**  The selection is bucketized "with the same
  bucketization technique" as the other methods: the selected tuples, laid out
  combination after combination (shuffled inside a combination), are dealt to ``K``
  groups round-robin, as in Anatomy's wrap-around; ``K`` starts at
  ``floor(selected / l^m)`` and shrinks until every group satisfies the constraint
  (``K = 1``, the selection itself, always does).  This is a heuristic for small groups;
  every group is checked before anything is emitted.
* **Suppression.**  The suppressed group's records appear in the QIT; the ST has no row
  for it (their SA values are withheld).  The release model spreads them uniformly over
  the SA domains, which the manifest lists.

Size limit: the program has one variable per distinct SA combination and ``m`` + 1 per
combination in constraints; above ``max_combinations`` distinct combinations it refuses
(with the sizes) instead of running for hours.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest, as_rules
from versapub.anonymizers.bucketizing.anatomy import Anatomy
from versapub.data.counts import CountTable
from versapub.data.groupby import group_rows
from versapub.errors import ConfigError, InfeasibleError
from versapub.plugins import Param, validated
from versapub.privacy.guarantees.guarantee import Guarantee, Histograms, LDiversity

if TYPE_CHECKING:  # OR-Tools (and the pandas it imports) load only when a solver runs
    from ortools.sat.python import cp_model

IntArray = npt.NDArray[np.int64]

#: Default limit on distinct SA combinations (BIP variables).
MAX_COMBINATIONS = 50_000
#: Default CP-SAT time limit per solve, seconds.
TIME_LIMIT_S = 60.0


@dataclass(frozen=True)
class Selection:
    """The BIP's answer: how many tuples of each SA combination are selected."""

    take: IntArray
    optimal: bool
    seconds: float
    variables: int
    constraints: int


def _line_ids(keys: Sequence[npt.NDArray[np.integer]], cards: Sequence[int], i: int) -> IntArray:
    """For each combination, the id of its line along SA ``i`` (the other SAs' values)."""
    others = [k for j, k in enumerate(keys) if j != i]
    if not others:
        return np.zeros(len(keys[0]), dtype=np.int64)
    g = group_rows(others, [c for j, c in enumerate(cards) if j != i], with_inverse=True)
    assert g.inverse is not None
    return g.inverse


def _solve(model: cp_model.CpModel, time_limit_s: float, seed: int) -> tuple[cp_model.CpSolver, Any]:
    """Solve with one seeded worker (reproducible) within the time limit."""
    from ortools.sat.python import cp_model  # loaded only when a solver runs

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed) % (1 << 31)
    return solver, solver.Solve(model)


def select(
    keys: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    counts: IntArray,
    l: int,
    *,
    time_limit_s: float,
    seed: int,
) -> Selection:
    """Solve Algorithm 3's BIP over distinct SA combinations (see the module docstring)."""
    start = time.perf_counter()
    from ortools.sat.python import cp_model  # loaded only when a solver runs

    model = cp_model.CpModel()
    x = [model.new_int_var(0, int(c), f"x{k}") for k, c in enumerate(counts)]
    n_constraints = 0
    for i in range(len(keys)):
        line = _line_ids(keys, cards, i)
        order = np.argsort(line, kind="stable")
        bounds = np.flatnonzero(np.diff(line[order])) + 1
        for members in np.split(order, bounds):
            total = int(counts[members].sum())
            y = model.new_int_var(0, total, f"y{i}_{n_constraints}")
            model.add(y == sum(x[int(k)] for k in members))
            for k in members:
                model.add(l * x[int(k)] <= y)
            n_constraints += len(members) + 1
    model.maximize(sum(x))
    solver, status = _solve(model, time_limit_s, seed)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        take = np.asarray([solver.Value(v) for v in x], dtype=np.int64)
    else:  # no solution within the limit: selecting nothing is always feasible
        take = np.zeros(len(counts), dtype=np.int64)
    return Selection(take, status == cp_model.OPTIMAL, time.perf_counter() - start, len(x), n_constraints)


def _cells(
    group: IntArray, sa: Sequence[npt.NDArray[np.integer]], cards: Sequence[int], n_groups: int, i: int
) -> tuple[npt.NDArray[np.int32], IntArray, IntArray, int]:
    """Lines along SA ``i`` (a group and the other SAs' values): each line's group, and the
    sparse histogram of ``A_i`` per line (line index, count) over the line's cells."""
    others = [group] + [s for j, s in enumerate(sa) if j != i]
    lines = group_rows(others, [n_groups] + [c for j, c in enumerate(cards) if j != i], with_inverse=True)
    assert lines.inverse is not None
    cells = group_rows([lines.inverse, sa[i]], [len(lines.counts), cards[i]])
    return lines.keys[0], cells.keys[0].astype(np.int64), cells.counts, len(lines.counts)


def select_per_tuple(
    sa: Sequence[npt.NDArray[np.integer]], cards: Sequence[int], l: int, *, time_limit_s: float, seed: int
) -> Selection:
    """The paper's literal BIP (one binary variable per tuple), for comparison with
    :func:`select`; same optimum, many more variables.  ``take`` counts selected tuples
    per distinct SA combination (in :func:`group_rows` order)."""
    start = time.perf_counter()
    combos = group_rows(sa, cards, with_inverse=True)
    assert combos.inverse is not None
    from ortools.sat.python import cp_model  # loaded only when a solver runs

    model = cp_model.CpModel()
    t = [model.new_bool_var(f"t{i}") for i in range(len(combos.inverse))]
    members = [np.flatnonzero(combos.inverse == k) for k in range(len(combos.counts))]
    n_constraints = 0
    for i in range(len(sa)):
        line = _line_ids(combos.keys, cards, i)
        for ln in np.unique(line):
            cells = np.flatnonzero(line == ln)
            total = sum(t[int(j)] for k in cells for j in members[k])
            for k in cells:
                model.add(l * sum(t[int(j)] for j in members[k]) <= total)
                n_constraints += 1
    model.maximize(sum(t))
    solver, status = _solve(model, time_limit_s, seed)
    ok = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    chosen = np.asarray([solver.Value(v) if ok else 0 for v in t], dtype=np.int64)
    take = np.bincount(combos.inverse, weights=chosen, minlength=len(combos.counts)).astype(np.int64)
    return Selection(take, status == cp_model.OPTIMAL, time.perf_counter() - start, len(t), n_constraints)


def groups_ok(
    group: IntArray, sa: Sequence[npt.NDArray[np.integer]], cards: Sequence[int], n_groups: int, g: Guarantee
) -> npt.NDArray[np.bool_]:
    """Per group: does every line (group, other SAs) satisfy the guarantee for every SA?"""
    ok = np.ones(n_groups, dtype=bool)
    for i in range(len(sa)):
        line_group, cell_line, cell_count, n_lines = _cells(group, sa, cards, n_groups, i)
        ok[line_group[~g.groups_satisfied(Histograms(cell_line, cell_count, n_lines))]] = False
    return ok


def deal(order_len: int, k: int) -> IntArray:
    """Round-robin group of each position."""
    return np.arange(order_len, dtype=np.int64) % k


class MultiSAAnatomy:
    """Algorithm 3 (see the module docstring): BIP selection, bucketization, suppression.

    ``time_limit_s`` bounds each CP-SAT solve; ``max_combinations`` bounds the number of
    distinct SA combinations (the program's variables) it will attempt.
    """

    #: Every attribute but the sensitive ones published exactly (PublishesExactly).
    exact_quasi_identifiers = True
    name = "multi-sa"
    #: Why it does not run on the Dask backend (the refusal's reason).
    in_memory_only = "its groups are chosen record by record across several sensitive attributes"
    max_rules = 1_000_000  # any number: one table enforces every rule

    parameter_constraints: ClassVar[dict[str, Param]] = {
        "time_limit_s": Param("number", low=0, low_open=True),
        "max_combinations": Param("whole", low=1),
    }
    glossary: ClassVar[str] = (
        "Multi-SA Anatomy (Appendix B of Jin et al.): one Anatomy table for several sensitive attributes, its "
        "groups chosen by a binary integer program so that every attribute is diverse in every group."
    )

    def __init__(self, time_limit_s: float = TIME_LIMIT_S, max_combinations: int = MAX_COMBINATIONS) -> None:
        got = validated(
            self.name, self.parameter_constraints, {"time_limit_s": time_limit_s, "max_combinations": max_combinations}
        )
        self.time_limit_s = float(got["time_limit_s"])
        self.max_combinations = int(got["max_combinations"])

    def params(self) -> dict[str, Any]:
        return {"time_limit_s": self.time_limit_s, "max_combinations": self.max_combinations}

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        """Publish the request's table (all attributes) so that every one of its rules
        holds; ``progress`` receives a line before and after the integer program."""
        table, guarantee, rng = request.table, request.guarantee, request.rng
        rules = as_rules(request.rules, self.name, self.max_rules)
        if len(rules) == 1:  # one sensitive attribute: Appendix B's groups are Anatomy's (docs/choices.md)
            return Anatomy().publish(replace(request, progress=None, hierarchies=None))
        say = request.say
        sens = [r.rhs for r in rules]
        qi = [a for a in table.names if a not in sens]
        if not isinstance(guarantee, LDiversity):  # the integer program encodes l * count <= size
            raise ConfigError(
                f"The multi-sa anonymizer (Multi-SA publishing) enforces frequency l-diversity only (its integer "
                f"program is that guarantee's constraint); {guarantee.name} needs a different anonymizer."
            )
        l = guarantee.group_width()
        sa_codes = [table.codes(a) for a in sens]
        sa_cards = [table.cardinality(a) for a in sens]
        combos = group_rows(sa_codes, sa_cards, with_inverse=True)
        assert combos.inverse is not None
        k_combos = len(combos.counts)
        if k_combos > self.max_combinations:
            raise InfeasibleError(
                f"Multi-SA publishing would solve an integer program with {k_combos:,} variables "
                f"(distinct combinations of the {len(sens)} sensitive attributes {sens} over "
                f"{table.n_rows:,} records), above the limit of {self.max_combinations:,}. "
                "Raise multi_sa_max_combinations (the solve may take very long), generalize the "
                "sensitive attributes, or use another decomposition."
            )
        say(
            f"multi-SA: integer program over {k_combos:,} sensitive-value combinations of {sens} "
            f"(time limit {self.time_limit_s:g} s)"
        )
        sel = select(
            combos.keys, sa_cards, combos.counts, l, time_limit_s=self.time_limit_s, seed=int(rng.integers(1 << 31))
        )
        say(
            f"multi-SA: {int(sel.take.sum()):,} of {table.n_rows:,} records selected in {sel.seconds:.1f} s"
            + ("" if sel.optimal else " (time limit reached: best solution found, not proven optimal)")
            + "; bucketizing"
        )
        # Which records of each combination are selected: a seeded random choice.
        shuffled = rng.permutation(table.n_rows)
        by_combo = shuffled[np.argsort(combos.inverse[shuffled], kind="stable")]
        starts = np.concatenate([[0], np.cumsum(combos.counts)[:-1]])
        rank = np.empty(table.n_rows, dtype=np.int64)
        rank[by_combo] = np.arange(table.n_rows) - np.repeat(starts, combos.counts)
        chosen = rank < sel.take[combos.inverse]
        order = by_combo[chosen[by_combo]]  # selected records, combination after combination
        n_sel = len(order)
        group, n_groups = _dealt(order, table.n_rows, [c[order] for c in sa_codes], sa_cards, l, guarantee)
        n_suppressed = table.n_rows - n_sel
        total_groups = n_groups + (1 if n_suppressed else 0)
        perm = rng.permutation(total_groups).astype(np.int64)
        suppressed_id = int(perm[n_groups]) if n_suppressed else None
        group = np.where(group >= 0, group, n_groups)
        group = perm[group]
        qit_g = group_rows([table.codes(a) for a in qi] + [group], [table.cardinality(a) for a in qi] + [total_groups])
        qit = CountTable((*qi, "group_id"), qit_g.keys, (*(table.column(a).values for a in qi), None), qit_g.counts)
        sel_rows = np.flatnonzero(chosen)
        g_sel = group[sel_rows]
        st_g = group_rows([g_sel] + [c[sel_rows] for c in sa_codes], [total_groups, *sa_cards])
        st = CountTable(("group_id", *sens), st_g.keys, (None, *(table.column(a).values for a in sens)), st_g.counts)
        sizes = np.bincount(st_g.keys[0].astype(np.int64), weights=st_g.counts, minlength=total_groups)
        if suppressed_id is not None:
            sizes = np.delete(sizes, suppressed_id)
        size_values, size_counts = np.unique(sizes.astype(np.int64), return_counts=True)
        stats = {
            "rows_qit": qit.n_rows,
            "rows_st": st.n_rows,
            "groups": n_groups,
            "group_sizes": {int(k): int(v) for k, v in zip(size_values, size_counts, strict=True)},
            "achieved": _achieved(g_sel, [c[sel_rows] for c in sa_codes], sa_cards, total_groups, guarantee),
            "suppressed_records": int(n_suppressed),
            "selected_records": int(n_sel),
            "bip": {
                "variables": sel.variables,
                "constraints": sel.constraints,
                "optimal": sel.optimal,
                "seconds": round(sel.seconds, 4),
            },
        }
        return AnonymizedTable(
            table.names,
            "anatomy",
            rules[0],
            {"qit": qit, "st": st},
            stats,
            also_enforces=tuple(rules[1:]),
            suppressed_group=suppressed_id,
            domains={a: tuple(str(v) for v in table.column(a).values) for a in sens},
        )


def _dealt(
    order: npt.NDArray[np.int64],
    n_rows: int,
    codes: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    l: int,
    guarantee: Guarantee,
) -> tuple[npt.NDArray[np.int64], int]:
    """The selected records (``order``: combination after combination; ``codes``: their
    sensitive values) dealt into as many groups as keep every group l-diverse, starting from
    ``n / l^d`` and lowering the count until they do; each record's group (-1: not selected)
    and the number of groups."""
    group = np.full(n_rows, -1, dtype=np.int64)
    n_sel = len(order)
    if not n_sel:
        return group, 0
    k = max(n_sel // (l ** len(codes)), 1)
    while True:
        gid = deal(n_sel, k)
        ok = groups_ok(gid, list(codes), cards, k, guarantee)
        if ok.all() or k == 1:
            break
        k = max(int(k * 0.8), 1) if k > 5 else k - 1
    if not ok.all():
        raise InfeasibleError("Internal error: the multi-SA selection violates its own constraints.")
    group[order] = gid
    return group, k


def _achieved(
    group: IntArray, sa: Sequence[npt.NDArray[np.integer]], cards: Sequence[int], n_groups: int, g: Guarantee
) -> float | None:
    """The weakest line's achieved guarantee over every SA (None: no group)."""
    if not len(group):
        return None
    return min(g.achieved(Histograms(*_cells(group, sa, cards, n_groups, i)[1:])) for i in range(len(sa)))
