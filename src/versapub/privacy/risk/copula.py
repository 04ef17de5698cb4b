"""Population uniqueness from a Gaussian copula of the key variables (issue 69).

Rocher, Hendrickx & de Montjoye, "Estimating the success of re-identifications in
incomplete datasets using generative models", Nature Communications 10:3069 (2019): each
key variable keeps its sample's marginal distribution and their joint is a Gaussian
copula, ``X_v = F_v^{-1}(Phi(Z_v))`` with ``Z ~ N(0, Sigma)``. A cell ``x``'s probability is
the Gaussian rectangle

    p(x) = P(a_v < Z_v <= b_v for every v),   a_v = Phi^{-1}(F_v(x_v^-)),  b_v = Phi^{-1}(F_v(x_v)),

and a person with ``x`` is unique in a population of ``N`` with probability ``(1 -
p(x))^(N-1)`` (their ``xi_x``). A sample unique is unique in the population when none of the
``N - n`` people outside the sample falls in its cell: ``(1 - p(x))^(N - n)``; their sum over
the sample uniques is the estimate (the sample uniques unique in the population, the figure
every other model gives). Its prediction sd is ``sqrt(sum q (1 - q))``.

``Sigma`` is the correlation of the normal scores (each value's mid-rank quantile
``Phi^{-1}((F(x^-) + F(x)) / 2)``, weighted by the records), moved to the nearest correlation
matrix when it is not positive definite; the values of a variable are ordered numerically
when each is a number, else by decreasing frequency (docs/choices.md item 241). ``p(x)`` is
computed by the GHK simulator (Genz, "Numerical computation of multivariate normal
probabilities", J. Comput. Graph. Stat. 1(2), 1992) on :data:`DRAWS` quasi-random points;
above :data:`MAX_CELLS` sample uniques a uniform sample of them stands for all (the scaled
sum's sampling sd is added to the prediction sd).

Cost: ``d * cells * DRAWS`` normal quantiles — about 0.1 s for the 10,000 sample uniques
evaluated at most, of 5 key variables, on one core.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.privacy.risk.loglinear import exact_sum

#: GHK draws per cell.
DRAWS = 64
#: Sample uniques evaluated; above it, a uniform sample of this many.
MAX_CELLS = 10_000

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CopulaRisk:
    """The copula model's estimate and what it rests on."""

    estimate: float
    sd: float
    #: The sample uniques evaluated (all of them, or the sample of :data:`MAX_CELLS`).
    evaluated: int
    sample_uniques: int
    correlation: tuple[tuple[float, ...], ...]


def value_order(counts_of_codes: Floats, order: tuple[Ints, bool] | None) -> Ints:
    """Each code's rank in the variable's order: its values' order when they are numbers
    (``order``: each code's rank among the values and whether they are numbers), else by
    decreasing frequency, ties in the values' order (by code without ``order``)."""
    k = len(counts_of_codes)
    ranks = np.arange(k) if order is None else np.asarray(order[0][:k], dtype=np.int64)
    numeric = order is not None and order[1]
    by = np.argsort(ranks, kind="stable") if numeric else np.lexsort((ranks, -counts_of_codes))
    rank = np.empty(k, dtype=np.int64)
    rank[by] = np.arange(k)
    return rank


def _bounds(codes: Ints, weights: Floats, card: int, rank: Ints) -> tuple[Floats, Floats, Floats]:
    """Per code: the normal quantiles of ``F(x^-)`` and ``F(x)``, and its normal score."""
    from scipy.special import ndtri

    mass = np.bincount(rank[codes], weights=weights, minlength=card) / weights.sum()
    upper = np.minimum(np.cumsum(mass), 1.0)
    lower = upper - mass
    with np.errstate(divide="ignore"):
        a, b = ndtri(np.clip(lower, 0, 1)), ndtri(np.clip(upper, 0, 1))
        score = ndtri(np.clip((lower + upper) / 2, 1e-12, 1 - 1e-12))
    return a[rank], b[rank], score[rank]


def nearest_correlation(c: Floats) -> Floats:
    """``c`` with its eigenvalues raised to at least 1e-6 and its diagonal put back to 1."""
    w, v = np.linalg.eigh((c + c.T) / 2)
    fixed = (v * np.maximum(w, 1e-6)) @ v.T
    d = np.sqrt(np.diag(fixed))
    out: Floats = fixed / np.outer(d, d)
    return out


def correlation(scores: Sequence[Floats], weights: Floats) -> Floats:
    """The weighted correlation of the records' normal scores (module docstring)."""
    x = np.stack(scores, axis=1)
    w = weights / weights.sum()
    mean = w @ x
    xc = x - mean
    cov = (xc * w[:, None]).T @ xc
    sd = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    return nearest_correlation(cov / np.outer(sd, sd))


def kronecker(draws: int, d: int, rng: np.random.Generator) -> Floats:
    """``draws`` points of ``[0, 1)^d``: the Kronecker sequence ``frac(k sqrt(prime_i))``
    (quasi-random, spread more evenly than independent draws), shifted by one uniform draw
    per dimension (Cranley–Patterson), so that each estimate stays unbiased."""
    primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97]
    while len(primes) < d:  # more key variables than listed primes: the next ones
        p = primes[-1] + 2
        while any(p % q == 0 for q in primes):
            p += 2
        primes.append(p)
    alpha = np.sqrt(np.asarray(primes[:d], dtype=np.float64)) % 1.0
    k = np.arange(1, draws + 1, dtype=np.float64)[:, None]
    out: Floats = (k * alpha[None, :] + rng.random(d)[None, :]) % 1.0
    return out


def ghk(a: Floats, b: Floats, chol: Floats, rng: np.random.Generator, draws: int = DRAWS) -> Floats:
    """``P(a < Z <= b)`` per row of ``a``, ``b`` (cells x variables) for ``Z ~ N(0, L L')``,
    by the GHK simulator (Genz 1992) on ``draws`` quasi-random points (:func:`kronecker`)
    shared by every cell (a cell's figure depends on its bounds only, never on the order of
    the cells)."""
    from scipy.special import ndtr, ndtri

    cells, d = a.shape
    out = np.empty(cells)
    u = kronecker(draws, d, rng)
    step = max(1, (1 << 21) // (draws * max(d, 1)))
    for s in range(0, cells, step):
        lo_b, hi_b = a[s : s + step], b[s : s + step]
        m = len(lo_b)
        prob = np.ones((m, draws))
        shift = np.zeros((d, m, draws))  # sum_j<i L_ij e_j, built as each e_j is drawn
        for i in range(d):
            lo = ndtr((lo_b[:, i, None] - shift[i]) / chol[i, i])
            hi = ndtr((hi_b[:, i, None] - shift[i]) / chol[i, i])
            width = np.maximum(hi - lo, 0.0)
            prob *= width
            if i + 1 < d:
                e = ndtri(np.clip(lo + u[None, :, i] * width, 1e-15, 1 - 1e-15))
                for j in range(i + 1, d):
                    if chol[j, i] != 0.0:
                        shift[j] += chol[j, i] * e
        out[s : s + step] = prob.mean(axis=1)
    return out


def copula(
    codes: Sequence[Ints],
    cards: Sequence[int],
    counts: npt.ArrayLike,
    population: float,
    orders: Sequence[tuple[Ints, bool] | None] | None = None,
    rng: np.random.Generator | None = None,
) -> CopulaRisk:
    """The copula model's estimate for a sample's distinct classes (``codes`` per key
    variable, ``counts`` per class) from a population of ``population`` people;
    ``orders``: per variable, each code's rank among its values and whether they are numbers
    (:func:`value_order`; None: by frequency, ties by code). ``rng``
    draws the GHK simulator and the sample of uniques (default: seeded, so that a figure is
    reproducible)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    f = np.asarray(counts, dtype=np.float64)
    n = float(f.sum())
    d = len(codes)
    given = list(orders) if orders is not None else [None] * d
    ranks = [
        value_order(np.bincount(c, weights=f, minlength=max(k, 1)).astype(np.float64), r)
        for c, k, r in zip(codes, cards, given, strict=True)
    ]
    bounds = [
        _bounds(np.asarray(c, dtype=np.int64), f, max(k, 1), r) for c, k, r in zip(codes, cards, ranks, strict=True)
    ]
    scores = [s[np.asarray(c, dtype=np.int64)] for (_, _, s), c in zip(bounds, codes, strict=True)]
    corr: Floats = correlation(scores, f) if d > 1 else np.ones((1, 1))
    ones = np.flatnonzero(f == 1)
    c1 = len(ones)
    pick = ones if c1 <= MAX_CELLS else np.sort(rng.choice(ones, MAX_CELLS, replace=False))
    a = np.stack([lo[np.asarray(c)[pick]] for (lo, _, _), c in zip(bounds, codes, strict=True)], axis=1)
    b = np.stack([hi[np.asarray(c)[pick]] for (_, hi, _), c in zip(bounds, codes, strict=True)], axis=1)
    chol: Floats = np.linalg.cholesky(corr).astype(np.float64)
    p = ghk(a, b, chol, rng) if len(pick) else np.zeros(0)
    outside = max(population - n, 0.0)
    q = np.exp(outside * np.log1p(-np.clip(p, 0.0, 1 - 1e-15)))
    scale = c1 / max(len(pick), 1)
    var = exact_sum(q * (1 - q)) * scale
    if len(pick) < c1:  # the sampled uniques' mean stands for all: its sampling variance
        var += c1**2 * float(q.var(ddof=1)) / len(pick) * (1 - len(pick) / c1)
    return CopulaRisk(
        estimate=exact_sum(q) * scale,
        sd=math.sqrt(var),
        evaluated=len(pick),
        sample_uniques=c1,
        correlation=tuple(tuple(float(x) for x in row) for row in corr),
    )
