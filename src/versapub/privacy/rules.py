"""Privacy rules ``Q -> S`` (§2.2), their syntax, validation and reduction (§3).

A rule states that an adversary who knows a record's values of the attributes ``Q``
(the left-hand side, LHS) and every published table cannot infer its value of ``S``
(the right-hand side, RHS) beyond the guarantee.  Only single-attribute right-hand
sides are supported, as in the paper's algorithms and experiments.

Syntax: ``"a, b -> c"``.  Names are separated by commas; whitespace around names is
ignored; a name containing a comma, a quote, ``->`` or leading/trailing spaces is
written in single or double quotes (``"'length of stay', age -> 'zip-code'"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from versapub.errors import RuleError

_SPECIAL = set(",'\"")


def format_attribute(name: str) -> str:
    """``name`` as written in rule syntax (quoted when it needs to be)."""
    if name != name.strip() or "->" in name or any(ch in _SPECIAL for ch in name):
        quote = "'" if "'" not in name else '"'
        return f"{quote}{name}{quote}"
    return name


@dataclass(frozen=True, eq=False)
class Rule:
    """A privacy rule ``lhs -> rhs``.  Equality ignores the order of ``lhs``.

    Validated on construction: non-empty LHS, no attribute twice in the LHS, RHS not in
    the LHS.
    """

    lhs: tuple[str, ...]
    rhs: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "lhs", tuple(self.lhs))
        if not self.lhs:
            raise RuleError(
                f"Rule '-> {self.rhs}' has no left-hand side; a rule needs at least one "
                "attribute the adversary knows (publishing any attribute alone is assumed safe)."
            )
        for a in (*self.lhs, self.rhs):
            if not isinstance(a, str) or not a.strip():
                raise RuleError(f"Rule {self._raw()!r} has a blank attribute name.")
        dups = sorted({a for a in self.lhs if self.lhs.count(a) > 1})
        if dups:
            raise RuleError(f"Rule {self._raw()!r} lists {', '.join(map(repr, dups))} twice on its left-hand side.")
        if self.rhs in self.lhs:
            raise RuleError(
                f"Rule {self._raw()!r} has its sensitive attribute {self.rhs!r} on both "
                "sides; the right-hand side must not be in the left-hand side."
            )

    def _raw(self) -> str:
        return f"{', '.join(self.lhs)} -> {self.rhs}"

    @property
    def lhs_set(self) -> frozenset[str]:
        return frozenset(self.lhs)

    @property
    def attributes(self) -> tuple[str, ...]:
        return (*self.lhs, self.rhs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rule) and self.rhs == other.rhs and self.lhs_set == other.lhs_set

    def __hash__(self) -> int:
        return hash((self.lhs_set, self.rhs))

    def __str__(self) -> str:
        return f"{', '.join(format_attribute(a) for a in self.lhs)} -> {format_attribute(self.rhs)}"

    def implies(self, other: Rule) -> bool:
        """Theorem 3.1: ``Q' -> S`` implies ``Q -> S`` iff ``Q ⊆ Q'``."""
        return self.rhs == other.rhs and other.lhs_set <= self.lhs_set

    def to_json(self) -> dict[str, object]:
        return {"lhs": list(self.lhs), "rhs": self.rhs}

    @classmethod
    def from_json(cls, obj: object) -> Rule:
        if not isinstance(obj, dict) or not isinstance(obj.get("lhs"), list) or not isinstance(obj.get("rhs"), str):
            raise RuleError(f"A rule must be an object {{'lhs': [...], 'rhs': '...'}}, got {obj!r}.")
        return cls(tuple(obj["lhs"]), obj["rhs"])


def _split(text: str, sep: str, whole: str) -> list[str]:
    """Split ``text`` on ``sep`` outside quotes, keeping quotes in the pieces."""
    parts: list[str] = []
    buf: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = None
            i += 1
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
            i += 1
        elif text.startswith(sep, i):
            parts.append("".join(buf))
            buf = []
            i += len(sep)
        else:
            buf.append(ch)
            i += 1
    if quote:
        raise RuleError(f"Rule {whole!r} has an unclosed {quote} quote.")
    parts.append("".join(buf))
    return parts


def _name(token: str, whole: str) -> str:
    t = token.strip()
    if not t:
        raise RuleError(f"Rule {whole!r} has an empty attribute name (check for a doubled or trailing comma).")
    if t[0] in "'\"":
        if len(t) < 2 or t[-1] != t[0]:
            raise RuleError(f"Rule {whole!r}: text after the quoted name {t!r}.")
        inner = t[1:-1]
        if not inner.strip():
            raise RuleError(f"Rule {whole!r} has an empty quoted attribute name.")
        return inner
    if any(ch in "'\"" for ch in t):
        raise RuleError(f"Rule {whole!r}: a quote inside the name {t!r}; quote the whole name.")
    return t


def parse_rule(text: str) -> Rule:
    """Parse ``"a, b -> c"`` into a :class:`Rule` (see the module docstring for syntax)."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("A rule is empty; write rules as 'a, b -> c'.")
    sides = _split(text, "->", text)
    if len(sides) != 2:
        raise RuleError(
            f"Rule {text!r} must contain exactly one '->' between the attributes the "
            "adversary knows and the sensitive attribute, as in 'age, sex -> disease'."
        )
    if not sides[0].strip():
        raise RuleError(
            f"Rule {text!r} has no left-hand side; a rule needs at least one attribute the "
            "adversary knows (publishing any attribute alone is assumed safe)."
        )
    if not sides[1].strip():
        raise RuleError(f"Rule {text!r} has no right-hand side (the sensitive attribute after '->').")
    lhs = [_name(t, text) for t in _split(sides[0], ",", text)]
    rhs_parts = _split(sides[1], ",", text)
    if len(rhs_parts) != 1:
        raise RuleError(
            f"Rule {text!r} has several right-hand-side attributes; write one rule per "
            "sensitive attribute (the stronger multi-SA reading, §2.2 of the paper)."
        )
    return Rule(tuple(lhs), _name(rhs_parts[0], text))


def parse_rules(texts: Iterable[str | Rule]) -> list[Rule]:
    """Parse each text (rules already parsed pass through)."""
    return [t if isinstance(t, Rule) else parse_rule(t) for t in texts]


def validate_rules(rules: Sequence[Rule], attributes: Sequence[str], none_ok: bool = False) -> None:
    """Every attribute a rule names must be an attribute of the table; there must be a rule
    (unless ``none_ok``: quasi-identifiers declared for k-anonymity alone)."""
    if not rules and not none_ok:
        raise RuleError(
            "No privacy rules were given; state at least one rule 'a, b -> c' (or declare quasi-identifiers "
            "for k-anonymity alone)."
        )
    known = set(attributes)
    for r in rules:
        unknown = [a for a in r.attributes if a not in known]
        if unknown:
            raise RuleError(
                f"Rule '{r}' names unknown attribute(s) {', '.join(map(repr, unknown))}; the "
                f"table's attributes are: {', '.join(map(repr, attributes))}."
            )


@dataclass(frozen=True)
class DroppedRule:
    """A rule removed by reduction, with the kept rule that implies it."""

    rule: Rule
    implied_by: Rule
    reason: str


@dataclass(frozen=True)
class Reduction:
    """An irreducible rule set (Definition 2) and what was dropped to reach it."""

    given: tuple[Rule, ...]
    rules: tuple[Rule, ...]
    dropped: tuple[DroppedRule, ...]


def reduce_rules(rules: Sequence[Rule]) -> Reduction:
    """Reduce ``rules`` to an irreducible set (Definition 2, using Theorem 3.1).

    A rule ``Q -> S`` is dropped when another rule ``Q' -> S`` with ``Q ⊊ Q'`` exists
    (the larger left-hand side implies it), or when it repeats an earlier rule.  The
    kept rules are the maximal ones, in their given order.  A dropped rule's guarantee is
    not lost: the rule that implies or repeats it answers for it too
    (:func:`versapub.privacy.per_rule.effective` joins their guarantees).
    """
    kept: list[Rule] = []
    dropped: list[DroppedRule] = []
    for i, r in enumerate(rules):
        earlier = next((q for q in rules[:i] if q == r), None)
        if earlier is not None:
            dropped.append(
                DroppedRule(r, earlier, "repeats an earlier rule; the two are one rule that must meet both guarantees")
            )
            continue
        stronger = next((q for q in rules if q != r and q.implies(r)), None)
        if stronger is not None:
            # The implying rule may itself be implied by an even larger one: point to a kept one.
            while True:
                nxt = next((q for q in rules if q != stronger and q.implies(stronger)), None)
                if nxt is None:
                    break
                stronger = nxt
            dropped.append(
                DroppedRule(
                    r,
                    stronger,
                    f"implied by '{stronger}' (Theorem 3.1: its left-hand side contains this one's)",
                )
            )
            continue
        kept.append(r)
    return Reduction(tuple(rules), tuple(kept), tuple(dropped))
