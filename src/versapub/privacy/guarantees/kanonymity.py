"""k-anonymity (Samarati & Sweeney 1998; Sweeney, IJUFKS 2002): every equivalence class
of the quasi-identifiers holds at least ``k`` records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.plugins import Param
from versapub.privacy.guarantees.base import Histograms, IntArray, Params, SingleAttributeViolation, top_violation


@dataclass(frozen=True)
class KAnonymity(Params):
    """k-anonymity (Sweeney 2002, Definition 3): each release record is indistinguishable
    from at least ``k - 1`` others on the quasi-identifiers, i.e. every group has at least
    ``k`` records.  It protects identities, not sensitive values: Anatomy, which publishes
    quasi-identifiers exactly, cannot provide it (``group_width`` is ``None``)."""

    k: int

    name = "k-anonymity"
    example: ClassVar[dict[str, Any]] = {"k": 5}
    parameter_constraints: ClassVar[dict[str, Param]] = {"k": Param("whole", low=2, required=True)}
    glossary: ClassVar[str] = (
        "k-anonymity (Sweeney 2002): every published combination of non-sensitive values covers at least k records."
    )

    def __post_init__(self) -> None:
        self.check_parameters()

    def describe(self) -> str:
        return (
            f"k-anonymity with k = {self.k}: every record shares its quasi-identifier values with at least "
            f"{self.k - 1} others"
        )

    def group_width(self) -> None:
        return None

    def min_possible_values(self) -> int:
        return 1

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        return np.asarray(h.sizes() >= self.k)

    def achieved(self, h: Histograms) -> float:
        s = h.sizes()
        return float(s[s > 0].min()) if (s > 0).any() else float("inf")

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        n = int(counts.sum())
        if n >= self.k:
            return None
        return top_violation(counts, {"k": n}, f"the table has only {n} records; the largest feasible k is {n}")
