"""Reachability between attributes over a set of published tables (Definition 3).

Two attributes are reachable iff a chain of published tables links them, consecutive
tables sharing an attribute.  Equivalently: they lie in one connected component of
the graph whose vertices are attributes and whose edges join attributes published
together (§4.1, Table 3(c)).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def components(tables: Iterable[Iterable[str]]) -> dict[str, int]:
    """Attribute -> connected-component id (union-find over table attribute sets)."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:
            parent[a], a = root, parent[a]
        return root

    for attrs in tables:
        attrs = list(attrs)
        for a in attrs:
            parent.setdefault(a, a)
        for a in attrs[1:]:
            ra, rb = find(attrs[0]), find(a)
            if ra != rb:
                parent[rb] = ra
    roots: dict[str, int] = {}
    return {a: roots.setdefault(find(a), len(roots)) for a in parent}


def reachable_from(sources: Iterable[str], tables: Iterable[Iterable[str]]) -> frozenset[str]:
    """Every attribute reachable from at least one of ``sources`` (sources included
    when they are published)."""
    comp = components(tables)
    ids = {comp[s] for s in sources if s in comp}
    return frozenset(a for a, c in comp.items() if c in ids)


@dataclass(frozen=True)
class Step:
    """One edge of a path: ``source`` and ``target`` published together in ``table``."""

    source: str
    table: str
    target: str


def shortest_path(
    sources: Iterable[str], target: str, tables: Sequence[tuple[str, Iterable[str]]]
) -> tuple[Step, ...] | None:
    """A shortest chain of co-publications from any source to ``target`` (BFS), or ``None``."""
    by_attr: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for name, attrs in tables:
        attrs_t = tuple(attrs)
        for a in attrs_t:
            by_attr.setdefault(a, []).append((name, attrs_t))
    srcs = [s for s in sources if s in by_attr]
    prev: dict[str, Step | None] = {s: None for s in srcs}
    queue = deque(srcs)
    while queue:
        a = queue.popleft()
        if a == target:
            steps: list[Step] = []
            node: str = a
            while (st := prev[node]) is not None:
                steps.append(st)
                node = st.source
            return tuple(reversed(steps))
        for name, attrs in by_attr.get(a, ()):
            for b in attrs:
                if b not in prev:
                    prev[b] = Step(a, name, b)
                    queue.append(b)
    return None


def format_path(steps: Sequence[Step]) -> str:
    """``gender -[T3]- age -[T4]- zipcode``."""
    if not steps:
        return ""
    out = [steps[0].source]
    for s in steps:
        out.append(f"-[{s.table}]- {s.target}")
    return " ".join(out)
