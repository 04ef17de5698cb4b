"""The scalable attack on releases of any size, when every rule's sensitive attribute lies
in a table that shares no attribute with the others (as UAD releases are).

For such a *single-table component* the propagation of :func:`scalable_attack` has a
closed form, computed with SQL on the files: a target knowing ``q`` (its left-hand-side
values inside the table) can have any ``S`` value that co-occurs with ``q`` in a row of a
plain table, or, in an Anatomy table, any value of the ST groups that hold a QIT row
matching ``q``.  When ``S`` is the Anatomy table's own sensitive attribute and ``q`` lies in
its QIT, every group the target may be in already offers at least ``min_g |distinct S in
g|`` values, so a single aggregate over the ST settles every target at once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import duckdb

from versapub.data.groupby import group_rows
from versapub.data.sql import connect, duckdb_source
from versapub.data.table import EncodedTable
from versapub.privacy.rules import Rule
from versapub.verify.attacks.attack import AttackResult, Disclosure
from versapub.verify.guarantees.thresholds import Thresholds
from versapub.verify.identity.key_cells import suppressed_columns
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.manifest import Manifest, manifest_of
from versapub.verify.reading.reading import parse_entry


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def fast_scalable_attack(
    directory: str | Path,
    rules: Sequence[Rule],
    guarantee: Thresholds,
    original: EncodedTable | None = None,
    manifest: Manifest | None = None,
) -> AttackResult:
    """The scalable attack in SQL.  Exact propagation for rules whose sensitive attribute
    lies in a table sharing no attribute with the others; for linked tables, the sound
    but weaker per-table bound of :func:`_linked_rule`."""
    t0 = time.perf_counter()
    d = Path(directory)
    m = manifest_of(d, manifest)
    tables: list[dict[str, Any]] = [t for t in m["tables"] if reading(parse_entry(t).kind).exact_values]
    result = AttackResult("scalable", guarantee)
    result.removed = bool(isinstance(m.get("removed"), dict) and m["removed"].get("records"))
    l = guarantee.min_possible_values()  # a target left with fewer possible values is disclosed
    wildcard = suppressed_columns(m)  # locally suppressed: an empty value matches any value
    opened = ExitStack()  # closed (the connection and its spill directory) below
    con = opened.enter_context(connect())
    loaded: dict[str, str] = {}

    def table(file: str) -> str:
        """Each file is parsed once and kept as a DuckDB table for every rule."""
        if file not in loaded:
            name = f"t{len(loaded)}"
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM {duckdb_source(d / file)}")
            loaded[file] = name
        return loaded[file]

    def relation_of(t: dict[str, Any]) -> str:
        """The table's files joined on the columns they share (an Anatomy QIT and ST on the
        group id, which is exactly the adversary's view; a plain table is its one file)."""
        entry = parse_entry(t)
        roles = reading(entry.kind).roles(entry)
        names = [table(entry.files[role]) for role in roles]
        rel = f"(SELECT * FROM {names[0]}"
        seen = set(roles[next(iter(roles))])
        for role, name in zip(list(roles)[1:], names[1:], strict=True):
            shared = [c for c in roles[role] if c in seen and c != "count"]
            rel += f" JOIN {name} USING ({', '.join(_q(c) for c in shared)})" if shared else f" CROSS JOIN {name}"
            seen |= set(roles[role])
        return rel + ")"

    try:
        for rule in rules:
            homes = [t for t in tables if rule.rhs in t["attributes"]]
            if not homes:  # published by a generalized table only (verify.attack_generalized)
                continue
            linked = len(homes) > 1 or any(
                set(homes[0]["attributes"]) & set(o["attributes"]) for o in tables if o is not homes[0]
            )
            if linked:
                _linked_rule(con, relation_of, homes, rule, l, original, result)
                continue
            t = homes[0]
            q_in = [a for a in rule.lhs if a in t["attributes"]]
            s_q = _q(rule.rhs)
            entry = parse_entry(t)
            kind = reading(entry.kind)
            latent = kind.sensitive_of(entry)
            roles = kind.roles(entry)
            # the file holding the table's other attributes (the QIT; a plain table's only file)
            key_role = next(r for r, cols in roles.items() if not set(cols) & set(latent))
            keyed = table(entry.files[key_role])
            relation = relation_of(t)
            if latent == (rule.rhs,) and rule.rhs not in q_in and len(roles) > 1:
                # A single attribute behind a latent group: per-group diversity settles the rule.
                s_role = next(r for r, cols in roles.items() if rule.rhs in cols)
                row = con.execute(
                    f"SELECT min(k) FROM (SELECT count(DISTINCT {s_q}) k FROM {table(entry.files[s_role])} "
                    "GROUP BY group_id)"
                ).fetchone()
                if row is not None and row[0] is not None and int(row[0]) >= l:
                    _count_targets(result, rule, q_in, original, _distinct(con, keyed, q_in), {})
                    continue
            s_part = _apart(roles, rule.rhs, q_in)
            if s_part is not None:  # S's file shares no column with the files of q_in: no link at all
                s_file = table(entry.files[s_part])
                row = con.execute(f"SELECT list(DISTINCT {s_q} ORDER BY {s_q}) FROM {s_file}").fetchone()
                vals = tuple(row[0]) if row and row[0] is not None else ()
                n_q = _distinct(con, keyed, q_in)
                found = {} if len(vals) >= l else {("*",) * len(q_in): vals}
                _count_targets(result, rule, q_in, original, n_q, found)
                continue
            found = _short(con, relation, q_in, rule.rhs, l, wildcard)
            _count_targets(result, rule, q_in, original, _distinct(con, relation, q_in), found)
    finally:
        opened.close()
    result.seconds = time.perf_counter() - t0
    return result


def _short(
    con: duckdb.DuckDBPyConnection, relation: str, q_in: list[str], s: str, l: int, wildcard: frozenset[str]
) -> dict[tuple[str, ...], tuple[str, ...]]:
    """The combinations of ``q_in`` that show fewer than ``l`` values of ``s``, with those
    values (an empty value of a locally suppressed column matching any value)."""
    s_q = _q(s)
    if q_in:
        keys = ", ".join(_q(a) for a in q_in)
        bad = con.execute(
            f"SELECT {keys}, list(DISTINCT {s_q} ORDER BY {s_q}) FROM {relation} GROUP BY {keys} "
            f"HAVING count(DISTINCT {s_q}) < {l}"
        ).fetchall()
    else:
        bad = con.execute(
            f"SELECT list(DISTINCT {s_q} ORDER BY {s_q}) FROM {relation} HAVING count(DISTINCT {s_q}) < {l}"
        ).fetchall()
    found = {tuple(r[:-1]): tuple(r[-1]) for r in bad}
    if found and wildcard & set(q_in):
        found = _unfolded(con, relation, q_in, s, wildcard, found, l)
    return found


def _unfolded(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    q_in: list[str],
    s: str,
    wildcard: frozenset[str],
    found: dict[tuple[str, ...], tuple[str, ...]],
    l: int,
) -> dict[tuple[str, ...], tuple[str, ...]]:
    """The short combinations once the rows with locally suppressed (empty) values are read
    as matching any value: a combination's possible values are its own and those of every
    published combination empty where it has its own (as :func:`versapub.verify.attacks.attack._fold`)."""
    wild = [i for i, a in enumerate(q_in) if a in wildcard]
    keys = ", ".join(_q(a) for a in q_in)
    where = " OR ".join(f"{_q(q_in[i])} = ''" for i in wild)
    rows = con.execute(
        f"SELECT {keys}, list(DISTINCT {_q(s)}) FROM {relation} WHERE {where} GROUP BY {keys}"
    ).fetchall()
    patterns = {tuple(str(v) for v in r[:-1]): set(r[-1]) for r in rows}
    out = {}
    for q, vals in found.items():
        got = set(vals)
        for p, more in patterns.items():
            if all(x == y or (i in wild and x == "") for i, (x, y) in enumerate(zip(p, q, strict=True))):
                got |= more
        if len(got) < l:
            out[q] = tuple(sorted(got))
    return out


def _linked_rule(
    con: duckdb.DuckDBPyConnection,
    relation_of: Any,
    homes: list[dict[str, Any]],
    rule: Rule,
    l: int,
    original: EncodedTable | None,
    result: AttackResult,
) -> None:
    """A rule whose sensitive attribute lies in tables linked to others: each table holding
    ``S`` alone bounds the possible values from above (it ignores the other tables'
    constraints, so the bound is sound); a target's candidates are the intersection of
    those bounds over the tables holding ``S``.  Weaker than full propagation."""
    s_q = _q(rule.rhs)
    bounds = []
    for t in homes:
        q_in = [a for a in rule.lhs if a in t["attributes"]]
        rel = relation_of(t)
        if q_in:
            keys = ", ".join(_q(a) for a in q_in)
            rows = con.execute(f"SELECT {keys}, list(DISTINCT {s_q}) FROM {rel} GROUP BY {keys}").fetchall()
            bounds.append((q_in, {tuple(r[:-1]): frozenset(r[-1]) for r in rows}))
        else:
            row = con.execute(f"SELECT list(DISTINCT {s_q}) FROM {rel}").fetchone()
            bounds.append(([], {(): frozenset(row[0] if row else [])}))
    if original is None:  # targets: each table's own combinations, no intersection
        for q_in, sets in bounds:
            result.targets += len(sets)
            for key, vals in sets.items():
                if len(vals) < l:
                    q = tuple(dict(zip(q_in, key, strict=True)).get(a, "*") for a in rule.lhs)
                    result.disclose(Disclosure(rule, q, tuple(sorted(vals))))
        return
    g = group_rows([original.codes(a) for a in rule.lhs], [original.cardinality(a) for a in rule.lhs])
    result.targets += len(g.counts)
    result.records_at_risk = result.records_at_risk or 0
    decoded = [original.column(a).values[g.keys[i]] for i, a in enumerate(rule.lhs)]
    for row, held in zip(zip(*decoded, strict=True), g.counts.tolist(), strict=True):
        known = dict(zip(rule.lhs, (str(v) for v in row), strict=True))
        possible: frozenset[str] | None = None
        for q_in, sets in bounds:
            vals = sets.get(tuple(known[a] for a in q_in), frozenset())
            possible = vals if possible is None else possible & vals
        if possible is not None and not possible and result.removed:
            continue  # a removed record's values: in no table, nothing published about it
        if possible is not None and len(possible) < l:
            result.disclose(Disclosure(rule, tuple(known[a] for a in rule.lhs), tuple(sorted(possible))), int(held))


def _apart(roles: dict[str, list[str]], s: str, q_in: list[str]) -> str | None:
    """The role holding ``s`` when no chain of files sharing columns links it to a file
    holding an attribute of ``q_in`` (a cross join links nothing), else None."""
    s_role = next((r for r, cols in roles.items() if s in cols), None)
    if s_role is None or s in q_in:
        return None
    reached, todo = {s_role}, [s_role]
    while todo:
        here = set(roles[todo.pop()]) - {"count"}
        for r, cols in roles.items():
            if r not in reached and here & set(cols):
                reached.add(r)
                todo.append(r)
    return None if any(set(roles[r]) & set(q_in) for r in reached) else s_role


def _distinct(con: duckdb.DuckDBPyConnection, relation: str, q_in: list[str]) -> int:
    if not q_in:
        return 1
    keys = ", ".join(_q(a) for a in q_in)
    row = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {keys} FROM {relation})").fetchone()
    return int(row[0]) if row else 0


def _count_targets(
    result: AttackResult,
    rule: Rule,
    q_in: list[str],
    original: EncodedTable | None,
    n_distinct: int,
    bad: dict[tuple[str, ...], tuple[str, ...]],
) -> None:
    """Count the targets (the original's LHS combinations, else the table's ``q_in``
    combinations) and record those whose ``q_in`` part is disclosed."""
    if original is None:
        result.targets += n_distinct
        for key, vals in bad.items():
            q = tuple(dict(zip(q_in, key, strict=True)).get(a, "*") for a in rule.lhs)
            result.disclose(Disclosure(rule, q, vals))
        return
    g = group_rows([original.codes(a) for a in rule.lhs], [original.cardinality(a) for a in rule.lhs])
    result.targets += len(g.counts)
    result.records_at_risk = result.records_at_risk or 0
    if not bad:
        return
    decoded = [original.column(a).values[g.keys[i]] for i, a in enumerate(rule.lhs)]
    idx = [rule.lhs.index(a) for a in q_in]
    for row, held in zip(zip(*decoded, strict=True), g.counts.tolist(), strict=True):
        key = tuple(str(row[i]) for i in idx)
        if key in bad:
            result.disclose(Disclosure(rule, tuple(str(v) for v in row), bad[key]), int(held))
