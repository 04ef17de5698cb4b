"""The independent check of a differentially private release's budget ledger (issue 52),
from the manifest's ``dp`` section alone, sharing no code with the publisher: every
measurement's noise scale must match its share of the budget (the Gaussian mechanism:
``rho = sensitivity^2 / (2 sigma^2)``, Bun & Steinke 2016, Proposition 1.6), the shares must
add up to no more than the budget, and the composed rho must give (epsilon, delta)-DP at the
stated epsilon and delta — ``delta(rho, epsilon) = min over alpha > 1 of exp((alpha-1)(alpha
rho - epsilon)) (1 - 1/alpha)^alpha / (alpha - 1)`` (Canonne, Kamath & Steinke 2020,
Proposition 12), minimized here numerically by scipy rather than by the publisher's
bisection. A consistent ledger does not prove the noise was drawn: differential privacy
cannot be verified from outputs, and the verdict says so."""

from __future__ import annotations

import math
from typing import Any

from versapub.verify.finding import Finding

#: Relative tolerance of the arithmetic (the manifest's floats are written in full).
TOLERANCE = 1e-6


def _delta(rho: float, epsilon: float) -> float:
    from scipy.optimize import minimize_scalar

    if rho <= 0:
        return 0.0

    def log_delta(log_alpha_minus_1: float) -> float:
        alpha = 1.0 + math.exp(log_alpha_minus_1)
        return (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)

    best = minimize_scalar(
        log_delta, bounds=(-30.0, math.log(epsilon / rho + 10.0)), method="bounded", options={"xatol": 1e-12}
    )
    return min(1.0, math.exp(float(best.fun)))


def ledger_findings(section: Any) -> list[Finding]:
    """The ledger's arithmetic, recomputed: one finding per problem, or one that passes."""
    bad: list[str] = []
    if not isinstance(section, dict):
        return [Finding("dp ledger", False, "The manifest's dp section is not an object: the budget cannot be read.")]
    try:
        epsilon, delta, rho = float(section["epsilon"]), float(section["delta"]), float(section["rho"])
        rows = list(section["measurements"])
    except (KeyError, TypeError, ValueError):
        return [Finding("dp ledger", False, "The manifest's dp ledger lacks epsilon, delta, rho or measurements.")]
    if not (epsilon > 0 and 0 < delta < 1 and rho > 0):
        bad.append(f"the budget (epsilon {epsilon}, delta {delta}, rho {rho}) is not a budget")
    spent = 0.0
    for i, m in enumerate(rows):
        try:
            sigma, share, sens = float(m["sigma"]), float(m["rho"]), float(m.get("sensitivity", 1.0))
        except (KeyError, TypeError, ValueError):
            bad.append(f"measurement {i + 1} lacks its noise scale or its share")
            continue
        if not (sigma > 0 and share > 0 and sens > 0):
            bad.append(f"measurement {i + 1} ({m.get('marginal')}) has a non-positive scale or share")
            continue
        implied = sens * sens / (2 * sigma * sigma)
        if abs(implied - share) > TOLERANCE * share:
            bad.append(
                f"measurement {i + 1} ({', '.join(map(str, m.get('marginal') or []))}) claims rho {share:.6g}, but "
                f"noise of scale {sigma:.6g} at sensitivity {sens:g} gives rho {implied:.6g}"
            )
        spent += share
    claimed = section.get("spent_rho")
    if claimed is not None:  # issue 71: the steps must add up to what the ledger says was spent
        try:
            if abs(float(claimed) - spent) > TOLERANCE * max(spent, float(claimed), 1e-300):
                bad.append(
                    f"the steps spend rho {spent:.6g} in all, but the ledger states spent_rho {float(claimed):.6g}"
                )
        except (TypeError, ValueError):
            bad.append(f"spent_rho {claimed!r} is not a number")
    if spent > rho * (1 + TOLERANCE):
        bad.append(f"the measurements spend rho {spent:.6g}, more than the budget's {rho:.6g}")
    if spent > 0 and 0 < delta < 1 and epsilon > 0 and _delta(spent, epsilon) > delta * (1 + 1e-3):
        bad.append(
            f"rho {spent:.6g} composes to (epsilon {epsilon:g}, delta {_delta(spent, epsilon):.3g}), over the stated "
            f"delta {delta:g}"
        )
    if bad:
        return [Finding("dp ledger", False, f"The budget ledger is inconsistent: {b}.") for b in bad]
    return [
        Finding(
            "dp ledger",
            True,
            f"The ledger is consistent: {len(rows)} measurement(s) spend rho {spent:.6g} of {rho:.6g}, which is "
            f"(epsilon {epsilon:g}, delta {delta:g})-DP; differential privacy rests on the mechanism, which no "
            "check of the published files can prove.",
        )
    ]
