"""The Python API: the one place that wires the layers together (the steps of
:func:`publish` are :mod:`versapub.publishing.steps`).

>>> from versapub import datasets, publish
>>> release = publish(datasets.running_example(), datasets.RUNNING_EXAMPLE_RULES, l=2, seed=1)
>>> release.gnf.ok
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from versapub.anonymizers.base import Anonymizer
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.decompositions import Decomposition
from versapub.errors import ConfigError, VersapubError, refuse
from versapub.privacy.guarantees.guarantee import Guarantee
from versapub.privacy.per_rule import RuleItem
from versapub.privacy.rules import Rule
from versapub.privacy.screens.roles import ColumnRoles
from versapub.publishing.choice import plugins_for, require_out_of_core, rule_feasibility
from versapub.publishing.households import household_figures, household_floor
from versapub.publishing.identities import identities_only
from versapub.publishing.keys import KeyVariables
from versapub.publishing.preview import k_preview
from versapub.publishing.recoding import floor_admits, for_floor
from versapub.publishing.request import Method, Privacy, from_long_form
from versapub.publishing.steps import (
    Clock,
    Job,
    Outcome,
    Problem,
    anonymize_all,
    assemble,
    cell_floor,
    decide_columns,
    decide_guarantees,
    decompose,
    prepare,
    refine,
    screen_schema,
)
from versapub.publishing.tables import ProgressHook, anonymize, identity_risk, table_rng
from versapub.publishing.treating import treat
from versapub.release.value import InputInfo, Release
from versapub.treatments import Treatment

__all__ = [
    "ProgressHook",
    "anonymize",
    "identity_risk",
    "plugins_for",
    "publish",
    "require_out_of_core",
    "rule_feasibility",
    "table_rng",
]


def publish(
    table: Source | Mapping[str, Iterable[str]],
    rules: Iterable[RuleItem],
    *,
    l: int | None = None,
    guarantee: Guarantee | Mapping[str, Any] | None = None,
    decomposition: str | Decomposition | None = None,
    anonymizer: str | Anonymizer | None = None,
    seed: int | None = None,
    columns: ColumnRoles | None = None,
    treatments: Sequence[str | Mapping[str, Any] | Treatment] = (),
    privacy: Privacy | None = None,
    method: Method | None = None,
    input_info: InputInfo | None = None,
    progress: ProgressHook | None = None,
    known_problems: Sequence[tuple[str, VersapubError]] = (),
    **long_form: Any,
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

    The keyword groups mirror the job's sections (:mod:`versapub.publishing.request`):
    ``privacy=Privacy(k=, max_risk=, risk_measure=, keys=, suppression=, suppression_mode=,
    importance=, population=)`` and ``method=Method(decomposition_params=, anonymizer_params=,
    plugin_defaults=, hierarchies=, detach_others=)``; each of those as its own keyword (the
    long form) keeps working for a deprecation period, with a ``DeprecationWarning``.

    ``decomposition`` and ``anonymizer`` are registered names (built with
    ``decomposition_params`` / ``anonymizer_params``; ``publish --help`` lists them with
    their parameters) or plug-in objects: decompositions ``uad`` (default), ``gd``,
    ``single-attribute``, ``multi-sa``; anonymizers ``anatomy`` (the default), ``multi-sa``,
    ``mondrian`` and ``incognito`` (which generalize), ``msa-decomposition``, ``sequential-sweep`` and
    ``one-d-l-diversity`` (Ghinita et al.'s 1-D l-diversity).  With no rules and
    quasi-identifiers declared in ``columns``, the quasi-identifiers are published
    k-anonymous in one generalized table, the other columns published exactly in each
    record's row of it (ARX's insensitive attributes; ``detach_others=True``: in a plain
    table of their own that cannot be linked to it).  ``plugin_defaults``: per
    ``("decomposition" | "anonymizer", name)``, parameters the plug-in takes when it is the
    one chosen (a configuration's shorthand keys; :func:`plugins_for`).  ``columns`` declares column roles
    (:class:`~versapub.privacy.screens.roles.ColumnRoles`): identifying columns are removed, and
    undeclared columns that look like direct identifiers are refused.  Every sub-table is
    anonymized with a generator derived from ``seed`` and the sub-table, so the same
    sub-table is anonymized identically wherever it occurs.  ``hierarchies``
    (``{attribute: Hierarchy}``) go to generalizing anonymizers and to t-closeness's
    hierarchical distance.  ``population``: the population ``table`` was drawn from, for
    delta-presence and k-map without a sampling fraction.
    Every problem found before anonymizing (``known_problems``: the reader's, e.g. missing
    cells; the rules, the columns' decisions, feasibility) is reported at once, in sections.
    ``k`` and ``max_risk`` (``risk_measure`` ``highest``: ``k = ceil(1/max_risk)``) are a floor
    on the cells of the key variables ``keys`` (sdcMicro's ``keyVars``; default: every exactly
    published column), met by generalizing (Mondrian, Incognito) or by recoding the exactly
    published columns alike in every table (:mod:`versapub.publishing.recoding`), with
    ``suppression`` a share of records that may be removed instead (ARX's limit), or with
    ``suppression_mode="cells"`` by local suppression of key values in the order of
    ``importance`` (:mod:`versapub.publishing.keys`).  ``treatments``
    (:mod:`versapub.treatments`, ``"rounding:columns=age,base=5"`` or a mapping) treat the
    input first, in order; the verifier applies their rules to the original itself."""
    g = from_long_form(privacy, method, decomposition, anonymizer, long_form)
    p, m = g.privacy, g.method
    job = prepare(
        table,
        rules,
        l=l,
        guarantee=guarantee,
        plugins={
            "decomposition": m.decomposition,
            "anonymizer": m.anonymizer,
            "decomposition_params": m.decomposition_params,
            "anonymizer_params": m.anonymizer_params,
            "defaults": m.plugin_defaults,
        },
        seed=seed,
        columns=columns,
        hierarchies=m.hierarchies,
        population=p.population,
        detach_others=m.detach_others,
        input_info=input_info,
        progress=progress,
        floor=cell_floor(p.k, p.max_risk, p.risk_measure),
        suppression=p.suppression,
        treatments=treatments,
        keys=KeyVariables(p.keys, p.suppression_mode, p.importance, unit=p.unit),
    )
    return _run(job, list(known_problems))


def _run(job: Job, problems: list[Problem]) -> Release:
    """The named steps in order, timed (``rules``, ``proxy sets``, ``decompose``,
    ``anonymize``, ``proxies``): roles → guarantees and feasibility → decompose and GNF →
    screens on the schema → refine → anonymize → screens on the release; the classic job
    (quasi-identifiers alone) takes its own path after the checks."""
    clock = Clock()
    job = treat(job)
    job.hook("checking rules", 0, 1)
    cols = decide_columns(job, problems)
    if job.treatment_notes:
        cols = replace(cols, notes=[*job.treatment_notes, *cols.notes])
    rules = decide_guarantees(job, cols, problems)
    if cols.classic:
        if job.keys.unit == "household":
            raise ConfigError(
                "--unit household counts households in a job with rules (Q -> S); the classic job (--qi alone) "
                "counts records: give the rules, or leave --unit out."
            )
        refuse(problems)
        clock.lap("rules")
        return identities_only(job, cols, rules.reduction, clock)
    clock.lap("rules")
    schema, verdict = decompose(job, cols, rules, problems)
    screened = screen_schema(job, cols, rules, schema, problems)
    # --unit household: the recoding meets the floor on records, then whole households are removed (issue 68)
    by_record = replace(job, suppression=0.0) if job.keys.unit == "household" else job
    cols, recoding = for_floor(by_record, cols, rules, schema)
    cols = household_floor(job, cols, rules, schema)
    recoded = recoding.to_manifest() if recoding is not None else None
    clock.lap("proxy sets")
    schema, verdict, trace = refine(job, cols, rules, schema, verdict, floor_admits(job, cols, rules, schema))
    clock.lap("decompose")
    published = anonymize_all(job, cols, rules, schema)
    clock.lap("anonymize")
    preview = k_preview(job, cols, rules, schema, published)
    homes = household_figures(job, cols, rules, schema)
    outcome = Outcome(schema, verdict, trace, published, screened, clock, recoded, preview, homes)
    return assemble(job, cols, rules, outcome)


def publish_dp(
    table: EncodedTable,
    out: str | Path,
    *,
    domains: Mapping[str, Sequence[str]],
    epsilon: float,
    delta: float = 1e-9,
    select: str = "auto",
    rules: Sequence[str | Rule] = (),
    marginals: str | None = None,
    overwrite: bool = False,
    **params: Any,
) -> Any:
    """A differentially private release of ``table`` written to ``out``, verified from its
    files first (``versapub publish --mechanism dp:...``; :mod:`versapub.mechanisms`): every
    column's ``domains`` declared (public knowledge, never read from the data), the budget
    (``epsilon``, ``delta``), which marginals (``select``: ``auto``, ``rules``, ``given`` with
    ``marginals="a+b;c"``, ``mst``, ``aim``) and the plug-in's other ``params`` (``iterations``,
    ``rounds``, ``max_size``). Returns the mechanism's output (noisy marginals, ledger, model)."""
    from versapub.mechanisms import make_mechanism
    from versapub.privacy.rules import parse_rules, validate_rules
    from versapub.publishing.dp_release import write_dp_release

    mech = make_mechanism("dp", epsilon=epsilon, delta=delta, select=select, marginals=marginals, **params)
    parsed = parse_rules(list(rules))
    validate_rules(parsed, table.names)
    pairs = [(tuple(r.lhs), r.rhs) for r in parsed]
    synth = mech.run(table, domains, pairs)
    write_dp_release(
        synth,
        table,
        domains,
        out,
        mechanism={"name": mech.name, "parameters": mech.params()},
        source={"path": "(in memory)", "columns": list(table.names)},
        rules=pairs,
        overwrite=overwrite,
    )
    return synth
