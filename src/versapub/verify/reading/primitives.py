"""The verifier's primitives over a release's files, read with DuckDB: loading a file as a
relation of text columns, count tables (positive integer counts, no duplicates, the total),
marginals against the original, pairing QIT and ST rows with the input's records (maximum
flows), Anatomy's grouping, dense group ids, and the guarantee in every group.  The kinds'
checks (:mod:`versapub.verify.reading.kind_checks`) are built from these; they share no code with
the publisher."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from versapub.data.source import Source
from versapub.data.sql import duckdb_source, fresh_alias
from versapub.verify.finding import Finding
from versapub.verify.guarantees.group_checks import SpecError, failing_groups, group_test, taxonomy_parents
from versapub.verify.reading.manifest import Removed
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


class Checker:
    """A release directory, its DuckDB connection and the report the checks add to."""

    def __init__(
        self,
        directory: Path,
        original: Source | None,
        requirement: Requirement,
        pairing_max_rows: int | None = PAIRING_MAX_ROWS,
        *,
        con: duckdb.DuckDBPyConnection,
        population: Source | None = None,
    ) -> None:
        self.pairing_max_rows = pairing_max_rows
        #: The population the release's records were drawn from (``check --population``),
        #: and what the manifest records of it.
        self.population = population
        self.population_entry: Any = None
        #: With the original, per noisy table: (file, sum of squared deviations, its mean, its
        #: variance, cells, a lower bound of its lower tail) for the noise scale test
        #: (:mod:`versapub.verify.dp.dp_noise`).
        self.noise_tests: list[tuple[str, float, float, float, int, float]] = []
        self.requirement = requirement
        self.dir = directory
        self.original = original
        self.report = VerificationReport(str(directory))
        self.con = con
        self.n = 0
        #: Records removed by suppression, as the manifest states them (``None``: none).
        self.removed: Removed | None = None
        self.views = 0
        self.hierarchies: dict[str, str] = {}
        #: Sensitive attribute -> the guarantee of every rule checked on it (all of them).
        self.rule_guarantees: dict[str, dict[str, Any]] = {}
        #: The anonymizers the manifest names: the release's, and a rule's own by its sensitive attribute.
        self.anonymizer: Any = None
        self.rule_anonymizers: dict[str, Any] = {}
        #: Columns a treatment changed at random or by groups before anonymizing (noise,
        #: PRAM, swapping, microaggregation): the input cannot show their published values,
        #: so the comparisons with it leave them out (``verify/treatments/treatments.py``).
        self.perturbed: frozenset[str] = frozenset()
        #: What the job asked for beside its guarantees (the manifest's ``job``: floor, keys).
        self.job: dict[str, Any] = {}

    def unperturbed(self, attrs: list[str], check: str, name: str) -> bool:
        """True when no attribute of ``attrs`` was perturbed; else records, passing, that
        the comparison with the input is left to the treatment's own checks."""
        hit = sorted(set(attrs) & self.perturbed)
        if hit:
            self.report.add(
                check,
                True,
                f"not compared with the input: {', '.join(hit)} perturbed or locally suppressed before anonymizing",
                name,
            )
        return not hit

    def suppression_share(self, s: str | None) -> Any:
        """The ``suppression`` parameter of the anonymizer that published the table protecting
        ``s`` (a rule's own, else the release's), as the manifest states it (0 when absent)."""
        a = self.rule_anonymizers.get(s, self.anonymizer) if s is not None else self.anonymizer
        params = a.get("params") if isinstance(a, dict) else None
        return params.get("suppression", 0) if isinstance(params, dict) else 0

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
            src = duckdb_source(path)
            shared = not src.startswith("read_")  # parsed once for every check, held in memory
            what = "VIEW" if path.is_dir() or shared else "TABLE"
            self.con.execute(f"CREATE {what} {view} AS SELECT * FROM {src}")
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
        records are withheld, a release whose removed records are in no table).

        Published values are translated to the original's dictionary codes (a value the
        input does not have is a failure by itself); both sides are then aggregated on
        integer codes and compared cell by cell.
        """
        if self.original is None:
            return
        attrs = [a for a in attrs if a not in self.perturbed]  # summed out: the input cannot show them
        if not attrs:
            return
        at_most = at_most or self.removed is not None  # records removed by suppression are in no table
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
        if not self.unperturbed([*qi, *sens], "pairing", name):
            return
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

    def grouping_ok(self, qit: str, qi: list[str], sens: list[str], name: str) -> None:
        """With the input: can every record be put in a group that holds its QI values (a
        QIT row, used as often as it counts) and whose sets hold each of its sensitive
        values?  A transportation problem solved as a maximum flow (OR-Tools): source ->
        input cell ``(q, s)`` (its count) -> QIT row ``(q, g)`` when ``s`` lies in ``g``'s
        sets -> sink (the row's count)."""
        assert self.original is not None
        if not self.unperturbed([*qi, *sens], "grouping", name):
            return
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
            # with records removed by suppression, the published ones (n_records of the input's) must fit
            need = min(total, self.n) if self.removed is not None else total
            self.report.add(
                "grouping",
                flow == need,
                "every input record fits a group holding its quasi-identifier values whose sets hold its sensitive "
                "values"
                if flow == need == total
                else f"{flow} input records — the {need} published — fit groups holding their quasi-identifier "
                "values whose sets hold their sensitive values (the others were removed by suppression)"
                if flow == need
                else f"only {flow} of {need} {'published' if need < total else 'input'} records fit a group holding "
                "their quasi-identifier values whose sets hold their sensitive values: a value is missing from a "
                "group's set or was moved",
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
        (the verifier's own test, :mod:`versapub.verify.guarantees.group_checks`); ``s`` None: a table
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
        if test.needs_population and what != "equivalence class":
            self.report.add(
                "population",
                False,
                f"{test.name} is checked against the population on generalized tables only, not on {_plural(what)}",
                name,
            )
            return
        cols = ", ".join(f"{e} AS k{i}" for i, e in enumerate(line))
        keys = ", ".join(f"k{i}" for i in range(len(line)))
        cnt = f"CAST({_q('count')} AS BIGINT)"
        if spread is None:
            sv = _q(s) if s is not None else chr(39) + "*" + chr(39)
            inner = f"SELECT {cols}, {sv} AS sv, sum({cnt}) c FROM {view} GROUP BY ALL"
        else:
            assert s is not None
            # the spread's columns under names no attribute has (an attribute may be called pv, f or l)
            taken = [e.strip('"') for e in line] + [s]
            rp, rf, rl = (_q(fresh_alias(b, taken)) for b in ("spread_value", "spread_first", "spread_last"))
            rel = f"(SELECT pv AS {rp}, f AS {rf}, l AS {rl} FROM {spread})"
            inner = (
                f"SELECT {keys}, sv, sum(w) c FROM (SELECT {cols}, unnest(range(r.{rf}, r.{rl} + 1)) AS sv, "
                f"CAST({cnt} AS DOUBLE) / (r.{rl} - r.{rf} + 1) AS w FROM {view} JOIN {rel} r "
                f"ON {view}.{_q(s)} = r.{rp}) GROUP BY ALL"
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

    def drop_relations(self) -> None:
        """Free the tables read for one sub-table before reading the next."""
        for (name,) in self.con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
            self.con.execute(f"DROP TABLE {_q(name)}")
        for (name,) in self.con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary AND view_name LIKE 'v%'"
        ).fetchall():
            self.con.execute(f"DROP VIEW {_q(name)}")
