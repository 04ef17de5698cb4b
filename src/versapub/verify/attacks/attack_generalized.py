"""The intersection attack on generalized tables, from the files (DuckDB).

An adversary who knows a target's values of the rule's left-hand side that the table
holds (leaves) considers every published row whose values cover them: a sensitive value
is possible when some covering row holds it or a generalized value covering it (the union
over the covering equivalence classes; a generalized sensitive value — Sequential Sweep —
makes every leaf it covers possible).  Other tables are ignored, which can only add possible values, so a reported
target is truly disclosed.

Fast path: when every equivalence class holds at least ``min_possible_values()`` distinct
sensitive values, no target can be disclosed (each one is covered by some class).
Otherwise the targets are enumerated: every covering row is expanded into the leaf
combinations of the known attributes (refused above ``MAX_PAIRS`` pairs, when the classes
below the threshold are reported as disclosures at class level).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from versapub.data.groupby import group_rows
from versapub.data.sql import connect, duckdb_source, ident
from versapub.data.table import EncodedTable
from versapub.privacy.rules import Rule
from versapub.verify.attacks.attack import AttackResult, Disclosure
from versapub.verify.guarantees.thresholds import Thresholds
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.manifest import Manifest, manifest_of
from versapub.verify.reading.reading import parse_entry

#: Leaf combinations the enumeration may build.
MAX_PAIRS = 20_000_000


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def generalizing_tables(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The manifest's tables whose kind publishes generalized values."""
    return [t for t in manifest["tables"] if not reading(parse_entry(t).kind).exact_values]


def generalized_attack(
    directory: str | Path,
    rules: Sequence[Rule],
    guarantee: Thresholds,
    original: EncodedTable | None = None,
    manifest: Manifest | None = None,
) -> AttackResult:
    """Attack every rule whose sensitive attribute a generalized table publishes."""
    t0 = time.perf_counter()
    d = Path(directory)
    m = manifest_of(d, manifest)
    result = AttackResult("generalized", guarantee)
    need = guarantee.min_possible_values()
    with connect() as con:
        for t in generalizing_tables(m):
            entry = parse_entry(t)
            con.execute(f"CREATE OR REPLACE TABLE data AS SELECT * FROM {duckdb_source(d / entry.files['data'])}")
            con.execute(f"CREATE OR REPLACE TABLE labels AS SELECT * FROM {duckdb_source(d / entry.files['labels'])}")
            con.execute(f"CREATE OR REPLACE TABLE ord AS SELECT * FROM {duckdb_source(d / entry.files['order'])}")
            sensitive = reading(entry.kind).sensitive_of(entry)  # published exactly; the others generalized
            kept = [str(c) for c in t.get("kept") or ()]  # exact beside the classes, outside them
            for rule in (r for r in rules if r.rhs in sensitive):
                known = [a for a in rule.lhs if a in entry.attributes]
                _attack_rule(con, rule, known, kept, need, original, result)
    result.seconds = time.perf_counter() - t0
    return result


def _attack_rule(
    con: duckdb.DuckDBPyConnection,
    rule: Rule,
    known: list[str],
    kept: list[str],
    need: int,
    original: EncodedTable | None,
    result: AttackResult,
) -> None:
    s = ident(rule.rhs)
    # The equivalence classes: the rows sharing every published quasi-identifier value.  The
    # columns the manifest lists as ``kept`` (the classic job's insensitive columns, exact in
    # each record's row) are not part of the classes; what they reveal is measured apart.
    columns = [r[0] for r in con.execute("DESCRIBE data").fetchall()]
    others = [c for c in columns if c not in (rule.rhs, "count") and c not in kept]
    # The published rows with each sensitive value replaced by every leaf it covers.
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW sdata AS SELECT d.* EXCLUDE ({s}), coalesce(o.leaf, d.{s}) AS {s} FROM data d "
        f"LEFT JOIN labels l ON l.attribute = {_lit(rule.rhs)} AND l.value = d.{s} LEFT JOIN ord o "
        "ON o.attribute = l.attribute AND CAST(o.position AS BIGINT) BETWEEN CAST(l.first AS BIGINT) AND "
        "CAST(l.last AS BIGINT)"
    )
    classes = ", ".join(ident(c) for c in others) or "1"
    row = con.execute(f"SELECT min(k) FROM (SELECT count(DISTINCT {s}) k FROM sdata GROUP BY {classes})").fetchone()
    if row is not None and row[0] is not None and int(row[0]) >= need:
        result.targets += _targets(con, known, original)
        return
    maps = []
    for i, a in enumerate(known):
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE map{i} AS SELECT l.value AS pv, o.leaf FROM labels l JOIN ord o "
            "ON o.attribute = l.attribute AND CAST(o.position AS BIGINT) BETWEEN CAST(l.first AS BIGINT) AND "
            f"CAST(l.last AS BIGINT) WHERE l.attribute = {_lit(a)} "
            f"UNION ALL SELECT DISTINCT {ident(a)}, {ident(a)} FROM data "
            f"WHERE {ident(a)} NOT IN (SELECT value FROM labels WHERE attribute = {_lit(a)})"
        )
        maps.append(f"JOIN map{i} m{i} ON data.{ident(a)} = m{i}.pv")
    if known:
        sizes = " ".join(
            f"JOIN (SELECT pv, count(*) n FROM map{i} GROUP BY pv) z{i} ON data.{ident(a)} = z{i}.pv"
            for i, a in enumerate(known)
        )
        product = " * ".join(f"z{i}.n" for i in range(len(known)))
        size = con.execute(f"SELECT coalesce(sum({product}), 0) FROM data {sizes}").fetchone()
        if size is not None and int(size[0]) > MAX_PAIRS:
            bad = con.execute(
                f"SELECT {', '.join(ident(a) for a in known)}, list(DISTINCT {s} ORDER BY {s}) FROM sdata "
                f"GROUP BY {classes}, {', '.join(ident(a) for a in known)} HAVING count(DISTINCT {s}) < {need}"
            ).fetchall()
            for r in bad:
                result.disclose(Disclosure(rule, _full(rule, known, r[:-1]), tuple(r[-1])))
            result.targets += _targets(con, known, original)
            return
        keys = ", ".join(f"m{i}.leaf" for i in range(len(known)))
        rows = con.execute(
            f"SELECT {keys}, list(DISTINCT data.{s} ORDER BY data.{s}) FROM sdata data {' '.join(maps)} "
            f"GROUP BY {keys} HAVING count(DISTINCT data.{s}) < {need}"
        ).fetchall()
    else:
        q = f"SELECT list(DISTINCT {s} ORDER BY {s}) FROM sdata HAVING count(DISTINCT {s}) < {need}"
        rows = con.execute(q).fetchall()
    seen = _seen(original, known)
    if seen is not None:
        result.records_at_risk = result.records_at_risk or 0
    for r in rows:
        if seen is None:
            result.disclose(Disclosure(rule, _full(rule, known, r[:-1]), tuple(r[-1])))
        elif tuple(r[:-1]) in seen:
            result.disclose(Disclosure(rule, _full(rule, known, r[:-1]), tuple(r[-1])), seen[tuple(r[:-1])])
    result.targets += _targets(con, known, original)


def _full(rule: Rule, known: list[str], values: Sequence[Any]) -> tuple[str, ...]:
    m = dict(zip(known, (str(v) for v in values), strict=True))
    return tuple(m.get(a, "*") for a in rule.lhs)


def _seen(original: EncodedTable | None, known: list[str]) -> dict[tuple[str, ...], int] | None:
    """The combinations of the known attributes the input holds (targets are real records),
    each with its number of records."""
    if original is None:
        return None
    if not known:
        return {(): original.n_rows}
    g = group_rows([original.codes(a) for a in known], [original.cardinality(a) for a in known])
    cols = [original.column(a).values[k].astype(str) for a, k in zip(known, g.keys, strict=True)]
    return dict(zip(zip(*cols, strict=True), (int(c) for c in g.counts), strict=True))


def _targets(con: duckdb.DuckDBPyConnection, known: list[str], original: EncodedTable | None) -> int:
    seen = _seen(original, known)
    if seen is not None:
        return len(seen)
    if not known:
        return 1
    row = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(ident(a) for a in known)} FROM data)")
    got = row.fetchone()
    return int(got[0]) if got else 0
