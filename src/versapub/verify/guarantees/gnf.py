"""The verifier's own reading of Guardian Normal Form (Jin et al., KDD 2010, §4), written
afresh from the paper's definitions and sharing nothing with :mod:`versapub.schema`.

The published tables are read from the manifest: each table's attributes and the rules it
enforces (``enforces`` and ``also_enforces``).  Reachability is taken literally from
Definition 3 — a *sequence of tables*, consecutive ones sharing an attribute — as a
breadth-first search over tables (the publisher searches a graph of attributes).

* **Definition 3 (reachability).** ``A_i`` and ``A_j`` are reachable iff a sequence of
  published tables ``T_1 .. T_h`` has ``A_i`` in ``T_1``, ``A_j`` in ``T_h`` and each table
  sharing an attribute with the next.
* **Definition 4 (guardian table).** ``T_i`` with attributes ``A_i`` is the guardian of
  ``Q -> S`` iff (i) it contains ``S``; (ii) it by itself satisfies ``(Q ∩ A_i) ∪ Q* -> S``,
  ``Q*`` the attributes of ``A_i \\ {S}`` reachable from some attribute of ``Q`` over the
  *other* tables; (iii) with ``S`` removed from ``T_i``, no attribute of ``Q`` reaches ``S``.
  "By itself satisfies ``W -> S``" is read from what the table enforces: a rule ``X -> S``
  with ``W ⊆ X`` (Theorem 3.1: ``X -> S`` implies ``W -> S``); ``W`` empty needs no rule (a
  sensitive column published without its left-hand side is the premise of Lemma 1).
* **Definition 5 (GNF).** Every rule either has ``S`` unreachable from every attribute of
  ``Q`` (Lemma 1) or has a guardian table (Lemma 2).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from versapub.privacy.rules import Rule


@dataclass(frozen=True)
class PublishedTable:
    """A published table as the manifest states it: its name, its attributes (in order),
    and the rules it enforces (``enforces``, then ``also_enforces``)."""

    name: str
    attributes: tuple[str, ...]
    enforced_rules: tuple[Rule, ...] = ()

    @property
    def attribute_set(self) -> frozenset[str]:
        return frozenset(self.attributes)

    @property
    def enforces(self) -> Rule | None:
        return self.enforced_rules[0] if self.enforced_rules else None

    @classmethod
    def of_entry(cls, entry: object) -> PublishedTable:
        """A manifest table entry, validated: a name, attributes listed once, every enforced
        rule inside the table and no two on one attribute (``ValueError`` says what is wrong)."""
        if not isinstance(entry, dict):
            raise ValueError(f"a table entry must be an object, got {entry!r}")
        for key in ("name", "attributes", "kind", "files"):
            if key not in entry:
                raise ValueError(f"table entry lacks {key!r}")
        name, attrs = entry["name"], entry["attributes"]
        if not isinstance(name, str) or not name:
            raise ValueError(f"a table needs a non-empty name, got {name!r}")
        if not isinstance(attrs, list) or not attrs or not all(isinstance(a, str) for a in attrs):
            raise ValueError(f"table {name!r}: attributes must be a non-empty list of names")
        if len(set(attrs)) != len(attrs):
            raise ValueError(f"table {name!r} lists an attribute twice")
        if entry["kind"] == "anatomy" and not entry.get("enforces"):
            raise ValueError(f"anatomy table {name!r} enforces no rule")
        if entry.get("also_enforces") and not entry.get("enforces"):
            raise ValueError(f"table {name!r} lists further rules but no first rule")
        rules = tuple(Rule.from_json(r) for r in [entry.get("enforces"), *(entry.get("also_enforces") or [])] if r)
        for r in rules:
            if not set(r.attributes) <= set(attrs):
                raise ValueError(f"table {name!r} enforces '{r}' but lacks {sorted(set(r.attributes) - set(attrs))}")
        if len({r.rhs for r in rules}) != len(rules):
            raise ValueError(f"table {name!r} enforces two rules on one attribute")
        return cls(name, tuple(attrs), rules)


def read_tables(entries: object) -> list[PublishedTable]:
    """The manifest's ``tables``, validated (names unique)."""
    if not isinstance(entries, list):
        raise ValueError("'tables' must be a list")
    tables = [PublishedTable.of_entry(e) for e in entries]
    names = [t.name for t in tables]
    if len(set(names)) != len(names):
        raise ValueError(f"table names must be unique, got {names}")
    return tables


@dataclass(frozen=True)
class Verdict:
    """One rule against the tables: ``kind`` is ``not-reachable`` (Lemma 1), ``guardian``
    (Lemma 2, with the table and ``W = (Q ∩ A_i) ∪ Q*``) or ``violation``."""

    lhs: tuple[str, ...]
    rhs: str
    kind: str
    guardian: str | None = None
    w: tuple[str, ...] = ()
    chain: tuple[str, ...] = ()
    tried: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        return self.kind != "violation"

    def explain(self) -> str:
        rule = f"{', '.join(self.lhs)} -> {self.rhs}"
        if self.kind == "not-reachable":
            return f"'{rule}' holds: no sequence of tables leads from {', '.join(self.lhs)} to {self.rhs} (Lemma 1)"
        if self.kind == "guardian":
            return (
                f"'{rule}' holds: {self.guardian} is its guardian table (Definition 4), enforcing "
                f"{{{', '.join(self.w)}}} -> {self.rhs} (Lemma 2)"
            )
        why = "; ".join(self.tried) or f"no table contains {self.rhs}"
        return (
            f"'{rule}' is NOT guaranteed: {self.rhs} is reachable from {', '.join(self.lhs)} through the tables "
            f"{' - '.join(self.chain)}, and no table is its guardian ({why})"
        )


def table_chain(sources: Iterable[str], target: str, tables: Sequence[PublishedTable]) -> tuple[str, ...] | None:
    """Definition 3: a shortest sequence of tables, the first holding a source attribute,
    the last holding ``target``, consecutive ones sharing an attribute; ``None`` if none."""
    wanted = set(sources)
    start = [i for i, t in enumerate(tables) if t.attribute_set & wanted]
    back: dict[int, int | None] = dict.fromkeys(start)
    todo = deque(start)
    while todo:
        i = todo.popleft()
        if target in tables[i].attribute_set:
            out = [i]
            while (j := back[out[-1]]) is not None:
                out.append(j)
            return tuple(tables[k].name for k in reversed(out))
        for j, t in enumerate(tables):
            if j not in back and t.attribute_set & tables[i].attribute_set:
                back[j] = i
                todo.append(j)
    return None


def _reaches(sources: Iterable[str], target: str, tables: Sequence[PublishedTable]) -> bool:
    return table_chain(sources, target, tables) is not None


def rule_verdict(lhs: Sequence[str], rhs: str, tables: Sequence[PublishedTable]) -> Verdict:
    """Definition 5 for the rule ``lhs -> rhs`` over ``tables`` (module docstring)."""
    q = frozenset(lhs)
    chain = table_chain(q, rhs, tables)
    if chain is None:
        return Verdict(tuple(lhs), rhs, "not-reachable")
    tried = []
    for i, t in enumerate(tables):
        if rhs not in t.attribute_set:  # (i)
            continue
        others = [u for j, u in enumerate(tables) if j != i]
        w = (q & t.attribute_set) | frozenset(a for a in t.attribute_set - {rhs} if _reaches(q, a, others))
        enforced = any(r.rhs == rhs and w <= frozenset(r.lhs) for r in t.enforced_rules)
        ok_ii = not w or enforced
        without_s = [
            PublishedTable(u.name, tuple(a for a in u.attributes if a != rhs)) if j == i else u
            for j, u in enumerate(tables)
        ]
        left = table_chain(q, rhs, without_s)
        if ok_ii and left is None:
            return Verdict(tuple(lhs), rhs, "guardian", t.name, tuple(sorted(w)), chain)
        why = []
        if not ok_ii:
            why.append(f"(ii) it must satisfy {{{', '.join(sorted(w))}}} -> {rhs} but enforces no rule covering it")
        if left is not None:
            why.append(f"(iii) without {rhs} in it, {rhs} is still reachable through {' - '.join(left)}")
        tried.append(f"{t.name}: " + "; ".join(why))
    return Verdict(tuple(lhs), rhs, "violation", chain=chain, tried=tuple(tried))


def gnf_verdicts(rules: Sequence[tuple[Sequence[str], str]], tables: Sequence[PublishedTable]) -> list[Verdict]:
    """Definition 5 for every rule."""
    return [rule_verdict(lhs, rhs, tables) for lhs, rhs in rules]
