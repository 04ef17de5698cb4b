"""MST's compression of rare values (McKenna, Miklau & Sheldon 2021, §4.2; Private-PGM's
``mechanisms/mst.py``, ``compress_domain``): after the one-way marginals are measured, the
values of an attribute whose noisy count is below ``3 sigma`` are merged into one value, so
that the two-way marginals measured next spend no noise on cells that hardly occur.  It reads
only the noisy one-way counts (post-processing: no budget).  The one-way measurement is
re-expressed over the compressed domain for the fit: the merged cell is the sum of the
merged noisy cells, with noise scale ``sigma sqrt(m)`` for ``m`` merged values (Private-PGM
divides both by ``sqrt(m)``, the same measurement)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.mechanisms.fit import Noisy
from versapub.mechanisms.measure import NoisyMarginal

#: A value is kept when its noisy one-way count is at least this many noise scales.
SUPPORT = 3.0


def label(merged: int) -> str:
    """The published name of an attribute's merged value (never a declared value: ⟨⟩)."""
    return f"⟨{merged} rare values⟩"


@dataclass(frozen=True)
class Compression:
    """Per compressed attribute: each declared value's position in the compressed domain
    (kept values in declared order, then the merged value), and the compressed domain's
    values; attributes where every value is kept are not listed."""

    recode: dict[str, npt.NDArray[np.int64]]
    values: dict[str, tuple[str, ...]]
    #: Per compressed attribute: the merged value's label and the declared values it stands for.
    merged: dict[str, tuple[str, tuple[str, ...]]]

    def cards(self, domains: Mapping[str, Sequence[str]], attributes: Sequence[str]) -> dict[str, int]:
        return {a: len(self.values[a]) if a in self.values else len(domains[a]) for a in attributes}

    def noisy(self, m: NoisyMarginal) -> Noisy:
        """A one-way measurement over the declared domain, re-expressed over the compressed one."""
        (a,) = m.attributes
        y = m.counts.astype(np.float64)
        if a not in self.recode:
            return Noisy(m.attributes, y, m.entry.sigma)
        code = self.recode[a]
        sums = np.bincount(code, weights=y, minlength=int(code.max()) + 1).astype(np.float64)
        sizes = np.bincount(code, minlength=int(code.max()) + 1)
        return Noisy(m.attributes, sums, m.entry.sigma, m.entry.sigma * np.sqrt(sizes.astype(np.float64)))

    def spread(self, attributes: Sequence[str], table: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """A table over compressed domains back over the declared ones: a merged value's
        mass shared equally by the values it stands for (the maximum-entropy spread, as
        Private-PGM's decompression draws among them uniformly)."""
        out = table
        for axis, a in enumerate(attributes):
            if a in self.recode:
                code = self.recode[a]
                sizes = np.bincount(code).astype(np.float64)
                out = np.take(out, code, axis=axis) / np.expand_dims(
                    sizes[code], [i for i in range(out.ndim) if i != axis]
                )
        return out


def compress(one_way: Sequence[NoisyMarginal], domains: Mapping[str, Sequence[str]]) -> Compression:
    """The compression the noisy one-way marginals call for (module docstring)."""
    recode, values, merged = {}, {}, {}
    for m in one_way:
        (a,) = m.attributes
        keep = m.counts >= SUPPORT * m.entry.sigma
        if keep.all():
            continue
        kept = int(keep.sum())
        code = np.full(len(keep), kept, dtype=np.int64)
        code[keep] = np.arange(kept)
        rare = tuple(str(v) for v, k in zip(domains[a], keep, strict=True) if not k)
        name = label(len(rare))
        recode[a] = code
        values[a] = (*(str(v) for v, k in zip(domains[a], keep, strict=True) if k), name)
        merged[a] = (name, rare)
    return Compression(recode, values, merged)
