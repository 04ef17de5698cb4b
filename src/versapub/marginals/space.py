"""The data as anonymized marginals see it, and the paper's reduction to induced attributes.

Kifer & Gehrke §5.1: with each attribute's generalizations totally ordered, an attribute
published at several levels across a collection becomes a path of *induced attributes*,
one per level the collection uses (coarse to fine); a marginal publishing the attribute at
level ``l`` holds the induced attributes of every used level ``>= l`` (the node at a
coarser level is a function of the finer node).  Collections of anonymized marginals are
then collections of ordinary marginals over induced attributes: interaction graphs,
decomposability, junction trees and Dobra's bounds carry over (§5.2), and a record known
only up to a node spreads uniformly over the node's leaves (§5.2's theorem).

An induced attribute is a :data:`Key` ``(attribute, level)``; the sensitive attribute is
``(sensitive, 0)``.  :class:`Space` holds the data once as its distinct leaf rows with
counts, so every marginal and entropy is a group-by over those rows (vectorized).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.generalizing.generalize import Dimension, dimension
from versapub.data.groupby import group_rows
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError
from versapub.marginals.spec import Marginal

Key = tuple[str, int]
Codes = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def shown(key: Key) -> str:
    """``age@2`` (an induced attribute as messages write it; ``age`` at level 0)."""
    return f"{key[0]}@{key[1]}" if key[1] else key[0]


@dataclass(frozen=True)
class Table:
    """One marginal over induced attributes: distinct rows (codes per key) and counts."""

    name: str
    keys: tuple[Key, ...]
    columns: tuple[Codes, ...]
    counts: Floats

    def column(self, key: Key) -> Codes:
        return self.columns[self.keys.index(key)]

    def project(self, keys: Sequence[Key], cards: Mapping[Key, int]) -> Table:
        """The table's marginal over ``keys`` (a subset of its keys, in that order)."""
        keys = tuple(keys)
        if keys == self.keys:
            return self
        if not keys:
            return Table(self.name, (), (), np.array([self.counts.sum()], dtype=np.float64))
        g = group_rows([self.column(k) for k in keys], [cards[k] for k in keys], with_inverse=True)
        assert g.inverse is not None
        counts = np.bincount(g.inverse, weights=self.counts, minlength=len(g.counts)).astype(np.float64)
        return Table(self.name, keys, tuple(k.astype(np.int64) for k in g.keys), counts)


def _flat(table: EncodedTable, attribute: str) -> Hierarchy:
    """Two levels for an attribute without a hierarchy: its values, then ``*``."""
    return Hierarchy(attribute, tuple((str(v), "*") for v in table.column(attribute).values), "<values, *>")


@dataclass
class Space:
    """The data's distinct leaf rows (``rows[a]``: codes; ``weight``: records) and every
    attribute's hierarchy as a :class:`Dimension` (levels ``0 .. top``)."""

    attributes: tuple[str, ...]
    sensitive: str
    dims: dict[str, Dimension]
    rows: dict[str, Codes]
    weight: Floats
    n: int
    _columns: dict[Key, Codes] = field(default_factory=dict, repr=False)
    _entropy: dict[frozenset[Key], float] = field(default_factory=dict, repr=False)
    _tables: dict[tuple[Key, ...], Table] = field(default_factory=dict, repr=False)

    @classmethod
    def of_table(
        cls,
        table: EncodedTable,
        sensitive: str,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        attributes: Sequence[str] | None = None,
    ) -> Space:
        """``table``'s ``attributes`` (default: all) with ``sensitive`` among them; an
        attribute without a hierarchy gets two levels (its values, ``*``)."""
        attrs = tuple(attributes) if attributes is not None else table.names
        for a in (*attrs, sensitive):
            if a not in table.names:
                raise ConfigError(f"The table has no column {a!r}; its columns are: {', '.join(table.names)}.")
        if sensitive not in attrs:
            attrs = (*attrs, sensitive)
        hier = dict(hierarchies or {})
        dims = {a: dimension(table, a, hier.get(a) or _flat(table, a)) for a in attrs}
        g = group_rows([table.codes(a) for a in attrs], [table.cardinality(a) for a in attrs])
        rows = {a: k.astype(np.int64) for a, k in zip(attrs, g.keys, strict=True)}
        return cls(attrs, sensitive, dims, rows, g.counts.astype(np.float64), table.n_rows)

    # -- hierarchy levels ---------------------------------------------------------
    def top(self, attribute: str) -> int:
        """The root's level (the attribute suppressed)."""
        return self.dims[attribute].top

    def card(self, key: Key) -> int:
        a, lv = key
        nodes = self.dims[a].nodes
        assert nodes is not None
        return int(nodes[lv].max()) + 1 if len(nodes[lv]) else 0

    def node_of_leaf(self, key: Key) -> Codes:
        """Each leaf code's node at the key's level."""
        nodes = self.dims[key[0]].nodes
        assert nodes is not None
        return nodes[key[1]]

    def width(self, key: Key) -> Codes:
        """Leaves under each node of the key's level."""
        return np.bincount(self.node_of_leaf(key), minlength=self.card(key)).astype(np.int64)

    def parent(self, fine: Key, coarse: Key) -> Codes:
        """Each node of the finer key's level -> its ancestor at the coarser key's level."""
        out = np.zeros(self.card(fine), dtype=np.int64)
        out[self.node_of_leaf(fine)] = self.node_of_leaf(coarse)
        return out

    def label(self, key: Key, node: int) -> str:
        labels = self.dims[key[0]].labels
        assert labels is not None
        return str(labels[key[1]][int(node)])

    def column(self, key: Key) -> Codes:
        """Each distinct row's node at the key's level."""
        if key not in self._columns:
            self._columns[key] = self.node_of_leaf(key)[self.rows[key[0]]]
        return self._columns[key]

    # -- validation -----------------------------------------------------------------
    def check(self, m: Marginal) -> None:
        """A marginal names attributes of the space at levels its hierarchies have, the
        sensitive attribute only exactly."""
        for a, lv in zip(m.attributes, m.levels, strict=True):
            if a not in self.dims:
                raise ConfigError(
                    f"Marginal {m.label!r} names {a!r}, which is not an attribute of the table "
                    f"({', '.join(self.attributes)})."
                )
            if lv > self.top(a):
                labels = self.dims[a].labels
                top = labels[self.top(a)][0] if labels else "*"
                raise ConfigError(
                    f"Marginal {m.label!r}: {a!r} has levels 0 .. {self.top(a)} (level {self.top(a)} is its root "
                    f"{top!r}); level {lv} is beyond its hierarchy."
                )
            if a == self.sensitive and lv != 0:
                raise ConfigError(
                    f"Marginal {m.label!r}: the sensitive attribute {a!r} is published exactly "
                    "(level 0) in anonymized marginals."
                )

    # -- marginals and entropies ----------------------------------------------------
    def table(self, keys: Sequence[Key], name: str = "") -> Table:
        """The data's marginal over ``keys`` (cached)."""
        keys = tuple(keys)
        hit = self._tables.get(keys)
        if hit is not None:
            return Table(name, hit.keys, hit.columns, hit.counts)
        if not keys:
            t = Table(name, (), (), np.array([float(self.n)]))
        else:
            g = group_rows([self.column(k) for k in keys], [self.card(k) for k in keys], with_inverse=True)
            assert g.inverse is not None
            counts = np.bincount(g.inverse, weights=self.weight, minlength=len(g.counts)).astype(np.float64)
            t = Table(name, keys, tuple(c.astype(np.int64) for c in g.keys), counts)
        if len(self._tables) < 4096:
            self._tables[keys] = t
        return t

    def entropy(self, keys: Iterable[Key]) -> float:
        """Empirical entropy (nats) of the data over ``keys`` (cached by key set)."""
        ks = frozenset(keys)
        if ks not in self._entropy:
            if not ks:
                self._entropy[ks] = 0.0
            else:
                c = self.table(sorted(ks)).counts
                p = c[c > 0] / self.n
                self._entropy[ks] = float(-(p * np.log(p)).sum())
        return self._entropy[ks]

    def log_width(self, attribute: str, level: int | None) -> float:
        """``E[log |leaves of the record's node at level|]`` (``None``: the attribute in no
        marginal, spread over its whole domain)."""
        if level is None:
            return math.log(max(len(self.dims[attribute].values), 1))
        key = (attribute, level)
        w = self.width(key)[self.column(key)]
        return float((self.weight * np.log(w)).sum() / self.n)


def induced_levels(space: Space, marginals: Sequence[Marginal]) -> dict[str, tuple[int, ...]]:
    """Per attribute, the levels the collection uses below the root, coarse to fine."""
    used: dict[str, set[int]] = {}
    for m in marginals:
        for a, lv in zip(m.attributes, m.levels, strict=True):
            if lv < space.top(a) or a == space.sensitive:
                used.setdefault(a, set()).add(lv)
    return {a: tuple(sorted(v, reverse=True)) for a, v in used.items()}


def induced_keys(m: Marginal, levels: Mapping[str, tuple[int, ...]]) -> tuple[Key, ...]:
    """The induced attributes a marginal holds: per attribute, every used level at or
    above its own (coarse to fine); a suppressed attribute holds none."""
    out: list[Key] = []
    for a, lv in zip(m.attributes, m.levels, strict=True):
        out += [(a, u) for u in levels.get(a, ()) if u >= lv]
    return tuple(out)


def finest(keys: Iterable[Key]) -> dict[str, int]:
    """Per attribute, the finest level among ``keys``."""
    out: dict[str, int] = {}
    for a, lv in keys:
        out[a] = min(lv, out.get(a, lv))
    return out
