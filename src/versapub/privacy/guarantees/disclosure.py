"""delta-disclosure privacy (Brickell & Shmatikov, "The Cost of Privacy: Destruction of
Data-Mining Utility in Anonymized Data Publishing", KDD 2008, §3).

An equivalence class ``<t>`` is delta-disclosure-private when, **for every** sensitive
value ``s`` of the table, ``|log(p(<t>, s) / p(T, s))| < delta`` — ``p(<t>, s)`` the share
of ``s`` in the class, ``p(T, s)`` in the whole table, ``log`` the natural logarithm.  A
value the class lacks has ``log 0 = -inf``: every class holds every value of the table
(the paper's own remark), so the share of each value stays within a factor ``e^delta`` of
its share in the table, both ways.

ARX and pycanon test only the values a class holds (ARX with ``log2``); versapub follows
the definition (``docs/choices.md``), which is the stronger test.  Merging classes keeps
every share between its parts', so the model is monotone and the whole table (all ratios
1) always satisfies it.
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
from versapub.privacy.guarantees.likeness import group_max, shares, table_shares
from versapub.privacy.guarantees.tolerance import below


@dataclass(frozen=True)
class DeltaDisclosure(Params):
    """delta-disclosure privacy (Brickell & Shmatikov 2008, §3; see the module docstring).
    ``delta > 0``; the table-wide distribution is bound per sensitive attribute."""

    delta: float
    p: Floats | None = field(default=None, repr=False, compare=False)

    name = "delta-disclosure"
    example: ClassVar[dict[str, Any]] = {"delta": 1.2}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "delta": Param("number", low=0, low_open=True, required=True, why="delta bounds |ln(class share / share)|"),
    }
    glossary: ClassVar[str] = (
        "delta-disclosure privacy (Brickell & Shmatikov, KDD 2008): every class holds every sensitive value, each "
        "with a share within a factor e^delta of its share in the whole table (|ln(q/p)| < delta)."
    )
    #: ``achieved`` is the largest ``|ln(q/p)|`` (the weakest class has the largest).
    achieved_is_distance = True

    def __post_init__(self) -> None:
        self.check_parameters()

    def params(self) -> dict[str, Any]:
        return {"delta": self.delta}

    def needs(self) -> frozenset[str]:
        return frozenset({"sensitive_distribution"})

    def bind(self, context: GuaranteeContext) -> DeltaDisclosure:
        return replace(self, p=table_shares(context, self.name))

    def _p(self) -> Floats:
        if self.p is None:
            raise RuleError("delta-disclosure must be bound to the table's sensitive distribution before use.")
        return self.p

    def describe(self) -> str:
        return (
            f"delta-disclosure privacy with delta = {self.delta:g}: every group holds every sensitive value, each "
            f"with a share within a factor e^{self.delta:g} = {math.exp(self.delta):.3g} of its share in the whole "
            "table"
        )

    def ratios(self, h: Histograms) -> Floats:
        """Per group, the largest ``|ln(q/p)|`` over the table's values (inf when one is missing)."""
        p = self._p()
        q, v = shares(h)
        with np.errstate(divide="ignore"):
            r = np.abs(np.log(q) - np.log(np.where(p[v] > 0, p[v], 0.0)))
        worst = group_max(h.group, np.where(q > 0, r, 0.0), h.n_groups)
        held = np.bincount(h.group[q > 0], minlength=h.n_groups)
        return np.where(held < int((p > 0).sum()), np.inf, worst)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        return np.asarray(below(self.ratios(h), self.delta) & (h.sizes() > 0))

    def achieved(self, h: Histograms) -> float:
        r = self.ratios(h)[h.sizes() > 0]
        return float(r.max()) if len(r) else 0.0

    def group_width(self) -> None:
        """Anatomy's groups hold a few values each, not every value of the table."""
        return None

    def min_possible_values(self) -> int:
        """Every class holds every value of the table (1 before the table is bound)."""
        return int((self.p > 0).sum()) if self.p is not None else 1

    def posterior_limit(self) -> float:
        """``q < p e^delta`` for every value: the largest such bound (1 unbound)."""
        if self.p is None:
            return 1.0
        return float(min(1.0, self.p.max() * math.exp(self.delta)))

    def value_limits(self, p: Floats) -> Floats:
        """``q < p e^delta`` per value."""
        return np.minimum(1.0, np.asarray(p, dtype=np.float64) * math.exp(self.delta))

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        """The whole table has every ratio 1 (``ln 1 = 0 < delta``): always feasible."""
        del counts
        return None
