"""Singling out (anonymeter's attack, re-implemented on numpy; :mod:`versapub.verify.adversary.adversary`):
predicates built on the records drawn from a release that hold for exactly one of them,
counted when they hold for exactly one original record.

* **univariate**: a value held by one drawn record, ``<= min`` and ``>= max`` of a numeric
  column, a column missing in exactly one record — shuffled, the first ``n_attacks`` that single
  out a drawn record kept;
* **multivariate**: ``n_cols`` columns of a random drawn record, each ``==`` its value or, for
  a numeric column, ``>=`` (above the median) or ``<=`` it, generated in batches until
  ``n_attacks`` distinct predicates single out a drawn record (or ``max_attempts``);
* **baseline**: random predicates (random columns, values among theirs, random operators).

Both tables are deduplicated first (as anonymeter does); a predicate is evaluated on every
record at once, a batch of predicates per column (never a loop over records).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.verify.adversary.adversary import (
    Figure,
    Records,
    _numbers,
    _size,
    factorize,
    numeric_columns,
    remember_codes,
    shared_codes,
    success_rate,
)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
#: Multivariate predicates tried at most, as anonymeter does by default (``max_attempts``).
MAX_ATTEMPTS = 10_000_000
#: Predicate x drawn-record cells the search evaluates at most (issue 64): the search stops
#: when it has ``n_attacks`` predicates that single out a drawn record or when its attempts
#: would pass this budget — about 5 s on a table that resists singling out. Issue 45 stopped
#: at 20 attempts per attack, which reported 16.9 % where anonymeter's 500 predicates find
#: 84.5 % on a loan release; the figures at this budget are in ``benchmarks/attacks.py``.
CELL_BUDGET = 4_000_000_000
#: Consecutive batches of 1,000 attempts that add fewer than 10 new predicates end the search:
#: a small table's predicates are exhausted long before any budget.
STALE_BATCHES = 20
#: Predicate x record cells evaluated at once.
CELLS = 1 << 24
#: Operators, by code: ==, !=, <=, >=, <, >.
OPS = ("==", "!=", "<=", ">=", "<", ">")
Dictionaries = dict[str, npt.NDArray[np.str_]]


@dataclass(frozen=True)
class Encoded:
    """A table's columns as numbers (numeric ones; NaN missing) or codes of one dictionary per
    column shared with the other table (-1: a value the other table lacks)."""

    columns: tuple[str, ...]
    numeric: frozenset[str]
    values: dict[str, Floats]
    n: int


def _encode_pair(
    a: Records, b: Records, columns: Sequence[str], numeric: set[str]
) -> tuple[Encoded, Encoded, Dictionaries]:
    va: dict[str, Floats] = {}
    vb: dict[str, Floats] = {}
    dicts: dict[str, npt.NDArray[np.str_]] = {}
    for c in columns:
        if c in numeric:
            va[c], vb[c] = _numbers(a[c]), _numbers(b[c])
            continue
        # one dictionary over both from each side's own (factorized once per column): no
        # string per record is compared again (issue 67)
        code_a, code_b, dicts[c] = shared_codes(a[c], b[c])
        va[c], vb[c] = code_a.astype(np.float64), code_b.astype(np.float64)
    cols = tuple(columns)
    return Encoded(cols, frozenset(numeric), va, _size(a)), Encoded(cols, frozenset(numeric), vb, _size(b)), dicts


@dataclass(frozen=True)
class Predicates:
    """``k`` conjunctions of ``width`` terms: column index, operator code and value per term
    (a NaN value: the column is missing)."""

    col: Ints
    op: Ints
    value: Floats

    @property
    def k(self) -> int:
        return int(self.col.shape[0])


def counts(p: Predicates, t: Encoded, index: _Index | None = None) -> Ints:
    """How many records of ``t`` each predicate holds for (batched per column; through
    ``index``, the table's sorted columns, when given: :class:`_Index`)."""
    if index is not None and p.k:
        return index.counts(p)
    out = np.zeros(p.k, dtype=np.int64)
    per = max(1, CELLS // max(t.n, 1))
    for lo in range(0, p.k, per):
        hi = min(lo + per, p.k)
        mask = np.ones((hi - lo, t.n), dtype=bool)
        for j in range(p.col.shape[1]):
            cols, ops, vals = p.col[lo:hi, j], p.op[lo:hi, j], p.value[lo:hi, j]
            for c in np.unique(cols):
                x = t.values[t.columns[int(c)]][None, :]
                for o in np.unique(ops[cols == c]):
                    rows = np.flatnonzero((cols == c) & (ops == o))
                    v = vals[rows][:, None]
                    with np.errstate(invalid="ignore"):
                        if o <= 1:  # == / != (a NaN value: the column is missing)
                            eq = np.where(np.isnan(v), np.isnan(x), x == v)
                            cond = eq if o == 0 else ~eq
                        elif o == 2:
                            cond = x <= v
                        elif o == 3:
                            cond = x >= v
                        elif o == 4:
                            cond = x < v
                        else:
                            cond = x > v
                    mask[rows] &= cond
        out[lo:hi] = mask.sum(axis=1)
    return out


#: A table of at least this many records is searched through a sorted index per column
#: (issue 67: the original of a 10^6-record release, 17 s of dense predicate x record cells;
#: 1,000 predicates on 50,000 drawn records 0.19 s dense, 0.10 s through the index).
INDEXED_ROWS = 20_000


class _Index:
    """Each column of a table sorted once (NaN last, as numpy sorts): a predicate's most
    selective term gives its candidate records by two binary searches, and only those are
    tested against its other terms — the same counts as the dense evaluation."""

    def __init__(self, t: Encoded) -> None:
        self.t = t
        self.order: dict[str, Ints] = {}
        self.sorted: dict[str, Floats] = {}
        self.finite: dict[str, int] = {}

    def _column(self, c: str) -> tuple[Ints, Floats, int]:
        if c not in self.order:
            x = self.t.values[c]
            o = np.argsort(x, kind="stable").astype(np.int64)
            self.order[c], self.sorted[c] = o, x[o]
            self.finite[c] = int(len(x) - np.isnan(x).sum())
        return self.order[c], self.sorted[c], self.finite[c]

    def _ranges(self, c: str, op: int, v: float) -> list[tuple[int, int]]:
        """The sorted positions of the records a term holds for, as ranges."""
        _, sx, finite = self._column(c)
        n = len(sx)
        if np.isnan(v):  # == / != missing
            return [(finite, n)] if op == 0 else [(0, finite)]
        left, right = int(np.searchsorted(sx, v, "left")), int(np.searchsorted(sx, v, "right"))
        return {
            0: [(left, right)],
            1: [(0, left), (right, n)],  # != holds for missing values too
            2: [(0, right)],
            3: [(left, finite)],
            4: [(0, left)],
            5: [(right, finite)],
        }[op]

    def counts(self, p: Predicates) -> Ints:
        out = np.zeros(p.k, dtype=np.int64)
        for i in range(p.k):
            terms = [
                (self.t.columns[int(p.col[i, j])], int(p.op[i, j]), float(p.value[i, j])) for j in range(p.col.shape[1])
            ]
            spans = [self._ranges(*term) for term in terms]
            sizes = [sum(b - a for a, b in sp) for sp in spans]
            by_size = sorted(range(len(terms)), key=sizes.__getitem__)  # the most selective terms first
            order = self._column(terms[by_size[0]][0])[0]
            rows = np.concatenate([order[a:b] for a, b in spans[by_size[0]]]) if spans[by_size[0]] else order[:0]
            for j in by_size[1:]:
                if not len(rows):
                    break
                c, op, v = terms[j]
                rows = rows[_holds(self.t.values[c][rows], op, v)]
            out[i] = len(rows)
        return out


def _holds(x: Floats, op: int, v: float) -> npt.NDArray[np.bool_]:
    """One term on values ``x`` (the dense evaluation's semantics)."""
    with np.errstate(invalid="ignore"):
        if op <= 1:
            eq = np.isnan(x) if np.isnan(v) else x == v
            return eq if op == 0 else ~eq
        return {2: x <= v, 3: x >= v, 4: x < v}.get(op, x > v)


def _univariate(s: Encoded, rng: np.random.Generator) -> Predicates:
    cols, ops, vals = [], [], []
    for j, c in enumerate(s.columns):
        x = s.values[c]
        if int(np.isnan(x).sum()) == 1:
            cols.append(j)
            ops.append(0)
            vals.append(np.nan)
        finite = x[np.isfinite(x)]
        if c in s.numeric and len(finite):
            cols += [j, j]
            ops += [2, 3]
            vals += [float(finite.min()), float(finite.max())]
        uniq, cnt = np.unique(finite, return_counts=True)
        rare = uniq[cnt == 1]
        cols += [j] * len(rare)
        ops += [0] * len(rare)
        vals += rare.tolist()
    order = rng.permutation(len(cols))
    return Predicates(
        np.asarray(cols, dtype=np.int64)[order][:, None],
        np.asarray(ops, dtype=np.int64)[order][:, None],
        np.asarray(vals, dtype=np.float64)[order][:, None],
    )


def _from_rows(s: Encoded, rows: Ints, chosen: Ints, medians: Floats) -> Predicates:
    """Predicates from drawn records: each chosen column ``==`` the record's value, or for a
    numeric column ``>=``/``<=`` it towards the nearer tail (anonymeter's)."""
    value = np.empty(chosen.shape)
    op = np.zeros(chosen.shape, dtype=np.int64)
    for j in range(chosen.shape[1]):
        for c in np.unique(chosen[:, j]):
            sel = np.flatnonzero(chosen[:, j] == c)
            name = s.columns[int(c)]
            v = s.values[name][rows[sel]]
            value[sel, j] = v
            if name in s.numeric:
                op[sel, j] = np.where(np.isnan(v), 0, np.where(v > medians[int(c)], 3, 2))
    return Predicates(chosen, op, value)


def _multivariate(
    s: Encoded, width: int, n: int, rng: np.random.Generator, max_attempts: int, index: _Index | None = None
) -> Predicates:
    d = len(s.columns)
    medians = np.array(
        [
            float(np.nanmedian(s.values[c])) if c in s.numeric and np.isfinite(s.values[c]).any() else np.nan
            for c in s.columns
        ]
    )
    found: list[Predicates] = []
    seen: set[bytes] = set()
    total, attempts, stale = 0, 0, 0
    batch = 1000
    while total < n and attempts < max_attempts and stale < STALE_BATCHES:
        k = min(batch, max_attempts - attempts)
        attempts += k
        rows = rng.integers(0, s.n, size=k)
        chosen = np.sort(np.argsort(rng.random((k, d)), axis=1)[:, :width], axis=1).astype(np.int64)
        p = _from_rows(s, rows, chosen, medians)
        keys = np.concatenate([p.col, p.op, np.nan_to_num(p.value, nan=np.inf)], axis=1)
        fresh = []
        for i, key in enumerate(keys):
            b = key.tobytes()
            if b not in seen:
                seen.add(b)
                fresh.append(i)
        idx = np.asarray(fresh, dtype=np.int64)
        # the space of predicates exhausted (a small table): batches that add almost nothing end it
        stale = stale + 1 if len(idx) < k // 100 else 0
        if not len(idx):
            continue
        sub = Predicates(p.col[idx], p.op[idx], p.value[idx])
        single = np.flatnonzero(counts(sub, s, index) == 1)[: n - total]
        found.append(Predicates(sub.col[single], sub.op[single], sub.value[single]))
        total += len(single)
    if not found:
        return Predicates(np.zeros((0, width), np.int64), np.zeros((0, width), np.int64), np.zeros((0, width)))
    return Predicates(*(np.concatenate([getattr(f, a) for f in found]) for a in ("col", "op", "value")))


def _random(s: Encoded, width: int, n: int, rng: np.random.Generator) -> Predicates:
    d = len(s.columns)
    chosen = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :width], axis=1).astype(np.int64)
    rows = rng.integers(0, s.n, size=(n, width))
    value = np.empty(chosen.shape)
    op = np.empty(chosen.shape, dtype=np.int64)
    for j in range(width):
        for c in np.unique(chosen[:, j]):
            sel = np.flatnonzero(chosen[:, j] == c)
            name = s.columns[int(c)]
            value[sel, j] = s.values[name][rows[sel, j]]
            choices = 6 if name in s.numeric else 2
            op[sel, j] = rng.integers(0, choices, size=len(sel))
    op = np.where(np.isnan(value), np.minimum(op, 1), op)
    return Predicates(chosen, op, value)


def _distinct(t: Records, columns: Sequence[str]) -> Records:
    """The table's distinct rows (anonymeter drops duplicates before singling out)."""
    if not columns:
        return {}
    factors = [factorize(t[c]) for c in columns]
    key, card = np.zeros(len(factors[0][1]), dtype=np.int64), 1
    for uniq, codes in factors:  # one integer key per distinct row, ranked densely before it overflows
        k = max(len(uniq), 1)
        if card * k >= 2**62:
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
            card = int(key.max(initial=0)) + 1
        key, card = key * k + codes, card * k
    first = np.sort(np.unique(key, return_index=True)[1])  # each distinct row's first record
    out = {}
    for c, (uniq, codes) in zip(columns, factors, strict=True):
        out[c] = t[c][first]
        remember_codes(out[c], uniq, codes[first])  # its dictionary known: never factorized again
    return out


def describe(p: Predicates, i: int, t: Encoded, dicts: Dictionaries) -> str:
    terms = []
    for j in range(p.col.shape[1]):
        name = t.columns[int(p.col[i, j])]
        v = p.value[i, j]
        if np.isnan(v):
            terms.append(f"{name} is missing" if p.op[i, j] == 0 else f"{name} is not missing")
        elif name in dicts:
            terms.append(f"{name} {OPS[int(p.op[i, j])]} {dicts[name][int(v)]}")
        else:
            terms.append(f"{name} {OPS[int(p.op[i, j])]} {v:g}")
    return " and ".join(terms)


def singling_out(
    ori: Records,
    syn: Records,
    columns: Sequence[str],
    n_attacks: int,
    rng: np.random.Generator,
    mode: str = "univariate",
    n_cols: int = 3,
    max_attempts: int | None = None,
) -> Figure:
    """The attack (module docstring): its success rate over ``n_attacks`` and the baseline's."""
    o, s = _distinct(ori, columns), _distinct(syn, columns)
    # read on the whole columns (parsed once per check and cached): the distinct rows hold the
    # same values, and parsing their fresh copies again cost 17 s per check at 10^6 records
    numeric = set(numeric_columns(ori, syn, columns=list(columns)))
    eo, es, dicts = _encode_pair(o, s, columns, numeric)
    if mode == "univariate":
        found = _univariate(es, rng)
        queries = Predicates(*(getattr(found, a)[counts(found, es) == 1][:n_attacks] for a in ("col", "op", "value")))
        width = 1
    else:
        width = min(n_cols, len(columns))
        budget = max_attempts or min(MAX_ATTEMPTS, max(CELL_BUDGET // max(es.n, 1), 100 * n_attacks))
        queries = _multivariate(es, width, n_attacks, rng, budget, _Index(es) if es.n >= INDEXED_ROWS else None)
    index = _Index(eo) if eo.n >= INDEXED_ROWS else None
    hits = int((counts(queries, eo, index) == 1).sum())
    base = _random(es, width, n_attacks, rng)
    base_hits = int((counts(base, eo, index) == 1).sum())
    return Figure(
        "singling out",
        f"{mode} ({len(columns)} columns)",
        success_rate(n_attacks, hits),
        success_rate(n_attacks, base_hits),
        {
            "mode": mode,
            "queries": queries.k,
            "examples": [describe(queries, i, es, dicts) for i in range(min(3, queries.k))],
        },
    )
