"""The classic metrics and the functional-diversity paper's measures of a release, read from its
files (:mod:`versapub.release.metrics` computes the same keys in memory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from versapub.data.sql import connect, duckdb_source, ident
from versapub.formats import read_manifest
from versapub.kinds import get_kind, parse_entry
from versapub.release.metrics import class_metrics, k_of


def file_metrics(directory: str | Path) -> dict[str, dict[str, Any]]:
    """Per table with groups, from the release's files (group sizes through each kind's
    summary; the loss from a generalized table's labels and order listings)."""
    d = Path(directory)
    m = read_manifest(d)
    n = m.n_records
    k = k_of(m.get("guarantee") or {})
    out = {}
    for entry in map(parse_entry, m.entries()):
        kind = get_kind(entry.kind)
        summary = kind.summary(d, entry, None)
        sizes = summary.get("group_sizes")
        if not sizes:
            continue
        met = class_metrics({int(a): int(b) for a, b in sizes.items()}, n, k)
        generalized = not kind.exact_values
        loss, info = _loss_from_files(d, entry, set(kind.sensitive_of(entry))) if generalized else (0.0, 1.0)
        met["generalization_loss"], met["information"] = loss, info
        met["suppressed_records"] = int((entry.raw.get("stats") or {}).get("suppressed_records") or 0)
        out[entry.name] = met
    return out


def group_sizes(directory: str | Path) -> dict[str, dict[int, int]]:
    """Per table with groups (classes of a generalized table, Anatomy's groups): how many
    groups have each size, from the release's files (each kind's summary)."""
    d = Path(directory)
    out = {}
    for entry in map(parse_entry, read_manifest(d).entries()):
        sizes = get_kind(entry.kind).summary(d, entry, None).get("group_sizes")
        if sizes:
            out[entry.name] = {int(a): int(b) for a, b in sizes.items()}
    return out


def _loss_from_files(d: Path, entry: Any, sensitive: set[str]) -> tuple[float, float]:
    """(generalization loss over the non-sensitive attributes, information over all), from
    the data file and the labels and order listings."""
    qi = [a for a in entry.attributes if a not in sensitive]
    with connect() as con:
        con.execute(f"CREATE TABLE data AS SELECT * FROM {duckdb_source(d / entry.files['data'])}")
        con.execute(f"CREATE TABLE labels AS SELECT * FROM {duckdb_source(d / entry.files['labels'])}")
        con.execute(f"CREATE TABLE ord AS SELECT * FROM {duckdb_source(d / entry.files['order'])}")
        total = 0.0
        info = 0.0
        for a in entry.attributes:  # an attribute without listing is exact: no loss, all its information
            col = ident(a)
            lit = "'" + a.replace("'", "''") + "'"
            row = con.execute(
                f"WITH sizes AS (SELECT value, CAST(last AS BIGINT) - CAST(first AS BIGINT) + 1 k FROM labels "
                f"WHERE attribute = {lit}), dom AS (SELECT count(*) m FROM ord WHERE attribute = {lit}) "
                f'SELECT sum((coalesce(s.k, 1) - 1) / greatest((SELECT m FROM dom) - 1, 1) * CAST("count" AS BIGINT)),'
                f' sum(CAST("count" AS BIGINT)), sum(CASE WHEN (SELECT m FROM dom) > 1 THEN 1 - ln(coalesce(s.k, 1)) '
                f'/ ln((SELECT m FROM dom)) ELSE 1 END * CAST("count" AS BIGINT)) '
                f"FROM data LEFT JOIN sizes s ON data.{col} = s.value"
            ).fetchone()
            n = max(float(row[1] or 1), 1.0) if row else 1.0
            if a in qi:
                total += float(row[0] or 0.0) / n if row else 0.0
            info += float(row[2] if row and row[2] is not None else n) / n
    return (total / len(qi) if qi else 0.0), info / max(len(entry.attributes), 1)


def file_functional_measures(directory: str | Path, original: Any | None, seed: int = 1) -> dict[str, dict[str, Any]]:
    """:func:`versapub.kinds.metrics.functional_measures` from a release's files (the rule's own guarantee from the
    manifest, else the release's), against ``original`` when given."""
    from versapub.privacy.guarantees.guarantee import make_guarantee
    from versapub.release.cells import Cells
    from versapub.release.functional import table_measures

    d = Path(directory)
    m = read_manifest(d)
    own = {str(r["rhs"]): r["guarantee"] for r in m.get("rules") or [] if isinstance(r, dict) and r.get("guarantee")}
    out = {}
    for entry in map(parse_entry, m.entries()):
        kind = get_kind(entry.kind)
        s = kind.sensitive_of(entry)
        if kind.exact_values or len(s) != 1:
            continue
        g = make_guarantee(dict(own.get(s[0]) or m["guarantee"]))
        sub = original.select(entry.attributes) if original is not None else None
        out[entry.name] = table_measures(Cells.of_files(d, entry, s[0]), sub, g.cumulative_bound(), seed=seed)
    return out
