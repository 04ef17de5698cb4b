"""What suppression leaves of the treatments' groups (issue 63): a treatment's claim must
hold in what is published, or the release must say plainly that it does not."""

from __future__ import annotations

from typing import Any

from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable


def after_removal(records: tuple[dict[str, Any], ...], table: EncodedTable) -> tuple[dict[str, Any], ...]:
    """The treatments' records as the published records bear them out: a microaggregation
    whose groups lost records to suppression afterwards (``table``: the records published)
    declares the smallest published combination of its sets as ``published_k`` — said plainly
    in the manifest and read by the verifier, which flags it for attention (issue 63) —
    rather than a ``k`` the release no longer holds."""
    out = []
    for record in records:
        sets, k = record.get("sets"), record.get("k")
        if record.get("name") != "microaggregation" or not sets or not isinstance(k, int) or not table.n_rows:
            out.append(record)
            continue
        held = [[str(c) for c in cols] for cols in sets if all(str(c) in table.names for c in cols)]
        smallest = min((_smallest_cell(table, cols) for cols in held), default=k)
        out.append({**record, "published_k": smallest} if smallest < k else record)
    return tuple(out)


def removal_notes(records: tuple[dict[str, Any], ...]) -> list[str]:
    """One sentence per microaggregation whose published groups are smaller than its k."""
    return [
        f"WARNING: suppression removed records from the groups microaggregation formed on "
        f"{', '.join(str(c) for c in r.get('columns') or [])}: the smallest published group holds "
        f"{r['published_k']} record(s), below its k = {r['k']} (the manifest says so as published_k)"
        for r in records
        if "published_k" in r
    ]


def _smallest_cell(table: EncodedTable, cols: list[str]) -> int:
    g = group_rows([table.codes(c) for c in cols], [table.cardinality(c) for c in cols])
    return int(g.counts.min()) if len(g.counts) else 0
