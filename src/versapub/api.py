"""The Python API: the one place that wires the layers together.

>>> from versapub import datasets, publish
>>> release = publish(datasets.running_example(), datasets.RUNNING_EXAMPLE_RULES, l=2, seed=1)
>>> release.gnf.ok
True
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from versapub.anonymizers import make_anonymizer, publish_plain
from versapub.anonymizers.base import (
    AnonymizedTable,
    Anonymizer,
    DefaultDecomposition,
    DefaultGuarantees,
    KeepsColumns,
    PerRuleAnonymizer,
    PublishesExactly,
    SensitiveGeneralizing,
)
from versapub.anonymizers.population import joint_table
from versapub.data.hierarchy import Hierarchy
from versapub.data.source import OutOfCore, Source
from versapub.data.table import EncodedTable
from versapub.decompositions import Decomposition, make_decomposition
from versapub.errors import (
    ConfigError,
    InfeasibleError,
    InputError,
    RuleError,
    SchemaError,
    VersapubError,
    refusal,
    refuse,
)
from versapub.kinds import entry_of, get_kind
from versapub.kinds.scoring import KLScorer
from versapub.privacy.context import bind, require_population, with_population
from versapub.privacy.feasibility import Feasibility, feasibility, require_feasible
from versapub.privacy.guarantee import Guarantee, make_guarantee
from versapub.privacy.per_rule import (
    RuleItem,
    anonymizers,
    effective,
    effective_anonymizers,
    for_rules,
    needs_default,
    split,
    with_defaults,
)
from versapub.privacy.population import Population
from versapub.privacy.proxies import Association, proxy_error, screen
from versapub.privacy.proxy_sets import SetProxy, screen_sets, set_proxy_error
from versapub.privacy.roles import (
    ColumnRoles,
    apply_roles,
    cell_risk,
    column_problems,
)
from versapub.privacy.rules import Rule, reduce_rules, validate_rules
from versapub.release.value import InputInfo, PublishedTable, Release
from versapub.schema.gnf import require_gnf
from versapub.schema.model import Schema, SubTable

#: ``progress(description, completed, total)`` is called as work advances.
ProgressHook = Callable[[str, int, int], None]


def _no_progress(description: str, completed: int, total: int) -> None:
    del description, completed, total


def _step_hook(hook: ProgressHook, completed: int, total: int) -> Callable[[str], None]:
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
) -> AnonymizedTable:
    """Publish one sub-table: plain when it enforces no rule, otherwise with the anonymizer
    (which refuses more rules than it can enforce at once) under the guarantee of its
    rule(s) (``g``: one for every rule, or each rule's), bound to the table's sensitive
    attribute; the output is checked against its kind before anything is written.  The
    columns of ``keep`` the sub-table holds are published exactly beside a generalizing
    anonymizer's classes (the classic job's insensitive columns)."""
    part = table.select(sub.attributes)
    if sub.enforces is None:
        out = publish_plain(part)
    elif isinstance(anon, PerRuleAnonymizer):  # each rule under its own guarantee
        each = [
            bind(for_rules((r,), g) if isinstance(g, Mapping) else g, part, r.rhs, hierarchies)
            for r in sub.enforced_rules
        ]
        out = anon.publish_rules(
            cast(EncodedTable, part), sub.enforced_rules, each, table_rng(seed, sub), progress, hierarchies
        )
    else:
        mine = for_rules(sub.enforced_rules, g) if isinstance(g, Mapping) else g
        bound = bind(mine, part, sub.enforced_rules[0].rhs, hierarchies)
        # A table on a cluster reaches only out-of-core anonymizers (require_out_of_core), which take any Source.
        kept = [a for a in sub.attributes if a in set(keep)]
        try:
            if kept and isinstance(anon, KeepsColumns):
                out = anon.publish_keeping(
                    cast(EncodedTable, part),
                    kept,
                    bound,
                    table_rng(seed, sub),
                    progress,
                    hierarchies,
                    sub.enforced_rules,
                )
            else:
                out = anon.publish(
                    cast(EncodedTable, part), sub.enforced_rules, bound, table_rng(seed, sub), progress, hierarchies
                )
        except ConfigError as exc:
            raise ConfigError(str(exc) + _derived_from(sub, g)) from None
    get_kind(out.kind).validate(out)
    return out


def _derived_from(sub: SubTable, g: Guarantee | Mapping[Rule, Guarantee]) -> str:
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


def identity_risk(table: Source, published: AnonymizedTable) -> dict[str, float | int]:
    """Identity risk of one published table: the cells its kind publishes the non-sensitive
    attributes in (a plain table's rows, an Anatomy QIT's values, a generalized table's
    classes), counted from what is published."""
    role, cols = get_kind(published.kind).cells(entry_of("T", published))
    if not cols:
        return {"unique_share": 0.0, "k": table.n_rows, "cells": 1}
    return cell_risk(published.parts[role].cell_sizes(cols), table.n_rows)


def publish(
    table: Source | Mapping[str, Iterable[str]],
    rules: Iterable[RuleItem],
    *,
    l: int | None = None,
    guarantee: Guarantee | Mapping[str, Any] | None = None,
    decomposition: str | Decomposition | None = None,
    anonymizer: str | Anonymizer | None = None,
    seed: int = 0,
    input_info: InputInfo | None = None,
    progress: ProgressHook | None = None,
    columns: ColumnRoles | None = None,
    decomposition_params: Mapping[str, Any] | None = None,
    anonymizer_params: Mapping[str, Any] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    plugin_defaults: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    detach_others: bool = False,
    population: Population | EncodedTable | None = None,
    known_problems: Sequence[tuple[str, VersapubError]] = (),
) -> Release:
    """Publish ``table`` under ``rules``: reduce, check feasibility, decompose into GNF,
    refine (GD), anonymize every sub-table.  Returns the in-memory :class:`Release`; write
    it with :func:`versapub.write_release`, which verifies it from its files first (or run
    the whole job with :mod:`versapub.workflow`).

    ``table`` is an :class:`EncodedTable` (e.g. from :func:`versapub.read_table`) or a
    mapping ``{column: [text values]}``.  ``rules`` are strings ``"a, b -> c"``,
    :class:`Rule` objects, or rules with their own guarantee: ``"a, b -> c | t-closeness:t=0.2"``
    or ``{"rule": "a, b -> c", "guarantee": "t-closeness", "t": 0.2}``.  The guarantee (of
    every rule without its own) defaults to frequency l-diversity with ``l`` (2 when not
    given); when neither ``guarantee`` nor ``l`` is given and the anonymizer has its own
    default (``msa-decomposition``: distinct l-diversity with ``l_per`` per sensitive
    attribute), rules without their own guarantee take that.

    ``decomposition`` and ``anonymizer`` are registered names (built with
    ``decomposition_params`` / ``anonymizer_params``) or plug-in objects: decompositions
    ``uad`` (default, unless the anonymizer names its own: ``msa-decomposition`` uses
    ``multi-sa``), ``gd`` (``stop_when_worse``, ``max_candidates``, ``jobs``),
    ``single-attribute``, ``multi-sa``; anonymizers ``anatomy`` (``grouping``; the default),
    ``multi-sa`` (``time_limit_s``, ``max_combinations``; the default of the multi-sa
    decomposition, whose one table enforces every rule), ``mondrian`` and ``incognito``
    (``suppression``, ``utility``), which generalize, ``msa-decomposition``
    (``primary``, ``above_l_per``; Ye et al.'s SA-groups, one ``l_i`` per sensitive
    attribute), ``sequential-sweep`` (``max_sensitive_level``; functional (tau, lambda)-
    diversity, generalizing sensitive values up their hierarchy where needed) and
    ``one-d-l-diversity`` (Ghinita et al.'s 1-D l-diversity).  With no rules and
    quasi-identifiers declared in ``columns``, the quasi-identifiers are published
    k-anonymous in one generalized table, the other columns published exactly in each
    record's row of it (ARX's insensitive attributes; ``detach_others=True``: in a plain
    table of their own that cannot be linked to it).  ``plugin_defaults``: per
    ``("decomposition" | "anonymizer", name)``, parameters the plug-in takes when it is the
    one chosen (a configuration's shorthand keys; :func:`plugins_for`).  ``columns`` declares column roles
    (:class:`~versapub.privacy.roles.ColumnRoles`): identifying columns are removed, and
    undeclared columns that look like direct identifiers are refused.  Every sub-table is
    anonymized with a generator derived from ``seed`` and the sub-table, so the same
    sub-table is anonymized identically wherever it occurs.  ``hierarchies``
    (``{attribute: Hierarchy}``) go to generalizing anonymizers (``mondrian``) and to
    guarantees that use a sensitive attribute's taxonomy (t-closeness's hierarchical
    distance).  ``population``: the population ``table`` (then the research subset) was
    drawn from (a :class:`~versapub.privacy.population.Population`, or a table read with
    :func:`versapub.read_table`), for delta-presence and k-map without a sampling fraction,
    which are checked against it (Mondrian and Incognito count each class's population).
    Every problem found before anonymizing (``known_problems``: the reader's, e.g. missing
    cells; the rules, the columns' decisions, feasibility) is reported at once, in sections.
    """
    hook = progress or _no_progress
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    if isinstance(table, Mapping):
        table = EncodedTable.from_columns({k: list(v) for k, v in table.items()})
    elif not isinstance(table, EncodedTable) and not hasattr(table, "grouped_count_tables"):
        raise InputError(
            "The table to publish must be an EncodedTable (read with versapub.read_table), a table on a Dask cluster "
            f"(versapub.scale), or a mapping {{column: [values]}}, got {type(table).__name__}."
        )
    if isinstance(guarantee, Mapping):
        guarantee = make_guarantee(dict(guarantee))
    g: Guarantee = guarantee if guarantee is not None else make_guarantee({"name": "l-diversity", "l": l or 2})
    pop = _population(population, table)
    g = with_population(g, pop)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"seed must be a whole number >= 0, got {seed!r}.")
    rng = np.random.default_rng(int(seed))
    dec, anon = plugins_for(decomposition, anonymizer, decomposition_params, anonymizer_params, plugin_defaults)

    hook("checking rules", 0, 1)
    parsed, own = split(rules)
    roles = columns if columns is not None else ColumnRoles()
    if not table.in_memory:
        require_out_of_core(dec, anon, rules, roles, anonymizer)
    # Everything that can be checked before anonymizing, every problem at once (issue 44).
    problems: list[tuple[str, VersapubError]] = list(known_problems)
    qi_only = bool(roles.quasi_identifying or roles.others == "quasi-identifying")
    try:
        validate_rules(parsed, table.names, none_ok=qi_only)
    except RuleError as exc:
        raise refusal([*problems, ("rules", exc)]) from None  # the checks below need valid rules
    # Every column decided (rules, roles, --others), likely identifiers declared one by one.
    roles, by_others, notes, column_issues = column_problems(table, parsed, roles, declared=hierarchies or ())
    problems += column_issues
    classic = not parsed and bool(roles.quasi_identifying)  # k-anonymity of the quasi-identifiers alone
    keep = () if detach_others else insensitive_columns(table.names, parsed, roles)
    try:
        table, warnings = apply_roles(table, parsed, roles, by_others)
    except VersapubError as exc:
        raise refusal([*problems, ("column roles", exc)]) from None
    if classic:
        warnings = []  # every quasi-identifier is protected, by the generalized table
    if guarantee is None and l is None and isinstance(anon, DefaultGuarantees):  # the anonymizer's default
        plain = [r for r in dict.fromkeys(parsed) if needs_default(r, own)]
        own = with_defaults(own, anon.default_guarantees(cast(EncodedTable, table), plain))
    reduction = reduce_rules(parsed)
    per_rule = {r: with_population(x, pop) for r, x in effective(reduction, own, g).items()}
    _population_used(pop, [g] if classic else list(per_rule.values()))
    if pop is not None:  # the input must be drawn from the population: said before any measure of it
        try:
            joint_table(cast(EncodedTable, table), _quasi_identifiers(parsed, roles, table.names), pop)
        except VersapubError as exc:
            raise refusal([*problems, ("population", exc)]) from None
    own_anon = {r: _anonymizer_of(r, spec) for r, spec in effective_anonymizers(reduction, anonymizers(rules)).items()}
    feas: list[Feasibility] = []
    try:
        reach = reach_of(cast(EncodedTable, table), reduction.rules, per_rule, own_anon, anon, hierarchies)
        feas = require_feasible(table, reduction.rules, per_rule, reach)
    except InfeasibleError as exc:
        problems.append(("feasibility", exc))
    if classic:
        refuse(problems)
    lap("rules")

    if classic:
        return _identities_only(
            cast(EncodedTable, table),
            g,
            roles,
            anonymizer,
            anon,
            int(seed),
            hierarchies,
            hook,
            input_info,
            timings,
            lap,
            warnings,
            reduction,
            by_others,
            notes,
            detach_others,
            pop,
        )
    hook("decomposing", 0, 1)
    try:
        schema = dec.decompose(table, reduction.rules, rng)
        verdict = require_gnf(schema, reduction.rules, dec.name)
    except VersapubError as exc:
        raise refusal([*problems, ("decomposition", exc)]) from None
    # The proxy screen on the schema's layout, before anything is anonymized: its refusal
    # joins the others (the screen after anonymizing reuses it when the layout is the same).
    layout = [(sub.name, predicted_unguarded(sub, _anon_for(sub, anon, own_anon), keep)) for sub in schema.tables]
    early = screen(table, list(reduction.rules), layout)
    refused = [a for a in early if a.strong and a.column not in roles.allow_proxy]
    if refused:
        problems.append(("proxies of a protected attribute", InputError(proxy_error(refused))))
    hook("screening sets of columns against the protected attributes", 0, 1)
    sets = proxy_sets(table, reduction.rules, layout, per_rule, roles, hierarchies, [a.column for a in refused])
    if any(p.refused for p in sets):
        problems.append(
            ("proxies made of several columns", InputError(set_proxy_error([p for p in sets if p.refused])))
        )
    refuse(problems)
    lap("proxy sets")
    src = cast(EncodedTable, table)  # GD's scorer: in memory only (require_out_of_core)

    def scorer() -> Callable[[Schema], float]:
        return KLScorer(
            src,
            lambda sub: anonymize(
                src, sub, _anon_for(sub, anon, own_anon), per_rule, int(seed), hierarchies=hierarchies
            ),
        ).score

    schema, trace = dec.refine(schema, reduction.rules, scorer, rng, hook, table.names)
    if trace:
        verdict = require_gnf(schema, reduction.rules, dec.name)
    if schema.attributes != frozenset(table.names):
        missing = sorted(set(table.names) - schema.attributes)
        raise SchemaError(
            f"Internal error: the {dec.name} decomposition left attribute(s) {missing} "
            "unpublished, so nothing was published. Please report this as a bug."
        )
    lap("decompose")

    published = []
    total = len(schema.tables)
    for i, sub in enumerate(schema.tables):
        hook(f"anonymizing {sub.name} ({len(sub.attributes)} attributes)", i, total)
        say = _step_hook(hook, i, total)
        mine = _anon_for(sub, anon, own_anon)
        published.append(
            PublishedTable(sub.name, anonymize(table, sub, mine, per_rule, int(seed), say, hierarchies, keep))
        )
    hook("anonymized", total, total)
    lap("anonymize")

    associations = proxies(table, reduction.rules, published, roles, (layout, early))
    lap("proxies")

    identity = {p.name: identity_risk(table, p.table) for p in published}
    info = input_info or InputInfo(rows_read=table.n_rows + table.n_dropped, rows_dropped_missing=table.n_dropped)
    return Release(
        tables=tuple(published),
        source=cast(EncodedTable, table),  # or a table on a cluster: the same seam (versapub.data.source)
        guarantee=g,
        reduction=reduction,
        feasibility=tuple(feas),
        schema=schema,
        gnf=verdict,
        decomposition=dec.name,
        decomposition_params=dec.params(),
        decomposition_trace=trace,
        anonymizer=anon.name,
        anonymizer_params=anon.params(),
        seed=int(seed),
        input=info,
        timings=timings,
        columns=roles.to_manifest(removed=list(roles.identifying), by_others=by_others),
        identity=identity,
        warnings=warnings,
        notes=notes,
        associations=tuple(associations),
        proxy_sets=tuple(sets),
        hierarchies={
            r.rhs: hierarchies[r.rhs]
            for r in reduction.rules
            if hierarchies and r.rhs in hierarchies and "taxonomy" in per_rule[r].needs()
        },
        rule_guarantees=per_rule,
        rule_anonymizers={r: {"name": a.name, "params": a.params()} for r, a in own_anon.items()},
        population=pop,
    )


def _quasi_identifiers(rules: Sequence[Rule], roles: ColumnRoles, names: Sequence[str]) -> list[str]:
    """The columns an adversary is taken to know: every rule's left-hand side and the
    declared quasi-identifiers, in the table's order."""
    known = {a for r in rules for a in r.lhs} | set(roles.quasi_identifying)
    return [a for a in names if a in known]


def _population(population: Population | EncodedTable | None, table: Source) -> Population | None:
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


def _population_used(population: Population | None, guarantees: Sequence[Guarantee]) -> None:
    """Every guarantee checked against a population has one, and a population given is used
    (nothing is read that no guarantee decided on)."""
    for x in guarantees:
        require_population(x)
    if population is not None and not any("population" in x.needs() for x in guarantees):
        raise ConfigError(
            f"A population ({population.file}) was given, but no guarantee is checked against it: it serves "
            "delta-presence and k-map without a sampling fraction (e.g. --guarantee delta-presence:delta_max=0.5)."
        )


def proxy_sets(
    table: Source,
    rules: Sequence[Rule],
    layout: Sequence[tuple[str, Sequence[str]]],
    guarantees: Mapping[Rule, Guarantee],
    roles: ColumnRoles,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    refused: Sequence[str] = (),
) -> list[SetProxy]:
    """The multi-column proxy screen (:mod:`versapub.privacy.proxy_sets`) on a release's
    layout: each rule's bound is its guarantee's posterior limit, bound to the table; the
    columns the pair screen already refused are left out (one refusal each)."""
    bounds = {r: bind(guarantees[r], table, r.rhs, hierarchies).posterior_limit() for r in rules}
    return screen_sets(table, rules, layout, bounds, allow=roles.allow_proxy, ignore=refused)


def predicted_unguarded(sub: SubTable, anon: Anonymizer, keep: Sequence[str] = ()) -> list[str]:
    """The columns a sub-table will publish exactly beside its guarantee, from the schema
    alone (what its kind's ``unguarded`` will say once published): a plain table's every
    column; a bucketizing anonymizer's (:class:`PublishesExactly`) every column but the
    enforced rules' sensitive ones; a generalizing anonymizer's kept columns."""
    if sub.enforces is None:
        return list(sub.attributes)
    if isinstance(anon, PublishesExactly):
        return [a for a in sub.attributes if a not in {r.rhs for r in sub.enforced_rules}]
    return [a for a in sub.attributes if a in set(keep)] if isinstance(anon, KeepsColumns) else []


def proxies(
    table: Source,
    rules: Iterable[Rule],
    published: Iterable[PublishedTable],
    roles: ColumnRoles,
    screened: tuple[list[tuple[str, list[str]]], list[Association]] | None = None,
) -> list[Association]:
    """The proxy screen (:mod:`versapub.privacy.proxies`): every unprotected column the
    release publishes exactly within reach of a rule's left-hand side, measured against the
    rule's protected attribute on the input.  A proxy the steward has not allowed
    (``roles.allow_proxy``) is an :class:`InputError` naming each with the ways out;
    returns the associations worth listing (allowed proxies among them, marked).
    ``screened``: a layout already screened and what it found, reused when it is the
    published tables' layout."""
    tables = [(p.name, get_kind(p.table.kind).unguarded(entry_of(p.name, p.table))) for p in published]
    same = screened is not None and [(n, sorted(c)) for n, c in screened[0]] == [(n, sorted(c)) for n, c in tables]
    found = screened[1] if screened is not None and same else screen(table, list(rules), tables)
    refused = [a for a in found if a.strong and a.column not in roles.allow_proxy]
    if refused:
        raise InputError(proxy_error(refused))
    return [replace(a, allowed=a.column in roles.allow_proxy) for a in found if a.listed]


def require_out_of_core(
    dec: Decomposition,
    anon: Anonymizer,
    rules: Iterable[RuleItem],
    roles: ColumnRoles,
    asked: str | Anonymizer | None = None,
) -> None:
    """A table that is not in memory (the Dask backend) can be published only by plug-ins
    with the :class:`~versapub.data.source.OutOfCore` capability (the UAD decomposition,
    Anatomy, Mondrian, Incognito and plain tables); the classic one-table job (quasi-identifiers
    without a rule) by the anonymizer it runs (``asked``, else Mondrian).  Checked before
    any record is read."""
    rules = list(rules)
    if not split(rules)[0] and roles.quasi_identifying:
        runs = make_anonymizer("mondrian") if asked is None else anon
        if isinstance(runs, OutOfCore) and (why := getattr(runs, "in_memory_only", None)):  # a parameter's doing
            raise ConfigError(f"On the Dask backend {runs.name} cannot run as asked: {why}.")
        if not isinstance(runs, OutOfCore):
            raise ConfigError(
                f"On the Dask backend the quasi-identifiers alone are generalized by mondrian or incognito; "
                f"{runs.name} cannot keep the other columns in the classes' rows there. Use --anonymizer mondrian, "
                "or the in-memory backend."
            )
        return
    if not isinstance(dec, OutOfCore):
        raise ConfigError(
            f"The Dask backend publishes with the uad decomposition; {dec.name} is not available there (gd scores "
            "many candidate schemas by the KL-divergence of their release model, which needs the records in "
            "memory). Use --decomposition uad, or the in-memory backend on this table or a sample of it."
        )
    for a in [anon, *(_anonymizer_of(r, spec) for r, spec in anonymizers(rules).items())]:
        if isinstance(a, OutOfCore) and (why := getattr(a, "in_memory_only", None)):  # a parameter's doing
            raise ConfigError(f"On the Dask backend {a.name} cannot run as asked: {why}.")
        if not isinstance(a, OutOfCore):
            raise ConfigError(
                f"The Dask backend anonymizes with {_ON_CLUSTER}; {a.name} needs the records in memory "
                f"({getattr(a, 'in_memory_only', 'it reads every record')}). Use one of those, or the in-memory "
                "backend."
            )


#: The anonymizers the Dask backend runs (those with the OutOfCore capability).
_ON_CLUSTER = (
    "anatomy (groups from value counts and ranks), mondrian (rounds of cuts from per-partition histograms) or "
    "incognito (its lattice over distinct rows counted on the cluster)"
)


def reach_of(
    table: EncodedTable,
    rules: Iterable[Rule],
    per_rule: Mapping[Rule, Guarantee],
    own: Mapping[Rule, Anonymizer],
    default: Anonymizer,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> dict[Rule, tuple[Any, str]]:
    """For rules whose anonymizer may generalize sensitive values (Sequential Sweep), the
    induced counts it can reach and the note for a refusal: feasibility is judged on them."""
    out = {}
    for r in rules:
        a = own.get(r, default)
        if isinstance(a, SensitiveGeneralizing):
            got = a.sensitive_reach(table, r, per_rule[r], hierarchies)
            out[r] = (got.counts, got.note)
    return out


def rule_feasibility(
    table: EncodedTable,
    rules: Iterable[RuleItem],
    *,
    guarantee: Guarantee,
    decomposition: str | None = None,
    anonymizer: str | None = None,
    decomposition_params: Mapping[str, Any] | None = None,
    anonymizer_params: Mapping[str, Any] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> list[Feasibility]:
    """Feasibility of the rules as :func:`publish` judges it (each rule's guarantee, and what
    its anonymizer can reach), without publishing; ``rules`` as for :func:`publish`."""
    parsed, own = split(rules)
    validate_rules(parsed, table.names)
    reduction = reduce_rules(parsed)
    per_rule = effective(reduction, own, guarantee)
    _, anon = plugins_for(decomposition, anonymizer, decomposition_params, anonymizer_params)
    own_anon = {r: _anonymizer_of(r, spec) for r, spec in effective_anonymizers(reduction, anonymizers(rules)).items()}
    return feasibility(
        table, reduction.rules, per_rule, reach_of(table, reduction.rules, per_rule, own_anon, anon, hierarchies)
    )


def _anonymizer_of(rule: Rule, spec: str) -> Anonymizer:
    from versapub.plugins import parse_spec

    name, params = parse_spec(spec, f"the anonymizer of rule '{rule}'")
    return make_anonymizer(name, **params)


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


def _anon_for(sub: SubTable, default: Anonymizer, own: Mapping[Rule, Anonymizer]) -> Anonymizer:
    """The anonymizer of a sub-table: its rule's own (a rule a decomposition derived, e.g.
    GD's guardian of part of a left-hand side, takes the own anonymizer of the kept rule on
    its sensitive attribute when there is exactly one), else the release's."""
    if sub.enforces is None:
        return default
    if sub.enforces in own:
        return own[sub.enforces]
    same = {own[r].name: own[r] for r in own if r.rhs == sub.enforces.rhs}
    return next(iter(same.values())) if len(same) == 1 else default


def _identities_only(
    table: EncodedTable,
    g: Guarantee,
    roles: ColumnRoles,
    asked: str | Anonymizer | None,
    anon: Anonymizer,
    seed: int,
    hierarchies: Mapping[str, Hierarchy] | None,
    hook: ProgressHook,
    input_info: InputInfo | None,
    timings: dict[str, float],
    lap: Callable[[str], None],
    warnings: list[str],
    reduction: Any,
    by_others: tuple[str, ...] = (),
    notes: list[str] | None = None,
    detach_others: bool = False,
    population: Population | None = None,
) -> Release:
    """The classic job with quasi-identifiers and no rule: one generalized table whose every
    class of quasi-identifier values holds at least ``k`` records (k-anonymity, Sweeney
    2002), the other columns published exactly in each record's row (ARX's insensitive
    attributes: they stay analysable by the quasi-identifiers), or with ``detach_others``
    as a plain table never linked to the first.  Only a guarantee about identities applies
    (one that needs no sensitive value)."""
    if g.min_possible_values() > 1 or g.needs() - {"population"}:
        raise ConfigError(
            f"Quasi-identifiers without a rule are protected by k-anonymity only; {g.name} protects a sensitive "
            "attribute: name it with --sensitive COLUMN (the rule is then 'QI -> COLUMN') or give --rule."
        )
    if asked is None:
        anon = make_anonymizer("mondrian")
    violation = g.single_attribute_violation(np.array([table.n_rows]))
    if violation is not None:
        raise InfeasibleError(f"Under {g.describe()}: {violation.explanation}.")
    qi = tuple(a for a in table.names if a in roles.quasi_identifying)
    others = tuple(a for a in table.names if a not in qi)
    together = bool(others) and not detach_others
    if together and not isinstance(anon, KeepsColumns):
        raise ConfigError(
            f"The {anon.name} anonymizer cannot keep the other columns ({', '.join(others)}) in the records of "
            "its generalized table; use mondrian or incognito, or publish them apart with --detach-others."
        )
    schema = Schema(
        (SubTable("T1", table.names),)
        if together
        else (SubTable("T1", qi), *((SubTable("T2", others),) if others else ()))
    )
    verdict = require_gnf(schema, [], "k-anonymity of the quasi-identifiers")
    lap("decompose")
    hook(f"anonymizing T1 ({len(qi)} quasi-identifiers)", 0, len(schema.tables))
    try:
        if together:
            first = cast(KeepsColumns, anon).publish_keeping(
                table, others, g, table_rng(seed, schema.tables[0]), _step_hook(hook, 0, 1), hierarchies
            )
        else:
            first = anon.publish(
                table.select(qi), (), g, table_rng(seed, schema.tables[0]), _step_hook(hook, 0, 1), hierarchies
            )
    except ValueError:
        raise ConfigError(
            f"The {anon.name} anonymizer protects a sensitive attribute; k-anonymity of quasi-identifiers needs a "
            "generalizing anonymizer (mondrian or incognito)."
        ) from None
    get_kind(first.kind).validate(first)
    published = [PublishedTable("T1", first)]
    if others and not together:
        published.append(PublishedTable("T2", publish_plain(table.select(others))))
    hook("anonymized", 1, 1)
    lap("anonymize")
    identity = {p.name: identity_risk(table, p.table) for p in published}
    info = input_info or InputInfo(rows_read=table.n_rows + table.n_dropped, rows_dropped_missing=table.n_dropped)
    return Release(
        tables=tuple(published),
        source=table,
        guarantee=g,
        reduction=reduction,
        feasibility=(),
        schema=schema,
        gnf=verdict,
        decomposition="none",
        anonymizer=anon.name,
        anonymizer_params=anon.params(),
        seed=seed,
        input=info,
        timings=timings,
        columns=roles.to_manifest(removed=list(roles.identifying), by_others=by_others),
        identity=identity,
        warnings=warnings,
        notes=list(notes or []),
        population=population,
    )


def plugins_for(
    decomposition: str | Decomposition | None,
    anonymizer: str | Anonymizer | None,
    decomposition_params: Mapping[str, Any] | None = None,
    anonymizer_params: Mapping[str, Any] | None = None,
    defaults: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
) -> tuple[Decomposition, Anonymizer]:
    """The one place that turns names and parameters (config, command line, Python) into
    plug-in objects.  ``defaults``: per ``("decomposition" | "anonymizer", name)``, the
    parameters that plug-in takes when it is the one chosen (a configuration's ``gd_*`` and
    ``multi_sa_*`` keys), below the explicit parameters.  Without a decomposition, the
    anonymizer's ``default_decomposition`` (if it has one) or ``uad``."""
    preset = {(role, name.strip().lower()): dict(v) for (role, name), v in (defaults or {}).items()}
    if decomposition is None:
        named = make_anonymizer(anonymizer) if isinstance(anonymizer, str) else anonymizer
        decomposition = named.default_decomposition if isinstance(named, DefaultDecomposition) else "uad"
    if isinstance(decomposition, str):
        d_params = {
            **preset.get(("decomposition", decomposition.strip().lower()), {}),
            **dict(decomposition_params or {}),
        }
        dec: Decomposition = make_decomposition(decomposition, **d_params)
    else:
        dec = decomposition
    if anonymizer is None or isinstance(anonymizer, str):
        name = anonymizer or dec.default_anonymizer
        a_params = {**preset.get(("anonymizer", name.strip().lower()), {}), **dict(anonymizer_params or {})}
        anon: Anonymizer = make_anonymizer(name, **a_params)
    else:
        anon = anonymizer
    return dec, anon
