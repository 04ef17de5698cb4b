"""The decomposition of Ye, Liu, Lv, Feng (DASFAA 2009) for several sensitive attributes:
its Algorithm 1 on encoded columns (issue 14; not yet a registered anonymizer — its table
kind, verifier check and attack come next).

* **Largest-l group forming** (lines 2–11): while at least ``l_pri`` buckets of the primary
  sensitive attribute are non-empty, sort them by size (descending, re-sorted every
  iteration), take a random tuple of the largest bucket, then from each of the next
  ``l_pri - 1`` buckets the tuple minimizing the diversity penalty ``P(t, G)``
  (Definition 5).
* **Residual tuples** (lines 12–15): each joins the SA-group minimizing ``P(t, G)``.
* **Noise** (lines 16–22): a group whose set ``G.S^i`` of a non-primary attribute has fewer
  than ``l_i`` values gets values from the linkable sensitive values ``LSV(S^i, G)``
  (Definition 4: the ``S^i`` values that co-occur in ``T^S`` with ``G``'s primary values)
  until it has ``l_i``.

Buckets are kept as counts of *profiles* (a tuple's combination of non-primary values): a
tuple is chosen by choosing its profile (penalties computed for all profiles of a bucket at
once) and then one of that profile's records at random; the loop runs once per group,
never per record pair (the paper's bound is ``O(n^2)``).  Choices the paper leaves open
(``docs/choices.md``): ties between equally large buckets go to the lower value code; ties
between profiles of equal penalty to the profile with more remaining tuples (then the
lower code); a residual tuple's ties to the group created first; noise values are drawn
at random (seeded) among the linkable values the group lacks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.errors import InfeasibleError

IntArray = npt.NDArray[np.int64]
BoolMatrix = npt.NDArray[np.bool_]


def l_per(codes: npt.NDArray[np.integer]) -> int:
    """Corollary 2: the largest permissible diversity parameter, ``floor(n / n_1)``."""
    counts = np.bincount(np.asarray(codes, dtype=np.int64))
    return int(len(codes) // int(counts.max())) if len(codes) else 0


@dataclass(frozen=True)
class Decomposed:
    """Algorithm 1's result: every record's SA-group, each group's value set per
    non-primary attribute (``sets[i][g, v]``: value ``v`` of attribute ``i`` is in group
    ``g``'s set, noise included), how many records were residual, and how many noise
    values were added per attribute."""

    group: IntArray
    n_groups: int
    sets: tuple[BoolMatrix, ...]
    residual: int
    noise: tuple[int, ...]


def penalty(profile_values: Sequence[IntArray], group_sets: Sequence[npt.NDArray[np.bool_]],
            sizes: Sequence[int], ls: Sequence[int]) -> IntArray:  # fmt: skip
    """Definition 5 for many candidate tuples at once: ``Σ_i (l_i - |G.S^i|)`` over the
    non-primary attributes whose set in ``G`` already holds the tuple's value and is still
    short of ``l_i``.  ``profile_values[i]``: each candidate's value of attribute ``i``;
    ``group_sets[i]``: the group's set as a boolean vector; ``sizes[i] = |G.S^i|``."""
    n = len(profile_values[0]) if profile_values else 0
    out = np.zeros(n, dtype=np.int64)
    if not profile_values:
        return out
    for vals, member, size, l_i in zip(profile_values, group_sets, sizes, ls, strict=True):
        if size < l_i:
            out += np.where(member[vals], l_i - size, 0)
    return out


def _join(profile: int, p_vals: Sequence[IntArray], member: list[BoolMatrix], size: list[int]) -> None:
    """Add a profile's non-primary values to a group's sets (``size``: the sets' sizes)."""
    for i, vals in enumerate(p_vals):
        v = vals[profile]
        if not member[i][v]:
            member[i][v] = True
            size[i] += 1


def decompose(
    primary: npt.NDArray[np.integer],
    others: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    l_pri: int,
    ls: Sequence[int],
    rng: np.random.Generator,
) -> Decomposed:
    """Algorithm 1 (see the module docstring) on the primary attribute's codes, the other
    sensitive attributes' codes (``cards``: their domain sizes) and their ``l_i``."""
    n = len(primary)
    pri = np.asarray(primary, dtype=np.int64)
    oth = [np.asarray(o, dtype=np.int64) for o in others]
    if l_pri < 2:
        raise InfeasibleError(f"The primary sensitive attribute's l must be at least 2, got {l_pri}.")
    # Profiles: a record's primary value and its combination of the other values.
    prof = group_rows([pri, *oth], [int(pri.max()) + 1 if n else 1, *cards], with_inverse=True)
    assert prof.inverse is not None
    p_pri = prof.keys[0].astype(np.int64)
    p_vals = [k.astype(np.int64) for k in prof.keys[1:]]
    remaining = prof.counts.astype(np.int64).copy()
    # Records of each profile in a random order; a profile's next record is taken from its end.
    order = rng.permutation(n)
    order = order[np.argsort(prof.inverse[order], kind="stable")]
    start = np.r_[0, np.cumsum(prof.counts)].astype(np.int64)
    n_buckets = int(p_pri.max()) + 1 if n else 0
    bucket_size = np.bincount(p_pri, weights=remaining, minlength=n_buckets).astype(np.int64)
    by_bucket = [np.flatnonzero(p_pri == b) for b in range(n_buckets)]  # profiles of each bucket

    group = np.full(n, -1, dtype=np.int64)
    sets: list[list[BoolMatrix]] = []  # per group: one boolean vector per other attribute

    def take(profile: int, g: int) -> None:
        remaining[profile] -= 1
        bucket_size[p_pri[profile]] -= 1
        group[order[start[profile] + remaining[profile]]] = g

    while int((bucket_size > 0).sum()) >= l_pri:
        g = len(sets)
        ranked = np.lexsort((np.arange(n_buckets), -bucket_size))[:l_pri]  # size desc, then code
        # The first tuple: uniform among the largest bucket's records (a profile by its count).
        first = by_bucket[int(ranked[0])]
        cum = np.cumsum(remaining[first])
        chosen = int(first[int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))])
        member = [np.zeros(c, dtype=bool) for c in cards]
        size = [0] * len(cards)  # |G.S^i|, kept as values join
        _join(chosen, p_vals, member, size)
        take(chosen, g)
        for b in ranked[1:]:
            cand = by_bucket[int(b)]
            cand = cand[remaining[cand] > 0]
            pen = (penalty([v[cand] for v in p_vals], member, size, ls)
                   if p_vals else np.zeros(len(cand), dtype=np.int64))  # fmt: skip
            # Lowest penalty, then most remaining tuples, then lowest profile (argmin keeps the first).
            best = int(cand[int(np.argmin(pen * (n + 1) - remaining[cand]))])
            _join(best, p_vals, member, size)
            take(best, g)
        sets.append(member)

    n_groups = len(sets)
    left = np.flatnonzero(group < 0)
    if n_groups == 0:
        raise InfeasibleError(
            f"Fewer than l = {l_pri} distinct values of the primary sensitive attribute: no SA-group can be formed."
        )
    stacked = [np.stack([s[i] for s in sets]) for i in range(len(cards))]  # groups x values, per attribute
    for r in left:  # at most l_pri - 1 when l_pri <= l_per (Corollary 1)
        sizes_g = [m.sum(axis=1) for m in stacked]
        pen = np.zeros(n_groups, dtype=np.int64)
        for m, size, l_i, col in zip(stacked, sizes_g, ls, oth, strict=True):
            pen += np.where((size < l_i) & m[:, col[r]], l_i - size, 0)
        g = int(np.argmin(pen))  # ties: the group created first
        group[r] = g
        for m, col in zip(stacked, oth, strict=True):
            m[g, col[r]] = True
    # Noise: values linkable through T^S (co-occurring with a group's primary values).
    noise = []
    primary_in = np.zeros((n_groups, n_buckets), dtype=bool)
    primary_in[group, pri] = True
    for m, col, card, l_i in zip(stacked, oth, cards, ls, strict=True):
        co = np.zeros((n_buckets, card), dtype=bool)
        co[pri, col] = True  # T^S: which S^i values occur with each primary value
        lsv = (primary_in.astype(np.int64) @ co.astype(np.int64)) > 0
        added = 0
        for short in np.flatnonzero(m.sum(axis=1) < l_i):  # a loop over short groups, not records
            missing = np.flatnonzero(lsv[short] & ~m[short])
            need = int(l_i) - int(m[short].sum())
            if len(missing) < need:
                raise InfeasibleError(
                    f"SA-group {int(short)} can reach only {int(m[short].sum()) + len(missing)} of the l = {l_i} "
                    "values its set needs from the values linkable through the sensitive table; lower l."
                )
            m[short, rng.choice(missing, size=need, replace=False)] = True
            added += need
        noise.append(added)
    return Decomposed(group, n_groups, tuple(stacked), len(left), tuple(noise))
