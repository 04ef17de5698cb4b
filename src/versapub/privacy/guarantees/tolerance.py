"""The one tolerance of every guarantee test on computed numbers.

Counts are whole numbers and compare exactly; shares, induced frequencies, entropies,
distances and the maximum-entropy estimate's expected counts are sums and products of
floating-point numbers that land within a few units in the last place of the exact value.
Every test of a guarantee compares ``x`` with its bound ``b`` as ``x <= b (1 + REL_TOL)``
(or ``>=`` / ``<`` likewise), never by rounding the operands one by one (rounding each
share of a class to 9 decimals left a class of 7 of 14 records 3e-9 short of l = 2).

``REL_TOL`` is far below any real violation: a count one record over its bound exceeds
it by at least ``1/n`` relatively (``n`` < 10^10 records), and the numbers compared are
exact up to ~1e-13 relatively.  A strict inequality (recursive (c,l)-diversity's
``r_1 < c (r_l + ... + r_m)``) keeps its strictness on the safe side: it must hold by more
than the tolerance.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: Relative tolerance of every comparison of a computed number with a guarantee's bound.
REL_TOL = 1e-10


def at_most(x: npt.ArrayLike, bound: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``x <= bound``, up to :data:`REL_TOL` of ``bound``."""
    b = np.asarray(bound, dtype=np.float64)
    return np.asarray(np.asarray(x, dtype=np.float64) <= b + REL_TOL * np.abs(b))


def at_least(x: npt.ArrayLike, bound: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``x >= bound``, up to :data:`REL_TOL` of ``bound``."""
    b = np.asarray(bound, dtype=np.float64)
    return np.asarray(np.asarray(x, dtype=np.float64) >= b - REL_TOL * np.abs(b))


def below(x: npt.ArrayLike, bound: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``x < bound`` by more than :data:`REL_TOL` of ``bound`` (a strict inequality decided
    on the safe side: equality up to rounding fails)."""
    b = np.asarray(bound, dtype=np.float64)
    return np.asarray(np.asarray(x, dtype=np.float64) < b - REL_TOL * np.abs(b))


def within(x: float, bound: float) -> bool:
    """:func:`at_most` of two numbers."""
    return bool(at_most(x, bound))
