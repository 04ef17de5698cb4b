"""Strength of requirements (the functional-diversity paper, §3: Definition 18, Lemma 19,
Theorems 20 and 23, Corollaries 21 and 24): which simple l-diversity and which recursive
(c, l)-diversity requirements imply a given functional (tau, lambda)-diversity one, and the
weakest of them — the requirement a baseline is run with to meet (tau, lambda).

A requirement ``r1`` is stronger than ``r2`` (Definition 18) when every class satisfying
``r1`` satisfies ``r2``.  For a bound ``phi`` on cumulative frequencies this holds iff the
largest ``F(k)`` any ``r1``-class can have stays under ``phi(k)`` for every ``k``:

* simple l-diversity (``f_1 <= 1/l``): the largest ``F(k)`` is ``min(k/l, 1)``, so it is
  stronger iff ``l >= k/phi(k)`` wherever ``phi(k) < 1``; for the linear bound that is
  ``l >= lambda`` (Theorem 20 as reconstructed here: the extraction lost its statement),
  and the weakest is ``l = lambda`` (Corollary 21);
* recursive (c, l)-diversity (``r_1 < c (r_l + ... + r_m)``) over ``m`` values: the largest
  ``F(k)`` is a linear program over the ordered simplex with one more constraint, solved
  through its one-variable dual (:func:`sup_cumulative`, checked against a general LP
  solver in the tests).  It grows
  with ``c``, so for each ``l`` the weakest stronger requirement has the largest ``c`` with
  ``sup F(k) <= phi(k)`` (:func:`weakest_c`, bisection; Theorem 23 / Corollary 24 fix one of
  ``c`` and ``l`` and determine the other the same way).  By Lemma 19 a larger ``l`` or a
  smaller ``c`` is stronger, so these pairs are the weakest ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


def phi_values(bound: Sequence[float], m: int) -> Floats:
    """``phi(1) .. phi(m)`` (1 after the bound's last value)."""
    out = np.ones(m)
    b = np.asarray(bound[:m], dtype=np.float64)
    out[: len(b)] = b
    return out


def weakest_simple_l(bound: Sequence[float]) -> int:
    """The weakest simple l-diversity stronger than ``F(k) <= phi(k)``: the smallest ``l``
    with ``k/l <= phi(k)`` wherever ``phi(k) < 1`` (Theorem 20 / Corollary 21; ``lambda`` for
    the linear bound)."""
    below = [(k, v) for k, v in enumerate(bound, start=1) if v < 1 - 1e-12]
    return max((math.ceil(k / v - 1e-9) for k, v in below), default=1)


def simple_is_stronger(l: int, bound: Sequence[float]) -> bool:
    """Theorem 20: is simple l-diversity stronger than the bound?"""
    return l >= weakest_simple_l(bound)


def sup_cumulative(c: float, l: int, m: int, ks: Sequence[int] | None = None) -> Floats:
    """``sup F(k)`` (for ``k`` in ``ks``, default ``1 .. m``) over distributions of ``m``
    values satisfying recursive (c, l)-diversity (the supremum: the constraint is strict).
    The vertices ``v_j`` of the ordered simplex (``j`` equal top values) have ``f_1 - c (f_l
    + ... + f_m) = a_j = (1 - c max(0, j - l + 1)) / j`` and ``F(k) = b_j = min(k, j) / j``,
    so the supremum is the linear program ``max sum_j x_j b_j`` over ``x >= 0``, ``sum x =
    1``, ``sum x_j a_j <= 0``, whose dual is ``min_{mu >= 0} max_j (b_j - mu a_j)``: convex
    in ``mu``, minimized by a ternary search (strong duality makes it exact).  ``nan`` when
    no distribution satisfies (c, l) (then it is vacuously stronger than anything)."""
    j = np.arange(1, m + 1, dtype=np.float64)
    a = (1 - c * np.maximum(0, j - l + 1)) / j
    k = np.arange(1, m + 1, dtype=np.float64) if ks is None else np.asarray(ks, dtype=np.float64)
    if not (a <= 0).any():
        return np.full(len(k), np.nan)
    b = np.minimum(k[:, None], j[None, :]) / j[None, :]  # b[k, j] = F(k) at v_j

    def g(mu: Floats) -> Floats:
        return np.asarray(np.max(b - mu[:, None] * a[None, :], axis=1))

    lo = np.zeros(len(k))
    hi = np.ones(len(k))
    while True:  # past the minimizer once g grows: mu at least as large as every crossing
        grow = g(2 * hi) > g(hi) + 1e-15
        if grow.all() or hi.max() > 1e12:
            break
        hi = np.where(grow, hi, 2 * hi)
    hi = 2 * hi
    for _ in range(110):  # (2/3)^110 < 1e-19 of the interval
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        left = g(m1) <= g(m2)
        hi = np.where(left, m2, hi)
        lo = np.where(left, lo, m1)
    return np.minimum(np.minimum(g(lo), g(hi)), g((lo + hi) / 2))


def cl_is_stronger(c: float, l: int, bound: Sequence[float], m: int) -> bool:
    """Theorem 23: is recursive (c, l)-diversity over ``m`` values stronger than the bound?
    (Only the ``k`` where ``phi(k) < 1`` can fail.)"""
    phi = phi_values(bound, m)
    ks = [k for k in range(1, m + 1) if phi[k - 1] < 1 - 1e-12]
    if not ks:
        return True
    sup = sup_cumulative(c, l, m, ks)
    if np.isnan(sup).all():
        return True
    return bool((sup <= phi[np.asarray(ks) - 1] + 1e-10).all())


def weakest_c(l: int, bound: Sequence[float], m: int) -> float | None:
    """The largest ``c`` for which (c, l)-diversity over ``m`` values is stronger than the
    bound (Theorem 23 / Corollary 24 with ``l`` fixed); ``None`` when only unsatisfiable
    ones are (``c <= 1/(m - l + 1)``: no class can then satisfy (c, l))."""
    if not 2 <= l <= m:
        return None
    low = 1.0 / (m - l + 1)  # at or below: unsatisfiable
    if not cl_is_stronger(low * (1 + 1e-9), l, bound, m):
        return None
    hi = 2 * low
    while cl_is_stronger(hi, l, bound, m):
        low, hi = hi, hi * 2
        if hi > 1e9:
            return math.inf
    for _ in range(60):
        mid = (low + hi) / 2
        if cl_is_stronger(mid, l, bound, m):
            low = mid
        else:
            hi = mid
    return low


def weakest_cl_pairs(bound: Sequence[float], m: int, max_l: int | None = None) -> list[tuple[float, int]]:
    """``(c, l)`` for every ``l`` up to ``max_l`` (default ``m``) whose weakest stronger
    requirement is satisfiable."""
    out = []
    for l in range(2, min(m, max_l or m) + 1):
        c = weakest_c(l, bound, m)
        if c is not None:
            out.append((c, l))
    return out
