"""The screens of a job that read the input: the population it was drawn from, and the
columns (alone or together) that reveal a protected attribute."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from versapub.data.hierarchy import Hierarchy
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InputError
from versapub.kinds import entry_of, get_kind
from versapub.privacy.guarantees.context import bind, require_population
from versapub.privacy.guarantees.guarantee import Guarantee
from versapub.privacy.guarantees.population import Population
from versapub.privacy.rules import Rule
from versapub.privacy.screens.computing import Limit
from versapub.privacy.screens.proxies import Association, proxy_error, screen
from versapub.privacy.screens.proxy_sets import SetProxy, screen_sets
from versapub.privacy.screens.roles import ColumnRoles
from versapub.publishing.remedies import with_remedies
from versapub.release.value import PublishedTable


def quasi_identifiers(rules: Sequence[Rule], roles: ColumnRoles, names: Sequence[str]) -> list[str]:
    """The columns an adversary is taken to know: every rule's left-hand side and the
    declared quasi-identifiers, in the table's order."""
    known = {a for r in rules for a in r.lhs} | set(roles.quasi_identifying)
    return [a for a in names if a in known]


def population_of(population: Population | EncodedTable | None, table: Source) -> Population | None:
    """The population as a :class:`Population` (a table read with ``read_table`` is one,
    recorded by its file name and digest); only beside a table held in memory."""
    if population is None:
        return None
    if isinstance(population, EncodedTable):
        population = Population(population, Path(population.source).name, population.sha256)
    if not isinstance(population, Population):
        raise InputError(
            "population must be a table read with versapub.read_table (or a Population), got "
            f"{type(population).__name__}."
        )
    if not table.in_memory:
        raise ConfigError(
            "A population (delta-presence, k-map with --population) is matched to the classes in memory; the Dask "
            "backend does not do it. Use the in-memory backend."
        )
    return population


def population_used(population: Population | None, guarantees: Sequence[Guarantee]) -> None:
    """Every guarantee checked against a population has one, and a population given is used
    (nothing is read that no guarantee decided on)."""
    for x in guarantees:
        require_population(x)
    if population is not None and not any("population" in x.needs() for x in guarantees):
        raise ConfigError(
            f"A population ({population.file}) was given, but no guarantee is checked against it: it serves "
            "delta-presence and k-map without a sampling fraction (e.g. --guarantee delta-presence:delta_max=0.5)."
        )


#: Rounds of the set screen: each finds the next refused set without the columns the earlier
#: ones named, so a refusal names every set at once (up to this many per rule).
SET_ROUNDS = 4


def proxy_sets(
    table: Source,
    rules: Sequence[Rule],
    layout: Sequence[tuple[str, Sequence[str]]],
    guarantees: Mapping[Rule, Guarantee],
    roles: ColumnRoles,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    refused: Sequence[str] = (),
    truth: Source | None = None,
) -> list[SetProxy]:
    """The multi-column proxy screen (:mod:`versapub.privacy.screens.proxy_sets`) on a release's
    layout: each rule's bound is what its guarantee, bound to the table, allows an adversary
    per value (:meth:`Guarantee.value_limits`), with the candidates a group of the release
    shows (its ``group_width``); the columns the pair screen already refused are left out (one
    refusal each). ``truth``: the input before its treatments (the target is the original)."""
    limits: dict[Rule, Limit] = {}
    for r in rules:
        g = bind(guarantees[r], table, r.rhs, hierarchies)
        limits[r] = Limit(g.value_limits, g.group_width(), g.describe())
    bounds: dict[Rule, float | Limit] = dict(limits)
    found = screen_sets(table, rules, layout, bounds, allow=roles.allow_proxy, ignore=refused, truth=truth)
    left_out, latest = set(refused), found
    for _ in range(SET_ROUNDS - 1):  # every set at once (issue 66): the next, without the columns named so far
        named = {c for p in latest if p.refused for c in p.columns}
        if not named:
            break
        left_out |= named
        latest = [
            p
            for p in screen_sets(table, rules, layout, bounds, allow=roles.allow_proxy, ignore=left_out, truth=truth)
            if p.refused
        ]
        found = [*found, *latest]
    fixed = {id(p): q for p, q in zip(found, with_remedies(table, found, layout, limits, truth), strict=True)}
    return [fixed[id(p)] if p.refused else p for p in found]


def proxies(
    table: Source,
    rules: Iterable[Rule],
    published: Iterable[PublishedTable],
    roles: ColumnRoles,
    screened: tuple[list[tuple[str, list[str]]], list[Association]] | None = None,
    truth: Source | None = None,
) -> list[Association]:
    """The proxy screen (:mod:`versapub.privacy.screens.proxies`): every unprotected column the
    release publishes exactly within reach of a rule's left-hand side, measured against the
    rule's protected attribute on the input.  A proxy the steward has not allowed
    (``roles.allow_proxy``) is an :class:`InputError` naming each with the ways out;
    returns the associations worth listing (allowed proxies among them, marked).
    ``screened``: a layout already screened and what it found, reused when it is the
    published tables' layout."""
    tables = [(p.name, get_kind(p.table.kind).unguarded(entry_of(p.name, p.table))) for p in published]
    same = screened is not None and [(n, sorted(c)) for n, c in screened[0]] == [(n, sorted(c)) for n, c in tables]
    found = screened[1] if screened is not None and same else screen(table, list(rules), tables, truth=truth)
    refused = [a for a in found if a.strong and a.column not in roles.allow_proxy]
    if refused:
        raise InputError(proxy_error(refused))
    return [replace(a, allowed=a.column in roles.allow_proxy) for a in found if a.listed]
