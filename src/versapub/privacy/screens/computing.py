"""The adversary who computes (issue 64), for the set screen
(:mod:`versapub.privacy.screens.proxy_sets`): beside decision tables and least squares, a
**nearest-neighbour** learner on derived numeric features — each numeric column, the
logarithm of the ratio of two positive columns (products and quotients: ``installment /
amount`` for an amortisation), the difference of two (a total less a part) — within the
values of up to two few-valued columns (``term``); the guess is the protected value of the
training record nearest in that feature among those sharing the keys.  An amortisation's
rate is a function of ``installment / amount`` and ``term``, so its neighbour's rate is its
own.

**Candidates.** Where the release shows a protected value's candidates — an Anatomy group's
``l`` values, a generalized class's — the adversary picks the candidate nearest to its
prediction (a numeric ``S``), or its guess when it is one of them (else a candidate at
random). Before anything is anonymized the candidates are simulated: the record's own value
and ``l - 1`` others drawn from the protected attribute's distribution (what a group of
frequency l-diversity holds besides it). Its success is scored on held-out records as the
screen scores every learner.

**Per-record limits.** What a guarantee allows an adversary is read per record: the largest
share a class may give the record's own value (``Guarantee.value_limits`` of the share ``p``
that value — a numeric value: the values within the resolution of it — has in the whole
table): ``1/l`` for frequency l-diversity, ``p + H t`` for t-closeness, ``(1 + beta) p`` for
beta-likeness, ``p e^delta`` for delta-disclosure.  The screen's bound is their mean over the
records scored, on every record and on the records whose value is not the most frequent
one — so a skewed attribute (inpatient spending: 90 % zero) cannot hide the records that
carry information behind the ones that do not."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

#: Few-valued columns (at most this many values) may serve as the nearest-neighbour's keys.
KEY_VALUES = 12
#: Derived features tried (numeric columns first, then ratios and differences, best ranked).
MAX_FEATURES = 16
#: Keys (few-valued columns) the nearest neighbour is tried within: none, each alone, pairs.
MAX_KEYS = 3
#: Above this many values, a group's other values are drawn from the table's distribution.
MANY_VALUES = 200


@dataclass(frozen=True)
class Feature:
    """A derived numeric feature over the sample's records, and the columns it reads."""

    values: Floats
    columns: tuple[str, ...]
    name: str


def derived(numbers: dict[str, Floats], cols: Sequence[str]) -> list[Feature]:
    """Each numeric column of ``cols``, the log of the ratio of each pair of positive ones and
    the difference of each pair (at most :data:`MAX_FEATURES`, columns first)."""
    nums = [c for c in cols if c in numbers]
    out = [Feature(numbers[c], (c,), c) for c in nums]
    positive = [c for c in nums if np.nanmin(numbers[c], initial=np.inf) > 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        for a, b in itertools.combinations(positive, 2):
            out.append(Feature(np.log(numbers[a]) - np.log(numbers[b]), (a, b), f"{a} / {b}"))
        for a, b in itertools.combinations(nums, 2):
            out.append(Feature(numbers[a] - numbers[b], (a, b), f"{a} - {b}"))
    return out[:MAX_FEATURES]


def key_sets(codes: dict[str, Ints], cards: dict[str, int], cols: Sequence[str]) -> list[tuple[str, ...]]:
    """The keys a nearest neighbour is tried within: none, each few-valued column, each pair
    of the first :data:`MAX_KEYS` of them."""
    few = [c for c in cols if 1 < cards.get(c, 0) <= KEY_VALUES][:MAX_KEYS]
    return [(), *((c,) for c in few), *itertools.combinations(few, 2)]


def nearest(x: Floats, keys: Sequence[Ints], target: Ints, train: Bools, fallback: int) -> Ints:
    """For every record not in ``train``: the ``target`` code of the training record nearest
    in ``x`` among those sharing its ``keys`` (``fallback`` where none does or ``x`` is
    missing). One sort of the training records by (key, x), one search per record."""
    n = len(x)
    key = np.zeros(n, dtype=np.int64)
    for k in keys:
        key = key * (int(k.max(initial=0)) + 1) + k
    finite = np.isfinite(x)
    tr = np.flatnonzero(train & finite)
    te = np.flatnonzero(~train)
    out = np.full(len(te), fallback, dtype=np.int64)
    if not len(tr):
        return out
    order = tr[np.lexsort((x[tr], key[tr]))]
    k_sorted, x_sorted = key[order], x[order]
    lo = np.searchsorted(k_sorted, key[te], side="left")
    hi = np.searchsorted(k_sorted, key[te], side="right")
    have = (hi > lo) & finite[te]
    # position of x within its key's run: search the run as (key, x) pairs, by offsetting x
    span = float(np.nanmax(np.abs(x_sorted))) * 4 + 1.0 if len(x_sorted) else 1.0
    flat = k_sorted.astype(np.float64) * span + x_sorted
    want = key[te].astype(np.float64) * span + np.where(finite[te], x[te], 0.0)
    last = len(x_sorted) - 1  # a key no training record holds has lo == hi, maybe past the end (not used: have)
    at = np.minimum(np.clip(np.searchsorted(flat, want), lo, np.maximum(hi - 1, lo)), last)
    left = np.minimum(np.clip(at - 1, lo, np.maximum(hi - 1, lo)), last)
    pick = np.where(np.abs(x_sorted[left] - x[te]) <= np.abs(x_sorted[at] - x[te]), left, at)
    out[have] = target[order[pick[have]]]
    return out


def decoys(s: Ints, train: Bools, truth: Ints, width: int, rng: np.random.Generator) -> Ints:
    """Per held-out record, ``width - 1`` other codes, as a group of frequency l-diversity holds
    them beside the record's own value: Anatomy takes one record from each of the ``l``
    largest buckets, so a value of share ``p`` lies in about ``min(1, l p)`` of the groups —
    the values with ``l p >= 1`` in every group, the others drawn without replacement with
    weights ``l p`` (Gumbel top-k). A guess that reads nothing then scores ``1/l``, as the
    guarantee says (drawing the others from the plain distribution lets the most frequent
    value be missing from too many groups, and a blind guess beat ``1/l``)."""
    pool = s[train]
    m = len(truth)
    if width <= 1 or not len(pool):
        return np.zeros((m, 0), dtype=np.int64)
    counts = np.bincount(pool, minlength=int(max(s.max(initial=0), truth.max(initial=0))) + 1).astype(np.float64)
    share = counts / counts.sum()
    present = np.flatnonzero(counts > 0)
    if len(present) > MANY_VALUES:  # a value of many: none is in every group; drawn as the table's
        out = pool[rng.integers(0, len(pool), size=(m, width - 1))]
        for _ in range(50):  # distinct values, none the record's own (a group's values are distinct)
            bad = out == truth[:, None]
            for j in range(1, width - 1):
                bad[:, j] |= (out[:, :j] == out[:, j : j + 1]).any(axis=1)
            if not bad.any():
                break
            out[bad] = pool[rng.integers(0, len(pool), size=int(bad.sum()))]
        return out
    # a value v lies in the group of a record holding another value with probability
    # (l - 1) p_v / (1 - p_v) (its n p_v groups hold (l - 1) others each): 1 for a value in every group
    base = np.minimum(1.0, (width - 1) * share[present] / np.maximum(1.0 - share[present], 1e-12))
    col = np.searchsorted(present, np.minimum(truth, present[-1]))
    own = np.zeros((m, len(present)), dtype=bool)
    own[np.arange(m), col] = present[col] == truth
    # beside the record's own value, a value in every group is there; the rest of the l - 1 places
    # go to the others in proportion to that probability, none above 1 (the excess spread over the
    # rest): drawn by systematic sampling, each with its probability
    every = np.broadcast_to(base >= 1.0, own.shape) & ~own
    pi = np.where(every, 1.0, np.where(own, 0.0, np.broadcast_to(base, own.shape)))
    need = np.maximum(width - 1 - every.sum(axis=1, keepdims=True), 0).astype(np.float64)
    fixed = every.copy()
    for _ in range(10):
        free = np.where(fixed, 0.0, pi)
        scaled = free * need / np.maximum(free.sum(axis=1, keepdims=True), 1e-300)
        over = (scaled > 1.0) & ~fixed
        if not over.any():
            pi = np.where(fixed, pi, scaled)
            break
        fixed |= over
        pi = np.where(over, 1.0, pi)
        need = need - over.sum(axis=1, keepdims=True)
    order = np.argsort(rng.random(pi.shape), axis=1)  # each record's values in a random order
    cum = np.cumsum(np.take_along_axis(pi, order, axis=1), axis=1)
    u = rng.random((m, 1))
    step = np.floor(cum - u + 1e-12)
    chosen = np.diff(np.concatenate([np.full((m, 1), -1.0), step], axis=1), axis=1) > 0
    picked = np.where(chosen, present[order], -1)
    picked = -np.sort(-picked, axis=1)[:, : width - 1]  # the chosen first
    return np.where(picked >= 0, picked, truth[:, None])  # fewer other values than the group holds: its own


def snapped(guess: Ints | Floats, truth: Ints, others: Ints, values: Floats | None, rng: np.random.Generator) -> Ints:
    """The candidate the adversary picks (module docstring): the one nearest to a numeric
    prediction (``values``: the protected attribute's numbers by code; ``guess`` a number or
    a code), else the guess when it is a candidate, else a candidate at random. Codes."""
    cands = np.column_stack([truth, others]) if others.size else truth[:, None]
    if values is not None:
        g = np.asarray(guess, dtype=np.float64)
        if np.issubdtype(np.asarray(guess).dtype, np.integer):
            g = values[np.asarray(guess, dtype=np.int64)]
        dist = np.abs(values[cands] - np.where(np.isfinite(g), g, np.inf)[:, None])
        dist[~np.isfinite(dist)] = np.inf
        # ties go to a candidate at random (the truth, in the first column, has no privilege) — also
        # when no distance is finite (a missing prediction, or candidates without a number)
        first = np.lexsort((rng.random(cands.shape), dist), axis=-1)[:, 0]
        return cands[np.arange(len(cands)), first]
    g = np.asarray(guess, dtype=np.int64)
    inside = (cands == g[:, None]).any(axis=1)
    random = cands[np.arange(len(cands)), rng.integers(0, cands.shape[1], size=len(cands))]
    return np.where(inside, g, random)


def value_shares(s: Ints, values: Floats | None, regression: bool, resolution: float, train: Bools) -> Floats:
    """Per record, the share its protected value has among the training records — for a
    numeric attribute predicted as a number, the share within ``resolution`` of it."""
    pool = s[train]
    if not len(pool):
        return np.zeros(len(s))
    if regression and values is not None:
        v = np.sort(values[pool])
        x = values[s]
        tol = resolution * np.maximum(np.abs(x), 1e-12)
        return (np.searchsorted(v, x + tol, side="right") - np.searchsorted(v, x - tol, side="left")) / len(v)
    counts = np.bincount(pool, minlength=int(s.max(initial=0)) + 1).astype(np.float64)
    return counts[s] / len(pool)


def non_modal(s: Ints, values: Floats | None, regression: bool, resolution: float, train: Bools) -> Bools:
    """The records whose protected value is not the most frequent one (a numeric one: not
    within ``resolution`` of it) — the records that carry information on a skewed attribute."""
    pool = s[train]
    if not len(pool):
        return np.ones(len(s), dtype=bool)
    mode = int(np.argmax(np.bincount(pool)))
    if regression and values is not None:
        m = values[mode]
        return np.asarray(np.abs(values[s] - m) > resolution * max(abs(m), 1e-12))
    return np.asarray(s != mode)


LimitFn = Callable[[Floats], Floats]


@dataclass(frozen=True)
class Limit:
    """What a rule's guarantee allows an adversary (module docstring): per value of table-wide
    share ``p``, the largest share a class may give it (``shares(p)``), and the number of
    candidates a group of the release shows beside the record's value (``width``; ``None``:
    the release shows no such list)."""

    shares: LimitFn
    width: int | None = None
    #: A sentence naming the guarantee's limit, for the refusal.
    said: str = ""

    @staticmethod
    def constant(bound: float, width: int | None = None) -> Limit:
        """The same limit for every value (the posterior limit of the l-diversity family)."""
        return Limit(lambda p: np.full(len(p), float(bound)), width, f"{bound:.1%}")
