"""AIM (McKenna, Mullins, Sheldon & Miklau, "AIM: An Adaptive and Iterative Mechanism for
Differentially Private Synthetic Data", VLDB 2022, Algorithm 1; Private-PGM's
``mechanisms/aim.py``): marginals bought one at a time where the current model answers the
workload worst, under a cap on the model's size.

* **Candidates**: the workload's marginals and every subset of them (the downward closure),
  each weighted by how many attributes it shares with the workload's marginals
  (``w_r = sum_{s in W} |r ∩ s|``).
* **Start**: every one-way marginal measured with Gaussian noise of scale ``sigma``, where
  ``sigma = sqrt(T / (2 · 0.9 rho))`` and ``T = 16 d`` rounds (``d`` attributes): 90 % of the
  budget for measurements, 10 % for selections of ``eps = sqrt(8 · 0.1 rho / T)``.
* **Each round**: among the candidates whose addition keeps the model within
  ``max_size · (rho spent / rho)`` megabytes (or that lie inside a clique already measured),
  the exponential mechanism picks the one of largest ``w_r (||M_r(data) - M_r(model)||_1 -
  sqrt(2/pi) sigma n_r)`` (sensitivity ``max w``); it is measured with scale ``sigma``, the
  model refitted from the last one's potentials; when the new measurement moved the model's
  answer by less than its expected noise (``sqrt(2/pi) sigma n_r``), ``sigma`` halves and
  ``eps`` doubles. When what is left cannot pay two more rounds, the last round spends it all.

Every noisy draw and choice is OpenDP's (:mod:`versapub.mechanisms.noise`) and enters the
ledger. Domains are as declared (AIM's paper assumes preprocessed domains; MST's compression
is not applied)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from versapub.errors import InputError
from versapub.mechanisms.accounting import check_budget, rho_of
from versapub.mechanisms.fit import Fit, fit, junction_tree
from versapub.mechanisms.measure import Entry, Ledger, NoisyMarginal, Records, check_columns, exact_counts, measure_each
from versapub.mechanisms.mst import Synthesis, as_noisy
from versapub.mechanisms.noise import noisy_max

#: Share of the budget AIM spends on measurements (the rest on selections).
MEASURE_SHARE = 0.9

Progress = Callable[[str, int, int], None]


def _silent(description: str, done: int, total: int) -> None:
    del description, done, total


def candidates(workload: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], float]:
    """The downward closure of the workload, each marginal weighted by the attributes it
    shares with the workload's (AIM's ``compile_workload``)."""
    closure = {c for w in workload for r in range(1, len(w) + 1) for c in itertools.combinations(w, r)}
    return {c: float(sum(len(set(c) & set(w)) for w in workload)) for c in sorted(closure, key=lambda c: (len(c), c))}


def model_size(cliques: Sequence[tuple[str, ...]], cards: Mapping[str, int]) -> float:
    """Megabytes of the junction tree's clique tables (8 bytes a cell) the cliques call for."""
    found, _ = junction_tree(list(cliques))
    return sum(math.prod(cards[a] for a in c) for c in found) * 8 / 2**20


def aim(
    table: Records,
    epsilon: float,
    delta: float,
    domains: Mapping[str, Sequence[str]],
    workload: Sequence[tuple[str, ...]],
    rounds: int | None = None,
    max_size: float = 80.0,
    iterations: int = 1000,
    progress: Progress = _silent,
) -> Synthesis:
    """AIM on ``table`` under (``epsilon``, ``delta``)-DP for the marginals of ``workload``
    (module docstring); ``max_size``: the model's largest size in megabytes."""
    check_budget(epsilon, delta)
    attrs = list(dict.fromkeys(a for w in workload for a in w))
    if not attrs:
        raise InputError("AIM needs a workload: at least one marginal to answer well.")
    check_columns(table, set(attrs), domains)
    rho = rho_of(epsilon, delta)
    cards = {a: len(domains[a]) for a in attrs}
    cands = candidates(workload)
    answers = {c: exact_counts(table, c, domains).astype(np.float64) for c in cands}
    t = rounds or 16 * len(attrs)
    if t <= len(attrs):  # the one-way measurements alone would spend the budget (issue 71)
        raise InputError(
            f"AIM with rounds={t} divides the budget in {t} shares, and measuring each of the {len(attrs)} "
            f"column(s) alone first takes {len(attrs)} of them, leaving nothing to choose with: give rounds of at "
            f"least {len(attrs) + 1} (the default is 16 per column, {16 * len(attrs)} here), or leave it out."
        )
    sigma = math.sqrt(t / (2 * MEASURE_SHARE * rho))
    eps = math.sqrt(8 * (1 - MEASURE_SHARE) * rho / t)
    measured = list(measure_each(table, [(a,) for a in attrs], 1 / (2 * sigma**2), domains))
    used = len(attrs) / (2 * sigma**2)
    model = fit([as_noisy(m) for m in measured], cards, iterations)
    choices: list[Entry] = []
    last = False
    while not last:
        if rho - used < 2 * (1 / (2 * sigma**2) + eps**2 / 8):  # the rest in one last round
            left = rho - used
            sigma, eps, last = (
                math.sqrt(1 / (2 * MEASURE_SHARE * left)),
                math.sqrt(8 * (1 - MEASURE_SHARE) * left),
                True,
            )
        used += eps**2 / 8 + 1 / (2 * sigma**2)
        progress(
            f"AIM: round {len(choices) + 1}, budget {min(used / rho, 1):.0%} spent",
            round(100 * min(used / rho, 1)),
            100,
        )
        pick, entry = _select(cands, answers, model, cards, eps, sigma, max_size * used / rho)
        choices.append(entry)
        before = model.project(pick)
        new = measure_each(table, [pick], 1 / (2 * sigma**2), domains)[0]
        measured.append(new)
        model = fit([as_noisy(m) for m in measured], cards, iterations, start=model)
        if np.abs(model.project(pick) - before).sum() <= sigma * math.sqrt(2 / math.pi) * before.size:
            sigma, eps = sigma / 2, eps * 2
    ledger = Ledger(epsilon, delta, rho, (*(m.entry for m in measured), *choices))
    return Synthesis(tuple(measured), ledger, model, ())


def _select(
    cands: Mapping[tuple[str, ...], float],
    answers: Mapping[tuple[str, ...], np.ndarray],
    model: Fit,
    cards: Mapping[str, int],
    eps: float,
    sigma: float,
    limit: float,
) -> tuple[tuple[str, ...], Entry]:
    """One round's choice by the exponential mechanism among the candidates within the size
    limit (module docstring), and its ledger entry."""
    free = {c for clique in model.cliques for r in range(1, len(clique) + 1) for c in itertools.combinations(clique, r)}
    small = [
        c
        for c in cands
        if tuple(sorted(c)) in {tuple(sorted(f)) for f in free} or model_size([*model.cliques, c], cards) <= limit
    ]
    if not small:  # the cap admits nothing new: the one-way marginals are always inside the model
        small = [c for c in cands if len(c) == 1]
    weight = max(cands[c] for c in small)
    scores = np.array(
        [
            cands[c]
            * (
                np.abs(answers[c].ravel() - model.project(c).ravel()).sum()
                - math.sqrt(2 / math.pi) * sigma * answers[c].size
            )
            for c in small
        ]
    )
    scale = 2.0 / eps  # the exponential mechanism exp(eps q / (2 w)) on scores divided by w
    pick = small[noisy_max(scores / weight, scale, eps**2 / 8)]
    return pick, Entry(pick, len(small), scale, eps**2 / 8, step="selection")


__all__ = ["NoisyMarginal", "aim", "candidates", "model_size"]
