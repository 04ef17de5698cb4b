"""Column roles (ARX's vocabulary), the decision every column needs, and the screen for
likely direct identifiers.

Every column may be declared ``identifying`` (a direct identifier: removed before
publishing, listed in the manifest and report), ``quasi-identifying``, ``sensitive`` or
``insensitive``.  **No column is published without a decision**: one that no rule names and
no role declares is refused, unless ``others`` gives every remaining column one role at once
(ARX's default is that every column is a quasi-identifier until the steward says otherwise).

Before publishing, columns that look like direct identifiers are refused unless the steward
declared them one by one (``others`` never covers them): a near-unique column (most records
hold a value no other record has) needs ``identifying`` (removed) or ``allow_unique``; a
column whose name reads like an identifier (``id``, ``ssn``, ``name``, ``mrn``, ...) and
that has many values (more than ``NAME_ONLY_VALUES`` and more than ``NAME_ONLY_SHARE`` of the
records) needs any declared role — with few values (``admission_type_id``: 8 codes) it is a
note only; a column on a rule's left-hand side or given a hierarchy counts as declared.
Dates (of birth, admission, ...) and 5-digit zip codes get a note: the quasi-identifiers
stewards forget (ARX's and sdcMicro's usual suspects).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from versapub.data.source import Source
from versapub.errors import InputError, RuleError, VersapubError, refuse
from versapub.privacy.rules import Rule
from versapub.privacy.screens.linking import free_text, unit_ids

ROLES = ("identifying", "quasi-identifying", "sensitive", "insensitive")
#: What ``others`` may give every undecided column.
OTHERS = ("insensitive", "quasi-identifying", "identifying")

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
        "nbr",
        "pid",
        "uid",
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

#: Name tokens that mark a measure (``account_never_delinq_percent``, ``loan_amount``): a
#: column so named whose values are numbers is not an identifier by its name, nor a zip code.
MEASURE_WORDS = frozenset(
    [
        "percent",
        "pct",
        "rate",
        "ratio",
        "amount",
        "amt",
        "balance",
        "count",
        "total",
        "sum",
        "avg",
        "mean",
        "median",
        "score",
        "share",
        "months",
        "years",
        "days",
        "hours",
        "income",
        "salary",
        "payment",
        "installment",
        "limit",
        "util",
        "utilization",
        "dol",
        "dollars",
        "cost",
        "price",
        "fee",
        "fees",
        "charges",
        "value",
        "quantity",
        "qty",
        "min",
        "max",
        "loan",
        "debt",
        "delinq",
        "inq",
        "since",
    ]
)

#: A column is near-unique when at least this share of records hold a value no other record has.
UNIQUE_SHARE = 0.5
#: ... and the table has at least this many records (below it, uniqueness says little).
MIN_RECORDS = 20
#: A name that reads like an identifier is refused only on a column with more distinct values
#: than this and than this share of the records; below, it is a note (coded ``*_id`` columns).
NAME_ONLY_VALUES = 100
NAME_ONLY_SHARE = 0.01


@dataclass(frozen=True)
class ColumnRoles:
    """The declared role of each column (every column may be left undeclared) and the
    near-unique columns the steward allows to be published."""

    identifying: tuple[str, ...] = ()
    quasi_identifying: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    insensitive: tuple[str, ...] = ()
    allow_unique: tuple[str, ...] = ()
    #: The role of every column no rule names and no role declares (``None``: such a column
    #: is refused); never covers a likely direct identifier.
    others: str | None = None
    #: Columns whose association with a protected attribute the steward accepts (proxies).
    allow_proxy: tuple[str, ...] = ()
    #: The column of each person's household id (issue 68): an identifier, removed as every
    #: identifying column is; the release's household figures are computed with it.
    household: str | None = None

    def __post_init__(self) -> None:
        for name in ("identifying", "quasi_identifying", "sensitive", "insensitive", "allow_unique", "allow_proxy"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.household is not None:
            other = [r for r, cols in self.by_role().items() if r != "identifying" and self.household in cols]
            if other or self.household in self.allow_unique:
                raise InputError(
                    f"Column {self.household!r} is the household id, an identifier (removed): it cannot also be "
                    f"declared {(other or ['allow-unique'])[0]}."
                )
            if self.household not in self.identifying:
                object.__setattr__(self, "identifying", (*self.identifying, self.household))
        if self.others is not None and self.others not in OTHERS:
            raise InputError(
                f"others must be one of {', '.join(OTHERS)} (the role of every column no rule names and no role "
                f"declares; identifying removes them), got {self.others!r}."
            )
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
        for role, cols in [
            *self.by_role().items(),
            ("allow-unique", self.allow_unique),
            ("allow-proxy", self.allow_proxy),
            ("household", (self.household,) if self.household else ()),
        ]:
            bad = [c for c in cols if c not in known]
            if bad:
                raise InputError(
                    f"Column(s) {', '.join(map(repr, bad))} declared {role} are not in the table; "
                    f"its columns are: {', '.join(map(repr, names))}."
                )

    def to_manifest(self, removed: Sequence[str], by_others: Sequence[str] = ()) -> dict[str, Any]:
        out: dict[str, Any] = {role: list(cols) for role, cols in self.by_role().items()}
        out["removed"] = list(removed)
        out["allowed_unique"] = list(self.allow_unique)
        out["others"] = self.others
        out["by_others"] = list(by_others)
        out["allowed_proxy"] = list(self.allow_proxy)
        if self.household is not None:
            out["household"] = self.household
        return out

    def with_role(self, role: str, columns: Sequence[str]) -> ColumnRoles:
        """These roles with ``columns`` added to ``role``."""
        field_name = {"quasi-identifying": "quasi_identifying"}.get(role, role)
        if field_name not in ("identifying", "quasi_identifying", "sensitive", "insensitive"):
            raise InputError(f"Unknown column role {role!r}; the roles are: {', '.join(ROLES)}.")
        changes: dict[str, Any] = {field_name: (*getattr(self, field_name), *columns)}
        return replace(self, **changes)

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, Iterable[str]],
        allow_unique: Iterable[str] = (),
        others: str | None = None,
        allow_proxy: Iterable[str] = (),
        household: str | None = None,
    ) -> ColumnRoles:
        unknown = set(data) - set(ROLES)
        if unknown:
            raise InputError(f"Unknown column role(s) {sorted(unknown)}; the roles are: {', '.join(ROLES)}.")
        get = {r: tuple(data.get(r, ())) for r in ROLES}
        return cls(
            get["identifying"],
            get["quasi-identifying"],
            get["sensitive"],
            get["insensitive"],
            tuple(allow_unique),
            others,
            tuple(allow_proxy),
            household,
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


def measure_named(name: str) -> bool:
    """Whether the name reads as a measure (a token of :data:`MEASURE_WORDS`)."""
    return bool(set(_tokens(name)) & MEASURE_WORDS)


def _numeric_share(values: Sequence[str]) -> float:
    ok = 0
    for v in values:
        try:
            float(v)
            ok += 1
        except ValueError:
            pass
    return ok / max(len(values), 1)


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


def _shown_column(table: Source, c: str) -> str:
    col = table.column(c)
    share = unique_share(table, c)
    return f"{c!r} ({col.cardinality:,} values, {share:.0%} of records unique)"


def likely_identifiers(
    table: Source,
    rules: Sequence[Rule],
    roles: ColumnRoles,
    declared: Iterable[str] = (),
    perturbed: Mapping[str, str] | None = None,
) -> tuple[list[Suspect], list[str]]:
    """Columns that look like direct identifiers and are not declared (module docstring),
    and the notes for names that only read like identifiers; ``declared``: columns the
    steward decided on otherwise (given a hierarchy).  A column that only ever is a rule's
    sensitive attribute is exempt from the uniqueness test (Anatomy publishes it apart from
    the quasi-identifiers), and so is a column a treatment perturbed (``perturbed``: column ->
    what record linkage measured of it): continuous values are what noise leaves, and such a
    column is judged by linkage to its input record, not by uniqueness (issue 64)."""
    lhs = {a for r in rules for a in r.lhs}
    rhs_only = {r.rhs for r in rules} - lhs
    decided = roles.declared() | lhs | set(declared)
    quasi = lhs | set(roles.quasi_identifying)
    out, notes = [], []
    for c in table.names:
        if c in roles.identifying:
            continue
        share = unique_share(table, c) if table.n_rows >= MIN_RECORDS else 0.0
        near_unique = share >= UNIQUE_SHARE and c not in rhs_only and c not in roles.allow_unique
        if near_unique and perturbed is not None and c in perturbed:
            notes.append(
                f"column {c!r} is near-unique ({share:.0%} of the records hold a value no other record has) after a "
                f"treatment perturbed it: judged by linkage to its input record, not by uniqueness — {perturbed[c]}"
            )
            near_unique = False
        if near_unique and c in quasi:  # a decision by name: generalized, or measured by the identity check
            notes.append(
                f"column {c!r} is near-unique ({share:.0%} of the records hold a value no other record has) and a "
                "quasi-identifier: a generalizing anonymizer (mondrian, incognito) generalizes it; published "
                "exactly (anatomy), the identity check measures who can be found by it (--k requires a smallest "
                "cell)"
            )
            near_unique = False
        measure = measure_named(c) and _numeric_share([str(v) for v in table.column(c).values[:200]]) >= 0.9
        named = name_looks_identifying(c) and not measure and c not in decided and c not in roles.allow_unique
        values = table.column(c).cardinality
        many = values > NAME_ONLY_VALUES and values > NAME_ONLY_SHARE * table.n_rows
        if named and not many and not near_unique:
            notes.append(
                f"column {c!r} is named like an identifier but holds {values:,} value(s) (a code): published "
                "as declared; declare it to record the decision"
            )
        if near_unique or (named and many):
            reasons = []
            if near_unique:
                reasons.append(f"{share:.0%} of the records hold a value of it that no other record has")
            if named and many:
                reasons.append(f"its name reads like a direct identifier and it holds {values:,} values")
            out.append(Suspect(c, share, named, tuple(reasons)))
    undecided = [
        c for c in table.names if c not in decided and c not in roles.allow_unique and c not in {r.rhs for r in rules}
    ]
    undecided = [c for c in undecided if c not in {s.column for s in out}]
    for c, constant, per in unit_ids(table, undecided):
        out.append(
            Suspect(
                c,
                unique_share(table, c),
                False,
                (
                    f"its values tie several records of one unit together ({per:.1f} records per value on average, "
                    f"{', '.join(map(repr, constant))} constant within each): a panel's person or household id; "
                    "published, it links every row of a unit to the others",
                ),
            )
        )
    for c, spaced in free_text(table, [c for c in undecided if c not in {s.column for s in out}]):
        col = table.column(c)
        out.append(
            Suspect(
                c,
                unique_share(table, c),
                False,
                (
                    f"it reads as free text ({col.cardinality:,} values, {spaced:.0%} of them several words): it may "
                    "hold names, addresses or notes that single a record out",
                ),
            )
        )
    return out, notes


_DATE = re.compile(r"^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T].*)?$")
_ZIP = re.compile(r"^\d{5}$")
DATE_WORDS = frozenset(
    ["date", "dob", "birth", "birthdate", "born", "admission", "admitted", "admit", "discharge", "death", "visit"]
)
#: A column named like a date with no more values than this (and not written as dates) is a
#: code or a flag (``death``: 0/1), not a date.
DATE_VALUES = 31
ZIP_WORDS = frozenset(["zip", "zipcode", "postcode", "postal", "plz"])


def _matching(rx: re.Pattern[str], values: Sequence[str]) -> float:
    return sum(bool(rx.match(v.strip())) for v in values) / max(len(values), 1)


def _sequence(table: Source, column: str) -> bool:
    """A column of consecutive whole numbers, one per record (a row number): no zip code even
    when its numbers have five digits (issue 66)."""
    col = table.column(column)
    if col.cardinality != table.n_rows or not table.n_rows:
        return False
    try:
        numbers = sorted(int(str(v)) for v in col.values)
    except ValueError:
        return False
    return numbers[-1] - numbers[0] + 1 == len(numbers)


def forgotten_quasi_identifiers(table: Source, rules: Sequence[Rule], roles: ColumnRoles) -> list[str]:
    """Notes for undeclared columns that look like dates or 5-digit zip codes (by name or by
    most of their values): the quasi-identifiers a steward forgets."""
    lhs = {a for r in rules for a in r.lhs}
    out = []
    for c in table.names:
        if c in lhs or c in roles.quasi_identifying or c in roles.identifying or c in {r.rhs for r in rules}:
            continue
        toks = set(_tokens(c))
        sample = [str(v) for v in table.column(c).values[:200]]
        dated = _matching(_DATE, sample)
        # a name alone (admission_type, death) is a date only with a date's many values or its form
        if (toks & DATE_WORDS and (table.column(c).cardinality > DATE_VALUES or dated >= 0.5)) or dated >= 0.9:
            out.append(
                f"column {c!r} looks like a date: dates of birth, admission or discharge are among the "
                "quasi-identifiers that single people out; declare it --quasi-identifying (with a hierarchy "
                "of months or years) unless it is harmless"
            )
        elif toks & ZIP_WORDS or (_matching(_ZIP, sample) >= 0.9 and not measure_named(c) and not _sequence(table, c)):
            out.append(
                f"column {c!r} looks like a 5-digit zip code: a usual quasi-identifier; declare it "
                "--quasi-identifying (with a hierarchy such as 476**) unless it is harmless"
            )
    return out


def check_declarations(rules: Sequence[Rule], roles: ColumnRoles) -> None:
    """Declarations that contradict the rules: an identifying column (removed) that a rule
    names, a sensitive column that no rule protects."""
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


def column_problems(
    table: Source,
    rules: Sequence[Rule],
    roles: ColumnRoles,
    declared: Iterable[str] = (),
    perturbed: Mapping[str, str] | None = None,
) -> tuple[ColumnRoles, tuple[str, ...], list[str], list[tuple[str, VersapubError]]]:
    """:func:`decide_columns` without raising: the roles, the columns ``others`` covered, the
    notes, and every problem found (titled) — declarations that contradict the rules, likely
    direct identifiers, undecided columns — so that a job reports them all at once."""
    problems: list[tuple[str, VersapubError]] = []
    roles.check_columns(table.names)
    try:
        check_declarations(rules, roles)
    except RuleError as exc:
        problems.append(("declared roles", exc))
    used = {a for r in rules for a in (*r.lhs, r.rhs)}
    suspects, notes = likely_identifiers(table, rules, roles, declared, perturbed)
    if suspects:
        listed = "; ".join(f"{s.column!r} ({' and '.join(s.reasons)})" for s in suspects)
        covered = [s.column for s in suspects if s.column not in used and s.column not in roles.declared()]
        problems.append(
            (
                "likely direct identifiers",
                InputError(
                    f"Column(s) that look like direct identifiers would be published: {listed}. Declare each by name"
                    + (" (--others does not cover them)" if covered and roles.others else "")
                    + ": --identifying COLUMN removes it from the release (ARX's 'identifying'); --allow-unique "
                    "COLUMN publishes a near-unique column as it is; --insensitive/--quasi-identifying/--sensitive "
                    "COLUMN declares a column whose name only looks like an identifier (config: [columns] "
                    "identifying = [...], allow_unique = [...]). A generalization hierarchy (--hierarchy "
                    "COLUMN=FILE:LEVEL) is another way to make a near-unique column coarse enough.",
                ),
            )
        )
    flagged = {s.column for s in suspects}
    undecided = [c for c in table.names if c not in used and c not in roles.declared()]
    if [c for c in undecided if c not in flagged] and roles.others is None:
        shown = "; ".join(_shown_column(table, c) for c in undecided if c not in flagged)
        problems.append(
            (
                "columns without a decision",
                InputError(
                    f"{len([c for c in undecided if c not in flagged])} column(s) would be published without a "
                    f"decision: {shown}. No rule names them and no role declares them. Decide each: protect it with "
                    "a rule (it on a rule's right-hand side), or declare it --sensitive, --quasi-identifying, "
                    "--insensitive or --identifying COLUMN (identifying: removed); or declare every remaining column "
                    "at once with --others insensitive|quasi-identifying|identifying (config: [columns] others = "
                    '"insensitive"; Python: ColumnRoles(others=...)). --others never covers a column that looks like '
                    "a direct identifier.",
                ),
            )
        )
    notes += forgotten_quasi_identifiers(table, rules, roles)
    if undecided and roles.others is not None:
        roles = roles.with_role(roles.others, undecided)
    return roles, tuple(undecided) if roles.others is not None else (), notes, problems


def decide_columns(
    table: Source, rules: Sequence[Rule], roles: ColumnRoles, declared: Iterable[str] = ()
) -> tuple[ColumnRoles, tuple[str, ...], list[str]]:
    """Every column decided: refuse columns no rule names and no role declares (unless
    ``roles.others``), and undeclared likely direct identifiers (one paragraph each, every
    column named; several at once: :func:`column_problems`); return the roles with ``others``
    given to the rest, the columns it covered, and the notes to record.  ``declared``: columns
    decided otherwise (a hierarchy)."""
    roles, by_others, notes, problems = column_problems(table, rules, roles, declared)
    refuse(problems)
    return roles, by_others, notes


def apply_roles(
    table: Source, rules: Sequence[Rule], roles: ColumnRoles, by_others: Sequence[str] = ()
) -> tuple[Source, list[str]]:
    """Check the declared roles against the table and the rules, remove the identifying
    columns, and return the table with the warnings to show (quasi-identifiers declared by
    name, not through ``others``, in no rule's left-hand side)."""
    roles.check_columns(table.names)
    warnings = [
        f"column {c!r} is declared quasi-identifying but is on no rule's left-hand side, so no rule limits what it "
        "reveals together with a sensitive attribute"
        for c in roles.quasi_identifying
        if c not in {a for r in rules for a in r.lhs} and c not in by_others
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
