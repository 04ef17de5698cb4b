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
  non-sensitive values tested by :mod:`versapub.verify.guarantees.group_checks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from versapub.data.sql import connect
from versapub.verify.collection.collection_diversity import maxent_diversity
from versapub.verify.collection.collection_tables import (
    ILP_MAX_CELLS,
    JOIN_MAX_ROWS,
    Collection,
    Unreadable,
    _cell_text,
    _q,
)
from versapub.verify.finding import Finding as Result
from versapub.verify.reading.manifest import Manifest, manifest_of


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
