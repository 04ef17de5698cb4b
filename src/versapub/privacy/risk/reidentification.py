"""Re-identification risk from equivalence-class sizes (issue 32).

A table's *classes* are its records grouped by their values of the quasi-identifiers
(``f_k`` records in class ``k`` of the sample, ``F_k`` in the population it was drawn from).
Everything here is a function of the class sizes, vectorized over classes:

* **Prosecutor model** (El Emam & Dankar, "Protecting privacy using k-anonymity", JAMIA
  2008; El Emam, *Guide to the De-Identification of Personal Health Information*, 2013, ch.
  "Measuring the probability of re-identification"; as ARX's ``RiskModelSampleSummary``):
  the attacker knows the person is in the sample; a record's risk is ``1/f_k``; the highest
  risk ``1/min f_k``; the average risk (the share of records re-identified on average)
  ``|classes| / n``; records at risk: the share with ``1/f_k`` above a threshold.
* **Journalist model**: the attacker does not know whether the person is in the sample and
  matches against the population; a record's risk is ``1/F_k``; highest ``1/min F_k``;
  records at risk the share of sample records with ``1/F_k`` above the threshold; average
  ``max(|classes| / sum_k F_k, sum_k (f_k/F_k) / n)`` (ARX's success rate).
* **Marketer model**: the attacker re-identifies as many records as they can; the expected
  share ``sum_k (f_k/F_k) / n``.
* **Individual risk** (Benedetti & Franconi, "Statistical and technological solutions for
  controlled data dissemination", NTTS 1998; sdcMicro's ``measure_risk``): with ``F_k``
  unknown and ``p_k = f_k / F^_k`` (``F^_k`` the sum of the class's sampling weights),
  the posterior of ``F_k - f_k`` is negative binomial and the risk ``E[1/F_k | f_k]`` is
  ``(p/f) 2F1(1, 1; f + 1; 1 - p)`` (the integral ``p^f \\int_0^1 t^(f-1) (1 - (1-p) t)^(-f)
  dt`` after Euler's transformation; ``p (-log p)/(1 - p)`` for ``f = 1``, ``1/f`` for
  ``p = 1``); the global risk is the expected number of re-identifications ``sum_i r_i``.

Population class sizes, when no population is given, are estimated from the sample
(choice 157): ``F^_k = sum of the class's weights`` with sampling weights, else ``f_k / pi``
for a sampling fraction ``pi``; with neither, the sample is its own population (``F = f``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from versapub.errors import InputError

Sizes = npt.NDArray[np.float64]


def _sizes(f: npt.ArrayLike, what: str = "class sizes") -> Sizes:
    a = np.asarray(f, dtype=np.float64)
    if a.ndim != 1 or (a.size and (not np.all(np.isfinite(a)) or a.min() <= 0)):
        raise InputError(f"The {what} must be positive numbers, one per class.")
    return a


def _sum(a: npt.NDArray[np.float64]) -> float:
    """The correctly rounded sum (the same whatever the classes' order: a release read from
    its files and in memory list its classes in different orders)."""
    return math.fsum(a.tolist())


def check_threshold(threshold: float) -> float:
    """A record-risk threshold in (0, 1] (one-paragraph error otherwise)."""
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or not 0 < threshold <= 1:
        raise InputError(
            f"The risk threshold is a probability in (0, 1] (a record is at risk above it), got {threshold!r}."
        )
    return float(threshold)


@dataclass(frozen=True)
class ModelRisk:
    """One attacker model's summary: the highest record risk, the average (the share of
    records re-identified on average), and the share (and count) of records whose risk is
    above ``threshold``."""

    highest: float
    average: float
    records_at_risk: float
    records_at_risk_count: int
    threshold: float

    def to_json(self) -> dict[str, Any]:
        return {
            "highest": self.highest,
            "average": self.average,
            "records_at_risk": self.records_at_risk,
            "records_at_risk_count": self.records_at_risk_count,
            "threshold": self.threshold,
        }


def prosecutor(f: npt.ArrayLike, threshold: float) -> ModelRisk:
    """The prosecutor model over sample class sizes ``f`` (module docstring)."""
    f = _sizes(f)
    threshold = check_threshold(threshold)
    n = _sum(f)
    if not n:
        return ModelRisk(0.0, 0.0, 0.0, 0, threshold)
    at_risk = int(f[1.0 / f > threshold].sum())
    return ModelRisk(float(1.0 / f.min()), float(len(f) / n), at_risk / n, at_risk, threshold)


def journalist(f: npt.ArrayLike, big_f: npt.ArrayLike, threshold: float) -> ModelRisk:
    """The journalist model: sample class sizes ``f``, population class sizes ``big_f``
    (given or estimated, at least ``f``), as ARX computes it (module docstring)."""
    f, big_f = _sizes(f), _sizes(big_f, "population class sizes")
    threshold = check_threshold(threshold)
    n = _sum(f)
    if not n:
        return ModelRisk(0.0, 0.0, 0.0, 0, threshold)
    at_risk = int(f[1.0 / big_f > threshold].sum())
    average = max(len(f) / _sum(big_f), _sum(f / big_f) / n)
    return ModelRisk(float(1.0 / big_f.min()), average, at_risk / n, at_risk, threshold)


def marketer(f: npt.ArrayLike, big_f: npt.ArrayLike) -> float:
    """The marketer model's expected share of records re-identified: ``sum f/F / n``."""
    f, big_f = _sizes(f), _sizes(big_f, "population class sizes")
    n = _sum(f)
    return _sum(f / big_f) / n if n else 0.0


def population_sizes(
    f: npt.ArrayLike, *, sampling_fraction: float = 1.0, weights: npt.ArrayLike | None = None
) -> Sizes:
    """Estimated population class sizes (choice 157): the classes' sums of sampling weights,
    else ``f / sampling_fraction``; never below ``f`` (a class holds its sample records)."""
    f = _sizes(f)
    if weights is not None:
        w = _sizes(weights, "sums of sampling weights")
        return np.maximum(w, f)
    return np.maximum(f / check_fraction(sampling_fraction), f)


def check_fraction(pi: float) -> float:
    """A sampling fraction in (0, 1]."""
    if not isinstance(pi, (int, float)) or isinstance(pi, bool) or not 0 < pi <= 1:
        raise InputError(
            f"The sampling fraction is the share of the population in the data, in (0, 1], got {pi!r} "
            "(or give --population-size N with N at least the number of records)."
        )
    return float(pi)


#: From this class size on, ``2F1(1, 1; f + 1; z)`` is summed as its series (scipy's
#: ``hyp2f1`` overflows or returns NaN there: f = 100, z = 0.99 gives inf).
SERIES_FROM = 50


def _hyp2f1_series(f: Sizes, z: Sizes) -> Sizes:
    """``2F1(1, 1; f + 1; z) = sum_n n! z^n / (f + 1)_n`` for ``f >= SERIES_FROM`` and
    ``0 <= z < 1``: each term is the last times ``(n + 1) z / (f + 1 + n)`` (below 1), and
    the first ``f / 2`` ratios are below 1/2, so the terms vanish fast; summed until every
    term is below ``1e-17`` of its sum."""
    total = np.ones_like(f)
    term = np.ones_like(f)
    n = 0
    while True:
        term = term * (n + 1) * z / (f + 1 + n)
        total += term
        n += 1
        if not (term > 1e-17 * total).any():
            return total


def individual_risk(f: npt.ArrayLike, big_f: npt.ArrayLike) -> Sizes:
    """Benedetti–Franconi's individual risk ``E[1/F_k | f_k]`` of each class (module
    docstring), ``p_k = f_k / F^_k``.  The exact expectation: sdcMicro's ``measure_risk``
    differs slightly (it shifts ``p`` by 1e-4 and approximates the series for ``f >= 3``: up to
    1.5 % per class; docs/risk.md).  Defined (finite, in ``(0, 1]``) for every class size."""
    f, big_f = _sizes(f), _sizes(big_f, "population class sizes")
    p = np.clip(f / big_f, 0.0, 1.0)
    out = np.empty_like(f)
    whole = p >= 1.0
    out[whole] = 1.0 / f[whole]
    small = ~whole & (f < SERIES_FROM)
    out[small] = p[small] / f[small] * special.hyp2f1(1.0, 1.0, f[small] + 1.0, 1.0 - p[small])
    large = ~whole & ~small
    if large.any():
        out[large] = p[large] / f[large] * _hyp2f1_series(f[large], 1.0 - p[large])
    return out


def global_risk(f: npt.ArrayLike, risk: npt.ArrayLike) -> float:
    """sdcMicro's global risk: the expected number of re-identifications, ``sum_k f_k r_k``."""
    return _sum(_sizes(f) * np.asarray(risk, dtype=np.float64))


def risk_histogram(f: npt.ArrayLike, risk: npt.ArrayLike, edges: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Records per bin ``(edges[i], edges[i+1]]`` of record risk (``edges`` from 0 to 1;
    each class's ``f_k`` records carry its risk; a risk of 0 counts in the first bin)."""
    e = np.asarray(edges, dtype=np.float64)
    r = np.asarray(risk, dtype=np.float64)
    idx = np.clip(np.searchsorted(e, r, side="left") - 1, 0, len(e) - 2)
    return np.bincount(idx, weights=_sizes(f), minlength=len(e) - 1).round().astype(np.int64)


def prosecutor_of_sizes(sizes: dict[int, int], threshold: float) -> ModelRisk:
    """:func:`prosecutor` from ``{class size: number of classes}`` (what the identity check
    reports per table), without listing the classes."""
    threshold = check_threshold(threshold)
    f = np.array(sorted(sizes), dtype=np.float64)
    c = np.array([sizes[int(x)] for x in f], dtype=np.float64)
    n = _sum(f * c)
    if not n:
        return ModelRisk(0.0, 0.0, 0.0, 0, threshold)
    at_risk = int(_sum((f * c)[1.0 / f > threshold]))
    return ModelRisk(float(1.0 / f.min()), _sum(c) / n, at_risk / n, at_risk, threshold)


def per_record(sizes: npt.ArrayLike, counts: npt.ArrayLike, big: npt.ArrayLike, threshold: float) -> dict[str, Any]:
    """The prosecutor, journalist and marketer figures when each row's records have a size
    of their own (``sizes``: the records compatible with them, which need not partition the
    table — a missing value matching any value, :mod:`versapub.privacy.risk.missing_match`):
    ``counts`` records per row, ``big`` their population sizes.  With ``sizes == counts`` the
    same as :func:`prosecutor`, :func:`journalist` and :func:`marketer`."""
    s, big_s = _sizes(sizes), _sizes(big, "population class sizes")
    c = np.asarray(counts, dtype=np.float64)
    threshold = check_threshold(threshold)
    n = _sum(c)
    if not n:
        zero = ModelRisk(0.0, 0.0, 0.0, 0, threshold)
        return {"prosecutor": zero, "journalist": zero, "marketer": 0.0}
    p_risk = int(_sum(c[1.0 / s > threshold]))
    j_risk = int(_sum(c[1.0 / big_s > threshold]))
    return {
        "prosecutor": ModelRisk(float(1.0 / s.min()), _sum(c / s) / n, p_risk / n, p_risk, threshold),
        "journalist": ModelRisk(float(1.0 / big_s.min()), _sum(c / big_s) / n, j_risk / n, j_risk, threshold),
        "marketer": _sum(c / big_s) / n,
    }
