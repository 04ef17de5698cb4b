"""Per-group histograms of one sensitive attribute, the data structure every guarantee
reads (:mod:`versapub.privacy.guarantees.base` says how): parallel arrays ``group`` (group index of
each entry), ``count`` (records of the group holding one sensitive value; fractional for
induced counts) and, when a guarantee compares distributions, ``value`` (the value's
code); only non-zero entries are listed.  Kept in the data layer so that a backend can
summarize the groups of a count table it holds against a guarantee it is handed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Histograms:
    """Sparse per-group histograms of one sensitive attribute (see the module docstring)."""

    group: IntArray
    count: IntArray | Floats
    n_groups: int
    value: IntArray | None = None
    #: Per group: the population records its published values cover (delta-presence and
    #: k-map against a population; ``None`` when no population was counted).
    population: IntArray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "group", np.asarray(self.group, dtype=np.int64))
        count = np.asarray(self.count)
        fractional = np.issubdtype(count.dtype, np.floating) and not np.array_equal(count, np.rint(count))
        object.__setattr__(self, "count", count.astype(np.float64 if fractional else np.int64))
        if self.value is not None:
            object.__setattr__(self, "value", np.asarray(self.value, dtype=np.int64))
        if len(self.group) != len(self.count) or (self.value is not None and len(self.value) != len(self.group)):
            raise ValueError("group, count and value must have one entry each")
        if self.population is not None:
            object.__setattr__(self, "population", np.asarray(self.population, dtype=np.int64))
            if len(self.population) != self.n_groups:
                raise ValueError("population must have one entry per group")

    @property
    def induced(self) -> bool:
        """Fractional (induced) counts: some sensitive values were generalized."""
        return bool(self.count.dtype == np.float64)

    def sizes(self) -> IntArray:
        """Records per group (induced counts sum to whole records)."""
        return np.rint(np.bincount(self.group, weights=self.count, minlength=self.n_groups)).astype(np.int64)

    def largest(self) -> IntArray | Floats:
        """Per group, the count of its most frequent value (0 for an empty group)."""
        if self.induced:
            fmx = np.zeros(self.n_groups, dtype=np.float64)
            np.maximum.at(fmx, self.group, self.count)
            return fmx
        mx = np.zeros(self.n_groups, dtype=np.int64)
        np.maximum.at(mx, self.group, self.count)
        return mx

    def values(self) -> IntArray:
        if self.value is None:
            raise ValueError("these histograms carry no value codes")
        return self.value


def combine_achieved(guarantee: GroupTest, values: Sequence[float]) -> float:
    """The guarantee's measure over several sets of groups from each set's measure: the
    weakest group's is the smallest (a measure of safety: l, k, slack) unless the
    guarantee's measure is a distance (``achieved_is_distance``: t-closeness), then the
    largest."""
    return float(max(values) if guarantee.achieved_is_distance else min(values))


class GroupTest(Protocol):
    """What a backend needs of a guarantee to summarize groups (a privacy guarantee is one)."""

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]: ...

    def achieved(self, h: Histograms) -> float: ...

    @property
    def achieved_is_distance(self) -> bool:
        """The achieved measure is a distance (the weakest group's is the largest)."""
        ...
