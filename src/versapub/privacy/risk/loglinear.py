"""Population uniqueness from a Poisson log-linear model of the key cells (issue 69).

Skinner & Holmes ("Estimating the re-identification risk per record in microdata", J.
Official Statistics 14(4), 1998) and Skinner & Shlomo ("Assessing identification risk in
survey microdata using log-linear models", JASA 103, 2008): the population count ``F_k`` of
key cell ``k`` is Poisson(``lambda_k``), each person is sampled with probability ``pi_k``,
so the sample count is ``f_k ~ Poisson(mu_k = pi_k lambda_k)`` and, given ``f_k``, ``F_k -
f_k ~ Poisson(nu_k)`` with ``nu_k = (1 - pi_k) lambda_k``. ``log mu_k`` is linear in the key
variables' main effects and selected interactions, fitted by maximum likelihood to the
sample's cell counts. For a sample unique (``f_k = 1``):

    P(F_k = 1 | f_k = 1) = exp(-nu_k),        E(1 / F_k | f_k = 1) = (1 - exp(-nu_k)) / nu_k,

``tau_1`` sums the first over the sample uniques (the sample uniques unique in the
population) and ``tau_2`` the second (the expected correct matches of sample uniques). A
record of a cell of ``f`` sample records has risk ``E(1 / F_k | f_k = f) = int_0^1 t^(f-1)
exp(-nu_k (1 - t)) dt`` (computed as ``(1/f) int_0^1 exp(-nu_k (1 - s^(1/f))) ds`` by
Gauss–Legendre quadrature). With sampling weights, ``pi_k`` is the cell's records over the
sum of their weights.

The models are *decomposable*: main effects plus pairwise interactions that form a forest.
Their maximum-likelihood fit has a closed form in the sample's one- and two-way margins
(Bishop, Fienberg & Holland, *Discrete Multivariate Analysis*, 1975, ch. 3):

    mu(x) = n prod_v p_v(x_v) prod_{(u, v) in E} p_uv(x_u, x_v) / (p_u(x_u) p_v(x_v)),

so only the cells the sample holds are evaluated, never a dense table (sdcMicro's
``modRisk`` fits its models by IRLS over the whole product of the observed values).

Interactions are chosen forward from the independence model, as Skinner & Shlomo do, by a
criterion on the fit of the *uniques* (their section 4: goodness of fit of the whole table
is not what the risk needs): candidate pairs in decreasing likelihood-ratio statistic
``G^2_uv = 2 sum n_uv log(n n_uv / (n_u n_v))`` (Chow & Liu's order; each significant at
5 %), each taken when it keeps the graph a forest and lowers ``|z|``,

    z = (c_1 - sum_k mu_k e^(-mu_k)) / sqrt(sum_k mu_k e^(-mu_k) (1 - mu_k e^(-mu_k))),

the standardized difference between the sample uniques and the number the model expects,
summed over every cell of the observed values' product (exactly up to :data:`EXACT_CELLS`
cells, else as ``n E[exp(-mu(X))]`` over :data:`MONTE_CARLO` draws ``X`` of the fitted
model); the search stops once ``|z| <= 1.96``. docs/choices.md item 240.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: The observed values' product is enumerated up to this many cells, else sampled.
EXACT_CELLS = 1 << 21
#: Draws of the fitted model that estimate the expected sample uniques of a larger product.
MONTE_CARLO = 1 << 18
#: The search stops once the model's expected sample uniques are this close (in sds).
Z_STOP = 1.96
#: Gauss–Legendre nodes of the per-record risk's integral.
NODES = 48

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Margins:
    """The sample's one- and two-way margins over the key variables (codes ``0..card-1``)."""

    n: float
    cards: tuple[int, ...]
    one: tuple[Floats, ...]
    #: ``(u, v)`` with ``u < v`` -> (sorted keys ``x_u card_v + x_v``, their counts).
    two: dict[tuple[int, int], tuple[Ints, Floats]]

    @classmethod
    def of(cls, codes: Sequence[Ints], cards: Sequence[int], counts: Floats) -> Margins:
        cards_t = tuple(max(int(c), 1) for c in cards)
        one = tuple(
            np.bincount(c, weights=counts, minlength=k).astype(np.float64) for c, k in zip(codes, cards_t, strict=True)
        )
        two: dict[tuple[int, int], tuple[Ints, Floats]] = {}
        for u in range(len(codes)):
            for v in range(u + 1, len(codes)):
                key = codes[u].astype(np.int64) * cards_t[v] + codes[v]
                if cards_t[u] * cards_t[v] <= max(4 * len(key), 1 << 16):  # a dense count: no sort
                    dense = np.bincount(key, weights=counts, minlength=cards_t[u] * cards_t[v])
                    keys = np.flatnonzero(dense)
                    two[(u, v)] = (keys.astype(np.int64), dense[keys].astype(np.float64))
                    continue
                keys, inv = np.unique(key, return_inverse=True)
                two[(u, v)] = (keys.astype(np.int64), np.bincount(inv.ravel(), weights=counts).astype(np.float64))
        return cls(float(counts.sum()), cards_t, one, two)

    def pair(self, u: int, v: int, xu: Ints, xv: Ints) -> Floats:
        """``n_uv(x_u, x_v)`` (0 where the sample has no such pair)."""
        keys, counts = self.two[(u, v)]
        key = xu.astype(np.int64) * self.cards[v] + xv
        at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
        return np.where(keys[at] == key, counts[at], 0.0)

    def g2(self, u: int, v: int) -> tuple[float, int]:
        """The likelihood-ratio statistic of independence of ``u`` and ``v`` and its degrees
        of freedom (over the values the sample holds)."""
        keys, counts = self.two[(u, v)]
        nu, nv = self.one[u][keys // self.cards[v]], self.one[v][keys % self.cards[v]]
        stat = 2.0 * float((counts * np.log(self.n * counts / (nu * nv))).sum())
        df = (int((self.one[u] > 0).sum()) - 1) * (int((self.one[v] > 0).sum()) - 1)
        return max(stat, 0.0), max(df, 1)

    def log_mu(self, x: Sequence[Ints], edges: Sequence[tuple[int, int]]) -> Floats:
        """``log mu(x)`` of the decomposable model with these interactions (module docstring);
        ``-inf`` where a margin is empty."""
        with np.errstate(divide="ignore"):
            out = np.full(len(x[0]), math.log(self.n) if self.n > 0 else -math.inf)
            logs = [np.log(m / self.n) for m in self.one]
            for v, xv in enumerate(x):
                out += logs[v][xv]
            for u, v in edges:
                out += np.log(self.pair(u, v, x[u], x[v]) / self.n) - logs[u][x[u]] - logs[v][x[v]]
        return out


@dataclass(frozen=True)
class LogLinearRisk:
    """The fitted model's figures (module docstring)."""

    #: The model's terms: each key variable, then each interaction ``a:b``.
    terms: tuple[str, ...]
    #: Sample uniques estimated unique in the population, and their prediction sd.
    tau1: float
    tau1_sd: float
    #: Expected correct matches of the sample uniques.
    tau2: float
    #: The fit of the uniques (``z``; module docstring), exact or from draws of the model.
    z: float
    z_exact: bool
    #: The sample uniques the model expects (``sum_k mu_k e^(-mu_k)``) and those observed.
    expected_uniques: float
    sample_uniques: int
    #: Per class: ``P(F = 1 | f)`` (0 where ``f > 1``) and ``E(1 / F | f)``.
    unique: Floats
    risk: Floats


def expected_uniques(
    m: Margins, edges: Sequence[tuple[int, int]], rng: np.random.Generator
) -> tuple[float, float, bool]:
    """``sum_k mu_k e^(-mu_k)`` and ``sum_k mu_k e^(-mu_k)(1 - mu_k e^(-mu_k))`` over the
    observed values' product, and whether it was enumerated (else drawn from the model)."""
    present = [np.flatnonzero(o > 0) for o in m.one]
    cells = math.prod(len(p) for p in present)
    if cells <= EXACT_CELLS:
        mu = np.exp(_grid_log_mu(m, edges, present)).ravel()
        q = mu * np.exp(-mu)
        return exact_sum(q), exact_sum(q * (1 - q)), True
    mu = np.exp(m.log_mu(draw(m, edges, MONTE_CARLO, rng), edges))
    e = np.exp(-mu)
    return m.n * float(e.mean()), m.n * float((e * (1 - mu * e)).mean()), False


def exact_sum(x: Floats) -> float:
    """The sum of ``x`` (each in [0, 1], fewer than 2^27 of them) in fixed point (2^-36): the
    same figure whatever the order of the cells, at numpy's speed (``math.fsum`` is a Python
    loop)."""
    return float(np.rint(np.asarray(x, dtype=np.float64) * 2.0**36).astype(np.int64).sum()) / 2.0**36


def _grid_log_mu(m: Margins, edges: Sequence[tuple[int, int]], present: Sequence[Ints]) -> Floats:
    """``log mu`` over the whole product of the present values, as a d-dimensional array
    built by broadcasting each margin's term (no gather per cell)."""
    d = len(present)

    def along(axes: tuple[int, ...], term: Floats) -> Floats:
        shape = [1] * d
        for a in axes:
            shape[a] = len(present[a])
        return term.reshape(shape)

    with np.errstate(divide="ignore"):
        logs = [np.log(m.one[v][present[v]] / m.n) for v in range(d)]
        out = np.full([len(p) for p in present], math.log(m.n))
        for v in range(d):
            out = out + along((v,), logs[v])
        for u, v in edges:
            xu, xv = np.meshgrid(present[u], present[v], indexing="ij")
            pair = np.log(m.pair(u, v, xu.ravel(), xv.ravel()) / m.n).reshape(xu.shape)
            out = out + along((u, v), pair - logs[u][:, None] - logs[v][None, :])
    return out


def draw(m: Margins, edges: Sequence[tuple[int, int]], size: int, rng: np.random.Generator) -> list[Ints]:
    """``size`` cells drawn from the fitted forest model (each tree from a root's margin,
    then each child from its pair margin given its parent)."""
    d = len(m.cards)
    near: dict[int, list[int]] = {v: [] for v in range(d)}
    for u, v in edges:
        near[u].append(v)
        near[v].append(u)
    out: list[Ints | None] = [None] * d
    for root in range(d):
        if out[root] is not None:
            continue
        out[root] = rng.choice(m.cards[root], size=size, p=m.one[root] / m.n).astype(np.int64)
        todo = [root]
        while todo:
            parent = todo.pop()
            for child in near[parent]:
                if out[child] is None:
                    out[child] = _child(m, parent, child, out[parent], rng)  # type: ignore[arg-type]
                    todo.append(child)
    return [x for x in out if x is not None]


def _child(m: Margins, parent: int, child: int, xp: Ints, rng: np.random.Generator) -> Ints:
    """Each draw's ``child`` value given its ``parent`` value, from their pair margin."""
    u, v = min(parent, child), max(parent, child)
    keys, counts = m.two[(u, v)]
    pv, cv = (keys // m.cards[v], keys % m.cards[v]) if parent == u else (keys % m.cards[v], keys // m.cards[v])
    order = np.lexsort((cv, pv))
    pv, cv, counts = pv[order], cv[order], counts[order]
    cum = np.cumsum(counts)
    before = np.zeros(m.cards[parent])
    np.add.at(before, pv, counts)
    start = np.cumsum(before) - before  # the mass before each parent value's block
    target = start[xp] + rng.random(len(xp)) * before[xp]
    return cv[np.minimum(np.searchsorted(cum, target, side="right"), len(cv) - 1)].astype(np.int64)


def _forest(edges: Sequence[tuple[int, int]], d: int) -> list[int]:
    parent = list(range(d))

    def root(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    for u, v in edges:
        parent[root(u)] = root(v)
    return [root(a) for a in range(d)]


def select(m: Margins, c1: int, rng: np.random.Generator) -> tuple[list[tuple[int, int]], float, float, bool]:
    """The interactions chosen forward (module docstring), the final ``z``, the sample
    uniques the model expects and whether they were computed exactly."""
    from scipy.special import chdtrc  # the chi-square tail (scipy.stats takes a third of a second to import)

    d = len(m.cards)
    candidates = []
    for u, v in m.two:
        g2, df = m.g2(u, v)
        if chdtrc(df, g2) < 0.05:
            candidates.append((g2, u, v))
    candidates.sort(reverse=True)
    edges: list[tuple[int, int]] = []
    e, var, exact = expected_uniques(m, edges, rng)
    z = (c1 - e) / math.sqrt(var) if var > 0 else 0.0
    for _, u, v in candidates:
        if abs(z) <= Z_STOP or len(edges) == d - 1:
            break
        roots = _forest(edges, d)
        if roots[u] == roots[v]:
            continue
        e2, var2, exact2 = expected_uniques(m, [*edges, (u, v)], rng)
        z2 = (c1 - e2) / math.sqrt(var2) if var2 > 0 else 0.0
        if abs(z2) >= abs(z):
            break
        edges.append((u, v))
        z, e, exact = z2, e2, exact2
    return edges, z, e, exact


def per_record_risk(f: Floats, nu: Floats) -> Floats:
    """``E(1 / F | f)`` with ``F - f ~ Poisson(nu)``, per class (module docstring)."""
    s, w = np.polynomial.legendre.leggauss(NODES)
    s, w = (s + 1) / 2, w / 2
    out = np.empty(len(f))
    step = max(1, (1 << 20) // NODES)
    for i in range(0, len(f), step):
        fi, ni = f[i : i + step, None], nu[i : i + step, None]
        out[i : i + step] = (np.exp(-ni * (1 - s[None, :] ** (1 / fi))) * w[None, :]).sum(axis=1) / fi[:, 0]
    return out


def loglinear(
    codes: Sequence[Ints],
    cards: Sequence[int],
    counts: npt.ArrayLike,
    fraction: float | Floats,
    names: Sequence[str],
    rng: np.random.Generator | None = None,
    interactions: bool = True,
    per_record: bool = True,
) -> LogLinearRisk:
    """The log-linear model's figures for a sample's distinct classes (``codes``, one array
    per key variable, and ``counts`` per class) drawn with ``fraction`` (one sampling
    fraction, or each class's records over their weights); ``interactions=False`` fits the
    main-effects model only; ``per_record=False`` leaves the risk of classes of more than
    one record out (NaN). ``rng`` draws the model where its product is too large to
    enumerate (default: seeded, so that a figure is reproducible)."""
    f = np.asarray(counts, dtype=np.float64)
    rng = rng if rng is not None else np.random.default_rng(0)
    m = Margins.of([np.asarray(c, dtype=np.int64) for c in codes], cards, f)
    c1 = int((f == 1).sum())
    if interactions and len(codes) > 1:
        edges, z, e, exact = select(m, c1, rng)
    else:
        e, var, exact = expected_uniques(m, [], rng)
        edges, z = [], ((c1 - e) / math.sqrt(var) if var > 0 else 0.0)
    mu = np.exp(m.log_mu([np.asarray(c, dtype=np.int64) for c in codes], edges))
    pi = np.clip(np.broadcast_to(np.asarray(fraction, dtype=np.float64), f.shape), 1e-12, 1.0)
    nu = mu * (1 - pi) / pi
    unique = np.where(f == 1, np.exp(-nu), 0.0)
    several = per_record_risk(f, nu) if per_record else np.full(len(f), math.nan)
    risk = np.where(f == 1, np.where(nu > 0, -np.expm1(-nu) / np.maximum(nu, 1e-300), 1.0), several)
    ones = f == 1
    terms = (*names, *(f"{names[u]}:{names[v]}" for u, v in edges))
    return LogLinearRisk(
        terms=tuple(terms),
        tau1=exact_sum(unique),  # fixed point: the same figure whatever the order of the classes
        tau1_sd=math.sqrt(exact_sum(unique * (1 - unique))),
        tau2=exact_sum(risk[ones]),
        z=float(z),
        z_exact=exact,
        expected_uniques=e,
        sample_uniques=c1,
        unique=unique,
        risk=risk,
    )
