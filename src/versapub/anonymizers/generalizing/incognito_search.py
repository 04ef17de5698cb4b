"""Incognito's search structures (LeFevre et al., SIGMOD 2005): the generalization lattice
and the search's result, shared by the in-memory search (:mod:`versapub.anonymizers.generalizing.incognito`)
and its scoring on a Dask cluster (:mod:`versapub.anonymizers.generalizing.incognito_cluster`), so that
neither imports the other for its types."""

from __future__ import annotations

from dataclasses import dataclass

from versapub.anonymizers.generalizing.generalize import Dimension, IntArray, Target
from versapub.data.table import EncodedTable


@dataclass(frozen=True)
class Lattice:
    """Per quasi-identifier: node id of each leaf code at every level, leaves per node."""

    gen: tuple[tuple[IntArray, ...], ...]
    under: tuple[tuple[IntArray, ...], ...]

    @property
    def heights(self) -> tuple[int, ...]:
        return tuple(len(g) for g in self.gen)


#: Distinct rows (codes per attribute) and how many records each stands for.
Counted = tuple[list[IntArray], IntArray]


@dataclass(frozen=True)
class Minimal:
    """Incognito's search result: the minimal satisfying nodes (levels per quasi-identifier,
    in ``goal.qi`` order) and what scoring them needs."""

    goal: Target
    dims: list[Dimension]
    lattice: Lattice
    keys: list[IntArray]
    counts: IntArray
    minimal: list[tuple[int, ...]]
    checked: int
    #: A guarantee checked against the population: the research records' codes per
    #: quasi-identifier over the joint dictionaries, and the population's distinct rows.
    joint: list[IntArray] | None = None
    population: Counted | None = None
    joint_table: EncodedTable | None = None
