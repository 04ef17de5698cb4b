"""Marginals measured with calibrated noise (issue 52, the measurement half of a
differentially private release): each marginal's counts over a *declared* domain, plus
discrete Gaussian noise whose scale follows from the marginal's share of the budget, and the
ledger that records it. A change of one record moves one cell of each marginal by one, so
each marginal's L2 sensitivity is 1; the budget is split equally in rho (zCDP composition
adds rho, :mod:`versapub.mechanisms.accounting`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.mechanisms.accounting import check_budget, epsilon_of, gaussian_sigma, rho_of
from versapub.mechanisms.noise import discrete_gaussian
from versapub.mechanisms.precounted import Precounted

#: What a mechanism reads: the records, or the exact marginals it declared, counted elsewhere.
Records = EncodedTable | Precounted


@dataclass(frozen=True)
class Entry:
    """One line of the ledger: a marginal, its cells, the noise scale and its share of rho."""

    attributes: tuple[str, ...]
    cells: int
    sigma: float
    rho: float
    sensitivity: float = 1.0
    #: ``measurement`` (Gaussian noise on the counts) or ``selection`` (a noisy-max choice
    #: among ``cells`` candidates, Gumbel noise of scale ``sigma``: rho = sensitivity^2 /
    #: (2 sigma^2) as well).
    step: str = "measurement"

    def __post_init__(self) -> None:
        if not self.attributes or self.cells < 1 or not (self.sigma > 0 and self.rho > 0 and self.sensitivity > 0):
            raise ValueError(f"an impossible ledger entry: {self!r}")
        if self.step not in ("measurement", "selection"):
            raise ValueError(f"a ledger entry is a measurement or a selection, not {self.step!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "marginal": list(self.attributes),
            "cells": self.cells,
            "sigma": self.sigma,
            "rho": self.rho,
            "sensitivity": self.sensitivity,
        }


@dataclass(frozen=True)
class Ledger:
    """The budget and how it was spent: ``epsilon`` and ``delta`` as stated, the ``rho`` they
    allow, and each measurement; the spent rho composes to ``spent_epsilon`` at ``delta``."""

    epsilon: float
    delta: float
    rho: float
    entries: tuple[Entry, ...]
    mechanism: str = "discrete Gaussian (OpenDP), zero-concentrated DP"

    def __post_init__(self) -> None:
        check_budget(self.epsilon, self.delta)
        if self.spent_rho > self.rho * (1 + 1e-9):
            raise ValueError(f"the ledger spends rho {self.spent_rho} over its budget {self.rho}")

    @property
    def spent_rho(self) -> float:
        return float(sum(e.rho for e in self.entries))

    @property
    def spent_epsilon(self) -> float:
        return epsilon_of(self.spent_rho, self.delta)

    def to_json(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "accounting": "zCDP (Bun & Steinke 2016); to (epsilon, delta) by Canonne, Kamath & Steinke 2020, Prop. 12",
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "spent_rho": self.spent_rho,
            "spent_epsilon": self.spent_epsilon,
            "measurements": [e.to_json() for e in self.entries],
        }


@dataclass(frozen=True)
class NoisyMarginal:
    """A marginal's noisy counts, dense over its declared domain (C order over
    ``attributes``; ``domains[i]`` the values of ``attributes[i]``)."""

    attributes: tuple[str, ...]
    domains: tuple[tuple[str, ...], ...]
    counts: npt.NDArray[np.int64]
    entry: Entry

    def __post_init__(self) -> None:
        if len(self.domains) != len(self.attributes) or self.counts.size != int(
            np.prod([len(d) for d in self.domains])
        ):
            raise ValueError("a noisy marginal's counts do not fill its domain")


def _codes_on(table: EncodedTable, a: str, domain: Sequence[str]) -> npt.NDArray[np.int64]:
    """The table's column ``a`` as positions in the declared ``domain``; a value outside it is
    refused (the domain is public knowledge: the data may not widen it)."""
    position = {str(v): i for i, v in enumerate(domain)}
    values = [str(v) for v in table.column(a).values]
    outside = [v for v in values if v not in position]
    if outside:
        raise InputError(
            f"Column {a!r} holds {outside[0]!r}, which its declared domain does not list ({len(domain)} values); "
            "declare every value the column may take (its domain is public knowledge, never read from the data)."
        )
    remap = np.array([position[v] for v in values], dtype=np.int64)
    return remap[np.asarray(table.codes(a), dtype=np.int64)]


def measure_marginals(
    table: Records,
    marginals: Sequence[Sequence[str]],
    epsilon: float,
    delta: float,
    domains: Mapping[str, Sequence[str]],
) -> tuple[tuple[NoisyMarginal, ...], Ledger]:
    """Measure each of ``marginals`` (attribute lists) on ``table`` with discrete Gaussian
    noise, the (``epsilon``, ``delta``) budget split equally in rho; ``domains``: every
    measured attribute's values, declared (public knowledge), never taken from the data."""
    check_budget(epsilon, delta)
    wanted = [tuple(str(a) for a in m) for m in marginals]
    if not wanted or any(not m for m in wanted):
        raise InputError("Name at least one marginal to measure, each with at least one attribute.")
    check_columns(table, {a for m in wanted for a in m}, domains)
    rho = rho_of(epsilon, delta)
    out = measure_each(table, wanted, rho / len(wanted), domains)
    return tuple(out), Ledger(epsilon, delta, rho, tuple(n.entry for n in out))


def check_columns(table: Records, attributes: set[str], domains: Mapping[str, Sequence[str]]) -> None:
    """Every measured attribute is a column of the table with a declared domain."""
    unknown = sorted(attributes - set(table.names))
    if unknown:
        raise InputError(f"The marginals name {unknown}, which the table does not hold; its columns: {table.names}.")
    undeclared = sorted(attributes - set(domains))
    if undeclared:
        raise InputError(
            f"Declare the domain of {undeclared} (the values each may take): a differentially private release "
            "may not read it from the data, which would reveal which values occur."
        )


def exact_counts(
    table: Records,
    attributes: Sequence[str],
    domains: Mapping[str, Sequence[str]],
    recode: Mapping[str, npt.NDArray[np.int64]] | None = None,
) -> npt.NDArray[np.int64]:
    """The exact counts of ``attributes`` over their declared domains (dense, C order; of a
    :class:`~versapub.mechanisms.precounted.Precounted`, its own); ``recode[a]``: each declared
    value's position in a compressed domain of ``a``."""
    if isinstance(table, Precounted):
        return table.marginal(attributes, domains, recode)
    recode = recode or {}
    codes, cards = [], []
    for a in attributes:
        c = _codes_on(table, a, domains[a])
        if a in recode:
            c, card = recode[a][c], int(recode[a].max()) + 1
        else:
            card = len(domains[a])
        codes.append(c)
        cards.append(card)
    key = np.ravel_multi_index(tuple(codes), cards) if len(codes) > 1 else codes[0]
    return np.bincount(key, minlength=int(np.prod(cards))).astype(np.int64)


def measure_each(
    table: Records,
    marginals: Sequence[tuple[str, ...]],
    rho_each: float,
    domains: Mapping[str, Sequence[str]],
    recode: Mapping[str, npt.NDArray[np.int64]] | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
) -> tuple[NoisyMarginal, ...]:
    """Each marginal measured with discrete Gaussian noise spending ``rho_each``; with
    ``recode`` over compressed domains whose values are ``values``."""
    sigma = gaussian_sigma(rho_each)
    shown = {**domains, **(values or {})}
    out = []
    for m in marginals:
        exact = exact_counts(table, m, domains, recode)
        noisy = discrete_gaussian(exact, sigma, rho_each)
        entry = Entry(m, exact.size, sigma, rho_each)
        out.append(NoisyMarginal(m, tuple(tuple(str(v) for v in shown[a]) for a in m), noisy, entry))
    return tuple(out)
