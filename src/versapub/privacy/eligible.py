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
  (:meth:`~versapub.privacy.functional.FunctionalDiversity.smallest_tau`).

With a taxonomy of the sensitive attribute, generalizing every value to level ``L`` spreads
its records over the leaves of its level-``L`` ancestor (induced frequencies), which
widens every range; at the root every frequency is ``1/m`` and every valid requirement is
eligible — so with no limit on sensitive generalization every valid requirement can be
met, and the question becomes how far it must generalize.
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
    """Induced frequencies of every leaf of ``hierarchy`` when each record's value is
    generalized to ``level``: a record spreads ``1 / |leaves|`` over the leaves its level-
    ``level`` ancestor covers (the reading notes' ``w(v, a)``)."""
    hierarchy.require_covers(column)
    leaves = [row[0] for row in hierarchy.levels]
    node = [row[level] for row in hierarchy.levels]
    index = {v: i for i, v in enumerate(leaves)}
    counts = np.zeros(len(leaves))
    for v, c in zip(column.values.astype(str), column.counts(), strict=True):
        counts[index[v]] += c
    nodes, of_leaf = np.unique(np.asarray(node, dtype=object).astype(str), return_inverse=True)
    mass = np.bincount(of_leaf, weights=counts, minlength=len(nodes))
    width = np.bincount(of_leaf, minlength=len(nodes))
    return np.asarray(mass[of_leaf] / width[of_leaf] / counts.sum())


def ranges(column: Column, hierarchy: Hierarchy | None = None, max_level: int | None = None) -> list[EligibleRange]:
    """The eligible ranges without sensitive generalization and, with a taxonomy, at each
    level up to ``max_level`` (default: the level below the root)."""
    out = [eligible(column.counts().astype(np.float64), 0)]
    if hierarchy is None:
        return out
    top = hierarchy.height - 2 if max_level is None else min(max_level, hierarchy.height - 1)
    out[0] = eligible(induced(column, hierarchy, 0), 0)  # the taxonomy's whole domain
    out += [eligible(induced(column, hierarchy, k), k) for k in range(1, top + 1)]
    return out
