"""Independent verification of a written release, from its files alone.

This module shares no code with the decompositions, anonymizers or the release
writer: it parses ``manifest.json`` itself, reads every table with DuckDB, and checks
with SQL.  It relies only on the manifest's core keys (``format``, ``n_records``,
``attributes``, ``guarantee``, ``rules``, ``tables`` with ``name``/``attributes``/
``kind``/``enforces``/``files``), so hand-made releases in the same format can be
checked too.  Checks:

* structure: format version, core keys, every file present with the expected columns;
* every count is a positive integer, every count table is duplicate-free and sums to
  ``n_records``;
* anatomy: QIT and ST agree on every group's size; every group satisfies the
  guarantee (l-diversity: ``l * max_count <= |group|``); for a table with several
  sensitive attributes (multi-SA), for every ``A_i`` and every combination of the other
  sensitive values inside a group; a suppressed group has no ST rows and the ST sums to
  ``n_records`` minus its size;
* group ids of every anatomy table are exactly ``0 .. G-1``;
* no file in the release directory that the manifest does not list (a leak);
* schema: the published schema is in GNF for the manifest's rules (or the rules the
  steward requires), each group against the manifest's guarantee (or the one required);
* with the original table: every attribute is published, and every published marginal
  (plain table, QIT without ``group_id``, ST's sensitive column) equals the original's
  projection, so no record is missing or invented; and every anatomy table's QIT rows and
  ST rows can each be paired with the input's records through groups that hold both the
  record's quasi-identifier values and its sensitive value (two b-matchings, solved as
  maximum flows with OR-Tools) — a sensitive value moved between groups fails this even
  when every size and marginal still agrees.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from versapub.data.source import Source
from versapub.data.sql import connect, duckdb_source
from versapub.privacy.rules import Rule
from versapub.verify.collection_check import check_collection
from versapub.verify.digests import digests_ok
from versapub.verify.finding import Finding
from versapub.verify.gnf import gnf_verdicts, read_tables
from versapub.verify.group_checks import SpecError, failing_groups, group_test, taxonomy_parents
from versapub.verify.requirement import Requirement

FORMAT = "versapub-release/1"
_CORE = ("format", "n_records", "attributes", "guarantee", "rules", "tables")


@dataclass
class VerificationReport:
    """All findings of one verification run."""

    directory: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.findings) and all(f.ok for f in self.findings)

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    def add(self, check: str, ok: bool, message: str, file: str | None = None) -> bool:
        self.findings.append(Finding(check, ok, message, file))
        return ok

    def explain(self) -> str:
        if self.ok:
            return f"{len(self.findings)} checks passed."
        return " ".join(f"[{f.check}{' ' + f.file if f.file else ''}] {f.message}" for f in self.failures[:10]) + (
            "" if len(self.failures) <= 10 else f" (and {len(self.failures) - 10} more)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "n_checks": len(self.findings),
            "n_failed": len(self.failures),
            "findings": [f.to_json() for f in self.findings],
        }


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _plural(what: str) -> str:
    """'group' -> 'groups', 'equivalence class' -> 'equivalence classes'."""
    return what + ("es" if what.endswith("s") else "s")


def _shown(expr: str) -> str:
    """A line column for a message: the attribute name, or 'group' for the group id."""
    return "group" if expr.startswith("CAST(") else expr[1:-1].replace('""', '"')


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


#: Files a release holds besides the tables its manifest lists.
_EXTRAS = {"manifest.json", "verification.json", "check.json", "report.md", "report.html"}
#: By default the pairing check runs on anatomy tables with at most this many QIT plus ST
#: rows (it costs about 25 s at 10^6 records); ``check --original`` runs it on any size.
PAIRING_MAX_ROWS = 300_000


def _max_flow(rows: dict[str, Any], cells: dict[str, Any], arcs: dict[str, Any]) -> tuple[int, int]:
    """Records (``rows``: ``rid``, ``c``) sent to input cells (``cid``, ``c``) along ``arcs``
    (``rid``, ``cid``): the maximum flow (OR-Tools) and the records to send."""
    from ortools.graph.python import max_flow  # type: ignore[import-untyped]

    n_rows, n_cells = len(rows["rid"]), len(cells["cid"])
    total = int(rows["c"].sum())
    src, sink = n_rows + n_cells, n_rows + n_cells + 1
    tails = np.concatenate([np.full(n_rows, src), arcs["rid"], n_rows + cells["cid"]]).astype(np.int64)
    heads = np.concatenate([rows["rid"], n_rows + arcs["cid"], np.full(n_cells, sink)]).astype(np.int64)
    caps = np.concatenate([rows["c"], np.full(len(arcs["rid"]), total), cells["c"]]).astype(np.int64)
    smf = max_flow.SimpleMaxFlow()
    smf.add_arcs_with_capacity(tails, heads, caps)
    smf.solve(src, sink)
    return int(smf.optimal_flow()), total


class _Checker:
    def __init__(
        self,
        directory: Path,
        original: Source | None,
        requirement: Requirement,
        pairing_max_rows: int | None = PAIRING_MAX_ROWS,
        *,
        con: duckdb.DuckDBPyConnection,
    ) -> None:
        self.pairing_max_rows = pairing_max_rows
        self.requirement = requirement
        self.dir = directory
        self.original = original
        self.report = VerificationReport(str(directory))
        self.con = con
        self.n = 0
        self.views = 0
        self.hierarchies: dict[str, str] = {}
        #: Sensitive attribute -> the guarantee of every rule checked on it (all of them).
        self.rule_guarantees: dict[str, dict[str, Any]] = {}

    # -- reading ------------------------------------------------------------------
    def relation(self, file: str, expected: list[str], check: str) -> str | None:
        """Load ``file`` as a table with all-text columns; return its name, or None after
        recording why it cannot be used."""
        path = self.dir / file
        if not path.is_file() and not (path.is_dir() and any(path.glob("*.parquet"))):
            self.report.add(check, False, "file listed in the manifest is missing", file)
            return None
        self.views += 1
        view = f"v{self.views}"
        try:  # a directory of Parquet parts (a large table) is read where it lies, not copied
            what = "VIEW" if path.is_dir() else "TABLE"
            self.con.execute(f"CREATE {what} {view} AS SELECT * FROM {duckdb_source(path)}")
            cols = [r[0] for r in self.con.execute(f"DESCRIBE {view}").fetchall()]
        except (duckdb.Error, OSError) as exc:
            self.report.add(check, False, f"cannot be read: {str(exc).splitlines()[0]}", file)
            return None
        if cols != expected:
            self.report.add(check, False, f"columns are {cols}, expected {expected}", file)
            return None
        return view

    # -- checks -------------------------------------------------------------------
    def counts_ok(self, view: str, cols: list[str], file: str, expected_total: int | None = None) -> bool:
        """Counts are positive integers (False stops further checks of the file); also
        reports duplicate rows and a total different from ``n_records`` (or from
        ``expected_total``: an ST with a suppressed group)."""
        cnt = _q("count")
        bad = self.con.execute(
            f"SELECT count(*) FROM {view} WHERE TRY_CAST({cnt} AS BIGINT) IS NULL OR TRY_CAST({cnt} AS BIGINT) <= 0"
        ).fetchone()
        if bad and bad[0]:
            self.report.add("counts", False, f"{bad[0]} row(s) have a count that is not a positive integer", file)
            return False
        keys = ", ".join(_q(c) for c in cols)
        dup = self.con.execute(
            f"SELECT count(*) FROM (SELECT {keys} FROM {view} GROUP BY {keys} HAVING count(*) > 1)"
        ).fetchone()
        if dup and dup[0]:
            self.report.add("counts", False, f"{dup[0]} value combination(s) appear on more than one row", file)
        total = self.con.execute(f"SELECT coalesce(sum(CAST({cnt} AS BIGINT)), 0) FROM {view}").fetchone()
        t = int(total[0]) if total else 0
        want = self.n if expected_total is None else expected_total
        what = "n_records" if expected_total is None else "n_records minus the suppressed group"
        msg = f"counts sum to {t}" + ("" if t == want else f", expected {what} = {want}")
        self.report.add("counts", t == want, msg, file)
        return True

    def marginal_ok(self, view: str, attrs: list[str], file: str, at_most: bool = False) -> None:
        """The published marginal over ``attrs`` equals the original's projection (with
        ``at_most``: is cell by cell at most the original's — an ST whose suppressed
        records are withheld).

        Published values are translated to the original's dictionary codes (a value the
        input does not have is a failure by itself); both sides are then aggregated on
        integer codes and compared cell by cell.
        """
        if self.original is None:
            return
        joins = " ".join(f"LEFT JOIN {_q('dict_' + a)} d{i} ON p.{_q(a)} = d{i}.value" for i, a in enumerate(attrs))
        codes = ", ".join(f"d{i}.code AS k{i}" for i in range(len(attrs)))
        unknown = " OR ".join(f"k{i} IS NULL" for i in range(len(attrs)))
        self.con.execute(
            f"CREATE TEMP TABLE pub_codes AS SELECT {codes}, CAST(p.{_q('count')} AS BIGINT) AS c FROM {view} p {joins}"
        )
        try:
            row = self.con.execute(f"SELECT count(*) FROM pub_codes WHERE {unknown}").fetchone()
            if row and row[0]:
                self.report.add(
                    "marginal", False, f"{row[0]} row(s) hold values of {attrs} that the input does not have", file
                )
                return
            keys = ", ".join(f"k{i}" for i in range(len(attrs)))
            orig = ", ".join(f"{_q(a)} AS k{i}" for i, a in enumerate(attrs))
            row = self.con.execute(
                f"SELECT count(*) FROM (SELECT {keys}, sum(c) AS c FROM pub_codes GROUP BY ALL) p "
                f"FULL OUTER JOIN (SELECT {orig}, count(*) AS c FROM original_codes GROUP BY ALL) o "
                f"USING ({keys}) WHERE " + ("p.c > coalesce(o.c, 0)" if at_most else "p.c IS DISTINCT FROM o.c")
            ).fetchone()
        finally:
            self.con.execute("DROP TABLE pub_codes")
        rel = "is at most" if at_most else "equals"
        self.zero(
            "marginal",
            row,
            f"marginal over {attrs} {rel} the original's projection",
            f"marginal over {attrs} {'exceeds' if at_most else 'differs from'} the original's projection "
            "in {} cell(s)",
            file,
        )

    def pairing_ok(self, qit: str, st: str, qi: list[str], sens: list[str], name: str) -> None:
        """Can the QIT rows, and separately the ST rows, be paired with the input's records
        through groups that hold both a record's QI values and its sensitive values?

        Each is a bipartite b-matching solved as a maximum flow (OR-Tools): source ->
        published row (capacity: its count) -> input cell ``(q, s)`` (an arc when the row's
        group holds ``q`` in the QIT and ``s`` in the ST) -> sink (capacity: the cell's
        count).  A faithful release saturates both; that is necessary, not sufficient, for a
        full assignment of records to groups (a three-way transportation problem)."""
        assert self.original is not None
        size = self.con.execute(f"SELECT (SELECT count(*) FROM {qit}) + (SELECT count(*) FROM {st})").fetchone()
        limit = self.pairing_max_rows
        if limit is not None and size and int(size[0]) > limit:
            self.report.add(
                "pairing",
                True,
                f"skipped: more than {limit:,} QIT and ST rows (versapub check --original runs it at any size)",
                name,
            )
            return
        keys = [*qi, *sens]
        ks = [f"k{i}" for i in range(len(keys))]
        orig = ", ".join(f"{_q(a)} AS {k}" for a, k in zip(keys, ks, strict=True))
        self.con.execute(
            f"CREATE TEMP TABLE cells AS SELECT *, row_number() OVER () - 1 AS cid FROM "
            f"(SELECT {', '.join(ks)}, count(*) AS c FROM (SELECT {orig} FROM original_codes) GROUP BY ALL)"
        )

        def coded(view: str, attrs: list[str], table: str) -> None:
            idx = [keys.index(a) for a in attrs]
            sel = ", ".join(f"d{j}.code AS k{i}" for j, i in enumerate(idx))
            joins = " ".join(f"JOIN {_q('dict_' + a)} d{j} ON r.{_q(a)} = d{j}.value" for j, a in enumerate(attrs))
            self.con.execute(
                f"CREATE TEMP TABLE {table} AS SELECT CAST(r.{_q('group_id')} AS BIGINT) AS g, {sel}, "
                f"CAST(r.{_q('count')} AS BIGINT) AS c, row_number() OVER () - 1 AS rid FROM {view} r {joins}"
            )

        coded(qit, qi, "qc")
        coded(st, sens, "sc")
        on = " AND ".join(
            [f"qc.k{i} = cells.k{i}" for i in range(len(qi))]
            + [f"sc.k{i} = cells.k{i}" for i in range(len(qi), len(keys))]
        )
        try:
            for role, table in (("QIT", "qc"), ("ST", "sc")):
                arcs = self.con.execute(
                    f"SELECT DISTINCT {table}.rid, cells.cid FROM qc JOIN sc ON qc.g = sc.g JOIN cells ON {on}"
                ).fetchnumpy()
                rows = self.con.execute(f"SELECT rid, c FROM {table} ORDER BY rid").fetchnumpy()
                cells = self.con.execute("SELECT cid, c FROM cells ORDER BY cid").fetchnumpy()
                flow, total = _max_flow(rows, cells, arcs)
                self.report.add(
                    "pairing",
                    flow == total,
                    f"every {role} row pairs with input records through a group that holds them"
                    if flow == total
                    else f"only {flow} of {total} records of the {role} pair with input records through a group "
                    "holding both their quasi-identifier and sensitive values: a value was moved between groups",
                    name,
                )
        finally:
            for t in ("cells", "qc", "sc"):
                self.con.execute(f"DROP TABLE IF EXISTS {t}")

    def sa_groups_ok(
        self,
        qit: str,
        ts: str,
        sets: str,
        qi: list[str],
        sens: list[str],
        entry: dict[str, Any],
        guarantee: dict[str, Any],
        name: str,
    ) -> None:
        """An ``sa-groups`` table (Ye et al.): group ids 0 .. G-1 shared by the QIT and the
        sets; every group has a set for every sensitive attribute and each set at least
        ``l_i`` values (the manifest's ``diversity`` and the rule's guarantee, on the set:
        each value counted once, Definition 3); every value of a non-primary set is
        linkable — it occurs in ``T^S`` with a value of the group's primary set
        (Definition 4); a group holds at least as many records as its primary set values."""
        gid = _q("group_id")
        if not self.group_ids_ok([qit, sets], [qit], "sa-groups", name):
            return
        self.con.execute(
            f"CREATE TEMP TABLE sg AS SELECT CAST({gid} AS BIGINT) g, {_q('attribute')} a, {_q('value')} v FROM {sets}"
        )
        try:
            dup = self.con.execute("SELECT count(*) FROM (SELECT g, a, v FROM sg GROUP BY ALL HAVING count(*) > 1)")
            self.zero("sa-groups", dup.fetchone(), "no set lists a value twice", "{} set value(s) listed twice", name)
            names = ", ".join(_lit(a) for a in sens)
            self.zero(
                "sa-groups",
                self.con.execute(f"SELECT count(*) FROM sg WHERE a NOT IN ({names})").fetchone(),
                "the sets name only the table's sensitive attributes",
                "{} set row(s) name an attribute that is not one of " + str(sens),
                name,
            )
            for a in sens:
                missing = self.con.execute(
                    f"SELECT count(*), min(g) FROM (SELECT DISTINCT CAST({gid} AS BIGINT) g FROM {qit}) q "
                    f"FULL OUTER JOIN (SELECT DISTINCT g FROM sg WHERE a = {_lit(a)}) s USING (g) "
                    "WHERE q.g IS NULL OR s.g IS NULL"
                ).fetchone()
                miss = int(missing[0]) if missing else -1
                self.report.add(
                    "sa-groups",
                    miss == 0,
                    f"every group has a set of {a!r}"
                    if miss == 0
                    else f"{miss} group(s) lack a set of {a!r} or are not in the QIT (e.g. group {missing[1]})"
                    if missing
                    else "cannot read the sets",
                    name,
                )
                self.con.execute(
                    f"CREATE TEMP VIEW set_view AS SELECT g AS {gid}, v AS {_q(a)}, 1 AS {_q('count')} "
                    f"FROM sg WHERE a = {_lit(a)}"
                )
                try:
                    self.groups_ok(
                        "set_view", [f"CAST({gid} AS BIGINT)"], a, self.guarantee_of(a, guarantee), name, "group's set"
                    )
                finally:
                    self.con.execute("DROP VIEW set_view")
                want = ((entry.get("diversity") or {}).get(a) or {}).get("l")
                if isinstance(want, int) and not isinstance(want, bool):
                    short = self.con.execute(
                        f"SELECT count(*), arg_min(g, n), min(n) FROM (SELECT g, count(*) n FROM sg "
                        f"WHERE a = {_lit(a)} GROUP BY g) WHERE n < {want}"
                    ).fetchone()
                    k = int(short[0]) if short else -1
                    self.report.add(
                        "sa-groups",
                        k == 0,
                        f"every set of {a!r} holds at least l = {want} values"
                        if k == 0
                        else f"{k} set(s) of {a!r} hold fewer than l = {want} values "
                        f"(e.g. group {short[1]}: {short[2]})"
                        if short
                        else "",
                        name,
                    )
            primary = entry.get("primary")
            if primary not in sens:
                self.report.add(
                    "manifest", False, f"primary {primary!r} is not one of the sensitive attributes {sens}", name
                )
                return
            p = _q(str(primary))
            for a in sens:
                if a == primary:
                    continue
                # LSV(a, G) = π_a(T^S ⋈ G.S^pri), then the set values outside it (an anti-join).
                row = self.con.execute(
                    f"WITH pairs AS (SELECT DISTINCT {p} AS pv, {_q(a)} AS v FROM {ts}), lsv AS (SELECT DISTINCT "
                    f"pr.g, t.v FROM sg pr JOIN pairs t ON pr.a = {_lit(str(primary))} AND pr.v = t.pv) "
                    "SELECT count(*), min(s.g), min(s.v) FROM sg s "
                    f"LEFT JOIN lsv USING (g, v) WHERE s.a = {_lit(a)} AND lsv.g IS NULL"
                ).fetchone()
                k = int(row[0]) if row else -1
                self.report.add(
                    "linkable",
                    k == 0,
                    f"every value in a set of {a!r} is linkable (co-occurs in T^S with the group's "
                    f"{primary} values, Definition 4)"
                    if k == 0
                    else f"{k} value(s) in sets of {a!r} are not linkable through T^S to the group's {primary} "
                    f"values (e.g. group {row[1]}: {row[2]!r}): an adversary can strike them out"
                    if row
                    else "",
                    name,
                )
            small = self.con.execute(
                f"SELECT count(*), min(q.g) FROM (SELECT CAST({gid} AS BIGINT) g, sum(CAST({_q('count')} AS BIGINT)) n "
                f"FROM {qit} GROUP BY 1) q JOIN (SELECT g, count(*) m FROM sg WHERE a = {_lit(str(primary))} "
                "GROUP BY g) s USING (g) WHERE q.n < s.m"
            ).fetchone()
            self.zero(
                "sa-groups",
                small,
                f"every group holds at least as many records as its {primary} values",
                "{} group(s) hold fewer records than their primary set has values (the primary carries no noise)",
                name,
            )
            if self.original is not None:
                self.grouping_ok(qit, qi, sens, name)
        finally:
            self.con.execute("DROP TABLE IF EXISTS sg")

    def grouping_ok(self, qit: str, qi: list[str], sens: list[str], name: str) -> None:
        """With the input: can every record be put in a group that holds its QI values (a
        QIT row, used as often as it counts) and whose sets hold each of its sensitive
        values?  A transportation problem solved as a maximum flow (OR-Tools): source ->
        input cell ``(q, s)`` (its count) -> QIT row ``(q, g)`` when ``s`` lies in ``g``'s
        sets -> sink (the row's count)."""
        assert self.original is not None
        keys = [*qi, *sens]
        ks = [f"k{i}" for i in range(len(keys))]
        orig = ", ".join(f"{_q(a)} AS {k}" for a, k in zip(keys, ks, strict=True))
        self.con.execute(
            f"CREATE TEMP TABLE cells AS SELECT *, row_number() OVER () - 1 AS rid FROM "
            f"(SELECT {', '.join(ks)}, count(*) AS c FROM (SELECT {orig} FROM original_codes) GROUP BY ALL)"
        )
        sel = ", ".join(f"d{j}.code AS k{j}" for j in range(len(qi)))
        joins = " ".join(f"JOIN {_q('dict_' + a)} d{j} ON r.{_q(a)} = d{j}.value" for j, a in enumerate(qi))
        self.con.execute(
            f"CREATE TEMP TABLE qc AS SELECT CAST(r.{_q('group_id')} AS BIGINT) AS g{', ' + sel if sel else ''}, "
            f"CAST(r.{_q('count')} AS BIGINT) AS c, row_number() OVER () - 1 AS cid FROM {qit} r {joins}"
        )
        self.con.execute(
            "CREATE TEMP TABLE sc AS "
            + " UNION ALL ".join(
                f"SELECT s.g, {i} AS a, d.code FROM sg s JOIN {_q('dict_' + a)} d ON s.v = d.value "
                f"WHERE s.a = {_lit(a)}"
                for i, a in enumerate(sens)
            )
        )
        on = " AND ".join(f"qc.k{i} = cells.k{i}" for i in range(len(qi))) or "TRUE"
        members = " ".join(
            f"JOIN sc s{i} ON s{i}.g = qc.g AND s{i}.a = {i} AND s{i}.code = cells.k{len(qi) + i}"
            for i in range(len(sens))
        )
        try:
            arcs = self.con.execute(f"SELECT cells.rid, qc.cid FROM cells JOIN qc ON {on} {members}").fetchnumpy()
            rows = self.con.execute("SELECT rid, c FROM cells ORDER BY rid").fetchnumpy()
            cells = self.con.execute("SELECT cid, c FROM qc ORDER BY cid").fetchnumpy()
            flow, total = _max_flow(rows, cells, arcs)
            self.report.add(
                "grouping",
                flow == total,
                "every input record fits a group holding its quasi-identifier values whose sets hold its sensitive "
                "values"
                if flow == total
                else f"only {flow} of {total} input records fit a group holding their quasi-identifier "
                "values whose sets hold their sensitive values: a value is missing from a group's set or was moved",
                name,
            )
        finally:
            for t in ("cells", "qc", "sc"):
                self.con.execute(f"DROP TABLE IF EXISTS {t}")

    def zero(self, check: str, row: tuple[Any, ...] | None, ok: str, bad: str, file: str) -> None:
        """Record a check that passes when a SQL count (``row[0]``) is zero; ``bad`` gets the count."""
        count = int(row[0]) if row else -1
        self.report.add(check, count == 0, ok if count == 0 else bad.format(count), file)

    def group_ids_ok(self, views: list[str], dense: list[str], check: str, name: str) -> bool:
        """Every ``group_id`` of ``views`` is an integer (False: stop checking the table) and
        those of ``dense`` run 0 .. G-1."""
        gid = _q("group_id")
        union = " UNION ALL ".join(f"SELECT {gid} FROM {v}" for v in views)
        bad = self.con.execute(f"SELECT count(*) FROM ({union}) WHERE TRY_CAST({gid} AS BIGINT) IS NULL").fetchone()
        if bad and bad[0]:
            self.report.add(check, False, f"{bad[0]} row(s) have a non-integer group_id", name)
            return False
        ids = self.con.execute(
            "SELECT count(DISTINCT g), min(g), max(g) FROM ("
            + " UNION ALL ".join(f"SELECT CAST({gid} AS BIGINT) g FROM {v}" for v in dense)
            + ")"
        ).fetchone()
        n_ids, lo, hi = (int(x) if x is not None else -1 for x in (ids or (0, None, None)))
        ok = lo == 0 and hi == n_ids - 1
        self.report.add(
            "group-ids",
            ok,
            f"group ids are 0 .. {n_ids - 1}"
            if ok
            else f"group ids run from {lo} to {hi} for {n_ids} group(s); the format requires 0 .. G-1",
            name,
        )
        return True

    def anatomy_ok(
        self, qit: str, st: str, sens: list[str], guarantee: dict[str, Any], name: str, suppressed: int | None
    ) -> None:
        """Group sizes agree; every group satisfies the guarantee for every sensitive
        attribute ``A_i`` given the values of the others (one attribute: plain Anatomy);
        a suppressed group has QIT rows only."""
        gid, cnt = _q("group_id"), _q("count")
        if not self.group_ids_ok([qit, st], [qit, st], "anatomy", name):
            return
        sizes = f"SELECT CAST({gid} AS BIGINT) g, sum(CAST({cnt} AS BIGINT)) n FROM {{v}} GROUP BY 1"
        skip = "" if suppressed is None else f" AND g <> {int(suppressed)}"
        row = self.con.execute(
            f"SELECT count(*) FROM ({sizes.format(v=qit)}) a FULL OUTER JOIN ({sizes.format(v=st)}) b "
            f"USING (g) WHERE a.n IS DISTINCT FROM b.n{skip}"
        ).fetchone()
        if suppressed is not None:
            leak = self.con.execute(f"SELECT count(*) FROM {st} WHERE CAST({gid} AS BIGINT) = {int(suppressed)}")
            self.zero(
                "anatomy",
                leak.fetchone(),
                f"the suppressed group {suppressed} has no sensitive values in the ST",
                f"the ST publishes {{}} row(s) of the suppressed group {suppressed}",
                name,
            )
        self.zero(
            "anatomy",
            row,
            "QIT and ST agree on every group's size",
            "QIT and ST disagree on the size of {} group(s)",
            name,
        )
        for s in sens:
            # Lines: a group and a value combination of the other sensitive attributes.
            line = [f"CAST({gid} AS BIGINT)"] + [_q(o) for o in sens if o != s]
            given = [o for o in sens if o != s]
            what = "group" if not given else f"group and combination of {given}"
            self.groups_ok(st, line, s, self.guarantee_of(s, guarantee), name, what)

    def groups_ok(
        self,
        view: str,
        line: list[str],
        s: str | None,
        guarantee: dict[str, Any],
        name: str,
        what: str,
        spread: str | None = None,
    ) -> None:
        """Every line (SQL expressions ``line``) of ``view`` satisfies the guarantee for ``s``
        (the verifier's own test, :mod:`versapub.verify.group_checks`); ``s`` None: a table
        with no sensitive attribute (only its classes' sizes count).  ``spread``: a relation
        ``(pv, f, l)`` giving each published value of ``s`` as the run ``f..l`` of leaf
        positions it covers — the counts are then *induced*: a record with a generalized
        value adds ``1/(l - f + 1)`` to each leaf it covers (functional-diversity paper,
        Definition 8)."""
        try:
            test = group_test(guarantee, self.parents(s, view) if s is not None and spread is None else None)
        except SpecError as exc:
            self.report.add("guarantee", False, str(exc), name)
            return
        cols = ", ".join(f"{e} AS k{i}" for i, e in enumerate(line))
        keys = ", ".join(f"k{i}" for i in range(len(line)))
        cnt = f"CAST({_q('count')} AS BIGINT)"
        if spread is None:
            sv = _q(s) if s is not None else chr(39) + "*" + chr(39)
            inner = f"SELECT {cols}, {sv} AS sv, sum({cnt}) c FROM {view} GROUP BY ALL"
        else:
            assert s is not None
            inner = (
                f"SELECT {keys}, sv, sum(w) c FROM (SELECT {cols}, unnest(range(r.f, r.l + 1)) AS sv, "
                f"CAST({cnt} AS DOUBLE) / (r.l - r.f + 1) AS w FROM {view} JOIN {spread} r "
                f"ON {view}.{_q(s)} = r.pv) GROUP BY ALL"
            )
        h = self.con.execute(
            f"SELECT dense_rank() OVER (ORDER BY {keys}) - 1 AS g, dense_rank() OVER (ORDER BY sv) - 1 AS v, c, "
            f"{keys} FROM ({inner})"
        ).fetchnumpy()
        group, value = (np.asarray(h[k], dtype=np.int64) for k in ("g", "v"))
        count = np.asarray(h["c"], dtype=np.float64)
        bad = failing_groups(test, group, value, count)
        about = f" for {s!r}" + (" (induced frequencies of its generalized values)" if spread else "") if s else ""
        lines = int(group.max()) + 1 if len(group) else 0
        shown = ""
        if len(bad):
            first = [int(np.flatnonzero(group == b)[0]) for b in bad[:3]]
            names = [c for c in line if c != "1"]
            shown = "; e.g. " + "; ".join(
                "(" + ", ".join(f"{_shown(n)}={h[f'k{j}'][i]}" for j, n in enumerate(line) if n in names) + ")"
                for i in first
            )
        self.report.add(
            "guarantee",
            not len(bad),
            f"every {what} satisfies {test.name} ({test.wording}){about}: {lines} checked"
            if not len(bad)
            else f"{len(bad)} of {lines} {_plural(what)} violate {test.name} ({test.wording}){about}{shown}",
            name,
        )

    def sensitive_generalized(self, labels: str, s: str) -> bool:
        """Does the labels listing give generalized values of the sensitive attribute ``s``?"""
        row = self.con.execute(f"SELECT count(*) FROM {labels} WHERE attribute = {_lit(s)}").fetchone()
        return bool(row and row[0])

    def guarantee_of(self, s: str, release: dict[str, Any]) -> dict[str, Any]:
        """The guarantee a table protecting ``s`` must meet: every checked rule's on ``s``
        (:func:`joined_by_attribute`), else the default one."""
        return self.rule_guarantees.get(s, release)

    def parents(self, s: str, view: str) -> list[Any] | None:
        """The taxonomy of ``s`` from the release's hierarchy file, over the view's values in
        sorted order (``None``: the release holds no hierarchy for ``s``)."""
        file = self.hierarchies.get(s)
        if file is None:
            return None
        path = self.dir / file
        try:
            rows = [r for r in csv.reader(path.read_text(encoding="utf-8").splitlines(), delimiter=";") if r]
        except OSError as exc:
            raise SpecError(f"cannot read the hierarchy of {s!r}, {file}: {exc.strerror}") from None
        values = [str(r[0]) for r in self.con.execute(f"SELECT DISTINCT {_q(s)} FROM {view} ORDER BY 1").fetchall()]
        return taxonomy_parents(rows, values)

    def generalized_ok(
        self, data: str, labels: str, order: str, attrs: list[str], s: str | None, guarantee: dict[str, Any], name: str
    ) -> None:
        """A generalized table: the listings are well formed (each listed attribute's leaves
        numbered 0 .. m-1, every generalized value a run first..last of them, no generalized
        value also a leaf); every equivalence class (distinct values of the non-sensitive
        columns) satisfies the guarantee — on induced frequencies when the sensitive
        attribute's values are generalized too (Sequential Sweep); with the original, the
        table is a true generalization of it: every record can be given to a row whose values
        (its sensitive value included) cover its values (a maximum flow that saturates)."""
        qi = [a for a in attrs if a != s]
        names = ", ".join(_lit(a) for a in attrs) or "NULL"
        bad = self.con.execute(
            f"SELECT (SELECT count(*) FROM {labels} WHERE attribute NOT IN ({names})) + "
            f"(SELECT count(*) FROM {order} WHERE attribute NOT IN ({names}))"
        ).fetchone()
        self.zero(
            "generalized",
            bad,
            "the listings name only attributes of the table",
            "{} listing row(s) name an attribute the table does not hold",
            name,
        )
        numbering = self.con.execute(
            f"SELECT count(*) FROM (SELECT attribute, count(*) m, count(DISTINCT TRY_CAST(position AS BIGINT)) d, "
            f"min(TRY_CAST(position AS BIGINT)) lo, max(TRY_CAST(position AS BIGINT)) hi FROM {order} GROUP BY 1) "
            "WHERE d <> m OR lo <> 0 OR hi <> m - 1 OR d IS NULL"
        ).fetchone()
        self.zero(
            "generalized",
            numbering,
            "each listed attribute's leaves are numbered 0 .. m-1",
            "{} attribute(s) whose leaves are not numbered 0 .. m-1 exactly once",
            name,
        )
        runs = self.con.execute(
            f"SELECT count(*) FROM {labels} l LEFT JOIN (SELECT attribute, count(*) m FROM {order} GROUP BY 1) o "
            "USING (attribute) WHERE o.m IS NULL OR TRY_CAST(l.first AS BIGINT) IS NULL OR TRY_CAST(l.last AS BIGINT) "
            "IS NULL OR CAST(l.first AS BIGINT) < 0 OR CAST(l.last AS BIGINT) < CAST(l.first AS BIGINT) "
            "OR CAST(l.last AS BIGINT) >= o.m"
        ).fetchone()
        self.zero(
            "generalized",
            runs,
            "every generalized value covers a run of its attribute's leaves",
            "{} generalized value(s) cover no valid run of their attribute's leaves",
            name,
        )
        if (runs and runs[0]) or (numbering and numbering[0]):
            return
        clash = self.con.execute(
            f"SELECT count(*) FROM {labels} l JOIN {order} o ON o.attribute = l.attribute AND o.leaf = l.value "
            "WHERE NOT (CAST(l.first AS BIGINT) = CAST(o.position AS BIGINT) AND l.first = l.last)"
        ).fetchone()
        self.zero(
            "generalized",
            clash,
            "no generalized value is also a leaf of its attribute",
            "{} generalized value(s) are also leaves of their attribute (ambiguous)",
            name,
        )
        g = self.guarantee_of(s, guarantee) if s is not None else guarantee
        spread = None
        if s is not None and self.sensitive_generalized(labels, s):
            spread = "s_runs"
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE s_runs AS SELECT value AS pv, CAST(first AS BIGINT) f, "
                f"CAST(last AS BIGINT) l FROM {labels} WHERE attribute = {_lit(s)} UNION ALL SELECT leaf, "
                f"CAST(position AS BIGINT), CAST(position AS BIGINT) FROM {order} WHERE attribute = {_lit(s)} "
                f"AND leaf NOT IN (SELECT value FROM {labels} WHERE attribute = {_lit(s)})"
            )
            stray = self.con.execute(
                f"SELECT count(*) FROM {data} WHERE {_q(s)} NOT IN (SELECT pv FROM s_runs)"
            ).fetchone()
            self.zero(
                "generalized",
                stray,
                f"every published value of {s!r} is a listed leaf or generalized value",
                f"{{}} row(s) hold a value of {s!r} that is neither a listed leaf nor a generalized value",
                name,
            )
        self.groups_ok(data, [_q(a) for a in qi] or ["1"], s, g, name, "equivalence class", spread)
        self.con.execute("DROP TABLE IF EXISTS s_runs")
        if self.original is None:
            return
        size = self.con.execute(f"SELECT count(*) FROM {data}").fetchone()
        limit = self.pairing_max_rows
        if limit is not None and size and int(size[0]) > limit:
            self.report.add(
                "generalization",
                True,
                f"skipped: more than {limit:,} rows (versapub check --original runs it at any size)",
                name,
            )
            return
        for i, a in enumerate(attrs):  # published value -> the input's code of every leaf it covers
            self.con.execute(
                f"CREATE TEMP TABLE map{i} AS SELECT l.value AS pv, d.code AS leaf FROM {labels} l "
                f"JOIN {order} o ON o.attribute = l.attribute AND CAST(o.position AS BIGINT) "
                "BETWEEN CAST(l.first AS BIGINT) AND CAST(l.last AS BIGINT) "
                f"JOIN {_q('dict_' + a)} d ON o.leaf = d.value WHERE l.attribute = {_lit(a)} "
                f"UNION ALL SELECT d.value, d.code FROM {_q('dict_' + a)} d "
                f"WHERE d.value NOT IN (SELECT value FROM {labels} WHERE attribute = {_lit(a)})"
            )
        ks = [f"k{i}" for i in range(len(attrs))]
        try:
            self.con.execute(
                "CREATE TEMP TABLE cells AS SELECT *, row_number() OVER () - 1 AS cid FROM (SELECT "
                + ", ".join(f"{_q(a)} AS {k}" for a, k in zip(attrs, ks, strict=True))
                + ", count(*) AS c FROM original_codes GROUP BY ALL)"
            )
            self.con.execute(
                f"CREATE TEMP TABLE pr AS SELECT *, CAST({_q('count')} AS BIGINT) AS c, "
                f"row_number() OVER () - 1 AS rid FROM {data}"
            )
            # From the input's cells, one attribute at a time: a cell's published values that
            # cover it so far, kept only while some published row starts with them (a prefix
            # semi-join), so general labels never expand into all their leaves.
            prev = "cells"
            for i, a in enumerate(attrs):
                match = " AND ".join([*(f"q.{_q(b)} = x.p{j}" for j, b in enumerate(attrs[:i])), f"q.{_q(a)} = m.pv"])
                self.con.execute(
                    f"CREATE OR REPLACE TEMP TABLE step{i} AS SELECT x.*, m.pv AS p{i} FROM {prev} x "
                    f"JOIN map{i} m ON m.leaf = x.k{i} SEMI JOIN (SELECT DISTINCT "
                    f"{', '.join(_q(b) for b in attrs[: i + 1])} FROM pr) q ON {match}"
                )
                if i:
                    self.con.execute(f"DROP TABLE {prev}")
                prev = f"step{i}"
            on = " AND ".join(f"pr.{_q(a)} = x.p{i}" for i, a in enumerate(attrs))
            arcs = self.con.execute(f"SELECT DISTINCT pr.rid, x.cid FROM {prev} x JOIN pr ON {on}").fetchnumpy()
            self.con.execute(f"DROP TABLE IF EXISTS {prev}")
            rows = self.con.execute("SELECT rid, c FROM pr ORDER BY rid").fetchnumpy()
            cells = self.con.execute("SELECT cid, c FROM cells ORDER BY cid").fetchnumpy()
            flow, total = _max_flow(rows, cells, arcs)
            self.report.add(
                "generalization",
                flow == total == self.n,
                "every input record is covered by a published row with its sensitive value (a true generalization)"
                if flow == total == self.n
                else f"only {flow} of {self.n} input records can be given to published rows that cover their values: "
                "the table is not a generalization of the input",
                name,
            )
        finally:
            for t in ("cells", "pr", *(f"map{i}" for i in range(len(attrs)))):
                self.con.execute(f"DROP TABLE IF EXISTS {t}")

    # -- driver -------------------------------------------------------------------
    def run(self) -> VerificationReport:
        rep = self.report
        mpath = self.dir / "manifest.json"
        try:
            manifest = json.loads(mpath.read_text(encoding="utf-8"))
        except FileNotFoundError:
            rep.add("manifest", False, "manifest.json is missing", "manifest.json")
            return rep
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            rep.add("manifest", False, f"manifest.json is not valid JSON ({exc})", "manifest.json")
            return rep
        if not isinstance(manifest, dict):
            rep.add("manifest", False, "manifest.json is not a JSON object", "manifest.json")
            return rep
        missing = [k for k in _CORE if k not in manifest]
        if missing:
            rep.add("manifest", False, f"core key(s) {missing} are missing", "manifest.json")
            return rep
        if manifest["format"] != FORMAT:
            rep.add(
                "manifest",
                False,
                f"unknown format {manifest['format']!r} (expected {FORMAT!r})",
                "manifest.json",
            )
            return rep
        n = manifest["n_records"]
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            rep.add("manifest", False, f"n_records must be a positive integer, got {n!r}", "manifest.json")
            return rep
        self.n = n
        try:
            specs = self.requirement.rule_specs(manifest)
            rules = [Rule.from_json(r) for r, _ in specs]
            tables = read_tables(manifest["tables"])
        except Exception as exc:
            rep.add("manifest", False, f"malformed rules or tables: {exc}", "manifest.json")
            return rep
        rep.add("manifest", True, f"format {FORMAT}, {len(tables)} table(s), n_records = {n}", "manifest.json")

        hier = manifest.get("hierarchies") or {}
        if not isinstance(hier, dict) or not all(isinstance(v, str) and "/" not in v for v in hier.values()):
            rep.add("manifest", False, f"hierarchies must map attributes to file names, got {hier!r}", "manifest.json")
            return rep
        self.hierarchies = {str(k): str(v) for k, v in hier.items()}
        listed = {str(f) for e in manifest["tables"] for f in (e.get("files") or {}).values()} | _EXTRAS
        listed |= set(self.hierarchies.values())
        foreign = sorted(p.name for p in self.dir.iterdir() if p.name not in listed)
        rep.add(
            "files",
            not foreign,
            "the directory holds only the files the manifest lists"
            if not foreign
            else f"file(s) the manifest does not list: {', '.join(foreign[:10])} (a leak: a reader sees them too)",
        )
        digest = digests_ok(self.dir, manifest)
        rep.add(digest.check, digest.ok, digest.message, "manifest.json")
        guarantee = self.requirement.default(manifest)
        # the table protecting S meets the guarantee of every rule on S
        self.rule_guarantees = joined_by_attribute([{**r, "guarantee": g} for r, g in specs], guarantee)
        rep.add("guarantee", True, self.requirement.describe(manifest))
        if self.requirement.rules is not None:
            rep.add("schema", True, f"rules checked: the {len(rules)} rule(s) of your requirement")
        attrs = manifest["attributes"]
        published = set().union(*(set(t.attributes) for t in tables)) if tables else set()
        rep.add(
            "coverage",
            isinstance(attrs, list) and set(attrs) == published,
            "the tables publish exactly the manifest's attributes"
            if isinstance(attrs, list) and set(attrs) == published
            else f"manifest attributes {attrs} but tables publish {sorted(published)}",
        )
        if self.original is not None:
            names = set(self.original.names)
            rep.add(
                "coverage",
                names == published,
                "every input attribute is published"
                if names == published
                else f"input attributes {sorted(names - published)} are not published"
                + (f"; {sorted(published - names)} are not input attributes" if published - names else ""),
            )
            if self.original.n_rows != n:
                rep.add("coverage", False, f"n_records = {n} but the input has {self.original.n_rows} records")
            self.original.register_duckdb(self.con)  # original_codes and dict_<attribute>, in memory or on disk

        for v in gnf_verdicts([(r.lhs, r.rhs) for r in rules], tables):
            rep.add("schema", v.holds, v.explain())

        for entry, sub in zip(manifest["tables"], tables, strict=True):
            files = entry.get("files") or {}
            if entry["kind"] == "plain":
                cols = list(sub.attributes)
                view = self.relation(str(files.get("data")), [*cols, "count"], "file")
                if view and self.counts_ok(view, cols, files["data"]):
                    self.marginal_ok(view, cols, files["data"])
            elif entry["kind"] == "anatomy":
                sens = [r.rhs for r in sub.enforced_rules]
                sup = entry.get("suppressed_group")
                if sup is not None and (isinstance(sup, bool) or not isinstance(sup, int)):
                    rep.add("manifest", False, f"suppressed_group must be an integer, got {sup!r}", sub.name)
                    continue
                qi = [a for a in sub.attributes if a not in sens]
                qit = self.relation(str(files.get("qit")), [*qi, "group_id", "count"], "file")
                st = self.relation(str(files.get("st")), ["group_id", *sens, "count"], "file")
                ok_q = bool(qit) and self.counts_ok(qit or "", [*qi, "group_id"], files["qit"])
                withheld = 0
                if qit and sup is not None:
                    got = self.con.execute(
                        f"SELECT coalesce(sum(CAST({_q('count')} AS BIGINT)), 0) FROM {qit} "
                        f"WHERE TRY_CAST({_q('group_id')} AS BIGINT) = {int(sup)}"
                    ).fetchone()
                    withheld = int(got[0]) if got else 0
                    rep.add("anatomy", True, f"{withheld} record(s) in the suppressed group {sup}", sub.name)
                ok_s = bool(st) and self.counts_ok(
                    st or "", ["group_id", *sens], files["st"], None if sup is None else self.n - withheld
                )
                if ok_q and ok_s and qit and st:
                    self.anatomy_ok(qit, st, sens, guarantee, sub.name, sup)
                    if qi:
                        self.marginal_ok(qit, qi, files["qit"])
                    for a in sens:
                        self.marginal_ok(st, [a], files["st"], at_most=sup is not None)
                    if self.original is not None and sup is None:
                        self.pairing_ok(qit, st, qi, sens, sub.name)
            elif entry["kind"] == "generalized":
                if sub.enforced_rules[1:]:
                    rep.add("manifest", False, "a generalized table enforces at most one rule", sub.name)
                    continue
                held = entry.get("sensitive")  # a collection's marginal holds S without a rule
                if sub.enforces is None and held is not None and held not in sub.attributes:
                    rep.add("manifest", False, f"sensitive {held!r} is not an attribute of the table", sub.name)
                    continue
                s = sub.enforces.rhs if sub.enforces is not None else held  # None: identities only
                data = self.relation(str(files.get("data")), [*sub.attributes, "count"], "file")
                labels = self.relation(str(files.get("labels")), ["attribute", "value", "first", "last"], "file")
                order = self.relation(str(files.get("order")), ["attribute", "leaf", "position"], "file")
                if data and labels and order and self.counts_ok(data, list(sub.attributes), files["data"]):
                    self.generalized_ok(data, labels, order, list(sub.attributes), s, guarantee, sub.name)
                    if s is not None and not self.sensitive_generalized(labels, s):
                        self.marginal_ok(data, [s], files["data"])
            elif entry["kind"] == "sa-groups":
                sens = [r.rhs for r in sub.enforced_rules]
                qi = [a for a in sub.attributes if a not in sens]
                qit = self.relation(str(files.get("qit")), [*qi, "group_id", "count"], "file")
                ts = self.relation(str(files.get("ts")), [*sens, "count"], "file")
                sets = self.relation(str(files.get("sets")), ["group_id", "attribute", "value"], "file")
                ok_q = bool(qit) and self.counts_ok(qit or "", [*qi, "group_id"], files["qit"])
                ok_t = bool(ts) and self.counts_ok(ts or "", sens, files["ts"])
                if ok_q and ok_t and qit and ts and sets:
                    self.sa_groups_ok(qit, ts, sets, qi, sens, entry, guarantee, sub.name)
                    if qi:
                        self.marginal_ok(qit, qi, files["qit"])
                    self.marginal_ok(ts, sens, files["ts"])
            else:
                rep.add(
                    "manifest",
                    False,
                    f"table {sub.name!r} has unknown kind {entry['kind']!r}",
                    "manifest.json",
                )
            self.drop_relations()
        if isinstance(manifest.get("marginals"), dict):  # a collection of marginals: its own checks
            for found in check_collection(self.dir):
                rep.add(found.check, found.ok, found.message, found.file)
        return rep

    def drop_relations(self) -> None:
        """Free the tables read for one sub-table before reading the next."""
        for (name,) in self.con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
            self.con.execute(f"DROP TABLE {_q(name)}")
        for (name,) in self.con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary AND view_name LIKE 'v%'"
        ).fetchall():
            self.con.execute(f"DROP VIEW {_q(name)}")


def joined_by_attribute(rules: list[Any], release: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per sensitive attribute, the guarantee its table must meet: every rule on it with its
    own guarantee (the manifest's per-rule ``guarantee``) or the release's — all of them
    (docs/release-format.md, "Guarantees")."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for r in rules:
        if not isinstance(r, dict):
            continue
        own = r.get("guarantee")
        g: dict[str, Any] = own if isinstance(own, dict) else release
        flat: list[dict[str, Any]] = (
            g["guarantees"] if g.get("name") == "all-of" and isinstance(g.get("guarantees"), list) else [g]
        )
        mine = parts.setdefault(str(r.get("rhs")), [])
        mine += [p for p in flat if p not in mine]
    return {s: gs[0] if len(gs) == 1 else {"name": "all-of", "guarantees": gs} for s, gs in parts.items()}


def verify_release(
    directory: str | Path,
    original: Source | None = None,
    rules: list[Rule] | None = None,
    guarantee: dict[str, Any] | None = None,
    pairing_max_rows: int | None = PAIRING_MAX_ROWS,
    requirement: Requirement | None = None,
) -> VerificationReport:
    """Verify the release in ``directory`` (and, if given, against the ``original`` table)
    against ``requirement`` — what the steward requires — or, when nothing is required, the
    release's own claim (its manifest).  ``rules`` and ``guarantee`` (``{"name": ...,
    params}``) are a shorthand for a requirement stated by the caller."""
    # Large releases (partitioned tables): DuckDB holds at most its share of the memory and
    # spills the rest into a temporary directory of its own, removed afterwards.
    with connect(ordered=False) as con:
        req = requirement or required(rules, guarantee)
        return _Checker(Path(directory), original, req, pairing_max_rows, con=con).run()


def required(rules: list[Rule] | None, guarantee: dict[str, Any] | None, source: str = "") -> Requirement:
    """A requirement from rules (without guarantees of their own) and a guarantee."""
    return Requirement(
        guarantee, tuple(r.to_json() for r in rules) if rules is not None else None, source or "given by the caller"
    )
