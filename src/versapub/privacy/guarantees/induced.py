"""Induced frequencies (the functional-diversity paper, Definitions 8–9; reading notes).

A record whose sensitive value is a taxonomy node ``v`` counts ``w(v, a) = 1/|leaves(v)|``
towards every leaf ``a`` that ``v`` covers (1 towards itself when it is a leaf).  Summing
over a group's records gives its *induced* counts; divided by the group's size, its
induced frequencies ``f_E(a)``, and sorted decreasingly their cumulative sums ``F(k)``.

Generalized values are runs ``first..last`` of an order of the attribute's leaves in which
every node's leaves are contiguous (the release format's ``labels`` and ``order``
listings; a leaf is the run of its own position), so spreading a value is a ``repeat``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from versapub.privacy.guarantees.base import Histograms

IntArray = npt.NDArray[np.int64]


def induced_histograms(
    group: IntArray, first: IntArray, last: IntArray, count: npt.ArrayLike, n_groups: int
) -> Histograms:
    """Per group, the induced counts over leaf positions: entry ``i`` (a group, a sensitive
    value covering leaf positions ``first[i]..last[i]``, ``count[i]`` records) adds
    ``count[i] / (last[i] - first[i] + 1)`` to each leaf position it covers.  Values of the
    returned histograms are leaf positions; counts are whole when nothing is generalized."""
    group = np.asarray(group, dtype=np.int64)
    first = np.asarray(first, dtype=np.int64)
    width = np.asarray(last, dtype=np.int64) - first + 1
    cnt = np.asarray(count, dtype=np.float64)
    if len(width) and int(width.min()) < 1:
        raise ValueError("a sensitive value covers no leaf")
    total = int(width.sum())
    rep = np.repeat(np.arange(len(width), dtype=np.int64), width)
    offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(width) - width, width)
    leaf = first[rep] + offset
    m = int(leaf.max()) + 1 if total else 1
    key = group[rep] * m + leaf
    uniq, inv = np.unique(key, return_inverse=True)
    weight = np.bincount(inv.ravel(), weights=(cnt / width)[rep], minlength=len(uniq))
    return Histograms(uniq // m, weight, n_groups, uniq % m)
