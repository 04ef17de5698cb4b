"""The independent verifier's checks of a release as a *collection* of published count
tables (Kifer & Gehrke, SIGMOD 2006): k-link and k-combinatorial anonymity of the
non-sensitive cells, and maxent diversity of the sensitive attribute.

Written from the definitions and ``docs/release-format.md``; shares nothing with
:mod:`versapub.marginals` (which produced the release) beyond the file format.  Its own
reading:

* every table's marginal over the attributes asked for is read with DuckDB from its
  file (Anatomy and sa-groups: the QIT, groups summed out); a generalized value is the set
  of leaf names its run covers in the ``order`` listing;
* per attribute, the tables' partitions of its leaves must nest; each distinct partition
  becomes a column ``a|j`` (``j``: coarse to fine) holding the block's id, and a table
  holds the columns of its own partition and every coarser one (the paper's induced
  attributes);
* tables sharing columns must agree on their common marginal (else they are not
  marginals of one table);
* decomposability from networkx (a chordal interaction graph whose maximal cliques each
  sit inside one table), a junction tree as networkx's maximum spanning tree of the
  clique graph;
* **k-link**: per table, ``min`` of its non-zero non-sensitive cells;
* **k-combinatorial**: decomposable — semi-joins (SQL) along the junction tree remove the
  cells that extend to no cell of the join of all supports; a cell left with a count in
  ``[1, k-1]`` fails (Dobra's bound is sharp).  Otherwise exact upper bounds by CP-SAT
  over the join of the supports (small domains only);
* **maxent diversity**: decomposable — the maximum-entropy joint by the closed form
  (§4.1: root table times each child's table over its separator's), built by SQL
  joins over the tables holding the sensitive attribute (all tables when the whole
  collection is not decomposable: then IPF over a dense joint), each combination of
  non-sensitive values tested by :mod:`versapub.verify.group_checks`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import networkx as nx
import numpy as np
import pyarrow as pa

from versapub.data.sql import connect, duckdb_source
from versapub.verify.finding import Finding as Result
from versapub.verify.group_checks import SpecError, failing_groups, group_test
from versapub.verify.kind_checks import KIND_CHECKS
from versapub.verify.manifest import Manifest, manifest_of

#: Rows the maximum-entropy join may reach.
JOIN_MAX_ROWS = 50_000_000
#: Cells of a dense joint (non-decomposable collections).
DENSE_MAX_CELLS = 1 << 23
#: Cells of the join of supports for exact k-combinatorial bounds by integer programming.
ILP_MAX_CELLS = 20_000


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Unreadable(ValueError):
    """The tables cannot be read as one collection (the message says why)."""


@dataclass
class _Table:
    name: str
    rel: str
    attrs: list[str]
    cover: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)  # attr -> value -> leaves
    cols: list[str] = field(default_factory=list)  # induced columns after reduction


class Collection:
    """The release's tables over ``attrs`` (non-sensitive ones, and ``sensitive`` where a
    table holds it), reduced to induced columns."""

    def __init__(
        self,
        directory: Path,
        manifest: dict[str, Any],
        attrs: Sequence[str],
        sensitive: str | None,
        con: duckdb.DuckDBPyConnection,
        only_with: str | None = None,
        protected: Sequence[str] = (),
    ) -> None:
        self.dir = directory
        self.con = con
        self.sensitive = sensitive
        #: Attributes outside the non-sensitive domain that tables may publish beside it (the
        #: sensitive one, the attributes rules protect): consistency counts them in.
        self.free = {*protected, *([sensitive] if sensitive else [])}
        self.tables: list[_Table] = []
        want = set(attrs) | self.free
        for i, e in enumerate(manifest.get("tables", [])):
            kind = KIND_CHECKS.get(str(e.get("kind")))
            role = kind.cells if kind is not None else None
            files = e.get("files") or {}
            if role is None or role not in files:
                raise Unreadable(f"table {e.get('name')!r}: kind {e.get('kind')!r} is not a table of counts")
            elsewhere: set[str] = set()
            if role != "data":  # an Anatomy or sa-groups QIT: the table's sensitive values are in other files
                rules = [e.get("enforces"), *(e.get("also_enforces") or [])]
                elsewhere = {str(r.get("rhs")) for r in rules if isinstance(r, dict)}
            held = [a for a in e.get("attributes", []) if a in want and a not in elsewhere]
            if only_with is not None and only_with not in held:
                continue
            if not held:
                continue
            rel = f"t{i}"
            src = duckdb_source(directory / files[role])
            cols = ", ".join(_q(a) for a in held)
            grp = f" GROUP BY {cols}" if held else ""
            con.execute(
                f'CREATE TEMP TABLE {rel} AS SELECT {cols}{", " if held else ""}sum(CAST("count" AS '
                f'BIGINT)) AS "count" FROM {src}{grp}'
            )
            t = _Table(str(e.get("name")), rel, held)
            if kind is not None and kind.generalized and "labels" in files and "order" in files:
                lab, order = duckdb_source(directory / files["labels"]), duckdb_source(directory / files["order"])
                rows = con.execute(
                    f"SELECT l.attribute, l.value, o.leaf FROM {lab} l JOIN {order} o ON o.attribute = l.attribute "
                    "AND CAST(o.position AS BIGINT) BETWEEN CAST(l.first AS BIGINT) AND CAST(l.last AS BIGINT)"
                ).fetchall()
                for a, v, leaf in rows:
                    if a in held:
                        t.cover.setdefault(a, {}).setdefault(v, frozenset())
                        t.cover[a][v] = t.cover[a][v] | {leaf}
            self.tables.append(t)
        self._induce()

    # -- the reduction ------------------------------------------------------------------
    def _values(self, t: _Table, a: str) -> list[str]:
        return [str(r[0]) for r in self.con.execute(f"SELECT DISTINCT {_q(a)} FROM {t.rel}").fetchall()]

    def _induce(self) -> None:
        """Per attribute, nested partitions -> columns ``a|j`` (block ids) in every table.
        An attribute only one table holds needs no nesting: its published values are its
        blocks as they are (so a multidimensional recoding — Mondrian's ranges, which may
        overlap across classes — is read cell by cell)."""
        holders: dict[str, int] = {}
        for t in self.tables:
            for a in t.attrs:
                holders[a] = holders.get(a, 0) + 1
        for t in self.tables:
            t.cover = {a: c for a, c in t.cover.items() if holders.get(a, 0) > 1}
        parts: dict[str, list[tuple[_Table, dict[str, frozenset[str]]]]] = {}
        for t in self.tables:
            for a in t.attrs:
                own = t.cover.get(a, {})
                blocks = {v: own.get(v, frozenset([v])) for v in self._values(t, a)}
                parts.setdefault(a, []).append((t, blocks))
        self.chain: dict[str, list[dict[str, int]]] = {}  # attr -> per level: leaf -> block id
        level_of: dict[tuple[str, str], int] = {}  # (table, attr) -> its level in the chain
        for a, held in parts.items():
            leaves = sorted(set().union(*(frozenset().union(*b.values()) for _, b in held)))
            mine: list[dict[str, int]] = []
            for t, blocks in held:
                label: dict[str, int] = {}
                for j, v in enumerate(sorted(blocks)):
                    for leaf in blocks[v]:
                        if leaf in label:
                            raise Unreadable(f"in table {t.name}, two values of {a!r} cover the leaf {leaf!r}")
                        label[leaf] = j
                for leaf in leaves:  # a leaf the table never mentions: its own block
                    label.setdefault(leaf, len(blocks) + leaves.index(leaf))
                canon: dict[int, int] = {}
                mine.append({leaf: canon.setdefault(label[leaf], len(canon)) for leaf in leaves})
            distinct: list[dict[str, int]] = []
            for part in mine:
                if part not in distinct:
                    distinct.append(part)
            distinct.sort(key=lambda p: len(set(p.values())))
            for coarse, fine in itertools.pairwise(distinct):
                up: dict[int, int] = {}
                for leaf in leaves:
                    if up.setdefault(fine[leaf], coarse[leaf]) != coarse[leaf]:
                        raise Unreadable(
                            f"the tables generalize {a!r} in ways that do not nest (a value of one "
                            "table straddles two values of another)"
                        )
            self.chain[a] = distinct
            for (t, _), part in zip(held, mine, strict=True):
                level_of[(t.name, a)] = distinct.index(part)
        self.names: dict[str, dict[int, str]] = {}  # column -> block -> a published value naming it
        for t in self.tables:
            exprs, joins = [], []
            for n_map, a in enumerate(t.attrs):
                j = level_of[(t.name, a)]
                values = self._values(t, a)
                rep = [sorted(t.cover.get(a, {}).get(v, frozenset([v])))[0] for v in values]
                m = f"{t.rel}_m{n_map}"
                cols = {"v": pa.array(values, pa.string())}
                cols.update(
                    {f"b{i}": pa.array([self.chain[a][i][leaf] for leaf in rep], pa.int64()) for i in range(j + 1)}
                )
                self.con.register(f"{m}_arrow", pa.table(cols))
                self.con.execute(f"CREATE TEMP TABLE {m} AS SELECT * FROM {m}_arrow")
                self.con.unregister(f"{m}_arrow")
                named = self.names.setdefault(self.col(a, j), {})
                for v, leaf in zip(values, rep, strict=True):  # a block is named as a table publishes it
                    named.setdefault(self.chain[a][j][leaf], v)
                exprs += [f"{m}.b{i} AS {_q(self.col(a, i))}" for i in range(j + 1)]
                joins.append(f"JOIN {m} ON {t.rel}.{_q(a)} = {m}.v")
                t.cols += [self.col(a, i) for i in range(j + 1)]
            keys = ", ".join(_q(c) for c in t.cols)
            group = f" GROUP BY {keys}" if keys else ""
            self.con.execute(
                f"CREATE TEMP TABLE {t.rel}_i AS SELECT {', '.join(exprs) + ', ' if exprs else ''}"
                f'sum("count") AS c FROM {t.rel} {" ".join(joins)}{group}'
            )
            t.rel = f"{t.rel}_i"

    @staticmethod
    def col(a: str, j: int) -> str:
        return f"{a}|{j}"

    def nonsensitive(self, t: _Table) -> list[str]:
        """The table's columns of the non-sensitive domain (not the sensitive or a protected attribute's)."""
        return [c for c in t.cols if c.rpartition("|")[0] not in self.free]

    def label(self, col: str, block: int) -> str:
        """The leaves of a block, as a reader would name them."""
        if block in self.names.get(col, {}):
            return self.names[col][block]
        a, _, j = col.rpartition("|")
        leaves = sorted(leaf for leaf, b in self.chain[a][int(j)].items() if b == block)
        return leaves[0] if len(leaves) == 1 else f"{{{leaves[0]} .. {leaves[-1]}}} ({len(leaves)} values)"

    # -- structure ------------------------------------------------------------------------
    def agree(self) -> list[str]:
        """Pairs of tables that disagree on the marginal of the columns they share."""
        out = []
        for i, a in enumerate(self.tables):
            for b in self.tables[i + 1 :]:
                shared = [c for c in a.cols if c in b.cols]
                keys = ", ".join(_q(c) for c in shared)
                sel = f"SELECT {keys + ', ' if keys else ''}sum(c) c FROM {{}}{' GROUP BY ' + keys if keys else ''}"
                on = f"USING ({keys})" if keys else "ON TRUE"
                row = self.con.execute(
                    f"SELECT count(*) FROM ({sel.format(a.rel)}) x FULL OUTER JOIN ({sel.format(b.rel)}) y {on} "
                    "WHERE x.c IS DISTINCT FROM y.c"
                ).fetchone()
                if row and row[0]:
                    out.append(f"{a.name} and {b.name} disagree on {row[0]} cell(s) of {shared or 'their totals'}")
        return out

    def junction(self, cols: Sequence[Sequence[str]]) -> list[tuple[int, int | None]] | None:
        """A junction tree of column sets (one per table) as (table, parent) root first, or None."""
        g = nx.Graph()
        for cs in cols:
            g.add_nodes_from(cs)
            g.add_edges_from((x, y) for x in cs for y in cs if x < y)
        if not nx.is_chordal(g):
            return None
        sets = [frozenset(c) for c in cols]
        if any(not any(frozenset(c) <= s for s in sets) for c in nx.find_cliques(g)):
            return None
        keep = [i for i, s in enumerate(sets) if not any(s < t or (s == t and j < i) for j, t in enumerate(sets))]
        cg = nx.Graph()
        cg.add_nodes_from(keep)
        for x in keep:
            for y in keep:
                if x < y:
                    cg.add_edge(x, y, weight=len(sets[x] & sets[y]))
        tree = nx.maximum_spanning_tree(cg)
        out: list[tuple[int, int | None]] = []
        for comp in nx.connected_components(tree):
            root = min(comp)
            out.append((root, None if not out else out[0][0]))
            out += [(child, parent) for parent, child in nx.bfs_edges(tree, root)]
        # a table inside a kept one hangs below it
        for i, s in enumerate(sets):
            if i not in keep:
                out.append((i, next(j for j in keep if s <= sets[j])))
        return out


def _cell_text(coll: Collection, cols: Sequence[str], values: Sequence[Any]) -> str:
    finest: dict[str, tuple[int, str]] = {}
    for c, v in zip(cols, values, strict=True):
        a, _, j = c.rpartition("|")
        if a not in finest or int(j) > finest[a][0]:
            finest[a] = (int(j), coll.label(c, int(v)))
    return ", ".join(f"{a}={v}" for a, (_, v) in finest.items())


def k_link(coll: Collection, k: int) -> list[Result]:
    """k-link anonymity: every table's non-zero cells of its non-sensitive columns >= k."""
    out = []
    for t in coll.tables:
        cols = coll.nonsensitive(t)
        keys = ", ".join(_q(c) for c in cols)
        sel = f"SELECT {keys + ', ' if keys else ''}sum(c) n FROM {t.rel}{' GROUP BY ' + keys if keys else ''}"
        row = coll.con.execute(f"SELECT count(*) FILTER (WHERE n < {k}), min(n) FROM ({sel})").fetchone()
        bad, smallest = (int(row[0]), int(row[1])) if row and row[1] is not None else (0, 0)
        if bad:
            ex = coll.con.execute(f"SELECT * FROM ({sel}) WHERE n < {k} ORDER BY n LIMIT 1").fetchone()
            where = f"; e.g. ({_cell_text(coll, cols, ex[:-1])}) with {ex[-1]}" if ex else ""
            out.append(
                Result(
                    "k-link",
                    False,
                    f"{bad} cell(s) of the non-sensitive columns hold fewer than k = {k} "
                    f"records (smallest {smallest}){where}",
                    t.name,
                )
            )
        else:
            out.append(
                Result(
                    "k-link",
                    True,
                    f"every non-zero cell of the non-sensitive columns holds >= k = {k} records (smallest {smallest})",
                    t.name,
                )
            )
    return out


def _linked(coll: Collection) -> dict[str, list[str]]:
    """Attributes outside the non-sensitive domain that two or more tables publish beside it
    (attribute -> its columns).  One held by a single table is summed out exactly: any table
    consistent with the other marginals extends to it inside that table (a transportation
    problem with equal margins), so it bounds nothing."""
    out: dict[str, list[str]] = {}
    for a in sorted(coll.free):
        holders = [t for t in coll.tables if any(c.rpartition("|")[0] == a for c in t.cols)]
        if len(holders) >= 2:
            out[a] = sorted({c for t in holders for c in t.cols if c.rpartition("|")[0] == a})
    return out


def k_combinatorial(coll: Collection, k: int, original: dict[str, np.ndarray] | None = None) -> Result:
    """k-combinatorial anonymity (Kifer & Gehrke, Definition 7): for every cell ``t`` of the
    non-sensitive domain, ``U(t) = max T(t)`` over the tables consistent with the *whole*
    published tables (sensitive and protected columns included) is 0 or at least ``k``.

    * no attribute outside the domain in two tables: the tables' non-sensitive projections
      bound ``T(t)`` exactly; decomposable — semi-joins (SQL) along the junction tree remove
      the cells that extend to no cell of the join of all supports, and a cell left with a
      count in ``[1, k-1]`` fails (Dobra's bound is sharp);
    * one such attribute ``S`` in one column, decomposable with it: the tables holding ``S``
      bound ``T(t)`` by ``Σ_s min_i T_i(t_i, s)`` (each ``s`` a slice of its own), a table
      ``W`` computed by SQL over the join of their supports, which then joins the others in
      the semi-join reduction above;
    * otherwise exact upper bounds of ``Σ T(t, ...)`` by CP-SAT over the join of the supports
      (small domains only)."""
    ns = [coll.nonsensitive(t) for t in coll.tables]
    linked = _linked(coll)
    full = [
        [c for c in t.cols if c in ns_t or any(c in cs for cs in linked.values())]
        for t, ns_t in zip(coll.tables, ns, strict=True)
    ]
    views = []
    for t, cols in zip(coll.tables, full, strict=True):
        keys = ", ".join(_q(c) for c in cols)
        v = f"{t.rel}_ns"
        coll.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {v} AS SELECT {keys + ', ' if keys else ''}sum(c) AS c, "
            f"TRUE AS alive FROM {t.rel}{' GROUP BY ' + keys if keys else ''}"
        )
        views.append(v)
    if not linked:
        return _reduced(
            coll, k, ns, views, [t.name for t in coll.tables], "Dobra's bound is sharp"
        ) or _k_combinatorial_ilp(coll, k, ns, views, [])
    ((s, s_cols),) = linked.items() if len(linked) == 1 else ((None, []),)
    if s is None or len(s_cols) != 1 or coll.junction(full) is None:
        return _k_combinatorial_ilp(coll, k, full, views, [c for cs in linked.values() for c in cs])
    scol = s_cols[0]
    holders = [i for i, cols in enumerate(full) if scol in cols]
    w_cols = sorted({c for i in holders for c in ns[i]})
    joins: list[str] = []
    seen: list[int] = []
    for i in holders:
        shared = [c for c in full[i] if any(c in full[j] for j in seen)]
        on = " AND ".join(f"x{next(j for j in seen if c in full[j])}.{_q(c)} = x{i}.{_q(c)}" for c in shared)
        joins.append(f"{views[i]} x{i}" if not seen else f"JOIN {views[i]} x{i} ON {on or 'TRUE'}")
        seen.append(i)
    first = {c: next(i for i in holders if c in full[i]) for c in w_cols}
    sel = ", ".join(f"x{first[c]}.{_q(c)} AS {_q(c)}" for c in w_cols)
    least = f"least({', '.join(f'x{i}.c' for i in holders)})"
    size = coll.con.execute(f"SELECT count(*) FROM {' '.join(joins)}").fetchone()
    if size and int(size[0]) > JOIN_MAX_ROWS:
        return Result(
            "k-combinatorial",
            False,
            f"the join of the {len(holders)} tables holding {s!r} reaches "
            f"{int(size[0]):,} rows (the verifier stops at {JOIN_MAX_ROWS:,}): cannot be "
            "verified",
        )
    coll.con.execute(
        f"CREATE OR REPLACE TEMP TABLE w_s AS SELECT {sel + ', ' if sel else ''}sum({least}) AS c, TRUE "
        f"AS alive FROM {' '.join(joins)}{' GROUP BY ALL' if sel else ''}"
    )
    rest = [i for i in range(len(coll.tables)) if i not in holders]
    names = ["+".join(coll.tables[i].name for i in holders), *(coll.tables[i].name for i in rest)]
    found = _reduced(
        coll,
        k,
        [w_cols, *(ns[i] for i in rest)],
        ["w_s", *(views[i] for i in rest)],
        names,
        f"the tables holding {s!r} bound a cell by the sum over {s!r} of their smallest count; Dobra's bound is sharp",
    )
    assert found is not None  # decomposable with S: so is the collection with S summed into W
    return found


def _reduced(
    coll: Collection, k: int, ns: list[list[str]], views: list[str], names: list[str], why: str
) -> Result | None:
    """Decomposable collections (``None`` otherwise): Yannakakis' semi-joins along the
    junction tree, then any live row with a count in ``[1, k-1]`` fails."""
    tree = coll.junction(ns)
    if tree is None:
        return None

    def semi(a: int, b: int) -> None:
        shared = [c for c in ns[a] if c in ns[b]]
        on = " AND ".join(f"x.{_q(c)} = y.{_q(c)}" for c in shared) or "TRUE"
        coll.con.execute(
            f"CREATE TEMP TABLE reduced AS SELECT x.* EXCLUDE (alive), x.alive AND EXISTS (SELECT 1 "
            f"FROM {views[b]} y WHERE y.alive AND {on}) AS alive FROM {views[a]} x"
        )
        coll.con.execute(f"DROP TABLE {views[a]}")
        coll.con.execute(f"ALTER TABLE reduced RENAME TO {views[a]}")

    for child, parent in reversed(tree):
        if parent is not None:
            semi(parent, child)
    for child, parent in tree:
        if parent is not None:
            semi(child, parent)
    bad = 0
    example = ""
    for name, v, cols in zip(names, views, ns, strict=True):
        group = ", ".join(_q(c) for c in cols)
        by = f" GROUP BY {group}" if group else ""
        live = f"SELECT {group + ', ' if group else ''}sum(c) AS c FROM {v} WHERE alive{by}"
        row = coll.con.execute(f"SELECT count(*) FROM ({live}) WHERE c < {k}").fetchone()
        if row and row[0]:
            bad += int(row[0])
            ex = coll.con.execute(f"SELECT * FROM ({live}) WHERE c < {k} ORDER BY c LIMIT 1").fetchone()
            if ex and not example:
                example = f"; e.g. in {name}: ({_cell_text(coll, cols, ex[: len(cols)])}) with {ex[len(cols)]}"
    return Result(
        "k-combinatorial",
        not bad,
        (
            f"every cell of the domain has an upper bound 0 or >= k = {k} (decomposable: {why})"
            if not bad
            else f"{bad} published cell(s) give the cells of the domain inside them an upper bound in [1, {k - 1}] "
            f"(decomposable: {why}){example}"
        ),
    )


def _k_combinatorial_ilp(coll: Collection, k: int, cols: list[list[str]], views: list[str], free: list[str]) -> Result:
    """Exact upper bounds of ``T(t)``, the sum over the ``free`` columns' values, by CP-SAT
    over the join of the tables' supports (each table's rows: equality constraints)."""
    from ortools.sat.python import cp_model

    every = sorted({c for cs in cols for c in cs})
    froms = []
    for i, (v, cs) in enumerate(zip(views, cols, strict=True)):
        froms.append(f"(SELECT {', '.join(_q(c) for c in cs) or '1 AS one'} FROM {v}) s{i}")
    shared_on = []
    seen: dict[str, int] = {}
    for i, cs in enumerate(cols):
        for c in cs:
            if c in seen:
                shared_on.append(f"s{seen[c]}.{_q(c)} = s{i}.{_q(c)}")
            else:
                seen[c] = i
    sel = ", ".join(f"s{seen[c]}.{_q(c)}" for c in every) or "1"
    where = " AND ".join(shared_on) or "TRUE"
    size = coll.con.execute(f"SELECT count(*) FROM {' CROSS JOIN '.join(froms)} WHERE {where}").fetchone()
    n_cells = int(size[0]) if size else 0
    if n_cells > ILP_MAX_CELLS:
        return Result(
            "k-combinatorial",
            False,
            f"not decomposable and the join of the supports has {n_cells:,} cells "
            f"(the verifier decides at most {ILP_MAX_CELLS:,} by integer programming): cannot be "
            "verified",
        )
    cells = coll.con.execute(f"SELECT DISTINCT {sel} FROM {' CROSS JOIN '.join(froms)} WHERE {where}").fetchall()
    model = cp_model.CpModel()
    x = [model.new_int_var(0, 1 << 40, f"c{j}") for j in range(len(cells))]
    for v, cs in zip(views, cols, strict=True):
        idx = [every.index(c) for c in cs]
        groups: dict[tuple[Any, ...], list[int]] = {}
        for j, cell in enumerate(cells):
            groups.setdefault(tuple(cell[i] for i in idx), []).append(j)
        for row in coll.con.execute(f"SELECT * EXCLUDE (alive) FROM {v}").fetchall():
            members = groups.get(tuple(row[: len(cs)]), [])
            model.add(sum(x[j] for j in members) == int(row[len(cs)]))
    domain = [i for i, c in enumerate(every) if c not in free]  # a cell t of the non-sensitive domain
    of_t: dict[tuple[Any, ...], list[int]] = {}
    for j, cell in enumerate(cells):
        of_t.setdefault(tuple(cell[i] for i in domain), []).append(j)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 10.0
    solver.parameters.num_workers = 1
    bad = []
    for t, members in of_t.items():
        model.maximize(sum(x[j] for j in members))
        status = solver.solve(model)
        if status == cp_model.INFEASIBLE:
            return Result("k-combinatorial", False, "the tables are not marginals of one table (no table has them)")
        if status != cp_model.OPTIMAL:
            bad.append((t, -1))
            continue
        u = round(solver.objective_value)
        if 1 <= u < k:
            bad.append((t, u))
    over = f" summed over {', '.join(free)}" if free else ""
    if not bad:
        return Result(
            "k-combinatorial",
            True,
            f"exact upper bounds by integer programming over {len(cells)} "
            f"cell(s){over}: each cell of the domain 0 or >= k = {k}",
        )
    t, u = bad[0]
    what = "undecided within 10 s" if u < 0 else f"upper bound {u}"
    shown_cols = [every[i] for i in domain]
    return Result(
        "k-combinatorial",
        False,
        f"{len(bad)} cell(s) of the domain have an upper bound in [1, {k - 1}] "
        f"(integer programming{over}); e.g. ({_cell_text(coll, shown_cols, list(t))}): {what}",
    )


def maxent_diversity(coll: Collection, spec: dict[str, Any]) -> Result:
    """Maxent diversity (module docstring): every combination of non-sensitive values, under
    the maximum-entropy estimate, satisfies the diversity ``spec``."""
    s = coll.sensitive
    assert s is not None
    try:
        test = group_test(spec, None)
    except SpecError as exc:
        return Result("maxent-diversity", False, str(exc))
    scol = coll.col(s, 0)
    every = [t.cols for t in coll.tables]
    whole = coll.junction(every)
    held = [t for t in coll.tables if scol in t.cols]
    if not held:
        return Result("maxent-diversity", False, f"no table holds the sensitive attribute {s!r}")
    if whole is None:
        return _dense_diversity(coll, test, scol)
    tree = coll.junction([t.cols for t in held])
    assert tree is not None
    con = coll.con
    con.execute(f"CREATE OR REPLACE TEMP TABLE j AS SELECT *, CAST(c AS DOUBLE) AS w FROM {held[tree[0][0]].rel}")
    have = list(held[tree[0][0]].cols)
    for child, parent in tree[1:]:
        t = held[child]
        if parent is None:
            sep: list[str] = []
        else:
            sep = [c for c in t.cols if c in held[parent].cols]
        extra = [c for c in t.cols if c not in have]
        keys = ", ".join(_q(c) for c in sep)
        den = f"(SELECT {keys + ', ' if keys else ''}sum(c) AS d FROM {t.rel}{' GROUP BY ' + keys if keys else ''})"
        on_t = " AND ".join(f"j.{_q(c)} = x.{_q(c)}" for c in sep) or "TRUE"
        on_d = " AND ".join(f"x.{_q(c)} = d.{_q(c)}" for c in sep) or "TRUE"
        cols = ", ".join([*(f"j.{_q(c)}" for c in have), *(f"x.{_q(c)}" for c in extra)])
        size = con.execute(f"SELECT count(*) FROM j JOIN {t.rel} x ON {on_t}").fetchone()
        if size and int(size[0]) > JOIN_MAX_ROWS:
            return Result(
                "maxent-diversity",
                False,
                f"the maximum-entropy join reaches {int(size[0]):,} rows (the "
                f"verifier stops at {JOIN_MAX_ROWS:,}): cannot be verified",
            )
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE j2 AS SELECT {cols}, j.w * x.c / d.d AS w FROM j JOIN {t.rel} x "
            f"ON {on_t} JOIN {den} d ON {on_d}"
        )
        con.execute("DROP TABLE j")
        con.execute("ALTER TABLE j2 RENAME TO j")
        have += extra
    ns = [c for c in have if c != scol]
    keys = ", ".join(_q(c) for c in ns)
    h = con.execute(
        f"SELECT {'dense_rank() OVER (ORDER BY ' + keys + ') - 1' if ns else '0'} AS g, {_q(scol)} AS v, sum(w) AS c"
        f"{', ' + keys if ns else ''} FROM j GROUP BY {_q(scol)}{', ' + keys if ns else ''}"
    ).fetchnumpy()
    con.execute("DROP TABLE j")
    group = np.asarray(h["g"], dtype=np.int64)
    value = np.asarray(h["v"], dtype=np.int64)
    count = np.asarray(h["c"], dtype=np.float64)
    tot = np.bincount(group, weights=count)
    share = count / tot[group]  # compared with the guarantee's bound up to group_checks.RELATIVE, never rounded
    bad = failing_groups(test, group, value, share)
    n_cells = int(group.max()) + 1 if len(group) else 0
    if not len(bad):
        return Result(
            "maxent-diversity",
            True,
            f"every one of {n_cells:,} combination(s) of non-sensitive values "
            f"satisfies {test.name} ({test.wording}) under the maximum-entropy estimate (closed form over "
            f"{len(held)} table(s) holding {s!r})",
        )
    i = int(np.flatnonzero(group == bad[0])[0])
    cell = _cell_text(coll, ns, [h[c][i] for c in ns]) if ns else "(all records)"
    return Result(
        "maxent-diversity",
        False,
        f"{len(bad)} of {n_cells:,} combination(s) of non-sensitive values "
        f"violate {test.name} ({test.wording}) under the maximum-entropy estimate; e.g. "
        f"({cell})",
    )


def _dense_diversity(coll: Collection, test: Any, scol: str) -> Result:
    """A collection that is not decomposable: IPF on the dense joint of the finest
    columns of every attribute, started from each cell's number of leaf combinations."""
    finest: dict[str, int] = {}
    for t in coll.tables:
        for c in t.cols:
            a, _, j = c.rpartition("|")
            finest[a] = max(int(j), finest.get(a, -1))
    cols = [coll.col(a, j) for a, j in finest.items() if coll.col(a, j) != scol] + [scol]
    cards = [len(set(coll.chain[c.rpartition("|")[0]][int(c.rpartition("|")[2])].values())) for c in cols]
    size = int(np.prod(cards, dtype=np.float64))
    if size > DENSE_MAX_CELLS:
        return Result(
            "maxent-diversity",
            False,
            f"not decomposable and the dense joint has {size:,} cells (the "
            f"verifier stops at {DENSE_MAX_CELLS:,}): cannot be verified",
        )
    grid = np.indices(cards).reshape(len(cards), -1)
    q = np.ones(size)
    ups: dict[tuple[str, int], np.ndarray] = {}
    for i, c in enumerate(cols):
        a, _, j = c.rpartition("|")
        fine = coll.chain[a][int(j)]
        q *= np.bincount(list(fine.values()), minlength=cards[i])[grid[i]]
        for lv in range(int(j) + 1):
            up = np.zeros(cards[i], dtype=np.int64)
            for leaf, b in fine.items():
                up[b] = coll.chain[a][lv][leaf]
            ups[(a, lv)] = up[grid[i]]
    targets = []
    for t in coll.tables:
        rows = coll.con.execute(f"SELECT {', '.join(_q(c) for c in t.cols) or '0'}, c FROM {t.rel}").fetchall()
        index: dict[tuple[Any, ...], int] = {}
        idx = np.zeros(size, dtype=np.int64)
        key = [ups[(c.rpartition("|")[0], int(c.rpartition("|")[2]))] for c in t.cols]
        mult = 1
        for kk, c in zip(reversed(key), reversed(t.cols), strict=True):
            idx = idx + kk * mult
            mult *= len(set(coll.chain[c.rpartition("|")[0]][int(c.rpartition("|")[2])].values()))
        tgt = np.zeros(max(mult, 1))
        for r in rows:
            pos = 0
            for v, c in zip(r[:-1], t.cols, strict=True):
                pos = pos * len(set(coll.chain[c.rpartition("|")[0]][int(c.rpartition("|")[2])].values())) + int(v)
            tgt[pos] += float(r[-1])
        del index
        targets.append((idx, tgt / max(tgt.sum(), 1)))
    q /= q.sum()
    for _ in range(2000):
        err = 0.0
        for idx, tgt in targets:
            cur = np.bincount(idx, weights=q, minlength=len(tgt))
            q = q * np.divide(tgt, cur, out=np.zeros_like(tgt), where=cur > 0)[idx]
            err = max(err, float(np.abs(cur - tgt).max()))
        if err < 1e-10:
            break
    m = cards[-1]
    vec = q.reshape(-1, m)
    g, v = np.nonzero(vec > 0)
    share = vec[g, v] / vec.sum(axis=1)[g]
    bad = failing_groups(test, g.astype(np.int64), v.astype(np.int64), share)
    if not len(bad):
        return Result(
            "maxent-diversity",
            True,
            f"not decomposable; every one of {len(vec):,} combination(s) of "
            f"non-sensitive values satisfies {test.name} under the maximum-entropy estimate "
            "(IPF)",
        )
    cell = grid[:-1, int(bad[0]) * m]
    where = _cell_text(coll, cols[:-1], list(cell))
    return Result(
        "maxent-diversity",
        False,
        f"not decomposable; {len(bad)} combination(s) of non-sensitive values "
        f"violate {test.name} under the maximum-entropy estimate (IPF); e.g. ({where})",
    )


def check_collection(
    directory: Path,
    k: int | None = None,
    quasi: Sequence[str] | None = None,
    diversity: bool = True,
    manifest: Manifest | None = None,
) -> list[Result]:
    """Every check the release asks for (its ``marginals`` section: ``k``, ``diversity``);
    with ``k``, k-link and k-combinatorial anonymity with that ``k`` over ``quasi``
    (default: every attribute no rule protects) instead of the section's; ``diversity``
    False: identity checks only."""
    manifest = manifest_of(directory, manifest)
    section = manifest.get("marginals") or {}
    sensitive = section.get("sensitive") if isinstance(section, dict) else None
    want_k = k if k is not None else section.get("k") if isinstance(section, dict) else None
    rhs = {str(r.get("rhs")) for r in manifest.get("rules", []) if isinstance(r, dict)}
    if sensitive:
        rhs.add(str(sensitive))
    attrs = list(quasi) if quasi is not None else [a for a in manifest.get("attributes", []) if a not in rhs]
    out: list[Result] = []
    with connect() as con:
        try:
            coll = Collection(
                directory,
                manifest,
                attrs,
                str(sensitive) if sensitive else None,
                con,
                protected=sorted(rhs - set(attrs)),
            )
        except (Unreadable, duckdb.Error, OSError) as exc:
            return [Result("collection", False, f"the tables cannot be read as one collection: {exc}")]
        clash = coll.agree()
        if clash:
            return [Result("collection", False, "the tables are not marginals of one table: " + "; ".join(clash[:3]))]
        try:
            if isinstance(want_k, int) and not isinstance(want_k, bool):
                if want_k < 2:
                    return [Result("collection", False, f"k must be at least 2, got {want_k}")]
                out += k_link(coll, want_k)
                out.append(k_combinatorial(coll, want_k))
            if diversity and sensitive and isinstance(section.get("diversity"), dict):
                out.append(maxent_diversity(coll, section["diversity"]))
        except duckdb.Error as exc:
            out.append(Result("collection", False, f"the collection checks failed to run: {str(exc).splitlines()[0]}"))
    return out
