"""The job's treatments (issue 48, :mod:`versapub.treatments`), applied in order to the
input before anything else: the screens, the anonymizers and the identity measures read the
treated table; the release is verified against the input as read, the verifier applying
the treatments' rules itself (``verify/treatments/treatments.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import numpy as np

from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.publishing.household_treating import per_household
from versapub.publishing.steps import Job
from versapub.treatments.measures import perturbation_measures


def treat(job: Job) -> Job:
    """``job`` with its table treated, the input as read kept (``untreated``) and each
    treatment's manifest record and sentence (``treated``, ``treatment_notes``)."""
    if not job.treatments:
        return job
    if not job.table.in_memory:
        raise InputError(
            "Treatments (--treat) run on a table in memory; this input is on a Dask cluster. Treat the file first "
            "or publish it in memory."
        )
    table = cast(EncodedTable, job.table)
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    rng = draws_of(job)
    for i, t in enumerate(job.treatments):
        job.hook(f"treating {', '.join(t.columns)} ({t.name})", i, len(job.treatments))
        out = per_household(t, table, job.roles.household, rng) or t.apply(table, rng)  # issue 68
        record = dict(out.record)
        if t.draws:
            record["draws"] = "seeded" if job.seed_given else "secret"
        table, records = out.table, [*records, record]
        notes.append(f"Treated before anonymizing — {out.note}")
        if t.draws and job.seed_given:
            notes.append(
                f"WARNING: {t.name} drew its random numbers from the given seed {job.seed}, which the manifest "
                "records: anyone who has the release can redo the draws and undo the treatment. Use --seed for "
                "reproducible tests only; without it the draws come from the operating system and stay secret"
            )
    job.hook("measuring what the treatments changed", len(job.treatments), len(job.treatments))
    columns = list(dict.fromkeys(c for t in job.treatments for c in t.columns))
    measured = perturbation_measures(cast(EncodedTable, job.table), table, columns)
    # issue 65: without --keys, a column a perturbing treatment changed is no key (it counts only when named)
    perturbing = ("noise", "microaggregation", "pram", "rank-swapping", "targeted-swapping")
    moved = tuple(dict.fromkeys(str(c) for r in records if r.get("name") in perturbing for c in r.get("columns") or []))
    keys = replace(job.keys, excluded=moved) if job.keys.names is None and moved else job.keys
    return replace(
        job,
        keys=keys,
        table=table,
        untreated=job.table,
        treated=tuple(records),
        treatment_notes=tuple(notes),
        perturbation=measured,
    )


def draws_of(job: Job) -> np.random.Generator:
    """The generator treatments draw from: derived from the seed when it was given (a
    reproducible test), else fresh entropy from the operating system, never recorded."""
    if job.seed_given:
        return np.random.default_rng([job.seed, 48])
    return np.random.default_rng()
