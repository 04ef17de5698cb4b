"""Several guarantees at once: a table that enforces rules carrying different guarantees
(per-rule guarantees) must satisfy every one of them, group by group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.errors import RuleError
from versapub.privacy.guarantees.base import Guarantee, GuaranteeContext, Histograms, IntArray, SingleAttributeViolation


@dataclass(frozen=True)
class AllOf:
    """The conjunction of ``guarantees`` (at least two): a group satisfies it when it
    satisfies each; the attacks and the posterior use the strictest limits."""

    guarantees: tuple[Guarantee, ...]

    name = "all-of"
    glossary: ClassVar[str] = "All of several guarantees at once: a group satisfies it when it satisfies each."

    #: Parameters holding guarantees: the registry builds them from their manifest form.
    nested = ("guarantees",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "guarantees", tuple(self.guarantees))
        if any(isinstance(g, dict) for g in self.guarantees):
            raise RuleError("all-of combines built guarantees (make_guarantee builds them from their manifest form).")
        if len(self.guarantees) < 2:
            raise RuleError("all-of combines at least two guarantees.")

    def params(self) -> dict[str, Any]:
        return {"guarantees": [g.to_manifest() for g in self.guarantees]}

    def to_manifest(self) -> dict[str, Any]:
        return {"name": self.name, **self.params()}

    def describe(self) -> str:
        return " and ".join(g.describe() for g in self.guarantees)

    def needs(self) -> frozenset[str]:
        return frozenset().union(*(g.needs() for g in self.guarantees))

    def bind(self, context: GuaranteeContext) -> AllOf:
        return AllOf(tuple(g.bind(context) for g in self.guarantees))

    def checked_population(self) -> Any:
        return next((p for g in self.guarantees if (p := g.checked_population()) is not None), None)

    def group_width(self) -> int | None:
        widths = [g.group_width() for g in self.guarantees]
        return None if any(w is None for w in widths) else max(w for w in widths if w is not None)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        ok = np.ones(h.n_groups, dtype=bool)
        for g in self.guarantees:
            ok &= g.groups_satisfied(h)
        return ok

    def achieved(self, h: Histograms) -> float:
        """The first guarantee's measure (each one's is in the per-rule report)."""
        return self.guarantees[0].achieved(h)

    def achieved_text(self, value: float) -> str:
        return self.guarantees[0].achieved_text(value)

    @property
    def achieved_is_distance(self) -> bool:
        return self.guarantees[0].achieved_is_distance

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        return next((v for g in self.guarantees if (v := g.single_attribute_violation(counts)) is not None), None)

    def min_possible_values(self) -> int:
        return max(g.min_possible_values() for g in self.guarantees)

    def posterior_limit(self) -> float:
        return min(g.posterior_limit() for g in self.guarantees)

    def value_limits(self, p: Any) -> Any:
        return np.minimum.reduce([g.value_limits(p) for g in self.guarantees])

    def cumulative_bound(self) -> tuple[float, ...] | None:
        """Every part a bound on ``F(k)``: their pointwise minimum."""
        bounds = [g.cumulative_bound() for g in self.guarantees]
        if any(b is None for b in bounds):
            return None
        size = max(len(b) for b in bounds if b is not None)
        return tuple(min(b[k] if k < len(b) else 1.0 for b in bounds if b is not None) for k in range(size))


def all_of(guarantees: list[Guarantee]) -> Guarantee:
    """One guarantee, or the conjunction of distinct ones (in first-seen order)."""
    distinct: list[Guarantee] = []
    for g in guarantees:
        parts = g.guarantees if isinstance(g, AllOf) else (g,)
        for p in parts:
            if p.to_manifest() not in [d.to_manifest() for d in distinct]:
                distinct.append(p)
    return distinct[0] if len(distinct) == 1 else AllOf(tuple(distinct))
