"""k-map (Sweeney, "Computational Disclosure Control", PhD thesis, MIT 2001; El Emam &
Dankar, "Protecting Privacy Using k-Anonymity", JAMIA 15(5), 2008).

The published records are a sample of a population (the region's residents, a registry).
A release satisfies **k-map** when every published combination of quasi-identifier values
matches at least ``k`` individuals of the *population* — the attacker who knows a person
is in the population, not that the person is in the sample, then faces at least ``k``
candidates.

Without the population itself, El Emam & Dankar estimate it from the **sampling
fraction** ``f``: a population class of fewer than ``k`` individuals shows up in the
sample as at most ``Poisson(f k)`` records, so a sample class of ``k'`` records or more
comes from a population class of at least ``k`` with confidence ``1 - significance``, where
``k'`` is the smallest count with ``P(Poisson(f k) >= k') <= significance``.  The test is
then k'-anonymity of the sample (``k' <= k``: a sample class of ``k`` records always maps to
at least ``k`` people).  ``docs/choices.md`` records the choices (ARX's code derives one
more than this ``k'``).

**With the population itself** (no ``fraction``; ``--population FILE``), the test is the
definition: every published class covers at least ``k`` records of the population.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.errors import RuleError
from versapub.plugins import Param
from versapub.privacy.guarantees.base import (
    GuaranteeContext,
    Histograms,
    IntArray,
    Params,
    SingleAttributeViolation,
    top_violation,
)
from versapub.privacy.guarantees.population import Population
from versapub.privacy.guarantees.presence import population_counts


def derived_k(k: int, fraction: float, significance: float) -> int:
    """El Emam & Dankar's ``k'``: the smallest sample count ``c`` with
    ``P(Poisson(f k) >= c) <= significance`` (at least 1, at most ``k``)."""
    from scipy.stats import poisson  # scipy.stats takes ~1 s to import: only when a k-map is built

    c = int(poisson.ppf(1.0 - significance, fraction * k)) + 1
    return max(1, min(k, c))


@dataclass(frozen=True)
class KMap(Params):
    """k-map (see the module docstring): against the population itself (no ``fraction``:
    Sweeney's definition, every class covers at least ``k`` population records), or
    estimated from the sampling fraction (El Emam & Dankar 2008): every class of the sample
    holds at least ``derived_k`` records, so that it maps to at least ``k`` individuals of
    the population with confidence ``1 - significance``.  ``fraction`` is the share of the
    population the input holds."""

    k: int
    fraction: float | None = None
    significance: float = 0.01
    population: Population | None = field(default=None, repr=False, compare=False)

    name = "k-map"
    example: ClassVar[dict[str, Any]] = {"k": 10, "fraction": 0.1}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "k": Param("whole", low=2, required=True),
        "fraction": Param(
            "number", low=0, high=1, low_open=True, optional=True, why="the share of the population the input holds"
        ),
        "significance": Param("number", low=0, high=1, low_open=True, high_open=True),
    }
    #: Manifest entries beside the parameters (read back, they are recomputed, not given).
    recorded: ClassVar[tuple[str, ...]] = ("checked_against", "derived_k")
    glossary: ClassVar[str] = (
        "k-map (Sweeney 2001): every published combination of non-sensitive values matches at least k people of "
        "the population the records were sampled from — counted in the population itself (--population), or "
        "estimated from the sampling fraction with a Poisson model (El Emam & Dankar, JAMIA 2008)."
    )

    def __post_init__(self) -> None:
        self.check_parameters()

    def params(self) -> dict[str, Any]:
        if self.fraction is None:
            return {"k": self.k}
        return {"k": self.k, "fraction": self.fraction, "significance": self.significance}

    def to_manifest(self) -> dict[str, Any]:
        """The parameters, what the model was checked against and the sample size it implies."""
        if self.fraction is None:
            return {"name": self.name, **self.params(), "checked_against": "population"}
        return {
            "name": self.name,
            **self.params(),
            "checked_against": "estimate from the sampling fraction",
            "derived_k": self.derived(),
        }

    def needs(self) -> frozenset[str]:
        return frozenset({"population"}) if self.fraction is None else frozenset()

    def bind(self, context: GuaranteeContext) -> KMap:
        return replace(self, population=context.population or self.population)

    def checked_population(self) -> Population | None:
        return self.population if self.fraction is None else None

    def derived(self) -> int:
        if self.fraction is None:
            raise RuleError("k-map against the population derives no sample size (it needs a fraction).")
        return derived_k(self.k, self.fraction, self.significance)

    def describe(self) -> str:
        if self.fraction is None:
            return (
                f"k-map with k = {self.k} against the population: every group's values match at least {self.k} "
                "people of the population the records were drawn from"
            )
        return (
            f"k-map with k = {self.k} (sampling fraction {self.fraction:g}): every group holds at least "
            f"{self.derived()} records, so it matches at least {self.k} people of the population with confidence "
            f"{1 - self.significance:g}"
        )

    def group_width(self) -> None:
        return None

    def min_possible_values(self) -> int:
        return 1

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        """Against the population: a group with records covers at least ``k`` population
        records (and no fewer than its own records; a group with none publishes nothing).
        Estimated: at least ``derived_k`` records."""
        if self.fraction is None:
            p, r = population_counts(h, self.name), h.sizes()
            return np.asarray((r == 0) | ((p >= self.k) & (r <= p)))
        return np.asarray(h.sizes() >= self.derived())

    def achieved(self, h: Histograms) -> float:
        s = h.sizes()
        if self.fraction is None:
            p = population_counts(h, self.name)[s > 0]
            return float(p.min()) if len(p) else float("inf")
        return float(s[s > 0].min()) if (s > 0).any() else float("inf")

    def achieved_text(self, value: float) -> str:
        if self.fraction is None:
            return f"{value:.0f} people of the population match the smallest group (needs {self.k})"
        return f"{value:.0f} records in the smallest group (needs {self.derived()})"

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        """The whole table must hold ``derived_k`` records (against the population: the
        population at least ``k``); else the largest feasible ``k`` (``derived_k`` grows
        with ``k``: a binary search) is named."""
        n = int(counts.sum())
        if self.fraction is None:
            big_n = self.population.size if self.population is not None else self.k
            if big_n >= self.k:
                return None
            return top_violation(
                counts, {"k": big_n}, f"the population has only {big_n} records; the largest feasible k is {big_n}"
            )
        fraction = self.fraction
        if n >= self.derived():
            return None
        lo, hi = 1, self.k  # derived_k(1) = 1 <= n; derived_k(k) > n
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if derived_k(mid, fraction, self.significance) <= n else (lo, mid)
        return top_violation(
            counts,
            {"k": lo},
            f"the table has only {n} records, fewer than the {self.derived()} k-map with k = {self.k} needs at "
            f"sampling fraction {self.fraction:g}; the largest feasible k is {lo}",
        )
