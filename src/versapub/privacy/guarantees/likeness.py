"""beta-likeness (Cao & Karras, "Publishing Microdata with a Robust Privacy Guarantee",
PVLDB 5(11), 2012, §3).

Let ``P = (p_1, ..., p_m)`` be the sensitive attribute's distribution over the whole table
and ``Q = (q_1, ..., q_m)`` an equivalence class's.  The distance of a value whose share
grows in the class is its *relative* gain, ``D(p_i, q_i) = (q_i - p_i) / p_i`` (values
whose share falls are not constrained: learning that a value is *less* likely discloses
nothing positive).

* **basic beta-likeness**: every class has ``D(p_i, q_i) <= beta`` for every ``i`` with
  ``q_i > p_i``;
* **enhanced beta-likeness**: ``D(p_i, q_i) <= min(beta, -ln p_i)``: a frequent value
  (``p_i > e^-beta``) may grow by less, so that no share can reach 1 (``p (1 - ln p) < 1``
  for ``p < 1``).

Both bound the posterior: ``q_i <= p_i (1 + beta_i)``, ``beta_i`` the value's allowance.
Merging two classes averages their distributions, so both are monotone (Incognito's
pruning properties hold, and the whole table — ``Q = P`` — always satisfies them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.errors import RuleError
from versapub.plugins import Param
from versapub.privacy.guarantees.base import (
    Floats,
    GuaranteeContext,
    Histograms,
    IntArray,
    Params,
    SingleAttributeViolation,
)
from versapub.privacy.guarantees.tolerance import at_most


def shares(h: Histograms) -> tuple[Floats, IntArray]:
    """Every entry's share of its group (``q_i``) and the value it is the share of."""
    size = h.sizes().astype(np.float64)
    return h.count / np.maximum(size[h.group], 1.0), h.values()


def table_shares(context: GuaranteeContext, name: str) -> Floats:
    """The whole table's distribution ``P`` of the sensitive attribute, from the bound context."""
    if context.sensitive_distribution is None:
        raise RuleError(f"{name} needs the table's sensitive distribution.")
    counts = np.asarray(context.sensitive_distribution, dtype=np.float64)
    return counts / counts.sum()


def group_max(group: IntArray, x: Floats, n_groups: int) -> Floats:
    """Per group, the largest of its entries' ``x`` (0 for a group without entries)."""
    out = np.zeros(n_groups, dtype=np.float64)
    np.maximum.at(out, group, x)
    return out


@dataclass(frozen=True)
class BetaLikeness(Params):
    """beta-likeness (Cao & Karras 2012, §3; see the module docstring): basic, or enhanced
    with ``enhanced=true``.  ``beta > 0``.  The table-wide distribution is bound per
    sensitive attribute (:meth:`bind`)."""

    beta: float
    enhanced: bool = False
    p: Floats | None = field(default=None, repr=False, compare=False)

    name = "beta-likeness"
    example: ClassVar[dict[str, Any]] = {"beta": 1}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "beta": Param("number", low=0, low_open=True, required=True, why="beta bounds a value's relative gain"),
        "enhanced": Param("flag"),
    }
    glossary: ClassVar[str] = (
        "beta-likeness (Cao & Karras, PVLDB 2012): in every class, no sensitive value is more frequent than in the "
        "whole table by more than a factor 1 + beta (enhanced: 1 + min(beta, -ln p), so no value can become certain)."
    )
    #: ``achieved`` is the largest relative gain (the weakest class has the largest).
    achieved_is_distance = True

    def __post_init__(self) -> None:
        self.check_parameters()

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, "enhanced": self.enhanced}

    def needs(self) -> frozenset[str]:
        return frozenset({"sensitive_distribution"})

    def bind(self, context: GuaranteeContext) -> BetaLikeness:
        return replace(self, p=table_shares(context, self.name))

    def _p(self) -> Floats:
        if self.p is None:
            raise RuleError("beta-likeness must be bound to the table's sensitive distribution before use.")
        return self.p

    def allowance(self, p: Floats) -> Floats:
        """Each value's largest allowed relative gain: ``beta``, or ``min(beta, -ln p)``."""
        if not self.enhanced:
            return np.full(len(p), self.beta)
        with np.errstate(divide="ignore"):
            return np.minimum(self.beta, -np.log(np.where(p > 0, p, 1e-300)))

    def describe(self) -> str:
        kind = "enhanced" if self.enhanced else "basic"
        bound = f"min({self.beta:g}, -ln p)" if self.enhanced else f"{self.beta:g}"
        return (
            f"{kind} beta-likeness with beta = {self.beta:g}: in every group no sensitive value's share exceeds its "
            f"share p of the whole table by more than {bound} times p"
        )

    def gains(self, h: Histograms) -> tuple[Floats, Floats]:
        """Per entry: the relative gain ``(q - p) / p`` (0 where the share does not grow; inf
        for a value the table does not hold) and the value's allowance."""
        p = self._p()
        q, v = shares(h)
        pv = p[v]
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(q > pv, np.where(pv > 0, (q - pv) / np.where(pv > 0, pv, 1.0), np.inf), 0.0)
        return gain, self.allowance(p)[v]

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        gain, allowed = self.gains(h)
        bad = ~at_most(gain, allowed)
        failing = np.bincount(h.group[bad], minlength=h.n_groups) > 0
        return np.asarray(~failing & (h.sizes() > 0))

    def achieved(self, h: Histograms) -> float:
        """The smallest ``beta`` the groups satisfy: the largest gain (enhanced: inf when a
        gain exceeds its value's ``-ln p``, which no ``beta`` allows)."""
        gain, _ = self.gains(h)
        if not len(gain):
            return 0.0
        if self.enhanced:
            p = self._p()[h.values()]
            with np.errstate(divide="ignore"):
                cap = -np.log(np.where(p > 0, p, 1e-300))
            if not at_most(gain, cap).all():
                return math.inf
        return float(gain.max())

    def group_width(self) -> int | None:
        """Anatomy (groups of distinct values, each share ``1/w``) satisfies it when
        ``1/w <= p_i (1 + allowance_i)`` for every value: ``w >= 1 / min_i p_i (1 + allowance_i)``
        (at least 2); ``None`` before the table's distribution is bound."""
        if self.p is None:
            return None
        p = self.p[self.p > 0]
        ceiling = float((p * (1 + self.allowance(p))).min())
        return max(2, math.ceil(1.0 / ceiling - 1e-9))

    def min_possible_values(self) -> int:
        return 1

    def posterior_limit(self) -> float:
        """``q_i <= p_i (1 + allowance_i)`` for every value: the largest such bound (1 unbound)."""
        if self.p is None:
            return 1.0
        return float(min(1.0, (self.p * (1 + self.allowance(self.p))).max()))

    def value_limits(self, p: Floats) -> Floats:
        """``q <= p (1 + allowance(p))`` per value."""
        q = np.asarray(p, dtype=np.float64)
        return np.minimum(1.0, q * (1 + self.allowance(np.maximum(q, 1e-300))))

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        """The whole table has ``Q = P`` (no gain): always feasible."""
        del counts
        return None
