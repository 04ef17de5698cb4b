"""The adversary who computes, in ``check`` (issue 64): it reads a target's row of the
release (the drawn records sharing the target's known values), the candidates the release
shows for its protected value (an Anatomy group's values, an SA-group's set, a generalized
class's values: every value the record's draws take, :mod:`versapub.verify.adversary.adversary_records`),
and picks the candidate its neighbours agree on — the verifier's own learner, sharing
nothing with the publisher's screen.

* **Neighbours in a derived feature.** Each readable numeric column, the logarithm of the
  ratio of two positive ones (an amortisation's ``installment / amount``) and the difference
  of two; the neighbours of a drawn record are the ``K`` nearest in that feature among the
  drawn records sharing its values of up to two few-valued readable columns (a loan's term).
* **Partial labels.** A neighbour's drawn value is its group's, so mostly wrong; but its
  candidates hold its true value, and a neighbour in a feature that computes the protected
  value shares it. Each of the record's candidates scores the neighbours whose candidates hold
  it; the record's pick is the best scored (ties at random).
* **Choosing the feature without the truth.** The adversary keeps the feature (and keys)
  whose neighbours agree most — the mean share of neighbours that hold the record's best
  candidate, over a seeded sample of drawn records: a feature that computes the value makes
  every neighbour agree, an unrelated one about ``1/l`` of them.

A target's success is the share of its cell's drawn records whose pick is its value (a
near-unique left-hand side: its own row's pick)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.verify.adversary.adversary import Rate, Records, _numbers, factorize, numeric_columns, success_rate

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: Neighbours read per record.
K = 6
#: Few-valued readable columns (at most this many values) may be the neighbours' keys.
KEY_VALUES = 12
#: Derived features tried, at most.
MAX_FEATURES = 16
#: Drawn records the feature is chosen on (a seeded sample).
CHOOSE_ON = 4000


@dataclass(frozen=True)
class Computed:
    """Per target, the share of its cell's rows whose pick is its value; the learner's name."""

    success: Floats
    learner: str

    def rate(self) -> Rate:
        return success_rate(len(self.success), float(self.success.sum()))


def _features(syn: Records, readable: Sequence[str], numeric: set[str]) -> list[tuple[Floats, str]]:
    nums = {c: _numbers(syn[c]) for c in readable if c in numeric}
    out = [(v, c) for c, v in nums.items()]
    positive = [c for c, v in nums.items() if np.nanmin(v, initial=np.inf) > 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        out += [(np.log(nums[a]) - np.log(nums[b]), f"{a} / {b}") for a, b in itertools.combinations(positive, 2)]
        out += [(nums[a] - nums[b], f"{a} - {b}") for a, b in itertools.combinations(nums, 2)]
    return out[:MAX_FEATURES]


def _keys(syn: Records, readable: Sequence[str]) -> list[tuple[Ints, str]]:
    few = []
    for c in readable:
        codes, n = _coded(syn[c])
        if 1 < n <= KEY_VALUES:
            few.append((codes, c))
    none = (np.zeros(len(next(iter(syn.values()))), dtype=np.int64), "")
    pairs = [
        (a * (int(b.max(initial=0)) + 1) + b, f"{na}, {nb}") for (a, na), (b, nb) in itertools.combinations(few[:3], 2)
    ]
    return [none, *few[:3], *pairs]


def _coded(values: npt.NDArray[np.object_]) -> tuple[Ints, int]:
    dictionary, inv = factorize(values)
    return inv, max(len(dictionary), 1)


def neighbours(x: Floats, key: Ints) -> Ints:
    """Per drawn record, ``K`` records near it in ``x`` among those sharing ``key`` (the ones
    next to it in the sorted order of its key's run; -1 where the run is shorter)."""
    n = len(x)
    finite = np.isfinite(x)
    order = np.lexsort((np.where(finite, x, np.inf), key))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    k_sorted = key[order]
    run_lo = np.searchsorted(k_sorted, key, side="left")
    run_hi = np.searchsorted(k_sorted, key, side="right")
    offsets = np.array([d for i in range(1, K // 2 + 1) for d in (-i, i)], dtype=np.int64)
    at = pos[:, None] + offsets[None, :]
    ok = (at >= run_lo[:, None]) & (at < run_hi[:, None]) & finite[:, None]
    out = np.where(ok, order[np.clip(at, 0, n - 1)], -1)
    return np.where(finite[order[np.clip(at, 0, n - 1)]] & ok, out, -1)


def picks(cands: Ints, rows: Ints, near: Ints, rng: np.random.Generator) -> tuple[Ints, Floats]:
    """For the drawn records ``rows`` (``near``: their neighbours), the candidate most of the
    neighbours' candidates hold (ties at random), and the share of the neighbours that hold
    it (the agreement the feature is chosen by)."""
    mine = cands[rows]
    n, m = mine.shape
    votes = np.zeros((n, m))
    valid = near >= 0
    for j in range(near.shape[1]):
        other = cands[np.maximum(near[:, j], 0)]  # n x m: the neighbour's candidates
        held = (mine[:, :, None] == other[:, None, :]).any(axis=2)
        votes += held & valid[:, j, None]
    votes += rng.random(votes.shape) * 1e-6  # ties at random
    best = np.argmax(votes, axis=1)
    count = np.maximum(valid.sum(axis=1), 1)
    return mine[np.arange(n), best], np.floor(votes[np.arange(n), best]) / count


def computed_inference(
    ori: Records,
    syn: Records,
    again: Sequence[npt.NDArray[np.object_]],
    known: Sequence[str],
    readable: Sequence[str],
    secret: str,
    targets: Ints,
    rng: np.random.Generator,
) -> Computed | None:
    """The adversary who computes (module docstring) on ``targets``; None when the release
    shows no numeric column to compute with."""
    numeric = set(numeric_columns(ori, syn, columns=list(readable)))
    feats = _features(syn, readable, numeric)
    if not feats or not len(syn[secret]):
        return None
    draws = [syn[secret], *again]
    both = np.concatenate([ori[secret][targets], *draws]).astype(str)
    dictionary, inv = np.unique(both, return_inverse=True)
    inv = np.asarray(inv, dtype=np.int64).ravel()
    truth = inv[: len(targets)]
    n_syn = len(syn[secret])
    cands = np.column_stack([inv[len(targets) + i * n_syn : len(targets) + (i + 1) * n_syn] for i in range(len(draws))])
    sample = rng.choice(n_syn, size=min(CHOOSE_ON, n_syn), replace=False)
    best: tuple[float, Ints, str] | None = None
    for (x, fname), (key, kname) in itertools.product(feats, _keys(syn, readable)):
        near = neighbours(x, key)
        _, agree = picks(cands, sample, near[sample], rng)
        score = float(agree.mean())
        if best is None or score > best[0]:
            full, _ = picks(cands, np.arange(n_syn), near, rng)
            best = (score, full, f"nearest neighbours on {fname}" + (f" within {kname}" if kname else ""))
    assert best is not None
    _, pick_all, name = best
    if known:  # each target: the share of its cell's drawn records whose pick is its value
        coded = [_coded(np.concatenate([ori[c][targets], syn[c]])) for c in known]
        g = group_rows([c for c, _ in coded], [k for _, k in coded], with_inverse=True)
        assert g.inverse is not None
        cell = g.inverse.astype(np.int64)
    else:
        cell = np.zeros(len(targets) + n_syn, dtype=np.int64)
    t_cell, s_cell = cell[: len(targets)], cell[len(targets) :]
    n_cells = int(cell.max()) + 1
    size = np.bincount(s_cell, minlength=n_cells)
    pairs = group_rows([s_cell, pick_all], [n_cells, len(dictionary)])
    lookup = dict(
        zip(zip(pairs.keys[0].tolist(), pairs.keys[1].tolist(), strict=True), pairs.counts.tolist(), strict=True)
    )
    hits = np.array([lookup.get((int(c), int(t)), 0) for c, t in zip(t_cell, truth, strict=True)], dtype=np.float64)
    return Computed(np.where(size[t_cell] > 0, hits / np.maximum(size[t_cell], 1), 0.0), name)
