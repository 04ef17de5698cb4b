"""UAD — Utility-Aware Decomposition (Algorithm 2 of Jin et al., KDD 2010).

1. Directed rule graph: an edge ``a -> b`` for every rule with ``a`` on its LHS and
   ``b`` as its RHS.
2. Colour the undirected graph with DSATUR (networkx ``greedy_color``).
3. ``V_max`` = the largest colour class (an independent set: no rule joins two of its
   attributes).
4. A table with attributes ``V_max``.
5. Pick ``v`` outside ``V_max`` with no edge from ``v`` into ``V_max`` and the most edges
   from ``V_max`` into ``v``.
6. Add ``v``; the table enforces ``V'_max -> v`` (``V'_max``: the members with an edge to ``v``).
7. Remove ``V_max`` (now including ``v``) from the graph; repeat until no attribute is left.

Choices where the paper says "break tie arbitrarily" (see ``docs/choices.md``):
attributes in no remaining rule fit any colour class and join the largest one (DSATUR
would give them colour 0 whatever the other classes are); among colour classes of equal
size the one holding the attribute that comes first in the table wins; among equally
good ``v`` likewise; ``v`` must receive at least one edge
(a ``v`` with none would join a table without a reason).  Every attribute ends up in
exactly one table, so UAD's tables are disjoint.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np

from versapub.data.source import Source
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema, SubTable


def uad_schema(attributes: Sequence[str], rules: Sequence[Rule]) -> Schema:
    """UAD on the schema level (it does not look at the data)."""
    order = {a: i for i, a in enumerate(attributes)}
    edges = {(q, r.rhs) for r in rules for q in r.lhs}
    remaining = list(attributes)
    tables: list[SubTable] = []
    while remaining:
        rem = set(remaining)
        g = nx.Graph()
        g.add_nodes_from(remaining)
        g.add_edges_from((a, b) for a, b in edges if a in rem and b in rem)
        colouring = nx.greedy_color(g, strategy="DSATUR")
        isolated = [a for a in remaining if g.degree(a) == 0]
        classes: dict[int, list[str]] = {}
        for a in remaining:
            if a not in isolated:
                classes.setdefault(colouring[a], []).append(a)
        # An attribute in no remaining rule fits every colour class; it joins the largest
        # class (so V_max is as large as any valid colouring allows).
        if classes:
            largest = min(classes.values(), key=lambda c: (-len(c), min(order[a] for a in c)))
            v_max = sorted([*largest, *isolated], key=order.__getitem__)
        else:
            v_max = list(isolated)
        members = set(v_max)
        best: tuple[int, int] | None = None
        chosen: str | None = None
        for v in remaining:
            if v in members or any((v, m) in edges for m in members):
                continue
            incoming = sum((m, v) in edges for m in members)
            if incoming == 0:
                continue
            key = (-incoming, order[v])
            if best is None or key < best:
                best, chosen = key, v
        attrs = sorted(members, key=order.__getitem__)
        name = f"T{len(tables) + 1}"
        if chosen is None:
            tables.append(SubTable(name, tuple(attrs)))
        else:
            lhs = tuple(m for m in attrs if (m, chosen) in edges)
            tables.append(SubTable(name, (*attrs, chosen), Rule(lhs, chosen)))
            members.add(chosen)
        remaining = [a for a in remaining if a not in members]
    return Schema(tuple(tables))


def uad(table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema:
    """Algorithm 2 (UAD) as a :class:`~versapub.decompositions.base.Decomposition`."""
    del rng  # deterministic
    return uad_schema(table.names, rules)
