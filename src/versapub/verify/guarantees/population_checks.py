"""The verifier's own test of the models checked against a population: delta-presence
(Nergiz, Atzori & Clifton, SIGMOD 2007, Definition 3) and k-map (Sweeney 2001) given the
population itself.

From the release's files alone plus the population (``check --population FILE``): each
equivalence class of a generalized table (distinct values of its quasi-identifiers) is
matched to the population records its published values cover — a generalized value covers
the leaves of its run in the attribute's listing, a leaf covers itself — and

* delta-presence: ``delta_min <= records / covered <= delta_max`` for every class, and with
  ``delta_min > 0`` every population record covered by some class (one covered by none is
  disclosed as absent: probability 0);
* k-map: every class covers at least ``k`` population records;
* both: no class holds more records than the population records it covers.

The population must be the one the manifest records (its SHA-256 and size).  Nothing here
reads the publisher's classes or counts: the matching is a DuckDB join of the published
values with the population's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pyarrow as pa

from versapub.verify.finding import Finding
from versapub.verify.guarantees.group_checks import SpecError, against_population, le, presence_bounds
from versapub.verify.reading.primitives import Checker, _lit, _q


def population_models(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts of ``spec`` (an ``all-of`` flattened) checked against the population."""
    parts = spec.get("guarantees") if spec.get("name") == "all-of" else [spec]
    return [p for p in parts or [] if isinstance(p, dict) and against_population(p)]


def _same_population(c: Checker, name: str) -> bool:
    """The population given is the one the manifest records (digest and size)."""
    pop, entry = c.population, c.population_entry
    if not isinstance(entry, dict):
        c.report.add("population", False, "the manifest does not record the population it was checked against", name)
        return False
    assert pop is not None
    digest, size = getattr(pop, "sha256", None), pop.n_rows
    ok = entry.get("records") == size and (entry.get("sha256") is None or digest is None or entry["sha256"] == digest)
    c.report.add(
        "population",
        ok,
        f"the population given is the one the release was checked against ({size:,} records"
        + (f", SHA-256 {str(digest)[:12]}…)" if digest else ")")
        if ok
        else f"the population given ({size:,} records, SHA-256 {digest}) is not the one the manifest records "
        f"({entry.get('records')!r} records, SHA-256 {entry.get('sha256')!r})",
        name,
    )
    return ok


def _covered(c: Checker, data: str, labels: str, order: str, qi: Sequence[str]) -> tuple[Any, int]:
    """Per class (distinct published quasi-identifier values): its records and the
    population records it covers; and the population records no class covers."""
    assert c.population is not None
    pop = c.population
    c.con.register(
        "pop_raw",
        pa.table(
            {f"p{i}": pa.array(cast(Any, pop.column(a)).decode().astype(str), pa.string()) for i, a in enumerate(qi)}
        ),
    )
    listed = {str(r[0]) for r in c.con.execute(f"SELECT DISTINCT attribute FROM {order}").fetchall()}
    q = [_q(a) for a in qi]
    c.con.execute(
        "CREATE OR REPLACE TEMP TABLE pcells AS SELECT "
        + ", ".join(
            f"p{i}, (SELECT CAST(o.position AS BIGINT) FROM {order} o WHERE o.attribute = {_lit(a)} AND o.leaf = p{i}) "
            f"AS pos{i}"
            for i, a in enumerate(qi)
        )
        + ", c, row_number() OVER () AS pid FROM (SELECT "
        + ", ".join(f"p{i}" for i in range(len(qi)))
        + ", count(*) c FROM pop_raw GROUP BY ALL)"
    )
    runs = []
    for i, a in enumerate(qi):  # a class's run per attribute: its generalized value's, or its leaf's position
        runs.append(
            f"coalesce((SELECT CAST(l.first AS BIGINT) FROM {labels} l WHERE l.attribute = {_lit(a)} AND l.value = "
            f"k{i}), (SELECT CAST(o.position AS BIGINT) FROM {order} o WHERE o.attribute = {_lit(a)} AND o.leaf = "
            f"k{i})) AS f{i}, coalesce((SELECT CAST(l.last AS BIGINT) FROM {labels} l WHERE l.attribute = {_lit(a)} "
            f"AND l.value = k{i}), (SELECT CAST(o.position AS BIGINT) FROM {order} o WHERE o.attribute = {_lit(a)} "
            f"AND o.leaf = k{i})) AS l{i}"
        )
    c.con.execute(
        f"CREATE OR REPLACE TEMP TABLE pclasses AS SELECT *, {', '.join(runs)} FROM (SELECT "
        + ", ".join(f"{e} AS k{i}" for i, e in enumerate(q))
        + f", sum(CAST({_q('count')} AS BIGINT)) r, row_number() OVER () AS cid FROM {data} GROUP BY ALL)"
    )
    match = " AND ".join(
        f"p.pos{i} BETWEEN x.f{i} AND x.l{i}" if a in listed else f"p.p{i} = x.k{i}" for i, a in enumerate(qi)
    )
    c.con.execute(
        "CREATE OR REPLACE TEMP TABLE ppairs AS SELECT x.cid, p.pid, p.c FROM pclasses x JOIN pcells p ON "
        + (match or "TRUE")
    )
    per = c.con.execute(
        "SELECT x.r, coalesce(s.n, 0) AS n, "
        + ", ".join(f"x.k{i}" for i in range(len(qi)))
        + " FROM pclasses x LEFT JOIN (SELECT cid, sum(c) n FROM ppairs GROUP BY cid) s USING (cid) ORDER BY x.cid"
    ).fetchnumpy()
    row = c.con.execute(
        "SELECT coalesce(sum(c), 0) FROM pcells WHERE pid NOT IN (SELECT DISTINCT pid FROM ppairs)"
    ).fetchone()
    for t in ("ppairs", "pclasses", "pcells"):
        c.con.execute(f"DROP TABLE IF EXISTS {t}")
    c.con.unregister("pop_raw")
    return per, int(row[0]) if row else 0


def population_ok(
    c: Checker, data: str, labels: str, order: str, qi: Sequence[str], spec: dict[str, Any], name: str
) -> None:
    """The models of ``spec`` checked against the population, on one generalized table."""
    models = population_models(spec)
    if not models:
        return
    if c.population is None:  # not checkable here: publish checked it; say so, do not fail the release
        entry = c.population_entry if isinstance(c.population_entry, dict) else {}
        recorded = f"{entry.get('file')}, {entry.get('records')} records" if entry.get("file") else ""
        c.report.findings.append(
            Finding(
                "population",
                True,
                f"{models[0]['name']} is checked against the population the records were drawn from"
                + (f" ({recorded}, which publish checked it against)" if recorded else "")
                + ": not checked here — give it to check it again (versapub check --population FILE)",
                name,
                attention=True,
            )
        )
        return
    missing = [a for a in qi if a not in c.population.names]
    if missing:
        c.report.add("population", False, f"the population has no column {missing[0]!r}", name)
        return
    if not _same_population(c, name):
        return
    per, uncovered = _covered(c, data, labels, order, qi)
    r = np.asarray(per["r"], dtype=np.float64)
    n = np.asarray(per["n"], dtype=np.float64)
    for m in models:
        try:
            if m["name"] == "delta-presence":
                lo, hi = presence_bounds(m)
                ok = le(lo * n, r) & le(r, hi * n) & (r <= n)
                what = f"records / population covered in [{lo:g}, {hi:g}]"
                absent = lo > 0 and uncovered > 0
            else:
                k = int(m["k"])
                ok, what, absent = (n >= k) & (r <= n), f"at least {k} population records covered", False
        except (SpecError, KeyError, TypeError, ValueError) as exc:
            c.report.add("population", False, f"{m.get('name')}: {exc}", name)
            continue
        bad = np.flatnonzero(~ok)
        shown = ""
        if len(bad):
            i = int(bad[0])
            vals = ", ".join(f"{a}={per[f'k{j}'][i]}" for j, a in enumerate(qi))
            shown = f"; e.g. ({vals}): {int(r[i])} record(s), {int(n[i])} population record(s)"
        c.report.add(
            "population",
            not len(bad) and not absent,
            f"every equivalence class satisfies {m['name']} ({what}): {len(r)} checked against "
            f"{c.population.n_rows:,} population records"
            if not len(bad) and not absent
            else (f"{len(bad)} of {len(r)} equivalence classes violate {m['name']} ({what}){shown}" if len(bad) else "")
            + (
                f"{'; ' if len(bad) else ''}{uncovered:,} population record(s) are covered by no class (presence "
                f"probability 0 < delta_min)"
                if absent
                else ""
            ),
            name,
        )
