"""Class sizes where a missing value matches any value (sdcMicro's ``freqCalc``), issue 44.

versapub reads a missing (empty) cell as a value like any other, as ARX does: the record
with an empty income is in the class of records with an empty income.  sdcMicro reads it as
matching *any* value: a record's frequency ``f_i`` is the number of records *compatible* with
it — equal on every quasi-identifier where neither is missing.  Compatible sizes are never
smaller than the exact ones (a record is compatible with every record of its own class), so a
release whose cells hold ``k`` records under versapub's reading holds at least ``k`` under
sdcMicro's; the option measures what an sdcMicro user would report (``versapub risk
--missing-matches-any``).

Computed without comparing records pairwise: the rows are grouped by their pattern of
missing attributes; for each pair of patterns ``(P, Q)`` the rows of ``Q`` are summed per
value combination of the attributes missing in neither, and each row of ``P`` adds the sum
of its combination — ``O(patterns^2 x rows)``, vectorized.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows

IntArray = npt.NDArray[np.int64]


def compatible_sizes(
    codes: Sequence[IntArray], cards: Sequence[int], missing: Sequence[int | None], counts: IntArray
) -> IntArray:
    """Per row (a distinct combination of ``codes`` holding ``counts`` records), the records
    compatible with it: equal on every attribute where neither holds its ``missing`` code
    (``None``: the attribute has no missing value)."""
    n_rows = len(counts)
    if not codes or not n_rows:
        return np.asarray(counts, dtype=np.int64).copy()
    miss = np.stack(
        [
            (np.asarray(c) == m) if m is not None else np.zeros(n_rows, dtype=bool)
            for c, m in zip(codes, missing, strict=True)
        ]
    )
    weights = (1 << np.arange(len(codes), dtype=np.int64))[:, None]
    pattern = (miss * weights).sum(axis=0)
    patterns = np.unique(pattern)
    rows = {int(p): np.flatnonzero(pattern == p) for p in patterns}
    sizes = np.zeros(n_rows, dtype=np.int64)
    for p in patterns.tolist():
        mine = rows[p]
        for q in patterns.tolist():
            theirs = rows[q]
            keep = [a for a in range(len(codes)) if not ((p | q) >> a) & 1]
            if not keep:
                sizes[mine] += int(counts[theirs].sum())
                continue
            both = np.concatenate([mine, theirs])
            g = group_rows([np.asarray(codes[a])[both] for a in keep], [cards[a] for a in keep], with_inverse=True)
            assert g.inverse is not None
            sums = np.bincount(g.inverse[len(mine) :], weights=counts[theirs], minlength=len(g.counts))
            sizes[mine] += np.rint(sums[g.inverse[: len(mine)]]).astype(np.int64)
    return sizes
