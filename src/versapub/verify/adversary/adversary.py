"""The three attacks data-protection authorities ask for (Article 29 Working Party, opinion
05/2014: singling out, linkability, inference), on records drawn from a release
(:mod:`versapub.verify.adversary.adversary_records`) and scored against the original — as the
anonymeter package (Giomi et al., PoPETs 2023) runs them on synthetic data, re-implemented
here on numpy so that ``check`` needs nothing more (its figures agree with anonymeter's on
the same targets: ``benchmarks/attacks.py``):

* **inference**: the adversary knows a target's ``aux`` columns and guesses its ``secret``
  as the secret of the nearest drawn record (Gower-like distance: numeric columns scaled to
  ``[0, 1]`` over both tables, ``|a - b|``; other columns 0 when equal, else 1; the first
  nearest in the drawn order); a guess is right when equal, or for a numeric secret when
  ``|guess - secret| / guess <= TOLERANCE`` (anonymeter's definition);
* **singling out**: predicates built on the drawn records that hold for exactly one of them
  (univariate: a value held once, ``<= min``, ``>= max``; multivariate: ``n_cols`` columns of
  a drawn record, each ``==`` its value or, numeric, ``<=``/``>=`` it towards the nearer
  tail), counted when they hold for exactly one original record;
* **linkability**: ``aux`` split in two halves; a target is linked when its nearest drawn
  record is the same for both halves.

Each reports the attack's success rate with Wilson's 95 % interval and the baseline (random
guesses, random records, random predicates).  Every record of a versapub release is in it,
so there is no held-out control set: the risk is the attack's success rate, shown beside the
baseline (anonymeter's residual risk needs records kept out of the release).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Records = dict[str, npt.NDArray[np.object_]]
Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: A numeric secret's guess is right within this share of the guess (anonymeter's default).
TOLERANCE = 0.05
#: Confidence of the reported intervals (anonymeter's default).
CONFIDENCE = 0.95
#: Cells (queries x candidates) of one block of the nearest-neighbour search: about 8 MB per
#: matrix whatever the number of candidates (issue 50: blocks of 256 queries over 51,920
#: records held 0.5 GB at once; issue 67: blocks of 4 million cells still held 0.2 GB of the
#: 51,920-record job's 648 MB peak, 1 million cells 557 MB). The blocks' sizes never change
#: a result: the tie-breaking draws come from the generator in the same order.
BLOCK_CELLS = 1 << 20


def _rows(n_candidates: int) -> int:
    return max(1, BLOCK_CELLS // max(n_candidates, 1))


def _distances(q: Floats, candidates: Floats, n_numeric: int) -> Floats:
    """Each query row's distance to each candidate: ``|a - b|`` on the numeric columns, 0 or 1 on
    the others (one scratch matrix, no temporaries per column)."""
    dist = np.zeros((len(q), len(candidates)))
    tmp = np.empty_like(dist)
    for j in range(q.shape[1]):
        np.subtract(q[:, j : j + 1], candidates[None, :, j], out=tmp)
        if j < n_numeric:
            np.abs(tmp, out=tmp)
        else:
            np.not_equal(tmp, 0, out=tmp)
        dist += tmp
    return dist


def _nearest_blocks(queries: Floats, candidates: Floats, n_numeric: int) -> Iterator[tuple[int, npt.NDArray[np.bool_]]]:
    """Per block of queries (its first row), which candidates are nearest to each query.  The
    distances are taken to the candidates' distinct rows when they repeat (categorical
    columns: 10^6 records often hold a few thousand distinct rows; issue 50) and spread back to
    the candidates: the same distances, so the same nearest sets."""
    distinct, inverse = np.unique(candidates, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    few = len(distinct) <= len(candidates) // 2
    rows = _rows(len(candidates))
    for lo in range(0, len(queries), rows):
        q = queries[lo : lo + rows]
        if few:
            d = _distances(q, distinct, n_numeric)
            yield lo, (d <= d.min(axis=1, keepdims=True) + 1e-12)[:, inverse]
        else:
            d = _distances(q, candidates, n_numeric)
            yield lo, d <= d.min(axis=1, keepdims=True) + 1e-12


@dataclass(frozen=True)
class Rate:
    """A success rate of ``n`` attempts with Wilson's interval (anonymeter's estimator)."""

    n: int
    successes: float
    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "successes": round(self.successes, 3),
            "rate": round(self.value, 4),
            "ci": [round(self.low, 4), round(self.high, 4)],
        }


def _probit(confidence: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(0.5 * (1.0 + confidence)))


def success_rate(n: int, successes: float, confidence: float = CONFIDENCE) -> Rate:
    """Wilson's score estimate of a Bernoulli rate (anonymeter's ``success_rate``): the
    point ``(k + z^2/2) / (n + z^2)`` and the error ``z / (n + z^2) sqrt(k (n - k) / n + z^2/4)``,
    both clipped to ``[0, 1]``."""
    if n <= 0:
        return Rate(0, 0.0, 0.0, 0.0, 1.0)
    z = _probit(confidence)
    z2 = z * z
    rate = (successes + 0.5 * z2) / (n + z2)
    error = (z / (n + z2)) * math.sqrt(max(successes * (n - successes) / n, 0.0) + 0.25 * z2)
    return Rate(
        n, successes, min(max(rate, 0.0), 1.0), min(max(rate - error, 0.0), 1.0), min(max(rate + error, 0.0), 1.0)
    )


@dataclass(frozen=True)
class Figure:
    """One attack's outcome: what it was, its success rate and the baseline's."""

    attack: str
    target: str
    attack_rate: Rate
    baseline: Rate
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def risk(self) -> Rate:
        return self.attack_rate

    def to_json(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "target": self.target,
            "risk": self.attack_rate.to_json(),
            "baseline": self.baseline.to_json(),
            **self.details,
        }


# -- encoding -------------------------------------------------------------------------------
#: Each column array read during one check as a dictionary and codes, and its parsed numbers
#: (keyed by the array's identity, the array kept so that the key cannot be reused): the
#: attacks read the same columns many times, and the original's arrive with their codes
#: (:func:`remember_codes`).  Emptied by :func:`forget_parsed` when the check ends.
_FACTORS: dict[int, tuple[npt.NDArray[Any], npt.NDArray[np.str_], Ints]] = {}
_PARSED: dict[int, tuple[npt.NDArray[Any], Floats | None]] = {}


def remember_codes(values: npt.NDArray[Any], dictionary: npt.NDArray[Any], codes: Ints) -> None:
    """Record that ``values`` is ``dictionary[codes]`` (distinct dictionary values)."""
    _FACTORS[id(values)] = (values, np.asarray(dictionary, dtype=str), np.asarray(codes, dtype=np.int64))


def factorize(values: npt.NDArray[Any]) -> tuple[npt.NDArray[np.str_], Ints]:
    """``values`` as text: its distinct values and each row's code into them."""
    hit = _FACTORS.get(id(values))
    if hit is not None and hit[0] is values:
        return hit[1], hit[2]
    uniq, inv = np.unique(np.asarray(values, dtype=str), return_inverse=True)
    codes = np.asarray(inv, dtype=np.int64).ravel()
    _FACTORS[id(values)] = (values, uniq, codes)
    return uniq, codes


def shared_codes(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> tuple[Ints, Ints, npt.NDArray[np.str_]]:
    """Both columns as codes of one sorted dictionary of their texts (what ``np.unique`` of
    the two together gives), from each one's own factorization (kept per column): no string
    per record compared again (issue 67)."""
    (ua, ca), (ub, cb) = factorize(a), factorize(b)
    dictionary = np.union1d(ua, ub)
    return np.searchsorted(dictionary, ua)[ca], np.searchsorted(dictionary, ub)[cb], dictionary


def _parsed(values: npt.NDArray[Any]) -> Floats | None:
    """``values`` as numbers (NaN where empty), or None when one is not a number; each
    distinct value parsed once."""
    hit = _PARSED.get(id(values))
    if hit is not None and hit[0] is values:
        return hit[1]
    uniq, codes = factorize(values)
    text = np.char.strip(uniq)
    numbers = np.full(len(uniq), np.nan)
    filled = text != ""
    try:
        numbers[filled] = text[filled].astype(np.float64)
        out: Floats | None = numbers[codes]
    except ValueError:
        out = None
    _PARSED[id(values)] = (values, out)
    return out


def forget_parsed() -> None:
    """Empty the caches of factorized and parsed columns."""
    _FACTORS.clear()
    _PARSED.clear()


def numeric_columns(*tables: Records, columns: Sequence[str]) -> list[str]:
    """The columns whose every non-empty value, in every table, reads as a number."""
    return [c for c in columns if all(_parsed(np.asarray(t[c])) is not None for t in tables)]


def _numbers(values: npt.NDArray[np.object_]) -> Floats:
    out = _parsed(values)
    if out is None:
        raise ValueError("a value is not a number")
    return out


def encode(
    a: Records, b: Records, columns: Sequence[str], numeric: Sequence[str], sizes: tuple[int, int] | None = None
) -> tuple[Floats, Floats, int]:
    """Both tables as matrices for the distance: the numeric columns first, scaled to
    ``[0, 1]`` over both (a missing number far from everything: 2), then the others as codes
    of one dictionary over both."""
    num = [c for c in columns if c in set(numeric)]
    cat = [c for c in columns if c not in set(numeric)]
    cols_a, cols_b = [], []
    for c in num:
        x, y = _numbers(a[c]), _numbers(b[c])
        both = np.concatenate([x, y])
        lo, hi = np.nanmin(both, initial=np.inf), np.nanmax(both, initial=-np.inf)
        span = hi - lo if np.isfinite(hi - lo) and hi > lo else 1.0
        cols_a.append(np.where(np.isfinite(x), (x - lo) / span, 2.0))
        cols_b.append(np.where(np.isfinite(y), (y - lo) / span, 2.0))
    for c in cat:
        code_a, code_b, _ = shared_codes(a[c], b[c])
        cols_a.append(code_a.astype(np.float64))
        cols_b.append(code_b.astype(np.float64))
    n_a, n_b = sizes if sizes is not None else (_size(a), _size(b))
    ma = np.column_stack(cols_a) if cols_a else np.zeros((n_a, 0))
    mb = np.column_stack(cols_b) if cols_b else np.zeros((n_b, 0))
    return ma, mb, len(num)


def tied_hits(
    queries: Floats,
    candidates: Floats,
    n_numeric: int,
    secrets: Sequence[npt.NDArray[np.object_]],
    truth: npt.NDArray[np.object_],
) -> Floats:
    """Per query, the expected exact hit of guessing the secret of one of its nearest
    candidates picked at random, over every draw of the candidates' secrets (``secrets``):
    the mean, over draws and equally near candidates, of the secret being the truth."""
    out = np.zeros(len(queries))
    texts = [np.asarray(x).astype(str) for x in secrets]
    dictionary = np.unique(np.concatenate([truth.astype(str), *texts]))
    truth_s = np.searchsorted(dictionary, truth.astype(str))  # codes: integer comparisons below
    drawn = [np.searchsorted(dictionary, x) for x in texts]
    for lo, tied in _nearest_blocks(queries, candidates, n_numeric):
        hi = lo + len(tied)
        ties = tied.sum(axis=1)
        hits = sum((tied & (x[None, :] == truth_s[lo:hi, None])).sum(axis=1) for x in drawn)
        out[lo:hi] = hits / (ties * max(len(drawn), 1))
    return out


def nearest(queries: Floats, candidates: Floats, n_numeric: int, rng: np.random.Generator) -> Ints:
    """Per query row, the index of its nearest candidate (numeric columns ``|a - b|``, the
    others 0 when equal and 1 otherwise), in blocks of ``BLOCK_CELLS`` cells.  Several equally
    near candidates (many, on categorical data) are one of them drawn uniformly: an adversary
    who cannot tell them apart picks one (anonymeter takes whichever its sort puts first)."""
    out = np.empty(len(queries), dtype=np.int64)
    for lo, tied in _nearest_blocks(queries, candidates, n_numeric):
        pick = rng.random(tied.shape)  # one draw per (query, candidate) pair, in order, as always
        pick[~tied] = -1.0
        out[lo : lo + len(tied)] = np.argmax(pick, axis=1)
    return out


def _right(guess: npt.NDArray[np.object_], secret: npt.NDArray[np.object_], numeric: bool) -> npt.NDArray[np.bool_]:
    """anonymeter's rule: equal values, or numbers within ``TOLERANCE`` of the guess."""
    if not numeric:
        return np.asarray(guess.astype(str) == secret.astype(str))
    g, s = _numbers(guess), _numbers(secret)
    with np.errstate(invalid="ignore", divide="ignore"):
        close = np.abs(g - s) / (g + 1e-12) <= TOLERANCE
    return np.asarray((np.isnan(g) & np.isnan(s)) | close)


def _size(t: Records) -> int:
    return len(next(iter(t.values()))) if t else 0


def sample_targets(ori: Records, n_attacks: int, rng: np.random.Generator) -> Ints:
    """``n_attacks`` original records drawn without replacement (all of them when fewer)."""
    n = _size(ori)
    return np.sort(rng.choice(n, size=min(n_attacks, n), replace=False)).astype(np.int64)


# -- inference -------------------------------------------------------------------------------
def inference(
    ori: Records,
    syn: Records,
    aux: Sequence[str],
    secret: str,
    targets: Ints,
    rng: np.random.Generator,
    again: Sequence[npt.NDArray[np.object_]] = (),
) -> Figure:
    """anonymeter's inference attack (module docstring) on ``targets`` (original rows); beside
    it, ``exact``: the expected share of exact hits of a pick among the nearest records, over
    the drawn secret and its further draws ``again`` (what the verdict reads: no single draw)."""
    numeric = numeric_columns(ori, syn, columns=[*aux, secret])
    truth = ori[secret][targets]
    draws = [syn[secret], *again]
    if aux:
        q, c, n_num = encode({a: ori[a][targets] for a in aux}, {a: syn[a] for a in aux}, list(aux), numeric)
        guess = syn[secret][nearest(q, c, n_num, rng)]
        expected = tied_hits(q, c, n_num, draws, truth)
    else:  # nothing known: a random drawn record
        guess = syn[secret][rng.integers(0, _size(syn), len(targets))]
        shares = [np.mean(np.asarray(x).astype(str)[None, :] == truth.astype(str)[:, None], axis=1) for x in draws]
        expected = np.mean(shares, axis=0)
    hits = int(_right(guess, truth, secret in numeric).sum())
    base = syn[secret][rng.integers(0, _size(syn), len(targets))]
    base_hits = int(_right(base, truth, secret in numeric).sum())
    exact = success_rate(len(targets), float(expected.sum()))
    return Figure(
        "inference",
        f"{secret} from {', '.join(aux) or 'nothing'}",
        success_rate(len(targets), hits),
        success_rate(len(targets), base_hits),
        {"aux": list(aux), "secret": secret, "numeric_secret": secret in numeric, "exact": exact.to_json()},
    )


# -- linkability -----------------------------------------------------------------------------
def linkability(
    ori: Records, syn: Records, aux_a: Sequence[str], aux_b: Sequence[str], targets: Ints, rng: np.random.Generator
) -> Figure:
    """anonymeter's linkability attack with one neighbour: a target is linked when the
    nearest drawn record to its ``aux_a`` half is the nearest to its ``aux_b`` half."""
    numeric = numeric_columns(ori, syn, columns=[*aux_a, *aux_b])
    qa, ca, na = encode({a: ori[a][targets] for a in aux_a}, {a: syn[a] for a in aux_a}, list(aux_a), numeric)
    qb, cb, nb = encode({a: ori[a][targets] for a in aux_b}, {a: syn[a] for a in aux_b}, list(aux_b), numeric)
    hits = int((nearest(qa, ca, na, rng) == nearest(qb, cb, nb, rng)).sum())
    n_syn = _size(syn)
    base_hits = int((rng.integers(0, n_syn, len(targets)) == rng.integers(0, n_syn, len(targets))).sum())
    return Figure(
        "linkability",
        f"({', '.join(aux_a)}) with ({', '.join(aux_b)})",
        success_rate(len(targets), hits),
        success_rate(len(targets), base_hits),
        {"aux": [list(aux_a), list(aux_b)]},
    )
