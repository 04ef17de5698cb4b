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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from versapub.data import bitsets
from versapub.data.groupby import group_rows
from versapub.data.table import GROUP_KEY
from versapub.model.batch import SMALL_BATCH, BatchFn, BatchMasks, batch_group_sum, batch_reduce, mask_gathers
from versapub.model.batch_bounds import groups_batch, rows_batch
from versapub.model.formula import Formula, as_arrays, resolver
from versapub.model.group_bounds import Groups, group_bounds
from versapub.model.group_merge import merged
from versapub.model.interval import Bound, integral
from versapub.model.sparse import (
    Codes,
    Floats,
    SparseFn,
    expand,
    group_sum,
    joint_ids,
    match_rows,
    sample_conditional,
)

Masks = Mapping[str, npt.NDArray[np.bool_]]


class Factor(Protocol):
    """The distribution one published table contributes, over ``attrs``."""

    @property
    def attrs(self) -> tuple[str, ...]: ...

    @property
    def latent(self) -> tuple[str, ...]:
        """Attributes published only through a latent group (whose marginal with the
        others the table does not fix); empty for an exact table."""
        ...

    def group_bound(self, s: str, cards: Mapping[str, int]) -> tuple[float, int] | None:
        """For a latent attribute ``s``: ``max P(s | group, the other latent values)`` over
        the table's groups and the ``s`` code reaching it (an upper bound on any posterior
        of ``s`` given the table's other attributes); ``None`` when ``s`` is not latent."""
        ...

    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        """``Σ_x p(x) · Π masks · Π messages`` grouped by ``by`` (masks: attr -> bool per code)."""
        ...

    def weighted_batch(self, masks: BatchMasks, messages: Sequence[BatchFn], by: Sequence[str], batch: int) -> BatchFn:
        """:meth:`weighted` for a batch of queries at once (masks ``(batch, card)``;
        messages over the factor's own attributes)."""
        ...

    @property
    def rows(self) -> int:
        """Stored rows (sizes a batch so that ``batch x rows`` fits in memory)."""
        ...

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        """The factor's marginal probability over ``attrs`` at each record."""
        ...

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        """``n`` draws of the factor's attributes, conditional on the ``given`` values
        (code -1 where the given values have probability 0 in this table)."""
        ...

    def count_bounds(self, f: Formula, n: float) -> Bound:
        """The fewest and most of the ``n`` records satisfying ``f`` in any table consistent
        with this table alone (attributes it does not hold may take any value), and whether
        some consistent table reaches each end (:mod:`versapub.model.bounds`)."""
        ...

    def exact_on(self, attrs: Iterable[str]) -> bool:
        """Whether the table fixes the marginal over ``attrs`` (a subset of its attributes)."""
        ...

    def conjunction_batch(
        self, attrs: Sequence[str], queries: Sequence[Masks], n: float
    ) -> tuple[Floats, Floats, bool, str]:
        """:meth:`count_bounds` of many ``AND`` queries, each an atom on every one of
        ``attrs`` (attributes the table holds): lower and upper bounds per query, whether
        they are sharp for the table alone, and how they were computed
        (:mod:`versapub.model.batch_bounds`)."""
        ...

    def support(self) -> tuple[dict[str, Codes], Floats] | None:
        """The table as exact rows over leaves with their probabilities (an integer program
        over a collection's join needs them), or ``None`` when its rows are not leaves."""
        ...


def _row_bounds(
    f: Formula, columns: Mapping[str, Codes], p: Floats, n: float, covers: Mapping[str, object] | None = None
) -> tuple[float, float]:
    """``Σ n·p`` over rows certainly / possibly satisfying ``f`` (module :mod:`versapub.model.formula`)."""
    lo, hi = as_arrays(f.tri(resolver(columns, covers)), len(p))
    return integral(n * float(p[lo].sum()), n * float(p[hi].sum()))


def _weight(columns: Mapping[str, Codes], base: Floats, masks: Masks, messages: Sequence[SparseFn]) -> Floats:
    keep: npt.NDArray[np.bool_] | None = None
    for a, m in masks.items():
        if a in columns:
            hit = m[columns[a]]
            keep = hit if keep is None else keep & hit
    if keep is None and not messages:
        return base  # callers never write to the result
    w = base * keep if keep is not None else base.copy()
    for msg in messages:
        if msg.attrs:
            w *= msg.lookup(columns)
        else:
            w *= msg.values[0] if len(msg.values) else 0.0
    return w


def _apply(
    columns: Mapping[str, Codes], base: Floats, masks: Masks, messages: Sequence[SparseFn]
) -> tuple[Mapping[str, Codes], Floats]:
    """Rows weighted by the masks and messages; a message carrying attributes the rows
    lack (a query attribute kept from another table) is joined in, adding its columns."""
    inside = [m for m in messages if all(a in columns for a in m.attrs)]
    w = _weight(columns, base, masks, inside)
    for m in messages:
        if not all(a in columns for a in m.attrs):
            columns, w = expand(columns, w, m)
    return columns, w


#: Pairs (record, QIT row) per chunk of an Anatomy factor's record probabilities.
JOIN_CHUNK = 1 << 22
#: An ST is looked up through a dense (group, sensitive value) array up to this many cells.
DENSE_ST_CELLS = 1 << 26

#: Projections of a factor are kept for reuse only when small, and at most this many.
CACHE_MAX_ROWS = 1 << 14
CACHE_MAX_ENTRIES = 256

Projection = tuple[dict[str, Codes], Floats]


def _cached(cache: dict[tuple[str, ...], Projection], key: tuple[str, ...], value: Projection) -> Projection:
    if len(value[1]) <= CACHE_MAX_ROWS and len(cache) < CACHE_MAX_ENTRIES:
        cache[key] = value
    return value


def _cards(cards: Mapping[str, int], messages: Sequence[SparseFn]) -> dict[str, int]:
    out = dict(cards)
    for m in messages:
        out.update(zip(m.attrs, m.cards, strict=True))
    return out


def _ids(columns: Sequence[Codes], cards: Sequence[int], n: int) -> tuple[Codes, tuple[Codes, ...]]:
    """Each of ``n`` rows' id among the distinct combinations of ``columns`` (sorted) and
    those combinations (no columns: one combination, id 0)."""
    if not columns:
        return np.zeros(n, dtype=np.int64), ()
    g = group_rows(columns, cards, with_inverse=True)
    assert g.inverse is not None
    return g.inverse, tuple(k.astype(np.int64) for k in g.keys)


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
    _proj: dict[tuple[str, ...], Projection] = field(default_factory=dict, repr=False, compare=False)

    @property
    def latent(self) -> tuple[str, ...]:
        return ()

    @property
    def rows(self) -> int:
        return len(self.p)

    def projection(self, attrs: Iterable[str]) -> Projection:
        """The factor's marginal over ``attrs`` (in the factor's order) as rows; cached."""
        want = set(attrs)
        key = tuple(a for a in self.attrs if a in want)
        if key == self.attrs:
            return self.columns, self.p
        if key in self._proj:
            return self._proj[key]
        f = group_sum(key, self.columns, self.cards, self.p)
        out = (dict(zip(f.attrs, f.codes, strict=True)), f.values)
        return _cached(self._proj, key, out)

    def weighted_batch(self, masks: BatchMasks, messages: Sequence[BatchFn], by: Sequence[str], batch: int) -> BatchFn:
        need = [*by, *masks, *(a for m in messages for a in m.attrs)]
        cols, p = self.projection(need) if batch > SMALL_BATCH else (self.columns, self.p)
        gathers = mask_gathers(cols, masks) + [m.gather(cols, len(p)) for m in messages]
        return batch_group_sum(by, cols, self.cards, p, gathers, batch)

    def group_bound(self, s: str, cards: Mapping[str, int]) -> tuple[float, int] | None:
        del s, cards
        return None

    def count_bounds(self, f: Formula, n: float) -> Bound:
        lower, upper = _row_bounds(f, self.columns, self.p, n)
        return Bound(lower, upper, set(f.attributes) <= set(self.attrs) or lower == upper, method="exact table")

    def exact_on(self, attrs: Iterable[str]) -> bool:
        del attrs
        return True

    def conjunction_batch(
        self, attrs: Sequence[str], queries: Sequence[Masks], n: float
    ) -> tuple[Floats, Floats, bool, str]:
        lower, upper = rows_batch(self.columns, self.p * n, attrs, queries)
        return lower, upper, True, "exact table"

    def support(self) -> tuple[dict[str, Codes], Floats] | None:
        return self.columns, self.p

    def partition(self, a: str) -> tuple[Codes, Codes]:
        """How the table resolves attribute ``a``: every leaf its own block (leaf -> block,
        row -> block), :mod:`versapub.model.induced`."""
        return np.arange(self.cards[a], dtype=np.int64), self.columns[a]

    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        cols, w = _apply(self.columns, self.p, masks, messages)
        return group_sum(by, cols, _cards(self.cards, messages), w)

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        return self.weighted({}, [], attrs).lookup(records)

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        keys = [a for a in self.attrs if a in given]
        cards = [self.cards[a] for a in keys]
        rows, queries = _keys([self.columns[a] for a in keys], [given[a] for a in keys], cards, len(self.p), n)
        idx = sample_conditional(rows, self.p, queries, rng)
        return {a: np.where(idx >= 0, self.columns[a][idx], -1) for a in self.attrs}


@dataclass(frozen=True)
class Choices:
    """Latent groups whose records may each hold any of the listed sensitive combinations
    (a suppressed group: every combination of the declared domains; the MSA
    decomposition: the group's sets): ``free[g]`` marks them, rows ``(g, s...)`` list the
    combinations.  ``exact`` says the groups are otherwise unconstrained (bounds per group
    are then sharp)."""

    free: npt.NDArray[np.bool_]
    g: Codes
    s: dict[str, Codes]
    exact: bool


#: The joint of an Anatomy table is built for its lookups when its (q, group, s) triples are
#: at most this many times the table's rows (:meth:`AnatomyFactor._joint_for`).
JOINT_COST = 8


@dataclass(frozen=True)
class AnatomyFactor:
    """Anatomy's QIT ``(q..., g, c_qg)`` and ST ``(g, s..., c_gs)`` in latent form.

    ``s`` holds one sensitive attribute (Anatomy) or several (multi-SA publishing, whose
    suppressed group enters the ST already spread over the sensitive domains)."""

    qi: tuple[str, ...]
    s: tuple[str, ...]
    qit: dict[str, Codes]  # qi columns + GROUP_KEY
    c_qg: Floats
    st_g: Codes
    st_s: dict[str, Codes]
    c_gs: Floats
    size: Floats  # |g|
    n: float
    cards: dict[str, int]
    #: Groups publishing, instead of counts, the combinations their records may hold.
    choices: Choices | None = None
    _plain: list[PlainFactor] = field(default_factory=list, repr=False, compare=False)
    _small: list[bool] = field(default_factory=list, repr=False, compare=False)
    _stats: list[float] = field(default_factory=list, repr=False, compare=False)
    _cache: list[Floats] = field(default_factory=list, repr=False, compare=False)

    _qproj: dict[tuple[str, ...], Projection] = field(default_factory=dict, repr=False, compare=False)
    _sproj: dict[tuple[str, ...], Projection | None] = field(default_factory=dict, repr=False, compare=False)
    #: Projections the batched bounds keep (:func:`versapub.model.batch_bounds.groups_batch`).
    _sides: dict[tuple[str, tuple[str, ...]], Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def attrs(self) -> tuple[str, ...]:
        return (*self.qi, *self.s)

    @property
    def rows(self) -> int:
        return len(self.c_qg) + len(self.c_gs)

    def _qi_marginal(self, attrs: Iterable[str]) -> Projection:
        """``p(q')`` over the QI attributes in ``attrs`` (groups summed out), as rows; kept
        when small."""
        want = set(attrs)
        key = tuple(a for a in self.qi if a in want)
        if key in self._qproj:
            return self._qproj[key]
        f = group_sum(key, self.qit, self.cards, self._scaled()[0])
        return _cached(self._qproj, key, (dict(zip(f.attrs, f.codes, strict=True)), f.values))

    def _st_projection(self, attrs: Iterable[str]) -> Projection | None:
        """``p(s' | g)`` over the sensitive attributes in ``attrs`` (the ST's other
        sensitive attributes summed out), with the group id as ``GROUP_KEY``; ``None`` when
        it would not be much smaller than the ST.  Kept per attribute set: a workload's
        queries touch a few subsets of the sensitive attributes, and an MSA table's ST has a
        row per (group, combination of sensitive values) — on Adult with four sensitive
        attributes 1.2 million rows, against 30,000 for one attribute per group."""
        want = set(attrs)
        key = tuple(a for a in self.s if a in want)
        if key not in self._sproj:
            cols = {GROUP_KEY: self.st_g, **self.st_s}
            cards = {GROUP_KEY: len(self.size), **self.cards}
            f = group_sum((GROUP_KEY, *key), cols, cards, self._scaled()[1])
            small = 2 * len(f.values) <= len(self.st_g)
            self._sproj[key] = (dict(zip(f.attrs, f.codes, strict=True)), f.values) if small else None
        return self._sproj[key]

    def weighted_batch(self, masks: BatchMasks, messages: Sequence[BatchFn], by: Sequence[str], batch: int) -> BatchFn:
        joint = self._joint_for([*(a for m in messages for a in m.attrs), *by])
        if joint is not None:  # distinct (q, s) pairs, not the groups' rows, as the unit
            return joint.weighted_batch(masks, messages, by, batch)
        sides = [self._side(m.attrs) for m in messages]
        by_side = self._side(by) if by else ""
        if "mixed" in sides or by_side == "mixed":
            return self.as_plain().weighted_batch(masks, messages, by, batch)
        n_groups = len(self.size)
        q_masks = {a: m for a, m in masks.items() if a in self.qi}
        q_msgs = [m for m, sd in zip(messages, sides, strict=True) if sd == "qi"]
        s_masks = {a: m for a, m in masks.items() if a in self.s}
        s_msgs = [m for m, sd in zip(messages, sides, strict=True) if sd == "s"]
        p_qg, p_s = self._scaled()
        if not (s_masks or s_msgs) and by_side != "s":
            # Σ_s p(s|g) = 1 for every group: the QI marginal answers (groups summed out);
            # a few queries read the QIT's rows directly rather than project it first.
            need = [*by, *q_masks, *(a for m in q_msgs for a in m.attrs)]
            cols, p = self._qi_marginal(need) if batch > SMALL_BATCH else (self.qit, p_qg)
            gq = mask_gathers(cols, q_masks) + [m.gather(cols, len(p)) for m in q_msgs]
            return batch_group_sum(by, cols, self.cards, p, gq, batch)
        g_q, g_s, st_s = self.qit[GROUP_KEY], self.st_g, self.st_s
        if len(self.s) > 1:  # the ST summed over the sensitive attributes nothing here asks for
            need = [*s_masks, *(a for m in s_msgs for a in m.attrs), *(by if by_side == "s" else ())]
            proj = self._st_projection(need)
            if proj is not None:
                st_s, p_s = proj
                g_s = st_s[GROUP_KEY]
        gq = mask_gathers(self.qit, q_masks) + [m.gather(self.qit, len(p_qg)) for m in q_msgs]
        gs = mask_gathers(st_s, s_masks) + [m.gather(st_s, len(p_s)) for m in s_msgs]
        if by_side == "qi":
            b_g = batch_reduce(gs, p_s, g_s, n_groups, batch)
            return batch_group_sum(by, self.qit, self.cards, p_qg, [*gq, (g_q, b_g)], batch)
        # Without evidence on the QI side its per-group sum is known: Σ_q p(q,g) = |g|/n.
        a_g = batch_reduce(gq, p_qg, g_q, n_groups, batch) if gq else (self.size / self.n)[None, :]
        return batch_group_sum(by, st_s, self.cards, p_s, [*gs, (g_s, a_g)], batch)

    @property
    def latent(self) -> tuple[str, ...]:
        return self.s

    def group_bound(self, s: str, cards: Mapping[str, int]) -> tuple[float, int] | None:
        if s not in self.s:
            return None
        # Lines: a group and the values of the table's other sensitive attributes.
        line = {GROUP_KEY: self.st_g, **{a: self.st_s[a] for a in self.s if a != s}}
        line_cards = {GROUP_KEY: len(self.size), **cards}
        cell = group_sum((*line, s), {**line, s: self.st_s[s]}, line_cards, self.c_gs)
        cols = dict(zip(cell.attrs, cell.codes, strict=True))
        total = group_sum(tuple(line), cols, line_cards, cell.values).lookup(cols)
        ratio = cell.values / total
        i = int(np.argmax(ratio))
        return float(ratio[i]), int(cols[s][i])

    def count_bounds(self, f: Formula, n: float) -> Bound:
        """Per group, a transportation problem between its QI and sensitive rows
        (:mod:`versapub.model.group_bounds`)."""
        del n  # the groups hold their records' counts
        lower, upper, sharp = group_bounds(f, self._groups())
        lower, upper = integral(lower, upper)
        sharp = sharp and self._exact_groups()
        return Bound(
            lower, upper, (sharp and set(f.attributes) <= set(self.attrs)) or lower == upper, method="per group"
        )

    def exact_on(self, attrs: Iterable[str]) -> bool:
        want = set(attrs)
        return want <= set(self.qi) or want <= set(self.s)

    def _groups(self) -> Groups:
        """The groups as bounds read them: counts of the sensitive rows, except for free
        groups, whose listed combinations replace them; groups of the same content merged
        (:mod:`versapub.model.group_merge`; kept)."""
        if ("groups", ()) in self._sides:
            return self._sides["groups", ()]
        free = np.zeros(len(self.size), dtype=bool) if self.choices is None else self.choices.free
        keep = ~free[self.st_g]
        g_s, s_cols, c_s = self.st_g[keep], {a: c[keep] for a, c in self.st_s.items()}, self.c_gs[keep]
        if self.choices is not None:
            ch = self.choices
            g_s = np.concatenate([g_s, ch.g])
            s_cols = {a: np.concatenate([s_cols[a], ch.s[a]]) for a in self.s}
            c_s = np.concatenate([c_s, np.ones(len(ch.g))])
        qi = {a: self.qit[a] for a in self.qi}
        gr = merged(Groups(qi, self.qit[GROUP_KEY], self.c_qg, s_cols, g_s, c_s, len(self.size), free))
        self._sides["groups", ()] = gr
        return gr

    def _exact_groups(self) -> bool:
        return self.choices is None or self.choices.exact or not self.choices.free.any()

    def conjunction_batch(
        self, attrs: Sequence[str], queries: Sequence[Masks], n: float
    ) -> tuple[Floats, Floats, bool, str]:
        del n
        lower, upper = groups_batch(self._groups(), attrs, queries, self._sides)
        return lower, upper, self._exact_groups(), "per group"

    def support(self) -> tuple[dict[str, Codes], Floats] | None:
        return None

    def _pure(self, attrs: Sequence[str]) -> str:
        a = set(attrs)
        if not a & set(self.s):
            return "qi"
        return "s" if a <= set(self.s) else "mixed"

    def as_plain(self) -> PlainFactor:
        """The joint over QI and S, ``Σ_g c(q,g)c(g,s)/(n|g|)`` (computed once, on demand),
        as the sparse product of the QIT's (q x group) and the ST's (group x s) matrices:
        memory in the distinct (q, s) pairs, never in the (q, group, s) triples.  Rows come
        out in the lexicographic order of (q, s), as a group-by would give them."""
        if not self._plain:
            self._plain.append(self._joint())
        return self._plain[0]

    def _joint(self) -> PlainFactor:
        """:meth:`as_plain`'s joint, computed (not kept)."""
        n_groups = len(self.size)
        q_inv, q_keys = _ids([self.qit[a] for a in self.qi], [self.cards[a] for a in self.qi], len(self.c_qg))
        s_inv, s_keys = _ids([self.st_s[a] for a in self.s], [self.cards[a] for a in self.s], len(self.c_gs))
        import scipy.sparse as sp  # on first use: start-up of read-side commands

        left = sp.csr_matrix(
            (self.c_qg / self.n, (q_inv, self.qit[GROUP_KEY])), shape=(len(q_keys[0]) if q_keys else 1, n_groups)
        )
        right = sp.csr_matrix((self.c_gs / self.size[self.st_g], (self.st_g, s_inv)), shape=(n_groups, len(s_keys[0])))
        joint = (left @ right).tocsr()
        joint.sum_duplicates()
        joint.sort_indices()
        rows = np.repeat(np.arange(joint.shape[0]), np.diff(joint.indptr))
        keep = joint.data != 0
        cols = {a: q_keys[i][rows[keep]] for i, a in enumerate(self.qi)}
        cols.update({a: s_keys[i][joint.indices[keep]] for i, a in enumerate(self.s)})
        p = np.asarray(joint.data[keep], dtype=np.float64)
        return PlainFactor(self.attrs, cols, p, self.cards)

    def _joint_for(self, attrs: Sequence[str]) -> PlainFactor | None:
        """The joint (:meth:`as_plain`) when it answers for these attributes (messages and
        group-by, all the table's own) and is much smaller than the QIT and ST — many records
        sharing few (q, s) pairs: the 1.4M-record personnel file's 707,296 groups of two hold
        about 5,000 pairs (issue 67); the same sums, reordered. Decided once per table."""
        if not set(attrs) <= set(self.attrs) or self.choices is not None:
            return None
        if not self._small:  # threads may decide at once: each the same, none clears what another reads
            n_groups = len(self.size)
            pairs = int(
                np.bincount(self.qit[GROUP_KEY], minlength=n_groups) @ np.bincount(self.st_g, minlength=n_groups)
            )
            joint = (self._plain[0] if self._plain else self._joint()) if pairs <= JOINT_COST * self.rows else None
            small = joint is not None and self._joint_small(joint)
            if small and not self._plain:
                self._plain.append(cast(PlainFactor, joint))
            self._small.append(small)
        return self.as_plain() if self._small[0] else None

    def _joint_small(self, joint: PlainFactor) -> bool:
        """Whether the joint's rows are at most half the table's."""
        return 2 * len(joint.p) <= self.rows

    def _side(self, attrs: Sequence[str]) -> str:
        """``qi``, ``s`` or ``mixed`` by the attributes of this table among ``attrs`` (``qi``
        when there are none: such a message multiplies whole groups, either side will do)."""
        inside = [a for a in attrs if a in self.qi or a in self.s]
        return self._pure(inside) if inside else "qi"

    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        joint = self._joint_for([*(a for m in messages for a in m.attrs), *by])
        if joint is not None:
            return joint.weighted(masks, messages, by)
        sides = [self._side(m.attrs) for m in messages]
        carried = {a: sd for m, sd in zip(messages, sides, strict=True) for a in m.attrs if a not in self.attrs}
        by_sides = {self._side((a,)) if a in self.attrs else carried[a] for a in by}
        if "mixed" in sides or len(by_sides) > 1:
            return self.as_plain().weighted(masks, messages, by)
        by_side = next(iter(by_sides), "")
        n_groups = len(self.size)
        q_masks = {a: m for a, m in masks.items() if a in self.qi}
        s_masks = {a: m for a, m in masks.items() if a in self.s}
        q_msgs = [m for m, sd in zip(messages, sides, strict=True) if sd == "qi"]
        s_msgs = [m for m, sd in zip(messages, sides, strict=True) if sd == "s"]
        p_qg, p_s_given_g = self._scaled()
        q_cols, wq = _apply(self.qit, p_qg, q_masks, q_msgs)
        s_evidence = bool(s_masks or s_msgs)
        if not by and not s_evidence:  # Σ_s p(s|g) = 1 for every group
            return SparseFn.scalar(float(wq.sum()))
        g = q_cols[GROUP_KEY]
        # Without evidence on a side, its per-group sum is known: Σ_q p(q,g) = |g|/n, Σ_s p(s|g) = 1.
        a_g = np.bincount(g, weights=wq, minlength=n_groups) if q_masks or q_msgs else self.size / self.n
        s_cols: Mapping[str, Codes] = {}
        ws = np.empty(0, dtype=np.float64)
        if s_evidence or by_side == "s":
            s_cols, ws = _apply({**self.st_s, GROUP_KEY: self.st_g}, p_s_given_g, s_masks, s_msgs)
            b_g = np.bincount(s_cols[GROUP_KEY], weights=ws, minlength=n_groups).astype(np.float64)
        else:
            b_g = np.ones(n_groups, dtype=np.float64)
        if not by:
            return SparseFn.scalar(float(a_g @ b_g))
        cards = _cards(self.cards, messages)
        if by_side == "qi":
            return group_sum(by, q_cols, cards, wq * b_g[g])
        return group_sum(by, s_cols, cards, ws * a_g[s_cols[GROUP_KEY]])

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        kind = self._pure(attrs)
        if kind != "mixed":
            return self.weighted({}, [], attrs).lookup(records)
        if set(attrs) != set(self.attrs):
            return self.as_plain().prob(attrs, records)
        # p(q, s) = Σ_g c(q,g) c(g,s) / (n |g|): expand the table to its (q, s) pairs when
        # that is small next to the records, else join the records with QIT and ST.
        n_groups = len(self.size)
        expand_cost = int(
            np.bincount(self.qit[GROUP_KEY], minlength=n_groups) @ np.bincount(self.st_g, minlength=n_groups)
        )
        if expand_cost <= len(records[self.s[0]]) * self._rows_per_q():
            return self.as_plain().prob(attrs, records)
        return self._latent_prob(records)

    def _scaled(self) -> tuple[Floats, Floats]:
        """``p(q, g) = c(q,g)/n`` per QIT row and ``p(s | g) = c(g,s)/|g|`` per ST row (cached)."""
        if not self._cache:
            self._cache.append(self.c_qg / self.n)
            self._cache.append(self.c_gs / self.size[self.st_g])
        return self._cache[0], self._cache[1]

    def _rows_per_q(self) -> float:
        """Average number of QIT rows (groups) per distinct q (computed once)."""
        if not self._stats:
            distinct = (
                len(group_rows([self.qit[a] for a in self.qi], [self.cards[a] for a in self.qi]).counts)
                if self.qi
                else 1
            )
            self._stats.append(len(self.c_qg) / max(distinct, 1))
        return self._stats[0]

    def _latent_prob(self, records: Mapping[str, Codes]) -> Floats:
        """``Σ_g c(q,g) c(g,s) / (n |g|)`` per record: the records joined with the QIT rows
        of their q, each pair looked up in the ST at (its group, the record's s); in chunks
        of at most ``JOIN_CHUNK`` pairs (a generalized q can sit in thousands of groups)."""
        n_rec = len(records[self.s[0]])
        cards = [self.cards[a] for a in self.qi]
        rec_q, qit_q = _keys(
            [records[a] for a in self.qi], [self.qit[a] for a in self.qi], cards, n_rec, len(self.c_qg)
        )
        order = np.argsort(qit_q, kind="stable")
        sorted_q = qit_q[order]
        start = np.searchsorted(sorted_q, rec_q, side="left")
        pairs = np.searchsorted(sorted_q, rec_q, side="right") - start
        p_s = self._scaled()[1]
        n_groups = len(self.size)
        n_ids = int(max(rec_q.max(initial=-1), qit_q.max(initial=-1))) + 1
        cards_s = [self.cards[a] for a in self.s]
        if bitsets.fits([n_ids, *cards_s], n_groups) and bitsets.pays(n_rec, n_groups, int(pairs.sum())):
            return self._latent_prob_bitsets(records, rec_q, qit_q, n_ids)
        dense = len(self.s) == 1 and n_groups * self.cards[self.s[0]] <= DENSE_ST_CELLS
        if dense:  # the ST as a dense (group, s) table
            card_s = self.cards[self.s[0]]
            lut = np.zeros(n_groups * card_s)
            lut[self.st_g * card_s + self.st_s[self.s[0]]] = p_s
        out = np.zeros(n_rec, dtype=np.float64)
        bounds = np.searchsorted(np.cumsum(pairs), np.arange(JOIN_CHUNK, int(pairs.sum()), JOIN_CHUNK))
        for lo, hi in zip([0, *bounds.tolist()], [*bounds.tolist(), n_rec], strict=True):
            k = pairs[lo:hi]
            ri = np.repeat(np.arange(lo, hi), k)
            offset = np.arange(len(ri)) - np.repeat(np.cumsum(k) - k, k)
            qi = order[np.repeat(start[lo:hi], k) + offset]
            g = self.qit[GROUP_KEY][qi]
            if dense:
                w = self.c_qg[qi] * lut[g * card_s + records[self.s[0]][ri]]
            else:
                st_keys = [self.st_g, *(self.st_s[a] for a in self.s)]
                st_cards = [n_groups, *(self.cards[a] for a in self.s)]
                row = match_rows(st_keys, [g, *(records[a][ri] for a in self.s)], st_cards)
                w = np.where(row >= 0, self.c_qg[qi] * p_s[np.maximum(row, 0)], 0.0)
            out[lo:hi] += np.bincount(ri - lo, weights=w, minlength=hi - lo)
        return out / self.n

    def _latent_prob_bitsets(self, records: Mapping[str, Codes], rec_q: Codes, qit_q: Codes, n_ids: int) -> Floats:
        """:meth:`_latent_prob` over the (record, group) pairs whose group holds the
        record's q in the QIT and each of its sensitive values in the ST
        (:mod:`versapub.data.bitsets`); each pair then looked up exactly (QIT row, ST row)."""
        n_groups = len(self.size)
        g_qit = self.qit[GROUP_KEY]
        sets = [bitsets.bitset(qit_q, g_qit, n_ids, n_groups)]
        sets += [bitsets.bitset(self.st_s[a], self.st_g, self.cards[a], n_groups) for a in self.s]
        rec, g = bitsets.matching_pairs(sets, [rec_q, *(records[a] for a in self.s)])
        qit_row = match_rows([qit_q, g_qit], [rec_q[rec], g], [n_ids, n_groups])
        st_keys = [self.st_g, *(self.st_s[a] for a in self.s)]
        st_cards = [n_groups, *(self.cards[a] for a in self.s)]
        st_row = match_rows(st_keys, [g, *(records[a][rec] for a in self.s)], st_cards)
        ok = (st_row >= 0) & (qit_row >= 0)
        w = np.where(ok, self.c_qg[np.maximum(qit_row, 0)] * self._scaled()[1][np.maximum(st_row, 0)], 0.0)
        return np.bincount(rec, weights=w, minlength=len(rec_q)) / self.n

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        keys = [a for a in self.attrs if a in given]
        kind = self._pure(keys) if keys else "qi"
        if kind == "mixed":
            return self.as_plain().sample(n, given, rng)
        g_all = self.qit[GROUP_KEY]
        if kind == "qi":  # (q, g) | q_given, then s | g
            cards = [self.cards[a] for a in keys]
            rows, queries = _keys([self.qit[a] for a in keys], [given[a] for a in keys], cards, len(self.c_qg), n)
            qrow = sample_conditional(rows, self.c_qg, queries, rng)
            g = np.where(qrow >= 0, g_all[qrow], -1)
            srow = sample_conditional(self.st_g, self.c_gs, g, rng)
        else:  # (g, s) | s_given, then q | g
            cards = [self.cards[a] for a in keys]
            rows, queries = _keys([self.st_s[a] for a in keys], [given[a] for a in keys], cards, len(self.c_gs), n)
            srow = sample_conditional(rows, self.c_gs, queries, rng)
            g = np.where(srow >= 0, self.st_g[srow], -1)
            qrow = sample_conditional(g_all, self.c_qg, g, rng)
        ok = (qrow >= 0) & (srow >= 0)
        out = {a: np.where(ok, self.qit[a][qrow], -1) for a in self.qi}
        out.update({a: np.where(ok, self.st_s[a][srow], -1) for a in self.s})
        return out
