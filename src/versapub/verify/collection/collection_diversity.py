"""Maxent diversity of a collection of published count tables (Kifer & Gehrke, SIGMOD 2006,
§4.1), the verifier's own: the maximum-entropy joint by the closed form of a decomposable
collection (root table times each child's table over its separator's), built by SQL joins
over the tables holding the sensitive attribute, or IPF over a dense joint when the
collection is not decomposable; each combination of non-sensitive values tested by
:mod:`versapub.verify.guarantees.group_checks`.  Split from :mod:`versapub.verify.collection.collection_check`."""

from __future__ import annotations

from typing import Any

import numpy as np

from versapub.verify.collection.collection_tables import DENSE_MAX_CELLS, JOIN_MAX_ROWS, Collection, _cell_text, _q
from versapub.verify.finding import Finding as Result
from versapub.verify.guarantees.group_checks import SpecError, failing_groups, group_test


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
