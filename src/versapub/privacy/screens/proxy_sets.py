"""Proxies made of several columns: unprotected columns that *together* compute a protected
value (issue 45).

The pair screen (:mod:`versapub.privacy.screens.proxies`) measures one column against a protected
``S``.  A steward's file also holds columns that compute ``S`` together — an installment from
the amount, the rate and the term (so the rate from the other three), a total from its parts —
which no single column reveals.  For each rule ``Q -> S`` this screen takes the unprotected
columns the release publishes exactly where ``S``'s records can be reached (the pair screen's
reach, :func:`versapub.privacy.screens.proxies.reached`) and measures on the input how well the best
predictor built from them recovers ``S`` **on held-out records** (fit on two thirds of a seeded
sample, scored on the rest), so that a table whose rows are all unique does not "determine"
``S`` by memorising it:

* a **hit** is a held-out record whose ``S`` is predicted exactly (a categorical ``S``, or a
  numeric one with at most ``CATEGORICAL_VALUES`` distinct values) or within ``RESOLUTION``
  (1 %) of its value (a numeric ``S``) — read as the adversary reads it: knowing the record's
  left-hand side it finds the ``f`` records sharing it and reads one of their rows, so a hit
  counts ``1/f`` for its own row plus ``(1 - 1/f)`` times the share of its cell's other
  held-out records whose guess is its value (a near-unique left-hand side reads its own row:
  the loans; a coarse one reads a crowd: a diagnosis behind age, sex and race);
* the **learners**: decision tables — ``S``'s most frequent value (a numeric ``S``: its
  median) among the training records sharing the held-out record's key, when at least
  ``MIN_SUPPORT`` do — over every key and pair of keys, a key being a column's values
  (recodings), a numeric column's quantile bin, or the bin of the logarithm of the ratio of
  two positive numeric columns (products and quotients: an amortisation); and least squares
  on the numeric columns, trimmed of its worst-fitting fifth (sums and differences: a total
  from its parts, a few edited records aside).  Measured here, scikit-learn's ensembles
  recover the same sets but importing them costs 2.7 s of every publish (more than the
  screen's whole budget on the hospital scenario), so the tables are numpy;
* the **search** is bounded: the candidate columns are ranked by what each reveals alone
  (lookup accuracy above the base rate, rank correlation), the first ``MAX_COLUMNS`` are
  used (the rest are named as not searched); the set named is the breaching learner's of
  fewest columns (forward selection for least squares, up to ``MAX_SET`` columns), with the
  best share any learner reached beside it;
* the **bound** is what the rule's guarantee allows an adversary: the largest posterior
  ``P(S = s | what the release shows)`` it permits (``Guarantee.posterior_limit``, bound to
  the table: ``1/l`` for frequency l-diversity, ``c/(c+1)`` for recursive (c, l)-diversity,
  the largest share the distribution-relative guarantees allow), since no adversary guesses
  right more often than its posterior.  A set is **refused** when the lower end of the
  held-out share's confidence interval lies above the bound (Wilson's interval at the
  quantile ``1 - FAMILY_ERROR / learners``: the best of every learner tried is read, so an
  unrelated set is refused in under 1 % of screens — measured by permuting ``S`` in
  ``tests/test_proxy_sets.py`` and ``benchmarks/proxies.py``).

A guarantee that bounds no posterior (k-anonymity, distinct l-diversity: ``posterior_limit``
1) refuses nothing here; its strongest sets are still listed.  Above ``SAMPLE`` records the
screen reads a seeded uniform sample of them (the measure is a share: its 4,000 held-out
records put its standard error under 0.8 points, and the screen's cost stays flat: about 0.5 s
a protected attribute).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.data.source import Source
from versapub.privacy.rules import Rule
from versapub.privacy.screens.computing import (
    Limit,
    decoys,
    derived,
    key_sets,
    nearest,
    non_modal,
    snapped,
    value_shares,
)
from versapub.privacy.screens.proxies import reached

#: Groups of more candidates than this are read as none: picking among them is a prediction
#: within the attribute's resolution, which the screen scores anyway (beta-likeness under a
#: value of share 1/6000 would show thousands).
MAX_CANDIDATES = 50
#: Held-out records below which nothing is measured (a table of fewer than about 150 records).
MIN_TEST = 50
#: Records the screen reads (a seeded uniform sample above it).
SAMPLE = 12_000
#: The held-out share of the sample (scored, never fitted on).
TEST_SHARE = 1 / 3
#: Candidate columns used, best ranked first; sets searched up to this size.
MAX_COLUMNS = 8
MAX_SET = 6
#: A numeric ``S`` with more distinct values than this is predicted as a number, within
#: ``RESOLUTION`` of the value; otherwise each value is a class.
CATEGORICAL_VALUES = 50
RESOLUTION = 0.01
#: Training records a value (or pair of values) needs before the lookup learner uses it.
MIN_SUPPORT = 3
#: The chance that a set of columns unrelated to ``S`` is refused: every learner's held-out
#: share is read against the bound at ``FAMILY_ERROR / learners`` (Bonferroni), so the best of
#: them breaches by chance in under 1 % of screens even when ``S``'s most frequent value sits
#: exactly at the bound (``tests/test_proxy_sets.py`` and ``benchmarks/proxies.py`` permute
#: ``S`` to measure it).
FAMILY_ERROR = 0.01
#: A set is listed (an association, not a refusal) when its share beats the base rate by this.
LISTED = 0.1
#: Quantile bins of a numeric column or log-ratio read by the decision tables.
BINS = 64
#: Decision tables on pairs of keys are built among the keys that reveal most alone.
KEYS = 12
#: Log-ratios are formed among at most this many (best ranked) positive numeric columns.
RATIOS = 5

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class SetProxy:
    """How well the unprotected ``columns`` together recover the protected right-hand side
    of ``rule`` on held-out input records (module docstring)."""

    rule: Rule
    columns: tuple[str, ...]
    share: float
    low: float
    bound: float
    baseline: float
    learner: str
    n_test: int
    tables: tuple[str, ...] = ()
    not_searched: tuple[str, ...] = ()
    allowed: bool = False
    #: The best share any learner reached (with ``best_columns``): the whole set's strength.
    best_share: float = 0.0
    best_columns: tuple[str, ...] = ()
    #: The records the shares are read on (every held-out record, or a numeric ``S``'s
    #: records not at its most frequent value) and the candidates a group shows (``None``: none).
    scope: str = "every record"
    candidates: int | None = None
    #: Treatments of the set's columns under which its recovery falls below the bound,
    #: checked on held-out records, each a ready ``--treat`` argument (:mod:`versapub.publishing.remedies`).
    remedies: tuple[str, ...] = ()

    @property
    def sensitive(self) -> str:
        return self.rule.rhs

    @property
    def refused(self) -> bool:
        """A measured breach of the guarantee's bound (the confidence interval above it)."""
        return self.breach and not self.allowed

    @property
    def breach(self) -> bool:
        """Above the bound, and above guessing the most frequent value (a rule whose most
        frequent value is already above its bound is infeasible: the feasibility test says so)."""
        return self.low > max(self.bound, self.baseline)

    def describe(self) -> str:
        """The whole set's strength first (what an adversary who reads every column gets),
        then the fewest columns above the bound (the way out names them)."""
        whole = self.best_columns or self.columns
        strength = max(self.best_share, self.share)
        where = f", published exactly in {', '.join(self.tables)}" if self.tables else ""
        among = (
            f", an adversary picking among the {self.candidates} candidates each group of the release shows the one "
            "nearest to what it computes,"
            if self.candidates and self.candidates > 1
            else ""
        )
        fewest = (
            f"; the fewest columns above it: {', '.join(map(repr, self.columns))} ({self.share:.1%}, at least "
            f"{self.low:.1%} with 99 % confidence over every learner tried; {self.learner})"
            if tuple(self.columns) != tuple(whole)
            else f" (at least {self.low:.1%} with 99 % confidence over every learner tried; {self.learner})"
        )
        scope = "held-out records" if self.scope == "every record" else f"held-out records among {self.scope}"
        return (
            f"{', '.join(map(repr, whole))} together recover {self.sensitive!r} (rule '{self.rule}'{where}) "
            f"for {strength:.1%} of {scope} ({self.n_test:,}){among} where the guarantee allows an adversary "
            f"{self.bound:.1%}; guessing its most frequent value gives {self.baseline:.1%}{fewest}"
            + (
                "; a treatment that brings them below the bound (computed, checked on held-out records): "
                + " or ".join(f"--treat '{r}'" for r in self.remedies)
                if self.remedies
                else ""
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.to_json(),
            "columns": list(self.columns),
            "sensitive": self.sensitive,
            "share": round(self.share, 4),
            "low": round(self.low, 4),
            "bound": round(self.bound, 4),
            "baseline": round(self.baseline, 4),
            "learner": self.learner,
            "n_test": self.n_test,
            "breach": self.breach,
            "allowed": self.allowed,
            "tables": list(self.tables),
            "not_searched": list(self.not_searched),
            "best_share": round(self.best_share, 4),
            "best_columns": list(self.best_columns),
            "scope": self.scope,
            "candidates": self.candidates,
            "remedies": list(self.remedies),
        }


def z_for(learners: int) -> float:
    """The one-sided normal quantile of ``1 - FAMILY_ERROR / learners``."""
    # the standard library's quantile (Wichura's AS241, within 4e-15 of scipy's ndtri here):
    # scipy.special costs 0.2 s of every publish's start-up
    return NormalDist().inv_cdf(1.0 - FAMILY_ERROR / max(learners, 1))


def wilson_low(hits: float, n: int, z: float) -> float:
    """The lower end of the Wilson score interval of ``hits`` successes in ``n`` trials."""
    if n <= 0:
        return 0.0
    p = hits / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / denom)


def _numbers(values: npt.NDArray[Any]) -> Floats | None:
    """The dictionary's values as numbers (missing cells NaN), when every value that is not
    missing reads as a number; else None (one vectorized parse; the dictionary, not the
    records)."""
    text = np.char.strip(np.asarray(values, dtype=str))
    filled = text != ""
    out = np.full(len(text), np.nan)
    if not filled.any():
        return None
    try:
        out[filled] = text[filled].astype(np.float64)
    except ValueError:
        return None
    return out


def _coded(values: npt.NDArray[Any]) -> bool:
    """Zero-padded numbers (``0001``, ``02134``) are codes, not quantities: a diagnosis code
    near another is no nearer in meaning, and "within 1 %" of it says nothing."""
    text = np.asarray(values, dtype=str)
    return bool(np.any((np.char.str_len(text) > 1) & np.char.startswith(text, "0") & ~np.char.startswith(text, "0.")))


@dataclass(frozen=True)
class _Data:
    """The sample, split: per candidate column its codes and (numeric) values, ``S``'s codes
    and values, which rows are for training, and each record's left-hand-side cell."""

    codes: dict[str, Ints]
    numbers: dict[str, Floats]
    cards: dict[str, int]
    s_codes: Ints
    s_values: Floats | None
    regression: bool
    train: npt.NDArray[np.bool_]
    #: Each record's cell of the rule's left-hand side (dense ids) and the cell's size in the
    #: whole input (how many rows an adversary who knows the left-hand side must choose from).
    cell: Ints
    cell_size: Floats
    #: Per record: its value's share of the training records (within ``RESOLUTION`` for a
    #: number), and whether it is not the most frequent value (:mod:`computing`).
    share: Floats
    informative: npt.NDArray[np.bool_]
    #: Per held-out record, the other candidates its group shows (``width - 1`` codes; no
    #: column when the release shows none) and the generator that breaks ties among them.
    decoys: Ints
    rng: np.random.Generator


def _hits(guess: Floats | Ints, data: _Data, test: npt.NDArray[np.bool_]) -> float:
    """:func:`_per_record` summed: the held-out records the adversary gets right."""
    return float(_per_record(guess, data, test).sum())


def _per_record(guess: Floats | Ints, data: _Data, test: npt.NDArray[np.bool_]) -> Floats:
    """Held-out records the adversary gets right (module docstring), each weighted by how
    well the adversary can read its row: knowing a record's left-hand side, it finds the
    ``f`` input records sharing it and reads the published columns of one of them, so a record
    alone in its cell (``f = 1``) scores 1 when its guess is right, and in a larger cell
    ``1/f`` for its own row plus ``(1 - 1/f)`` times the share of the cell's other held-out
    records whose guess is its value (a right guess: the same class, or within ``RESOLUTION``)."""
    g = np.asarray(guess)
    cell = data.cell[test]
    f = data.cell_size[test]
    if data.regression:
        assert data.s_values is not None
        truth = data.s_values[data.s_codes[test]]
        gf = np.asarray(g, dtype=np.float64)
        tol = RESOLUTION * np.maximum(np.abs(truth), 1e-12)
        own = (np.abs(gf - truth) <= tol) & np.isfinite(truth) & np.isfinite(gf)
        others = _near_in_cell(cell, gf, truth - tol, truth + tol) - own
    else:
        codes = data.s_codes[test]
        own = g == codes
        key = cell * (int(max(g.max(initial=0), codes.max(initial=0))) + 1)
        pairs, counts = np.unique(key + g, return_counts=True)
        at = np.searchsorted(pairs, key + codes)
        found = (at < len(pairs)) & (pairs[np.minimum(at, len(pairs) - 1)] == key + codes)
        others = np.where(found, counts[np.minimum(at, len(pairs) - 1)], 0) - own
    size = np.bincount(cell, minlength=int(cell.max(initial=0)) + 1)[cell] - 1
    rate = np.where(size > 0, others / np.maximum(size, 1), own)  # a cell with no other held-out record: its own
    return np.asarray(own / f + (1 - 1 / f) * rate, dtype=np.float64)


def _picked(guess: Floats | Ints, data: _Data) -> Floats | Ints:
    """The guess as the adversary plays it where the release shows candidates (an Anatomy
    group's values: :func:`computing.snapped`), else as it is."""
    if not data.decoys.shape[1]:
        return guess
    truth = data.s_codes[~data.train]
    codes = snapped(guess, truth, data.decoys, data.s_values, data.rng)
    return data.s_values[codes] if data.regression and data.s_values is not None else codes


def _near_in_cell(cell: Ints, guess: Floats, lo: Floats, hi: Floats) -> Ints:
    """Per record, how many records of its cell guess a number in ``[lo, hi]``: each guess
    replaced by its rank among the guesses, ``cell * m + rank`` sorted once, two searches per
    record."""
    finite = np.where(np.isfinite(guess), guess, np.inf)
    values = np.unique(finite)
    m = len(values) + 1
    keys = np.sort(cell.astype(np.int64) * m + np.searchsorted(values, finite))
    first = np.searchsorted(values, lo, side="left")
    last = np.searchsorted(values, hi, side="right") - 1
    base = cell.astype(np.int64) * m
    count = np.searchsorted(keys, base + last, side="right") - np.searchsorted(keys, base + first, side="left")
    return np.where(last >= first, count, 0).astype(np.int64)


def _lookup(data: _Data, cols: Sequence[str]) -> Ints | Floats:
    """:func:`_table_guess` over the values of ``cols``."""
    return _table_guess(data, [data.codes[c] for c in cols], [data.cards[c] for c in cols])


def _table_guess(data: _Data, keys: Sequence[Ints], cards: Sequence[int]) -> Ints | Floats:
    """A decision table: each held-out record guessed the most frequent ``S`` (for a numeric
    ``S``, the median) among the training records that share its values of ``keys`` (at least
    ``MIN_SUPPORT`` of them), else of all training records."""
    tr, te = data.train, ~data.train
    s = data.s_codes
    n_s = int(s.max()) + 1 if len(s) else 1
    mode = int(np.argmax(np.bincount(s[tr], minlength=n_s)))
    if not keys:
        guess0 = np.full(int(te.sum()), mode, dtype=np.int64)
        return data.s_values[guess0] if data.regression and data.s_values is not None else guess0
    grouped = group_rows(list(keys), list(cards), with_inverse=True)
    assert grouped.inverse is not None
    k = grouped.inverse.astype(np.int64)
    n_keys = len(grouped.counts)
    support = np.bincount(k[tr], minlength=n_keys)
    if data.regression:
        assert data.s_values is not None
        y = data.s_values[s]
        order = np.lexsort((y[tr], k[tr]))
        kt, yt = k[tr][order], y[tr][order]
        start = np.searchsorted(kt, np.arange(n_keys), side="left")
        mid = np.minimum(start + support // 2, max(len(yt) - 1, 0))
        median = np.where(support > 0, yt[mid] if len(yt) else 0.0, np.nan)
        return np.where(support[k[te]] >= MIN_SUPPORT, median[k[te]], float(np.median(y[tr])))
    pair = group_rows([k[tr], s[tr]], [n_keys, n_s])
    best_s = np.full(n_keys, mode, dtype=np.int64)
    order = np.lexsort((-pair.counts, pair.keys[0]))  # per key, its most frequent S first
    first = np.r_[True, np.diff(pair.keys[0][order]) != 0]
    best_s[pair.keys[0][order][first]] = pair.keys[1][order][first]
    guess = np.where(support[k[te]] >= MIN_SUPPORT, best_s[k[te]], mode)
    if data.s_values is not None and data.regression:
        return data.s_values[guess]
    return guess


@dataclass(frozen=True)
class _Feature:
    """A key a decision table may read: codes (a column's values, a numeric column's or a
    log-ratio's quantile bin), how many, and the columns it is made of."""

    codes: Ints
    card: int
    columns: tuple[str, ...]
    name: str


def _bins(values: Floats, train: npt.NDArray[np.bool_]) -> tuple[Ints, int]:
    """Quantile bins of ``values`` (``BINS`` of them, edges from the training records; a
    missing value its own bin)."""
    edges = np.unique(np.nanquantile(values[train], np.linspace(0, 1, BINS + 1)[1:-1]))
    codes = np.searchsorted(edges, values, side="right").astype(np.int64)
    codes[~np.isfinite(values)] = len(edges) + 1
    return codes, len(edges) + 2


def _bank(data: _Data, cols: Sequence[str]) -> list[_Feature]:
    """The keys of the decision tables: every column's values; every numeric column's bins;
    for every pair of positive numeric columns (among the first ``RATIOS``), the bins of the
    logarithm of their ratio — products and quotients (an amortisation) become one key."""
    bank = [_Feature(data.codes[c], data.cards[c], (c,), c) for c in cols]
    for c in cols:
        if c in data.numbers and data.cards[c] > BINS:
            codes, card = _bins(data.numbers[c], data.train)
            bank.append(_Feature(codes, card, (c,), f"{c} (binned)"))
    positive = [c for c in cols if c in data.numbers and np.nanmin(data.numbers[c], initial=np.inf) > 0][:RATIOS]
    for a, b in itertools.combinations(positive, 2):
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.log(data.numbers[a]) - np.log(data.numbers[b])
        codes, card = _bins(ratio, data.train)
        bank.append(_Feature(codes, card, (a, b), f"{a} / {b}"))
    return bank


def _linear(data: _Data, cols: Sequence[str]) -> Floats | Ints | None:
    """Least squares of a numeric ``S`` on the numeric columns (with an intercept), trimmed:
    refitted twice on the training records it fits best (the 80 % of smallest residuals), so
    that a few edited records do not hide an identity that holds for the rest."""
    nums = [c for c in cols if c in data.numbers]
    if data.s_values is None or not nums:
        return None
    x = np.column_stack([*(data.numbers[c] for c in nums), np.ones(len(data.s_codes))])
    y = data.s_values[data.s_codes]
    ok = np.isfinite(x).all(axis=1) & np.isfinite(y)
    tr = data.train & ok
    if tr.sum() <= 2 * x.shape[1]:
        return None
    fit = tr
    coef = np.zeros(x.shape[1])
    for _ in range(3):
        coef, *_ = np.linalg.lstsq(x[fit], y[fit], rcond=None)
        resid = np.abs(x @ coef - y)
        fit = tr & (resid <= np.quantile(resid[tr], 0.8))
    guess = np.where(np.isfinite(x[~data.train] @ coef), x[~data.train] @ coef, np.nan)
    return guess if data.regression else _snap(data, guess)


def _snap(data: _Data, guess: Floats) -> Ints:
    """A numeric guess as the code of the nearest value of ``S`` (a numeric ``S`` of few
    values is guessed as a class)."""
    assert data.s_values is not None
    order = np.argsort(data.s_values)
    vals = data.s_values[order]
    g = np.where(np.isfinite(guess), guess, vals[0])
    at = np.clip(np.searchsorted(vals, g), 1, max(len(vals) - 1, 1))
    left = np.abs(g - vals[at - 1]) <= np.abs(vals[np.minimum(at, len(vals) - 1)] - g)
    return order[np.where(left, at - 1, np.minimum(at, len(vals) - 1))].astype(np.int64)


@dataclass(frozen=True)
class Found:
    """One learner's success: its held-out hits on every record and on the informative ones
    (a numeric ``S``'s records not at its most frequent value), its name and columns."""

    hits: float
    hits_informative: float
    learner: str
    columns: tuple[str, ...]


NONE = Found(0.0, 0.0, "none", ())


def learner_count(keys: int, numeric: int, features: int = 0, key_sets: int = 1) -> int:
    """How many learners :func:`_best` may read: a decision table per key and per pair of the
    ``KEYS`` best keys, up to ``MAX_SET`` rounds of forward selection over the numeric
    columns, and a nearest neighbour per derived feature and set of keys."""
    paired = min(keys, KEYS)
    lsq = sum(numeric - i for i in range(min(MAX_SET, numeric)))
    return keys + paired * (paired - 1) // 2 + lsq + features * key_sets


@dataclass(frozen=True)
class Scope:
    """Where a learner's hits are read against the guarantee: every held-out record, or the
    informative ones; the bound (mean per-record limit), the base rate and the records."""

    name: str
    mask: npt.NDArray[np.bool_]
    bound: float
    baseline: float

    @property
    def n(self) -> int:
        return int(self.mask.sum())


def _scopes(data: _Data, limit: Limit) -> list[Scope]:
    """Every held-out record, and for a numeric ``S`` predicted as a number its informative
    records (module docstring of :mod:`computing`): each with its bound and base rate."""
    test = ~data.train
    limits = np.clip(limit.shares(data.share[test]), 0.0, 1.0)
    base = _per_record(_picked(_lookup(data, []), data), data, test)
    out = [Scope("every record", np.ones(int(test.sum()), dtype=bool), float(limits.mean()), float(base.mean()))]
    inform = data.informative[test]
    if data.regression and MIN_TEST <= inform.sum() < len(inform):
        out.append(Scope("the records whose value is not the most frequent", inform,
                         float(limits[inform].mean()), float(base[inform].mean())))  # fmt: skip
    return out


def _breaches(f: Found, scopes: Sequence[Scope], z: float) -> bool:
    hits = (f.hits, f.hits_informative)
    return any(wilson_low(h, sc.n, z) > max(sc.bound, sc.baseline) for h, sc in zip(hits, scopes, strict=False))


def _best(data: _Data, cols: Sequence[str], scopes: Sequence[Scope], n_test: int) -> tuple[Found, list[Found], float]:
    """The learners that recover ``S`` from ``cols`` — decision tables over every key of
    :func:`_bank` and every pair of keys, trimmed least squares and nearest neighbours on
    derived features (:mod:`computing`) — each played against the candidates the release
    shows and scored on every scope: the one named (among those that breach, the one of
    fewest columns; else the best), every learner's result, and the z its intervals use."""
    test = ~data.train
    inform = scopes[1].mask if len(scopes) > 1 else np.zeros(int(test.sum()), dtype=bool)
    found: list[Found] = []
    bank = _bank(data, cols)
    nums = [c for c in cols if c in data.numbers]
    feats = derived(data.numbers, cols) if data.s_values is not None or data.numbers else []
    ksets = key_sets(data.codes, data.cards, cols)
    z = z_for(learner_count(len(bank), len(nums) if data.s_values is not None else 0, len(feats), len(ksets)))

    def scored(guess: Floats | Ints, learner: str, used: tuple[str, ...]) -> Found:
        per = _per_record(_picked(guess, data), data, test)
        return Found(float(per.sum()), float(per[inform].sum()), learner, used)

    def table(combo: Sequence[_Feature]) -> Found:
        used = tuple(dict.fromkeys(c for f in combo for c in f.columns))
        guess = _table_guess(data, [f.codes for f in combo], [f.card for f in combo])
        return scored(guess, "decision table on " + " and ".join(f.name for f in combo), used)

    singles = [(table([f]), f) for f in bank]
    found += [t for t, _ in singles]
    paired = [f for _, f in sorted(singles, key=lambda tf: -tf[0].hits)[:KEYS]]  # pairs of the best keys
    found += [table(combo) for combo in itertools.combinations(paired, 2)]
    if data.s_values is not None and nums:
        chosen: list[str] = []
        for _ in range(min(MAX_SET, len(nums))):  # forward selection of the linear identity's columns
            trials = [(_linear(data, [*chosen, c]), c) for c in nums if c not in chosen]
            scored_trials = [(scored(g, "least squares", (*chosen, c)), c) for g, c in trials if g is not None]
            if not scored_trials:
                break
            best_trial, pick = max(scored_trials, key=lambda t: t[0].hits + t[0].hits_informative)
            chosen.append(pick)
            found.append(best_trial)  # on to the whole set: its strength is reported, the fewest named
    mode = int(np.argmax(np.bincount(data.s_codes[data.train]))) if data.train.any() else 0
    for feat in feats:  # the adversary who computes: its neighbour's value in a derived feature
        for keys in ksets:
            used = tuple(dict.fromkeys([*feat.columns, *keys]))
            codes = nearest(feat.values, [data.codes[k] for k in keys], data.s_codes, data.train, mode)
            guess = data.s_values[codes] if data.regression and data.s_values is not None else codes
            within = f" within {', '.join(keys)}" if keys else ""
            found.append(scored(guess, f"nearest neighbour on {feat.name}{within}", used))
    if not found:
        return NONE, [NONE], z
    breach = [f for f in found if _breaches(f, scopes, z)]
    top = max(found, key=lambda f: (f.hits, -len(f.columns)))
    return (min(breach, key=lambda f: (len(f.columns), -f.hits)) if breach else top), found, z


def _rank(data: _Data, cols: Sequence[str]) -> list[str]:
    """The candidate columns, those that reveal most of ``S`` alone first (lookup hits above
    the base rate; for numeric columns and ``S`` also the rank correlation)."""
    test = ~data.train
    n = max(int(test.sum()), 1)
    score: dict[str, float] = {}
    for c in cols:
        s = _hits(_lookup(data, [c]), data, test) / n
        if data.s_values is not None and c in data.numbers:
            y = data.s_values[data.s_codes]
            x = data.numbers[c]
            ok = np.isfinite(x) & np.isfinite(y)
            if ok.sum() > 2 and np.ptp(x[ok]) > 0 and np.ptp(y[ok]) > 0:
                rx = np.argsort(np.argsort(x[ok]))
                ry = np.argsort(np.argsort(y[ok]))
                s = max(s, abs(float(np.corrcoef(rx, ry)[0, 1])))
        score[c] = s
    return sorted(cols, key=lambda c: (-score[c], c))


def _prepare(
    table: Source, s: str, cols: Sequence[str], lhs: Sequence[str], seed: int, width: int | None, truth: Source | None
) -> _Data:
    """The sample, split; ``S`` read from ``truth`` (the input before its treatments) when
    given — the adversary's target is the original value, also when ``S`` itself was treated
    (a copy of it beside a PRAM'd ``S`` is a proxy whatever the draw)."""
    rng = np.random.default_rng(seed)
    known = [a for a in lhs if a in table.names]
    if truth is not None and s in truth.names and truth.in_memory and table.in_memory and truth is not table:
        table = table.replace(truth.column(s))  # type: ignore[attr-defined]  # the rows stay: treatments keep them
    drawn = table.sample_codes(list(dict.fromkeys([*cols, s, *known])), SAMPLE, rng)
    m = len(drawn[s])
    train = np.ones(m, dtype=bool)
    train[rng.permutation(m)[: round(m * TEST_SHARE)]] = False
    if known:
        cell, sizes = table.cells_among(known, drawn)
        size = sizes[cell].astype(np.float64)
    else:
        cell, size = np.zeros(m, dtype=np.int64), np.full(m, float(table.n_rows))
    s_col = table.column(s)
    s_values = None if _coded(s_col.values) else _numbers(s_col.values)
    regression = s_values is not None and s_col.cardinality > CATEGORICAL_VALUES
    codes: dict[str, Ints] = {}
    numbers: dict[str, Floats] = {}
    cards: dict[str, int] = {}
    for c in cols:
        col = table.column(c)
        cc = np.asarray(drawn[c], dtype=np.int64)
        codes[c] = cc
        cards[c] = col.cardinality
        num = _numbers(col.values)
        if num is not None:
            numbers[c] = num[cc]
    s_codes = np.asarray(drawn[s], dtype=np.int64)
    share = value_shares(s_codes, s_values, regression, RESOLUTION, train)
    informative = non_modal(s_codes, s_values, regression, RESOLUTION, train)
    others = decoys(s_codes, train, s_codes[~train], width or 1, rng)
    return _Data(
        codes, numbers, cards, s_codes, s_values, regression, train, cell, size, share, informative, others, rng
    )


def _limit_of(bound: float | Limit) -> Limit:
    return bound if isinstance(bound, Limit) else Limit.constant(float(bound))


def screen_sets(
    table: Source,
    rules: Sequence[Rule],
    tables: Sequence[tuple[str, Sequence[str]]],
    bounds: Mapping[Rule, float | Limit],
    allow: Iterable[str] = (),
    ignore: Iterable[str] = (),
    seed: int = 0,
    truth: Source | None = None,
    every: bool = False,
) -> list[SetProxy]:
    """For each rule, the strongest set of unprotected columns published within reach of its
    left-hand side (module docstring), measured on ``table`` against ``bounds[rule]`` (what
    its guarantee allows an adversary: a posterior limit, or a :class:`Limit` per value with
    the candidates the release shows): refused when it breaches the bound (unless every one
    of its columns is in ``allow``), else listed when it beats the base rate by ``LISTED``.
    ``truth``: the input before its treatments (the protected value's original); ``every``:
    each rule's strongest set also when it is neither refused nor listed (the remedies read it)."""
    protected = {r.rhs for r in rules} | set(ignore)
    allowed = set(allow)
    out: list[SetProxy] = []
    groups: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[Rule]] = {}
    where: dict[tuple[str, tuple[str, ...], tuple[str, ...]], dict[str, tuple[str, ...]]] = {}
    for r in rules:
        reach = {c: t for c, t in reached(tables, r.lhs).items() if c not in protected and c not in r.lhs}
        if not reach:
            continue
        key = (r.rhs, tuple(sorted(reach)), tuple(sorted(r.lhs)))
        groups.setdefault(key, []).append(r)
        where[key] = reach
    for (s, cols, lhs), members in groups.items():
        rule = min(members, key=lambda r: float(_limit_of(bounds.get(r, 1.0)).shares(np.array([0.0]))[0]))
        limit = _limit_of(bounds.get(rule, 1.0))
        width = limit.width if limit.width is not None and limit.width <= MAX_CANDIDATES else None
        data = _prepare(table, s, cols, lhs, seed, width, truth)
        n_test = int((~data.train).sum())
        if n_test < MIN_TEST:  # too few records to measure anything on held-out ones
            continue
        ranked = _rank(data, cols)
        used, skipped = ranked[:MAX_COLUMNS], tuple(ranked[MAX_COLUMNS:])
        scopes = _scopes(data, limit)
        named, found, z = _best(data, used, scopes, n_test)
        read = _read_scope(named, scopes, z)
        informative = read.name != "every record"
        top = max(found, key=lambda f: ((f.hits_informative if informative else f.hits), -len(f.columns)))
        share, low = read.share, read.low
        if not every and not _breaches(named, scopes, z) and share - read.baseline < LISTED:
            continue
        tabs = tuple(dict.fromkeys(t for c in named.columns for t in where[(s, cols, lhs)].get(c, ())))
        out.append(
            SetProxy(
                rule,
                named.columns,
                share,
                low,
                read.bound,
                read.baseline,
                named.learner,
                read.n,
                tabs,
                skipped,
                bool(named.columns) and set(named.columns) <= allowed,
                (top.hits_informative if informative else top.hits) / max(read.n, 1),
                top.columns,
                read.name,
                width,
            )
        )
    return out


@dataclass(frozen=True)
class _Read:
    name: str
    share: float
    low: float
    bound: float
    baseline: float
    n: int


def _read_scope(f: Found, scopes: Sequence[Scope], z: float) -> _Read:
    """The scope a set is reported on: the first it breaches, else every record."""
    hits = (f.hits, f.hits_informative)
    for h, sc in zip(hits, scopes, strict=False):
        low = wilson_low(h, sc.n, z)
        if low > max(sc.bound, sc.baseline):
            return _Read(sc.name, h / sc.n, low, sc.bound, sc.baseline, sc.n)
    sc = scopes[0]
    return _Read(sc.name, f.hits / sc.n, wilson_low(f.hits, sc.n, z), sc.bound, sc.baseline, sc.n)


def set_proxy_error(refused: Sequence[SetProxy]) -> str:
    """The one paragraph refusing sets of columns that breach their rule's bound, with the
    ways out."""
    first = refused[0]
    cols = ",".join(dict.fromkeys(c for p in refused for c in p.columns))  # every set's: one way out for all
    return (
        f"Refused: {len(refused)} set(s) of columns that no rule protects would, published together where anyone "
        "who knows a rule's left-hand side reads them, recover a protected attribute more often than its guarantee "
        "allows (measured on held-out input records): "
        + "; ".join(p.describe() for p in refused)
        + ". Ways out: protect the attribute with a rule on those columns (e.g. "
        f"'{', '.join(first.columns)} -> {first.sensitive}'), drop or coarsen one of them (--identifying COLUMN, a "
        "hierarchy level), perturb them (noise, microaggregation), or, when the association is intended, allow "
        f"the sets with --allow-proxy {cols} (every column of every set; recorded in the manifest). A statistical "
        "association strong enough to break the promise is refused as well as an identity: protect those columns "
        "too. Nothing was written."
    )
