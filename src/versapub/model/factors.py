"""The distribution each published table contributes (Kifer & Gehrke; §5.1 of Jin et al.).

* A plain count table contributes its exact marginal ``p(x_E) = count / n``.
* An Anatomy table (QIT + ST) contributes, inside each group ``g``,
  ``P(q, s | g) = (count of q in g / |g|) · (count of s in g / |g|)``, summed over groups
  with weight ``|g| / n`` — i.e. ``p(q, s) = Σ_g c(q, g) · c(g, s) / (n · |g|)``.  It is
  kept in this latent form (never expanded to all ``(q, s)`` pairs unless an operation
  needs a joint over QI and S attributes together).
* Generalized tables (later anonymizers) will spread a generalized value uniformly over
  its leaves; they plug in as another :class:`Factor`.

Every factor supports the three operations the model needs: a weighted sum of its
distribution against indicator masks and messages grouped by some of its attributes
(marginals and query evidence), the probability of records, and conditional sampling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from versapub.model.sparse import Codes, Floats, SparseFn, group_sum, join_on, joint_ids, sample_conditional

Masks = Mapping[str, npt.NDArray[np.bool_]]


class Factor(Protocol):
    """The distribution one published table contributes, over ``attrs``."""

    @property
    def attrs(self) -> tuple[str, ...]: ...

    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        """``Σ_x p(x) · Π masks · Π messages`` grouped by ``by`` (masks: attr -> bool per code)."""
        ...

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        """The factor's marginal probability over ``attrs`` at each record."""
        ...

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        """``n`` draws of the factor's attributes, conditional on the ``given`` values
        (code -1 where the given values have probability 0 in this table)."""
        ...


def _weight(columns: Mapping[str, Codes], base: Floats, masks: Masks, messages: Sequence[SparseFn]) -> Floats:
    w = base.copy()
    for a, m in masks.items():
        if a in columns:
            w *= m[columns[a]]
    for msg in messages:
        w *= msg.lookup(columns)
    return w


def _keys(
    rows: Sequence[Codes], given: Sequence[Codes], cards: Sequence[int], n_rows: int, n: int
) -> tuple[Codes, Codes]:
    """Joint ids of the conditioning columns (all zero when there is nothing to condition on)."""
    if not rows:
        return np.zeros(n_rows, dtype=np.int64), np.zeros(n, dtype=np.int64)
    return joint_ids(rows, given, cards)


@dataclass(frozen=True)
class PlainFactor:
    """A distribution given by distinct rows (codes per attribute) and probabilities."""

    attrs: tuple[str, ...]
    columns: dict[str, Codes]
    p: Floats
    cards: dict[str, int]

    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        return group_sum(by, self.columns, self.cards, _weight(self.columns, self.p, masks, messages))

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        return self.weighted({}, [], attrs).lookup(records)

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        keys = [a for a in self.attrs if a in given]
        cards = [self.cards[a] for a in keys]
        rows, queries = _keys([self.columns[a] for a in keys], [given[a] for a in keys], cards, len(self.p), n)
        idx = sample_conditional(rows, self.p, queries, rng)
        return {a: np.where(idx >= 0, self.columns[a][idx], -1) for a in self.attrs}


@dataclass(frozen=True)
class AnatomyFactor:
    """Anatomy's QIT ``(q..., g, c_qg)`` and ST ``(g, s, c_gs)`` in latent form."""

    qi: tuple[str, ...]
    s: str
    qit: dict[str, Codes]  # qi columns + "__g"
    c_qg: Floats
    st_g: Codes
    st_s: Codes
    c_gs: Floats
    size: Floats  # |g|
    n: float
    cards: dict[str, int]
    _plain: list[PlainFactor] = field(default_factory=list, repr=False, compare=False)

    @property
    def attrs(self) -> tuple[str, ...]:
        return (*self.qi, self.s)

    def _pure(self, attrs: Sequence[str]) -> str:
        a = set(attrs)
        if self.s not in a:
            return "qi"
        return "s" if a == {self.s} else "mixed"

    def as_plain(self) -> PlainFactor:
        """The joint over QI and S, ``Σ_g c(q,g)c(g,s)/(n|g|)`` (computed once, on demand)."""
        if not self._plain:
            li, ri = join_on(self.qit["__g"], self.st_g)
            w = self.c_qg[li] * self.c_gs[ri] / (self.n * self.size[self.st_g[ri]])
            cols = {a: self.qit[a][li] for a in self.qi}
            cols[self.s] = self.st_s[ri]
            f = group_sum(self.attrs, cols, self.cards, w)
            self._plain.append(PlainFactor(self.attrs, dict(zip(f.attrs, f.codes, strict=True)), f.values, self.cards))
        return self._plain[0]

    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        if self._pure(by) == "mixed" or any(self._pure(m.attrs) == "mixed" for m in messages):
            return self.as_plain().weighted(masks, messages, by)
        g = self.qit["__g"]
        n_groups = len(self.size)
        wq = _weight(self.qit, self.c_qg / self.n, {a: m for a, m in masks.items() if a != self.s},
                     [m for m in messages if self._pure(m.attrs) == "qi"])  # fmt: skip
        st_cols = {self.s: self.st_s}
        ws = _weight(st_cols, self.c_gs / self.size[self.st_g], {a: m for a, m in masks.items() if a == self.s},
                     [m for m in messages if self._pure(m.attrs) == "s"])  # fmt: skip
        a_g = np.bincount(g, weights=wq, minlength=n_groups)
        b_g = np.bincount(self.st_g, weights=ws, minlength=n_groups)
        if not by:
            return SparseFn.scalar(float(a_g @ b_g))
        if self._pure(by) == "qi":
            return group_sum(by, self.qit, self.cards, wq * b_g[g])
        return group_sum(by, st_cols, self.cards, ws * a_g[self.st_g])

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        kind = self._pure(attrs)
        if kind != "mixed":
            return self.weighted({}, [], attrs).lookup(records)
        if set(attrs) != set(self.attrs):
            return self.as_plain().prob(attrs, records)
        # p(q, s) = Σ_g c(q,g) c(g,s) / (n |g|): join each record with its q's QIT rows.
        n_rec = len(records[self.s])
        qcards = [self.cards[a] for a in self.qi]
        rows_q, rec_q = joint_ids([self.qit[a] for a in self.qi], [records[a] for a in self.qi], qcards)
        # Join each record with the QIT rows of its q, unless expanding the whole table
        # (Σ_g |QIT rows of g| · |ST rows of g|) is cheaper (few distinct q values).
        space = int(max(rows_q.max(initial=-1), rec_q.max(initial=-1))) + 1
        join_cost = int(np.bincount(rows_q, minlength=space)[rec_q].sum())
        n_groups = len(self.size)
        expand_cost = int(np.bincount(self.qit["__g"], minlength=n_groups) @ np.bincount(self.st_g, minlength=n_groups))
        if expand_cost <= join_cost:
            return self.as_plain().prob(attrs, records)
        ri, qi_rows = join_on(rec_q, rows_q)
        g = self.qit["__g"][qi_rows]
        gs_rows, gs_query = joint_ids(
            [self.st_g, self.st_s], [g, records[self.s][ri]], [len(self.size), self.cards[self.s]]
        )
        where = np.full(int(max(gs_rows.max(initial=-1), gs_query.max(initial=-1))) + 1, -1, dtype=np.int64)
        where[gs_rows] = np.arange(len(gs_rows))
        hit = where[gs_query]
        ok = hit >= 0
        contrib = np.zeros(len(ri), dtype=np.float64)
        contrib[ok] = self.c_qg[qi_rows[ok]] * self.c_gs[hit[ok]] / (self.n * self.size[g[ok]])
        return np.bincount(ri, weights=contrib, minlength=n_rec).astype(np.float64)

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        keys = [a for a in self.attrs if a in given]
        kind = self._pure(keys) if keys else "qi"
        if kind == "mixed":
            return self.as_plain().sample(n, given, rng)
        g_all = self.qit["__g"]
        if kind == "qi":  # (q, g) | q_given, then s | g
            cards = [self.cards[a] for a in keys]
            rows, queries = _keys([self.qit[a] for a in keys], [given[a] for a in keys], cards, len(self.c_qg), n)
            qrow = sample_conditional(rows, self.c_qg, queries, rng)
            g = np.where(qrow >= 0, g_all[qrow], -1)
            srow = sample_conditional(self.st_g, self.c_gs, g, rng)
        else:  # (g, s) | s_given, then q | g
            srow = sample_conditional(self.st_s, self.c_gs, np.asarray(given[self.s], dtype=np.int64), rng)
            g = np.where(srow >= 0, self.st_g[srow], -1)
            qrow = sample_conditional(g_all, self.c_qg, g, rng)
        ok = (qrow >= 0) & (srow >= 0)
        out = {a: np.where(ok, self.qit[a][qrow], -1) for a in self.qi}
        out[self.s] = np.where(ok, self.st_s[srow], -1)
        return out
