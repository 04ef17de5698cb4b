"""MST (McKenna, Miklau & Sheldon, "Winning the NIST Contest: A scalable and general approach
to differentially private synthetic data", JPC 2021, Algorithm 1): a third of the budget
measures every one-way marginal; a third selects, by the exponential mechanism, the edges of
a maximum spanning tree over the attributes, each pair scored by how badly the one-way fit
answers its two-way marginal (``|| M_ij(data) - M_ij(fit) ||_1``, sensitivity 1); the last
third measures the selected two-way marginals; the model is fitted to all of them
(:mod:`versapub.mechanisms.fit`). Every noisy draw and choice is OpenDP's
(:mod:`versapub.mechanisms.noise`) and enters the ledger. Between the one-way measurements
and the selection, values whose noisy count is below three noise scales are merged
(:mod:`versapub.mechanisms.compress`, as Private-PGM's MST does): the selection, the two-way
measurements and the fit run on the compressed domains."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from versapub.errors import InputError
from versapub.mechanisms.accounting import check_budget, gaussian_sigma, rho_of
from versapub.mechanisms.compress import Compression, compress
from versapub.mechanisms.fit import Fit, Noisy, fit
from versapub.mechanisms.measure import Entry, Ledger, NoisyMarginal, Records, check_columns, exact_counts, measure_each
from versapub.mechanisms.noise import noisy_max


@dataclass(frozen=True)
class Synthesis:
    """What a selection-and-measurement mechanism produced: the noisy marginals, the ledger
    (measurements and selections), the fitted model and the selected pairs."""

    measured: tuple[NoisyMarginal, ...]
    ledger: Ledger
    model: Fit
    selected: tuple[tuple[str, str], ...]
    #: The compressed domains the model was fitted on (none: the declared domains).
    compression: Compression = field(default_factory=lambda: Compression({}, {}, {}))


def as_noisy(m: NoisyMarginal) -> Noisy:
    """A measured marginal as the estimator reads it (dense, shaped by its domains)."""
    return Noisy(m.attributes, m.counts.reshape([len(d) for d in m.domains]).astype(np.float64), m.entry.sigma)


def mst(
    table: Records,
    epsilon: float,
    delta: float,
    domains: Mapping[str, Sequence[str]],
    attributes: Sequence[str] | None = None,
    iterations: int = 1000,
    compress_domains: bool = True,
) -> Synthesis:
    """MST on ``attributes`` (default: every column) of ``table`` under (``epsilon``,
    ``delta``)-DP, over the declared ``domains`` (compressed unless ``compress_domains`` is
    False)."""
    check_budget(epsilon, delta)
    attrs = list(attributes if attributes is not None else table.names)
    if len(attrs) < 2:
        raise InputError("MST needs at least two attributes (it selects a tree of pairs among them).")
    check_columns(table, set(attrs), domains)
    rho = rho_of(epsilon, delta)
    one_way = measure_each(table, [(a,) for a in attrs], rho / 3 / len(attrs), domains)
    comp = compress(one_way, domains) if compress_domains else Compression({}, {}, {})
    cards = comp.cards(domains, attrs)
    ones = [comp.noisy(m) for m in one_way]
    first = fit(ones, cards, iterations)
    selected, choices = _select(table, attrs, domains, first, rho / 3, comp)
    two_way = measure_each(table, selected, rho / 3 / len(selected), domains, comp.recode, comp.values)
    model = fit([*ones, *(as_noisy(m) for m in two_way)], cards, iterations)
    ledger = Ledger(epsilon, delta, rho, (*(m.entry for m in (*one_way, *two_way)), *choices))
    return Synthesis((*one_way, *two_way), ledger, model, tuple((a, b) for a, b in selected), comp)


def _select(
    table: Records,
    attrs: list[str],
    domains: Mapping[str, Sequence[str]],
    first: Fit,
    rho: float,
    comp: Compression,
) -> tuple[list[tuple[str, ...]], list[Entry]]:
    """Kruskal's algorithm with each edge chosen by the exponential mechanism among the pairs
    joining two components, ``rho`` split over the ``len(attrs) - 1`` choices."""
    pairs = list(itertools.combinations(attrs, 2))
    score = {}
    for a, b in pairs:
        shape = first.marginal((a,)).size, first.marginal((b,)).size
        exact = exact_counts(table, (a, b), domains, comp.recode).reshape(shape).astype(np.float64)
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
