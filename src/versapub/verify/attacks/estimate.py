"""The verifier's own maximum-entropy estimate, for the posterior check of rules that the
files' group bounds do not settle (issue 46: the check never runs on the model object the
publisher built — an IPF or junction-tree bug there would pass its own check).

Written from ``docs/release-format.md`` and the definitions, reading the written files:

* **sa-groups** (the MSA decomposition): the unknown ``N(g, k)``, records of group ``g``
  with sensitive combination ``k`` of ``T^S``, on the support where each of ``k``'s values
  lies in ``g``'s set; the maximum-entropy ``N`` meeting the group sizes and ``T^S`` (Darroch
  & Ratcliff: the product form on the support), by iterative proportional fitting after the
  pairs zero in every feasible table are removed (a maximum flow and the strongly connected
  components of its residual graph, scipy).  Given the group, the QI values and the
  sensitive values are independent, so ``P(s | q, anything else) <= max_g P(s | the other
  sensitive values, g)`` (a mixture never exceeds its largest part; conditioning on every
  other sensitive value bounds what an adversary who knows any of them learns).
* **a bucketized table with several sensitive attributes** (Anatomy under the multi-SA
  decomposition): the same bound, ``max_g P(s | the other sensitive values, g)``, read from
  its ST with SQL;
* **several tables** (``S`` published in more than one, or linked to the left-hand side
  through others): the maximum-entropy joint of the tables connected to the rule's
  attributes on the product of their domains, fitted by IPF to each table's distribution
  over its own attributes (a plain table's counts; an Anatomy table's ``Σ_g QIT(q, g)
  ST(g, s) / |g|``: the values independent given the group; a suppressed group's records
  uniform over the declared sensitive domains), then ``max P(S = s | Q = q)``
  exactly.  Up to ``DENSE_MAX_CELLS`` cells; above, or with a kind this estimate does not
  read, :class:`Unestimable` says why and the rule is reported as not checked.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, maximum_flow

from versapub.data.sql import duckdb_source, fresh_alias
from versapub.data.sql import ident as _ident
from versapub.privacy.rules import Rule
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.reading import Entry, parse_entry

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: Cells of the dense joint of several tables.
DENSE_MAX_CELLS = 1 << 22
#: Cells of an sa-groups table's (group, combination) support, tested densely.
SUPPORT_MAX_CELLS = 1 << 26
#: IPF stops when every target is met within this relative error, or after MAX_SWEEPS.
TOLERANCE = 1e-10
MAX_SWEEPS = 5_000


class Unestimable(ValueError):
    """The verifier's estimate cannot answer this rule (the message says why)."""


def _read(con: duckdb.DuckDBPyConnection, path: Path, cols: list[str]) -> dict[str, Any]:
    sel = ", ".join(f"CAST({_ident(c)} AS VARCHAR) {_ident(c)}" for c in cols)
    got = con.execute(f'SELECT {sel}, CAST("count" AS DOUBLE) "count" FROM {duckdb_source(path)}').fetchnumpy()
    return {c: np.asarray(got[c], dtype=object) for c in [*cols, "count"]}


def _codes(values: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], Ints]:
    uniq, inv = np.unique(values.astype(str), return_inverse=True)
    return uniq, np.asarray(inv, dtype=np.int64).ravel()


# -- sa-groups --------------------------------------------------------------------------------
def _live(size: Floats, combo: Floats, pair_g: Ints, pair_k: Ints) -> npt.NDArray[np.bool_]:
    """Pairs some feasible table makes positive: from a maximum flow, those whose group and
    combination share a strongly connected component of the residual graph (or carry flow)."""
    n_g, n_k = len(size), len(combo)
    src, sink = n_g + n_k, n_g + n_k + 1
    total = round(float(size.sum()))
    rows = np.concatenate([np.full(n_g, src), pair_g, n_g + np.arange(n_k)])
    cols = np.concatenate([np.arange(n_g), n_g + pair_k, np.full(n_k, sink)])
    caps = np.concatenate([np.rint(size), np.full(len(pair_g), total), np.rint(combo)]).astype(np.int32)
    flow = maximum_flow(csr_matrix((caps, (rows, cols)), shape=(n_g + n_k + 2,) * 2), src, sink, method="dinic")
    if int(flow.flow_value) != total or round(float(combo.sum())) != total:
        raise Unestimable(
            f"no table has the group sizes and T^S on the sets ({int(flow.flow_value)} of {total} placed)"
        )
    carried = np.asarray(flow.flow[pair_g, n_g + pair_k]).ravel() > 0
    r = np.concatenate([pair_g, n_g + pair_k[carried]])
    c = np.concatenate([n_g + pair_k, pair_g[carried]])
    graph = csr_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(n_g + n_k,) * 2)
    _, comp = connected_components(graph, directed=True, connection="strong")
    return np.asarray(carried | (comp[pair_g] == comp[n_g + pair_k]))


def _ipf_pairs(size: Floats, combo: Floats, pair_g: Ints, pair_k: Ints) -> Floats:
    x = np.ones(len(pair_g))
    for _ in range(MAX_SWEEPS):
        row = np.bincount(pair_g, weights=x, minlength=len(size))
        x *= np.divide(size, row, out=np.zeros(len(size)), where=row > 0)[pair_g]
        col = np.bincount(pair_k, weights=x, minlength=len(combo))
        x *= np.divide(combo, col, out=np.zeros(len(combo)), where=col > 0)[pair_k]
        row = np.bincount(pair_g, weights=x, minlength=len(size))
        if np.abs(row - size).max(initial=0.0) <= TOLERANCE * max(float(size.max(initial=1.0)), 1.0):
            break
    return x


@dataclass(frozen=True)
class SaGroupsFit:
    """An sa-groups table's fitted ``N`` (module docstring) over its live (group, ``T^S``
    combination) pairs: the same for every rule whose ``S`` the table publishes, so it is
    fitted once per table."""

    ts: dict[str, Any]
    pair_g: Ints
    pair_k: Ints
    n: Floats


def sa_groups_fit(con: duckdb.DuckDBPyConnection, directory: Path, entry: Entry) -> SaGroupsFit:
    """The fitted ``N`` of an sa-groups table, read from its files."""
    s_all = list(reading(entry.kind).sensitive_of(entry))
    qi = [a for a in entry.attributes if a not in s_all]
    qit = _read(con, directory / entry.files["qit"], [*qi, "group_id"])
    ts = _read(con, directory / entry.files["ts"], s_all)
    sets = con.execute(
        "SELECT CAST(group_id AS VARCHAR), CAST(attribute AS VARCHAR), CAST(value AS VARCHAR) "
        f"FROM {duckdb_source(directory / entry.files['sets'])}"
    ).fetchall()
    groups, g_of = _codes(qit["group_id"])
    size = np.bincount(g_of, weights=qit["count"].astype(np.float64), minlength=len(groups)).astype(np.float64)
    combo = ts["count"].astype(np.float64)
    at = {g: i for i, g in enumerate(groups.tolist())}
    allowed: dict[str, set[tuple[int, str]]] = {a: set() for a in s_all}
    for g, a, v in sets:
        if a in allowed and g in at:
            allowed[a].add((at[g], v))
    ok = np.ones((len(groups), len(combo)), dtype=bool) if len(groups) * len(combo) <= SUPPORT_MAX_CELLS else None
    if ok is None:
        raise Unestimable(f"{len(groups)} groups x {len(combo)} combinations of T^S is too large for the dense support")
    for a in s_all:
        vals, codes = _codes(ts[a])
        member = np.zeros((len(groups), len(vals)), dtype=bool)
        index = {v: i for i, v in enumerate(vals.tolist())}
        for g, v in allowed[a]:
            if v in index:
                member[g, index[v]] = True
        ok &= member[:, codes]
    pair_g, pair_k = (x.astype(np.int64) for x in np.nonzero(ok))
    live = _live(size, combo, pair_g, pair_k)
    pair_g, pair_k = pair_g[live], pair_k[live]
    return SaGroupsFit(ts, pair_g, pair_k, _ipf_pairs(size, combo, pair_g, pair_k))


def sa_groups_bound(
    con: duckdb.DuckDBPyConnection, directory: Path, entry: Entry, rule: Rule, fit: SaGroupsFit | None = None
) -> tuple[float, str]:
    """``max_g P(S = s | the other sensitive values, g)`` under the fitted ``N``
    (module docstring): the largest value and the ``s`` reaching it; ``fit``: the table's
    :func:`sa_groups_fit` when the caller has it already."""
    fit = fit if fit is not None else sa_groups_fit(con, directory, entry)
    ts, pair_g, pair_k, n = fit.ts, fit.pair_g, fit.pair_k, fit.n
    s_all = list(reading(entry.kind).sensitive_of(entry))
    known = [a for a in s_all if a != rule.rhs]  # every other value published apart: a bound for any knowledge
    key_cols = [_codes(ts[a])[1] for a in known]
    s_vals, s_codes = _codes(ts[rule.rhs])
    cond = np.zeros(len(pair_g), dtype=np.int64)
    for c in key_cols:
        cond = cond * (int(c.max(initial=0)) + 1) + c[pair_k]
    _, cell = np.unique(pair_g * (int(cond.max(initial=0)) + 1) + cond, return_inverse=True)
    cell = np.asarray(cell, dtype=np.int64).ravel()
    den = np.bincount(cell, weights=n)
    joint_key = cell * len(s_vals) + s_codes[pair_k]
    keys, inv = np.unique(joint_key, return_inverse=True)
    num = np.bincount(np.asarray(inv).ravel(), weights=n)
    ratio = np.divide(num, den[keys // len(s_vals)], out=np.zeros(len(num)), where=den[keys // len(s_vals)] > 0)
    if not len(ratio):
        return 0.0, ""
    i = int(np.argmax(ratio))
    return float(ratio[i]), str(s_vals[int(keys[i] % len(s_vals))])


# -- bucketized tables with several sensitive attributes ------------------------------------
def grouped_bound(con: duckdb.DuckDBPyConnection, directory: Path, entry: Entry, rule: Rule) -> tuple[float, str]:
    """``max_g P(S = s | the other sensitive values, g)`` read from the file of a table whose
    groups publish their sensitive counts (an Anatomy ST with several sensitive
    attributes): a bound on any posterior of ``S`` given the table's other attributes."""
    kind = reading(entry.kind)
    grouped = kind.groups(entry)
    if grouped is None:
        raise Unestimable(f"table {entry.name!r} publishes no groups with counts")
    role, group_cols = grouped
    others = [a for a in kind.sensitive_of(entry) if a != rule.rhs]
    part = ", ".join(_ident(c) for c in [*group_cols, *others])
    s_col = _ident(rule.rhs)
    c = _ident(fresh_alias("c", [*group_cols, *others, rule.rhs]))  # a column may be named C (case-insensitive)
    row = con.execute(
        f'WITH t AS (SELECT {part}, {s_col}, sum(CAST("count" AS DOUBLE)) {c} '
        f"FROM {duckdb_source(directory / entry.files[role])} GROUP BY ALL) "
        f"SELECT CAST({s_col} AS VARCHAR), {c} / sum({c}) OVER (PARTITION BY {part}) FROM t ORDER BY 2 DESC, 1 LIMIT 1"
    ).fetchone()
    worst, value = (float(row[1]), str(row[0])) if row is not None else (0.0, "")
    if entry.raw.get("suppressed_group") is not None:  # its records' values withheld: uniform
        declared = (entry.raw.get("domains") or {}).get(rule.rhs)
        if not declared:
            raise Unestimable(f"table {entry.name!r} suppresses a group without declaring the domain of {rule.rhs}")
        if 1.0 / len(declared) > worst:
            worst, value = 1.0 / len(declared), str(sorted(str(v) for v in declared)[0])
    return worst, value


# -- several tables: a dense joint ------------------------------------------------------------
def _distribution(
    con: duckdb.DuckDBPyConnection, directory: Path, e: Entry
) -> tuple[list[str], dict[str, Any], Floats]:
    """A table's distribution over its own attributes as rows (values per attribute) and
    weights: a plain table's counts, an Anatomy table's ``QIT(q, g) ST(g, s) / |g|``."""
    if e.kind in ("plain", "fitted"):  # a fitted table's expected counts weigh its rows alike
        got = _read(con, directory / e.files["data"], list(e.attributes))
        return list(e.attributes), {a: got[a] for a in e.attributes}, got["count"].astype(np.float64)
    if e.kind != "anatomy":
        raise Unestimable(f"the verifier's estimate does not read {e.kind} tables linked to others ({e.name})")
    s = list(reading(e.kind).sensitive_of(e))
    qi = [a for a in e.attributes if a not in s]
    q_rel, s_rel = (duckdb_source(directory / e.files[r]) for r in ("qit", "st"))
    qsel = ", ".join(f"CAST(q.{_ident(a)} AS VARCHAR) {_ident(a)}" for a in qi)
    ssel = ", ".join(f"CAST(s.{_ident(a)} AS VARCHAR) {_ident(a)}" for a in s)
    cols = [*qi, *s]
    w = fresh_alias("w", cols)  # the weight's own name: no attribute has it (a column may be called w)
    got = con.execute(
        f'WITH n AS (SELECT group_id, sum(CAST("count" AS DOUBLE)) n FROM {s_rel} GROUP BY 1) '
        f'SELECT {qsel}{", " if qi else ""}{ssel}, sum(CAST(q."count" AS DOUBLE) * CAST(s."count" AS DOUBLE) / n.n) '
        f"{_ident(w)} FROM {q_rel} q JOIN {s_rel} s USING (group_id) JOIN n USING (group_id) GROUP BY ALL"
    ).fetchnumpy()
    values = {a: np.asarray(got[a], dtype=object) for a in cols}
    weights = np.asarray(got[w], dtype=np.float64)
    sup = e.raw.get("suppressed_group")
    if sup is not None:  # its records' sensitive values withheld: uniform over the declared domains
        declared = e.raw.get("domains") or {}
        if any(not declared.get(a) for a in s):
            raise Unestimable(f"table {e.name!r} suppresses a group without declaring its sensitive domains")
        hidden = _read(con, directory / e.files["qit"], [*qi, "group_id"])
        rows = np.flatnonzero(hidden["group_id"].astype(str) == str(sup))
        combos = list(itertools.product(*(sorted(str(v) for v in declared[a]) for a in s)))
        reps = len(combos)
        for a in qi:
            values[a] = np.concatenate([values[a], np.repeat(hidden[a][rows], reps)])
        for j, a in enumerate(s):
            values[a] = np.concatenate([values[a], np.tile(np.array([c[j] for c in combos], dtype=object), len(rows))])
        weights = np.concatenate([weights, np.repeat(hidden["count"][rows].astype(np.float64) / reps, reps)])
    return cols, values, weights


def dense_posterior(
    con: duckdb.DuckDBPyConnection, directory: Path, manifest: dict[str, Any], rule: Rule
) -> tuple[float, tuple[str, ...], str]:
    """``max P(S = s | Q = q)`` under the maximum-entropy joint of the tables connected to
    the rule's attributes (module docstring): the value, ``q`` and ``s``."""
    # a noisy table is evidence its release's fitted tables summarize, not a table of records
    entries = [parse_entry(t) for t in manifest.get("tables", []) if t.get("kind") != "noisy"]
    wanted = {*rule.lhs, rule.rhs}
    comp: list[Entry] = []
    reach = set(wanted)
    grew = True
    while grew:  # the tables linked, through shared attributes, to the rule's
        grew = False
        for e in entries:
            if e not in comp and reach & set(e.attributes):
                comp.append(e)
                reach |= set(e.attributes)
                grew = True
    dists = [_distribution(con, directory, e) for e in comp]
    attrs = sorted({a for cols, _, _ in dists for a in cols})
    domains = {a: np.unique(np.concatenate([v[a].astype(str) for cols, v, _ in dists if a in cols])) for a in attrs}
    shape = tuple(len(domains[a]) for a in attrs)
    if int(np.prod(shape, dtype=np.float64)) > DENSE_MAX_CELLS:
        raise Unestimable(f"the joint of {', '.join(attrs)} has {np.prod(shape, dtype=np.float64):,.0f} cells")
    targets = []
    for cols, values, w in dists:
        axes = [attrs.index(a) for a in cols]
        idx = tuple(np.searchsorted(domains[a], values[a].astype(str)) for a in cols)
        t = np.zeros(tuple(shape[i] for i in axes))
        np.add.at(t, idx, w)
        order = np.argsort(axes)
        targets.append((tuple(sorted(axes)), np.transpose(t, order) / max(float(w.sum()), 1e-300)))
    joint = np.full(shape, 1.0 / max(int(np.prod(shape)), 1))
    for _ in range(MAX_SWEEPS):
        worst = 0.0
        for held, t in targets:
            other = tuple(i for i in range(len(shape)) if i not in held)
            m = joint.sum(axis=other, keepdims=True)
            tt = np.expand_dims(t, other)
            worst = max(worst, float(np.abs(m - tt).max(initial=0.0)))
            joint *= np.divide(tt, m, out=np.zeros_like(m), where=m > 0)
        if worst <= TOLERANCE:
            break
    keep = [attrs.index(a) for a in (*rule.lhs, rule.rhs)]
    marg = joint.sum(axis=tuple(i for i in range(len(shape)) if i not in keep))
    marg = np.transpose(marg, np.argsort(np.argsort(keep)))  # axes in (lhs..., rhs) order
    den = marg.sum(axis=-1, keepdims=True)
    ratio = np.divide(marg, den, out=np.zeros_like(marg), where=den > 1e-15)
    best = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    q = tuple(str(domains[a][i]) for a, i in zip(rule.lhs, best[:-1], strict=True))
    return float(ratio[best]), q, str(domains[rule.rhs][best[-1]])


__all__ = [
    "DENSE_MAX_CELLS",
    "SaGroupsFit",
    "Unestimable",
    "dense_posterior",
    "grouped_bound",
    "sa_groups_bound",
    "sa_groups_fit",
]
