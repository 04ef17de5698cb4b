"""Functional (tau, lambda)-diversity (the functional-diversity paper, reading notes:
``../shared/papers/READING-NOTES.md``).

With a group's frequencies of the sensitive values sorted ``f_1 >= f_2 >= ... >= f_m``,
the cumulative frequency ``F(k) = f_1 + ... + f_k`` must stay under a bounding function:
``F(k) <= phi(k)`` for every ``k``.  The default ``phi`` is the linear reconstruction of
the paper's running example (tau = 0.5, lambda = 3, m = 4 gives ``0.5, 0.75, 1, 1``):
``phi(k) = tau + (k - 1)(1 - tau)/(lambda - 1)`` for ``k < lambda`` and 1 from ``lambda``
on, with ``2 <= lambda <= m`` and ``1/lambda <= tau < 1``; the chance that a person's value
is among the ``k`` dominant ones is at most ``phi(k)``.  ``phi`` may instead be given as
its values ``phi(1), phi(2), ...`` (non-decreasing, in (0, 1]; 1 after the last).

A group's frequencies may be *induced*: when sensitive values are generalized (Sequential
Sweep publishes taxonomy nodes), a record spreads ``1/|leaves|`` over the leaves its value
covers (:mod:`versapub.privacy.guarantees.induced`) and the histograms carry fractional counts.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.errors import RuleError
from versapub.plugins import Param
from versapub.privacy.guarantees.base import Histograms, IntArray, Params, SingleAttributeViolation, top_violation
from versapub.privacy.guarantees.diversity import one_group, ranked
from versapub.privacy.guarantees.tolerance import REL_TOL

TOL = 1e-12


def linear_phi(tau: float, lam: int) -> tuple[float, ...]:
    """``phi(1) .. phi(lambda - 1)`` of the linear bounding function (1 from ``lambda`` on)."""
    return tuple(tau + (k - 1) * (1 - tau) / (lam - 1) for k in range(1, lam))


def cumulative(h: Histograms) -> tuple[IntArray, IntArray, npt.NDArray[np.float64]]:
    """Per entry in each group's decreasing order: (group, rank ``k - 1``, ``F(k)``) —
    Definition 9, on whole or induced counts."""
    g, cnt, rank = ranked(h)
    size = h.sizes().astype(np.float64)
    csum = np.cumsum(cnt)
    excl = csum - cnt
    idx = np.arange(len(g), dtype=np.int64)
    f_cum = (csum - excl[idx - rank]) / np.maximum(size[g], 1)  # records up to this entry, in its group
    return g, rank, f_cum


def slack(h: Histograms, bound: tuple[float, ...] | list[float]) -> npt.NDArray[np.float64]:
    """Per group, ``e(E) = min_k (phi(k) - F_E(k))`` over the ``k`` where ``phi(k) < 1``
    (beyond, ``phi = 1`` and ``F(k) <= 1`` hold for every group, ``F = 1`` once ``k`` reaches
    the group's number of values, so the minimum over every ``k`` would be 0 or below):
    the excessive protection of an equivalence class (Definition 35 as the reading notes
    reconstruct it), negative when the class violates the bound; ``inf`` when ``phi`` is
    1 everywhere.  A group with fewer than ``k`` values has ``F(k) = 1``, reached at its
    last value."""
    phi = np.asarray(bound, dtype=np.float64)
    g, rank, f_cum = cumulative(h)
    inside = rank < len(phi)
    bounded = np.where(inside, phi[np.minimum(rank, max(len(phi) - 1, 0))], 1.0) if len(phi) else np.ones(len(g))
    use = inside & (bounded < 1 - 1e-12)
    out = np.full(h.n_groups, np.inf)
    np.minimum.at(out, g[use], (bounded - f_cum)[use])
    return out


@dataclass(frozen=True)
class FunctionalDiversity(Params):
    """Functional (tau, lambda)-diversity (see the module docstring); parameters ``tau``,
    ``lambda`` (``lam`` in Python) and optionally ``phi`` (its values, replacing the linear
    bound)."""

    tau: float
    lam: int
    phi: tuple[float, ...] | None = None

    name = "functional-diversity"
    example: ClassVar[dict[str, Any]] = {"tau": 0.5, "lambda": 3}
    #: Parameter spellings that are not Python names: ``lambda`` is the field ``lam``.
    spelled: ClassVar[dict[str, str]] = {"lambda": "lam"}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "tau": Param("number", low=0, high=1, low_open=True, high_open=True, required=True),
        "lambda": Param("whole", low=2, required=True),
        "phi": Param("numbers", low=0, high=1, low_open=True, optional=True),
    }
    glossary: ClassVar[str] = (
        "Functional (tau, lambda)-diversity (Definition 5 of the functional-diversity paper): in every class the k "
        "most frequent sensitive values together hold at most phi(k) of its records, phi rising linearly from tau "
        "at k = 1 to 1 at k = lambda."
    )

    def __post_init__(self) -> None:
        self.check_parameters()
        tau = self.tau
        if not (1 / self.lam - TOL <= tau < 1):
            raise RuleError(
                f"tau of functional (tau, lambda)-diversity must satisfy 1/lambda <= tau < 1 "
                f"(1/{self.lam} = {1 / self.lam:.4g}), got {tau!r}."
            )
        object.__setattr__(self, "tau", float(tau))
        if self.phi is not None:
            phi = tuple(self.phi)
            if not all(a <= b for a, b in itertools.pairwise(phi)):
                raise RuleError(
                    "phi of functional (tau, lambda)-diversity must be a list of non-decreasing values in (0, 1] "
                    f"(phi(1), phi(2), ...), got {self.phi!r}."
                )
            object.__setattr__(self, "phi", tuple(float(v) for v in phi))

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tau": self.tau, "lambda": self.lam}
        if self.phi is not None:
            out["phi"] = list(self.phi)
        return out

    def bound(self) -> tuple[float, ...]:
        """``phi(1), phi(2), ...`` up to the last value below 1 (1 afterwards)."""
        return self.phi if self.phi is not None else linear_phi(self.tau, self.lam)

    def cumulative_bound(self) -> tuple[float, ...]:
        return self.bound()

    def describe(self) -> str:
        shown = ", ".join(f"{v:.3g}" for v in self.bound())
        return (
            f"functional (tau, lambda)-diversity with tau = {self.tau:g}, lambda = {self.lam}: in every group the "
            f"k most frequent sensitive values hold at most phi(k) of its records, phi = {shown}, then 1"
        )

    def slack(self, h: Histograms) -> npt.NDArray[np.float64]:
        """Per group, ``min_k (phi(k) - F(k))`` over the ``k`` where ``phi(k) < 1`` (negative:
        violated) — the paper's excessive protection of an equivalence class (Definition 35,
        reconstruction; :func:`slack`)."""
        return slack(h, self.bound())

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        # F(k) <= phi(k) (1 + REL_TOL) for every k (versapub.privacy.guarantees.tolerance)
        loose = slack(h, [v * (1 + REL_TOL) if v < 1 else v for v in self.bound()])
        return np.asarray((loose >= 0) & (h.sizes() > 0))

    def achieved(self, h: Histograms) -> float:
        """The tightest group's slack (0 when a group meets ``phi`` exactly)."""
        s = self.slack(h)[h.sizes() > 0]
        worst = float(s.min()) if len(s) else float("inf")
        return 0.0 if -REL_TOL <= worst < 0 else worst

    def achieved_text(self, value: float) -> str:
        """The slack of the tightest class: 0 is the bound met exactly (not a failure)."""
        return "met exactly" if value <= REL_TOL else f"slack {value:.2f} below phi"

    def group_width(self) -> int:
        """All-distinct groups of ``w`` values have ``F(k) = k/w``: the smallest ``w`` with
        ``k/w <= phi(k)`` wherever ``phi(k) < 1``."""
        return max((math.ceil(k / v - 1e-9) for k, v in enumerate(self.bound(), start=1) if v < 1 - 1e-12), default=1)

    def min_possible_values(self) -> int:
        """``F(k) <= phi(k) < 1`` needs more than ``k`` values: one more than the last ``k``
        with ``phi(k) < 1``."""
        below = [k for k, v in enumerate(self.bound(), start=1) if v < 1 - 1e-12]
        return (max(below) + 1) if below else 1

    def posterior_limit(self) -> float:
        return self.bound()[0]

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        m = int((np.asarray(counts) > 0).sum())
        if self.lam > m:
            return top_violation(
                counts,
                {"lambda": m},
                (f"lambda = {self.lam} exceeds the number of distinct sensitive values m = {m} (2 <= lambda <= m)"),
            )
        h = one_group(np.asarray(counts))
        if self.groups_satisfied(h).all():
            return None
        best = self.smallest_tau(np.asarray(counts))
        hint = (
            f"; with lambda = {self.lam} the smallest feasible tau is {best:.4f}"
            if self.phi is None and best < 1
            else "; no tau < 1 is feasible with this lambda"
        )
        return top_violation(counts, {"tau": round(best, 6)}, f"the column's cumulative frequencies exceed phi{hint}")

    def smallest_tau(self, counts: IntArray) -> float:
        """For the linear bound: the smallest tau the whole column satisfies with this lambda
        (``F(k) <= tau (1 - (k-1)/(lambda-1)) + (k-1)/(lambda-1)`` for every ``k < lambda``)."""
        f = np.sort(np.asarray(counts, dtype=np.float64))[::-1]
        f_cum = np.cumsum(f / f.sum())
        need = 1 / self.lam
        for k in range(1, self.lam):
            a = (k - 1) / (self.lam - 1)
            need = max(need, (f_cum[k - 1] - a) / (1 - a))
        return float(need)
