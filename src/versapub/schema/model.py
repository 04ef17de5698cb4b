"""The schema of a release: which sub-tables are published, over which attributes, and
which single rule (if any) each one enforces."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from versapub.errors import SchemaError
from versapub.privacy.rules import Rule


@dataclass(frozen=True)
class SubTable:
    """A published sub-table ``T_i*`` with attributes ``A_i*``.

    ``enforces`` is the rule ``X -> S`` the table is anonymized for (``None``: published
    as a plain count table).  ``also_enforces`` holds further rules with other
    right-hand sides for a table anonymized for several sensitive attributes at once
    (multi-SA publishing, Appendix B).  Validated: unique attributes, every rule's
    attributes inside the table, distinct right-hand sides.
    """

    name: str
    attributes: tuple[str, ...]
    enforces: Rule | None = None
    also_enforces: tuple[Rule, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        if not self.name or not isinstance(self.name, str):
            raise SchemaError("A sub-table needs a non-empty name.")
        if not self.attributes:
            raise SchemaError(f"Sub-table {self.name!r} has no attributes.")
        dups = sorted({a for a in self.attributes if self.attributes.count(a) > 1})
        if dups:
            raise SchemaError(f"Sub-table {self.name!r} lists {dups} twice.")
        object.__setattr__(self, "also_enforces", tuple(self.also_enforces))
        if self.also_enforces and self.enforces is None:
            raise SchemaError(f"Sub-table {self.name!r} lists further rules but no first rule to enforce.")
        for rule in self.enforced_rules:
            outside = [a for a in rule.attributes if a not in self.attributes]
            if outside:
                raise SchemaError(f"Sub-table {self.name!r} enforces '{rule}' but lacks {outside}.")
        rhs = [r.rhs for r in self.enforced_rules]
        if len(set(rhs)) != len(rhs):
            raise SchemaError(f"Sub-table {self.name!r} enforces two rules with the same right-hand side.")

    @property
    def attribute_set(self) -> frozenset[str]:
        return frozenset(self.attributes)

    @property
    def enforced_rules(self) -> tuple[Rule, ...]:
        """Every rule the table is anonymized for (empty for a plain table)."""
        return () if self.enforces is None else (self.enforces, *self.also_enforces)

    @property
    def sensitive(self) -> str | None:
        """The sensitive attribute of the first enforced rule."""
        return None if self.enforces is None else self.enforces.rhs

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """The right-hand sides of every enforced rule, in order."""
        return tuple(r.rhs for r in self.enforced_rules)

    def describe(self) -> str:
        rule = "enforces " + ", ".join(f"'{r}'" for r in self.enforced_rules) if self.enforces else "no rule (plain)"
        return f"{self.name}({', '.join(self.attributes)}): {rule}"


@dataclass(frozen=True)
class Schema:
    """A list of sub-tables (the decomposition's output)."""

    tables: tuple[SubTable, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", tuple(self.tables))
        names = [t.name for t in self.tables]
        if len(set(names)) != len(names):
            raise SchemaError(f"Sub-table names must be unique, got {names}.")

    @classmethod
    def of(cls, tables: Iterable[SubTable]) -> Schema:
        return cls(tuple(tables))

    @property
    def attributes(self) -> frozenset[str]:
        out: set[str] = set()
        for t in self.tables:
            out |= t.attribute_set
        return frozenset(out)

    def table(self, name: str) -> SubTable:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def describe(self) -> str:
        return "\n".join(t.describe() for t in self.tables)
