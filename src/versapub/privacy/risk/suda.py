"""Special uniques: minimal sample uniques (MSUs) and the SUDA score (issue 32).

An MSU of a record is a set of its quasi-identifier values that no other record shares
(a sample unique on those attributes) while every proper subset is shared (Elliot, Manning
& Ford, "A computational algorithm for handling the special uniques problem", IJUFKS 10(5),
2002; SUDA2: Manning, Haglin & Keane, "A recursive search algorithm for statistical
disclosure assessment", Data Mining and Knowledge Discovery 16, 2008). SUDA2 finds the MSUs
up to a size ``M`` by a recursive search; here the same set is computed level by level over
attribute subsets (choice 159): a record is unique on ``S`` when its class over ``S`` holds
one record, and ``S`` is minimal when it is unique on no ``S`` minus one attribute (being
unique is inherited by supersets, so the immediate subsets decide). Each level is one
vectorized grouping per subset, over rows that are records or classes with their counts —
skipped when every one-record row is already unique on a subset of it.

The **SUDA score** of a record sums, over its MSUs, ``prod_{i=k}^{M-1} (A - i)`` for an MSU
of ``k`` of the ``A`` attributes (1 for ``k = M``): smaller MSUs weigh more (Elliot et al.
2002, section 4; sdcMicro's ``suda2`` and ARX's ``RiskModelMSU``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import combined_key
from versapub.errors import InputError

#: Default largest MSU size searched (every size up to the number of attributes when fewer).
DEFAULT_MAX_SIZE = 5


@dataclass(frozen=True)
class Suda:
    """MSUs up to ``max_size`` of ``attributes``: per row, its number of MSUs, the size of its
    smallest (0: none) and its SUDA score; ``by_size[k-1]``: MSUs of ``k`` attributes over
    all rows."""

    attributes: tuple[str, ...]
    max_size: int
    msus: npt.NDArray[np.int64]
    smallest: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]
    by_size: tuple[int, ...]

    def summary(self, counts: npt.NDArray[np.int64] | None = None) -> dict[str, Any]:
        """Records with an MSU, MSUs by size, highest and mean score per record (``counts``:
        records per row when the rows are classes; a class with an MSU holds one record)."""
        w = np.ones(len(self.scores), dtype=np.int64) if counts is None else np.asarray(counts)
        n = int(w.sum())
        return {
            "attributes": list(self.attributes),
            "max_size": self.max_size,
            "records_with_msu": int((self.msus > 0).sum()),
            "msus": int(self.msus.sum()),
            "msus_by_size": {str(k + 1): c for k, c in enumerate(self.by_size)},
            "highest_score": float(self.scores.max()) if len(self.scores) else 0.0,
            "mean_score": math.fsum((self.scores * w).tolist()) / n if n else 0.0,
        }


def score_weight(size: int, n_attributes: int, max_size: int) -> float:
    """``prod_{i=size}^{max_size-1} (n_attributes - i)``: an MSU's weight in the score."""
    return float(math.prod(n_attributes - i for i in range(size, max_size)))


def suda(
    codes: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    attributes: Sequence[str],
    *,
    counts: npt.ArrayLike | None = None,
    max_size: int | None = None,
) -> Suda:
    """MSUs and SUDA scores of rows given by their attribute ``codes`` (with cardinalities
    ``cards``); ``counts``: records per row (rows as classes), default one each."""
    a = len(codes)
    if a != len(attributes) or a != len(cards) or not a:
        raise InputError("SUDA needs at least one quasi-identifier, with codes for each.")
    m = min(a, DEFAULT_MAX_SIZE if max_size is None else max_size)
    if m < 1:
        raise InputError(f"The largest MSU size must be at least 1, got {max_size!r}.")
    rows = len(codes[0])
    w = np.ones(rows, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    single = np.flatnonzero(w == 1)  # only a row of one record can be unique
    msus = np.zeros(rows, dtype=np.int64)
    smallest = np.zeros(rows, dtype=np.int64)
    scores = np.zeros(rows, dtype=np.float64)
    by_size: list[int] = []
    previous: dict[tuple[int, ...], npt.NDArray[np.bool_]] = {}
    for k in range(1, m + 1):
        current: dict[tuple[int, ...], npt.NDArray[np.bool_]] = {}
        found = 0
        weight = score_weight(k, a, m)
        for subset in itertools.combinations(range(a), k):
            if single.size == 0:
                break
            inherited = np.zeros(len(single), dtype=bool)  # unique on a subset: unique here, not minimal
            for drop in range(k if k > 1 else 0):
                inherited |= previous[subset[:drop] + subset[drop + 1 :]]
            minimal = np.zeros(len(single), dtype=bool)
            if not inherited.all():  # some row may be minimal here: group by the subset
                key, space, _ = combined_key([codes[j] for j in subset], [cards[j] for j in subset])
                if space > 4 * rows + 1024:  # a sparse key space: dense ranks first
                    key = np.unique(key, return_inverse=True)[1].ravel()
                sizes = np.bincount(key, weights=w)
                minimal = ~inherited & (sizes[key[single]] == 1)  # over the one-record rows
            current[subset] = inherited | minimal
            hit = single[minimal]
            msus[hit] += 1
            smallest[hit[smallest[hit] == 0]] = k
            scores[hit] += weight
            found += len(hit)
        by_size.append(found)
        previous = current
    return Suda(tuple(attributes), m, msus, smallest, scores, tuple(by_size))
