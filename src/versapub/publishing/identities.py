"""The classic job: quasi-identifiers and no rule (k-anonymity, Sweeney 2002)."""

from __future__ import annotations

from typing import cast

import numpy as np

from versapub.anonymizers import make_anonymizer
from versapub.anonymizers.base import AnonymizedTable, Anonymizer, KeepsColumns, MeetsCellFloor, PublishRequest
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InfeasibleError
from versapub.kinds import get_kind
from versapub.privacy.rules import Reduction
from versapub.publishing.after_removal import after_removal, removal_notes
from versapub.publishing.recoding import require_floor_honoured
from versapub.publishing.removal import without_removed
from versapub.publishing.steps import Clock, Columns, Job, input_of, whole_input
from versapub.publishing.tables import identity_risk, plain_under_floor, step_hook, table_rng
from versapub.release.value import PublishedTable, Release
from versapub.schema.gnf import require_gnf
from versapub.schema.model import Schema, SubTable


def _classic_job(job: Job, cols: Columns) -> tuple[Anonymizer, tuple[str, ...], tuple[str, ...], bool]:
    """The classic job's anonymizer (Mondrian unless one was asked for), its
    quasi-identifiers, the other columns and whether they are kept in the generalized
    table's rows; a guarantee about sensitive values, an infeasible one, or an anonymizer
    that cannot keep the other columns is refused."""
    g, table, roles = job.guarantee, cols.table, cols.roles
    if g.min_possible_values() > 1 or g.needs() - {"population"}:
        raise ConfigError(
            f"Quasi-identifiers without a rule are protected by k-anonymity only; {g.name} protects a sensitive "
            "attribute: name it with --sensitive COLUMN (the rule is then 'QI -> COLUMN') or give --rule."
        )
    anon = make_anonymizer("mondrian") if job.asked_anonymizer is None else job.anon
    violation = g.single_attribute_violation(np.array([table.n_rows]))
    if violation is not None:
        raise InfeasibleError(f"Under {g.describe()}: {violation.explanation}.")
    qi = tuple(a for a in table.names if a in roles.quasi_identifying)
    others = tuple(a for a in table.names if a not in qi)
    together = bool(others) and not job.detach_others
    if together and not isinstance(anon, KeepsColumns):
        raise ConfigError(
            f"The {anon.name} anonymizer cannot keep the other columns ({', '.join(others)}) in the records of "
            "its generalized table; use mondrian or incognito, or publish them apart with --detach-others."
        )
    if job.floor > 1:
        require_floor_honoured(anon, job.floor, "T1")
        _require_classic_suppression(job, anon)
    return anon, qi, others, together


def _require_classic_suppression(job: Job, anon: Anonymizer) -> None:
    """The classic job generalizes the quasi-identifiers with the anonymizer's own
    suppression (``mondrian:suppression=S``): the job's ``--suppression`` and local
    suppression belong to exactly published columns, and are refused here rather than
    ignored (issue 65)."""
    if job.keys.suppression_mode == "cells":
        raise ConfigError(
            f"--suppression-mode cells suppresses values of exactly published keys, but this classic job (--qi "
            f"without a rule) meets --k {job.floor} by generalizing with {anon.name}, whose suppression removes "
            f"records. Use {anon.name}:suppression=S (records of short cells removed, at most S of them) and leave "
            "--suppression-mode out, or publish with a rule and --anonymizer anatomy."
        )
    if job.suppression:
        raise ConfigError(
            f"--suppression {job.suppression:g} is the budget of the recoding of exactly published columns; this "
            f"classic job (--qi without a rule) meets --k {job.floor} by generalizing with {anon.name}, which takes "
            f"its own: write --anonymizer {anon.name}:suppression={job.suppression:g} instead of --suppression."
        )


def identities_only(job: Job, cols: Columns, reduction: Reduction, clock: Clock) -> Release:
    """The classic job with quasi-identifiers and no rule: one generalized table whose every
    class of quasi-identifier values holds at least ``k`` records (k-anonymity, Sweeney
    2002), the other columns published exactly in each record's row (ARX's insensitive
    attributes: they stay analysable by the quasi-identifiers), or with ``detach_others``
    as a plain table never linked to the first.  Only a guarantee about identities applies
    (one that needs no sensitive value)."""
    g, table, roles = job.guarantee, cols.table, cols.roles
    anon, qi, others, together = _classic_job(job, cols)
    first_sub = SubTable("T1", table.names) if together else SubTable("T1", qi)
    schema = Schema((first_sub,) if together else (first_sub, *((SubTable("T2", others),) if others else ())))
    verdict = require_gnf(schema, [], "k-anonymity of the quasi-identifiers")
    clock.lap("decompose")
    job.hook(f"anonymizing T1 ({len(qi)} quasi-identifiers)", 0, len(schema.tables))
    part = table if together else table.select(qi)
    rng = table_rng(job.seed, first_sub)
    floor = job.floor if isinstance(anon, MeetsCellFloor) else 1
    keep = others if together else ()
    counted = None if job.keys.counts_all else tuple(job.keys.of(keep))
    request = PublishRequest(part, (), (g,), rng, step_hook(job.hook, 0, 1), job.hierarchies, keep, floor, counted)
    try:
        first = anon.publish(request)
    except ValueError:
        raise ConfigError(
            f"The {anon.name} anonymizer protects a sensitive attribute; k-anonymity of quasi-identifiers needs a "
            "generalizing anonymizer (mondrian or incognito)."
        ) from None
    get_kind(first.kind).validate(first)
    published = [PublishedTable("T1", first)]
    if others and not together:
        rest = SubTable("T2", others)
        detached = plain_under_floor(table.select(others), rest, job.seed, job.hierarchies, job.floor, job.keys)
        published.append(PublishedTable("T2", detached))
    whole = table

    def again(kept: Source, p: PublishedTable) -> AnonymizedTable:  # the detached table of the records kept
        return plain_under_floor(kept.select(others), rest, job.seed, job.hierarchies, job.floor, job.keys)

    table, published, removal = without_removed(table, published, again)
    treated = after_removal(job.treated, cast(EncodedTable, table)) if removal is not None else job.treated
    job.hook("anonymized", 1, 1)
    clock.lap("anonymize")
    return Release(
        tables=tuple(published),
        source=table,  # type: ignore[arg-type]  # or a table on a cluster: the same seam
        guarantee=g,
        reduction=reduction,
        feasibility=(),
        schema=schema,
        gnf=verdict,
        decomposition="none",
        anonymizer=anon.name,
        anonymizer_params=anon.params(),
        seed=job.seed,
        input=input_of(job, table),
        timings=clock.timings,
        columns=roles.to_manifest(removed=list(roles.identifying), by_others=cols.by_others),
        identity={p.name: identity_risk(table, p.table, job.keys) for p in published},
        warnings=[*cols.warnings, *removal_notes(treated)],
        notes=[*(cols.notes or []), *([job.keys.reading()] if job.floor > 1 else [])],
        population=job.population,
        removed=removal,
        verified_against=whole_input(cols, removal is not None, job.untreated)
        if job.untreated is not None
        else whole
        if removal is not None
        else None,  # type: ignore[arg-type]
        treatments=treated,
        perturbation=job.perturbation,
        requested=job.requested(),
    )
