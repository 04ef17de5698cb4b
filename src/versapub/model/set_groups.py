"""The maximum-entropy estimate of an ``sa-groups`` table (Ye et al.'s decomposition).

What is published: each SA-group's QI rows (``qit``: counts per QI combination and group),
each group's *set* of values per sensitive attribute, and the sensitive table ``T^S``
exactly.  A record of group ``g`` may hold a sensitive combination ``s`` of ``T^S`` only if
every ``s_i`` lies in ``g``'s set for ``S^i``.  The unknown is ``N(g, s)``, the records of
group ``g`` with combination ``s``; its constraints are the group sizes
(``Σ_s N(g, s) = |g|``), the sensitive table (``Σ_g N(g, s) = T^S(s)``) and the support
(``N(g, s) = 0`` outside the product of ``g``'s sets).  The maximum-entropy ``N`` under
margin constraints on a fixed support has the product form ``a_g · b_s`` on the support
(Darroch & Ratcliff), which iterative proportional fitting reaches by scaling rows and
columns in turn; the true assignment is a feasible point, so the constraints are
consistent.  Pairs that are zero in *every* feasible table (the maximum-entropy table is
zero there too) would make IPF converge only slowly towards zero, so they are removed
first (:func:`live_pairs`): from one feasible table (a maximum flow), a pair can be
positive iff an alternating cycle runs through it, i.e. iff its group and combination
lie in one strongly connected component of the residual graph.  Within a group the QI
values and the sensitive values are independent (nothing links them), exactly as for
Anatomy: the fitted ``N`` is the factor's "ST".

The paper's own measure (Ye et al. §6, Figure 7) instead takes each record's value of
``S^i`` uniform over its group's set, attribute by attribute, ignoring ``T^S``:
:func:`uniform_over_sets`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from versapub.data import bitsets

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: IPF stops when every margin is met within this relative error, or after MAX_ITER sweeps.
TOLERANCE = 1e-9
MAX_ITER = 5_000
#: Support pairs are found for this many sensitive combinations at a time (memory bound).
CHUNK = 2_048


def allowed_pairs(member: Sequence[npt.NDArray[np.bool_]], combos: Sequence[IntArray]) -> tuple[IntArray, IntArray]:
    """The support: every (group, combination) with each combination's value of attribute
    ``i`` in the group's set (``member[i][g, v]``); ``combos[i][k]``: combination ``k``'s
    value of attribute ``i``.  Returns ``(groups, combinations)`` of the pairs."""
    n_groups = member[0].shape[0]
    n_combos = len(combos[0])
    if bitsets.fits([m.shape[1] for m in member], n_groups) and bitsets.pays(n_combos, n_groups, n_combos * n_groups):
        sets = []
        for m in member:
            g_of, v_of = np.nonzero(m)
            sets.append(bitsets.bitset(v_of.astype(np.int64), g_of.astype(np.int64), m.shape[1], n_groups))
        k, g = bitsets.matching_pairs(sets, [np.asarray(c, dtype=np.int64) for c in combos])
        order = np.lexsort((k, g, k // CHUNK))  # the order of the chunked scan below
        return g[order], k[order]
    gs: list[IntArray] = []
    ks: list[IntArray] = []
    for lo in range(0, n_combos, CHUNK):
        hi = min(lo + CHUNK, n_combos)
        ok = np.ones((n_groups, hi - lo), dtype=bool)
        for m, c in zip(member, combos, strict=True):
            ok &= m[:, c[lo:hi]]
        g, k = np.nonzero(ok)
        gs.append(g.astype(np.int64))
        ks.append(k.astype(np.int64) + lo)
    return np.concatenate(gs), np.concatenate(ks)


def live_pairs(size: FloatArray, combo_counts: FloatArray, pair_g: IntArray, pair_k: IntArray) -> npt.NDArray[np.bool_]:
    """Which support pairs some feasible table makes positive (see the module docstring);
    raises ``ValueError`` when no table meets the margins on the support."""
    from scipy.sparse import csr_matrix  # on first use: loading the kind must stay cheap
    from scipy.sparse.csgraph import connected_components, maximum_flow

    n_g, n_k = len(size), len(combo_counts)
    src, sink = n_g + n_k, n_g + n_k + 1
    total = round(float(size.sum()))
    big = np.full(len(pair_g), total, dtype=np.int32)
    rows = np.concatenate([np.full(n_g, src), pair_g, n_g + np.arange(n_k)])
    cols = np.concatenate([np.arange(n_g), n_g + pair_k, np.full(n_k, sink)])
    caps = np.concatenate([np.rint(size), big, np.rint(combo_counts)]).astype(np.int32)
    graph = csr_matrix((caps, (rows, cols)), shape=(n_g + n_k + 2,) * 2)
    result = maximum_flow(graph, src, sink, method="dinic")
    if int(result.flow_value) != total or round(float(combo_counts.sum())) != total:
        raise ValueError(
            f"no table has the group sizes and sensitive counts on the support "
            f"({int(result.flow_value)} of {total} records placed)"
        )
    flow = np.asarray(result.flow[pair_g, n_g + pair_k]).ravel()
    # Residual graph on groups and combinations: g -> k always, k -> g where the flow is positive.
    back = flow > 0
    r = np.concatenate([pair_g, n_g + pair_k[back]])
    c = np.concatenate([n_g + pair_k, pair_g[back]])
    residual = csr_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(n_g + n_k,) * 2)
    _, comp = connected_components(residual, directed=True, connection="strong")
    return np.asarray(comp[pair_g] == comp[n_g + pair_k])


def fit(size: FloatArray, combo_counts: FloatArray, pair_g: IntArray, pair_k: IntArray) -> tuple[FloatArray, int]:
    """Iterative proportional fitting of ``N(g, s)`` on the support pairs to the group sizes
    and the sensitive table's counts (see the module docstring).  Returns ``N`` per pair
    and the number of sweeps."""
    x = live_pairs(size, combo_counts, pair_g, pair_k).astype(np.float64)
    n_g, n_k = len(size), len(combo_counts)
    sweeps = 0
    while sweeps < MAX_ITER:
        sweeps += 1
        row = np.bincount(pair_g, weights=x, minlength=n_g)
        x *= np.divide(size, row, out=np.zeros(n_g), where=row > 0)[pair_g]
        col = np.bincount(pair_k, weights=x, minlength=n_k)
        x *= np.divide(combo_counts, col, out=np.zeros(n_k), where=col > 0)[pair_k]
        row = np.bincount(pair_g, weights=x, minlength=n_g)
        if np.abs(row - size).max(initial=0.0) <= TOLERANCE * max(float(size.max(initial=1.0)), 1.0):
            break
    return x, sweeps


def uniform_over_sets(
    member: Sequence[npt.NDArray[np.bool_]], group: IntArray, values: Sequence[IntArray]
) -> FloatArray:
    """The paper's measure: for records in ``group`` with sensitive values ``values[i]``,
    the probability ``Π_i [v_i ∈ G.S^i] / |G.S^i|`` of their combination given the group."""
    p = np.ones(len(group), dtype=np.float64)
    for m, v in zip(member, values, strict=True):
        sizes = m.sum(axis=1).astype(np.float64)
        p *= np.where(m[group, v], 1.0 / sizes[group], 0.0)
    return p
