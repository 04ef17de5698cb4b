"""MST (McKenna, Miklau & Sheldon, "Winning the NIST Contest: A scalable and general approach
to differentially private synthetic data", JPC 2021, Algorithm 1): a third of the budget
measures every one-way marginal; a third selects, by the exponential mechanism, the edges of
a maximum spanning tree over the attributes, each pair scored by how badly the one-way fit
answers its two-way marginal (``|| M_ij(data) - M_ij(fit) ||_1``, sensitivity 1); the last
third measures the selected two-way marginals; the model is fitted to all of them
(:mod:`versapub.mechanisms.fit`). Every noisy draw and choice is OpenDP's
(:mod:`versapub.mechanisms.noise`) and enters the ledger. MST's compression of rare values
before measuring is not done (the domain is as declared)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.mechanisms.accounting import check_budget, gaussian_sigma, rho_of
from versapub.mechanisms.fit import Fit, Noisy, fit
from versapub.mechanisms.measure import Entry, Ledger, NoisyMarginal, check_columns, exact_counts, measure_each
from versapub.mechanisms.noise import noisy_max


@dataclass(frozen=True)
class Synthesis:
    """What a selection-and-measurement mechanism produced: the noisy marginals, the ledger
    (measurements and selections), the fitted model and the selected pairs."""

    measured: tuple[NoisyMarginal, ...]
    ledger: Ledger
    model: Fit
    selected: tuple[tuple[str, str], ...]


def _as_noisy(m: NoisyMarginal) -> Noisy:
    return Noisy(m.attributes, m.counts.reshape([len(d) for d in m.domains]).astype(np.float64), m.entry.sigma)


def mst(
    table: EncodedTable,
    epsilon: float,
    delta: float,
    domains: Mapping[str, Sequence[str]],
    attributes: Sequence[str] | None = None,
    iterations: int = 1000,
) -> Synthesis:
    """MST on ``attributes`` (default: every column) of ``table`` under (``epsilon``,
    ``delta``)-DP, over the declared ``domains``."""
    check_budget(epsilon, delta)
    attrs = list(attributes if attributes is not None else table.names)
    if len(attrs) < 2:
        raise InputError("MST needs at least two attributes (it selects a tree of pairs among them).")
    check_columns(table, set(attrs), domains)
    rho = rho_of(epsilon, delta)
    cards = {a: len(domains[a]) for a in attrs}
    one_way = measure_each(table, [(a,) for a in attrs], rho / 3 / len(attrs), domains)
    first = fit([_as_noisy(m) for m in one_way], cards, iterations)
    selected, choices = _select(table, attrs, domains, first, rho / 3)
    two_way = measure_each(table, selected, rho / 3 / len(selected), domains)
    measured = (*one_way, *two_way)
    model = fit([_as_noisy(m) for m in measured], cards, iterations)
    ledger = Ledger(epsilon, delta, rho, (*(m.entry for m in measured), *choices))
    return Synthesis(measured, ledger, model, tuple((a, b) for a, b in selected))


def _select(
    table: EncodedTable, attrs: list[str], domains: Mapping[str, Sequence[str]], first: Fit, rho: float
) -> tuple[list[tuple[str, ...]], list[Entry]]:
    """Kruskal's algorithm with each edge chosen by the exponential mechanism among the pairs
    joining two components, ``rho`` split over the ``len(attrs) - 1`` choices."""
    pairs = list(itertools.combinations(attrs, 2))
    score = {}
    for a, b in pairs:
        exact = exact_counts(table, (a, b), domains).reshape(len(domains[a]), len(domains[b])).astype(np.float64)
        estimate = np.outer(first.marginal((a,)), first.marginal((b,))) / first.total
        score[(a, b)] = float(np.abs(exact - estimate).sum())
    component = {a: a for a in attrs}

    def root(a: str) -> str:
        while component[a] != a:
            a = component[a]
        return a

    steps = len(attrs) - 1
    share = rho / steps
    scale = gaussian_sigma(share)  # the Gumbel scale whose noisy max is share-zCDP: 1 / sqrt(2 share)
    chosen: list[tuple[str, ...]] = []
    entries = []
    for _ in range(steps):
        candidates = [p for p in pairs if root(p[0]) != root(p[1])]
        pick = candidates[noisy_max(np.array([score[p] for p in candidates]), scale, share)]
        component[root(pick[0])] = root(pick[1])
        chosen.append(pick)
        entries.append(Entry(pick, len(candidates), scale, share, step="selection"))
    return chosen, entries
