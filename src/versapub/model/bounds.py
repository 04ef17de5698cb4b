"""The range a release allows for ``COUNT(*) WHERE …``: the smallest and largest count
over every non-negative integer table over the input's domain whose projections equal the
published tables, beside the maximum-entropy estimate.

* **Each table alone** (:meth:`versapub.model.factors.Factor.count_bounds`): exact for a
  plain table, per group for latent groups (a transportation problem per group,
  :mod:`versapub.model.group_bounds`), classes fully inside or overlapping the query for a
  generalized table (:mod:`versapub.model.formula`).  Attributes a table does not hold may
  take any value there, so its bounds hold for every consistent table of the release.
* **Combined**: the largest lower bound and the smallest upper bound over the tables; for
  a query that is an ``AND`` of parts held by different tables, Fréchet's lower bound
  ``Σ L(part) - (parts - 1) n`` (Fréchet 1951; Dobra & Fienberg 2000); for an ``OR``,
  Boole's upper bound ``Σ U(part)``.
* **Sharp** when the two ends meet; when one table holds every attribute of the query, its
  own bounds are sharp, the tables form a junction tree and that table fixes its marginal
  on whatever it shares with each other table (the other tables then glue onto any table
  consistent with it); or when an integer program over the join of the tables' supports
  (CP-SAT, :mod:`versapub.model.programs`) proves both ends within the time budget.  Past
  the budget the solver's proven bounds, intersected with the cheap ones, are returned,
  marked not sharp; the program needs every table to be exact rows over leaves (marginal
  collections, plain multi-table releases) and at most :data:`MAX_CELLS` joined cells.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.errors import ReleaseError
from versapub.model.factors import Factor
from versapub.model.formula import Formula, as_arrays, from_query, is_conjunction, resolver
from versapub.model.interval import Bound, integral
from versapub.model.maxent import junction_tree
from versapub.model.programs import consistent_program, support_join
from versapub.model.sparse import Codes, Floats, JoinTooLarge

#: Seconds an integer program may spend on one query's two ends (0: never run one).
DEFAULT_SECONDS = 2.0
#: Joined cells beyond which no integer program is built.
MAX_CELLS = 20_000


def query_formula(model: Any, query: Any) -> Formula:
    """A parsed query (validated against the model's domains) as a formula over its masks."""
    query.validate(model.domains)
    return from_query(query, model.domains)


def count_bounds(model: Any, f: Formula, seconds: float = DEFAULT_SECONDS) -> Bound:
    """The range of ``COUNT(*) WHERE f`` over the tables consistent with the release
    (module docstring); ``seconds`` bounds the integer program's time."""
    if getattr(model, "measurements", ()):  # a differentially private release: the noise's interval
        from versapub.model.noise_interval import noise_interval

        return noise_interval(model.measurements, f, float(model.n))
    factors: Sequence[Factor] = model.published
    n = float(model.n)
    attrs = set(f.attributes)
    own = _conjunction(factors, f, n) if is_conjunction(f) else _each(factors, f, n)
    lower = max([0.0, *(lo for _, lo, _, _ in own)])
    upper = min([n, *(hi for _, _, hi, _ in own)])
    lower = max(lower, _frechet(factors, f, n, {i: b for i, _, _, b in own} if is_conjunction(f) else {}))
    if f.op == "or":  # Boole: an OR counts at most what its parts count
        upper = min(upper, sum(count_bounds(model, c, seconds=0.0).upper for c in f.children))
    if lower > upper:
        raise ReleaseError(
            f"The published tables disagree: one allows at least {lower:,.0f} records for this query and another "
            f"at most {upper:,.0f}; they are not projections of one table."
        )
    method = " and ".join(sorted({b.method for _, _, _, b in own if b.method})) or "the record count"
    if lower == upper:
        return Bound(lower, upper, True, method=method)
    for i, _, _, b in own:
        if b.sharp and attrs <= set(factors[i].attrs) and _isolated(factors, i):
            return Bound(max(lower, b.lower), min(upper, b.upper), True, method=b.method)
    if seconds > 0:
        solved = _by_program(factors, f, n, seconds)
        if solved is not None:
            lo, hi, sharp = solved
            return Bound(max(lower, lo), min(upper, hi), sharp, method="integer program over the join")
    return Bound(lower, upper, False, method=method)


Own = list[tuple[int, float, float, Bound]]


def _each(factors: Sequence[Factor], f: Formula, n: float) -> Own:
    """Every table's own bounds of ``f`` (attributes it does not hold unknown)."""
    attrs = set(f.attributes)
    out: Own = []
    for i, fac in enumerate(factors):
        if attrs & set(fac.attrs) or not attrs:
            b = fac.count_bounds(f, n)
            out.append((i, b.lower, b.upper, b))
    return out


def _conjunction(factors: Sequence[Factor], f: Formula, n: float) -> Own:
    """:func:`_each` for an ``AND`` of atoms, one evaluation per table: its bounds of the
    atoms it holds, kept when every other atom is certainly true (lower) or possibly true
    (upper) on its own, else 0."""
    out: Own = []
    atoms = f.atoms
    for i, fac in enumerate(factors):
        mine = [a for a in atoms if a.attr in fac.attrs]
        if not mine and atoms:
            continue
        b = fac.count_bounds(Formula("and", tuple(Formula("atom", atom=a) for a in mine)), n)
        rest = [a for a in atoms if a.attr not in fac.attrs]
        lo = b.lower if all(bool(a.mask.all()) for a in rest) else 0.0
        hi = b.upper if all(bool(a.mask.any()) for a in rest) else 0.0
        out.append((i, lo, hi, b))
    return out


def _isolated(factors: Sequence[Factor], i: int) -> bool:
    """The tables form a junction tree and table ``i`` fixes its marginal on what it shares
    with every other table: any table consistent with it extends to the whole release."""
    if junction_tree([f.attrs for f in factors]) is None:
        return False
    mine = set(factors[i].attrs)
    return all(
        factors[i].exact_on(sorted(mine & set(g.attrs)))
        for j, g in enumerate(factors)
        if j != i and mine & set(g.attrs)
    )


def _frechet(factors: Sequence[Factor], f: Formula, n: float, known: Mapping[int, Bound]) -> float:
    """Fréchet's lower bound of an ``AND`` whose parts are held by different tables: tables
    chosen greedily until they hold every part, ``Σ L(what each holds) - (tables - 1) n``
    (the records satisfying every part are the intersection of those satisfying each
    table's share; a table's share may repeat a part another holds).  ``known``: tables'
    bounds of their share already computed."""
    if f.op != "and" or len(factors) < 2:
        return 0.0
    left = list(f.children)
    shares: list[tuple[int, Formula]] = []
    while left:
        held = [[c for c in f.children if set(c.attributes) <= set(fac.attrs)] for fac in factors]
        gain = [sum(1 for c in h if any(c is x for x in left)) for h in held]
        best = int(np.argmax(gain))
        if gain[best] == 0:
            return 0.0  # a part no table holds alone
        shares.append((best, held[best][0] if len(held[best]) == 1 else Formula("and", tuple(held[best]))))
        left = [c for c in left if all(c is not t for t in held[best])]
    if len(shares) < 2:
        return 0.0
    total = 0.0
    for i, share in shares:
        total += known[i].lower if i in known else factors[i].count_bounds(share, n).lower
    return max(0.0, total - (len(shares) - 1) * n)


@dataclass(frozen=True)
class _Support:
    """One exact table's rows as counts (the :class:`versapub.model.programs.Counted` shape)."""

    name: str
    keys: tuple[str, ...]
    columns: tuple[Codes, ...]
    counts: Floats

    def column(self, key: str) -> Codes:
        return self.columns[self.keys.index(key)]


def _by_program(factors: Sequence[Factor], f: Formula, n: float, seconds: float) -> tuple[float, float, bool] | None:
    """Both ends by CP-SAT over the join of the supports, or ``None`` when a table is not
    exact rows or the join is too large; not sharp when the budget ran out first."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    tables = []
    cards: dict[str, int] = {}
    for i, fac in enumerate(factors):
        sup = fac.support()
        if sup is None:
            return None
        cols, p = sup
        counts = np.rint(p * n)
        tables.append(_Support(f"T{i + 1}", tuple(fac.attrs), tuple(cols[a] for a in fac.attrs), counts))
        for a in fac.attrs:
            cards[a] = max(cards.get(a, 0), int(cols[a].max(initial=-1)) + 1)
    try:
        cells = support_join(tables, cards, MAX_CELLS)
    except JoinTooLarge:
        return None
    n_cells = len(next(iter(cells.values()))) if cells else 1
    model, x, _ = consistent_program(tables, cells, cards, n_cells)
    hit: npt.NDArray[np.bool_] = as_arrays(f.tri(resolver(cells)), n_cells)[1]
    objective = cp_model.LinearExpr.sum([x[int(i)] for i in np.flatnonzero(hit)])
    ends = []
    sharp = True
    for sense in ("max", "min"):
        left = seconds - (time.perf_counter() - t0)
        if left <= 0:
            return None
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = left if sense == "min" else left / 2
        solver.parameters.num_workers = 1
        model.maximize(objective) if sense == "max" else model.minimize(objective)
        status = solver.solve(model)
        if status == cp_model.INFEASIBLE:
            raise ReleaseError("The published tables disagree: no table has them all as its projections.")
        if status == cp_model.OPTIMAL:
            ends.append(float(round(solver.objective_value)))
        elif status == cp_model.FEASIBLE:
            sharp = False
            ends.append(float(solver.best_objective_bound))
        else:
            return None
    lo, hi = integral(ends[1], ends[0])
    return lo, hi, sharp


def workload_bounds(model: Any, queries: Sequence[Mapping[str, npt.NDArray[np.bool_]]]) -> list[Bound]:
    """The cheap bounds (no integer program) of a workload's ``AND`` queries (masks over
    the model's codes), each table answering all queries that name the same of its
    attributes at once (:meth:`versapub.model.factors.Factor.conjunction_batch`); the same
    bounds as :func:`count_bounds` with ``seconds=0``."""
    if getattr(model, "measurements", ()):  # a differentially private release: the noise's intervals
        from versapub.model.noise_interval import noise_intervals

        return noise_intervals(model.measurements, queries, float(model.n))
    factors: Sequence[Factor] = model.published
    n = float(model.n)
    nq = len(queries)
    lower, upper = np.zeros(nq), np.full(nq, n)
    held_lower = np.full((len(factors), nq), np.nan)
    own: dict[int, tuple[float, float]] = {}
    isolated: dict[int, bool] = {}
    methods: list[set[str]] = [set() for _ in range(nq)]
    for i, fac in enumerate(factors):
        mine = set(fac.attrs)
        patterns: dict[tuple[str, ...], list[int]] = {}
        for j, q in enumerate(queries):
            held = tuple(a for a in q if a in mine)
            if held:
                patterns.setdefault(held, []).append(j)
        for held, idx in patterns.items():
            lo, hi, sharp, how = fac.conjunction_batch(held, [{a: queries[j][a] for a in held} for j in idx], n)
            lo, hi = np.maximum(np.ceil(lo - 1e-6), 0.0), np.floor(hi + 1e-6)
            for j, lj, hj in zip(idx, lo.tolist(), hi.tolist(), strict=True):
                rest = [m for a, m in queries[j].items() if a not in mine]
                lower[j] = max(lower[j], lj if all(bool(m.all()) for m in rest) else 0.0)
                upper[j] = min(upper[j], hj if all(bool(m.any()) for m in rest) else 0.0)
                held_lower[i, j] = lj
                methods[j].add(how)
                if sharp and not rest:
                    if i not in isolated:
                        isolated[i] = _isolated(factors, i)
                    if isolated[i] and j not in own:
                        own[j] = (lj, hj)
    out = []
    for j, q in enumerate(queries):
        lo_j = max(float(lower[j]), _frechet_batch(factors, list(q), held_lower[:, j], n))
        hi_j = float(upper[j])
        if lo_j > hi_j:
            raise ReleaseError("The published tables disagree: a workload query's bounds cross.")
        method = " and ".join(sorted(m for m in methods[j] if m)) or "the record count"
        if lo_j == hi_j:
            out.append(Bound(lo_j, hi_j, True, method=method))
        elif j in own:
            out.append(Bound(max(lo_j, own[j][0]), min(hi_j, own[j][1]), True, method=method))
        else:
            out.append(Bound(lo_j, hi_j, False, method=method))
    return out


def _frechet_batch(factors: Sequence[Factor], attrs: list[str], held_lower: Floats, n: float) -> float:
    """:func:`_frechet` for an ``AND`` with one atom per attribute, from each table's bound
    of the atoms it holds (NaN: holds none)."""
    if len(factors) < 2:
        return 0.0
    left = set(attrs)
    total, used = 0.0, 0
    while left:
        gain = [len(left & set(f.attrs)) for f in factors]
        best = int(np.argmax(gain))
        if gain[best] == 0:
            return 0.0
        total += float(held_lower[best])
        used += 1
        left -= set(factors[best].attrs)
    return max(0.0, total - (used - 1) * n) if used > 1 else 0.0


def pram_interval(model: Any, query: Any, corrections: Mapping[str, Any], estimate: float) -> Bound:
    """A 95 % interval of the PRAM-corrected estimate (``estimate ± 1.96 sd``, clipped to
    ``[0, n]``; statistical).  For a PRAM'd column with matrix ``P``, the published counts
    ``o_x`` of each combination ``x`` of the other columns are sums of multinomial draws,
    ``Var(o_x) = Σ_i t_xi (diag P_i - P_i^T P_i)``; the corrected count of the query is
    ``Σ_x o_x P^-1 w_x`` (``w_x``: which values satisfy it), so its variance is
    ``Σ_x Σ_i t_xi (P_i (v_x ∘ v_x) - (P_i v_x)^2)`` with ``v_x = P^-1 w_x`` and ``t`` the
    corrected counts (clipped at 0).  Several PRAM'd columns: their variances added
    (independent draws; the cross terms are left out)."""
    from versapub.model.pram_correction import corrected_joint

    attrs = query.attributes
    m = model.marginal(attrs)
    n = float(model.n)
    var = 0.0
    for a in (c for c in attrs if c in corrections):
        others = {c: x for c, x in corrections.items() if c != a and c in attrs}
        codes, values, doms = corrected_joint(m.attrs, m.codes, m.values, model.domains, others)
        names, p = corrections[a]
        i = list(m.attrs).index(a)
        order = {str(v): j for j, v in enumerate(names)}
        to_matrix = np.array([order.get(str(v), -1) for v in doms[a]], dtype=np.int64)
        if (to_matrix[codes[i]] < 0).any():
            continue
        rest = [c for j, c in enumerate(codes) if j != i]
        keys = np.column_stack(rest) if rest else np.zeros((len(values), 0), dtype=np.int64)
        uniq, row = np.unique(keys, axis=0, return_inverse=True)
        row = row.ravel()
        k = len(names)
        obs = np.zeros((len(uniq), k))
        np.add.at(obs, (row, to_matrix[codes[i]]), n * values)
        inv = np.linalg.pinv(p)
        t = np.maximum(obs @ inv, 0.0)
        # Which (rest, value) cells satisfy the query: the rest's codes with every matrix value.
        grid = {c: np.repeat(uniq[:, j], k) for j, c in enumerate(x for x in m.attrs if x != a)}
        grid[a] = np.tile(np.arange(k), len(uniq))
        w = query.mask({**model.domains, **doms, a: np.asarray(list(names), dtype=object)}, grid).reshape(len(uniq), k)
        v = inv @ w.T.astype(np.float64)  # (k, rest)
        var += float((t * ((p @ (v * v)).T - ((p @ v).T) ** 2)).sum())
    half = 1.96 * float(np.sqrt(max(var, 0.0)))
    upper = min(n, max(estimate + half, 0.0))
    lower = min(max(0.0, estimate - half), upper)  # a corrected estimate may leave [0, n]
    return Bound(lower, upper, False, basis="pram-variance", method="PRAM variance")
