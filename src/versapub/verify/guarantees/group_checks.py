"""The independent verifier's reading of every guarantee, group by group.

Written from the definitions (cited per function) and ``docs/release-format.md``, sharing
nothing with :mod:`versapub.privacy`: the guarantee's manifest form is parsed and
validated here, and each test works on a dense ``groups x values`` count matrix built
from the published histogram rows (the producer works on sparse entries), with
t-closeness's hierarchical distance computed by the paper's own ``cost(N)`` recursion
(the producer uses the tree-metric form).  A table's groups are checked in blocks so the
dense matrices stay small.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float64]
#: Groups per dense block.
BLOCK_CELLS = 1 << 24
#: The verifier's tolerance: a computed number ``x`` meets its bound ``b`` when
#: ``x <= b + RELATIVE * |b|`` (counts are whole and exact; shares, entropies, distances and
#: maximum-entropy estimates carry rounding of ~1e-13 relatively; no operand is rounded).
RELATIVE = 1e-10


def le(x: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``x <= b`` up to :data:`RELATIVE` of ``b``."""
    bound = np.asarray(b, dtype=np.float64)
    return np.asarray(np.asarray(x, dtype=np.float64) <= bound + RELATIVE * np.abs(bound))


def lt(x: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``x < b`` with room to spare: by more than :data:`RELATIVE` of ``b`` (equality up to
    rounding is not strict)."""
    bound = np.asarray(b, dtype=np.float64)
    return np.asarray(np.asarray(x, dtype=np.float64) < bound - RELATIVE * np.abs(bound))


class SpecError(ValueError):
    """The manifest's guarantee cannot be checked (unknown name, bad parameter)."""


@dataclass(frozen=True)
class GroupTest:
    """One guarantee as the verifier reads it: a test of a block of groups (rows of counts
    over the table's values, and the table-wide distribution) and its wording."""

    name: str
    wording: str
    test: Callable[[Matrix, Matrix], npt.NDArray[np.bool_]]
    #: Checked against the population instead (delta-presence, k-map without a fraction:
    #: :mod:`versapub.verify.guarantees.population_checks`); the group test itself passes every group.
    needs_population: bool = False


def against_population(spec: dict[str, Any]) -> bool:
    """Is ``spec`` a model checked against the population (delta-presence; k-map given no
    sampling fraction)?"""
    name = str(spec.get("name", "")).lower()
    return name == "delta-presence" or (name == "k-map" and "fraction" not in spec)


def presence_bounds(spec: dict[str, Any]) -> tuple[float, float]:
    """delta-presence's ``(delta_min, delta_max)`` from the manifest, checked."""
    lo = _number({"delta_min": 0.0, **spec}, "delta_min", False, 0.0, 1.0)
    hi = _number(spec, "delta_max", False, 1e-300)
    if hi > 1 or lo > hi:
        raise SpecError(f"delta-presence needs 0 <= delta_min <= delta_max <= 1, manifest has ({lo!r}, {hi!r})")
    return lo, hi


def _number(spec: dict[str, Any], key: str, whole: bool, low: float, high: float | None = None) -> float:
    v = spec.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or (whole and not float(v).is_integer()):
        raise SpecError(f"{spec.get('name')} needs {'an integer' if whole else 'a number'} {key}, manifest has {v!r}")
    if not (v >= low and (high is None or v < high)):
        raise SpecError(f"{spec.get('name')}: {key} = {v!r} is out of range")
    return float(v)


def _sorted_desc(counts: Matrix) -> Matrix:
    return -np.sort(-counts, axis=1)


def _entropy(counts: Matrix) -> npt.NDArray[np.float64]:
    size = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, size, out=np.zeros_like(counts), where=size > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.asarray(terms.sum(axis=1))


def _emd_equal(counts: Matrix, q: Matrix) -> npt.NDArray[np.float64]:
    """Li et al. §4.2, equal ground distance: ``½ Σ |p_i - q_i|``."""
    size = counts.sum(axis=1, keepdims=True)
    p = counts / np.maximum(size, 1)
    return np.asarray(0.5 * np.abs(p - q).sum(axis=1))


def emd_hierarchical(counts: Matrix, q: Matrix, parents: Sequence[npt.NDArray[np.int64]]) -> npt.NDArray[np.float64]:
    """Li et al. §4.2, hierarchical ground distance: ``Σ_N cost(N)`` over internal nodes,
    ``cost(N) = level(N)/H · min(pos_extra(N), neg_extra(N))`` where ``extra`` of a leaf is
    ``p_i - q_i`` and of an internal node the sum over its children.  ``parents[k][j]``: the
    parent (at level ``k + 1``) of node ``j`` at level ``k``; level 0 are the value columns."""
    size = counts.sum(axis=1, keepdims=True)
    extra = counts / np.maximum(size, 1) - q
    height = len(parents)
    total = np.zeros(counts.shape[0])
    for k, parent in enumerate(parents):
        n_par = int(parent.max()) + 1
        onto = np.zeros((len(parent), n_par))
        onto[np.arange(len(parent)), parent] = 1.0
        pos = np.clip(extra, 0, None) @ onto
        neg = np.clip(-extra, 0, None) @ onto
        total += (k + 1) / height * np.minimum(pos, neg).sum(axis=1)
        extra = extra @ onto
    return total


def bounding_function(spec: dict[str, Any]) -> npt.NDArray[np.float64]:
    """Functional (tau, lambda)-diversity's ``phi(1), ..., phi(lambda - 1)`` (1 beyond): the
    manifest's ``phi``, else the linear bound through ``(1, tau)`` and ``(lambda, 1)``."""
    lam = int(_number(spec, "lambda", True, 2))
    tau = _number(spec, "tau", False, 1 / lam - 1e-12, 1.0)
    raw = spec.get("phi")
    if raw is None:
        return np.array([tau + (k - 1) * (1 - tau) / (lam - 1) for k in range(1, lam)])
    if isinstance(raw, list) and raw and all(isinstance(v, int | float) and 0 < v <= 1 for v in raw):
        return np.asarray(raw, dtype=np.float64)
    raise SpecError(f"functional-diversity: phi must be a list of values in (0, 1], manifest has {raw!r}")


def sample_k(spec: dict[str, Any]) -> int:
    """k-map's sample count (El Emam & Dankar 2008): the smallest ``c`` with
    ``P(X >= c) <= significance`` for ``X ~ Poisson(f k)`` (the Poisson sum written out),
    at most ``k``.  A manifest recording a smaller ``derived_k`` is refused."""
    k = int(_number(spec, "k", True, 2))
    f = _number(spec, "fraction", False, 1e-300, 1.0000000001)
    alpha = _number(spec, "significance", False, 1e-300, 1.0) if "significance" in spec else 0.01
    lam = f * k
    c, below_c = 0, 0.0  # below_c = P(X < c)
    while c < k and 1.0 - below_c > alpha:
        below_c += math.exp(c * math.log(lam) - lam - math.lgamma(c + 1)) if lam > 0 else float(c == 0)
        c += 1
    c = max(1, c)
    recorded = spec.get("derived_k")
    if recorded is not None and (not isinstance(recorded, int) or recorded < c):
        raise SpecError(f"k-map: the manifest records derived_k = {recorded!r}, the estimate needs {c}")
    return c


def _l_diversity(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """frequency l-diversity (Jin et al. §6.1; Xiao & Tao Def. 2)"""
    del parents
    l = _number(spec, "l", True, 2)
    return GroupTest(name, f"l * max_count <= size with l = {l:g}", lambda c, q: le(l * c.max(axis=1), c.sum(axis=1)))


def _distinct_l_diversity(
    name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None
) -> GroupTest:
    """Machanavajjhala et al. §4.1"""
    del parents
    l = _number(spec, "l", True, 2)
    return GroupTest(name, f"at least {l:g} distinct values", lambda c, q: (c > 0).sum(axis=1) >= l)


def _entropy_l_diversity(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """Machanavajjhala et al. Definition 4.1"""
    del parents
    l = _number(spec, "l", False, 1.0000001)
    return GroupTest(name, f"entropy >= log({l:g})", lambda c, q: le(math.log(l), _entropy(c)))


def _recursive_cl_diversity(
    name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None
) -> GroupTest:
    """Machanavajjhala et al. Definition 4.2"""
    del parents
    cc, l = _number(spec, "c", False, 1e-12), int(_number(spec, "l", True, 2))

    def recursive(c: Matrix, q: Matrix) -> npt.NDArray[np.bool_]:
        r = _sorted_desc(c)
        return lt(r[:, 0], cc * r[:, l - 1 :].sum(axis=1)) if r.shape[1] >= l else np.zeros(len(c), bool)

    return GroupTest(name, f"r_1 < {cc:g} (r_{l} + ... + r_m)", recursive)


def _k_anonymity(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """Sweeney 2002"""
    del parents
    k = _number(spec, "k", True, 2)
    return GroupTest(name, f"at least {k:g} records", lambda c, q: c.sum(axis=1) >= k)


def _t_closeness(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """Li, Li, Venkatasubramanian 2007, Definition 2"""
    t = _number(spec, "t", False, 1e-12, 1.0)
    distance = str(spec.get("distance", "auto"))
    if distance not in ("auto", "equal", "hierarchical"):
        raise SpecError(f"t-closeness: unknown ground distance {distance!r}")
    if distance == "hierarchical" and parents is None:
        raise SpecError("t-closeness with the hierarchical distance, but the release holds no hierarchy for it")
    if distance == "equal" or parents is None:
        return GroupTest(name, f"EMD (equal distance) <= {t:g}", lambda c, q: le(_emd_equal(c, q), t))
    tree = parents
    return GroupTest(name, f"EMD (hierarchical distance) <= {t:g}", lambda c, q: le(emd_hierarchical(c, q, tree), t))


def _beta_likeness(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """Cao & Karras 2012, §3: basic, or enhanced (min(beta, -ln p))"""
    del parents
    beta = _number(spec, "beta", False, 1e-300)
    enhanced = spec.get("enhanced", False)
    if not isinstance(enhanced, bool):
        raise SpecError(f"beta-likeness: enhanced must be true or false, manifest has {enhanced!r}")

    def likeness(c: Matrix, q: Matrix) -> npt.NDArray[np.bool_]:
        size = c.sum(axis=1, keepdims=True)
        share = c / np.maximum(size, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            allowed = np.minimum(beta, -np.log(q)) if enhanced else np.full_like(q, beta)
            # share <= p (1 + allowance) wherever the share grows; p = 0 allows no share
            ok = np.where(q > 0, le(share, q * (1 + allowed)), share == 0)
        return np.asarray(ok.all(axis=1) | (size[:, 0] == 0))

    return GroupTest(name, f"share <= p (1 + {'min(beta, -ln p)' if enhanced else 'beta'}), beta = {beta:g}", likeness)


def _delta_disclosure(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """Brickell & Shmatikov 2008, §3: |ln(p(<t>, s) / p(T, s))| < delta for all s"""
    del parents
    delta = _number(spec, "delta", False, 1e-300)

    def disclosure(c: Matrix, q: Matrix) -> npt.NDArray[np.bool_]:
        size = c.sum(axis=1, keepdims=True)
        share = c / np.maximum(size, 1)
        held = q > 0  # every value of the table, in every class: e^-delta p < share < e^delta p
        lower, upper = q * math.exp(-delta), q * math.exp(delta)
        inside = lt(lower, share) & lt(share, upper)
        return np.asarray(np.where(held, inside, True).all(axis=1))

    return GroupTest(name, f"e^-{delta:g} p < share < e^{delta:g} p for every value", disclosure)


def _population(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """Nergiz et al. 2007; Sweeney 2001: the population finding tests it"""
    del parents
    if name == "delta-presence":
        lo, hi = presence_bounds(spec)
        wording = f"records / population covered in [{lo:g}, {hi:g}], tested against the population"
    else:
        wording = f"at least {_number(spec, 'k', True, 2):g} population records, tested against the population"
    return GroupTest(name, wording, lambda c, q: np.ones(len(c), dtype=bool), needs_population=True)


def _k_map(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """El Emam & Dankar 2008: k'-anonymity of the sample, k' from Poisson(f k)"""
    del parents
    k_need = sample_k(spec)
    return GroupTest(name, f"at least {k_need} records (k-map estimate)", lambda c, q: c.sum(axis=1) >= k_need)


def _functional_diversity(
    name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None
) -> GroupTest:
    """functional (tau, lambda)-diversity (reading notes: F(k) <= phi(k))"""
    del parents
    phi = bounding_function(spec)

    def functional(c: Matrix, q: Matrix) -> npt.NDArray[np.bool_]:
        size = c.sum(axis=1, keepdims=True)
        f_cum = np.cumsum(_sorted_desc(c), axis=1) / np.maximum(size, 1)
        k = min(len(phi), f_cum.shape[1])
        return np.asarray(le(f_cum[:, :k], phi[None, :k]).all(axis=1))

    shown = ", ".join(f"{v:.3g}" for v in phi)
    return GroupTest(name, f"F(k) <= phi(k) = {shown}, then 1", functional)


def _all_of(name: str, spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """several rules' guarantees at once: every one must hold"""
    parts = spec.get("guarantees")
    if not isinstance(parts, list) or len(parts) < 2 or not all(isinstance(p, dict) for p in parts):
        raise SpecError("all-of needs a list of at least two guarantees")
    tests = [group_test(p, parents) for p in parts]
    population = any(t.needs_population for t in tests)

    def every(c: Matrix, q: Matrix) -> npt.NDArray[np.bool_]:
        ok = np.ones(len(c), dtype=bool)
        for t in tests:
            ok &= t.test(c, q)
        return ok

    return GroupTest(name, " and ".join(f"{t.name}: {t.wording}" for t in tests), every, population)


#: Each guarantee the verifier reads, by its manifest name: the builder of its group test.
_TESTS: dict[str, Callable[[str, dict[str, Any], Sequence[npt.NDArray[np.int64]] | None], GroupTest]] = {
    "l-diversity": _l_diversity,
    "distinct-l-diversity": _distinct_l_diversity,
    "entropy-l-diversity": _entropy_l_diversity,
    "recursive-cl-diversity": _recursive_cl_diversity,
    "k-anonymity": _k_anonymity,
    "t-closeness": _t_closeness,
    "beta-likeness": _beta_likeness,
    "delta-disclosure": _delta_disclosure,
    "k-map": _k_map,
    "functional-diversity": _functional_diversity,
    "all-of": _all_of,
}


def group_test(spec: dict[str, Any], parents: Sequence[npt.NDArray[np.int64]] | None) -> GroupTest:
    """The verifier's test for the manifest's guarantee ``spec`` (``parents``: the
    sensitive attribute's taxonomy over the table's value columns, for t-closeness): the
    verifier's own reading of each guarantee (:data:`_TESTS`), sharing no code with the
    guarantees the publisher enforces."""
    name = str(spec.get("name", "")).lower()
    if against_population(spec):  # Nergiz et al. 2007; Sweeney 2001: the population finding tests it
        return _population(name, spec, parents)
    build = _TESTS.get(name)
    if build is None:
        raise SpecError(f"cannot verify unknown guarantee {name!r}")
    return build(name, spec, parents)


def failing_groups(
    test: GroupTest,
    group: npt.NDArray[np.int64],
    value: npt.NDArray[np.int64],
    count: npt.NDArray[np.int64] | npt.NDArray[np.float64],
) -> npt.NDArray[np.int64]:
    """Group ids (as given) whose histogram fails ``test``; values are column indices;
    counts may be fractional (induced by generalized sensitive values)."""
    if not len(group):
        return np.zeros(0, dtype=np.int64)
    ids, row = np.unique(group, return_inverse=True)
    m = int(value.max()) + 1
    q = np.bincount(value, weights=count, minlength=m)[None, :]
    q = q / q.sum()
    bad: list[npt.NDArray[np.int64]] = []
    per = max(1, BLOCK_CELLS // m)
    order = np.argsort(row, kind="stable")
    row, value, count = row[order], value[order], count[order]
    bounds = np.searchsorted(row, np.arange(0, len(ids) + per, per))
    for b in range(len(bounds) - 1):
        lo, hi = int(bounds[b]), int(bounds[b + 1])
        if lo == hi:
            continue
        first = b * per
        dense = np.zeros((min(per, len(ids) - first), m))
        np.add.at(dense, (row[lo:hi] - first, value[lo:hi]), count[lo:hi])
        ok = test.test(dense, q)
        bad.append(ids[first + np.flatnonzero(~ok)])
    return np.concatenate(bad) if bad else np.zeros(0, dtype=np.int64)


def taxonomy_parents(rows: Sequence[Sequence[str]], values: Sequence[str]) -> list[npt.NDArray[np.int64]]:
    """From an ARX hierarchy's rows (leaf first, root last; shorter rows padded by repeating
    the value before the root) and the table's value columns: per level, each node's
    parent.  A value missing from the hierarchy is a :class:`SpecError`."""
    height = max(len(r) for r in rows)
    full = {}
    for r in rows:
        r = list(r)
        if len(r) < height:
            r = r[:-1] + [r[-2]] * (height - len(r)) + r[-1:]
        full[r[0]] = r
    missing = [v for v in values if v not in full]
    if missing:
        raise SpecError(f"the sensitive hierarchy has no leaf for value(s) {missing[:5]}")
    labels = [[full[v][k] for v in values] for k in range(height)]
    parents = []
    index = [{v: i for i, v in enumerate(dict.fromkeys(labels[k]))} for k in range(height)]
    for k in range(height - 1):
        par = np.zeros(len(index[k]), dtype=np.int64)
        for child, parent in zip(labels[k], labels[k + 1], strict=True):
            par[index[k][child]] = index[k + 1][parent]
        parents.append(par)
    # level 0 columns are the values in the order given
    assert list(index[0]) == list(dict.fromkeys(values))
    return parents
