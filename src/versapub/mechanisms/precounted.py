"""Exact marginals counted elsewhere (issue 67): a mechanism reads its input only through the
exact counts of marginals over the declared domains (:func:`versapub.mechanisms.measure.exact_counts`),
and it can say which before it runs (``marginals_read``); a backend whose records stay on a
cluster counts those in one pass and hands them over as a :class:`Precounted` — the noise,
the ledger and the fit are then the in-memory path's, to the cell.

A marginal asked for is found whatever the order of its attributes (the counts are
transposed), and a compressed domain (MST's ``recode``) is summed from the declared one; a
marginal that was not counted is a bug of the mechanism's declaration, raised as such."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Counts = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Precounted:
    """The input of a mechanism as exact counts: ``names`` the columns, ``domains`` the
    declared values each was counted over, ``counts`` each marginal's cells (dense, C order
    over its attributes' domains in the key's order)."""

    names: tuple[str, ...]
    domains: Mapping[str, tuple[str, ...]]
    counts: Mapping[tuple[str, ...], Counts]
    source: str = "<counted elsewhere>"

    def __post_init__(self) -> None:
        for m, c in self.counts.items():
            if c.shape != (math.prod(len(self.domains[a]) for a in m),):
                raise ValueError(f"the counts of {m} do not fill its declared domains")

    def marginal(
        self,
        attributes: Sequence[str],
        domains: Mapping[str, Sequence[str]],
        recode: Mapping[str, npt.NDArray[np.int64]] | None = None,
    ) -> Counts:
        """The exact counts of ``attributes`` (dense, C order over their domains, each
        recoded by ``recode[a]`` when given), as :func:`~versapub.mechanisms.measure.exact_counts`."""
        attrs = tuple(attributes)
        for a in attrs:
            if tuple(str(v) for v in domains[a]) != tuple(self.domains[a]):
                raise ValueError(f"{a!r} was counted over other declared values than the ones asked for")
        key = next((m for m in self.counts if sorted(m) == sorted(attrs)), None)
        if key is None:
            raise ValueError(f"the marginal {attrs} was not counted: the mechanism read one it did not declare")
        sizes = [len(self.domains[a]) for a in key]
        full = self.counts[key].reshape(sizes).transpose([key.index(a) for a in attrs])
        recode = recode or {}
        if not any(a in recode for a in attrs):
            return np.ascontiguousarray(full).ravel().astype(np.int64)
        grids = np.meshgrid(*(np.arange(s) for s in full.shape), indexing="ij", sparse=True)
        mapped = [recode[a][g] if a in recode else g for a, g in zip(attrs, grids, strict=True)]
        cards = [int(recode[a].max()) + 1 if a in recode else len(self.domains[a]) for a in attrs]
        flat = np.ravel_multi_index(tuple(np.broadcast_arrays(*mapped)), cards).ravel()
        return np.bincount(flat, weights=full.ravel(), minlength=math.prod(cards)).round().astype(np.int64)
