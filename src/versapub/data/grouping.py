"""Groups of records defined by position: Anatomy's grouping as data.

Xiao & Tao's groups are a function of a record's *bucket* (its code of the sensitive
attribute) and its *rank* inside the bucket in a random order: the record at position
``p = start[b] + rank`` (buckets laid out one after another) joins ``slots[p]`` (the greedy
schedule, computed on the bucket counts alone) or ``p mod G`` (the wrap-around closed
form).  Group ids are then relabelled by a random permutation.  A :class:`Grouping`
carries only this rule; each backend (:mod:`versapub.data.source`) draws the random ranks
its own way and counts ``(values..., group)`` — in memory from one shuffle of the records,
on a cluster from a seeded random key ranked inside each partition plus the partition's
offset in the bucket, so that no global sort is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]

#: The name of the group column in a grouped count table (the release format's).
GROUP_ID = "group_id"


@dataclass(frozen=True)
class Grouping:
    """Groups by bucket and rank (module docstring).  ``counts[b]``: records of bucket
    ``b``; ``slots``: the group of every position (``None``: wrap-around)."""

    sensitive: str
    n_groups: int
    counts: IntArray
    slots: IntArray | None = None

    def __post_init__(self) -> None:
        if self.n_groups < 1:
            raise ValueError("a grouping has at least one group")
        if self.slots is not None and len(self.slots) != int(self.counts.sum()):
            raise ValueError("a grouping's slots cover every record once")

    @property
    def start(self) -> IntArray:
        """Where each bucket's positions begin."""
        return np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    def of(self, bucket: npt.NDArray[np.integer], rank: npt.NDArray[np.integer]) -> IntArray:
        """The group (before relabelling) of records of ``bucket`` at ``rank`` inside it."""
        pos = self.start[bucket] + np.asarray(rank, dtype=np.int64)
        return pos % self.n_groups if self.slots is None else self.slots[pos]
