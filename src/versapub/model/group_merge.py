"""Latent groups with the same content merged into one (issue 67): distinct groups, not
groups, as the unit of the bounds.

Two groups whose QI rows (combination, count) and sensitive rows are the same give every
query the same per-group bounds, and those bounds are positively homogeneous in a group's
counts: ``min(m a, m b) = m min(a, b)``, ``max(0, m a + m b - m |g|) = m max(0, a + b - |g|)``,
and a maximum flow scales with its capacities (:mod:`versapub.model.group_bounds`). So ``m``
identical groups answer as one group with every count multiplied by ``m``: the same sums,
read once. On the 1.4M-record personnel stand-in (Anatomy, l = 2) the 707,296 groups are
60,083 distinct; a free group (its sensitive rows list allowed combinations) merges only with
free groups whose lists are the same (their presence, which is all the bounds read of them,
does not change when scaled).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows, unique_rows
from versapub.model.group_bounds import Groups
from versapub.model.sparse import Codes, Floats

#: Groups holding more rows than this on one side are not merged (few such groups exist).
MAX_ROWS = 32


def _slots(groups: Codes, columns: Mapping[str, Codes], counts: Floats, n_groups: int) -> npt.NDArray[np.int64] | None:
    """Per group, its rows as ``(combination, count bits)`` pairs in a canonical order,
    padded with -1: ``(n_groups, 2 * longest)``; ``None`` past :data:`MAX_ROWS`."""
    if len(groups) == 0:
        return np.full((n_groups, 0), -1, dtype=np.int64)
    cols = list(columns.values())
    ids = (
        group_rows(cols, [int(c.max(initial=0)) + 1 for c in cols], with_inverse=True).inverse
        if cols
        else np.zeros(len(groups), dtype=np.int64)
    )
    assert ids is not None
    bits = np.ascontiguousarray(counts, dtype=np.float64).view(np.int64)
    order = np.lexsort((bits, ids, groups))
    g, i, b = groups[order], ids[order], bits[order]
    per = np.bincount(g, minlength=n_groups)
    longest = int(per.max(initial=0))
    if longest > MAX_ROWS:
        return None
    start = np.r_[0, np.cumsum(per)[:-1]]
    rank = np.arange(len(g)) - start[g]
    out = np.full((n_groups, 2 * longest), -1, dtype=np.int64)
    out[g, 2 * rank] = i
    out[g, 2 * rank + 1] = b
    return out


def merged(gr: Groups) -> Groups:
    """``gr`` with groups of the same content merged, counts times their number (module
    docstring); ``gr`` itself when no two groups are alike or a group is too long to compare."""
    q = _slots(gr.g_q, gr.qi, gr.c_q, gr.n_groups)
    s = _slots(gr.g_s, gr.s, gr.c_s, gr.n_groups)
    if q is None or s is None or gr.n_groups < 2:
        return gr
    sig = np.concatenate([q, s, gr.free[:, None].astype(np.int64)], axis=1)
    first, inverse, mult = unique_rows(sig)
    if len(first) == gr.n_groups:
        return gr
    rep = np.zeros(gr.n_groups, dtype=bool)
    rep[first] = True
    weight = mult.astype(np.float64)
    kq, ks = rep[gr.g_q], rep[gr.g_s]
    g_q, g_s = inverse[gr.g_q[kq]], inverse[gr.g_s[ks]]
    return Groups(
        {a: c[kq] for a, c in gr.qi.items()},
        g_q,
        gr.c_q[kq] * weight[g_q],
        {a: c[ks] for a, c in gr.s.items()},
        g_s,
        gr.c_s[ks] * weight[g_s],
        len(first),
        gr.free[first],
    )
