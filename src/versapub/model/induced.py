"""The maximum-entropy model when tables publish one attribute at different resolutions
(Kifer & Gehrke §5.1: the reduction to induced attributes, and §5.2's theorem on the
maximum-entropy probability of anonymized marginals).

Each table resolves an attribute into *blocks* of leaves (its own values: leaves, or
generalized values covering disjoint sets of leaves — one level of a hierarchy).  When,
for every attribute, the tables' partitions are nested (a chain from coarse to fine), the
attribute becomes one *induced attribute* per distinct partition, ``a\\x1f0`` (coarsest)
to ``a\\x1fJ`` (finest); a table holds the induced attributes of its own partition and of
every coarser one (a coarser block is a function of a finer one).  The release is then a
collection of ordinary marginals over induced attributes, modelled exactly as before —
closed form on a junction tree, IPF otherwise — and a leaf gets its finest block's
probability divided by the block's leaves (spread uniformly, §5.2).

This matters whenever two tables share an attribute at different levels: on leaves, the
separator between them is the leaf, and each table's spread would count as information
about the other's finer resolution; on induced attributes the finer table's extra
resolution is conditionally independent of the rest given the coarser block, which is
the maximum-entropy answer.  When every attribute has a single partition the two models
coincide and the plain model is used; a table whose values overlap (Mondrian's ranges)
or factors of other kinds (Anatomy) keep the plain model.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from versapub.model.factors import Factor, Masks, PlainFactor
from versapub.model.maxent import ReleaseModel
from versapub.model.sparse import Codes, Floats, SparseFn, group_sum

SEP = "\x1f"


@runtime_checkable
class Partitioned(Protocol):
    """Optional capability of a factor: it can say how it resolves each attribute (plain and
    generalized tables), with its rows' probabilities ``p``."""

    p: Floats

    def partition(self, a: str) -> tuple[Codes, Codes] | None:
        """Leaf -> block and row -> block of attribute ``a``, or ``None`` (overlapping values)."""
        ...


class Ladder:
    """One attribute's nested partitions, coarse to fine: ``blocks[j][leaf]``."""

    def __init__(self, blocks: Sequence[Codes]) -> None:
        self.blocks = [np.asarray(b, dtype=np.int64) for b in blocks]
        fine = self.blocks[-1]
        self.cards = [int(b.max()) + 1 if len(b) else 0 for b in self.blocks]
        self.width = np.bincount(fine, minlength=self.cards[-1]).astype(np.float64)
        self.order = np.argsort(fine, kind="stable")  # leaves grouped by finest block
        self.start = np.r_[0, np.cumsum(self.width)].astype(np.int64)

    def up(self, j: int, i: int) -> Codes:
        """Block of partition ``j`` -> its block in the coarser partition ``i``."""
        out = np.zeros(self.cards[j], dtype=np.int64)
        out[self.blocks[j]] = self.blocks[i]
        return out


def _chain(partitions: Sequence[Codes]) -> list[Codes] | None:
    """Distinct partitions sorted coarse to fine if each refines the one before, else None."""
    distinct: dict[bytes, Codes] = {}
    for p in partitions:
        distinct.setdefault(p.tobytes(), p)
    chain = sorted(distinct.values(), key=lambda p: int(p.max()) + 1 if len(p) else 0)
    for coarse, fine in itertools.pairwise(chain):
        pairs = np.unique(np.stack([fine, coarse]), axis=1)
        if len(np.unique(pairs[0])) != pairs.shape[1]:
            return None
    return chain


def release_model(
    factors: Sequence[Factor],
    domains: Mapping[str, npt.NDArray[np.object_]],
    n: int,
    names: Sequence[str] | None = None,
) -> ReleaseModel:
    """The release's model: :class:`InducedModel` when some attribute is published at
    several nested resolutions, else the plain :class:`ReleaseModel`."""
    plain = lambda: ReleaseModel(factors, domains, n, names)  # noqa: E731
    cards = {a: len(v) for a, v in domains.items()}
    parts: dict[int, dict[str, tuple[Codes, Codes]]] = {}
    for i, f in enumerate(factors):
        if not isinstance(f, Partitioned):
            return plain()
        fn = f.partition
        own = {}
        for a in f.attrs:
            got = fn(a)
            if got is None:
                return plain()
            own[a] = got
        parts[i] = own
    ladders: dict[str, Ladder] = {}
    for a in domains:
        held = [parts[i][a][0] for i in parts if a in parts[i]]
        if not held:
            continue
        chain = _chain(held)
        if chain is None:
            return plain()
        ladders[a] = Ladder(chain)
    if all(len(lad.blocks) == 1 for lad in ladders.values()):
        return plain()
    return InducedModel(factors, parts, ladders, domains, n, names, cards)


def _name(a: str, j: int) -> str:
    return f"{a}{SEP}{j}"


class InducedModel(ReleaseModel):
    """The model over induced attributes, answering on leaves (module docstring)."""

    def __init__(
        self,
        factors: Sequence[Factor],
        parts: Mapping[int, Mapping[str, tuple[Codes, Codes]]],
        ladders: Mapping[str, Ladder],
        domains: Mapping[str, npt.NDArray[np.object_]],
        n: int,
        names: Sequence[str] | None,
        cards: Mapping[str, int],
    ) -> None:
        self.ladders = dict(ladders)
        index = {a: {lad.blocks[j].tobytes(): j for j in range(len(lad.blocks))} for a, lad in ladders.items()}
        inner_cards = {_name(a, j): c for a, lad in ladders.items() for j, c in enumerate(lad.cards)}
        induced: list[Factor] = []
        for i, f in enumerate(factors):
            cols: dict[str, Codes] = {}
            for a in f.attrs:
                leaf_block, row_block = parts[i][a]
                j = index[a][leaf_block.tobytes()]
                for k in range(j + 1):
                    cols[_name(a, k)] = row_block if k == j else self.ladders[a].up(j, k)[row_block]
            p = np.asarray(cast(Partitioned, f).p, dtype=np.float64)
            g = group_sum(tuple(cols), cols, inner_cards, p)
            induced.append(
                PlainFactor(
                    g.attrs, dict(zip(g.attrs, g.codes, strict=True)), g.values, {a: inner_cards[a] for a in g.attrs}
                )
            )
        inner_domains = {a: np.arange(c).astype(object) for a, c in inner_cards.items()}
        self.inner = ReleaseModel(induced, inner_domains, n, names)
        self.factors = []
        self.published = list(factors)
        self.names = list(names) if names is not None else [f"T{i + 1}" for i in range(len(factors))]
        self.domains = {a: np.asarray(v, dtype=object) for a, v in domains.items()}
        self.n = int(n)
        self.attributes = tuple(self.domains)
        self.cards = dict(cards)
        self.tree = None
        self.z = self.inner.z
        self._dense = None
        self._skip_empty = False

    @property
    def residual(self) -> float:
        return self.inner.residual

    @property
    def path(self) -> str:
        multi = sorted(a for a, lad in self.ladders.items() if len(lad.blocks) > 1)
        return f"induced attributes for {', '.join(multi)} (Kifer & Gehrke §5.1); {self.inner.path}"

    def _finest(self, a: str) -> str:
        return _name(a, len(self.ladders[a].blocks) - 1)

    def _spread(self, masks: Masks) -> dict[str, npt.NDArray[np.float64]]:
        """Leaf masks as shares of each finest block (leaves are uniform inside a block)."""
        out = {}
        for a, m in masks.items():
            lad = self.ladders[a]
            w = np.asarray(m, dtype=np.float64)
            out[self._finest(a)] = np.bincount(lad.blocks[-1], weights=w, minlength=lad.cards[-1]) / np.maximum(
                lad.width, 1
            )
        return out

    def probability_masks(self, masks: Masks) -> float:
        return self.inner.probability_masks(self._spread(masks))  # type: ignore[arg-type]

    def probability_batch(self, queries: Sequence[Masks]) -> Floats:
        return self.inner.probability_batch([self._spread(q) for q in queries])  # type: ignore[misc]

    def _records(self, records: Mapping[str, Codes]) -> tuple[dict[str, Codes], Floats]:
        inner: dict[str, Codes] = {}
        width = np.ones(len(next(iter(records.values()))) if records else 0, dtype=np.float64)
        for a, lad in self.ladders.items():
            leaf = records[a]
            for j, b in enumerate(lad.blocks):
                inner[_name(a, j)] = b[leaf]
            width = width * lad.width[lad.blocks[-1][leaf]]
        return inner, width

    def prob(self, records: Mapping[str, Codes]) -> Floats:
        inner, width = self._records(records)
        return self.inner.prob(inner) / width

    def marginal(self, attrs: Sequence[str]) -> SparseFn:
        attrs = tuple(attrs)
        for a in attrs:
            if a not in self.domains:
                return super().marginal(attrs)  # the error for an unknown attribute
        m = self.inner.marginal([self._finest(a) for a in attrs])
        codes = list(m.codes)
        values = m.values
        for i, a in enumerate(attrs):  # each block's probability spread over its leaves
            lad = self.ladders[a]
            block = codes[i]
            k = lad.width[block].astype(np.int64)
            rep = np.repeat(np.arange(len(values)), k)
            offset = np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k)
            codes = [c[rep] for c in codes]
            values = values[rep] / k[rep]
            codes[i] = lad.order[lad.start[block[rep]] + offset]
        return SparseFn(
            attrs, tuple(np.asarray(c, dtype=np.int64) for c in codes), values, tuple(self.cards[a] for a in attrs)
        )

    def sample_codes(self, n: int, rng: np.random.Generator) -> dict[str, Codes]:
        draw = self.inner.sample_codes(n, rng)
        out = {}
        for a, lad in self.ladders.items():
            b = draw[self._finest(a)]
            pick = np.floor(rng.random(n) * lad.width[b]).astype(np.int64)
            out[a] = lad.order[lad.start[b] + pick]
        return {a: out[a] for a in self.attributes}
