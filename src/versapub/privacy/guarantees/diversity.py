"""The l-diversity family (Machanavajjhala, Gehrke, Kifer, Venkitasubramaniam, ICDE 2006
/ TKDD 2007) and the frequency form used by Anatomy and by Jin et al. (§6.1).

Each guarantee is a frozen dataclass validated on construction; per-group tests run on
sparse histograms (:class:`~versapub.privacy.guarantees.base.Histograms`) with array operations only.
The feasibility test treats the whole column as one group: every l-diversity form here is
*monotone* (the union of two groups that satisfy it satisfies it; Machanavajjhala et al.,
§4.2–4.3), so a column that fails as a whole cannot be split into groups that all pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
import numpy.typing as npt

from versapub.plugins import Param
from versapub.privacy.guarantees.base import (
    Histograms,
    IntArray,
    Params,
    SingleAttributeViolation,
    top_violation,
)
from versapub.privacy.guarantees.tolerance import at_least, at_most, below


def one_group(counts: IntArray) -> Histograms:
    """A whole column's value counts as the histogram of one group."""
    counts = np.asarray(counts)
    nz = np.flatnonzero(counts)
    return Histograms(np.zeros(len(nz), dtype=np.int64), counts[nz], 1, nz.astype(np.int64))


def ranked(h: Histograms) -> tuple[IntArray, IntArray, IntArray]:  # counts: whole, or induced (cast)
    """Entries sorted by group, then count descending: (group, count, rank inside the group)."""
    order = np.lexsort((-h.count, h.group))
    g, c = h.group[order], cast(IntArray, h.count[order])
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, dtype=np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, len(g)]))
    return g, c, np.arange(len(g), dtype=np.int64) - first


@dataclass(frozen=True)
class LDiversity(Params):
    """Frequency l-diversity: ``Pr{t[S] | t[Q], release} <= 1/l`` for every record (the form
    of Jin et al. §6.1 and of Anatomy, Xiao & Tao Definition 2): inside a group
    ``l * max_count(s) <= |group|``.  ``l`` is a whole number >= 2."""

    l: int

    name = "l-diversity"
    example: ClassVar[dict[str, Any]] = {"l": 3}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "l": Param(
            "whole", low=2, required=True, why="l = 1 protects nothing: any value may be disclosed with certainty"
        )
    }
    glossary: ClassVar[str] = (
        "Frequency l-diversity (Machanavajjhala et al. 2007; the form of Anatomy, Xiao & Tao 2006, Definition 2): "
        "in every group no sensitive value is more frequent than 1/l, so a guess of a person's sensitive value is "
        "right with probability at most 1/l."
    )

    def __post_init__(self) -> None:
        self.check_parameters()

    def min_possible_values(self) -> int:
        """Fewer than ``l`` possible values leave one of them above ``1/l``."""
        return self.l

    def posterior_limit(self) -> float:
        return 1.0 / self.l

    def cumulative_bound(self) -> tuple[float, ...]:
        """``l * f_1 <= 1`` is ``F(k) <= k/l`` for every ``k`` (the top ``k`` values hold at
        most ``k`` times the largest share): functional (1/l, l)-diversity."""
        return tuple(k / self.l for k in range(1, self.l))

    def describe(self) -> str:
        return (
            f"frequency l-diversity with l = {self.l}: an adversary who knows a record's "
            f"left-hand-side values guesses its sensitive value with probability at most 1/{self.l}"
        )

    def group_width(self) -> int:
        return self.l

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        size = h.sizes()
        return np.asarray(at_most(self.l * h.largest(), size) & (size > 0))

    def achieved(self, h: Histograms) -> float:
        size, mx = h.sizes(), h.largest()
        ok = size > 0
        return float(np.min(size[ok] / mx[ok])) if ok.any() else float("inf")

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        n, n1 = int(counts.sum()), int(counts.max())
        if self.l * n1 <= n:
            return None
        best = n // n1
        return top_violation(
            counts,
            {"l": best},
            (
                f"more than 1/l = {100 / self.l:.1f}% of the records; the largest feasible l "
                f"is {best} (floor(n/n1) = floor({n}/{n1}))" + (" — no l >= 2 is feasible" if best < 2 else "")
            ),
        )


@dataclass(frozen=True)
class DistinctLDiversity(Params):
    """Distinct l-diversity (Machanavajjhala et al., the informal "well-represented" notion,
    §4.1): every group holds at least ``l`` distinct sensitive values."""

    l: int

    name = "distinct-l-diversity"
    parameter_constraints: ClassVar[dict[str, Param]] = {"l": Param("whole", low=2, required=True)}
    glossary: ClassVar[str] = (
        "Distinct l-diversity (Machanavajjhala et al. 2007, §4.1): every group holds at least l distinct "
        "sensitive values."
    )
    example: ClassVar[dict[str, Any]] = {"l": 3}

    def __post_init__(self) -> None:
        self.check_parameters()

    def describe(self) -> str:
        return f"distinct l-diversity with l = {self.l}: every group holds at least {self.l} distinct sensitive values"

    def group_width(self) -> int:
        return self.l

    def min_possible_values(self) -> int:
        return self.l

    @staticmethod
    def distinct(h: Histograms) -> IntArray:
        return np.bincount(h.group, minlength=h.n_groups).astype(np.int64)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        return np.asarray(self.distinct(h) >= self.l)

    def achieved(self, h: Histograms) -> float:
        d = self.distinct(h)
        return float(d[d > 0].min()) if (d > 0).any() else float("inf")

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        m = int((counts > 0).sum())
        if m >= self.l:
            return None
        return top_violation(
            counts, {"l": m}, f"the column has only {m} distinct value(s); the largest feasible l is {m}"
        )


@dataclass(frozen=True)
class EntropyLDiversity(Params):
    """Entropy l-diversity (Machanavajjhala et al., Definition 4.1): every group's sensitive
    entropy ``-Σ_s p(s) log p(s) >= log l``.  ``l`` is a number > 1 (it need not be whole)."""

    l: float

    name = "entropy-l-diversity"
    parameter_constraints: ClassVar[dict[str, Param]] = {"l": Param("number", low=1, low_open=True, required=True)}
    glossary: ClassVar[str] = (
        "Entropy l-diversity (Machanavajjhala et al. 2007, Definition 4.1): the entropy of every group's "
        "sensitive values is at least log(l)."
    )
    example: ClassVar[dict[str, Any]] = {"l": 2.5}

    def __post_init__(self) -> None:
        self.check_parameters()
        object.__setattr__(self, "l", int(self.l) if float(self.l).is_integer() else self.l)

    def describe(self) -> str:
        return (
            f"entropy l-diversity with l = {self.l:g}: every group's sensitive values have entropy "
            f"at least log({self.l:g})"
        )

    def group_width(self) -> int:
        """A group of ``w`` distinct values has entropy ``log w``."""
        return math.ceil(self.l)

    def min_possible_values(self) -> int:
        """Entropy ``>= log l`` needs at least ``ceil(l)`` distinct values."""
        return math.ceil(self.l)

    @staticmethod
    def entropy(h: Histograms) -> npt.NDArray[np.float64]:
        size = h.sizes().astype(np.float64)
        c = np.asarray(h.count, dtype=np.float64)
        clogc = np.bincount(h.group, weights=c * np.log(np.where(c > 0, c, 1.0)), minlength=h.n_groups)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(size > 0, np.log(np.maximum(size, 1)) - clogc / np.maximum(size, 1), 0.0)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        # A group of l equally frequent values has entropy exactly log l (up to rounding).
        return np.asarray(at_least(self.entropy(h), math.log(self.l)) & (h.sizes() > 0))

    def achieved(self, h: Histograms) -> float:
        size = h.sizes()
        e = self.entropy(h)[size > 0]
        return float(np.exp(e.min())) if len(e) else float("inf")

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        h = one_group(counts)
        if self.groups_satisfied(h).all():
            return None
        best = self.achieved(h)
        return top_violation(
            counts,
            {"l": round(best, 4)},
            (
                f"the column's entropy is log({best:.3f}) < log({self.l:g}); the largest feasible l is {best:.3f} "
                "(exp of the column's entropy)"
            ),
        )


@dataclass(frozen=True)
class RecursiveCLDiversity(Params):
    """Recursive (c, l)-diversity (Machanavajjhala et al., Definition 4.2): with a group's
    value counts sorted ``r_1 >= r_2 >= ... >= r_m``, ``r_1 < c (r_l + r_{l+1} + ... + r_m)``
    (a group with fewer than ``l`` distinct values fails).  ``c > 0``, ``l`` whole >= 2."""

    c: float
    l: int

    name = "recursive-cl-diversity"
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "c": Param("number", low=0, low_open=True, required=True),
        "l": Param("whole", low=2, required=True),
    }
    glossary: ClassVar[str] = (
        "Recursive (c, l)-diversity (Machanavajjhala et al. 2007, Definition 4.2): in every group the most "
        "frequent sensitive value is less than c times the sum of the counts from the l-th most frequent on."
    )
    example: ClassVar[dict[str, Any]] = {"c": 3, "l": 3}

    def __post_init__(self) -> None:
        self.check_parameters()
        object.__setattr__(self, "c", int(self.c) if float(self.c).is_integer() else self.c)

    def describe(self) -> str:
        return (
            f"recursive (c,l)-diversity with c = {self.c:g}, l = {self.l}: in every group the most frequent "
            f"sensitive value is less than {self.c:g} times the records outside its {self.l - 1} most frequent values"
        )

    def group_width(self) -> int:
        """All-distinct groups of ``w`` values: ``1 < c (w - l + 1)``."""
        return self.l + math.floor(1 / self.c) if self.c <= 1 else self.l

    def min_possible_values(self) -> int:
        return self.l

    def posterior_limit(self) -> float:
        """``r_1 < c (n - r_1)`` bounds every value's share by ``c / (c + 1)``."""
        return self.c / (self.c + 1)

    @staticmethod
    def largest_l(h: Histograms, c: float) -> IntArray:
        """Per group, the largest ``l`` it satisfies with ``c`` (1 when none >= 2)."""
        g, cnt, rank = ranked(h)
        excl = np.cumsum(cnt) - cnt  # records listed before each entry
        idx = np.arange(len(g), dtype=np.int64)
        tail = h.sizes()[g] - (excl - excl[idx - rank])  # r_rank + ... + r_m of the entry's group
        r1 = h.largest()[g]
        ok = below(r1, c * tail)
        out = np.ones(h.n_groups, dtype=np.int64)
        np.maximum.at(out, g[ok], rank[ok] + 1)
        return out

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        return np.asarray((self.largest_l(h, float(self.c)) >= self.l) & (h.sizes() > 0))

    def achieved(self, h: Histograms) -> float:
        best = self.largest_l(h, float(self.c))[h.sizes() > 0]
        return float(best.min()) if len(best) else float("inf")

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        h = one_group(counts)
        if self.groups_satisfied(h).all():
            return None
        best = int(self.achieved(h))
        return top_violation(
            counts,
            {"l": best, "c": self.c},
            (
                f"with c = {self.c:g} the largest feasible l is {best}"
                + (" — no l >= 2 is feasible" if best < 2 else "")
            ),
        )
