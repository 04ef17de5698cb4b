"""Every population-uniqueness model side by side, and the one ``risk`` reports (issue 69).

The models estimate the same figure — the sample records unique in the population — from
different assumptions: ARX's three (:mod:`versapub.privacy.risk.uniqueness`: Zayatz, Pitman,
SNB, and Dankar et al.'s rule among them, ``arx``) read only the class-size histogram, as if
the cells were exchangeable; the log-linear model (:mod:`versapub.privacy.risk.loglinear`)
and the Gaussian copula (:mod:`versapub.privacy.risk.copula`) read the key variables
themselves. The default (``auto``) is the log-linear model unless it cannot explain the
sample's uniques: over the simulation of ``benchmarks/risk_models.py`` (docs/risk.md) it is
the closest on populations whose key variables have structure — main effects and
interactions, the shape of real key variables: 4.7 % mean error (the copula 4.2 %), where
Pitman's model, ARX's choice at small fractions, is 32 % off — and far off on exchangeable
populations (cells unrelated to the key values, Pitman's home), where the sample uniques it
expects miss the observed ones by 42 % or more (structured: at most 7 %). So ``auto`` takes the
log-linear estimate when its expected sample uniques are within :data:`MISFIT_MAX` of the
observed, else ARX's rule (docs/choices.md item 242).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from versapub.errors import InputError
from versapub.privacy.risk.copula import copula
from versapub.privacy.risk.loglinear import loglinear
from versapub.privacy.risk.uniqueness import Uniqueness, histogram, population_uniques

#: The models ``risk --model`` names; ``auto`` is the default's choice (module docstring).
MODELS = ("auto", "loglinear", "copula", "pitman", "zayatz", "snb", "arx")
DEFAULT_MODEL = "loglinear"
#: ``auto`` leaves the log-linear model when its expected sample uniques miss the observed
#: ones by more than this share (module docstring).
MISFIT_MAX = 0.2


def check_model(model: str) -> str:
    if model not in MODELS:
        raise InputError(
            f"--model {model!r} is not a population-uniqueness model; choose one of {', '.join(MODELS)} (auto: the "
            f"{DEFAULT_MODEL} model, the closest in the simulation of docs/risk.md)."
        )
    return model


def estimate(
    codes: Sequence[npt.NDArray[np.int64]],
    cards: Sequence[int],
    counts: npt.NDArray[np.int64],
    fraction: float,
    *,
    weights: npt.NDArray[np.float64] | None = None,
    orders: Sequence[tuple[npt.NDArray[np.int64], bool] | None] | None = None,
    names: Sequence[str] = (),
    model: str = "auto",
    rng: np.random.Generator | None = None,
) -> Uniqueness:
    """Every model's estimate for a sample's distinct classes (``codes`` per key variable,
    ``counts`` per class, ``weights``: each class's sum of sampling weights) drawn with
    ``fraction``, and ``model``'s as the estimate (``auto``: :data:`DEFAULT_MODEL`).
    ``orders``: per key variable, each code's rank among its values and whether they are
    numbers (the copula's value order, :func:`versapub.privacy.risk.copula.value_order`)."""
    check_model(model)
    f = np.asarray(counts, dtype=np.int64)
    c1 = int((f == 1).sum())
    if fraction >= 1 or not c1 or not len(codes):
        arx = population_uniques(histogram(f), fraction)
        return replace(arx, arx_model=arx.model)
    rng = rng if rng is not None else np.random.default_rng(0)
    pi_k: float | npt.NDArray[np.float64] = fraction
    population = float(f.sum()) / fraction
    if weights is not None:
        pi_k = np.minimum(f / np.maximum(weights, 1e-300), 1.0)
        population = max(float(weights.sum()), float(f.sum()))
    names = list(names) or [f"v{i}" for i in range(len(codes))]
    ll = loglinear(codes, cards, f, pi_k, names, rng=rng, per_record=False)
    cp = copula(codes, cards, f, population, orders=orders, rng=rng)
    arx = population_uniques(histogram(f), fraction)
    figures = {
        "loglinear": (ll.tau1, ll.tau1_sd),
        "copula": (cp.estimate, cp.sd),
        "pitman": (arx.pitman, math.nan),
        "zayatz": (arx.zayatz, math.nan),
        "snb": (arx.snb, math.nan),
        "arx": (arx.estimate, math.nan),
    }
    misfit = (ll.expected_uniques - c1) / c1
    chosen = model
    if model == "auto":
        chosen = DEFAULT_MODEL if abs(misfit) <= MISFIT_MAX else "arx"
    value, sd = figures[chosen]
    why = _why(model, chosen, misfit)
    if math.isnan(value):  # the model asked for has no valid estimate here: ARX's rule, said so
        why = f"{chosen} has no valid estimate on this sample: ARX's rule instead"
        chosen, (value, sd) = "arx", figures["arx"]
    return Uniqueness(
        records=arx.records,
        sample_uniques=arx.sample_uniques,
        sampling_fraction=fraction,
        zayatz=arx.zayatz,
        pitman=arx.pitman,
        snb=arx.snb,
        estimate=0.0 if math.isnan(value) else min(max(value, 0.0), float(c1)),
        model=arx.model if chosen == "arx" else chosen,
        loglinear=ll.tau1,
        loglinear_sd=ll.tau1_sd,
        loglinear_terms=ll.terms,
        loglinear_z=ll.z,
        loglinear_misfit=misfit,
        correct_matches=ll.tau2,
        copula=cp.estimate,
        copula_sd=cp.sd,
        copula_evaluated=cp.evaluated,
        arx_model=arx.model,
        sd=sd,
        chosen_by=why,
    )


def _why(model: str, chosen: str, misfit: float) -> str:
    """Why the estimate is ``chosen``'s, in a sentence's clause."""
    if model != "auto":
        return "as --model asked"
    if chosen == DEFAULT_MODEL:
        return f"the default: its expected sample uniques are within {100 * abs(misfit):.1f} % of the observed"
    return (
        f"the log-linear model expects {100 * abs(misfit):.0f} % {'more' if misfit > 0 else 'fewer'} sample uniques "
        "than observed (the cells look exchangeable, ARX's models' assumption): ARX's rule instead"
    )
