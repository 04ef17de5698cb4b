"""With the original: the noise a differentially private release's ``noisy`` tables carry
has the scale their ledger states (issue 71). A release whose noisy tables were replaced by
the exact counts, or whose noise was shrunk, keeps a consistent ledger and passes every
check from the files; with the input the verifier can see it.

Each cell's deviation ``d = noisy - true`` is one draw of the discrete Gaussian with the
table's ``sigma`` (Canonne, Kamath & Steinke 2020): mean 0, variance ``v = sum k^2 w_k /
sum w_k`` and fourth moment ``sum k^4 w_k / sum w_k`` with ``w_k = exp(-k^2 / (2 sigma^2))``
(exact, not the continuous ``sigma^2``, which overstates it below ``sigma = 1``). The sum
``S = sum d^2`` over a table's ``m`` cells has mean ``m v`` and variance ``m (mu4 - v^2)``;
it is tested two-sided against the gamma distribution with those two moments (exactly the
chi-square ``sigma^2 chi^2_m`` in the continuous limit), per table and pooled over every
noisy table. The false-alarm rate of a genuine release is at most :data:`FALSE_ALARM` in all
(Bonferroni over the tables and the pooled test). Too little spread (the exact counts: ``S =
0``) and too much both fail."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from versapub.verify.finding import Finding

#: The largest probability that the verifier fails a genuine release's noise, over all its tables.
FALSE_ALARM = 1e-6


def _weights(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    top = math.ceil(40 * sigma) + 10
    k = np.arange(-top, top + 1, dtype=np.float64)
    w = np.exp(-(k**2) / (2 * sigma * sigma))
    return k, w / w.sum()


def moments(sigma: float) -> tuple[float, float]:
    """The discrete Gaussian's variance and fourth moment at scale ``sigma``."""
    k, w = _weights(sigma)
    return float((k**2 * w).sum()), float((k**4 * w).sum())


def within(sigma: float, bound: float) -> float:
    """``P(|k| <= bound)`` for one discrete Gaussian draw at scale ``sigma``."""
    k, w = _weights(sigma)
    return float(w[np.abs(k) <= bound].sum())


def deviations(original: Any, entry: dict[str, Any], rows: list[tuple[Any, ...]]) -> np.ndarray | None:
    """Each published cell's noisy count less the input's true count over the entry's declared
    domains (a merged value counts every value it stands for); None when the input lacks an
    attribute or a row cannot be read."""
    attrs = [str(a) for a in entry.get("attributes") or []]
    doms = entry.get("domains") or {}
    merged = entry.get("merged") or {}
    index: list[dict[str, int]] = []
    codes = []
    for a in attrs:
        if a not in getattr(original, "names", ()):
            return None
        values = [str(v) for v in doms.get(a) or []]
        pos = {v: i for i, v in enumerate(values)}
        spec = merged.get(a) if isinstance(merged, dict) else None
        if isinstance(spec, dict) and str(spec.get("label")) in pos:
            for v in spec.get("values") or []:
                pos[str(v)] = pos[str(spec["label"])]
        index.append(pos)
        col = original.column(a)
        lookup = np.array([pos.get(str(v), -1) for v in col.values], dtype=np.int64)
        codes.append(lookup[np.asarray(col.codes, dtype=np.int64)])
    sizes = [max(p.values()) + 1 if p else 1 for p in index]
    inside = np.all([c >= 0 for c in codes], axis=0) if codes else np.zeros(0, dtype=bool)
    flat = np.ravel_multi_index([c[inside] for c in codes], sizes) if codes else np.zeros(0, dtype=np.int64)
    true = np.bincount(flat, minlength=math.prod(sizes)) if codes else np.zeros(1)
    out = np.empty(len(rows), dtype=np.float64)
    for i, row in enumerate(rows):
        try:
            cell = np.ravel_multi_index([index[j][str(row[j])] for j in range(len(attrs))], sizes)
            out[i] = float(row[-1]) - float(true[cell])
        except (KeyError, ValueError, TypeError):
            return None
    return out


def _p_two_sided(total: float, mean: float, var: float, floor: float = 0.0) -> float:
    """The two-sided tail probability of ``total`` under the gamma with this mean and
    variance; ``floor``: a lower bound of the true lower tail ``P(S <= total)`` that the
    lattice gives (the gamma has no mass at 0, the discrete sum has: all deviations 0)."""
    from scipy.stats import gamma

    if var <= 0 or mean <= 0:
        return 1.0 if total == mean else 0.0
    shape, scale = mean * mean / var, var / mean
    low = max(float(gamma.cdf(total, shape, scale=scale)), floor)
    return float(min(1.0, 2 * min(low, gamma.sf(total, shape, scale=scale))))


def scale_findings(tests: list[tuple[str, float, float, float, int, float]]) -> list[Finding]:
    """Per noisy table ``(file, sum of squared deviations, its mean, its variance, cells,
    P(S <= sum) at least)`` and pooled: the noise has the stated scale (module docstring).
    The lower tail is never read below what the lattice guarantees — every deviation at most
    ``sqrt(S / m)`` in size has probability ``P(|k| <= sqrt(S/m))^m`` — so that a table of a
    few cells whose deviations happen to be 0 is not mistaken for exact counts."""
    if not tests:
        return []
    alpha = FALSE_ALARM / (len(tests) + 1)
    out = []
    for file, total, mean, var, cells, floor in tests:
        p = _p_two_sided(total, mean, var, floor)
        ok = p >= alpha
        out.append(
            Finding(
                "dp noise",
                ok,
                f"the deviations from the input's counts have the stated scale over {cells:,} cells "
                f"(sum of squares {total:,.1f}, expected {mean:,.1f}; p = {p:.2g})"
                if ok
                else f"the deviations from the input's counts do not have the stated scale: their sum of squares "
                f"over {cells:,} cells is {total:,.1f} where the ledger's noise gives {mean:,.1f} (p = {p:.2g} < "
                f"{alpha:.1g}): the noise is not what the ledger says",
                file,
            )
        )
    total, mean, var = (float(sum(float(t[i]) for t in tests)) for i in (1, 2, 3))
    p = _p_two_sided(total, mean, var, math.prod(t[5] for t in tests) if total == 0 else 0.0)
    ok = p >= alpha
    out.append(
        Finding(
            "dp noise",
            ok,
            f"over every noisy table the deviations have the stated scale (p = {p:.2g}; false alarms at most "
            f"{FALSE_ALARM:g} in all)"
            if ok
            else f"over every noisy table the deviations' sum of squares is {total:,.1f} where the ledger's noise "
            f"gives {mean:,.1f} (p = {p:.2g}): the noise is not what the ledger says",
        )
    )
    return out
