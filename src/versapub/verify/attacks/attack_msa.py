"""The adversary of Ye et al. (DASFAA 2009, §2.2) against ``sa-groups`` tables, read from
the release's files (independent of the anonymizer).

The adversary knows a target's QI values (so its SA-group) and, possibly, the target's
values of some other sensitive attributes.  For a sensitive attribute ``S^i`` and a set
``K`` of other sensitive attributes whose values it knows, the candidates for the target's
``S^i`` are the values of its group's set ``G.S^i`` that co-occur in the sensitive table
``T^S`` with the known values (``π_{S^i} σ_{S^K = known} T^S``).  The paper's claim (§5.2):
because noise values are drawn from linkable values, such background knowledge does not
narrow the candidates below ``l_i``.  For ``|K| = 0, 1, ..., d-1`` this module counts the
records whose candidates for ``S^i`` fall below ``l_i`` when the adversary knows the
worst ``K`` of that size.

Targets: with the original table, every record, placed in each group that could hold it
(a QIT row with its QI values whose sets hold its sensitive values; a record counts as
exposed if it is in any such group); without it, every hypothetical target — each group
with each combination of ``T^S`` inside the product of its sets (a seeded uniform sample
of ``MAX_HYPOTHETICAL`` when there are more; the result says so).  With no background
knowledge (``|K| = 0``) the candidates are the whole set, so a verified release has none
below ``l_i``; that row is the check's pass/fail, the others are findings.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from versapub.data.sql import connect, duckdb_source
from versapub.data.table import EncodedTable
from versapub.verify.reading.manifest import Manifest, manifest_of

#: Without the input, at most this many hypothetical targets (a seeded uniform sample).
MAX_HYPOTHETICAL = 20_000


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _load(
    con: duckdb.DuckDBPyConnection, d: Path, t: dict[str, Any], original: EncodedTable | None
) -> tuple[list[str], int]:
    """Tables ``qit``, ``ts``, ``sg`` (group, attribute, value) and ``targets`` (tid, g,
    s_0.., w); returns the sensitive attributes and the number of targets before sampling."""
    rules = [t.get("enforces") or {}, *(t.get("also_enforces") or [])]
    sens = [str(r["rhs"]) for r in rules]
    qi = [a for a in t["attributes"] if a not in sens]
    files = t["files"]
    # every column under a name of this module's own (q0.., s0..): an attribute may be called g, c, w or tid
    text = [f"CAST({_q(a)} AS VARCHAR) q{i}" for i, a in enumerate(qi)]
    con.execute(
        f"CREATE TABLE qit AS SELECT {', '.join([*text, 'CAST(group_id AS BIGINT) g'])}, "
        f"CAST(count AS BIGINT) c FROM {duckdb_source(d / files['qit'])}"
    )
    ss = ", ".join(f"CAST({_q(a)} AS VARCHAR) s{i}" for i, a in enumerate(sens))
    con.execute(f"CREATE TABLE ts AS SELECT {ss}, CAST(count AS BIGINT) c FROM {duckdb_source(d / files['ts'])}")
    con.execute(
        "CREATE TABLE sg AS SELECT CAST(group_id AS BIGINT) g, CAST(attribute AS VARCHAR) a, "
        f"CAST(value AS VARCHAR) v FROM {duckdb_source(d / files['sets'])}"
    )
    for i, a in enumerate(sens):  # one (group, value) table per attribute: plain equi-joins below
        con.execute(f"CREATE TABLE sg{i} AS SELECT g, v FROM sg WHERE a = {_lit(a)}")
    inside = " ".join(f"SEMI JOIN sg{i} m{i} ON m{i}.g = x.g AND m{i}.v = x.s{i}" for i in range(len(sens)))
    cols = ", ".join(f"s{i}" for i in range(len(sens)))
    xs, os_, ts_ = (", ".join(f"{p}.s{i}" for i in range(len(sens))) for p in ("x", "o", "t"))
    total = 0
    if original is not None:
        data = {a: original.column(a).values.astype(str)[original.codes(a)] for a in [*qi, *sens]}
        named = {**{f"q{i}": data[a] for i, a in enumerate(qi)}, **{f"s{i}": data[a] for i, a in enumerate(sens)}}
        con.register("orig", pa.table(named))
        on = " AND ".join(f"o.q{i} = q.q{i}" for i in range(len(qi))) or "TRUE"
        qcols = ", ".join(f"q{i}" for i in range(len(qi)))
        con.execute(
            f"CREATE TABLE cells AS SELECT row_number() OVER () tid, * FROM (SELECT {qcols}"
            f"{', ' if qi else ''}{cols}, count(*) w FROM orig GROUP BY ALL)"
        )
        # the groups holding a cell's first sensitive value first (a few per value), then
        # those of them whose QIT has the cell's QI values (not every group of its QI values)
        con.execute(
            f"CREATE TABLE targets AS SELECT DISTINCT x.tid, x.g, {xs}, x.w FROM (SELECT o.tid, q.g, {os_}, o.w "
            "FROM cells o JOIN sg0 f ON f.v = o.s0 "
            f"JOIN qit q ON q.g = f.g AND {on}) x {inside}"
        )
    else:
        within = " ".join(
            f"JOIN sg m{i} ON m{i}.g = m0.g AND m{i}.a = {_lit(a)} AND m{i}.v = t.s{i}" for i, a in enumerate(sens) if i
        )
        con.execute(
            f"CREATE TABLE targets AS SELECT row_number() OVER () tid, g, {cols}, 1 w FROM (SELECT DISTINCT m0.g, "
            f"{ts_} FROM ts t JOIN sg m0 ON m0.a = {_lit(sens[0])} AND m0.v = t.s0 {within})"
        )
        n = con.execute("SELECT count(*) FROM targets").fetchone()
        total = int(n[0]) if n else 0
        if total > MAX_HYPOTHETICAL:  # a seeded uniform sample keeps check bounded
            con.execute(
                f"CREATE TABLE kept AS SELECT * FROM targets USING SAMPLE reservoir({MAX_HYPOTHETICAL} ROWS) "
                "REPEATABLE (1)"
            )
            con.execute("DROP TABLE targets")
            con.execute("ALTER TABLE kept RENAME TO targets")
    return sens, total


def msa_attack(
    directory: str | Path, original: EncodedTable | None = None, manifest: Manifest | None = None
) -> list[dict[str, Any]]:
    """Per ``sa-groups`` table of the release: the paper's adversary for every number of
    known sensitive values (see the module docstring)."""
    d = Path(directory)
    m = manifest_of(d, manifest)
    out = []
    for t in m["tables"]:
        if t.get("kind") != "sa-groups":
            continue
        t0 = time.perf_counter()
        with connect() as con:
            sens, n_all = _load(con, d, t, original)
            ls = {a: int(((t.get("diversity") or {}).get(a) or {}).get("l", 2)) for a in sens}
            n_targets = con.execute("SELECT count(DISTINCT tid), coalesce(sum(w), 0) FROM targets").fetchone()
            weight_total = con.execute(
                "SELECT coalesce(sum(w), 0) FROM (SELECT DISTINCT tid, w FROM targets)"
            ).fetchone()
            rows: list[dict[str, Any]] = []
            for i, a in enumerate(sens):
                others = [j for j in range(len(sens)) if j != i]
                for k in range(len(sens)):
                    parts = []
                    for known in itertools.combinations(others, k):
                        keys = ", ".join(f"s{j}" for j in known)
                        match = "".join(f" AND p.s{j} = x.s{j}" for j in known)
                        pairs = f"(SELECT DISTINCT {keys}{', ' if keys else ''}s{i} FROM ts)"
                        parts.append(
                            f"SELECT x.tid, x.g, count(p.s{i}) n FROM targets x JOIN sg m ON m.g = x.g AND "
                            f"m.a = {_lit(a)} LEFT JOIN {pairs} p ON p.s{i} = m.v{match} GROUP BY x.tid, x.g"
                        )
                    exposed = " UNION ALL ".join(parts)
                    row = con.execute(
                        f"SELECT coalesce(sum(w) FILTER (WHERE n_min < {ls[a]}), 0), min(n_min) FROM (SELECT x.tid, "
                        f"min(x.n) n_min FROM ({exposed}) x GROUP BY x.tid) e JOIN (SELECT DISTINCT tid, w FROM "
                        "targets) t USING (tid)"
                    ).fetchone()
                    smallest = (row[1],) if row else None
                    below = int(row[0]) if row else 0
                    rows.append(
                        {
                            "known": k,
                            "attribute": a,
                            "l": ls[a],
                            "below": below,
                            "share": below / max(int(weight_total[0]) if weight_total else 1, 1),
                            "min_candidates": int(smallest[0]) if smallest and smallest[0] is not None else None,
                        }
                    )
        zero = [r for r in rows if r["known"] == 0]
        ok = all(r["below"] == 0 for r in zero)
        unit = "record(s)" if original is not None else "hypothetical target(s)"
        worst = max(rows, key=lambda r: (int(r["below"]), -int(r["known"])))
        out.append(
            {
                "table": t["name"],
                "kind": "sa-groups",
                "ok": ok,
                "rows": rows,
                "targets": "records"
                if original is not None
                else "hypothetical (group, T^S combination) pairs"
                + (
                    f", a uniform sample of {MAX_HYPOTHETICAL:,}"
                    if original is None and n_all > MAX_HYPOTHETICAL
                    else ""
                ),
                "n_targets": int(n_targets[0]) if n_targets else 0,
                "seconds": round(time.perf_counter() - t0, 4),
                "message": (
                    f"table {t['name']}: with no background knowledge every target keeps at least l_i candidates"
                    if ok
                    else f"table {t['name']}: some targets have fewer than l_i candidates with no background knowledge"
                )
                + (
                    f"; knowing {worst['known']} other sensitive value(s), {worst['below']:,} {unit} "
                    f"({worst['share']:.1%}) keep fewer than l = {worst['l']} candidates for {worst['attribute']}"
                    if worst["below"]
                    else "; background knowledge never narrows a target below l_i"
                ),
            }
        )
    return out
