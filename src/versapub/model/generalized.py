"""The distribution a generalized table contributes (Kifer & Gehrke §4; the principle of
maximum entropy for generalized values, ``../shared/papers/READING-NOTES.md``).

Each published row ``r`` (a count ``c_r`` over generalized values) is a component of a
mixture: its records' leaves are spread uniformly and independently over the leaves each
value covers, ``p(x) = Σ_r (c_r / n) Π_a [x_a ∈ L_a(r)] / |L_a(r)|``.  The table is kept in
this form; an operation expands rows into leaves only over the attributes it must hold
jointly (a message's separator, a marginal's attributes), and reduces every other
attribute to its mass per row (a condition on ``a`` keeps ``|mask ∩ L_a(r)| / |L_a(r)|``).

Codes: an attribute's leaves have codes ``0 .. card-1`` (the model's domain); a published
label has code ``card + j`` and covers the leaves ``cover[a][j]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from versapub.data import bitsets
from versapub.model.batch import BatchFn, BatchMasks, Gather, batch_group_sum, mask_gathers
from versapub.model.batch_bounds import rows_batch
from versapub.model.factors import _apply, _cards, _keys, _row_bounds
from versapub.model.formula import Formula
from versapub.model.interval import Bound
from versapub.model.sparse import JOIN_MAX_ROWS, Codes, Floats, JoinTooLarge, SparseFn, group_sum, sample_conditional

Masks = Mapping[str, npt.NDArray[np.bool_]]
#: Record x row pairs per chunk when computing record probabilities (about 40 MB of
#: scratch; issue 50: 1 << 22 held 0.2 GB at once).
PAIR_CHUNK = 1 << 20
#: Leaf rows of a one-attribute expansion above which the paths that read labels as runs of
#: positions are taken instead (the same sums without the expansion's memory: a 51,920-record
#: Mondrian release's birth dates expand to 6.5 million rows; issue 50).
EXPAND_AT_MOST = 1 << 21
#: Leaf rows of expansions kept for reuse, all together (about 50 MB).
EXPANSIONS_HELD = 1 << 21


@dataclass(frozen=True)
class Cover:
    """The leaves of every label of one attribute: label ``j`` covers
    ``leaves[start[j]:end[j]]`` (runs may overlap: a generalized table stores each label as
    a run of its attribute's leaf order, ``leaves``)."""

    start: Codes
    end: Codes
    leaves: Codes

    @property
    def sizes(self) -> Codes:
        return self.end - self.start

    #: Where each leaf code sits in ``leaves`` when ``leaves`` is an order of every leaf.
    position: Codes | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        m = len(self.leaves)
        pos = None
        if len(np.unique(self.leaves)) == m and (not m or int(self.leaves.max()) < m):
            pos = np.empty(m, dtype=np.int64)
            pos[self.leaves] = np.arange(m, dtype=np.int64)
        object.__setattr__(self, "position", pos)

    def table(self, card: int) -> tuple[Codes, Codes]:
        """Per extended code (leaves, then labels): how many leaves it covers, and where its
        leaves start in ``self.leaves`` (a leaf is listed by itself after the labels')."""
        size = np.r_[np.ones(card, dtype=np.int64), self.sizes]
        return size, np.r_[len(self.leaves) + np.arange(card, dtype=np.int64), self.start]


def cover_from_sets(sets: Sequence[Codes]) -> Cover:
    """A :class:`Cover` from each label's leaf codes."""
    sizes = np.array([len(s) for s in sets], dtype=np.int64)
    leaves = np.concatenate([np.asarray(s, dtype=np.int64) for s in sets]) if sets else np.zeros(0, np.int64)
    ends = np.cumsum(sizes).astype(np.int64)
    return Cover(ends - sizes, ends, leaves)


@dataclass(frozen=True)
class GeneralizedFactor:
    """A generalized count table as a mixture of uniform components (module docstring)."""

    attrs: tuple[str, ...]
    columns: dict[str, Codes]
    p: Floats
    cards: dict[str, int]
    covers: dict[str, Cover]
    _expanded: dict[tuple[str, ...], tuple[dict[str, Codes], Codes, Floats]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def latent(self) -> tuple[str, ...]:
        return ()

    @property
    def rows(self) -> int:
        return len(self.p)

    def group_bound(self, s: str, cards: Mapping[str, int]) -> tuple[float, int] | None:
        del s, cards
        return None

    def count_bounds(self, f: Formula, n: float) -> Bound:
        """Records of a row count toward the lower bound when every leaf combination its
        values cover satisfies ``f``, toward the upper when some does: classes fully inside
        or overlapping the query (sharp for a read-once formula, :mod:`versapub.model.formula`)."""
        lower, upper = _row_bounds(f, self.columns, self.p, n, self.covers)
        sharp = f.read_once and set(f.attributes) <= set(self.attrs)
        return Bound(lower, upper, sharp or lower == upper, method="classes inside or overlapping")

    def exact_on(self, attrs: Iterable[str]) -> bool:
        return all(bool((self.columns[a] < self.cards[a]).all()) for a in attrs)

    def conjunction_batch(
        self, attrs: Sequence[str], queries: Sequence[Masks], n: float
    ) -> tuple[Floats, Floats, bool, str]:
        lower, upper = rows_batch(self.columns, self.p * n, attrs, queries, self.covers)
        return lower, upper, True, "classes inside or overlapping"  # one atom per attribute: read-once

    def support(self) -> tuple[dict[str, Codes], Floats] | None:
        return (self.columns, self.p) if self.exact_on(self.attrs) else None

    def partition(self, a: str) -> tuple[Codes, Codes] | None:
        """When the table's values of ``a`` cover disjoint sets of leaves (a full-domain
        generalization, one level of a hierarchy): each leaf's block (a leaf no value
        covers is its own block) and each row's block; ``None`` when two values overlap
        (Mondrian's ranges), :mod:`versapub.model.induced`."""
        card = self.cards[a]
        codes = self.columns[a]
        used = np.unique(codes)
        cov = self.covers.get(a)
        block = np.full(card, -1, dtype=np.int64)
        leaf = used[used < card]
        block[leaf] = leaf
        labels = used[used >= card] - card
        if len(labels):
            assert cov is not None
            sizes = cov.sizes[labels]
            offset = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            pos = np.repeat(cov.start[labels], sizes) + offset
            leaves = cov.leaves[pos]
            hits = np.bincount(leaves, minlength=card)
            hits[leaf] += 1
            if (hits > 1).any():
                return None
            block[leaves] = np.repeat(card + labels, sizes)
        free = block < 0
        block[free] = np.flatnonzero(free)
        rows = np.where(codes < card, block[np.minimum(codes, card - 1)], 0)
        if len(labels):
            lab = codes >= card
            rows[lab] = block[cov.leaves[cov.start[codes[lab] - card]]] if cov is not None else 0
        _, canon = np.unique(block, return_inverse=True)
        canon = canon.astype(np.int64).ravel()
        lookup = np.zeros(int(block.max()) + 1, dtype=np.int64)
        lookup[block] = canon
        return canon, lookup[rows]

    # -- the leaves a row covers ------------------------------------------------------
    def _tables(self, a: str) -> tuple[Codes, Codes, Codes]:
        """Per extended code of ``a``: size, start into ``leaves``; and ``leaves`` itself."""
        card = self.cards[a]
        cov = self.covers.get(a, Cover(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)))
        size, start = cov.table(card)
        return size, start, np.r_[cov.leaves, np.arange(card, dtype=np.int64)]

    def expansion(self, attrs: Sequence[str]) -> tuple[dict[str, Codes], Codes, Floats]:
        """Every row repeated once per combination of leaves over ``attrs``: the leaf
        columns, the row each came from, and ``1 / Π sizes`` (cached per attribute set)."""
        key = tuple(a for a in self.attrs if a in set(attrs))
        if key in self._expanded:
            return self._expanded[key]
        row = np.arange(len(self.p), dtype=np.int64)
        inv = np.ones(len(self.p), dtype=np.float64)
        cols: dict[str, Codes] = {}
        for a in key:
            size, start, leaves = self._tables(a)
            code = self.columns[a][row]
            k = size[code]
            total = int(k.sum())
            if total > JOIN_MAX_ROWS:
                raise JoinTooLarge(total)
            rep = np.repeat(np.arange(len(row), dtype=np.int64), k)
            offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(k) - k, k)
            cols = {b: c[rep] for b, c in cols.items()}
            cols[a] = leaves[start[code][rep] + offset]
            row, inv = row[rep], inv[rep] / k[rep]
        out = (cols, row, inv)
        held = sum(len(r) for _, r, _ in self._expanded.values())
        if held + len(row) <= EXPANSIONS_HELD:  # a budget of rows, not of entries (issue 50)
            self._expanded[key] = out
        return out

    def mass(self, a: str, mask: npt.NDArray[np.floating] | npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
        """Per extended code of ``a`` (and per query when ``mask`` is ``(batch, card)``):
        the share of its leaves the mask keeps."""
        m = np.asarray(mask, dtype=np.float64)
        cov = self.covers.get(a)
        if cov is None or not len(cov.sizes):
            return m
        cum = np.concatenate([np.zeros((*m.shape[:-1], 1)), np.cumsum(m[..., cov.leaves], axis=-1)], axis=-1)
        share = (cum[..., cov.end] - cum[..., cov.start]) / np.maximum(cov.sizes, 1)
        return np.concatenate([m, share], axis=-1)

    def _joint(self, masks: Mapping[str, npt.NDArray[np.generic]], need: Iterable[str]) -> tuple[set[str], list[str]]:
        keep = set(need) & set(self.attrs)
        return keep, [a for a in masks if a in self.attrs and a not in keep]

    # -- the Factor protocol ----------------------------------------------------------
    def weighted(self, masks: Masks, messages: Sequence[SparseFn], by: Sequence[str]) -> SparseFn:
        joint, reduced = self._joint(masks, [*by, *(a for m in messages for a in m.attrs)])
        if (
            len(joint) == 1
            and self._expanded_size(next(iter(joint))) > min(EXPAND_AT_MOST, JOIN_MAX_ROWS)
            and self._runs(next(iter(joint)))
        ):
            cols, w = self._leaf_mass(next(iter(joint)), masks, reduced)  # one attribute: no expansion
        else:
            cols, row, inv = self.expansion(sorted(joint))
            w = self.p[row] * inv
            for a in reduced:
                w = w * self.mass(a, masks[a])[self.columns[a][row]]
        out, w = _apply(cols, w, {a: m for a, m in masks.items() if a in joint}, messages)
        return group_sum(by, out, _cards(self.cards, messages), w)

    def weighted_batch(self, masks: BatchMasks, messages: Sequence[BatchFn], by: Sequence[str], batch: int) -> BatchFn:
        joint, reduced = self._joint(masks, [*by, *(a for m in messages for a in m.attrs)])
        cols, row, inv = self.expansion(sorted(joint))
        gathers: list[Gather] = [(self.columns[a][row], self.mass(a, masks[a])) for a in reduced]
        gathers += mask_gathers(cols, {a: m for a, m in masks.items() if a in joint})
        gathers += [m.gather(cols, len(row)) for m in messages]
        return batch_group_sum(by, cols, self.cards, self.p[row] * inv, gathers, batch)

    def prob(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        """``p`` over ``attrs`` at each record: the records are joined with the rows that
        cover them on the most selective attribute, in chunks, then filtered on the others."""
        attrs = [a for a in self.attrs if a in set(attrs)]
        n = len(next(iter(records.values()))) if records else 0
        if not attrs:
            return np.full(n, float(self.p.sum()))
        limit = min(EXPAND_AT_MOST, JOIN_MAX_ROWS)
        if any(self._expanded_size(a) > limit for a in attrs) and all(self._runs(a) for a in attrs):
            return self._prob_runs(attrs, records)
        index = {a: self._inverted(a) for a in attrs}
        pairs = {a: int(np.diff(index[a][0])[records[a]].sum()) for a in attrs}
        drive = min(attrs, key=lambda a: pairs[a])
        if bitsets.fits([self.cards[a] for a in attrs], len(self.p)) and bitsets.pays(n, len(self.p), pairs[drive]):
            return self._prob_bitsets(attrs, records)
        start, rows = index[drive]
        out = np.zeros(n, dtype=np.float64)
        k = np.diff(start)[records[drive]]
        done = np.r_[0, np.cumsum(k)]  # pairs before each record
        lo = 0
        while lo < n:  # chunks of about PAIR_CHUNK pairs (never a loop over records)
            hi = max(int(np.searchsorted(done, done[lo] + PAIR_CHUNK, side="right")) - 1, lo + 1)
            kk = k[lo:hi]
            rec = np.repeat(np.arange(hi - lo, dtype=np.int64), kk)
            offset = np.arange(len(rec), dtype=np.int64) - np.repeat(np.cumsum(kk) - kk, kk)
            row = rows[start[records[drive][lo:hi][rec]] + offset]
            w = self.p[row] / self._size(drive, row)
            for a in attrs:
                if a != drive:
                    w = w * self._covers(a, row, records[a][lo:hi][rec]) / self._size(a, row)
            out[lo:hi] = np.bincount(rec, weights=w, minlength=hi - lo)
            lo = hi
        return out

    def _expanded_size(self, a: str) -> int:
        """How many (row, leaf) pairs expanding the rows over ``a`` alone would make."""
        size, _, _ = self._tables(a)
        return int(size[self.columns[a]].sum())

    def _runs(self, a: str) -> bool:
        """Whether every label of ``a`` covers a run of one order of its leaves (a position
        test decides coverage: ranges, sets cut in an order, hierarchy nodes)."""
        cov = self.covers.get(a)
        return cov is None or not len(cov.sizes) or cov.position is not None

    def _span(self, a: str) -> tuple[Codes, Codes, Codes]:
        """Per row, the positions ``[lo, hi)`` its value of ``a`` covers in the attribute's
        leaf order, and each leaf's position (a leaf covers its own position)."""
        card = self.cards[a]
        cov = self.covers.get(a)
        if cov is None or not len(cov.sizes) or cov.position is None:
            pos = np.arange(card, dtype=np.int64)
            code = self.columns[a]
            return code, code + 1, pos
        pos = cov.position
        code = self.columns[a]
        leaf = code < card
        lo = np.where(leaf, pos[np.minimum(code, card - 1)], cov.start[np.maximum(code - card, 0)])
        hi = np.where(leaf, lo + 1, cov.end[np.maximum(code - card, 0)])
        return lo.astype(np.int64), hi.astype(np.int64), pos

    def _leaf_mass(self, a: str, masks: Masks, reduced: Sequence[str]) -> tuple[dict[str, Codes], Floats]:
        """Each leaf of ``a`` with the mass the rows spread on it (every row uniformly over its
        run, weighted by the other attributes' masks), by a difference array over the leaf
        order: no row is expanded into its leaves."""
        lo, hi, pos = self._span(a)
        w = self.p.astype(np.float64)
        for b in reduced:
            w = w * self.mass(b, masks[b])[self.columns[b]]
        share = w / (hi - lo)
        diff = np.bincount(lo, weights=share, minlength=len(pos) + 1) - np.bincount(
            hi, weights=share, minlength=len(pos) + 1
        )
        density = np.cumsum(diff)[: len(pos)]
        leaves = np.arange(self.cards[a], dtype=np.int64)
        return {a: leaves}, density[pos[leaves]]

    def _prob_runs(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        """:meth:`prob` without expanding rows into leaves (a continuous attribute — latitude
        with six decimals — makes that expansion tens of millions of pairs, issue 44): the
        records sorted by their position on the drive attribute, each row meets the block of
        records inside its run; (row, record) pairs are made a chunk of rows at a time and
        tested on the other attributes by position.  Every label a run of one order."""
        n = len(records[attrs[0]])
        spans = {a: self._span(a) for a in attrs}
        at = {a: spans[a][2][records[a]] for a in attrs}  # each record's position per attribute
        order = {a: np.argsort(at[a], kind="stable") for a in attrs}
        sorted_at = {a: at[a][order[a]] for a in attrs}
        hits = {
            a: np.searchsorted(sorted_at[a], spans[a][1]) - np.searchsorted(sorted_at[a], spans[a][0]) for a in attrs
        }
        drive = min(attrs, key=lambda a: int(hits[a].sum()))
        lo_all = np.searchsorted(sorted_at[drive], spans[drive][0])
        k_all = hits[drive]
        weight = self.p.astype(np.float64)
        for a in attrs:
            weight = weight / (spans[a][1] - spans[a][0])
        out = np.zeros(n, dtype=np.float64)
        done = np.r_[0, np.cumsum(k_all)]
        r0 = 0
        rows = len(self.p)
        while r0 < rows:  # chunks of about PAIR_CHUNK pairs (never a loop over records)
            r1 = max(int(np.searchsorted(done, done[r0] + PAIR_CHUNK, side="right")) - 1, r0 + 1)
            k = k_all[r0:r1]
            row = np.repeat(np.arange(r0, r1, dtype=np.int64), k)
            offset = np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(k) - k, k)
            rec = order[drive][lo_all[row] + offset]
            keep = np.ones(len(row), dtype=bool)
            for a in attrs:
                if a != drive:
                    x = at[a][rec]
                    keep &= (spans[a][0][row] <= x) & (x < spans[a][1][row])
            out += np.bincount(rec[keep], weights=weight[row[keep]], minlength=n)
            r0 = r1
        return out

    def _prob_bitsets(self, attrs: Sequence[str], records: Mapping[str, Codes]) -> Floats:
        """:meth:`prob` by intersecting, per record, the sets of rows that cover each of its
        values (:mod:`versapub.data.bitsets`): the faster path when rows cover many
        leaves, as Mondrian's ranges and hierarchy levels do."""
        n = len(records[attrs[0]])
        rows = len(self.p)
        sets = []
        for a in attrs:
            cols, row, _ = self.expansion([a])
            sets.append(bitsets.bitset(cols[a], row, self.cards[a], rows))
        weight = self.p.astype(np.float64)
        for a in attrs:
            weight = weight / self._size(a, np.arange(rows, dtype=np.int64))
        rec, row = bitsets.matching_pairs(sets, [records[a] for a in attrs])
        return np.bincount(rec, weights=weight[row], minlength=n).astype(np.float64)

    def _size(self, a: str, row: Codes) -> Floats:
        size, _, _ = self._tables(a)
        return size[self.columns[a][row]].astype(np.float64)

    def _inverted(self, a: str) -> tuple[Codes, Codes]:
        """Leaf -> the rows covering it (CSR over the attribute's leaf codes)."""
        cols, row, _ = self.expansion([a])
        order = np.argsort(cols[a], kind="stable")
        start = np.r_[0, np.cumsum(np.bincount(cols[a], minlength=self.cards[a]))].astype(np.int64)
        return start, row[order]

    def _covers(self, a: str, row: Codes, leaf: Codes) -> Floats:
        """1 where row ``row`` covers ``leaf`` on ``a``, else 0."""
        code = self.columns[a][row]
        card = self.cards[a]
        hit = code == leaf
        label = code >= card
        if label.any():
            cov = self.covers[a]
            j = code[label] - card
            pos = cov.position
            if pos is not None:  # runs of one order: a position test
                at = pos[leaf[label]]
                hit[label] = (cov.start[j] <= at) & (at < cov.end[j])
            else:
                rep = np.repeat(np.arange(len(cov.sizes), dtype=np.int64), cov.sizes)
                runs = [np.arange(s, e, dtype=np.int64) for s, e in zip(cov.start, cov.end, strict=True)]
                inside = np.concatenate(runs) if runs else np.zeros(0, dtype=np.int64)
                keys = np.sort(rep * card + cov.leaves[inside.astype(np.int64)])
                q = j * card + leaf[label]
                at = np.searchsorted(keys, q)
                hit[label] = (at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == q)
        return hit.astype(np.float64)

    def sample(self, n: int, given: Mapping[str, Codes], rng: np.random.Generator) -> dict[str, Codes]:
        """Rows drawn with probability ``p`` times how well they cover the given values, then
        every other attribute's leaf uniformly among the row's leaves."""
        keys = [a for a in self.attrs if a in given]
        if keys:
            cols, row, inv = self.expansion(keys)
            rkeys, qkeys = _keys(
                [cols[a] for a in keys], [given[a] for a in keys], [self.cards[a] for a in keys], len(row), n
            )
            pick = sample_conditional(rkeys, self.p[row] * inv, qkeys, rng)
            chosen = np.where(pick >= 0, row[np.maximum(pick, 0)], -1)
        else:
            total = self.p.sum()
            chosen = rng.choice(len(self.p), size=n, p=self.p / total) if total > 0 else np.full(n, -1)
        out: dict[str, Codes] = {}
        ok = chosen >= 0
        safe = np.maximum(chosen, 0)
        for a in self.attrs:
            if a in given:
                out[a] = np.where(ok, given[a], -1)
                continue
            size, start, leaves = self._tables(a)
            code = self.columns[a][safe]
            leaf = leaves[start[code] + np.floor(rng.random(n) * size[code]).astype(np.int64)]
            out[a] = np.where(ok, leaf, -1)
        return out
