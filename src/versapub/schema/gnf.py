"""Guardian tables (Definition 4) and Guardian Normal Form (Definition 5), checked on
the schema alone, with an explanation per rule.

A schema is in GNF for rules R iff every rule ``Q -> S`` either has ``S`` unreachable
from every attribute of ``Q`` (Lemma 1), or has a guardian table ``T_i*`` (Lemma 2):

(i)   ``T_i*`` contains ``S``;
(ii)  ``T_i*`` by itself satisfies ``(Q ∩ A_i*) ∪ Q* -> S``, where ``Q*`` are the
      attributes of ``A_i* \\ {S}`` reachable from ``Q`` over the other tables;
(iii) after removing ``S`` from ``T_i*``, ``S`` is unreachable from every attribute of ``Q``.

"By itself satisfies W -> S" is read at schema level (Theorem 3.1): the table enforces
a rule ``X -> S`` with ``W ⊆ X``; an empty ``W`` needs no rule (publishing ``S``'s
marginal alone is assumed safe, the premise of Lemma 1).  ``Q*`` is reported without the
attributes already in ``Q ∩ A_i*``, as the paper writes it (§4.1: "{age} ∪ {hospital, gender}").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from versapub.errors import SchemaError
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema, SubTable
from versapub.schema.reachability import Step, components, format_path, reachable_from, shortest_path

Kind = Literal["not-reachable", "guardian", "violation"]


@dataclass(frozen=True)
class GuardianAttempt:
    """Why one table containing ``S`` is or is not the rule's guardian."""

    table: str
    w_q: tuple[str, ...]
    q_star: tuple[str, ...]
    condition_ii: bool
    condition_iii: bool
    remaining_path: tuple[Step, ...] | None
    enforced: Rule | None

    def reason(self, rule: Rule) -> str:
        w = "{" + ", ".join(self.w_q) + "} ∪ {" + ", ".join(self.q_star) + "}"
        parts = []
        if not self.condition_ii:
            have = f"enforces '{self.enforced}'" if self.enforced else "enforces no rule"
            parts.append(f"(ii) fails: it must satisfy {w} -> {rule.rhs} but {have}")
        if not self.condition_iii:
            parts.append(
                f"(iii) fails: without {rule.rhs} in {self.table}, {rule.rhs} is still "
                f"reachable: {format_path(self.remaining_path or ())}"
            )
        if not parts:
            return f"{self.table} is the guardian with {w} -> {rule.rhs}"
        return f"{self.table}: " + "; ".join(parts)


@dataclass(frozen=True)
class RuleVerdict:
    """Whether a rule holds over the schema, and why (or why not)."""

    rule: Rule
    kind: Kind
    guardian: str | None = None
    w_q: tuple[str, ...] = ()
    q_star: tuple[str, ...] = ()
    path: tuple[Step, ...] = ()
    attempts: tuple[GuardianAttempt, ...] = ()

    @property
    def holds(self) -> bool:
        return self.kind != "violation"

    def explain(self) -> str:
        r = self.rule
        if self.kind == "not-reachable":
            return f"'{r}' holds: {r.rhs} is not reachable from {', '.join(r.lhs)} (Lemma 1)"
        if self.kind == "guardian":
            return (
                f"'{r}' holds: {self.guardian} is its guardian table with "
                f"{{{', '.join(self.w_q)}}} ∪ {{{', '.join(self.q_star)}}} -> {r.rhs} (Lemma 2)"
            )
        tried = "; ".join(a.reason(r) for a in self.attempts) or f"no table contains {r.rhs}"
        return (
            f"'{r}' is NOT guaranteed: {r.rhs} is reachable from the left-hand side via "
            f"{format_path(self.path)}, and no table is its guardian ({tried})"
        )

    def plain(self, guarantee: str | None = None) -> str:
        """The verdict in a data steward's words (no paper terms); ``guarantee``: the rule's
        guarantee in a few words (``k-anonymity with k = 5``), which its groups meet (else
        they are said to be diverse enough, the reading of the l-diversity family)."""
        r = self.rule
        if self.kind == "not-reachable":
            return (
                f"holds: no chain of published tables sharing attributes leads from {', '.join(r.lhs)} to {r.rhs}, "
                f"so knowing {', '.join(r.lhs)} tells nothing about a person's {r.rhs}"
            )
        if self.kind == "guardian":
            known = [*self.w_q, *self.q_star]
            return (
                f"holds: table {self.guardian} is the only way to {r.rhs}, and it publishes {r.rhs} only in groups "
                f"that {f'meet {guarantee}' if guarantee else 'are diverse enough'} for anyone who knows "
                f"{', '.join(known) if known else 'nothing'} about a person"
            )
        return (
            f"does NOT hold: {r.rhs} can be reached from {', '.join(r.lhs)} through {format_path(self.path)}, "
            "and no table along the way hides it"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule.to_json(),
            "holds": self.holds,
            "kind": self.kind,
            "guardian": self.guardian,
            "q_cap_a": list(self.w_q),
            "q_star": list(self.q_star),
            "explanation": self.explain(),
            "plain": self.plain(),
        }


@dataclass(frozen=True)
class GNFVerdict:
    """The GNF verdict of a schema for a rule set."""

    verdicts: tuple[RuleVerdict, ...]

    @property
    def ok(self) -> bool:
        return all(v.holds for v in self.verdicts)

    def explain(self) -> str:
        head = "in GNF" if self.ok else "NOT in GNF"
        return f"Schema is {head}:\n" + "\n".join(f"  - {v.explain()}" for v in self.verdicts)

    def to_json(self) -> dict[str, object]:
        return {"in_gnf": self.ok, "rules": [v.to_json() for v in self.verdicts]}


def _satisfies(table: SubTable, w: frozenset[str], s: str) -> bool:
    if not w:
        return True
    return any(e.rhs == s and w <= e.lhs_set for e in table.enforced_rules)


def guardian_attempt(schema: Schema, rule: Rule, index: int) -> GuardianAttempt:
    """Evaluate Definition 4 for table ``schema.tables[index]`` (which contains S)."""
    t = schema.tables[index]
    q, s = rule.lhs_set, rule.rhs
    others = [u.attributes for j, u in enumerate(schema.tables) if j != index]
    w_q = q & t.attribute_set
    reach = reachable_from(q, others) | q
    q_star = frozenset(a for a in t.attribute_set - {s} if a in reach) - w_q
    ok_ii = _satisfies(t, w_q | q_star, s)
    reduced = [
        (u.name, tuple(a for a in u.attributes if a != s) if j == index else u.attributes)
        for j, u in enumerate(schema.tables)
    ]
    rest = shortest_path(rule.lhs, s, reduced)
    order = {a: i for i, a in enumerate(t.attributes)}
    return GuardianAttempt(
        table=t.name,
        w_q=tuple(sorted(w_q, key=order.__getitem__)),
        q_star=tuple(sorted(q_star, key=order.__getitem__)),
        condition_ii=ok_ii,
        condition_iii=rest is None,
        remaining_path=rest,
        enforced=next((e for e in t.enforced_rules if e.rhs == rule.rhs), t.enforces),
    )


def check_rule(schema: Schema, rule: Rule) -> RuleVerdict:
    """Definition 5 for one rule."""
    named = [(t.name, t.attributes) for t in schema.tables]
    path = shortest_path(rule.lhs, rule.rhs, named)
    if path is None:
        return RuleVerdict(rule, "not-reachable")
    attempts = tuple(
        guardian_attempt(schema, rule, i) for i, t in enumerate(schema.tables) if rule.rhs in t.attribute_set
    )
    for a in attempts:
        if a.condition_ii and a.condition_iii:
            return RuleVerdict(rule, "guardian", a.table, a.w_q, a.q_star, path, attempts)
    return RuleVerdict(rule, "violation", path=path, attempts=attempts)


def _reaches(sources: frozenset[str], target: str, tables: Sequence[Sequence[str]]) -> bool:
    comp = components(tables)
    return target in comp and any(comp.get(a) == comp[target] for a in sources if a != target)


def rule_holds(schema: Schema, rule: Rule) -> bool:
    """Definition 5 for one rule, yes or no: :func:`check_rule` without its explanation
    (connected components instead of shortest paths; GD's candidate pruning calls it)."""
    q, s = rule.lhs_set, rule.rhs
    tables = [t.attributes for t in schema.tables]
    if not _reaches(q, s, tables):
        return True
    for i, t in enumerate(schema.tables):
        if s not in t.attribute_set:
            continue
        w_q = q & t.attribute_set
        reach = reachable_from(q, [u for j, u in enumerate(tables) if j != i]) | q
        q_star = frozenset(a for a in t.attribute_set - {s} if a in reach) - w_q
        if not _satisfies(t, w_q | q_star, s):
            continue
        reduced = [tuple(a for a in u if a != s) if j == i else u for j, u in enumerate(tables)]
        if not _reaches(q, s, reduced):
            return True
    return False


def gnf_holds(schema: Schema, rules: Sequence[Rule]) -> bool:
    """Is ``schema`` in GNF for ``rules``?  (The verdict of :func:`check_gnf`, without explanations.)"""
    return all(rule_holds(schema, r) for r in rules)


def check_gnf(schema: Schema, rules: Sequence[Rule]) -> GNFVerdict:
    """Is ``schema`` in GNF for ``rules`` (Definition 5)?  Never raises on a violation."""
    return GNFVerdict(tuple(check_rule(schema, r) for r in rules))


def require_gnf(schema: Schema, rules: Sequence[Rule], producer: str) -> GNFVerdict:
    """Check GNF and stop the run if it fails: a decomposition must never emit a
    non-GNF schema, so a failure here is a bug in ``producer``."""
    verdict = check_gnf(schema, rules)
    if not verdict.ok:
        raise SchemaError(
            f"Internal error: the {producer} decomposition produced a schema that is not in "
            f"Guardian Normal Form, so nothing was published. {verdict.explain()} "
            f"Schema: {schema.describe()}. Please report this as a bug."
        )
    return verdict
