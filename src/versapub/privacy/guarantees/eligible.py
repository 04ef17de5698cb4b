"""Eligible ranges (the functional-diversity paper, §1.1 and Table 1): which requirements a
table's sensitive distribution admits at all, before any anonymization.

Whatever the partition, the whole table is one of its coarsenings, and the measures below
are all monotone under merging groups, so a requirement the whole column fails fails for
every partition.  For a column with value frequencies ``f_1 >= f_2 >= ... >= f_m``:

* simple l-diversity (``f_1 <= 1/l`` in every group): eligible iff ``l <= 1/f_1``;
* recursive (c, l)-diversity (``r_1 < c (r_l + ... + r_m)``): for each ``l``, eligible iff
  ``c > r_1 / (r_l + ... + r_m)`` (no ``c`` when fewer than ``l`` values occur);
* functional (tau, lambda)-diversity with the linear bound: for each ``lambda <= m``,
  eligible iff ``tau >=`` the smallest tau the column meets
  (:meth:`~versapub.privacy.guarantees.functional.FunctionalDiversity.smallest_tau`).

With a taxonomy of the sensitive attribute, generalizing every value to level ``L`` spreads
its records over the leaves of its level-``L`` ancestor (induced frequencies), which
widens every range; at the root every frequency is ``1/m`` and every valid requirement is
eligible — so with no limit on sensitive generalization every valid requirement can be
met, and the question becomes how far it must generalize.  Under a limit ``L`` the ranges
at ``L`` are exact: the masses of the level-``L`` nodes are fixed, and spreading each
uniformly over its leaves is majorized by every other way of publishing them, so it
minimizes every ``F(k)`` at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.hierarchy import Hierarchy
from versapub.data.table import Column

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class EligibleRange:
    """The eligible requirements of one distribution (sensitive generalization ``level``;
    ``m`` values of the domain)."""

    level: int
    m: int
    #: The largest eligible simple l (``floor(1/f_1)``).
    max_l: int
    #: Per l = 2..m: the (exclusive) lower bound on c of recursive (c, l)-diversity (inf: none).
    min_c: dict[int, float]
    #: Per lambda = 2..m: the smallest eligible tau of functional (tau, lambda)-diversity.
    min_tau: dict[int, float]


def eligible(freqs: Floats, level: int = 0) -> EligibleRange:
    """The eligible ranges of a distribution ``freqs`` over the domain's values (zeros
    allowed: values of the domain the column does not hold)."""
    f = np.sort(np.asarray(freqs, dtype=np.float64))[::-1]
    f = f / f.sum()
    m = len(f)
    f_cum = np.cumsum(f)
    max_l = math.floor(1 / f[0] + 1e-12)
    min_c = {}
    for ell in range(2, m + 1):
        tail = float(f[ell - 1 :].sum())
        min_c[ell] = float(f[0] / tail) if tail > 1e-15 else math.inf
    min_tau = {}
    for lam in range(2, m + 1):
        need = 1 / lam
        for k in range(1, lam):
            a = (k - 1) / (lam - 1)
            need = max(need, (float(f_cum[k - 1]) - a) / (1 - a))
        min_tau[lam] = need
    return EligibleRange(level, m, max_l, min_c, min_tau)


def induced(column: Column, hierarchy: Hierarchy, level: int) -> Floats:
    """Induced frequencies of the column's values when each record's value is generalized
    to ``level``: a record spreads ``1 / |leaves|`` over the leaves its level-``level``
    ancestor covers (the reading notes' ``w(v, a)``).  The leaves are the column's values
    (the taxonomy restricted to them: a node covering values the table does not hold does
    not spread over them — ``docs/choices.md``); the result is in the column's code order."""
    hierarchy.require_covers(column)
    row = {r[0]: r for r in hierarchy.levels}
    node = np.array([row[str(v)][level] for v in column.values], dtype=object).astype(str)
    counts = column.counts().astype(np.float64)
    _, of_value = np.unique(node, return_inverse=True)
    of_value = of_value.ravel()
    mass = np.bincount(of_value, weights=counts)
    width = np.bincount(of_value)
    return np.asarray(mass[of_value] / width[of_value] / counts.sum())


def ranges(
    column: Column, hierarchy: Hierarchy | None = None, max_level: int | None = None, include_root: bool = False
) -> list[EligibleRange]:
    """The eligible ranges without sensitive generalization and, with a taxonomy, at each
    level up to ``max_level`` (default: the level below the root; the root too with
    ``include_root``, where every valid requirement is eligible)."""
    out = [eligible(column.counts().astype(np.float64), 0)]
    if hierarchy is None:
        return out
    last = hierarchy.height - 1 if include_root else hierarchy.height - 2
    top = last if max_level is None else min(max_level, last)
    out += [eligible(induced(column, hierarchy, k), k) for k in range(1, top + 1)]
    return out


def describe_ranges(found: list[EligibleRange], lam: int | None = None) -> str:
    """One line per level: the largest simple l and the smallest tau per lambda (of
    ``lam`` only, when given)."""
    parts = []
    for r in found:
        lams = [lam] if lam is not None and lam in r.min_tau else sorted(r.min_tau)[:6]
        taus = ", ".join(f"tau >= {r.min_tau[x]:.3f} for lambda = {x}" for x in lams)
        where = "values as they are" if r.level == 0 else f"level {r.level}"
        parts.append(f"{where}: simple l <= {r.max_l}" + (f", {taus}" if taus else f" (only {r.m} value(s))"))
    return "; ".join(parts)
