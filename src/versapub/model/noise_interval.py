"""The interval beside an estimate from a differentially private release (issue 52): the
noise's, not the range of consistent tables (a noisy release is consistent with any table).

A query whose attributes all lie in one measured marginal is answered there too: the noisy
cells it selects sum to an unbiased estimate of the true count, whose noise is Gaussian
(discrete, of scale ``sigma`` per cell, independent across cells: variance
``sigma^2 cells``).  Several marginals holding the query give independent estimates,
combined with weights inverse to their variances (the minimum-variance unbiased
combination), so ``answer ± 1.96 sd`` covers the true count with probability 95 % (the
lower end clipped at 0: a count is not negative).  A query spanning marginals not measured together gets no
interval: the fitted model's estimate has no error bar that the noise alone justifies."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from versapub.model.formula import Formula, as_arrays, conjunction, resolver
from versapub.model.interval import Bound
from versapub.model.sparse import Codes, Floats

#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Measurement:
    """A noisy marginal: its rows' codes per attribute, noisy counts and noise scale."""

    attributes: tuple[str, ...]
    columns: dict[str, Codes]
    counts: Floats
    sigma: float
    #: A merged value's code (the domain's size) and the values it covers, per attribute
    #: (:class:`versapub.model.generalized.Cover`; MST's compression).
    covers: dict[str, Any] = field(default_factory=dict)


def noise_interval(measurements: Sequence[Measurement], f: Formula, n: float) -> Bound:
    """The 95 % interval of ``COUNT(*) WHERE f`` from the narrowest measured marginal
    holding its attributes (module docstring); ``[0, n]`` marked "no interval" otherwise."""
    want = set(f.attributes)
    answers, variances, used = [], [], []
    for m in measurements:
        if not want <= set(m.attributes):
            continue
        chosen, maybe = as_arrays(f.tri(resolver(m.columns, m.covers)), len(m.counts))
        if (maybe & ~chosen).any():  # a merged cell the query splits: this marginal cannot answer it
            continue
        cells = int(chosen.sum())
        answers.append(float(m.counts[chosen].sum()))
        variances.append(max(m.sigma**2 * cells, 1e-300))  # no cell selected: the answer 0 is exact
        used.append(m)
    if not used:
        return Bound(0.0, float(n), False, basis="dp-noise", method="")
    w = 1.0 / np.asarray(variances)
    answer = float(np.dot(w, answers) / w.sum())
    sd = math.sqrt(1.0 / float(w.sum()))
    lower = max(0.0, answer - Z95 * sd)
    upper = max(lower, answer + Z95 * sd)
    names = "; ".join(", ".join(m.attributes) for m in used)
    how = f"the noisy marginal(s) over {names} (combined answer {answer:,.1f}, sd {sd:.3g})"
    return Bound(lower, upper, False, basis="dp-noise", method=how)


def noise_intervals(
    measurements: Sequence[Measurement], queries: Sequence[Mapping[str, np.ndarray]], n: float
) -> list[Bound]:
    """:func:`noise_interval` of each ``AND`` query (masks over the model's codes)."""
    return [noise_interval(measurements, conjunction(q), n) for q in queries]
