"""Population uniqueness estimated from a sample (issue 32): how many sample records are
also unique in the population the sample was drawn from (sampling fraction ``pi``).

All three models read only the sample's class-size histogram ``c_j`` (the number of
classes holding ``j`` sample records; ``n = sum j c_j`` records, ``u = sum c_j`` classes):

* **Zayatz** ("Estimation of the number of unique population elements using a sample",
  Census SRD report, 1991): ``P(population unique | sample unique) = c_1 h(1) /
  sum_j c_j h(j)``, ``h(j)`` the hypergeometric probability that a population class of
  ``j`` elements leaves exactly one in a sample of ``n`` from ``N = n / pi``, with the
  sample's class sizes standing for the population's; ``c_1`` times it are the sample
  uniques unique in the population.
* **Pitman** (Hoshino, "Applying Pitman's sampling formula to microdata disclosure risk
  assessment", J. Official Statistics 17(4), 2001): the maximum-likelihood ``(theta,
  alpha)`` of Pitman's sampling formula for the sample's partition, and ``U =
  Gamma(theta+1)/Gamma(theta+alpha) N^alpha`` population uniques.
* **SNB** (Chen & Keller-McNulty, "Estimation of identification disclosure risk in
  microdata", J. Official Statistics 14(1), 1998): population class sizes ``F - 1`` negative
  binomial ``(alpha, beta)`` over ``K`` classes, sample sizes binomial thinnings of them;
  ``K, alpha, beta`` solve ``E u = u, E c_1 = c_1, E c_2 = c_2`` (``K`` within the model
  from the classes the sample saw, not Shlosser's estimate ARX uses: choice 158), and ``U
  = K beta^alpha``.
* **Dankar et al.'s decision rule** ("Estimating the re-identification risk of clinical
  data sets", BMC Medical Informatics and Decision Making 12:66, 2012; as ARX applies it):
  Pitman when ``pi <= 0.1`` (Zayatz when Pitman gives no valid estimate), else the smaller
  of Zayatz and SNB (Zayatz when SNB gives none).

A model's estimate counts *sample* records unique in the population: ``U pi`` for models of
``U`` population uniques (each is in the sample with probability ``pi``), clipped to
``[0, c_1]`` (a population unique in the sample is a sample unique) — choice 158.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Histogram = dict[int, int]

#: ``pi`` at or below which Dankar et al.'s rule trusts Pitman's model.
DANKAR_PITMAN_MAX = 0.1


def histogram(f: npt.ArrayLike) -> Histogram:
    """``{class size: number of classes}`` of integer class sizes ``f``."""
    a = np.asarray(f, dtype=np.int64)
    if not a.size:
        return {}
    sizes, counts = np.unique(a, return_counts=True)
    return {int(s): int(c) for s, c in zip(sizes, counts, strict=True)}


def _arrays(h: Histogram) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float, float]:
    j = np.array(sorted(h), dtype=np.float64)
    c = np.array([h[int(x)] for x in j], dtype=np.float64)
    return j, c, float((j * c).sum()), float(c.sum())


def _one_left(big_n: int, j: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.float64]:
    """The hypergeometric probability that a population class of ``j`` leaves exactly one
    record in a sample of ``n`` from ``N``: ``j C(N - j, n - 1) / C(N, n)`` (by log-gamma:
    scipy.stats costs a third of a second to import)."""
    from scipy.special import gammaln  # scipy's modules take time to import: only when measured

    def log_choose(a: npt.NDArray[np.float64] | float, b: float) -> npt.NDArray[np.float64]:
        return np.asarray(gammaln(np.asarray(a) + 1) - gammaln(b + 1) - gammaln(np.asarray(a) - b + 1))

    ok = (big_n - j) >= (n - 1)
    rest = np.where(ok, big_n - j, n - 1.0)
    out = np.exp(np.log(j) + log_choose(rest, n - 1.0) - log_choose(float(big_n), float(n)))
    return np.where(ok & (j >= 1), out, 0.0)


def zayatz(h: Histogram, pi: float) -> float:
    """Zayatz's estimate of the sample uniques that are population uniques."""
    c1 = h.get(1, 0)
    if not c1:
        return 0.0
    j, c, n, _ = _arrays(h)
    big_n = max(round(n / pi), int(n))
    hj = _one_left(big_n, j, int(n))
    denom = float((c * hj).sum())
    return c1 * (c1 * float(_one_left(big_n, np.array([1.0]), int(n))[0])) / denom if denom > 0 else math.nan


def _pitman_loglik(params: npt.NDArray[np.float64], j: Any, c: Any, n: float, u: float) -> float:
    from scipy import special  # scipy's modules take ~1 s to import: only when measured

    theta, alpha = math.exp(params[0]), special.expit(params[1])
    r = theta / alpha
    ll = (u - 1) * math.log(alpha) + special.gammaln(r + u) - special.gammaln(r + 1)
    ll += special.gammaln(theta + 1) - special.gammaln(theta + n)
    ll += float((c * (special.gammaln(j - alpha) - special.gammaln(1 - alpha))).sum())
    return -float(ll)


def pitman(h: Histogram, pi: float) -> float:
    """Pitman's (Hoshino's) estimate of the sample uniques that are population uniques
    (NaN when the likelihood has no interior maximum or the estimate leaves [0, N])."""
    from scipy import optimize, special  # scipy's modules take ~1 s to import: only when measured

    if not h.get(1, 0):
        return 0.0
    j, c, n, u = _arrays(h)
    if u < 2 or u >= n:  # one class, or every record alone: no interior maximum
        return math.nan
    big_n = n / pi
    best = None
    for start in ((math.log(max(u, 1.0)), 0.0), (0.0, 1.0), (math.log(n), -2.0)):
        res = optimize.minimize(
            _pitman_loglik,
            np.array(start),
            args=(j, c, n, u),
            method="Nelder-Mead",
            options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 4000},
        )
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    theta, alpha = math.exp(best.x[0]), float(special.expit(best.x[1]))
    log_u = special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * math.log(big_n)
    uniques = math.exp(log_u) if log_u < 700 else math.inf
    return uniques * pi if 0 <= uniques <= big_n else math.nan


def snb_probabilities(alpha: float, beta: float, pi: float) -> tuple[float, float, float]:
    """P(a class leaves 0), P(it leaves 1) and P(it leaves 2 records in the sample) when its
    population size is 1 + NegBin(alpha, beta) and each record is sampled with probability
    ``pi`` (from the generating function ``x (beta / (1 - (1-beta) x))^alpha`` at ``x = 1 -
    pi + pi t``: its value, first and second derivative at ``t = 0``)."""
    d = (1 - beta) * (1 - pi)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        base = math.exp(alpha * (math.log(beta) - math.log1p(-d)))
        p0 = (1 - pi) * base
        p1 = pi * base * (1 + alpha * d / (1 - d))
        p2 = pi**2 / 2 * alpha * base * (1 - beta) / (1 - d) ** 2 * (2 - (1 - alpha) * d)
    return p0, p1, p2


def snb(h: Histogram, pi: float) -> float:
    """The SNB model's estimate of the sample uniques that are population uniques (NaN when
    the two equations have no solution)."""
    from scipy import optimize, special  # scipy's modules take ~1 s to import: only when measured

    c1, c2 = h.get(1, 0), h.get(2, 0)
    if not c1:
        return 0.0
    if not c2 or pi >= 1:
        return math.nan
    u = sum(h.values())

    def residual(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        p0, p1, p2 = snb_probabilities(math.exp(x[0]), float(special.expit(x[1])), pi)
        seen = u / (1 - p0)  # K: the sample's classes are the classes that left a record
        return np.array([seen * p1 / c1 - 1, seen * p2 / c2 - 1])

    best = None
    for start in ((0.0, 0.0), (-2.0, 2.0), (2.0, -2.0), (-4.0, 4.0)):
        try:
            res = optimize.least_squares(residual, np.array(start), method="lm", xtol=1e-12, ftol=1e-12)
        except (ValueError, FloatingPointError):
            continue
        if best is None or res.cost < best.cost:
            best = res
    if best is None or best.cost > 1e-8:
        return math.nan
    alpha, beta = math.exp(best.x[0]), float(special.expit(best.x[1]))
    k = u / (1 - snb_probabilities(alpha, beta, pi)[0])
    uniques = k * beta**alpha
    return uniques * pi if 0 <= uniques <= k else math.nan


@dataclass(frozen=True)
class Uniqueness:
    """The sample uniques, each model's estimate of those unique in the population (NaN:
    no valid estimate, or not computed) and the chosen model's (``model``) as ``estimate``,
    with its prediction sd where the model has one. ARX's models are always computed; the
    log-linear and copula models (:mod:`versapub.privacy.risk.population`) with a sampling
    fraction below 1."""

    records: int
    sample_uniques: int
    sampling_fraction: float
    zayatz: float
    pitman: float
    snb: float
    estimate: float
    model: str
    loglinear: float = math.nan
    loglinear_sd: float = math.nan
    #: The log-linear model's terms (main effects, then interactions ``a:b``) and its fit
    #: to the uniques (``z``, :mod:`versapub.privacy.risk.loglinear`).
    loglinear_terms: tuple[str, ...] = ()
    loglinear_z: float = math.nan
    #: ``(expected - observed) / observed`` sample uniques under the log-linear model.
    loglinear_misfit: float = math.nan
    #: The log-linear model's expected correct matches of the sample uniques (``tau_2``).
    correct_matches: float = math.nan
    copula: float = math.nan
    copula_sd: float = math.nan
    copula_evaluated: int = 0
    #: Dankar et al.'s choice among ARX's models (``arx``).
    arx_model: str = ""
    sd: float = math.nan
    #: Why the estimate is ``model``'s (:mod:`versapub.privacy.risk.population`).
    chosen_by: str = ""

    @property
    def share(self) -> float:
        return self.estimate / self.records if self.records else 0.0

    def interval(self) -> tuple[float, float] | None:
        """The estimate +- 1.96 prediction sds, within [0, sample uniques] (None: no sd)."""
        if math.isnan(self.sd):
            return None
        return max(self.estimate - 1.96 * self.sd, 0.0), min(self.estimate + 1.96 * self.sd, float(self.sample_uniques))

    def to_json(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        models = {"zayatz": num(self.zayatz), "pitman": num(self.pitman), "snb": num(self.snb)}
        extra: dict[str, Any] = {}
        if not math.isnan(self.loglinear):
            models = {"loglinear": self.loglinear, "copula": num(self.copula), **models}
            extra = {
                "loglinear": {
                    "terms": list(self.loglinear_terms),
                    "z": self.loglinear_z,
                    "misfit": self.loglinear_misfit,
                    "sd": self.loglinear_sd,
                    "correct_matches": self.correct_matches,
                },
                "copula": {"sd": num(self.copula_sd), "evaluated": self.copula_evaluated},
                "arx_model": self.arx_model,
                "chosen_by": self.chosen_by,
            }
        iv = self.interval()
        return {
            "estimate": self.estimate,
            "share": self.share,
            "model": self.model,
            **({} if iv is None else {"interval": list(iv)}),
            "population_estimate": self.estimate / self.sampling_fraction,
            "sampling_fraction": self.sampling_fraction,
            "models": models,
            **extra,
        }


def population_uniques(h: Histogram, pi: float) -> Uniqueness:
    """Every model and Dankar et al.'s choice among them (module docstring); with ``pi = 1``
    the sample is the population and its uniques are the answer."""
    c1 = h.get(1, 0)
    n = sum(j * c for j, c in h.items())
    if pi >= 1 or not c1:
        how = "sample is the population" if pi >= 1 else "no sample uniques"
        return Uniqueness(n, c1, pi, float(c1), float(c1), float(c1), float(c1) if pi >= 1 else 0.0, how)
    z, p, s = (min(max(x, 0.0), c1) if not math.isnan(x) else x for x in (zayatz(h, pi), pitman(h, pi), snb(h, pi)))
    if pi <= DANKAR_PITMAN_MAX:
        est, model = (p, "pitman") if not math.isnan(p) else (z, "zayatz")
    elif not math.isnan(s) and s < z:
        est, model = s, "snb"
    else:
        est, model = z, "zayatz"
    return Uniqueness(n, c1, pi, z, p, s, 0.0 if math.isnan(est) else est, model)
