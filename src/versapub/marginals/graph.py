"""Decomposability of a collection of (induced) marginals (Kifer & Gehrke §4.1).

A collection is *decomposable* when it is graphical (its marginals contain every maximal
clique of its interaction graph) and the graph is triangulated (§4.1's definitions); this
is exactly when its maximal attribute sets admit a junction tree (the running
intersection property: an acyclic hypergraph), which :func:`tree` finds with the release
model's own construction.  When there is none, :func:`why_not` names the obstacle — a
cycle without a chord, or a clique no marginal holds — and the marginal that removes it
(networkx's chordal completion).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import networkx as nx

from versapub.model.maxent import junction_tree


@dataclass(frozen=True)
class Junction:
    """A junction tree of the maximal sets: tree node ``c`` is set ``keep[c]``; ``order``
    root first, parents before children; ``sep[c]``: what ``c`` shares with its parent."""

    keep: list[int]
    order: tuple[int, ...]
    parent: dict[int, int]
    sep: dict[int, tuple[Any, ...]]


def maximal(sets: Sequence[frozenset[Any]]) -> list[int]:
    """Indices of the sets no other set contains (the first of equal sets)."""
    out = []
    for i, s in enumerate(sets):
        covered = any((s < t) or (s == t and j < i) for j, t in enumerate(sets) if j != i)
        if not covered:
            out.append(i)
    return out


def tree(sets: Sequence[frozenset[Any]]) -> Junction | None:
    """A junction tree over the maximal sets (the first is the root), or ``None`` when
    the collection is not decomposable.  An empty set list has an empty tree."""
    keep = maximal(sets)
    jt = junction_tree([tuple(sorted(sets[i], key=str)) for i in keep])
    return None if jt is None else Junction(keep, jt.order, dict(jt.parent), dict(jt.sep))


def interaction_graph(sets: Sequence[frozenset[Any]]) -> nx.Graph:
    g = nx.Graph()
    for s in sets:
        g.add_nodes_from(s)
        g.add_edges_from(combinations(sorted(s, key=str), 2))
    return g


def why_not(sets: Sequence[frozenset[Any]], show: Callable[[Any], str] = str) -> str:
    """Why the collection is not decomposable, and the marginal to add (a sentence)."""
    g = interaction_graph(sets)
    names = lambda nodes: ", ".join(show(v) for v in nodes)  # noqa: E731
    if not nx.is_chordal(g):
        cycle = min(nx.chordless_cycles(g), key=len)
        chordal, _ = nx.complete_to_chordal_graph(g)
        cliques = [c for c in nx.find_cliques(chordal) if set(cycle) & set(c)]
        fill = max(cliques, key=lambda c: (len(set(cycle) & set(c)), -len(c)))
        return (
            f"its interaction graph has the cycle {names(cycle)} without a chord (every pair next to each "
            f"other shares a marginal, no marginal links the others); adding a marginal over {{{names(fill)}}} "
            "triangulates it"
        )
    for c in nx.find_cliques(g):
        if not any(set(c) <= s for s in sets):
            return (
                f"the attributes {names(c)} are pairwise linked by marginals but no marginal holds them all "
                f"(the collection is not graphical); adding a marginal over {{{names(c)}}} makes it "
                "decomposable"
            )
    return "no junction tree exists"  # unreachable for a chordal, graphical collection
