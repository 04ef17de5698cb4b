"""Publishing one sub-table: its generator, its anonymizer's request, what its cells
reveal of identities, and which of its columns it publishes exactly (from the schema
alone, before anything is anonymized)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from versapub.anonymizers import make_anonymizer, publish_plain
from versapub.anonymizers.base import (
    AnonymizedTable,
    Anonymizer,
    KeepsColumns,
    MeetsCellFloor,
    PerRuleAnonymizer,
    PublishesExactly,
    PublishRequest,
)
from versapub.data.hierarchy import Hierarchy
from versapub.data.source import Source
from versapub.errors import ConfigError
from versapub.kinds import entry_of, get_kind
from versapub.privacy.guarantees.context import bind
from versapub.privacy.guarantees.guarantee import Guarantee, make_guarantee
from versapub.privacy.per_rule import for_rules
from versapub.privacy.rules import Rule
from versapub.privacy.screens.roles import ColumnRoles, cell_risk
from versapub.publishing.keys import KeyVariables
from versapub.schema.model import SubTable

#: ``progress(description, completed, total)`` is called as work advances.
ProgressHook = Callable[[str, int, int], None]


def no_progress(description: str, completed: int, total: int) -> None:
    del description, completed, total


def step_hook(hook: ProgressHook, completed: int, total: int) -> Callable[[str], None]:
    """A one-argument progress callback for work inside one step."""

    def say(description: str) -> None:
        hook(description, completed, total)

    return say


def table_rng(seed: int, sub: SubTable) -> np.random.Generator:
    """The generator for one sub-table: derived from the seed and the sub-table itself."""
    key = zlib.crc32(("\x1f".join(sub.attributes) + "\x1e" + (sub.sensitive or "")).encode("utf-8"))
    return np.random.default_rng([seed, key])


def anonymize(
    table: Source,
    sub: SubTable,
    anon: Anonymizer,
    g: Guarantee | Mapping[Rule, Guarantee],
    seed: int,
    progress: Callable[[str], None] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    keep: Sequence[str] = (),
    floor: int = 1,
    shared: frozenset[str] = frozenset(),
    keys: KeyVariables | None = None,
) -> AnonymizedTable:
    """Publish one sub-table: plain when it enforces no rule, otherwise with the anonymizer
    (which refuses more rules than it can enforce at once) under the guarantee of its
    rule(s) (``g``: one for every rule, or each rule's), bound to the table's sensitive
    attribute; the output is checked against its kind before anything is written.  The
    columns of ``keep`` the sub-table holds are published exactly beside a generalizing
    anonymizer's classes (the classic job's insensitive columns).  ``floor``: the job's
    floor on published cells, for an anonymizer that meets it while it anonymizes
    (:class:`~versapub.anonymizers.base.MeetsCellFloor`; the others' tables are checked
    against it when the release is written).  ``shared``: attributes other tables of the
    release publish too (a floored plain table then generalizes them one way for all its
    rows: :func:`floored_plain`).  ``keys``: the job's key variables (the floor counts their
    cells only; with local suppression the recoding met it on plain tables already)."""
    keys = keys or KeyVariables()
    part = table.select(sub.attributes)
    if sub.enforces is None:
        out = plain_under_floor(part, sub, seed, hierarchies, floor, keys, bool(shared & set(sub.attributes)), progress)
    else:
        kept = kept_in(sub, keep) if isinstance(anon, KeepsColumns) else ()
        bound = bound_guarantees(sub, anon, g, part, hierarchies)
        k = floor if isinstance(anon, MeetsCellFloor) else 1
        counted = None if keys.counts_all else tuple(keys.of(kept))
        request = PublishRequest(
            part, sub.enforced_rules, bound, table_rng(seed, sub), progress, hierarchies, kept, k, counted
        )
        try:
            out = anon.publish(request)
        except ConfigError as exc:
            raise ConfigError(str(exc) + derived_from(sub, g)) from None
    get_kind(out.kind).validate(out)
    return out


def plain_under_floor(
    part: Source,
    sub: SubTable,
    seed: int,
    hierarchies: Mapping[str, Hierarchy] | None,
    floor: int,
    keys: KeyVariables,
    shared: bool = False,
    progress: Callable[[str], None] | None = None,
) -> AnonymizedTable:
    """A sub-table that enforces no rule: its rows as they are, or :func:`floored_plain`
    when they leave a cell of its key columns below the floor — also when it is published
    again of the records another table's suppression kept (the long sweep's case, issue 63:
    removing one record left a plain table's cell of one)."""
    out = publish_plain(part)
    if plain_short(out, floor, keys):
        out = floored_plain(part, sub, seed, progress, hierarchies, floor, shared)
    return out


def plain_short(out: AnonymizedTable, floor: int, keys: KeyVariables) -> bool:
    """Does a plain table leave a cell of its key columns below the floor (read as the
    release is: with local suppression an empty value matches any value, and the recoding
    met the floor there already)?"""
    if floor <= 1 or keys.suppression_mode == "cells":
        return False
    data = out.parts["data"]
    return min(data.cell_sizes(keys.of(data.names)), default=floor) < floor


def floored_plain(
    part: Source,
    sub: SubTable,
    seed: int,
    progress: Callable[[str], None] | None,
    hierarchies: Mapping[str, Hierarchy] | None,
    floor: int,
    shared: bool = False,
) -> AnonymizedTable:
    """A sub-table that enforces no rule, under a floor on published cells its plain rows do
    not meet: generalized by Mondrian until every class of its values holds ``floor``
    records (k-anonymity of all its columns, no rule: a generalized table that protects
    identities only), the table's note saying so — by Incognito (one generalization per
    attribute, full-domain) when another table publishes one of its attributes (``shared``):
    the release is then read as one collection of marginals, which needs each attribute's
    published values to partition its leaves (issue 63)."""
    g = make_guarantee({"name": "k-anonymity", "k": floor})
    request = PublishRequest(part, (), (g,), table_rng(seed, sub), progress, hierarchies, (), 1)
    how = "incognito" if shared else "mondrian"
    out = make_anonymizer(how).publish(request)
    note = (
        f"{sub.name} enforces no rule, but its rows left records in cells of fewer than {floor}: its values are "
        f"generalized by {how.capitalize()} until every cell holds {floor} records (k-anonymity of its columns)"
    )
    notes = [*out.stats.get("notes", []), note]
    return replace(out, stats={**out.stats, "notes": notes}, own_guarantee=g.to_manifest())


def bound_guarantees(
    sub: SubTable,
    anon: Anonymizer,
    g: Guarantee | Mapping[Rule, Guarantee],
    part: Source,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> tuple[Guarantee, ...]:
    """The guarantee(s) a sub-table is published under, bound to it: each rule's own bound
    to its sensitive attribute for an anonymizer that takes one per rule
    (:class:`~versapub.anonymizers.base.PerRuleAnonymizer`), else the one guarantee of the
    table's rules bound to the first rule's sensitive attribute."""
    if isinstance(anon, PerRuleAnonymizer):
        return tuple(
            bind(for_rules((r,), g) if isinstance(g, Mapping) else g, part, r.rhs, hierarchies)
            for r in sub.enforced_rules
        )
    mine = for_rules(sub.enforced_rules, g) if isinstance(g, Mapping) else g
    return (bind(mine, part, sub.enforced_rules[0].rhs, hierarchies),)


def derived_from(sub: SubTable, g: Guarantee | Mapping[Rule, Guarantee]) -> str:
    """For a refusal naming a table's enforced rule that the user never wrote: which of the
    user's rules it was derived from (a decomposition's guardian table enforces the rule's
    sensitive attribute against every other attribute it holds)."""
    yours = list(g) if isinstance(g, Mapping) else []
    derived = [r for r in sub.enforced_rules if r not in yours]
    sources = [r for r in yours if any(r.rhs == d.rhs for d in derived)]
    if not derived or not sources:
        return ""
    return (
        f" (Table {sub.name}'s rule '{derived[0]}' is not one you wrote: the decomposition derived it from your "
        f"rule(s) {', '.join(repr(str(r)) for r in sources)}, as the table that guards {derived[0].rhs} against "
        "every other attribute it holds.)"
    )


def identity_risk(
    table: Source, published: AnonymizedTable, keys: KeyVariables | None = None
) -> dict[str, float | int]:
    """Identity risk of one published table: the cells its kind publishes the non-sensitive
    attributes in (a plain table's rows, an Anatomy QIT's values, a generalized table's
    classes), counted from what is published — of the job's key variables only, when named."""
    role, cols = get_kind(published.kind).cells(entry_of("T", published))
    cols = (keys or KeyVariables()).of(cols)
    if not cols:
        return {"unique_share": 0.0, "k": table.n_rows, "cells": 1}
    return cell_risk(published.parts[role].cell_sizes(cols), table.n_rows)


def predicted_unguarded(sub: SubTable, anon: Anonymizer, keep: Sequence[str] = ()) -> list[str]:
    """The columns a sub-table will publish exactly beside its guarantee, from the schema
    alone (what its kind's ``unguarded`` will say once published): a plain table's every
    column; a bucketizing anonymizer's (:class:`PublishesExactly`) every column but the
    enforced rules' sensitive ones; a generalizing anonymizer's kept columns."""
    if sub.enforces is None:
        return list(sub.attributes)
    if isinstance(anon, PublishesExactly):
        return [a for a in sub.attributes if a not in {r.rhs for r in sub.enforced_rules}]
    return list(kept_in(sub, keep)) if isinstance(anon, KeepsColumns) else []


def kept_in(sub: SubTable, keep: Sequence[str]) -> tuple[str, ...]:
    """The columns of ``keep`` (the classic job's insensitive ones) a sub-table publishes
    exactly beside its classes: those it holds that none of its enforced rules names — a
    decomposition's guardian table may take one into a derived rule's left-hand side (GD's
    add-back), and there it is generalized with the others (issue 63)."""
    named = {a for r in sub.enforced_rules for a in (*r.lhs, r.rhs)}
    return tuple(a for a in sub.attributes if a in set(keep) and a not in named)


def insensitive_columns(names: Sequence[str], rules: Sequence[Rule], roles: ColumnRoles) -> tuple[str, ...]:
    """The classic job with sensitive attributes (``--qi`` with ``--sensitive``: every rule's
    left-hand side is the declared quasi-identifiers): the columns no rule names and no role
    makes quasi-identifying, which a generalizing anonymizer publishes exactly in each
    record's row (ARX's insensitive attributes) instead of generalizing them as if an
    adversary knew them; none for any other job."""
    qi = set(roles.quasi_identifying)
    if not rules or not qi or any(set(r.lhs) != qi for r in rules):
        return ()
    named = {a for r in rules for a in (*r.lhs, r.rhs)}
    return tuple(a for a in names if a not in named and a not in qi)
