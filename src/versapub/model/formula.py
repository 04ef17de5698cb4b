"""A query's condition as a formula over attribute masks, evaluated in three-valued
(Kleene) logic on rows that know some attributes exactly, some only as a set of leaves (a
generalized value) and some not at all: the basis of the bounds of
:mod:`versapub.model.bounds`.

An atom is ``attribute ∈ mask`` (a boolean mask over the attribute's codes).  On a row an
atom is *true* when every value the row may hold is in the mask, *false* when none is, and
*unknown* otherwise; ``and``/``or`` follow Kleene's strong logic.  A row whose formula is
true matches in every table consistent with it (it counts toward the lower bound), one
whose formula is not false may match (the upper bound).  Kleene logic is sound always and
exact when every attribute occurs in one atom (a *read-once* formula: its sub-formulas
then range over independent values); :func:`normalize` makes the common forms read-once
by pushing ``NOT`` into the atoms and merging the atoms one attribute has under one
``and``/``or`` (``age >= 20 AND age <= 30`` is one atom).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Bools = npt.NDArray[np.bool_]
#: A three-valued result per row: (certainly true, possibly true); scalars broadcast.
Tri = tuple[Bools | bool, Bools | bool]


@dataclass(frozen=True, eq=False)
class Atom:
    """``attr ∈ mask``: ``mask[code]`` says whether the attribute's value ``code`` satisfies it."""

    attr: str
    mask: Bools

    def __post_init__(self) -> None:
        if np.asarray(self.mask).dtype != np.bool_:
            raise TypeError(f"The mask of {self.attr!r} must be boolean.")


@dataclass(frozen=True, eq=False)
class Formula:
    """``and``/``or`` of ``children`` or one ``atom`` (``op == "atom"``); negation lives in
    the atoms (negation normal form)."""

    op: str
    children: tuple[Formula, ...] = ()
    atom: Atom | None = None

    def __post_init__(self) -> None:
        if self.op not in ("and", "or", "atom"):
            raise ValueError(f"Unknown formula operator {self.op!r}.")
        if (self.op == "atom") != (self.atom is not None):
            raise ValueError("An atom formula holds exactly one atom.")

    @property
    def atoms(self) -> list[Atom]:
        if self.atom is not None:
            return [self.atom]
        return [a for c in self.children for a in c.atoms]

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.attr for a in self.atoms))

    @property
    def read_once(self) -> bool:
        """Every attribute occurs in one atom: Kleene evaluation is then exact."""
        names = [a.attr for a in self.atoms]
        return len(names) == len(set(names))

    def tri(self, resolve: Callable[[Atom], Tri]) -> Tri:
        """The formula's three-valued result, each atom's from ``resolve``."""
        if self.atom is not None:
            return resolve(self.atom)
        parts = [c.tri(resolve) for c in self.children]
        lo, hi = parts[0]
        for plo, phi in parts[1:]:
            if self.op == "and":
                lo, hi = lo & plo, hi & phi
            else:
                lo, hi = lo | plo, hi | phi
        return lo, hi


def is_conjunction(f: Formula) -> bool:
    """An atom or an ``AND`` of atoms."""
    return f.atom is not None or (f.op == "and" and all(c.atom is not None for c in f.children))


def atom(attr: str, mask: Bools) -> Formula:
    return Formula("atom", atom=Atom(attr, np.asarray(mask, dtype=bool)))


def conjunction(masks: Mapping[str, Bools]) -> Formula:
    """``AND`` of ``attr ∈ mask`` (a workload query)."""
    return Formula("and", tuple(atom(a, m) for a, m in masks.items()))


def from_query(query: Any, domains: Mapping[str, npt.NDArray[Any]]) -> Formula:
    """The normalized formula of a parsed query (:class:`versapub.model.query.Query`) over
    ``domains`` (the query's values are those of the domains: validate first)."""
    from versapub.model.query import Condition

    def walk(e: Any, negated: bool) -> Formula:
        if isinstance(e, Condition):
            m = np.asarray(e.allowed(domains[e.attr]), dtype=bool)
            return atom(e.attr, ~m if negated else m)
        if e.op == "not":
            return walk(e.children[0], not negated)
        op = e.op if not negated else ("or" if e.op == "and" else "and")
        return Formula(op, tuple(walk(c, negated) for c in e.children))

    return normalize(walk(query.expr, False))


def normalize(f: Formula) -> Formula:
    """Nested ``and``/``or`` of one kind flattened, and the atoms one attribute has directly
    under one node merged (``&`` under ``and``, ``|`` under ``or``)."""
    if f.atom is not None:
        return f
    flat: list[Formula] = []
    for c in (normalize(c) for c in f.children):
        flat.extend(c.children if c.op == f.op else (c,))
    merged: dict[str, Bools] = {}
    rest: list[Formula] = []
    for c in flat:
        if c.atom is None:
            rest.append(c)
            continue
        prev = merged.get(c.atom.attr)
        m = c.atom.mask
        merged[c.atom.attr] = m if prev is None else (prev & m if f.op == "and" else prev | m)
    children = [atom(a, m) for a, m in merged.items()] + rest
    return children[0] if len(children) == 1 else Formula(f.op, tuple(children))


# -- resolving atoms on rows ------------------------------------------------------------


def absent(a: Atom) -> Tri:
    """An attribute the rows do not hold: true if every value passes, false if none does."""
    return bool(a.mask.all()), bool(a.mask.any())


def exact(a: Atom, codes: npt.NDArray[np.integer]) -> Tri:
    """Rows holding the attribute's value exactly (codes into its domain)."""
    m = a.mask[codes]
    return m, m


def covered(a: Atom, codes: npt.NDArray[np.integer], cover: Any) -> Tri:
    """Rows holding a leaf (code below the domain's size) or a generalized value (code
    ``card + j``, covering ``cover.leaves[cover.start[j]:cover.end[j]]``,
    :class:`versapub.model.generalized.Cover`)."""
    card = len(a.mask)
    leaf = codes < card
    lo = np.zeros(len(codes), dtype=bool)
    hi = np.zeros(len(codes), dtype=bool)
    lo[leaf] = hi[leaf] = a.mask[codes[leaf]]
    if (~leaf).any():
        j = codes[~leaf] - card
        inside = np.r_[0, np.cumsum(a.mask[cover.leaves])]
        passing = inside[cover.end[j]] - inside[cover.start[j]]
        size = cover.end[j] - cover.start[j]
        lo[~leaf] = passing == size
        hi[~leaf] = passing > 0
    return lo, hi


def resolver(
    columns: Mapping[str, npt.NDArray[np.integer]], covers: Mapping[str, Any] | None = None
) -> Callable[[Atom], Tri]:
    """Atoms on rows: exact for ``columns`` (or through ``covers`` where given), unknown for
    any other attribute."""
    covers = covers or {}

    def resolve(a: Atom) -> Tri:
        if a.attr not in columns:
            return absent(a)
        if a.attr in covers:
            return covered(a, columns[a.attr], covers[a.attr])
        return exact(a, columns[a.attr])

    return resolve


def as_arrays(t: Tri, n: int) -> tuple[Bools, Bools]:
    """A result as two arrays of ``n`` rows (scalars broadcast)."""
    lo, hi = t
    return np.broadcast_to(np.asarray(lo, dtype=bool), (n,)), np.broadcast_to(np.asarray(hi, dtype=bool), (n,))
