"""Column roles (ARX's vocabulary) and the screen for likely direct identifiers.

Every column may be declared ``identifying`` (a direct identifier: removed before
publishing, listed in the manifest and report), ``quasi-identifying``, ``sensitive`` or
``insensitive``.  Before publishing, columns that look like direct identifiers — most
records hold a value no other record has, or the name reads like one (``id``, ``ssn``,
``name``, ``mrn``, ``dob``, ...) — are refused unless the steward declared them: a
near-unique column needs ``identifying`` (removed) or ``allow_unique``; a column flagged by
its name alone is accepted once it has any declared role.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from versapub.data.source import Source
from versapub.errors import InputError, RuleError
from versapub.privacy.rules import Rule

ROLES = ("identifying", "quasi-identifying", "sensitive", "insensitive")

#: Name tokens that usually mark a direct identifier.
ID_WORDS = frozenset(
    [
        "id",
        "ids",
        "ssn",
        "sin",
        "nhs",
        "nino",
        "mrn",
        "dob",
        "birthdate",
        "birthday",
        "name",
        "names",
        "firstname",
        "lastname",
        "surname",
        "fullname",
        "email",
        "mail",
        "phone",
        "telephone",
        "mobile",
        "fax",
        "passport",
        "licence",
        "license",
        "iban",
        "account",
        "uuid",
        "guid",
        "username",
        "login",
        "ip",
    ]
)

#: A column is near-unique when at least this share of records hold a value no other record has.
UNIQUE_SHARE = 0.5
#: ... and the table has at least this many records (below it, uniqueness says little).
MIN_RECORDS = 20


@dataclass(frozen=True)
class ColumnRoles:
    """The declared role of each column (every column may be left undeclared) and the
    near-unique columns the steward allows to be published."""

    identifying: tuple[str, ...] = ()
    quasi_identifying: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    insensitive: tuple[str, ...] = ()
    allow_unique: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for role, cols in self.by_role().items():
            for c in cols:
                if c in seen and seen[c] != role:
                    raise InputError(f"Column {c!r} is declared both {seen[c]} and {role}; give it one role.")
                seen[c] = role

    def by_role(self) -> dict[str, tuple[str, ...]]:
        return dict(
            zip(ROLES, (self.identifying, self.quasi_identifying, self.sensitive, self.insensitive), strict=True)
        )

    def declared(self) -> frozenset[str]:
        return frozenset(c for cols in self.by_role().values() for c in cols)

    def check_columns(self, names: Sequence[str]) -> None:
        known = set(names)
        for role, cols in [*self.by_role().items(), ("allow-unique", self.allow_unique)]:
            bad = [c for c in cols if c not in known]
            if bad:
                raise InputError(
                    f"Column(s) {', '.join(map(repr, bad))} declared {role} are not in the table; "
                    f"its columns are: {', '.join(map(repr, names))}."
                )

    def to_manifest(self, removed: Sequence[str]) -> dict[str, list[str]]:
        out = {role: list(cols) for role, cols in self.by_role().items()}
        out["removed"] = list(removed)
        out["allowed_unique"] = list(self.allow_unique)
        return out

    @classmethod
    def from_mapping(cls, data: Mapping[str, Iterable[str]], allow_unique: Iterable[str] = ()) -> ColumnRoles:
        unknown = set(data) - set(ROLES)
        if unknown:
            raise InputError(f"Unknown column role(s) {sorted(unknown)}; the roles are: {', '.join(ROLES)}.")
        get = {r: tuple(data.get(r, ())) for r in ROLES}
        return cls(
            get["identifying"], get["quasi-identifying"], get["sensitive"], get["insensitive"], tuple(allow_unique)
        )


@dataclass(frozen=True)
class Suspect:
    """A column that looks like a direct identifier, and why."""

    column: str
    unique_share: float
    by_name: bool
    reasons: tuple[str, ...] = field(default=())


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def name_looks_identifying(name: str) -> bool:
    """``patient_id``, ``PatientID``, ``SSN``, ``e-mail``, ``DUPERSID`` (an all-capitals name
    ending in ``ID``) read like direct identifiers; ``paid`` or ``valid`` do not."""
    toks = _tokens(name)
    if any(t in ID_WORDS for t in toks):
        return True
    return name.isupper() and name.endswith("ID") and len(name) > 2


def unique_share(table: Source, column: str) -> float:
    """Share of records whose value of ``column`` no other record has."""
    counts = table.column(column).counts()
    return float(counts[counts == 1].sum() / max(table.n_rows, 1))


def likely_identifiers(table: Source, rules: Sequence[Rule], roles: ColumnRoles) -> list[Suspect]:
    """Columns that look like direct identifiers and are not declared (see the module
    docstring); a column that only ever is a rule's sensitive attribute is exempt from
    the uniqueness test (Anatomy publishes it apart from the quasi-identifiers)."""
    lhs = {a for r in rules for a in r.lhs}
    rhs_only = {r.rhs for r in rules} - lhs
    out = []
    for c in table.names:
        if c in roles.identifying:
            continue
        share = unique_share(table, c) if table.n_rows >= MIN_RECORDS else 0.0
        near_unique = share >= UNIQUE_SHARE and c not in rhs_only and c not in roles.allow_unique
        by_name = name_looks_identifying(c) and c not in roles.declared() and c not in roles.allow_unique
        if near_unique or by_name:
            reasons = []
            if near_unique:
                reasons.append(f"{share:.0%} of the records hold a value of it that no other record has")
            if by_name:
                reasons.append("its name reads like a direct identifier")
            out.append(Suspect(c, share, by_name, tuple(reasons)))
    return out


def require_no_identifiers(table: Source, rules: Sequence[Rule], roles: ColumnRoles) -> None:
    """Refuse undeclared likely identifiers, every one named with its reason."""
    found = likely_identifiers(table, rules, roles)
    if not found:
        return
    listed = "; ".join(f"{s.column!r} ({' and '.join(s.reasons)})" for s in found)
    raise InputError(
        f"Column(s) that look like direct identifiers would be published: {listed}. Declare each: "
        "--identifying COLUMN removes it from the release (ARX's 'identifying'); --allow-unique COLUMN "
        "publishes a near-unique column as it is; --insensitive/--quasi-identifying/--sensitive COLUMN "
        "declares a column whose name only looks like an identifier (config: [columns] identifying = [...], "
        "allow_unique = [...]). A generalization hierarchy (--hierarchy COLUMN=FILE:LEVEL) is another way "
        "to make a near-unique column coarse enough."
    )


def apply_roles(table: Source, rules: Sequence[Rule], roles: ColumnRoles) -> tuple[Source, list[str]]:
    """Check the declared roles against the table and the rules, remove the identifying
    columns, and return the table with the warnings to show (declared quasi-identifiers
    in no rule's left-hand side)."""
    roles.check_columns(table.names)
    used = {a for r in rules for a in (*r.lhs, r.rhs)}
    clash = [c for c in roles.identifying if c in used]
    if clash:
        raise RuleError(
            f"Column(s) {', '.join(map(repr, clash))} are declared identifying (removed before publishing) but a "
            "rule names them; remove them from the rules or declare another role."
        )
    unprotected = [c for c in roles.sensitive if c not in {r.rhs for r in rules}]
    if unprotected:
        raise RuleError(
            f"Column(s) {', '.join(map(repr, unprotected))} are declared sensitive, but no rule protects them; add "
            f"a rule with each on its right-hand side, e.g. '{', '.join(roles.quasi_identifying or ('Q',))} -> "
            f"{unprotected[0]}' (Q: what an adversary may know about a person)."
        )
    warnings = [
        f"column {c!r} is declared quasi-identifying but is on no rule's left-hand side, so no rule limits what it "
        "reveals together with a sensitive attribute"
        for c in roles.quasi_identifying
        if c not in {a for r in rules for a in r.lhs}
    ]
    keep = [c for c in table.names if c not in roles.identifying]
    if not keep:
        raise InputError("Every column is declared identifying; nothing would be published.")
    return (table.select(keep) if len(keep) < len(table.names) else table), warnings


def cell_risk(sizes: Mapping[int, int], n: int) -> dict[str, float | int]:
    """Identity risk of a table's published cells (``{records: cells}`` over its
    non-sensitive value combinations): the share of records alone in their cell, and the
    smallest cell (the table's k-anonymity)."""
    return {
        "unique_share": float(sizes.get(1, 0) / max(n, 1)),
        "k": min(sizes) if sizes else 0,
        "cells": sum(sizes.values()),
    }
