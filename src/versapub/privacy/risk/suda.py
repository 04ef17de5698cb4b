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

**Bounded by default** (issue 50). The search costs one grouping of every row per attribute
subset: ``sum_k C(A, k) x rows`` row-groupings for sizes up to ``M``, known before it runs
(21 attributes of 64,600 records up to size 5: 1.8e9, 40 s and 2 GB here). :func:`plan` takes
the largest ``M`` whose cost stays under a ceiling (:data:`DEFAULT_COST_LIMIT`, about 4 s);
the result says which sizes were not searched and what they would cost (choice 207).

The **SUDA score** of a record sums, over its MSUs, ``prod_{i=k}^{M-1} (A - i)`` for an MSU
of ``k`` of the ``A`` attributes (1 for ``k = M``): smaller MSUs weigh more (Elliot et al.
2002, section 4; sdcMicro's ``suda2`` and ARX's ``RiskModelMSU``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import combined_key
from versapub.errors import InputError

#: Default largest MSU size searched (every size up to the number of attributes when fewer).
DEFAULT_MAX_SIZE = 5
#: Default ceiling on the search's cost, in row-groupings (rows x attribute subsets): about
#: 4 s and 200 MB on this project's 2-core machine; ``None`` lifts it.
DEFAULT_COST_LIMIT = 200_000_000


@dataclass(frozen=True)
class Plan:
    """The sizes SUDA searches: ``requested`` (the largest MSU size asked for), ``searched``
    (the largest whose cost fits under ``limit``; at least 1) and each size's cost in
    row-groupings (``costs[k-1]``: ``C(attributes, k) x rows``)."""

    requested: int
    searched: int
    costs: tuple[int, ...]
    limit: int | None

    def __post_init__(self) -> None:
        if not 1 <= self.searched <= self.requested or len(self.costs) != self.requested:
            raise ValueError(f"an inconsistent SUDA plan: {self!r}")

    @property
    def cost(self) -> int:
        """The searched sizes' cost (an upper bound: rows already unique on a subset are skipped)."""
        return sum(self.costs[: self.searched])

    @property
    def skipped_cost(self) -> int:
        return sum(self.costs[self.searched :])

    def note(self) -> str | None:
        """What was not searched, and how to search it; ``None`` when every size was."""
        if self.searched == self.requested:
            return None
        sizes = f"{self.searched + 1}" + (f"-{self.requested}" if self.requested > self.searched + 1 else "")
        return (
            f"MSUs of {sizes} attributes were not searched: they would cost {self.skipped_cost:,} more row-groupings "
            f"(searched: {self.cost:,}; ceiling {self.limit:,}, about 4 s here). Search them with a higher "
            "--suda-limit (0: no ceiling) or fewer quasi-identifiers."
        )


def plan(n_attributes: int, rows: int, max_size: int | None = None, limit: int | None = DEFAULT_COST_LIMIT) -> Plan:
    """The sizes SUDA will search for ``rows`` rows of ``n_attributes`` attributes, before it runs."""
    m = min(n_attributes, DEFAULT_MAX_SIZE if max_size is None else max_size)
    if m < 1:
        raise InputError(f"The largest MSU size must be at least 1, got {max_size!r}.")
    if limit is not None and limit < 0:
        raise InputError(f"The SUDA cost ceiling must be non-negative (0 or none: no ceiling), got {limit!r}.")
    costs = tuple(math.comb(n_attributes, k) * rows for k in range(1, m + 1))
    searched, total = 0, 0
    for c in costs:
        if limit and searched and total + c > limit:
            break
        searched, total = searched + 1, total + c
    return Plan(m, searched, costs, limit or None)


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
    plan: Plan | None = None

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
            "requested_max_size": self.plan.requested if self.plan else self.max_size,
            **({"cost": self.plan.cost} if self.plan else {}),
            **({"not_searched": note} if self.plan and (note := self.plan.note()) else {}),
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
    limit: int | None = DEFAULT_COST_LIMIT,
    progress: Callable[[int, int], None] | None = None,
) -> Suda:
    """MSUs and SUDA scores of rows given by their attribute ``codes`` (with cardinalities
    ``cards``); ``counts``: records per row (rows as classes), default one each; sizes up to
    ``max_size`` whose cost fits under ``limit`` (:func:`plan`); ``progress(done, total)`` in
    row-groupings, about every percent."""
    a = len(codes)
    if a != len(attributes) or a != len(cards) or not a:
        raise InputError("SUDA needs at least one quasi-identifier, with codes for each.")
    rows = len(codes[0])
    chosen = plan(a, rows, max_size, limit)
    m = chosen.searched
    done, told, step = 0, 0, max(chosen.cost // 100, 1)
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
            done += rows
            if progress is not None and done - told >= step:
                progress(done, chosen.cost)
                told = done
        by_size.append(found)
        previous = current
    if progress is not None:
        progress(chosen.cost, chosen.cost)
    return Suda(tuple(attributes), m, msus, smallest, scores, tuple(by_size), chosen)
