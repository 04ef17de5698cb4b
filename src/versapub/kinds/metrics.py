"""The functional-diversity paper's measures of an in-memory release's generalized tables
(the kinds say which tables publish values exactly)."""

from __future__ import annotations

from typing import Any

from versapub.kinds.base import get_kind

#: The measures :func:`functional_measures` leaves to ``versapub evaluate`` unless ``full``.
NOT_AT_PUBLISH = ("classification", "count_queries")


def functional_measures(release: Any, *, full: bool = True) -> dict[str, dict[str, Any]]:
    """Per generalized table that protects a sensitive attribute, the functional-diversity
    paper's measures against the release's own input (:func:`versapub.release.functional.
    table_measures`): excessive protection, and with ``full`` ID3's rca and count-query
    error (otherwise listed under ``not_computed``)."""
    from versapub.privacy.per_rule import for_rules
    from versapub.release.cells import Cells
    from versapub.release.functional import table_measures

    out = {}
    for t in release.tables:
        if get_kind(t.table.kind).exact_values or t.table.enforces is None or t.table.also_enforces:
            continue
        rules = t.table.enforced_rules
        g = for_rules(rules, release.rule_guarantees) if release.rule_guarantees else release.guarantee
        sub = release.source.select(t.table.parts["data"].names)
        measured = table_measures(Cells.of_table(t.table), sub if full else None, g.cumulative_bound(), release.seed)
        out[t.name] = measured if full else {**measured, "not_computed": list(NOT_AT_PUBLISH)}
    return out
