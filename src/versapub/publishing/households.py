"""The household figures of a publish with a household id (issue 68, ``--household``): per
table that publishes key variables exactly, the households unique on their structure and the
household risk, computed on the input while publishing (the id itself is removed: never
published as read)."""

from __future__ import annotations

from typing import Any

import numpy as np

from versapub.anonymizers.base import MeetsCellFloor
from versapub.data.table import EncodedTable
from versapub.privacy.risk.households import households_of_codes
from versapub.publishing.choice import anon_for
from versapub.publishing.steps import Columns, Guarded, Job
from versapub.publishing.tables import predicted_unguarded
from versapub.schema.model import Schema

#: The household risk a household is counted at risk above (``risk``'s default threshold).
THRESHOLD = 0.2


def household_figures(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> dict[str, Any] | None:
    """The manifest's ``household`` block (``None`` without a household id): per table whose
    exactly published key variables can be read record by record (a plain table's, an Anatomy
    QIT's; a generalizing anonymizer's classes are not values of the input), the household
    figures of :mod:`versapub.privacy.risk.households` on those keys — recoded as published
    when the floor recoded them; on the input as read when the floor removed records."""
    column = cols.roles.household
    if column is None:
        return None
    source = job.table
    out: dict[str, Any] = {
        "column": column,
        "id_published": False,
        "computed": "computed on the input while publishing",
    }
    if not isinstance(source, EncodedTable) or not isinstance(cols.table, EncodedTable):
        return {**out, "tables": [], "note": "not measured on the Dask backend (the household id is still removed)"}
    values = cols.table if cols.table.n_rows == source.n_rows else source
    household = source.codes(column).astype(np.int64)
    tables = []
    for sub in schema.tables:
        anon = anon_for(sub, job.anon, rules.own_anon)
        if sub.enforces is not None and isinstance(anon, MeetsCellFloor):
            continue
        keys = [a for a in job.keys.of(predicted_unguarded(sub, anon, cols.keep)) if a in values.names]
        if not keys:
            continue
        codes = {a: (values.codes(a).astype(np.int64), values.cardinality(a)) for a in keys}
        hh = households_of_codes(column, household, codes, None, 1.0, THRESHOLD)
        tables.append({"table": sub.name, **hh.to_json()})
    if values is source and cols.table.n_rows != source.n_rows:
        out["note"] = "the floor removed records: the figures read every input record's key values as read"
    return {**out, "tables": tables}
