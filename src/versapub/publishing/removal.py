"""Records removed by suppression (ARX's semantics, ``suppression_mode="remove"``): they are
published in no table, so the release's other tables are published again without them, and
the release is of the records kept (its model and utility are those of the published
records; the manifest's ``removed`` says how many were removed, and why)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from versapub.anonymizers import publish_plain
from versapub.anonymizers.base import AnonymizedTable
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.release.value import PublishedTable, Removal


def without_removed(
    table: Source,
    published: Sequence[PublishedTable],
    again: Callable[[Source, PublishedTable], AnonymizedTable] | None = None,
) -> tuple[Source, list[PublishedTable], Removal | None]:
    """The records kept, the tables published of them and the :class:`Removal` (``None``
    when no record was removed).  A plain table is published again from the kept records
    (``again(kept, table)``: as the job publishes it, under its floor; default its rows as
    they are); another anonymized table cannot be (its guarantee was met on every record):
    such a job is refused with what to do instead."""
    gone = [p for p in published if p.table.removed is not None and len(p.table.removed)]
    if not gone:
        return table, list(published), None
    first = gone[0]
    others = [p.name for p in published if p is not first and p.table.enforces is not None]
    if others or len(gone) > 1:
        n_gone = len(np.asarray(first.table.removed))
        raise InputError(
            f"Suppression removed {n_gone:,} record(s) from table {first.name}, and removed "
            f"records must be in no table, but this job also anonymizes {', '.join(others)} on every record. Use "
            "suppression_mode=class (the suppressed records published as one class with every quasi-identifier at "
            "its root), suppression=0, or a job that anonymizes one table."
        )
    assert isinstance(table, EncodedTable)  # removal runs in memory (the anonymizers' in_memory_only)
    removed = np.asarray(first.table.removed, dtype=np.int64)
    keep = np.setdiff1d(np.arange(table.n_rows, dtype=np.int64), removed, assume_unique=True)
    kept = table.take(keep)
    redo = again or (lambda rows, p: publish_plain(rows.select(p.table.attributes)))
    out = [p if p is first else PublishedTable(p.name, redo(kept, p)) for p in published]
    stats = first.table.stats
    removal = Removal(
        records=len(removed),
        by_reason=dict(first.table.removed_by_reason),
        share=float(stats["suppression"]),
        budget=int(stats["removal_budget"]),
        table=first.name,
    )
    return kept, out, removal
