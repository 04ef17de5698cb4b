"""Zero-concentrated differential privacy accounting: a budget (epsilon, delta) as the zCDP
parameter rho it allows, and back.

A mechanism is rho-zCDP (Bun & Steinke, TCC 2016, Definition 1.1) when the Rényi divergence of
order alpha between its outputs on neighbouring tables is at most ``rho * alpha`` for every
alpha > 1. Compositions add their rho (their Lemma 2.3). Such a mechanism is
(epsilon, delta)-DP for ``delta = inf_{alpha > 1} exp((alpha-1)(alpha rho - epsilon)) /
(alpha-1) * (1 - 1/alpha)^alpha`` (Canonne, Kamath & Steinke, NeurIPS 2020, Proposition 12;
the conversion Private-PGM's MST and AIM use, tighter than Bun & Steinke's
``epsilon = rho + 2 sqrt(rho ln(1/delta))``). ``docs/choices.md`` 208."""

from __future__ import annotations

import math
from collections.abc import Callable

from versapub.errors import InputError

#: Bisection steps (each halves an interval; 200 reach the float's resolution).
STEPS = 200


def check_budget(epsilon: float, delta: float) -> None:
    """Refuse a budget that is not one: epsilon > 0, 0 < delta < 1."""
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"The privacy budget's epsilon must be a positive number, got {epsilon!r}.")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise InputError(f"The privacy budget's delta must lie strictly between 0 and 1, got {delta!r}.")


def delta_of(rho: float, epsilon: float) -> float:
    """The smallest delta a rho-zCDP mechanism is (epsilon, delta)-DP with (Canonne, Kamath &
    Steinke 2020, Proposition 12): the infimum over alpha found by bisection on its
    derivative, ``(2 alpha - 1) rho - epsilon + ln(1 - 1/alpha)``, which increases in alpha."""
    if rho <= 0:
        return 0.0
    lo, hi = 1.0 + 1e-9, (epsilon + 1.0) / (2.0 * rho) + 2.0
    for _ in range(STEPS):
        alpha = (lo + hi) / 2
        if (2 * alpha - 1) * rho - epsilon + math.log1p(-1.0 / alpha) < 0:
            lo = alpha
        else:
            hi = alpha
    alpha = (lo + hi) / 2
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1)
    return min(1.0, math.exp(log_delta))


def epsilon_of(rho: float, delta: float) -> float:
    """The smallest epsilon with :func:`delta_of` ``<= delta`` (delta decreases in epsilon)."""
    if rho <= 0:
        return 0.0
    top = rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1.0  # Bun & Steinke's bound lies below it
    return _boundary(lambda eps: delta_of(rho, eps) > delta, 0.0, top)[1]


def rho_of(epsilon: float, delta: float) -> float:
    """The largest rho whose mechanisms are (epsilon, delta)-DP (delta increases in rho)."""
    check_budget(epsilon, delta)
    return _boundary(lambda rho: delta_of(rho, epsilon) <= delta, 0.0, epsilon + 1.0)[0]


def _boundary(below: Callable[[float], bool], lo: float, hi: float) -> tuple[float, float]:
    """Where ``below`` (true from ``lo`` up to a point, false after it up to ``hi``) turns,
    as the last point where it holds and the first where it does not, by bisection."""
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        if below(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def gaussian_sigma(rho: float, sensitivity: float = 1.0) -> float:
    """The Gaussian mechanism's noise scale for ``rho``-zCDP: adding N(0, sigma^2) to a query
    of L2 sensitivity ``Delta`` is ``Delta^2 / (2 sigma^2)``-zCDP (Bun & Steinke 2016,
    Proposition 1.6; the discrete Gaussian of Canonne, Kamath & Steinke 2020, Theorem 4, is as
    private), so ``sigma = Delta / sqrt(2 rho)``."""
    if not rho > 0:
        raise InputError(f"A measurement's share of the budget (rho) must be positive, got {rho!r}.")
    if not sensitivity > 0:
        raise InputError(f"A measurement's sensitivity must be positive, got {sensitivity!r}.")
    return sensitivity / math.sqrt(2.0 * rho)
