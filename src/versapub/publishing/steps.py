"""The named steps of :func:`versapub.api.publish`, in order: :func:`prepare` (the request
as values), :func:`decide_columns` (rules valid, every column decided, roles applied),
:func:`decide_guarantees` (each rule's guarantee and anonymizer, the population, feasibility),
:func:`decompose` (the schema in GNF), :func:`screen_schema` (proxies on the schema's layout,
before anything is anonymized), :func:`refine` (GD), :func:`anonymize_all` and
:func:`assemble` (the screens on what is published, the :class:`Release`).  Every problem
found before anonymizing is collected in ``problems`` and refused at once, in sections."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from versapub.anonymizers.base import Anonymizer, DefaultGuarantees, PublishesSensitiveJoint, SensitiveGeneralizing
from versapub.anonymizers.generalizing.population import joint_table
from versapub.data.hierarchy import Hierarchy
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.decompositions import Decomposition
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
from versapub.kinds.scoring import KLScorer
from versapub.privacy.feasibility import Feasibility, require_feasible
from versapub.privacy.guarantees.context import with_population
from versapub.privacy.guarantees.guarantee import Guarantee, make_guarantee
from versapub.privacy.guarantees.population import Population
from versapub.privacy.per_rule import (
    RuleItem,
    anonymizers,
    effective,
    effective_anonymizers,
    needs_default,
    split,
    with_defaults,
)
from versapub.privacy.rules import Reduction, Rule, reduce_rules, validate_rules
from versapub.privacy.screens.proxies import Association, proxy_error, screen
from versapub.privacy.screens.proxy_sets import SetProxy, set_proxy_error
from versapub.privacy.screens.roles import ColumnRoles, apply_roles, column_problems
from versapub.publishing.after_removal import after_removal, removal_notes
from versapub.publishing.choice import anon_for, anonymizer_of, plugins_for, reach_of, require_out_of_core
from versapub.publishing.keys import KeyVariables
from versapub.publishing.removal import without_removed
from versapub.publishing.screens import population_of, population_used, proxies, proxy_sets, quasi_identifiers
from versapub.publishing.tables import (
    ProgressHook,
    anonymize,
    identity_risk,
    insensitive_columns,
    no_progress,
    plain_under_floor,
    predicted_unguarded,
    step_hook,
)
from versapub.release.value import InputInfo, PublishedTable, Release, Removal
from versapub.schema.gnf import GNFVerdict, require_gnf
from versapub.schema.model import Schema
from versapub.treatments import parse_treatment

#: A problem found before anonymizing: its section's title and the error.
Problem = tuple[str, VersapubError]


class Clock:
    """Each step's wall time, in the order the steps ran (the manifest's ``timings``)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = now - self._last
        self._last = now


@dataclass(frozen=True)
class Job:
    """A publish request as values: the table, the rules as written (``items``; ``parsed``
    and each rule's ``own`` guarantee), the release guarantee (with the population bound),
    the plug-ins, the seed and its generator, the column roles and what goes with them."""

    table: Source
    items: tuple[RuleItem, ...]
    parsed: tuple[Rule, ...]
    own: Mapping[Rule, Sequence[Guarantee | None]]
    guarantee: Guarantee
    guarantee_given: bool
    dec: Decomposition
    anon: Anonymizer
    asked_anonymizer: str | Anonymizer | None
    seed: int
    rng: np.random.Generator
    roles: ColumnRoles
    hierarchies: Mapping[str, Hierarchy] | None
    detach_others: bool
    population: Population | None
    input_info: InputInfo | None
    hook: ProgressHook = no_progress
    #: The floor on published cells (``--k``, ``--max-risk``): 1 for none.
    floor: int = 1
    #: The share of records the floor's recoding may remove instead of generalizing further.
    suppression: float = 0.0
    #: Treatments applied to the input before anything else (:mod:`versapub.treatments`).
    treatments: tuple[Any, ...] = ()
    #: Once treated (:mod:`versapub.publishing.treating`): the input as read, each
    #: treatment's manifest record and its sentence for the summary and the report.
    untreated: Source | None = None
    treated: tuple[dict[str, Any], ...] = ()
    treatment_notes: tuple[str, ...] = ()
    #: The seed was given (``--seed``): treatments that draw use it and say so loudly;
    #: otherwise they draw from the operating system's entropy (the draws stay secret).
    seed_given: bool = False
    #: What the treatments changed, measured record by record (the manifest's ``perturbation``).
    perturbation: dict[str, Any] | None = None
    #: The key variables the floor counts and how its suppression works (``--keys``,
    #: ``--suppression-mode``, ``--importance``; :mod:`versapub.publishing.keys`).
    keys: KeyVariables = field(default_factory=KeyVariables)

    def requested(self) -> dict[str, Any]:
        """The manifest's ``job`` block: the floor and the suppression asked for, and the keys."""
        return {"floor": self.floor, "suppression": self.suppression, **self.keys.to_manifest()}


def cell_floor(k: int | None, max_risk: float | None, risk_measure: str = "highest") -> int:
    """The floor on published cells a job states: ``k``, and a ceiling ``R`` on the highest
    prosecutor risk as ``ceil(1/R)`` (the average risk, cells / records, is no floor: it is
    checked when the release is written)."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InputError(f"k is a whole number >= 1 (every published cell holds at least k records), got {k!r}.")
    floor = k or 1
    if max_risk is not None:
        if isinstance(max_risk, bool) or not isinstance(max_risk, int | float) or not 0 < max_risk <= 1:
            raise InputError(f"max_risk is a probability in (0, 1], got {max_risk!r}.")
        if risk_measure == "highest":
            floor = max(floor, math.ceil(1 / max_risk - 1e-9))
    return floor


def prepare(
    table: Source | Mapping[str, Iterable[str]],
    rules: Iterable[RuleItem],
    *,
    l: int | None,
    guarantee: Guarantee | Mapping[str, Any] | None,
    plugins: Mapping[str, Any],
    seed: int | None,
    columns: ColumnRoles | None,
    hierarchies: Mapping[str, Hierarchy] | None,
    population: Population | EncodedTable | None,
    detach_others: bool = False,
    input_info: InputInfo | None = None,
    progress: ProgressHook | None = None,
    floor: int = 1,
    suppression: float = 0.0,
    treatments: Sequence[Any] = (),
    keys: KeyVariables | None = None,
) -> Job:
    """The request checked and turned into values; ``plugins`` holds
    :func:`~versapub.publishing.choice.plugins_for`'s arguments (``decomposition``,
    ``anonymizer``, their parameters and ``defaults``).  The Dask backend's limits are
    checked here, before any record is read."""
    if isinstance(table, Mapping):
        table = EncodedTable.from_columns({k: list(v) for k, v in table.items()})
    elif not isinstance(table, EncodedTable) and not hasattr(table, "grouped_count_tables"):
        raise InputError(
            "The table to publish must be an EncodedTable (read with versapub.read_table), a table on a Dask cluster "
            f"(versapub.scale), or a mapping {{column: [values]}}, got {type(table).__name__}."
        )
    given = guarantee is not None or l is not None
    if isinstance(guarantee, Mapping):
        guarantee = make_guarantee(dict(guarantee))
    g: Guarantee = guarantee if guarantee is not None else make_guarantee({"name": "l-diversity", "l": l or 2})
    pop = population_of(population, table)
    seed_given = seed is not None
    seed = 0 if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"seed must be a whole number >= 0, got {seed!r}.")
    dec, anon = plugins_for(**plugins)
    if isinstance(suppression, bool) or not isinstance(suppression, int | float) or not 0 <= suppression < 1:
        raise InputError(f"suppression is the share of records that may be removed, in [0, 1), got {suppression!r}.")
    if suppression and floor <= 1:  # issue 63: an option that would do nothing is refused, not ignored
        raise ConfigError(
            f"--suppression {suppression:g} is the share of records that may be removed to meet a floor on published "
            "cells, and this job sets none: give --k K (or --max-risk R with the highest risk), or leave "
            "--suppression out (a generalizing anonymizer's own is mondrian:suppression=S or incognito:suppression=S)."
        )
    keys = keys or KeyVariables()
    keys.check_columns(list(table.names))
    if floor <= 1 and (keys.suppression_mode != "remove" or keys.importance):
        raise ConfigError(
            "--suppression-mode and --importance say how a floor on published cells is met, and this job sets none: "
            "give --k K (or --max-risk R), or leave them out (--keys alone names the columns the previews and the "
            "identity verdict count)."
        )
    items = tuple(rules)
    parsed, own = split(items)
    roles = columns if columns is not None else ColumnRoles()
    if not table.in_memory:
        require_out_of_core(dec, anon, items, roles, plugins.get("anonymizer"))
    parsed_treatments = tuple(parse_treatment(t) for t in treatments)
    _require_untreated_population(pop, parsed_treatments)
    _require_household_unit(keys, roles, floor, anon)
    return Job(
        table=cast(Source, table),
        items=items,
        parsed=tuple(parsed),
        own=own,
        guarantee=with_population(g, pop),
        guarantee_given=given,
        dec=dec,
        anon=anon,
        asked_anonymizer=plugins.get("anonymizer"),
        seed=int(seed),
        rng=np.random.default_rng(int(seed)),
        seed_given=seed_given,
        roles=roles,
        hierarchies=hierarchies,
        detach_others=detach_others,
        population=pop,
        input_info=input_info,
        hook=progress or no_progress,
        floor=floor,
        suppression=float(suppression),
        treatments=parsed_treatments,
        keys=keys,
    )


def _require_household_unit(keys: KeyVariables, roles: ColumnRoles, floor: int, anon: Anonymizer) -> None:
    """``--unit household`` counts households: it needs the household id and a floor, and its
    suppression removes whole households — local suppression (values) and an anonymizer's own
    suppression (records) would not (issue 68)."""
    if keys.unit != "household":
        return
    if roles.household is None:
        raise ConfigError("--unit household counts households: name the household id column with --household COLUMN.")
    if floor <= 1:
        raise ConfigError(
            "--unit household says what --k counts, and this job sets no floor: give --k K (or --max-risk R)."
        )
    if keys.suppression_mode != "remove":
        raise ConfigError(
            "--unit household removes whole households to meet the floor; --suppression-mode cells suppresses single "
            "values: leave --suppression-mode out with --unit household."
        )
    if float(anon.params().get("suppression") or 0) > 0:
        raise ConfigError(
            f"--unit household removes whole households within --suppression; the {anon.name} anonymizer's own "
            f"suppression would remove single records: leave {anon.name}:suppression out (use --suppression)."
        )


def _require_untreated_population(pop: Population | None, treatments: Sequence[Any]) -> None:
    """A population is matched to the published classes on its values as read; a column the
    treatments change would be matched on values the release no longer holds (the long
    sweep's case, issue 63: income top-coded at 49 in the input, a class of 52 from the
    population published, exit 3): refused before anything is read further, with the ways out."""
    if pop is None:
        return
    treated = sorted({c for t in treatments for c in t.columns} & set(pop.table.names))
    if treated:
        raise ConfigError(
            f"The treatments change {', '.join(map(repr, treated))}, which the population ({pop.file}) holds as read: "
            "delta-presence and k-map against a population match it to the published classes on the same values. "
            "Leave the treatment of these columns out, or use k-map with a sampling fraction instead of the "
            "population (--guarantee k-map:k=K,fraction=F, without --population)."
        )


@dataclass(frozen=True)
class Columns:
    """Every column decided: the table with the roles applied, the roles, the columns
    decided by ``--others``, notes and warnings for the report, the columns kept exactly
    beside a generalized table's classes, and whether the job is the classic one
    (quasi-identifiers alone, no rule)."""

    table: Source
    roles: ColumnRoles
    by_others: tuple[str, ...]
    notes: list[str]
    warnings: list[str]
    keep: tuple[str, ...]
    classic: bool
    #: The table before its exactly published columns were recoded to meet the floor
    #: (:mod:`versapub.publishing.recoding`; ``None``: not recoded).
    unrecoded: Source | None = None
    #: Records that recoding removed (the job's ``suppression``): how many, why, the budget.
    removed: Removal | None = None
    #: Local suppression's record (the manifest's ``suppressed``; ``None``: not asked for).
    suppressed: dict[str, Any] | None = None
    #: The input's rows ``table`` holds when whole households were removed (``--unit household``).
    kept_rows: Any = None


def decide_columns(job: Job, problems: list[Problem]) -> Columns:
    """The rules are valid (refused at once otherwise: the later checks need them), every
    column is decided (rules, roles, ``--others``; likely identifiers declared one by one:
    their problems join ``problems``) and the roles are applied."""
    roles, table = job.roles, job.table
    qi_only = bool(roles.quasi_identifying or roles.others == "quasi-identifying")
    try:
        validate_rules(job.parsed, table.names, none_ok=qi_only)
    except RuleError as exc:
        raise refusal([*problems, ("rules", exc)]) from None
    roles, by_others, notes, column_issues = column_problems(
        table, job.parsed, roles, declared=job.hierarchies or (), perturbed=perturbed_columns(job)
    )
    problems += column_issues
    classic = not job.parsed and bool(roles.quasi_identifying)  # k-anonymity of the quasi-identifiers alone
    keep = () if job.detach_others else insensitive_columns(table.names, job.parsed, roles)
    try:
        table, warnings = apply_roles(table, job.parsed, roles, by_others)
    except VersapubError as exc:
        raise refusal([*problems, ("column roles", exc)]) from None
    lost = list(dict.fromkeys(c for t in job.treatments for c in t.columns if c not in table.names))
    if lost:  # issue 63: a treatment of a column the release drops would do nothing
        problems.append(
            (
                "treatments",
                ConfigError(
                    f"--treat names {', '.join(map(repr, lost))}, which the release removes (declared identifying): "
                    "the treatment would change nothing published. Leave the treatment out, or publish the column "
                    "(declare it --insensitive or --quasi-identifying) to treat it."
                ),
            )
        )
    if classic:
        warnings = []  # every quasi-identifier is protected, by the generalized table
    return Columns(table, roles, tuple(by_others), notes, warnings, keep, classic)


#: Treatments that change a column's values at random or by groups (not a value rule).
PERTURBING = ("noise", "microaggregation", "rank-swapping")


def perturbed_columns(job: Job) -> dict[str, str]:
    """The columns a treatment perturbed (noise, microaggregation, rank swapping), each with
    what distance-based record linkage measured of the treated numeric columns (the
    identifier screen judges them by it, not by uniqueness)."""
    linkage = (job.perturbation or {}).get("record_linkage") if isinstance(job.perturbation, dict) else None
    said = (
        f"{linkage['share']:.1%} of the records' nearest input record on the treated numeric columns is their own "
        "(distance-based record linkage; the summary's treatment risk)"
        if isinstance(linkage, dict) and "share" in linkage
        else "its record linkage is in the summary's treatment risk"
    )
    return {str(c): said for r in job.treated if r.get("name") in PERTURBING for c in r.get("columns") or []}


@dataclass(frozen=True)
class Guarded:
    """Each rule's guarantee and anonymizer: the reduced rules, their effective guarantees
    (``per_rule``), the rules' own anonymizers and their feasibility."""

    reduction: Reduction
    per_rule: Mapping[Rule, Guarantee]
    own_anon: Mapping[Rule, Anonymizer]
    feasibility: tuple[Feasibility, ...]


def decide_guarantees(job: Job, cols: Columns, problems: list[Problem]) -> Guarded:
    """Each rule's guarantee (its own, the release's, or the anonymizer's default when the
    user gave none), the population used and the input drawn from it, each rule's own
    anonymizer, and feasibility (judged on what that anonymizer can reach)."""
    own, pop, table = job.own, job.population, cast(EncodedTable, cols.table)
    if not job.guarantee_given and isinstance(job.anon, DefaultGuarantees):  # the anonymizer's default
        plain = [r for r in dict.fromkeys(job.parsed) if needs_default(r, own)]
        own = with_defaults(own, job.anon.default_guarantees(table, plain))
    reduction = reduce_rules(job.parsed)
    per_rule = {r: with_population(x, pop) for r, x in effective(reduction, own, job.guarantee).items()}
    population_used(pop, [job.guarantee] if cols.classic else list(per_rule.values()))
    if pop is not None:  # the input must be drawn from the population: said before any measure of it
        try:
            joint_table(table, quasi_identifiers(job.parsed, cols.roles, table.names), pop)
        except VersapubError as exc:
            raise refusal([*problems, ("population", exc)]) from None
    own_anon = {r: anonymizer_of(r, s) for r, s in effective_anonymizers(reduction, anonymizers(job.items)).items()}
    feas: list[Feasibility] = []
    try:
        reach = reach_of(table, reduction.rules, per_rule, own_anon, job.anon, job.hierarchies)
        feas = require_feasible(table, reduction.rules, per_rule, reach)
    except InfeasibleError as exc:
        problems.append(("feasibility", exc))
    return Guarded(reduction, per_rule, own_anon, tuple(feas))


def decompose(job: Job, cols: Columns, rules: Guarded, problems: list[Problem]) -> tuple[Schema, GNFVerdict]:
    """The decomposition's schema and its verdict: in Guardian Normal Form, or refused."""
    job.hook("decomposing", 0, 1)
    try:
        schema = job.dec.decompose(cols.table, rules.reduction.rules, job.rng)
        verdict = require_gnf(schema, rules.reduction.rules, job.dec.name)
    except VersapubError as exc:
        raise refusal([*problems, ("decomposition", exc)]) from None
    exposed = exactly_published_sensitive(job, cols, rules, schema)
    if exposed is not None:
        problems.append(("feasibility", exposed))
    across = across_sensitive(job, rules, schema)
    if across is not None:
        problems.append(("the anonymizer", across))
    return schema, verdict


def across_sensitive(job: Job, rules: Guarded, schema: Schema) -> ConfigError | None:
    """A rule of the job whose left-hand side holds another rule's sensitive attribute, both
    in a table whose anonymizer publishes the sensitive attributes' joint exactly
    (:class:`PublishesSensitiveJoint`: the MSA decomposition's ``T^S``): the rule cannot hold
    there (issue 63). None: no such rule."""
    for sub in schema.tables:
        anon = anon_for(sub, job.anon, rules.own_anon)
        if sub.enforces is None or not isinstance(anon, PublishesSensitiveJoint):
            continue
        sens = {r.rhs for r in sub.enforced_rules}
        for r in rules.reduction.rules:
            known = [a for a in r.lhs if a in sens] if r.rhs in sens else []
            if known:
                return ConfigError(
                    f"The {anon.name} anonymizer publishes the joint of its sensitive attributes "
                    f"({', '.join(sorted(sens))}) exactly in table {sub.name}, so rule '{r}', whose left-hand side "
                    f"holds the sensitive {', '.join(known)}, cannot hold there: anyone who knows that value reads "
                    f"{r.rhs!r}'s distribution beside it. Use the default anonymizer (anatomy, whose decomposition "
                    "keeps the two attributes in separate tables), or drop one of the rules."
                )
    return None


def exactly_published_sensitive(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> InfeasibleError | None:
    """A rule judged feasible only as far as its anonymizer may generalize the sensitive
    attribute (Sequential Sweep) whose attribute the schema also publishes exactly — in a
    plain table, or beside another rule — is infeasible after all: that table publishes its
    exact distribution (Lemma 1's premise, issue 63). None: no such rule."""
    reaching = {r for r in rules.reduction.rules if isinstance(rules.own_anon.get(r, job.anon), SensitiveGeneralizing)}
    bad = []
    for r in reaching:
        elsewhere = [
            t.name
            for t in schema.tables
            if r.rhs in t.attributes
            and not (
                t.enforces is not None
                and any(e.rhs == r.rhs for e in t.enforced_rules)
                and isinstance(anon_for(t, job.anon, rules.own_anon), SensitiveGeneralizing)
            )
        ]
        if elsewhere:
            try:
                require_feasible(cols.table, [r], rules.per_rule)
            except InfeasibleError as exc:
                bad.append(
                    f"table {elsewhere[0]} publishes {r.rhs!r} exactly, which the rule's anonymizer cannot "
                    f"generalize there: {exc}"
                )
    if not bad:
        return None
    return InfeasibleError(
        "; ".join(bad) + " Generalize the attribute when it is read (--hierarchy COLUMN=FILE:LEVEL), or drop the "
        "rule that makes it another rule's left-hand side."
    )


@dataclass(frozen=True)
class Screened:
    """The proxy screens on the schema's layout: each table's exactly published columns,
    the associations found, and the sets of columns that together recover a protected one."""

    layout: list[tuple[str, list[str]]]
    early: list[Association]
    sets: list[SetProxy]


def screen_schema(job: Job, cols: Columns, rules: Guarded, schema: Schema, problems: list[Problem]) -> Screened:
    """The proxy screens on the schema's layout, before anything is anonymized (their
    refusals join the others; the screen after anonymizing reuses this one when the layout
    is the same), then every problem found so far refused at once."""
    rs = list(rules.reduction.rules)
    layout = [(s.name, predicted_unguarded(s, anon_for(s, job.anon, rules.own_anon), cols.keep)) for s in schema.tables]
    early = screen(cols.table, rs, layout, truth=job.untreated)
    refused = [a for a in early if a.strong and a.column not in cols.roles.allow_proxy]
    if refused:
        problems.append(("proxies of a protected attribute", InputError(proxy_error(refused))))
    job.hook("screening sets of columns against the protected attributes", 0, 1)
    sets = proxy_sets(
        cols.table, rs, layout, rules.per_rule, cols.roles, job.hierarchies, [a.column for a in refused], job.untreated
    )
    if any(p.refused for p in sets):
        problems.append(
            ("proxies made of several columns", InputError(set_proxy_error([p for p in sets if p.refused])))
        )
    refuse(problems)
    return Screened(layout, early, sets)


def refine(
    job: Job,
    cols: Columns,
    rules: Guarded,
    schema: Schema,
    verdict: GNFVerdict,
    admits: Callable[[Schema], bool] = lambda _: True,
) -> tuple[Schema, GNFVerdict, list[Any]]:
    """GD's refinement (other decompositions return the schema unchanged): candidate schemas
    scored by the KL-divergence of their release model, each table anonymized as it would
    be published, but those the job cannot publish (``admits``: its floor on published
    cells) scored ``math.inf``, never taken; the refined schema is checked for GNF again
    and must publish every column."""
    src = cast(EncodedTable, cols.table)  # GD's scorer: in memory only (require_out_of_core)

    def scorer() -> Callable[[Schema], float]:
        def one(sub: Any) -> Any:
            mine = anon_for(sub, job.anon, rules.own_anon)
            return anonymize(src, sub, mine, rules.per_rule, job.seed, hierarchies=job.hierarchies, floor=job.floor)

        kl = KLScorer(src, one).score
        return lambda candidate: kl(candidate) if admits(candidate) else math.inf

    rs = rules.reduction.rules
    schema, trace = job.dec.refine(schema, rs, scorer, job.rng, job.hook, cols.table.names)
    if trace:
        verdict = require_gnf(schema, rs, job.dec.name)
    if schema.attributes != frozenset(cols.table.names):
        missing = sorted(set(cols.table.names) - schema.attributes)
        raise SchemaError(
            f"Internal error: the {job.dec.name} decomposition left attribute(s) {missing} "
            "unpublished, so nothing was published. Please report this as a bug."
        )
    return schema, verdict, list(trace)


def anonymize_all(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> list[PublishedTable]:
    """Every sub-table of the schema published by its anonymizer, progress per table."""
    published = []
    total = len(schema.tables)
    for i, sub in enumerate(schema.tables):
        job.hook(f"anonymizing {sub.name} ({len(sub.attributes)} attributes)", i, total)
        mine = anon_for(sub, job.anon, rules.own_anon)
        say = step_hook(job.hook, i, total)
        shared = frozenset(a for t in schema.tables if t is not sub for a in t.attributes)
        out = anonymize(
            cols.table,
            sub,
            mine,
            rules.per_rule,
            job.seed,
            say,
            job.hierarchies,
            cols.keep,
            job.floor,
            shared,
            job.keys,
        )
        published.append(PublishedTable(sub.name, out))
    job.hook("anonymized", total, total)
    return published


def input_of(job: Job, table: Source) -> InputInfo:
    """What was read: the caller's account, else the table's rows and those dropped."""
    return job.input_info or InputInfo(rows_read=table.n_rows + table.n_dropped, rows_dropped_missing=table.n_dropped)


@dataclass(frozen=True)
class Outcome:
    """What the steps produced: the schema and its verdict, GD's trace, the published
    tables, the screens on the schema's layout and the clock."""

    schema: Schema
    verdict: GNFVerdict
    trace: list[Any]
    published: list[PublishedTable]
    screened: Screened
    clock: Clock = field(default_factory=Clock)
    #: The recoding that met the floor, as the manifest's ``recoded`` (``None``: none).
    recoded: dict[str, Any] | None = None
    #: Without ``--k``: what ``--k 3`` and ``--k 5`` would cost (:mod:`versapub.publishing.preview`).
    k_preview: dict[str, Any] | None = None
    #: The household id removed and the household figures (:mod:`versapub.publishing.households`).
    household: dict[str, Any] | None = None


def assemble(job: Job, cols: Columns, rules: Guarded, out: Outcome) -> Release:
    """The proxy screen on what is published (refusing a proxy the steward has not allowed),
    each table's identity risk, and the :class:`Release`."""
    subs = {sub.name: sub for sub in out.schema.tables}

    def again(kept: Source, p: PublishedTable) -> Any:  # a plain table of the records kept, under the floor
        sub, held = subs[p.name], {a for s in out.schema.tables if s.name != p.name for a in s.attributes}
        part = kept.select(p.table.attributes)
        return plain_under_floor(
            part, sub, job.seed, job.hierarchies, job.floor, job.keys, bool(held & set(sub.attributes))
        )

    table, published, removal = without_removed(cols.table, out.published, again)
    if removal is not None and cols.removed is not None:
        raise InputError(
            f"Both --suppression (the floor's, {cols.removed.records:,} record(s)) and the {job.anon.name} "
            f"anonymizer's suppression ({removal.records:,}) removed records; use one of them."
        )
    removal = removal or cols.removed
    treated = after_removal(job.treated, cast(EncodedTable, table)) if removal is not None else job.treated
    associations = proxies(
        table,
        rules.reduction.rules,
        published,
        cols.roles,
        (out.screened.layout, out.screened.early),
        job.untreated if removal is None and cols.unrecoded is None else None,  # the same rows, the original S
    )
    out.clock.lap("proxies")
    hierarchies = job.hierarchies or {}
    return Release(
        tables=tuple(published),
        source=cast(EncodedTable, table),  # or a table on a cluster: the same seam (versapub.data.source)
        guarantee=job.guarantee,
        reduction=rules.reduction,
        feasibility=rules.feasibility,
        schema=out.schema,
        gnf=out.verdict,
        decomposition=job.dec.name,
        decomposition_params=job.dec.params(),
        decomposition_trace=out.trace,
        anonymizer=job.anon.name,
        anonymizer_params=job.anon.params(),
        seed=job.seed,
        input=input_of(job, table),
        timings=out.clock.timings,
        columns=cols.roles.to_manifest(removed=list(cols.roles.identifying), by_others=cols.by_others),
        identity={p.name: identity_risk(table, p.table, job.keys) for p in published},
        warnings=[*cols.warnings, *removal_notes(treated)],
        notes=cols.notes,
        associations=tuple(associations),
        proxy_sets=tuple(out.screened.sets),
        hierarchies={
            r.rhs: hierarchies[r.rhs]
            for r in rules.reduction.rules
            if r.rhs in hierarchies and "taxonomy" in rules.per_rule[r].needs()
        },
        rule_guarantees=dict(rules.per_rule),
        rule_anonymizers={r: {"name": a.name, "params": a.params()} for r, a in rules.own_anon.items()},
        population=job.population,
        removed=removal,
        recoded=out.recoded,
        suppressed=cols.suppressed,
        k_preview=out.k_preview,
        household=out.household,
        verified_against=whole_input(cols, removal is not None, job.untreated),
        treatments=treated,
        perturbation=job.perturbation,
        requested=job.requested(),
    )


def whole_input(cols: Columns, removed: bool, untreated: Source | None = None) -> EncodedTable | None:
    """The table a release is checked against when that is not its ``source``: the input
    before treatments and recoding (the verifier applies them from the manifest) or with the
    records suppression removed (the verifier finds them in no table)."""
    if untreated is not None:  # treated: the input as read, its columns as published
        names = list((cols.unrecoded if cols.unrecoded is not None else cols.table).names)
        hh = cols.roles.household  # treatments drawn per household: the verifier reads the households
        if hh is not None and hh in untreated.names and hh not in names:
            names.append(hh)
        return cast(EncodedTable, untreated).select(names)
    if cols.unrecoded is not None:  # recoded (and perhaps reduced): the input as read
        return cast(EncodedTable, cols.unrecoded)
    return cast(EncodedTable, cols.table) if removed else None
