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
    as a plain count table).  Validated: unique attributes, the rule's attributes
    inside the table.
    """

    name: str
    attributes: tuple[str, ...]
    enforces: Rule | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        if not self.name or not isinstance(self.name, str):
            raise SchemaError("A sub-table needs a non-empty name.")
        if not self.attributes:
            raise SchemaError(f"Sub-table {self.name!r} has no attributes.")
        dups = sorted({a for a in self.attributes if self.attributes.count(a) > 1})
        if dups:
            raise SchemaError(f"Sub-table {self.name!r} lists {dups} twice.")
        if self.enforces is not None:
            outside = [a for a in self.enforces.attributes if a not in self.attributes]
            if outside:
                raise SchemaError(f"Sub-table {self.name!r} enforces '{self.enforces}' but lacks {outside}.")

    @property
    def attribute_set(self) -> frozenset[str]:
        return frozenset(self.attributes)

    @property
    def sensitive(self) -> str | None:
        return None if self.enforces is None else self.enforces.rhs

    def describe(self) -> str:
        rule = f"enforces '{self.enforces}'" if self.enforces else "no rule (plain)"
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
