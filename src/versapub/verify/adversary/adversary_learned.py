"""The learned adversary of ``check`` (issue 45): what an adversary who knows a rule's
left-hand side recovers of its protected attribute from everything a release publishes, and
what the left-hand side alone says of it in the population — the verifier's own learners
(nothing shared with the publisher's screen, :mod:`versapub.privacy.screens.proxy_sets`).

* **Learning from the release.**  The drawn records (:mod:`versapub.verify.adversary.adversary_records`:
  an Anatomy group's sensitive value drawn among its group's, so most drawn pairs are wrong
  and the learner must find the relation behind the noise) train decision tables — the
  protected value's most frequent value (numeric: median) per key, a key being a readable
  column's values, a numeric column's quantile bin, or the bin of the log of the ratio of
  two positive numeric columns, alone or in pairs of the best keys — and, for a numeric
  secret, least squares trimmed to its best-fitting ``KEEP`` of the records (an identity that
  holds for the true pairs survives the drawn noise).  The learner is chosen on a held-out
  part of the drawn records, as an adversary could.
* **Reading the row.**  Knowing a target's left-hand side, the adversary finds the drawn
  records sharing it (its cell) and reads one of them: a target's success is the share of
  its cell's records whose guess is its secret (a near-unique left-hand side: its own row).
* **The population reference.**  The same decision tables trained on the original's other
  records with the left-hand side alone (no release): what anyone who knows the left-hand
  side guesses anyway.  The verdict holds a rule only to what the release adds beyond it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.verify.adversary.adversary import (
    Rate,
    Records,
    _numbers,
    factorize,
    numeric_columns,
    shared_codes,
    success_rate,
)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

BINS = 48
RATIOS = 5
PAIRED = 8
MIN_SUPPORT = 3
KEEP = 0.3
#: Seeded starts and concentration steps of the trimmed least squares.
STARTS = 30
STEPS = 10
#: Rows the concentration steps read (a seeded sample above it; the winner is refitted on
#: every row): FAST-LTS's subsampling, which keeps the cost flat in the drawn records.
LTS_ROWS = 5_000
#: The original's records the population reference learns from at most (a seeded sample).
REFERENCE_ROWS = 50_000
#: The share of drawn records the adversary holds out to choose its learner.
VALIDATION = 0.3


@dataclass(frozen=True)
class _Key:
    codes: Ints
    card: int
    name: str


def _codes(values: npt.NDArray[np.object_]) -> tuple[Ints, int]:
    dictionary, inv = factorize(values)
    return inv, len(dictionary) if len(inv) else 1


def _binned(x: Floats, fit: npt.NDArray[np.bool_]) -> tuple[Ints, int]:
    finite = x[fit & np.isfinite(x)]
    edges = np.unique(np.quantile(finite, np.linspace(0, 1, BINS + 1)[1:-1])) if len(finite) else np.zeros(0)
    codes = np.searchsorted(edges, x, side="right").astype(np.int64)
    codes[~np.isfinite(x)] = len(edges) + 1
    return codes, len(edges) + 2


def _keys(table: Records, cols: Sequence[str], numeric: set[str], fit: npt.NDArray[np.bool_]) -> list[_Key]:
    """The keys over ``table``'s rows (module docstring)."""
    keys = []
    nums: dict[str, Floats] = {}
    for c in cols:
        codes, card = _codes(table[c])
        keys.append(_Key(codes, card, c))
        if c in numeric:
            nums[c] = _numbers(table[c])
            if card > BINS:
                binned, bc = _binned(nums[c], fit)
                keys.append(_Key(binned, bc, f"{c} (binned)"))
    positive = [c for c in nums if np.nanmin(nums[c], initial=np.inf) > 0][:RATIOS]
    for first, second in itertools.combinations(positive, 2):
        r, rc = _binned(np.log(nums[first]) - np.log(nums[second]), fit)
        keys.append(_Key(r, rc, f"{first} / {second}"))
    return keys


def _table(
    keys: Sequence[_Key], secret: Ints, fit: npt.NDArray[np.bool_], n_secret: int, values: Floats | None
) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """A decision table fitted on the ``fit`` rows: per row of the whole table, the code of
    its guess (the mode, or the code of the value nearest the median for a numeric secret) and
    whether its key had enough support."""
    g = group_rows([k.codes for k in keys], [k.card for k in keys], with_inverse=True)
    assert g.inverse is not None
    k = g.inverse.astype(np.int64)
    n_keys = len(g.counts)
    support = np.bincount(k[fit], minlength=n_keys)
    mode_all = int(np.argmax(np.bincount(secret[fit], minlength=n_secret)))
    if values is not None:  # numeric: the median's nearest value
        y = values[secret]
        order = np.lexsort((y[fit], k[fit]))
        ks, ys, cs = k[fit][order], y[fit][order], secret[fit][order]
        start = np.searchsorted(ks, np.arange(n_keys), side="left")
        mid = np.minimum(start + support // 2, max(len(ys) - 1, 0))
        best = np.where(support > 0, cs[mid] if len(cs) else mode_all, mode_all)
    else:
        best = np.full(n_keys, mode_all, dtype=np.int64)
        if fit.any():
            pair = group_rows([k[fit], secret[fit]], [n_keys, n_secret])
            order = np.lexsort((-pair.counts, pair.keys[0]))
            first = np.r_[True, np.diff(pair.keys[0][order]) != 0]
            best[pair.keys[0][order][first]] = pair.keys[1][order][first]
    ok = support[k] >= MIN_SUPPORT
    return np.where(ok, best[k], mode_all).astype(np.int64), ok


def _right(guess: Ints, secret: Ints, values: Floats | None) -> npt.NDArray[np.bool_]:
    """A guess is right when it is the secret's value: a numeric guess is first moved to the
    nearest value of the secret's domain (:func:`_nearest_code`), so what the guarantee
    promises — about values, not neighbourhoods — is what is scored."""
    del values
    return np.asarray(guess == secret)


def _trimmed(x: Floats, y: Floats, fit: npt.NDArray[np.bool_]) -> Floats | None:
    """Least trimmed squares (concentration steps, Rousseeuw & Van Driessen): from the full
    least squares and from ``STARTS`` seeded small subsets, refitted ``STEPS`` times on the
    best-fitting ``KEEP`` of the ``fit`` rows; the fit that reproduces the most rows exactly
    (an identity behind the drawn noise) wins.  Predictions for every row."""
    design = np.column_stack([x, np.ones(len(y))])
    ok = fit & np.isfinite(design).all(axis=1) & np.isfinite(y)
    rows = np.flatnonzero(ok)
    p = design.shape[1]
    if len(rows) <= 4 * p:
        return None
    rng = np.random.default_rng(0)
    pool = np.sort(rng.choice(rows, size=LTS_ROWS, replace=False)) if len(rows) > LTS_ROWS else rows
    starts = [pool] + [rng.choice(pool, size=2 * p, replace=False) for _ in range(STARTS)]
    best, best_exact = None, -1
    for start in starts:
        coef = _concentrate(design, y, pool, start, STEPS)
        exact = int((np.abs(design[pool] @ coef - y[pool]) <= 1e-6 * (np.abs(y[pool]) + 1)).sum())
        if exact > best_exact:
            best, best_exact = coef, exact
    assert best is not None
    if len(pool) < len(rows):  # the winner's best-fitting rows among all of them
        best = _concentrate(design, y, rows, None, 2, best)
    return np.asarray(design @ best, dtype=np.float64)


def _concentrate(
    design: Floats, y: Floats, rows: Ints, start: Ints | None, steps: int, coef: Floats | None = None
) -> Floats:
    """Concentration steps: refit on the best-fitting ``KEEP`` of ``rows``, ``steps`` times,
    from the least squares on ``start`` (or from ``coef``)."""
    if coef is None:
        coef = np.asarray(np.linalg.lstsq(design[start], y[start], rcond=None)[0], dtype=np.float64)
    for _ in range(steps):
        resid = np.abs(design[rows] @ coef - y[rows])
        keep = rows[resid <= np.quantile(resid, KEEP)]
        coef = np.asarray(np.linalg.lstsq(design[keep], y[keep], rcond=None)[0], dtype=np.float64)
    return coef


def _nearest_code(values: Floats, guess: Floats) -> Ints:
    order = np.argsort(values)
    v = values[order]
    g = np.where(np.isfinite(guess), guess, v[0])
    at = np.clip(np.searchsorted(v, g), 1, max(len(v) - 1, 1))
    left = np.abs(g - v[at - 1]) <= np.abs(v[np.minimum(at, len(v) - 1)] - g)
    return order[np.where(left, at - 1, np.minimum(at, len(v) - 1))].astype(np.int64)


def _learn(
    table: Records,
    cols: Sequence[str],
    secret: Ints,
    fit: npt.NDArray[np.bool_],
    check: npt.NDArray[np.bool_],
    values: Floats | None,
    numeric: set[str],
) -> tuple[Ints, str]:
    """The best learner (by accuracy on the ``check`` rows) fitted on ``fit``: its guesses for
    every row of ``table`` and its name."""
    n_secret = int(secret.max()) + 1 if len(secret) else 1
    if int(fit.sum()) < 2 * MIN_SUPPORT:  # too few records to learn from: the most frequent value
        mode = int(np.argmax(np.bincount(secret, minlength=n_secret))) if len(secret) else 0
        return np.full(len(secret), mode, dtype=np.int64), "the most frequent value"
    keys = _keys(table, cols, numeric, fit)
    tried: list[tuple[float, Ints, str]] = []

    def score(guess: Ints) -> float:
        return float(_right(guess[check], secret[check], values).mean()) if check.any() else 0.0

    singles = []
    for key in keys:
        guess, _ = _table([key], secret, fit, n_secret, values)
        singles.append((score(guess), guess, f"decision table on {key.name}", key))
    tried += [(s, g, n) for s, g, n, _ in singles]
    best_keys = [k for _, _, _, k in sorted(singles, key=lambda t: -t[0])[:PAIRED]]
    for a, b in itertools.combinations(best_keys, 2):
        guess, _ = _table([a, b], secret, fit, n_secret, values)
        tried.append((score(guess), guess, f"decision table on {a.name} and {b.name}"))
    nums = [c for c in cols if c in numeric]
    if values is not None and nums:
        x = np.column_stack([_numbers(table[c]) for c in nums])
        pred = _trimmed(x, values[secret], fit)
        if pred is not None:
            guess = _nearest_code(values, pred)
            tried.append((score(guess), guess, f"least squares on {', '.join(nums)}"))
    if not tried:
        mode = int(np.argmax(np.bincount(secret[fit], minlength=n_secret)))
        return np.full(len(secret), mode, dtype=np.int64), "the most frequent value"
    _, guess, name = max(tried, key=lambda t: t[0])
    return guess, name


def _encode_secret(ori: Records, syn: Records, secret: str, numeric: bool) -> tuple[Ints, Ints, Floats | None]:
    """Both tables' secrets as codes of one dictionary (and the dictionary's numbers)."""
    code_ori, code_syn, dictionary = shared_codes(ori[secret], syn[secret])
    values = _numbers(dictionary.astype(object)) if numeric else None
    return code_ori.astype(np.int64), code_syn.astype(np.int64), values


def learned_inference(
    ori: Records,
    syn: Records,
    known: Sequence[str],
    readable: Sequence[str],
    secret: str,
    targets: Ints,
    rng: np.random.Generator,
) -> tuple[Rate, str]:
    """The adversary who knows ``known`` of each target, reads the ``readable`` columns of the
    drawn records sharing it, and guesses with what it learned from the drawn records (module
    docstring): its success rate on ``targets`` and its learner."""
    numeric = set(numeric_columns(ori, syn, columns=[*readable, secret]))
    s_ori, s_syn, values = _encode_secret(ori, syn, secret, secret in numeric)
    n_syn = len(s_syn)
    fit = np.ones(n_syn, dtype=bool)
    fit[rng.permutation(n_syn)[: int(n_syn * VALIDATION)]] = False
    guess_syn, name = _learn(syn, readable, s_syn, fit, ~fit, values, numeric)
    # each target: the share of its cell's drawn records (same known values) whose guess is its secret
    if known:
        coded = [_codes(np.concatenate([ori[c][targets], syn[c]])) for c in known]
        g = group_rows([c for c, _ in coded], [k for _, k in coded], with_inverse=True)
        assert g.inverse is not None
        cell = g.inverse.astype(np.int64)
    else:
        cell = np.zeros(len(targets) + n_syn, dtype=np.int64)
    t_cell, s_cell = cell[: len(targets)], cell[len(targets) :]
    truth = s_ori[targets]
    n_cells = int(cell.max()) + 1
    size = np.bincount(s_cell, minlength=n_cells)
    if values is None:
        pairs = group_rows([s_cell, guess_syn], [n_cells, int(max(guess_syn.max(initial=0), truth.max(initial=0))) + 1])
        lookup = {(int(a), int(b)): int(c) for a, b, c in zip(pairs.keys[0], pairs.keys[1], pairs.counts, strict=True)}
        hits = np.array([lookup.get((int(c), int(t)), 0) for c, t in zip(t_cell, truth, strict=True)], dtype=np.float64)
    else:
        hits = np.zeros(len(targets))
        order = np.argsort(s_cell, kind="stable")
        starts = np.searchsorted(s_cell[order], np.arange(n_cells), side="left")
        for i, (c, t) in enumerate(zip(t_cell, truth, strict=True)):  # targets only (at most n_attacks)
            rows = order[starts[c] : starts[c] + size[c]]
            hits[i] = float(_right(guess_syn[rows], np.full(len(rows), t), values).sum())
    share = np.where(size[t_cell] > 0, hits / np.maximum(size[t_cell], 1), 0.0)
    return success_rate(len(targets), float(share.sum())), name


def population_reference(ori: Records, known: Sequence[str], secret: str, targets: Ints) -> Rate:
    """What ``known`` says of ``secret`` in the original without any release: decision tables
    on the known columns fitted on the original's other records (a seeded sample of
    ``REFERENCE_ROWS`` of them in a larger original: the reference is a rate with its
    interval, and the learners' accuracy settles long before), scored on ``targets``."""
    size = len(ori[secret])
    if size > REFERENCE_ROWS + len(targets):
        free = np.ones(size, dtype=bool)
        free[targets] = False
        others = np.flatnonzero(free)
        rows = np.union1d(targets, np.random.default_rng(0).choice(others, REFERENCE_ROWS, replace=False))
        ori = {c: ori[c][rows] for c in dict.fromkeys([*known, secret])}
        targets = np.searchsorted(rows, targets)
    numeric = set(numeric_columns(ori, columns=[*known, secret]))
    codes, _ = _codes(ori[secret])
    values = None
    if secret in numeric:
        dictionary = np.unique(ori[secret].astype(str))
        values = _numbers(dictionary.astype(object))
    n = len(codes)
    fit = np.ones(n, dtype=bool)
    fit[targets] = False
    check = np.zeros(n, dtype=bool)
    check[np.flatnonzero(fit)[::4]] = True  # a quarter of the others to choose the learner
    fit &= ~check
    guess, _ = _learn(ori, list(known), codes, fit, check, values, numeric)
    return success_rate(len(targets), float(_right(guess[targets], codes[targets], values).sum()))
