"""The verifier's own kind table: per table kind of the release format, the checks of its
files (:data:`KIND_CHECKS`), the file that holds its non-sensitive values (read by the
collection checks) and its own attack, if any (read by ``check``).  A new kind is one entry
here (and its documentation in docs/release-format.md): the verifier never dispatches on a
kind's name elsewhere."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from versapub.data.sql import fresh_alias
from versapub.errors import ReleaseError
from versapub.verify.adversary.adversary_records import (
    Drawer,
    anatomy_records,
    generalized_records,
    plain_records,
    sa_groups_records,
)
from versapub.verify.attacks.attack_msa import msa_attack
from versapub.verify.dp.dp_checks import FITTED as DP_FITTED
from versapub.verify.dp.dp_checks import NOISY as DP_NOISY
from versapub.verify.dp.dp_checks import expected_records, verify_fitted, verify_noisy
from versapub.verify.guarantees.population_checks import population_ok
from versapub.verify.reading.manifest import Manifest
from versapub.verify.reading.primitives import Checker, _lit, _max_flow, _q
from versapub.verify.reading.reading import ANATOMY, GENERALIZED, PLAIN, SA_GROUPS, Reading

#: A kind's file checks: ``verify(checker, manifest entry, table (name, attributes, enforced
#: rules), files, the release's guarantee)``.
Verify = Callable[[Checker, dict[str, Any], Any, dict[str, Any], dict[str, Any]], None]
#: A kind's own attack on what only it publishes: ``attack(directory, original) -> [result]``,
#: each result a dict with ``table``, ``ok``, ``message`` and the attack's rows.
Attack = Callable[[Path, Any, Manifest], list[dict[str, Any]]]


@dataclass(frozen=True)
class KindCheck:
    """What the verifier knows of one table kind."""

    verify: Verify
    #: The file role holding the kind's non-sensitive values with counts (collection checks).
    cells: str
    #: Its generalized values are listed in ``labels`` and ``order`` files.
    generalized: bool = False
    attack: Attack | None = None
    #: Records drawn from its files as an adversary reads them (the attacks on everything
    #: published, :mod:`versapub.verify.adversary.adversary_check`).
    records: Drawer | None = None
    #: Its files' roles, groups, cells and the adversary's view (:mod:`versapub.verify.reading.reading`).
    reading: Reading | None = None


def sa_groups_ok(
    c: Checker,
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
    if not c.group_ids_ok([qit, sets], [qit], "sa-groups", name):
        return
    c.con.execute(
        f"CREATE TEMP TABLE sg AS SELECT CAST({gid} AS BIGINT) g, {_q('attribute')} a, {_q('value')} v FROM {sets}"
    )
    try:
        dup = c.con.execute("SELECT count(*) FROM (SELECT g, a, v FROM sg GROUP BY ALL HAVING count(*) > 1)")
        c.zero("sa-groups", dup.fetchone(), "no set lists a value twice", "{} set value(s) listed twice", name)
        names = ", ".join(_lit(a) for a in sens)
        c.zero(
            "sa-groups",
            c.con.execute(f"SELECT count(*) FROM sg WHERE a NOT IN ({names})").fetchone(),
            "the sets name only the table's sensitive attributes",
            "{} set row(s) name an attribute that is not one of " + str(sens),
            name,
        )
        for a in sens:
            _sets_ok(c, qit, a, entry, guarantee, name)
        primary = entry.get("primary")
        if primary not in sens:
            c.report.add("manifest", False, f"primary {primary!r} is not one of the sensitive attributes {sens}", name)
            return
        _linkable_ok(c, ts, sens, str(primary), name)
        small = c.con.execute(
            f"SELECT count(*), min(q.g) FROM (SELECT CAST({gid} AS BIGINT) g, sum(CAST({_q('count')} AS BIGINT)) n "
            f"FROM {qit} GROUP BY 1) q JOIN (SELECT g, count(*) m FROM sg WHERE a = {_lit(str(primary))} "
            "GROUP BY g) s USING (g) WHERE q.n < s.m"
        ).fetchone()
        c.zero(
            "sa-groups",
            small,
            f"every group holds at least as many records as its {primary} values",
            "{} group(s) hold fewer records than their primary set has values (the primary carries no noise)",
            name,
        )
        if c.original is not None:
            c.grouping_ok(qit, qi, sens, name)
    finally:
        c.con.execute("DROP TABLE IF EXISTS sg")


def _sets_ok(c: Checker, qit: str, a: str, entry: dict[str, Any], guarantee: dict[str, Any], name: str) -> None:
    """Every group has a set of ``a``; each set satisfies the rule's guarantee (each value
    counted once, Definition 3) and holds at least the manifest's ``l`` values."""
    gid = _q("group_id")
    missing = c.con.execute(
        f"SELECT count(*), min(g) FROM (SELECT DISTINCT CAST({gid} AS BIGINT) g FROM {qit}) q "
        f"FULL OUTER JOIN (SELECT DISTINCT g FROM sg WHERE a = {_lit(a)}) s USING (g) "
        "WHERE q.g IS NULL OR s.g IS NULL"
    ).fetchone()
    miss = int(missing[0]) if missing else -1
    c.report.add(
        "sa-groups",
        miss == 0,
        f"every group has a set of {a!r}"
        if miss == 0
        else f"{miss} group(s) lack a set of {a!r} or are not in the QIT (e.g. group {missing[1]})"
        if missing
        else "cannot read the sets",
        name,
    )
    c.con.execute(
        f"CREATE TEMP VIEW set_view AS SELECT g AS {gid}, v AS {_q(a)}, 1 AS {_q('count')} FROM sg WHERE a = {_lit(a)}"
    )
    try:
        c.groups_ok("set_view", [f"CAST({gid} AS BIGINT)"], a, c.guarantee_of(a, guarantee), name, "group's set")
    finally:
        c.con.execute("DROP VIEW set_view")
    want = ((entry.get("diversity") or {}).get(a) or {}).get("l")
    if isinstance(want, int) and not isinstance(want, bool):
        short = c.con.execute(
            f"SELECT count(*), arg_min(g, n), min(n) FROM (SELECT g, count(*) n FROM sg "
            f"WHERE a = {_lit(a)} GROUP BY g) WHERE n < {want}"
        ).fetchone()
        k = int(short[0]) if short else -1
        c.report.add(
            "sa-groups",
            k == 0,
            f"every set of {a!r} holds at least l = {want} values"
            if k == 0
            else f"{k} set(s) of {a!r} hold fewer than l = {want} values (e.g. group {short[1]}: {short[2]})"
            if short
            else "",
            name,
        )


def _linkable_ok(c: Checker, ts: str, sens: list[str], primary: str, name: str) -> None:
    """Every value of a non-primary set is linkable: it occurs in ``T^S`` with a value of
    the group's primary set (Definition 4)."""
    p = _q(str(primary))
    for a in sens:
        if a == primary:
            continue
        # LSV(a, G) = π_a(T^S ⋈ G.S^pri), then the set values outside it (an anti-join).
        row = c.con.execute(
            f"WITH pairs AS (SELECT DISTINCT {p} AS pv, {_q(a)} AS v FROM {ts}), lsv AS (SELECT DISTINCT "
            f"pr.g, t.v FROM sg pr JOIN pairs t ON pr.a = {_lit(primary)} AND pr.v = t.pv) "
            "SELECT count(*), min(s.g), min(s.v) FROM sg s "
            f"LEFT JOIN lsv USING (g, v) WHERE s.a = {_lit(a)} AND lsv.g IS NULL"
        ).fetchone()
        k = int(row[0]) if row else -1
        c.report.add(
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


def anatomy_ok(
    c: Checker, qit: str, st: str, sens: list[str], guarantee: dict[str, Any], name: str, suppressed: int | None
) -> None:
    """Group sizes agree; every group satisfies the guarantee for every sensitive
    attribute ``A_i`` given the values of the others (one attribute: plain Anatomy);
    a suppressed group has QIT rows only."""
    gid, cnt = _q("group_id"), _q("count")
    if not c.group_ids_ok([qit, st], [qit, st], "anatomy", name):
        return
    sizes = f"SELECT CAST({gid} AS BIGINT) g, sum(CAST({cnt} AS BIGINT)) n FROM {{v}} GROUP BY 1"
    skip = "" if suppressed is None else f" AND g <> {int(suppressed)}"
    row = c.con.execute(
        f"SELECT count(*) FROM ({sizes.format(v=qit)}) a FULL OUTER JOIN ({sizes.format(v=st)}) b "
        f"USING (g) WHERE a.n IS DISTINCT FROM b.n{skip}"
    ).fetchone()
    if suppressed is not None:
        leak = c.con.execute(f"SELECT count(*) FROM {st} WHERE CAST({gid} AS BIGINT) = {int(suppressed)}")
        c.zero(
            "anatomy",
            leak.fetchone(),
            f"the suppressed group {suppressed} has no sensitive values in the ST",
            f"the ST publishes {{}} row(s) of the suppressed group {suppressed}",
            name,
        )
    c.zero(
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
        c.groups_ok(st, line, s, c.guarantee_of(s, guarantee), name, what)


def generalized_ok(
    c: Checker,
    data: str,
    labels: str,
    order: str,
    attrs: list[str],
    s: str | None,
    guarantee: dict[str, Any],
    name: str,
    kept: Sequence[str] = (),
) -> None:
    """A generalized table (``kept``: columns published exactly beside the classes, not part
    of them: the classic job's other columns): the listings are well formed (each listed attribute's leaves
    numbered 0 .. m-1, every generalized value a run first..last of them, no generalized
    value also a leaf); every equivalence class (distinct values of the non-sensitive
    columns) satisfies the guarantee — on induced frequencies when the sensitive
    attribute's values are generalized too (Sequential Sweep); with the original, the
    table is a true generalization of it: every record can be given to a row whose values
    (its sensitive value included) cover its values (a maximum flow that saturates)."""
    qi = [a for a in attrs if a != s and a not in kept]
    if not _listings_ok(c, labels, order, attrs, name):
        return
    _classes_ok(c, data, labels, order, qi, s, guarantee, name)
    if c.original is not None and c.unperturbed(attrs, "generalization", name) and _cover_size_ok(c, data, name):
        removed = qi if _removed_from(c, name) else None
        _covers_original(c, data, labels, order, attrs, name, removed, list(kept))


def _listings_ok(c: Checker, labels: str, order: str, attrs: list[str], name: str) -> bool:
    """A generalized table's listings: only its attributes, leaves numbered 0 .. m-1, every
    generalized value a run of leaves and none also a leaf (False: the runs cannot be read)."""
    names = ", ".join(_lit(a) for a in attrs) or "NULL"
    bad = c.con.execute(
        f"SELECT (SELECT count(*) FROM {labels} WHERE attribute NOT IN ({names})) + "
        f"(SELECT count(*) FROM {order} WHERE attribute NOT IN ({names}))"
    ).fetchone()
    c.zero(
        "generalized",
        bad,
        "the listings name only attributes of the table",
        "{} listing row(s) name an attribute the table does not hold",
        name,
    )
    numbering = c.con.execute(
        f"SELECT count(*) FROM (SELECT attribute, count(*) m, count(DISTINCT TRY_CAST(position AS BIGINT)) d, "
        f"min(TRY_CAST(position AS BIGINT)) lo, max(TRY_CAST(position AS BIGINT)) hi FROM {order} GROUP BY 1) "
        "WHERE d <> m OR lo <> 0 OR hi <> m - 1 OR d IS NULL"
    ).fetchone()
    c.zero(
        "generalized",
        numbering,
        "each listed attribute's leaves are numbered 0 .. m-1",
        "{} attribute(s) whose leaves are not numbered 0 .. m-1 exactly once",
        name,
    )
    runs = c.con.execute(
        f"SELECT count(*) FROM {labels} l LEFT JOIN (SELECT attribute, count(*) m FROM {order} GROUP BY 1) o "
        "USING (attribute) WHERE o.m IS NULL OR TRY_CAST(l.first AS BIGINT) IS NULL OR TRY_CAST(l.last AS BIGINT) "
        "IS NULL OR CAST(l.first AS BIGINT) < 0 OR CAST(l.last AS BIGINT) < CAST(l.first AS BIGINT) "
        "OR CAST(l.last AS BIGINT) >= o.m"
    ).fetchone()
    c.zero(
        "generalized",
        runs,
        "every generalized value covers a run of its attribute's leaves",
        "{} generalized value(s) cover no valid run of their attribute's leaves",
        name,
    )
    if (runs and runs[0]) or (numbering and numbering[0]):
        return False
    clash = c.con.execute(
        f"SELECT count(*) FROM {labels} l JOIN {order} o ON o.attribute = l.attribute AND o.leaf = l.value "
        "WHERE NOT (CAST(l.first AS BIGINT) = CAST(o.position AS BIGINT) AND l.first = l.last)"
    ).fetchone()
    c.zero(
        "generalized",
        clash,
        "no generalized value is also a leaf of its attribute",
        "{} generalized value(s) are also leaves of their attribute (ambiguous)",
        name,
    )
    return True


def _classes_ok(
    c: Checker, data: str, labels: str, order: str, qi: list[str], s: str | None, guarantee: dict[str, Any], name: str
) -> None:
    """Every equivalence class satisfies the guarantee: on induced frequencies when the
    sensitive attribute's values are generalized too (Sequential Sweep)."""
    g = c.guarantee_of(s, guarantee) if s is not None else guarantee
    spread = None
    if s is not None and c.sensitive_generalized(labels, s):
        spread = "s_runs"
        c.con.execute(
            f"CREATE OR REPLACE TEMP TABLE s_runs AS SELECT value AS pv, CAST(first AS BIGINT) f, "
            f"CAST(last AS BIGINT) l FROM {labels} WHERE attribute = {_lit(s)} UNION ALL SELECT leaf, "
            f"CAST(position AS BIGINT), CAST(position AS BIGINT) FROM {order} WHERE attribute = {_lit(s)} "
            f"AND leaf NOT IN (SELECT value FROM {labels} WHERE attribute = {_lit(s)})"
        )
        stray = c.con.execute(f"SELECT count(*) FROM {data} WHERE {_q(s)} NOT IN (SELECT pv FROM s_runs)").fetchone()
        c.zero(
            "generalized",
            stray,
            f"every published value of {s!r} is a listed leaf or generalized value",
            f"{{}} row(s) hold a value of {s!r} that is neither a listed leaf nor a generalized value",
            name,
        )
    c.groups_ok(data, [_q(a) for a in qi] or ["1"], s, g, name, "equivalence class", spread)
    c.con.execute("DROP TABLE IF EXISTS s_runs")


def _cover_size_ok(c: Checker, data: str, name: str) -> bool:
    """Whether the generalization check runs at this size (else said, skipped)."""
    size = c.con.execute(f"SELECT count(*) FROM {data}").fetchone()
    limit = c.pairing_max_rows
    if limit is not None and size and int(size[0]) > limit:
        c.report.add(
            "generalization",
            True,
            f"skipped: more than {limit:,} rows (versapub check --original runs it at any size)",
            name,
        )
        return False
    return True


def _removed_from(c: Checker, name: str) -> bool:
    """Whether the manifest says records were removed from table ``name``'s classes."""
    gone = c.removed
    return gone is not None and gone.table == name


def _covers_original(
    c: Checker,
    data: str,
    labels: str,
    order: str,
    attrs: list[str],
    name: str,
    qi: list[str] | None = None,
    kept: Sequence[str] = (),
) -> None:
    """The table is a true generalization of the input: every record can be given to a row
    whose values (its sensitive value included) cover its values (a maximum flow that
    saturates).  ``qi`` (records removed by suppression): every published record is an
    input record, and the input records the classes (``qi``'s values) cover are exactly
    the published ones — the removed records lie in no published class."""
    limit = c.pairing_max_rows
    _leaf_maps(c, labels, order, attrs)
    ks = [f"k{i}" for i in range(len(attrs))]
    try:
        c.con.execute(
            "CREATE TEMP TABLE cells AS SELECT *, row_number() OVER () - 1 AS cid FROM (SELECT "
            + ", ".join(f"{_q(a)} AS {k}" for a, k in zip(attrs, ks, strict=True))
            + ", count(*) AS c FROM original_codes GROUP BY ALL)"
        )
        per: list[int] = []  # each input cell joined with every published value covering it, per attribute
        for i in range(len(attrs)):
            got = c.con.execute(f"SELECT count(*) FROM cells x JOIN map{i} m ON m.leaf = x.k{i}").fetchone()
            per.append(int(got[0]) if got else 0)
        if limit is not None:
            pairs = sum(per)
            if pairs > COVER_MAX_PAIRS:
                c.report.add(
                    "generalization",
                    True,
                    f"skipped: the input's cells meet {pairs:,} covering published values, more than "
                    f"{COVER_MAX_PAIRS:,} (versapub check --original runs it at any size)",
                    name,
                )
                return
        # the published rows keep their attributes' names: its own columns take names none has
        pc, rid = _q(fresh_alias("c", attrs)), _q(fresh_alias("rid", attrs))
        c.con.execute(
            f"CREATE TEMP TABLE pr AS SELECT *, CAST({_q('count')} AS BIGINT) AS {pc}, "
            f"row_number() OVER () - 1 AS {rid} FROM {data}"
        )
        # From the input's cells, one attribute at a time: a cell's published values that
        # cover it so far, kept only while some published row starts with them (a prefix
        # semi-join), so general labels never expand into all their leaves.
        # The attributes whose published values cover fewest cells first (exact ones: one
        # each), so the partial pairs stay few; the order changes nothing else.
        seq = sorted(range(len(attrs)), key=lambda i: (per[i], i))
        prev = "cells"
        for t, i in enumerate(seq):
            done = seq[:t]
            match = " AND ".join([*(f"q.{_q(attrs[j])} = x.p{j}" for j in done), f"q.{_q(attrs[i])} = m.pv"])
            c.con.execute(
                f"CREATE OR REPLACE TEMP TABLE step{t} AS SELECT x.*, m.pv AS p{i} FROM {prev} x "
                f"JOIN map{i} m ON m.leaf = x.k{i} SEMI JOIN (SELECT DISTINCT "
                f"{', '.join(_q(attrs[j]) for j in [*done, i])} FROM pr) q ON {match}"
            )
            if t:
                c.con.execute(f"DROP TABLE {prev}")
            prev = f"step{t}"
        on = " AND ".join(f"pr.{_q(a)} = x.p{i}" for i, a in enumerate(attrs))
        arcs = c.con.execute(f"SELECT DISTINCT pr.{rid} AS rid, x.cid FROM {prev} x JOIN pr ON {on}").fetchnumpy()
        c.con.execute(f"DROP TABLE IF EXISTS {prev}")
        rows = c.con.execute(f"SELECT {rid} AS rid, {pc} AS c FROM pr ORDER BY {rid}").fetchnumpy()
        cells = c.con.execute("SELECT cid, c FROM cells ORDER BY cid").fetchnumpy()
        flow, total = _max_flow(rows, cells, arcs)
        c.report.add(
            "generalization",
            flow == total == c.n,
            f"every {'published' if qi is not None else 'input'} record is covered by a published row with its "
            "sensitive value (a true generalization)"
            if flow == total == c.n
            else f"only {flow} of {c.n} records can be given to published rows that cover their values: "
            "the table is not a generalization of the input",
            name,
        )
        if qi is not None:
            _removed_outside(c, [attrs.index(a) for a in qi], attrs, name, kept)
    finally:
        for i in range(len(attrs)):
            c.con.execute(f"DROP VIEW IF EXISTS map{i}")
        for tab in ("cells", "pr", *(f"{p}{i}" for i in range(len(attrs)) for p in ("pos", "lab"))):
            c.con.execute(f"DROP TABLE IF EXISTS {tab}")


def _leaf_maps(c: Checker, labels: str, order: str, attrs: list[str]) -> None:
    """Per attribute ``i``, the view ``map{i}``: each published value with the input's code
    of every leaf it covers (an exact value: its own code)."""
    for i, a in enumerate(attrs):  # published value -> the input's code of every leaf it covers
        # kept as its two small parts (each leaf's position, each label's run of positions) and
        # joined by range where it is used: the pairs themselves run to millions when labels
        # are wide (a 51,920-record Mondrian release: 8.7 million, 1 GB; issue 50)
        c.con.execute(
            f"CREATE TEMP TABLE pos{i} AS SELECT d.code AS leaf, CAST(o.position AS BIGINT) AS pos "
            f"FROM {order} o JOIN {_q('dict_' + a)} d ON o.leaf = d.value WHERE o.attribute = {_lit(a)}"
        )
        c.con.execute(
            f"CREATE TEMP TABLE lab{i} AS SELECT value AS pv, CAST(first AS BIGINT) AS lo, "
            f"CAST(last AS BIGINT) AS hi FROM {labels} WHERE attribute = {_lit(a)}"
        )
        c.con.execute(
            f"CREATE TEMP VIEW map{i} AS SELECT l.pv, p.leaf FROM lab{i} l JOIN pos{i} p "
            "ON p.pos BETWEEN l.lo AND l.hi "
            f"UNION ALL SELECT d.value, d.code FROM {_q('dict_' + a)} d "
            f"WHERE d.value NOT IN (SELECT pv FROM lab{i})"
        )


def _removed_outside(c: Checker, idx: list[int], attrs: list[str], name: str, kept: Sequence[str] = ()) -> None:
    """Records removed by suppression lie in no published class: the input records whose
    class values (``attrs[i]`` for ``i`` in ``idx``, each matched through ``map{i}``) some
    published row covers number exactly ``n_records`` (the temp tables ``pr`` and ``map{i}``
    of :func:`_covers_original`) — save the records of kept-values cells holding fewer than
    the job's floor (issue 65: removed before generalizing, wherever their class is; at most
    as many as the input holds in such cells, :func:`_short_kept`)."""
    qi = [attrs[i] for i in idx]
    keys = ", ".join(f"{_q(a)} AS k{i}" for i, a in zip(idx, qi, strict=True)) or "1 AS k"
    c.con.execute(
        f"CREATE OR REPLACE TEMP TABLE qcells AS SELECT {keys}, count(*) AS c FROM original_codes GROUP BY ALL"
    )
    prev = "qcells"
    for j, (i, a) in enumerate(zip(idx, qi, strict=True)):
        match = " AND ".join(
            [*(f"q.{_q(b)} = x.p{t}" for t, b in zip(idx[:j], qi[:j], strict=True)), f"q.{_q(a)} = m.pv"]
        )
        c.con.execute(
            f"CREATE OR REPLACE TEMP TABLE qstep{j} AS SELECT x.*, m.pv AS p{i} FROM {prev} x "
            f"JOIN map{i} m ON m.leaf = x.k{i} SEMI JOIN (SELECT DISTINCT "
            f"{', '.join(_q(b) for b in qi[: j + 1])} FROM pr) q ON {match}"
        )
        prev = f"qstep{j}"
    cell = ", ".join(f"k{i}" for i in idx) or "k"
    got = c.con.execute(f"SELECT coalesce(sum(c), 0) FROM (SELECT DISTINCT {cell}, c FROM {prev})").fetchone()
    covered = int(got[0]) if got else 0
    for j in range(len(qi)):
        c.con.execute(f"DROP TABLE IF EXISTS qstep{j}")
    c.con.execute("DROP TABLE IF EXISTS qcells")
    gone = c.removed.records if c.removed is not None else 0
    inside = _short_kept(c, kept) if covered > c.n else 0
    ok = c.n <= covered <= c.n + min(inside, gone)
    c.report.add(
        "removal",
        ok,
        f"the {gone:,} removed record(s) lie in no published class: the classes cover {covered:,} input records, "
        "the published ones"
        if covered == c.n
        else f"the classes cover {covered:,} input records and publish {c.n:,}: the {covered - c.n:,} others were "
        f"removed for their kept values' cells of fewer than k (the input holds {inside:,} such records)"
        if ok
        else f"the published classes cover {covered:,} input records but publish {c.n:,}: records were removed from "
        "classes that are published",
        name,
    )


def _short_kept(c: Checker, kept: Sequence[str]) -> int:
    """The input records whose combination of the counted kept columns (the job's keys among
    them, all without keys) holds fewer than the job's floor."""
    floor = c.job.get("floor")
    keys = c.job.get("keys")
    counted = [a for a in kept if not isinstance(keys, list) or a in keys]
    if not isinstance(floor, int) or floor <= 1 or not counted:
        return 0
    cols = ", ".join(_q(a) for a in counted)
    got = c.con.execute(
        f"SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM original_codes GROUP BY {cols} "
        f"HAVING count(*) < {int(floor)})"
    ).fetchone()
    return int(got[0]) if got else 0


#: The generalization check's first join (input cells x the published values covering each of
#: their values) above which ``publish`` skips it, as it skips pairing large tables: ranges
#: of Mondrian's classes overlap across classes, so a value is covered by many of them.
COVER_MAX_PAIRS = 20_000_000


def verify_plain(c: Checker, entry: dict[str, Any], sub: Any, files: dict[str, Any], guarantee: dict[str, Any]) -> None:
    """A plain table: its count table, and with the original its marginal."""
    del entry, guarantee
    cols = list(sub.attributes)
    view = c.relation(str(files.get("data")), [*cols, "count"], "file")
    if view and c.counts_ok(view, cols, files["data"]):
        c.marginal_ok(view, cols, files["data"])


def verify_anatomy(
    c: Checker, entry: dict[str, Any], sub: Any, files: dict[str, Any], guarantee: dict[str, Any]
) -> None:
    """An Anatomy table: QIT and ST count tables (a suppressed group's records only in the
    QIT), the groups (:func:`anatomy_ok`), the marginals and, with the original, the pairing."""
    rep = c.report
    sens = [r.rhs for r in sub.enforced_rules]
    sup = entry.get("suppressed_group")
    if sup is not None and (isinstance(sup, bool) or not isinstance(sup, int)):
        rep.add("manifest", False, f"suppressed_group must be an integer, got {sup!r}", sub.name)
        return
    qi = [a for a in sub.attributes if a not in sens]
    qit = c.relation(str(files.get("qit")), [*qi, "group_id", "count"], "file")
    st = c.relation(str(files.get("st")), ["group_id", *sens, "count"], "file")
    ok_q = bool(qit) and c.counts_ok(qit or "", [*qi, "group_id"], files["qit"])
    withheld = 0
    if qit and sup is not None:
        got = c.con.execute(
            f"SELECT coalesce(sum(CAST({_q('count')} AS BIGINT)), 0) FROM {qit} "
            f"WHERE TRY_CAST({_q('group_id')} AS BIGINT) = {int(sup)}"
        ).fetchone()
        withheld = int(got[0]) if got else 0
        rep.add("anatomy", True, f"{withheld} record(s) in the suppressed group {sup}", sub.name)
    ok_s = bool(st) and c.counts_ok(st or "", ["group_id", *sens], files["st"], None if sup is None else c.n - withheld)
    if ok_q and ok_s and qit and st:
        anatomy_ok(c, qit, st, sens, guarantee, sub.name, sup)
        if qi:
            c.marginal_ok(qit, qi, files["qit"])
        for a in sens:
            c.marginal_ok(st, [a], files["st"], at_most=sup is not None)
        if c.original is not None and sup is None:
            c.pairing_ok(qit, st, qi, sens, sub.name)


def suppression_ok(
    c: Checker, data: str, labels: str, order: str, qi: list[str], entry: dict[str, Any], s: str | None, name: str
) -> None:
    """Local suppression (ARX's semantics: at most ``floor(suppression x n)`` records, each
    published with every quasi-identifier at its root — a generalized value covering all of
    its attribute's leaves): the records claimed suppressed (``stats.suppressed_records``)
    are no more than the records whose every quasi-identifier is at its root, and no more
    than the limit the manifest's anonymizer states.  Nothing is dropped: the counts sum to
    ``n_records`` (:meth:`Checker.counts_ok`)."""
    claimed = (entry.get("stats") or {}).get("suppressed_records") or 0
    share = c.suppression_share(s)
    if claimed == 0 and not share:
        return
    if isinstance(claimed, bool) or not isinstance(claimed, int) or claimed < 0:
        c.report.add("suppression", False, f"suppressed_records must be a whole number, got {claimed!r}", name)
        return
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share < 1:
        c.report.add("suppression", False, f"the anonymizer's suppression must be in [0, 1), got {share!r}", name)
        return
    # at its root: a label covering every leaf of the attribute's order, or — an attribute
    # with no generalized value (one leaf in all: a treatment may have left one) — its one value
    roots = " AND ".join(
        f"({_q(a)} IN (SELECT l.value FROM {labels} l JOIN (SELECT attribute, count(*) m FROM {order} GROUP BY 1) o "
        f"USING (attribute) WHERE l.attribute = {_lit(a)} AND CAST(l.first AS BIGINT) = 0 "
        f"AND CAST(l.last AS BIGINT) = o.m - 1) OR ((SELECT count(*) FROM {order} WHERE attribute = {_lit(a)}) = 0 "
        f"AND (SELECT count(DISTINCT {_q(a)}) FROM {data}) = 1))"
        for a in qi
    )
    row = c.con.execute(
        f'SELECT coalesce(sum(CAST("count" AS BIGINT)), 0) FROM {data} WHERE {roots or "TRUE"}'
    ).fetchone()
    at_root = int(row[0]) if row else 0
    limit = math.floor(float(share) * c.n)
    ok = claimed <= at_root and claimed <= limit
    c.report.add(
        "suppression",
        ok,
        f"{claimed:,} record(s) suppressed (at most floor({share:g} x {c.n:,}) = {limit:,}); {at_root:,} record(s) "
        "have every quasi-identifier at its root"
        + ("" if claimed <= at_root else ": fewer than the suppressed records claimed"),
        name,
    )


def verify_generalized(
    c: Checker, entry: dict[str, Any], sub: Any, files: dict[str, Any], guarantee: dict[str, Any]
) -> None:
    """A generalized table: its data, labels and order files (:func:`generalized_ok`), and the
    sensitive marginal when its values are published exactly."""
    rep = c.report
    if sub.enforced_rules[1:]:
        rep.add("manifest", False, "a generalized table enforces at most one rule", sub.name)
        return
    held = entry.get("sensitive")  # a collection's marginal holds S without a rule
    if sub.enforces is None and held is not None and held not in sub.attributes:
        rep.add("manifest", False, f"sensitive {held!r} is not an attribute of the table", sub.name)
        return
    s = sub.enforces.rhs if sub.enforces is not None else held  # None: identities only
    kept = entry.get("kept") or []
    if not isinstance(kept, list) or not set(map(str, kept)) <= set(sub.attributes) - {s}:
        rep.add("manifest", False, f"kept must list non-sensitive attributes of the table, got {kept!r}", sub.name)
        return
    if sub.enforces is None and held is None and "guarantee" in entry:
        own = _own_guarantee(entry.get("guarantee"))
        if own is None:
            rep.add(
                "manifest",
                False,
                f"a table's own guarantee is k-anonymity with a whole k >= 2, got {entry.get('guarantee')!r}",
                sub.name,
            )
            return
        guarantee = own
    data = c.relation(str(files.get("data")), [*sub.attributes, "count"], "file")
    labels = c.relation(str(files.get("labels")), ["attribute", "value", "first", "last"], "file")
    order = c.relation(str(files.get("order")), ["attribute", "leaf", "position"], "file")
    if data and labels and order and c.counts_ok(data, list(sub.attributes), files["data"]):
        generalized_ok(c, data, labels, order, list(sub.attributes), s, guarantee, sub.name, [str(k) for k in kept])
        qi = [a for a in sub.attributes if a != s and a not in set(map(str, kept))]
        suppression_ok(c, data, labels, order, qi, entry, s, sub.name)
        population_ok(c, data, labels, order, qi, c.guarantee_of(s, guarantee) if s else guarantee, sub.name)
        if s is not None and not c.sensitive_generalized(labels, s):
            c.marginal_ok(data, [s], files["data"])


def _own_guarantee(spec: Any) -> dict[str, Any] | None:
    """The guarantee a generalized table that enforces no rule declares it was built for
    (``docs/release-format.md``: a plain sub-table generalized to meet the job's floor on
    published cells): k-anonymity of its columns with a whole ``k`` of at least 2, the only
    guarantee such a table can be built for (None: anything else)."""
    if not isinstance(spec, dict) or spec.get("name") != "k-anonymity" or set(spec) != {"name", "k"}:
        return None
    k = spec.get("k")
    return dict(spec) if isinstance(k, int) and not isinstance(k, bool) and k >= 2 else None


def verify_sa_groups(
    c: Checker, entry: dict[str, Any], sub: Any, files: dict[str, Any], guarantee: dict[str, Any]
) -> None:
    """An SA-groups table: QIT and T^S count tables, the sets (:func:`sa_groups_ok`), the marginals."""
    sens = [r.rhs for r in sub.enforced_rules]
    qi = [a for a in sub.attributes if a not in sens]
    qit = c.relation(str(files.get("qit")), [*qi, "group_id", "count"], "file")
    ts = c.relation(str(files.get("ts")), [*sens, "count"], "file")
    sets = c.relation(str(files.get("sets")), ["group_id", "attribute", "value"], "file")
    ok_q = bool(qit) and c.counts_ok(qit or "", [*qi, "group_id"], files["qit"])
    ok_t = bool(ts) and c.counts_ok(ts or "", sens, files["ts"])
    if ok_q and ok_t and qit and ts and sets:
        sa_groups_ok(c, qit, ts, sets, qi, sens, entry, guarantee, sub.name)
        if qi:
            c.marginal_ok(qit, qi, files["qit"])
        c.marginal_ok(ts, sens, files["ts"])


#: The verifier's kind table: every kind of the release format (docs/release-format.md).
KIND_CHECKS: dict[str, KindCheck] = {
    "plain": KindCheck(verify_plain, cells="data", records=plain_records, reading=PLAIN),
    "anatomy": KindCheck(verify_anatomy, cells="qit", records=anatomy_records, reading=ANATOMY),
    "generalized": KindCheck(
        verify_generalized, cells="data", generalized=True, records=generalized_records, reading=GENERALIZED
    ),
    "sa-groups": KindCheck(
        verify_sa_groups, cells="qit", attack=msa_attack, records=sa_groups_records, reading=SA_GROUPS
    ),
    "noisy": KindCheck(verify_noisy, cells="data", records=expected_records, reading=DP_NOISY),
    "fitted": KindCheck(verify_fitted, cells="data", records=expected_records, reading=DP_FITTED),
}


def drawers() -> dict[str, Drawer]:
    """Each kind's drawer of adversary records."""
    return {k: v.records for k, v in KIND_CHECKS.items() if v.records is not None}


def reading(kind: object) -> Reading:
    """The verifier's reading of table kind ``kind`` (:mod:`versapub.verify.reading.reading`); an
    unknown kind is a :class:`ReleaseError`."""
    check = KIND_CHECKS.get(str(kind))
    if check is None or check.reading is None:
        raise ReleaseError(f"Unknown table kind {kind!r}; this verifier reads: {', '.join(sorted(KIND_CHECKS))}.")
    return check.reading
