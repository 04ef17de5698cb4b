"""Sharp bounds of a count inside latent groups (Anatomy, multi-SA and the MSA
decomposition's groups): each group publishes its records' QI values and, apart, their
sensitive values, so any pairing of the two inside the group is consistent, and groups are
independent.

In one group, QI rows of kinds ``p`` (counts ``a_p``) pair with sensitive rows of kinds ``r``
(counts ``b_r``), ``Σ a = Σ b = |g|``: a transportation problem.  The most records a
consistent pairing can put on pairs satisfying the query is a maximum flow on those pairs,
by Gale's theorem (the max-flow min-cut theorem on the bipartite graph)
``min over sets S of QI kinds of a(not S) + b(N(S))``, ``N(S)`` the sensitive kinds paired
with some kind of ``S``; any flow completes to a full pairing on the other pairs.  The
fewest is ``|g|`` minus the most on the pairs not certainly satisfying it.  Rows are sorted
into *kinds* by their atoms' values (a query of ``k`` QI atoms has at most ``2^k`` QI
kinds), so the minimum runs over the subsets of the smaller side's kinds for all groups at
once; beyond :data:`MAX_KINDS` kinds the per-group bounds of each side alone are used (sound,
not sharp).

*Free* groups (a suppressed group, or the MSA decomposition's groups) publish, instead of
their sensitive rows, the combinations each of their records may hold: a record counts
toward the upper bound when some allowed combination satisfies the query with its QI values,
toward the lower when every one does.  Sharp for Anatomy's suppressed group (its records may
hold any combination); for the MSA decomposition it ignores that the groups share one
``T^S`` (sound, not claimed sharp).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.model.formula import Atom, Formula, Tri, as_arrays, is_conjunction, resolver
from versapub.model.sparse import Codes, Floats


@dataclass(frozen=True)
class Groups:
    """Latent groups as the bounds read them: QI rows (codes ``qi``, group ``g_q``, count
    ``c_q``), sensitive rows (``s``, ``g_s``, ``c_s``), and ``free`` groups whose sensitive
    rows list allowed combinations rather than counts."""

    qi: Mapping[str, Codes]
    g_q: Codes
    c_q: Floats
    s: Mapping[str, Codes]
    g_s: Codes
    c_s: Floats
    n_groups: int
    free: npt.NDArray[np.bool_]

    def __post_init__(self) -> None:
        if len(self.free) != self.n_groups:
            raise ValueError(f"free marks {len(self.free)} groups, not {self.n_groups}.")


#: The most kinds on the smaller side for which Gale's minimum is enumerated (2^k subsets).
MAX_KINDS = 10
#: Groups x subsets evaluated per chunk.
CHUNK = 1 << 22


def _kinds(atoms: list[Atom], columns: Mapping[str, Codes], rows: int) -> tuple[Codes, list[Tri]]:
    """Each row's kind (its atoms' three values) and each kind's atom values."""
    if not atoms or not rows:
        one = np.ones(1, dtype=bool)
        return np.zeros(rows, dtype=np.int64), [(one, one)] * len(atoms)
    res = resolver(columns)
    digits = []
    for a in atoms:
        lo, hi = as_arrays(res(a), rows)
        digits.append(lo.astype(np.int64) + hi.astype(np.int64))  # 0 false, 1 unknown, 2 true
    key = np.zeros(rows, dtype=np.int64)
    for d in digits:
        key = key * 3 + d
    uniq, kind = np.unique(key, return_inverse=True)
    vals = []
    for i in range(len(atoms)):
        d = (uniq // 3 ** (len(atoms) - 1 - i)) % 3
        vals.append((d == 2, d >= 1))
    return kind.astype(np.int64).ravel(), vals


def pair_table(
    f: Formula, qi: Mapping[str, Codes], n_q: int, s: Mapping[str, Codes], n_s: int
) -> tuple[Codes, Codes, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """QI rows' kinds, sensitive rows' kinds, and per (QI kind, sensitive kind) whether the
    query is certainly / possibly true."""
    q_atoms = [a for a in f.atoms if a.attr in qi]
    s_atoms = [a for a in f.atoms if a.attr in s]
    kq, vq = _kinds(q_atoms, qi, n_q)
    ks, vs = _kinds(s_atoms, s, n_s)
    p, r = (int(kq.max()) + 1 if n_q else 1), (int(ks.max()) + 1 if n_s else 1)
    grid: dict[int, Tri] = {}
    for a, (lo, hi) in zip(q_atoms, vq, strict=True):
        grid[id(a)] = (np.repeat(lo, r), np.repeat(hi, r))
    for a, (lo, hi) in zip(s_atoms, vs, strict=True):
        grid[id(a)] = (np.tile(lo, p), np.tile(hi, p))
    outside = resolver({})

    def resolve(a: Atom) -> Tri:
        return grid[id(a)] if id(a) in grid else outside(a)

    lo, hi = as_arrays(f.tri(resolve), p * r)
    return kq, ks, lo.reshape(p, r), hi.reshape(p, r)


def max_flow(a: Floats, b: Floats, edges: npt.NDArray[np.bool_]) -> Floats | None:
    """Per group (rows of ``a``: QI kinds, of ``b``: sensitive kinds): the maximum flow on
    ``edges`` (Gale: ``min_S a(not S) + b(N(S))``); ``None`` past :data:`MAX_KINDS`."""
    if edges.shape[0] > edges.shape[1]:
        return max_flow(b, a, edges.T)
    # QI kinds with the same neighbours act as one; kinds without neighbours never carry flow.
    live = edges.any(axis=1)
    a, edges = a[:, live], edges[live]
    if not edges.shape[0]:
        return np.zeros(a.shape[0])
    nbr, which = np.unique(edges, axis=0, return_inverse=True)
    which = which.ravel()
    merged = np.zeros((a.shape[0], len(nbr)))
    for j in range(len(nbr)):
        merged[:, j] = a[:, which == j].sum(axis=1)
    k = len(nbr)
    if k > MAX_KINDS:
        return None
    subsets = ((np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)  # (2^k, k)
    reach = (subsets.astype(np.int64) @ nbr.astype(np.int64)) > 0  # (2^k, R)
    out = np.empty(a.shape[0])
    step = max(1, CHUNK // (1 << k))
    for i in range(0, a.shape[0], step):
        cut = merged[i : i + step] @ (~subsets).T + b[i : i + step] @ reach.T
        out[i : i + step] = cut.min(axis=1)
    return out


def group_bounds(f: Formula, gr: Groups) -> tuple[float, float, bool]:
    """Lower and upper bounds of the records satisfying ``f`` over all pairings inside each
    group, and whether they are sharp for the groups alone (module docstring)."""
    if is_conjunction(f):
        return _conjunction(f, gr)
    qi, g_q, c_q, s, g_s, c_s, n_groups, free = (gr.qi, gr.g_q, gr.c_q, gr.s, gr.g_s, gr.c_s, gr.n_groups, gr.free)
    kq, ks, lo, hi = pair_table(f, qi, len(c_q), s, len(c_s))
    p, r = lo.shape
    a = np.bincount(g_q * p + kq, weights=c_q, minlength=n_groups * p).astype(np.float64).reshape(n_groups, p)
    b = np.bincount(g_s * r + ks, weights=c_s, minlength=n_groups * r).astype(np.float64).reshape(n_groups, r)
    size = a.sum(axis=1)
    fixed = ~free
    upper = lower = 0.0
    sharp = True
    if fixed.any():
        af, bf = a[fixed], b[fixed]
        most = max_flow(af, bf, hi)
        least_miss = max_flow(af, bf, ~lo)
        if most is None or least_miss is None:
            sharp = False
            # Each side alone: the QI rows that may match, the sensitive rows that may.
            most = np.minimum(af @ hi.any(axis=1), bf @ hi.any(axis=0))
            least_miss = np.minimum(af @ (~lo).any(axis=1), bf @ (~lo).any(axis=0))
        upper += float(most.sum())
        lower += float((size[fixed] - least_miss).sum())
    if free.any():
        present = b[free] > 0  # (free groups, sensitive kinds) allowed
        af = a[free]
        may = (present.astype(np.int64) @ hi.T.astype(np.int64)) > 0  # (groups, QI kinds)
        miss = (present.astype(np.int64) @ (~lo).T.astype(np.int64)) > 0
        upper += float((af * may).sum())
        lower += float((af * ~miss).sum())
    return lower, upper, sharp


def _side(
    atoms: list[Atom], columns: Mapping[str, Codes], rows: int
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Rows certainly / possibly satisfying an ``AND`` of atoms."""
    lo = np.ones(rows, dtype=bool)
    hi = np.ones(rows, dtype=bool)
    res = resolver(columns)
    for a in atoms:
        alo, ahi = as_arrays(res(a), rows)
        lo &= alo
        hi &= ahi
    return lo, hi


def _sums(
    g: Codes, c: Floats, lo: npt.NDArray[np.bool_], hi: npt.NDArray[np.bool_], n_groups: int, total: Floats | None
) -> tuple[Floats, Floats]:
    """Per group, the counts of rows certainly / possibly matching (one pass when they agree)."""
    if lo.all() and total is not None:
        return total, total
    hi_sum = np.bincount(g, weights=c * hi, minlength=n_groups).astype(np.float64, copy=False)
    if np.array_equal(lo, hi):
        return hi_sum, hi_sum
    return np.bincount(g, weights=c * lo, minlength=n_groups).astype(np.float64, copy=False), hi_sum


def _conjunction(f: Formula, gr: Groups) -> tuple[float, float, bool]:
    """:func:`group_bounds` of an ``AND``: the QI rows matching their part (``a``) pair with
    the sensitive rows matching theirs (``b``), so per group the most is ``min(a, b)`` and
    the fewest ``max(0, a + b - |g|)`` (Fréchet, exact for one transportation problem)."""
    qi, g_q, c_q, s, g_s, c_s, n_groups, free = (gr.qi, gr.g_q, gr.c_q, gr.s, gr.g_s, gr.c_s, gr.n_groups, gr.free)
    atoms = f.atoms
    q_lo, q_hi = _side([a for a in atoms if a.attr in qi], qi, len(c_q))
    s_lo, s_hi = _side([a for a in atoms if a.attr in s], s, len(c_s))
    outside = [a for a in atoms if a.attr not in qi and a.attr not in s]
    out_lo = all(bool(a.mask.all()) for a in outside)
    out_hi = all(bool(a.mask.any()) for a in outside)
    size = np.bincount(g_q, weights=c_q, minlength=n_groups).astype(np.float64, copy=False)
    fixed = ~free[g_s]
    a_lo, a_hi = _sums(g_q, c_q, q_lo, q_hi, n_groups, size)
    b_lo, b_hi = _sums(g_s[fixed], c_s[fixed], s_lo[fixed], s_hi[fixed], n_groups, None)
    upper_g = np.minimum(a_hi, b_hi)
    lower_g = np.maximum(0.0, a_lo + b_lo - size)
    if free.any():
        # A free group: a record may take any listed combination.
        fr = ~fixed
        any_hi = np.bincount(g_s[fr], weights=s_hi[fr].astype(np.float64), minlength=n_groups) > 0
        any_miss = np.bincount(g_s[fr], weights=(~s_lo[fr]).astype(np.float64), minlength=n_groups) > 0
        upper_g = np.where(free, a_hi * any_hi, upper_g)
        lower_g = np.where(free, a_lo * ~any_miss, lower_g)
    upper = float(upper_g.sum()) if out_hi else 0.0
    lower = float(lower_g.sum()) if out_lo else 0.0
    return lower, upper, True
