"""delta-presence (Nergiz, Atzori & Clifton, "Hiding the Presence of Individuals from
Shared Databases", SIGMOD 2007, Definition 3).

The published records ``T`` (the research subset) were drawn from a public population
``P``, which the attacker holds.  Generalizing both with the same mapping, the attacker's
belief that a person ``t`` of ``P`` is in ``T`` is ``P(t in T | T*) = |T*-class of t| /
|P*-class of t|``.  A release is **delta-presence** with ``delta = (delta_min,
delta_max)`` when that probability lies in ``[delta_min, delta_max]`` for every ``t`` of
the population: no one's presence in the data (``delta_max``) nor absence from it
(``delta_min``) is disclosed beyond the bounds.

Per equivalence class: ``delta_min <= records / population records it covers <=
delta_max``.  A class of the population holding no published record has probability 0,
which fails any ``delta_min > 0`` (its people are disclosed as absent).  Merging classes
keeps the ratio between its parts' (a mediant), so the model is monotone under
generalization (Incognito's pruning holds).  ``docs/choices.md`` records how a Mondrian
release's classes are matched to the population.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.errors import ConfigError, RuleError
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
from versapub.privacy.guarantees.tolerance import at_least, at_most


def population_counts(h: Histograms, name: str) -> IntArray:
    """The groups' population counts, or a one-paragraph error (an anonymizer that does not
    count them cannot provide a model checked against the population)."""
    if h.population is None:
        raise ConfigError(
            f"{name} needs each class's population count: only anonymizers that match classes to the population "
            "(mondrian, incognito) can provide it."
        )
    return h.population


@dataclass(frozen=True)
class DeltaPresence(Params):
    """delta-presence (Nergiz, Atzori & Clifton 2007, Definition 3; see the module
    docstring): every class's share of the population it covers is in ``[delta_min,
    delta_max]``."""

    delta_max: float
    delta_min: float = 0.0
    population: Population | None = field(default=None, repr=False, compare=False)

    name = "delta-presence"
    example: ClassVar[dict[str, Any]] = {"delta_min": 0.0, "delta_max": 0.5}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "delta_max": Param(
            "number", low=0, high=1, low_open=True, required=True, why="the largest P(person in data | release)"
        ),
        "delta_min": Param("number", low=0, high=1, high_open=True),
    }
    #: Manifest entries beside the parameters.
    recorded: ClassVar[tuple[str, ...]] = ("checked_against",)
    glossary: ClassVar[str] = (
        "delta-presence (Nergiz, Atzori & Clifton, SIGMOD 2007): for every person of the population the records "
        "were drawn from, the probability that they are in the data, given the release, lies between delta_min "
        "and delta_max (per class: its records over the population records it covers)."
    )
    #: ``achieved`` is the largest presence probability (larger = weaker).
    achieved_is_distance = True

    def __post_init__(self) -> None:
        self.check_parameters()
        if self.delta_min > self.delta_max:
            raise RuleError(
                f"delta_min of delta-presence must be at most delta_max, got delta_min = {self.delta_min:g} and "
                f"delta_max = {self.delta_max:g}."
            )

    def params(self) -> dict[str, Any]:
        return {"delta_min": self.delta_min, "delta_max": self.delta_max}

    def to_manifest(self) -> dict[str, Any]:
        return {"name": self.name, **self.params(), "checked_against": "population"}

    def needs(self) -> frozenset[str]:
        return frozenset({"population"})

    def bind(self, context: GuaranteeContext) -> DeltaPresence:
        return replace(self, population=context.population or self.population)

    def checked_population(self) -> Population | None:
        return self.population

    def describe(self) -> str:
        return (
            f"delta-presence with delta = ({self.delta_min:g}, {self.delta_max:g}): every person of the population "
            f"is in the data with probability between {self.delta_min:g} and {self.delta_max:g}, given the release"
        )

    def group_width(self) -> None:
        """Anatomy publishes quasi-identifiers exactly: it cannot change who is covered."""
        return None

    def min_possible_values(self) -> int:
        return 1

    def ratios(self, h: Histograms) -> npt.NDArray[np.float64]:
        """Per group, its records over the population records it covers."""
        p = population_counts(h, self.name)
        return np.asarray(h.sizes() / np.maximum(p, 1), dtype=np.float64)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        """``delta_min p <= r <= delta_max p``; a group with no record is the population's
        people certainly absent: only ``delta_min = 0`` allows it; more records than
        population fails."""
        p = population_counts(h, self.name)
        r = h.sizes()
        ok = at_most(r, self.delta_max * p) & at_least(r, self.delta_min * p) & (r <= p)
        return np.asarray(np.where(r > 0, ok, self.delta_min == 0))

    def achieved(self, h: Histograms) -> float:
        held = h.sizes() > 0
        return float(self.ratios(h)[held].max()) if held.any() else 0.0

    def achieved_text(self, value: float) -> str:
        return f"{value:.3f} (the largest presence probability of a class)"

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        """The whole table as one class: ``n / |population|`` must lie in the bounds."""
        if self.population is None:
            return None
        n, big_n = int(counts.sum()), self.population.size
        share = n / big_n if big_n else float("inf")
        if bool(at_most(n, self.delta_max * big_n)) and bool(at_least(n, self.delta_min * big_n)):
            return None
        side = {"delta_max": round(share, 6)} if share > self.delta_max else {"delta_min": round(share, 6)}
        what, value = next(iter(side.items()))
        return top_violation(
            counts,
            side,
            f"the table holds {n} of the population's {big_n} records (a share of {share:.4g}), outside "
            f"[{self.delta_min:g}, {self.delta_max:g}] even as one class: {what} is {value:g} at "
            f"{'least' if what == 'delta_max' else 'most'}",
        )
