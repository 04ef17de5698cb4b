"""Records removed by suppression (ARX's semantics), checked from the files alone: the
manifest's ``removed`` block against the budget it states (``floor(suppression x input
records)``, the share the anonymizer's parameters give), the input's size against
``n_records``, and the table it names (a generalized one, whose stats count as many) — or
none: the recoding that met ``--k`` removed them from every table, with the job's
``--suppression`` (the block's own share).  With
the original, :mod:`versapub.verify.reading.kind_checks` checks that the removed records lie in no
published class."""

from __future__ import annotations

import math
from typing import Any

from versapub.verify.finding import Finding
from versapub.verify.reading.manifest import Manifest
from versapub.verify.reading.primitives import Checker


def removal_ok(c: Checker, manifest: Manifest) -> None:
    """The ``removed`` block's numbers agree with each other, the budget and the table."""
    gone = c.removed
    if gone is None:
        claimed = [
            t.get("name")
            for t in manifest["tables"]
            if isinstance(t, dict) and ((t.get("stats") or {}).get("removed_records") or 0)
        ]
        if claimed:
            c.report.add("removal", False, f"table(s) {claimed} count removed records but the manifest has no removed")
        return
    entry: dict[str, Any] = next(
        (t for t in manifest["tables"] if isinstance(t, dict) and t.get("name") == gone.table), {}
    )
    whole = gone.table is None  # removed from every table by the recoding that met --k
    asked = manifest.get("job") if isinstance(manifest.get("job"), dict) else None
    if whole and (asked is None or "suppression" not in asked):
        c.report.findings.append(
            Finding(
                "removal",
                True,
                "the manifest does not record the job's --suppression, so the share its removed block states "
                f"({gone.suppression:g}) cannot be compared with the one asked for",
                "manifest.json",
                attention=True,
            )
        )
    share = (
        (asked or {}).get("suppression", gone.suppression)
        if whole
        else c.suppression_share((entry.get("enforces") or {}).get("rhs"))
    )
    limit = math.floor(float(share) * gone.input_records) if isinstance(share, int | float) else -1
    stated = gone.records if whole else (entry.get("stats") or {}).get("removed_records")
    problems = [
        *(
            [f"table {gone.table!r} is not a generalized table of the release"]
            if not whole and entry.get("kind") != "generalized"
            else []
        ),
        *(
            [f"input_records {gone.input_records} is not n_records + records"]
            if gone.input_records != c.n + gone.records
            else []
        ),
        *(
            [
                f"the {'job' if whole else 'anonymizer'}'s suppression is {share!r}, the removed block says "
                f"{gone.suppression:g}"
            ]
            if share != gone.suppression
            else []
        ),
        *(
            [f"budget {gone.budget} is not floor({gone.suppression:g} x {gone.input_records})"]
            if gone.budget != limit
            else []
        ),
        *(
            [f"{gone.records} record(s) removed, more than the budget {gone.budget}"]
            if gone.records > gone.budget
            else []
        ),
        *([f"the table's stats count {stated!r} removed record(s)"] if stated != gone.records else []),
    ]
    c.report.add(
        "removal",
        not problems,
        f"{gone.records:,} record(s) removed by suppression (at most floor({gone.suppression:g} x "
        f"{gone.input_records:,}) = {gone.budget:,}), {c.n:,} published"
        if not problems
        else "; ".join(problems),
        gone.table or "manifest.json",
    )
