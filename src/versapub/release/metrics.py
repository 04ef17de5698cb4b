"""The classic utility metrics of anonymized tables, beside KL and query error, per table
with groups (equivalence classes of a generalized table, Anatomy groups):

* **discernibility** (Bayardo & Agrawal, ICDE 2005): ``Σ_E |E|²`` — each record is charged
  the size of its class;
* **average class size** ``n / #classes``, and normalized by ``k`` for k-anonymity
  (LeFevre et al. 2006, ``C_AVG``);
* **generalization loss** (the normalized certainty penalty, Xu et al. KDD 2006, equal
  weights): per record and non-sensitive attribute, ``(leaves covered − 1) / (domain − 1)``,
  averaged (0: published exactly, 1: fully generalized; Anatomy publishes its QI exactly);
* **information** ``um`` (the functional-diversity paper, Definition 14 as the reading notes
  reconstruct it): a published value ``v`` of an attribute with ``m`` leaves keeps
  ``I(v) = 1 − log|leaves(v)| / log m`` (1 exact, 0 the root), averaged over records and
  every attribute of the table, the sensitive one included (its values may be generalized
  too: Sequential Sweep); 1 for a table that publishes values exactly;
* **suppressed records** (Incognito's suppressed class, multi-SA's suppressed group).

From an in-memory release (:func:`release_metrics`) or from a release's files
(:func:`file_metrics`), with the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from versapub.data.sql import connect, duckdb_source, ident
from versapub.io.manifest import read_manifest
from versapub.kinds import get_kind, parse_entry


def class_metrics(sizes: Mapping[int, int], n: int, k: int | None) -> dict[str, Any]:
    """Metrics from ``{class size: number of classes}``."""
    classes = sum(sizes.values())
    avg = n / classes if classes else 0.0
    return {
        "classes": classes,
        "discernibility": int(sum(int(s) ** 2 * c for s, c in sizes.items())),
        "average_class_size": avg,
        "normalized_average_class_size": avg / k if k else None,
    }


def _k(guarantee: Mapping[str, Any]) -> int | None:
    return int(guarantee["k"]) if guarantee.get("name") == "k-anonymity" and "k" in guarantee else None


def release_metrics(release: Any) -> dict[str, dict[str, Any]]:
    """Per table with groups, from an in-memory :class:`~versapub.release.model.Release`."""
    n = release.n_records
    k = _k(release.guarantee.to_manifest())
    out = {}
    for t in release.tables:
        st = t.table.stats
        sizes = st.get("group_sizes")
        if not sizes:
            continue
        m = class_metrics({int(a): int(b) for a, b in sizes.items()}, n, k)
        loss, info = loss_in_memory(t.table, release.source) if t.table.leaves else (0.0, 1.0)
        m["generalization_loss"], m["information"] = loss, info
        m["suppressed_records"] = int(st.get("suppressed_records") or 0)
        out[t.name] = m
    return out


def functional_measures(release: Any) -> dict[str, dict[str, Any]]:
    """Per generalized table that protects a sensitive attribute, the functional-diversity
    paper's measures against the release's own input (:func:`versapub.release.functional.
    table_measures`): excessive protection, ID3's rca, count-query error."""
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
        out[t.name] = table_measures(Cells.of_table(t.table), sub, g.cumulative_bound(), seed=release.seed)
    return out


def loss_in_memory(table: Any, source: Any) -> tuple[float, float]:
    """(generalization loss over the non-sensitive attributes, information over all — a
    generalized sensitive value loses information like any other)."""
    ct = table.parts["data"]
    s = set(table.sensitive_attributes)
    qi = [a for a in ct.names if a not in s]
    total = 0.0
    info = 0.0
    n = max(int(ct.counts.sum()), 1)
    for a in ct.names:
        spans = table.leaves[a].spans if a in table.leaves else {}
        dom = source.column(a).cardinality
        j = ct.names.index(a)
        dictionary = ct.dictionaries[j]
        assert dictionary is not None
        size = np.array([(spans[str(v)][1] - spans[str(v)][0] + 1) if str(v) in spans else 1 for v in dictionary])
        covered = size[ct.codes[j]]  # per published row (a loop over the dictionary, not the rows)
        if a in qi:
            total += float(((covered - 1) / max(dom - 1, 1) * ct.counts).sum())
        info += float(((1 - np.log(covered) / np.log(dom)) * ct.counts).sum()) if dom > 1 else float(n)
    attrs = len(ct.names)
    return (total / (len(qi) * n) if qi else 0.0), (info / (attrs * n) if attrs else 1.0)


def file_metrics(directory: str | Path) -> dict[str, dict[str, Any]]:
    """Per table with groups, from the release's files (group sizes through each kind's
    summary; the loss from a generalized table's labels and order listings)."""
    d = Path(directory)
    m = read_manifest(d)
    n = int(m["n_records"])
    k = _k(m.get("guarantee") or {})
    out = {}
    for raw in m["tables"]:
        entry = parse_entry(raw)
        kind = get_kind(entry.kind)
        summary = kind.summary(d, entry, None)
        sizes = summary.get("group_sizes")
        if not sizes:
            continue
        met = class_metrics({int(a): int(b) for a, b in sizes.items()}, n, k)
        generalized = not kind.exact_values
        loss, info = _loss_from_files(d, entry, set(kind.sensitive_of(entry))) if generalized else (0.0, 1.0)
        met["generalization_loss"], met["information"] = loss, info
        met["suppressed_records"] = int((raw.get("stats") or {}).get("suppressed_records") or 0)
        out[entry.name] = met
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
    """:func:`functional_measures` from a release's files (the rule's own guarantee from the
    manifest, else the release's), against ``original`` when given."""
    from versapub.privacy.guarantee import make_guarantee
    from versapub.release.cells import Cells
    from versapub.release.functional import table_measures

    d = Path(directory)
    m = read_manifest(d)
    own = {str(r["rhs"]): r["guarantee"] for r in m.get("rules") or [] if isinstance(r, dict) and r.get("guarantee")}
    out = {}
    for raw in m["tables"]:
        entry = parse_entry(raw)
        kind = get_kind(entry.kind)
        s = kind.sensitive_of(entry)
        if kind.exact_values or len(s) != 1:
            continue
        g = make_guarantee(dict(own.get(s[0]) or m["guarantee"]))
        sub = original.select(entry.attributes) if original is not None else None
        out[entry.name] = table_measures(Cells.of_files(d, entry, s[0]), sub, g.cumulative_bound(), seed=seed)
    return out
