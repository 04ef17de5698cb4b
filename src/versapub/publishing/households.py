"""The household figures of a publish with a household id (issue 68, ``--household``): per
table that publishes key variables exactly, the households unique on their structure and the
household risk, computed on the input while publishing (the id itself is removed: never
published as read)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import MeetsCellFloor
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.privacy.risk.households import household_level, households_of_codes, structure_classes
from versapub.publishing.choice import anon_for
from versapub.publishing.steps import Columns, Guarded, Job
from versapub.publishing.tables import predicted_unguarded
from versapub.release.value import Removal
from versapub.schema.model import Schema

Ints = npt.NDArray[np.int64]

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
    values = cols.table if cols.table.n_rows == source.n_rows or cols.kept_rows is not None else source
    household = source.codes(column).astype(np.int64)
    if cols.kept_rows is not None:  # whole households removed (--unit household): the published ones
        household = np.unique(household[cols.kept_rows], return_inverse=True)[1].astype(np.int64).ravel()
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
    if values is source and cols.table.n_rows != source.n_rows and cols.kept_rows is None:
        out["note"] = "the floor removed records: the figures read every input record's key values as read"
    return {**out, "tables": tables}


def household_floor(job: Job, cols: Columns, rules: Guarded, schema: Schema) -> Columns:
    """``--unit household`` (issue 68): after the recoding met the floor on records, every
    household's structure — in each table that publishes key variables exactly, its
    household-level keys and the multiset of its members' other keys — is shared by at least
    ``k`` households; the households of shorter structures are removed whole (repeated until
    none is short: removing a household may shorten another table's class), within
    ``--suppression`` of the records, else refused with the share that would do."""
    if job.keys.unit != "household" or job.floor <= 1 or not isinstance(cols.table, EncodedTable):
        return cols
    from versapub.publishing.recoding import exact_keys, require_still_feasible

    table, column = cols.table, cols.roles.household
    source = job.table
    assert column is not None and isinstance(source, EncodedTable) and source.n_rows == table.n_rows
    hh = np.unique(source.codes(column), return_inverse=True)[1].astype(np.int64).ravel()
    tables = [keys for _, keys in exact_keys(job, rules, schema, cols.keep) if keys]
    alive = np.ones(table.n_rows, dtype=bool)
    while True:
        short = np.zeros(int(hh.max()) + 1, dtype=bool)
        for keys in tables:
            short |= _short_households(table, keys, hh, alive, job.floor)
        if not short[hh[alive]].any():
            break
        alive &= ~short[hh]
    gone = int((~alive).sum())
    if not gone:
        return cols
    budget = math.floor(job.suppression * table.n_rows)
    households = len(np.unique(hh[~alive]))
    if gone == table.n_rows:
        raise InfeasibleError(
            f"--unit household: no household's structure (household-level keys and their members' keys, as "
            f"published) is shared by {job.floor} households, so removing the short ones would leave no record. Name "
            "fewer key variables with --keys, give coarser hierarchies, or lower --k."
        )
    if gone > budget:
        need = math.ceil(1000 * gone / table.n_rows) / 1000
        raise InfeasibleError(
            f"--unit household: {households:,} households ({gone:,} records, {gone / table.n_rows:.1%}) have a "
            f"structure (household-level keys and their members' keys, as published) that fewer than {job.floor} "
            f"households share, and removing them whole takes more than --suppression {job.suppression:g} allows. Give "
            f"--suppression {need:g} (or more), name fewer key variables with --keys, or give coarser hierarchies."
        )
    keep = np.flatnonzero(alive)
    what = (
        "--unit household: removing the {removed:,} record(s) of households whose structure fewer than "
        + str(job.floor)
        + " households share would leave {left}: the rule(s) could no longer be met by the records left. Name fewer "
        "key variables with --keys or give coarser hierarchies (fewer households are short), or count records "
        "(leave --unit out)."
    )
    require_still_feasible(table, table.take(keep), rules, gone, job.suppression, what)
    why = {f"in a household whose structure fewer than {job.floor} households share (--unit household)": gone}
    note = (
        f"--unit household: {households:,} households ({gone:,} records) removed whole: their structure was shared by "
        f"fewer than {job.floor} households"
    )
    whole = cols.unrecoded if isinstance(cols.unrecoded, EncodedTable) else table  # the input, before removal
    with_id = EncodedTable((*whole.columns, source.column(column)), source=whole.source, sha256=whole.sha256)
    return replace(
        cols,
        table=table.take(keep),
        unrecoded=with_id,  # what the release is verified against: every record, their households' id
        removed=Removal(gone, why, job.suppression, budget, None),
        kept_rows=keep,
        notes=[*cols.notes, note],
    )


def _short_households(table: EncodedTable, keys: list[str], hh: Ints, alive: npt.NDArray[np.bool_], k: int) -> Any:
    """Per household (of ``hh``'s ids), whether its structure on ``keys`` among the records
    ``alive`` is shared by fewer than ``k`` households."""
    rows = np.flatnonzero(alive)
    ids, local = np.unique(hh[rows], return_inverse=True)
    local = local.astype(np.int64).ravel()
    codes = {a: np.asarray(table.codes(a), dtype=np.int64)[rows] for a in keys}
    level = household_level(codes, local)
    person = [a for a in keys if a not in level]

    def combo(names: list[str]) -> Ints:
        if not names:
            return np.zeros(len(rows), dtype=np.int64)
        return (
            np.unique(np.column_stack([codes[a] for a in names]), axis=0, return_inverse=True)[1]
            .astype(np.int64)
            .ravel()
        )

    sizes, _ = structure_classes(local, combo(person), combo(level))
    out = np.zeros(int(hh.max()) + 1, dtype=bool)
    out[ids[sizes < k]] = True
    return out
