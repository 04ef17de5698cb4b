"""The job's treatments (issue 48, :mod:`versapub.treatments`), applied in order to the
input before anything else: the screens, the anonymizers and the identity measures read the
treated table; the release is verified against the input as read, the verifier applying
the treatments' rules itself (``verify/treatments.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.publishing.steps import Job


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
    for i, t in enumerate(job.treatments):
        job.hook(f"treating {', '.join(t.columns)} ({t.name})", i, len(job.treatments))
        out = t.apply(table, job.rng)
        table, records = out.table, [*records, out.record]
        notes.append(f"Treated before anonymizing — {out.note}")
    return replace(job, table=table, untreated=job.table, treated=tuple(records), treatment_notes=tuple(notes))
