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
  ``F(k)`` is a linear program over the ordered simplex with one more constraint; its
  optimum lies at a vertex ``(1/j, ..., 1/j, 0, ...)`` or on an edge between two of them
  (:func:`sup_cumulative`, checked against a general LP solver in the tests).  It grows
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


def sup_cumulative(c: float, l: int, m: int) -> Floats:
    """``sup F(k)`` for ``k = 1 .. m`` over distributions of ``m`` values satisfying recursive
    (c, l)-diversity (the supremum: the constraint is strict).  Vertices ``v_j`` of the
    ordered simplex have ``f_1 - c (f_l + ... + f_m) = a_j = (1 - c max(0, j - l + 1)) / j``
    and ``F(k) = min(k, j) / j``; the optimum is a vertex with ``a_j <= 0`` or a mixture of
    one with ``a_i > 0`` and one with ``a_j < 0`` on ``a = 0``.  ``nan`` when no distribution
    satisfies (c, l) (then it is vacuously stronger than anything)."""
    j = np.arange(1, m + 1, dtype=np.float64)
    a = (1 - c * np.maximum(0, j - l + 1)) / j
    k = np.arange(1, m + 1, dtype=np.float64)
    b = np.minimum(k[:, None], j[None, :]) / j[None, :]  # b[k-1, j-1] = F(k) at v_j
    ok = a <= 0
    if not ok.any():
        return np.full(m, np.nan)
    best = np.max(np.where(ok[None, :], b, -np.inf), axis=1)
    pos, neg = np.flatnonzero(a > 0), np.flatnonzero(a < 0)
    if len(pos) and len(neg):
        ai, aj = a[pos][:, None], a[neg][None, :]
        mix = (b[:, pos][:, :, None] * (-aj)[None] + b[:, neg][:, None, :] * ai[None]) / (ai - aj)[None]
        best = np.maximum(best, mix.reshape(m, -1).max(axis=1))
    return best


def cl_is_stronger(c: float, l: int, bound: Sequence[float], m: int) -> bool:
    """Theorem 23: is recursive (c, l)-diversity over ``m`` values stronger than the bound?"""
    sup = sup_cumulative(c, l, m)
    if np.isnan(sup).all():
        return True
    return bool((sup <= phi_values(bound, m) + 1e-12).all())


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
    for _ in range(80):
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
