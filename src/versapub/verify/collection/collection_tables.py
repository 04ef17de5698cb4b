"""A release read as a *collection* of published count tables (Kifer & Gehrke, SIGMOD 2006),
by the independent verifier: every table's marginal over the attributes asked for, the
tables' partitions of each attribute's leaves, agreement on common marginals,
decomposability and a junction tree (networkx).  The checks on it are in
:mod:`versapub.verify.collection.collection_check` (k-link, k-combinatorial) and
:mod:`versapub.verify.collection.collection_diversity` (maxent diversity)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import networkx as nx
import pyarrow as pa

from versapub.data.sql import duckdb_source
from versapub.verify.reading.kind_checks import KIND_CHECKS

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


def _held(e: dict[str, Any], want: set[str]) -> list[str]:
    """The attributes of ``want`` a manifest entry's table of counts holds (an Anatomy or
    sa-groups QIT: not the sensitive values it keeps in other files)."""
    kind = KIND_CHECKS.get(str(e.get("kind")))
    role = kind.cells if kind is not None else None
    if role is None or role not in (e.get("files") or {}):
        raise Unreadable(f"table {e.get('name')!r}: kind {e.get('kind')!r} is not a table of counts")
    elsewhere: set[str] = set()
    if role != "data":
        rules = [e.get("enforces"), *(e.get("also_enforces") or [])]
        elsewhere = {str(r.get("rhs")) for r in rules if isinstance(r, dict)}
    return [a for a in e.get("attributes", []) if a in want and a not in elsewhere]


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
        entries = list(manifest.get("tables", []))
        helds = [_held(e, want) for e in entries]
        helds = [h if only_with is None or only_with in h else [] for h in helds]
        # Only an attribute two tables hold needs its generalized values' leaves (see _induce):
        # reading them for one table's many overlapping ranges would list every class's leaves.
        shared = {a for a in want if sum(a in h for h in helds) > 1}
        for i, (e, held) in enumerate(zip(entries, helds, strict=True)):
            kind = KIND_CHECKS.get(str(e.get("kind")))
            files = e.get("files") or {}
            role = kind.cells if kind is not None else ""
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
            if kind is not None and kind.generalized and "labels" in files and "order" in files and shared & set(held):
                lab, order = duckdb_source(directory / files["labels"]), duckdb_source(directory / files["order"])
                mine = sorted(shared & set(held))
                rows = con.execute(
                    f"SELECT l.attribute, l.value, o.leaf FROM {lab} l JOIN {order} o ON o.attribute = l.attribute "
                    "AND CAST(o.position AS BIGINT) BETWEEN CAST(l.first AS BIGINT) AND CAST(l.last AS BIGINT) "
                    f"WHERE l.attribute IN ({', '.join('?' for _ in mine)})",
                    mine,
                ).fetchall()
                for a, v, leaf in rows:
                    if a in mine:
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
            position = {leaf: i for i, leaf in enumerate(leaves)}
            mine: list[dict[str, int]] = []
            for t, blocks in held:
                label: dict[str, int] = {}
                for j, v in enumerate(sorted(blocks)):
                    for leaf in blocks[v]:
                        if leaf in label:
                            raise Unreadable(f"in table {t.name}, two values of {a!r} cover the leaf {leaf!r}")
                        label[leaf] = j
                for leaf in leaves:  # a leaf the table never mentions: its own block
                    label.setdefault(leaf, len(blocks) + position[leaf])
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
