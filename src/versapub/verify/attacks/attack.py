"""Intersection attacks on a release: which sensitive values remain possible for a record
whose left-hand-side values the adversary knows?

The adversary sees every published count table (plain tables; Anatomy QIT and ST, whose
group column is a latent attribute shared by the two).  The unknown original table is any
multiset of ``n`` full records (values of every attribute and every group membership)
whose projections reproduce every count table: a *possible world*.  For a rule
``Q -> S`` and a target with ``t[Q] = q``, value ``s`` is *possible* if some possible world
holds a record with ``Q = q`` and ``S = s``.  A target is disclosed when fewer values are
possible than the guarantee's ``min_possible_values()`` (l-diversity: fewer than ``l``, then
some value has posterior probability above ``1/l``).

* :func:`exact_attack` decides possibility with a constraint solver (OR-Tools CP-SAT) over
  integer counts of the joint rows consistent across tables; only for small releases.
* :func:`scalable_attack` propagates candidate value sets through the tables to a fixpoint
  (arc consistency) and strengthens it by counting inside Anatomy groups; any size.  Both
  are sound: the candidate sets always contain every truly possible value, so a target is
  reported only if it is truly disclosed.

Tables that share no column (directly or through others) do not constrain each other, so
each connected component of tables is attacked separately, with the part of ``q`` that
lies in the component of ``S``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from versapub.errors import ReleaseError
from versapub.privacy.rules import Rule
from versapub.verify.guarantees.thresholds import Thresholds
from versapub.verify.reading.published import CountRows, PublishedRelease

#: The exact attack refuses releases above these sizes (it would take too long).
EXACT_MAX_RECORDS = 500
EXACT_MAX_JOINT_ROWS = 200_000
EXACT_SECONDS_PER_SOLVE = 10.0
#: Total seconds the exact attack spends on one release; probes left when it runs out are
#: counted undecided and their values assumed possible (the scalable attack still runs).
EXACT_BUDGET_S = 10.0


@dataclass(frozen=True)
class Disclosure:
    """Target ``q`` (values of ``rule.lhs`` in order) whose ``S`` is pinned to ``possible``."""

    rule: Rule
    q: tuple[str, ...]
    possible: tuple[str, ...]

    def describe(self) -> str:
        known = ", ".join(f"{a}={v}" for a, v in zip(self.rule.lhs, self.q, strict=True))
        return f"({known}) -> {self.rule.rhs} in {{{', '.join(self.possible)}}}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule.to_json(), "q": list(self.q), "possible": list(self.possible)}


#: At most this many disclosed targets are listed (the counts are always complete).
MAX_LISTED = 1000

#: What the attacks call a target, in words (``check``'s output and ``check.json``).
TARGET = (
    "a target is a combination of a rule's left-hand-side values an adversary may know: with the original, "
    "each combination some record holds; without it, each combination the release can show"
)


@dataclass
class AttackResult:
    """All targets examined and those disclosed: ``disclosed`` counts every disclosed target,
    ``records_at_risk`` the records holding one (known only with the original), and
    ``disclosures`` lists the first :data:`MAX_LISTED` of them."""

    method: str
    guarantee: Thresholds
    targets: int = 0
    disclosures: list[Disclosure] = field(default_factory=list)
    possible: dict[tuple[Rule, tuple[str, ...]], frozenset[str]] = field(default_factory=dict, repr=False)
    undecided: int = 0
    seconds: float = 0.0
    disclosed: int = 0
    records_at_risk: int | None = None
    #: The release removed records by suppression: an original record whose values no table
    #: publishes is one of them (nothing is published about it), not a disclosure.
    removed: bool = False

    def disclose(self, d: Disclosure, records: int | None = None) -> None:
        """Count a disclosed target (held by ``records`` records of the original, when known)
        and list it while fewer than :data:`MAX_LISTED` are listed."""
        self.disclosed += 1
        if records is not None:
            self.records_at_risk = (self.records_at_risk or 0) + int(records)
        if len(self.disclosures) < MAX_LISTED:
            self.disclosures.append(d)

    @property
    def ok(self) -> bool:
        return not self.disclosed and not self.disclosures

    @property
    def listing_cut(self) -> bool:
        return self.disclosed > len(self.disclosures)

    def summary(self) -> str:
        """``12,034 targets, 43 disclosed (holding 57 records)``, with a cut listing said."""
        out = f"{self.targets:,} targets, {self.disclosed:,} disclosed"
        if self.records_at_risk is not None:
            out += f" (holding {self.records_at_risk:,} record(s))"
        if self.listing_cut:
            out += f"; first {len(self.disclosures):,} of {self.disclosed:,} listed"
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "ok": self.ok,
            "targets": self.targets,
            "target": TARGET,
            "targets_disclosed": self.disclosed,
            "records_at_risk": self.records_at_risk,
            "disclosed": [d.to_json() for d in self.disclosures],
            "listed": len(self.disclosures),
            "undecided_solves": self.undecided,
            "seconds": round(self.seconds, 4),
        }


def _components(tables: Sequence[CountRows]) -> list[list[int]]:
    parent = list(range(len(tables)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in itertools.combinations(range(len(tables)), 2):
        if set(tables[i].columns) & set(tables[j].columns):
            parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(tables)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _rule_components(pub: PublishedRelease) -> Iterator[tuple[list[CountRows], set[str], list[Rule]]]:
    """Each connected component of tables holding some rule's sensitive attribute, with
    its columns and those rules."""
    for comp in _components(pub.tables):
        tables = [pub.tables[i] for i in comp]
        cols: set[str] = set().union(*(t.columns for t in tables))
        rules = [r for r in pub.rules if r.rhs in cols]
        if rules:
            yield tables, cols, rules


def _targets(
    rule: Rule,
    comp_cols: set[str],
    original: Sequence[dict[str, str]] | None,
    candidates: Iterable[tuple[str, ...]],
    wildcard: frozenset[str] = frozenset(),
) -> tuple[list[str], list[tuple[str, ...]]]:
    """The LHS attributes inside the component and the target combinations to examine:
    those of the original's records when it is given, else every candidate combination;
    with locally suppressed columns (``wildcard``), also every published combination with
    an empty value there (a record published so is folded into its targets: :func:`_fold`)."""
    q_in = [a for a in rule.lhs if a in comp_cols]
    if original is not None:
        held = {tuple(r[a] for a in q_in) for r in original}
        wild = [i for i, a in enumerate(q_in) if a in wildcard]
        if wild:
            held |= {c for c in candidates if any(c[i] == "" for i in wild)}
        return q_in, sorted(held)
    return q_in, sorted(set(candidates))


def _fold(
    q_in: list[str], wildcard: frozenset[str], possible: dict[tuple[str, ...], frozenset[str]]
) -> dict[tuple[str, ...], frozenset[str]]:
    """A record whose key value was suppressed is published with an empty value that matches
    any value: a target's possible values are its own and those of every published
    combination with empty values where it has its own (the adversary cannot tell which of
    those rows is the target's; each was attacked as a literal combination, so the union is
    sound)."""
    wild = [i for i, a in enumerate(q_in) if a in wildcard]
    patterns = [p for p in possible if any(p[i] == "" for i in wild)]
    if not patterns:
        return possible
    out = {}
    for q, vals in possible.items():
        extra = [
            possible[p]
            for p in patterns
            if p != q and all(x == y or (i in wild and x == "") for i, (x, y) in enumerate(zip(p, q, strict=True)))
        ]
        out[q] = vals.union(*extra)
    return out


def _widen(
    pub: PublishedRelease, rule: Rule, q_in: list[str], possible: dict[tuple[str, ...], frozenset[str]]
) -> dict[tuple[str, ...], frozenset[str]]:
    """A target whose known QI values match a row of a suppressed group may be one of
    those records, whose sensitive values are withheld: every value stays possible."""
    out = dict(possible)
    for qi, rows, doms in pub.suppressed.values():
        if rule.rhs not in doms:
            continue
        for key in out:
            known = dict(zip(q_in, key, strict=True))
            if any(all(known.get(c, v) == v for c, v in zip(qi, r, strict=True)) for r in rows):
                out[key] = out[key] | doms[rule.rhs]
    return out


def _report(
    result: AttackResult,
    rule: Rule,
    q_in: list[str],
    original: Sequence[dict[str, str]] | None,
    possible: dict[tuple[str, ...], frozenset[str]],
    pub: PublishedRelease | None = None,
) -> None:
    """Expand component-level results to full LHS targets and record disclosures."""
    if pub is not None and pub.suppressed:
        possible = _widen(pub, rule, q_in, possible)
    if pub is not None and pub.wildcard:
        possible = _fold(q_in, pub.wildcard, possible)
    held: dict[tuple[str, ...], int] = {}
    for r in original or ():
        key = tuple(r[a] for a in rule.lhs)
        held[key] = held.get(key, 0) + 1
    if original is None:
        items = [(_expand(q_in, rule.lhs, k), v) for k, v in possible.items()]
    else:
        idx = [rule.lhs.index(a) for a in q_in]
        items = [(q, possible[tuple(q[i] for i in idx)]) for q in sorted(held)]
        result.records_at_risk = result.records_at_risk or 0
    for q, vals in items:
        if not vals and pub is not None and pub.removed:
            continue  # a removed record's values: in no table, nothing published about it
        if not vals and original is None:
            continue  # a combination of values seen apart that no possible world holds: no one to disclose
        result.targets += 1
        result.possible[(rule, q)] = vals
        if len(vals) < result.guarantee.min_possible_values():
            result.disclose(Disclosure(rule, q, tuple(sorted(vals))), held.get(q) if original is not None else None)


def _expand(q_in: list[str], lhs: tuple[str, ...], key: tuple[str, ...]) -> tuple[str, ...]:
    m = dict(zip(q_in, key, strict=True))
    return tuple(m.get(a, "*") for a in lhs)


# -- the exact attack ---------------------------------------------------------------------
def _joint(tables: Sequence[CountRows], limit: int) -> tuple[list[str], list[tuple[str, ...]], list[list[int]]]:
    """Rows consistent across ``tables`` (a natural join of their distinct rows): the columns,
    the joint rows, and for every joint row its row index in each table."""
    order = [0]
    rest = list(range(1, len(tables)))
    while rest:  # join the table sharing most columns with what is joined so far next
        have = set().union(*(tables[i].columns for i in order))
        nxt = max(rest, key=lambda i: len(have & set(tables[i].columns)))
        order.append(nxt)
        rest.remove(nxt)
    cols = list(tables[order[0]].columns)
    joint = [(row, [k]) for k, row in enumerate(tables[order[0]].rows)]
    for ti in order[1:]:
        t = tables[ti]
        shared = [c for c in t.columns if c in cols]
        new = [c for c in t.columns if c not in cols]
        pos_j = [cols.index(c) for c in shared]
        pos_t = [t.columns.index(c) for c in shared]
        pos_new = [t.columns.index(c) for c in new]
        index: dict[tuple[str, ...], list[int]] = {}
        for k, row in enumerate(t.rows):
            index.setdefault(tuple(row[p] for p in pos_t), []).append(k)
        out = []
        for row, ks in joint:
            for k in index.get(tuple(row[p] for p in pos_j), []):
                out.append((row + tuple(t.rows[k][p] for p in pos_new), [*ks, k]))
                if len(out) > limit:
                    raise ReleaseError(
                        f"The exact attack would consider more than {limit} joint rows; use the scalable attack."
                    )
        joint, cols = out, cols + new
    inv = {ti: i for i, ti in enumerate(order)}
    return cols, [r for r, _ in joint], [[ks[inv[ti]] for ti in range(len(tables))] for _, ks in joint]


def _every_join_row_possible(tables: Sequence[CountRows]) -> bool:
    """Two tables whose counts agree on every value of their shared columns (an Anatomy
    QIT and ST: the group sizes): every row of their join holds a record in some possible
    world (within one shared value the records of the two tables can be paired in any
    way, so any pair of rows with positive counts can be made to meet).  Then no solver
    is needed: the possible values are exactly those of the join."""
    if len(tables) != 2:
        return False
    a, b = tables
    shared = [c for c in a.columns if c in b.columns]
    if not shared:
        return False
    totals: list[dict[tuple[str, ...], int]] = []
    for t in (a, b):
        pos = [t.columns.index(c) for c in shared]
        tot: dict[tuple[str, ...], int] = {}
        for row, c in zip(t.rows, t.counts, strict=True):
            key = tuple(row[p] for p in pos)
            tot[key] = tot.get(key, 0) + int(c)
        totals.append(tot)
    return totals[0] == totals[1]


def _pair_values(tables: Sequence[CountRows], rule: Rule, q_in: list[str]) -> dict[tuple[str, ...], set[str]]:
    """For two tables: per combination of ``q_in`` values in their join, the values of
    ``rule.rhs`` beside it, computed per value of the shared columns from each side's
    distinct projections (never the whole join)."""
    x, y = tables
    shared = [c for c in x.columns if c in y.columns]
    sides = []
    for t, own in ((x, [a for a in q_in if a in x.columns]), (y, [a for a in q_in if a not in x.columns])):
        kpos = [t.columns.index(c) for c in shared]
        qpos = [t.columns.index(a) for a in own]
        spos = t.columns.index(rule.rhs) if rule.rhs in t.columns else None
        per_key: dict[tuple[str, ...], set[tuple[tuple[str, ...], str | None]]] = {}
        for r in t.rows:
            per_key.setdefault(tuple(r[p] for p in kpos), set()).add(
                (tuple(r[p] for p in qpos), r[spos] if spos is not None else None)
            )
        sides.append((own, per_key))
    (own_x, px), (own_y, py) = sides
    order = [(own_x + own_y).index(a) for a in q_in]
    out: dict[tuple[str, ...], set[str]] = {}
    for key, left in px.items():
        for qx, sx in left:
            for qy, sy in py.get(key, ()):
                q = qx + qy
                val = sx if sx is not None else sy
                if val is not None:
                    out.setdefault(tuple(q[i] for i in order), set()).add(val)
    return out


def exact_attack(
    pub: PublishedRelease, guarantee: Thresholds, original: Sequence[dict[str, str]] | None = None
) -> AttackResult:
    """The possible-worlds adversary (see the module docstring), decided with CP-SAT."""
    t0 = time.perf_counter()
    if pub.n > EXACT_MAX_RECORDS:
        raise ReleaseError(
            f"The exact attack handles releases of at most {EXACT_MAX_RECORDS} records; this one has "
            f"{pub.n}. Use the scalable attack (versapub check --attack scalable)."
        )
    result = AttackResult("exact", guarantee)
    for tables, cols, rules in _rule_components(pub):
        names, joint, rows_of = _joint(tables, EXACT_MAX_JOINT_ROWS)
        from ortools.sat.python import cp_model  # loaded only when a solver runs

        model = cp_model.CpModel()
        nvar = [model.new_int_var(0, pub.n, f"n{j}") for j in range(len(joint))]
        for ti, t in enumerate(tables):
            members: dict[int, list[int]] = {}
            for j, ks in enumerate(rows_of):
                members.setdefault(ks[ti], []).append(j)
            for k, c in enumerate(t.counts):
                model.add(sum(nvar[j] for j in members.get(k, [])) == c)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = EXACT_SECONDS_PER_SOLVE
        solver.parameters.num_workers = 1
        for rule in rules:
            q_in, targets = _targets(
                rule,
                cols,
                original,
                {tuple(r[names.index(a)] for a in rule.lhs if a in cols) for r in joint},
                pub.wildcard,
            )
            qpos = [names.index(a) for a in q_in]
            spos = names.index(rule.rhs)
            possible: dict[tuple[str, ...], set[str]] = {q: set() for q in targets}
            by_pair: dict[tuple[tuple[str, ...], str], list[int]] = {}
            for j, r in enumerate(joint):
                by_pair.setdefault((tuple(r[p] for p in qpos), r[spos]), []).append(j)
            if _every_join_row_possible(tables):  # exact without search
                seen = _pair_values(tables, rule, q_in)
                possible = {q: set(seen.get(q, ())) for q in targets}
                targets = []
            for q in targets:
                for s in sorted({s for (qq, s) in by_pair if qq == q}):
                    if s in possible[q]:
                        continue
                    if time.perf_counter() - t0 > EXACT_BUDGET_S:  # out of time: undecided, assume possible
                        result.undecided += 1
                        possible[q].add(s)
                        continue
                    lit = model.new_bool_var("probe")
                    model.add(sum(nvar[j] for j in by_pair[(q, s)]) >= 1).only_enforce_if(lit)
                    model.clear_assumptions()
                    model.add_assumptions([lit])
                    status = solver.solve(model)
                    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                        # this world shows every (q', s') it contains to be possible
                        for (qq, ss), js in by_pair.items():
                            if qq in possible and any(solver.value(nvar[j]) > 0 for j in js):
                                possible[qq].add(ss)
                        possible[q].add(s)
                    elif status == cp_model.UNKNOWN:  # undecided: assume possible (sound)
                        result.undecided += 1
                        possible[q].add(s)
                    model.add(lit == 0)  # retire the probe
            model.clear_assumptions()
            _report(result, rule, q_in, original, {q: frozenset(v) for q, v in possible.items()}, pub)
    result.seconds = time.perf_counter() - t0
    return result


# -- the scalable attack ------------------------------------------------------------------
def _propagate(tables: Sequence[CountRows], domains: dict[str, set[str]]) -> dict[str, set[str]]:
    """Arc consistency: keep only values that occur in some row consistent with the others."""
    changed = True
    while changed:
        changed = False
        for t in tables:
            alive = [r for r in t.rows if all(v in domains[c] for c, v in zip(t.columns, r, strict=True))]
            for i, c in enumerate(t.columns):
                seen = {r[i] for r in alive}
                if seen != domains[c]:
                    domains[c] = domains[c] & seen
                    changed = True
    return domains


def _group_counting(tables: Sequence[CountRows], domains: dict[str, set[str]], pinned_elsewhere: dict) -> None:
    """Counting inside groups (see :func:`scalable_attack`)."""
    for t in tables:
        if len(t.columns) != 2 or not t.columns[0].startswith("⟨group of "):
            continue
        g_col, s_col = t.columns
        for (g, s), used in pinned_elsewhere.get(t.source, {}).items():
            if g in domains[g_col] and len(domains[g_col]) == 1:
                count = next(c for r, c in zip(t.rows, t.counts, strict=True) if r == (g, s))
                if used >= count and s in domains[s_col]:
                    domains[s_col] = domains[s_col] - {s}


def scalable_attack(
    pub: PublishedRelease, guarantee: Thresholds, original: Sequence[dict[str, str]] | None = None
) -> AttackResult:
    """Propagation of candidate sets to a fixpoint, then counting inside Anatomy groups.

    Counting: in a group of an Anatomy table, a sensitive value held by ``c`` records of the
    group is unavailable to the target if ``c`` *other* records of the group (QIT rows
    other than the target's own, each pinned by propagation to that single group and that
    single value) must hold it.  Sound: it removes a value only when every possible world
    gives all its copies to other records.
    """
    t0 = time.perf_counter()
    result = AttackResult("scalable", guarantee)
    all_values: dict[str, set[str]] = {}
    for t in pub.tables:
        for i, c in enumerate(t.columns):
            all_values.setdefault(c, set()).update(r[i] for r in t.rows)
    for tables, cols, rules in _rule_components(pub):
        if _every_join_row_possible(tables):
            for rule in rules:  # exact without search (see _every_join_row_possible)
                q_in, targets = _targets(rule, cols, original, _candidate_targets(rule, tables), pub.wildcard)
                seen = _pair_values(tables, rule, q_in)
                _report(result, rule, q_in, original, {q: frozenset(seen.get(q, ())) for q in targets}, pub)
            continue
        pinned = _pinned_slots(tables, all_values)
        for rule in rules:
            q_in, targets = _targets(rule, cols, original, _candidate_targets(rule, tables), pub.wildcard)
            possible = {}
            for q in targets:
                domains = {c: set(all_values[c]) for c in cols}
                for a, v in zip(q_in, q, strict=True):
                    domains[a] = domains[a] & {v}
                _propagate(tables, domains)
                _group_counting(tables, domains, _others(pinned, tables, q_in, q))
                _propagate(tables, domains)
                possible[q] = frozenset(domains[rule.rhs])
            _report(result, rule, q_in, original, possible, pub)
    result.seconds = time.perf_counter() - t0
    return result


def _candidate_targets(rule: Rule, tables: Sequence[CountRows]) -> set[tuple[str, ...]]:
    """Without the original: the LHS combinations seen in rows of one table (or, when the
    LHS spans tables, the combinations of values each seen somewhere)."""
    cols = set().union(*(t.columns for t in tables))
    q_in = [a for a in rule.lhs if a in cols]
    for t in tables:
        if set(q_in) <= set(t.columns):
            return {tuple(r[t.columns.index(a)] for a in q_in) for r in t.rows}
    values = [sorted({r[t.columns.index(a)] for t in tables if a in t.columns for r in t.rows}) for a in q_in]
    return set(itertools.product(*values))


def _pinned_slots(tables: Sequence[CountRows], all_values: dict[str, set[str]]) -> dict[str, list]:
    """For every QIT row of every Anatomy table: its group, its count, and the single
    sensitive value propagation pins it to (or None)."""
    out: dict[str, list] = {}
    for t in tables:
        g_col = next((c for c in t.columns if c.startswith("⟨group of ")), None)
        if g_col is None or t.columns[-1] != g_col:
            continue  # not a QIT (an ST starts with the group column)
        st = next(u for u in tables if u.columns[0] == g_col and len(u.columns) >= 2)
        if len(st.columns) != 2:
            continue  # several sensitive attributes: no counting (propagation alone is sound)
        s_col = st.columns[1]
        cols = set().union(*(u.columns for u in tables))
        slots = []
        for r, c in zip(t.rows, t.counts, strict=True):
            domains = {x: set(all_values[x]) for x in cols}
            for i, x in enumerate(t.columns):
                domains[x] = {r[i]}
            _propagate(tables, domains)
            pin = next(iter(domains[s_col])) if len(domains[s_col]) == 1 else None
            slots.append((r, c, r[t.columns.index(g_col)], pin))
        out[st.source] = [t.columns, slots]
    return out


def _others(pinned: dict[str, list], tables: Sequence[CountRows], q_in: list[str], q: tuple[str, ...]) -> dict:
    """Per ST: (group, value) -> number of records other than the target pinned to it."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    known = dict(zip(q_in, q, strict=True))
    for st_source, (qcols, slots) in pinned.items():
        counts: dict[tuple[str, str], int] = {}
        for r, c, g, pin in slots:
            if pin is None:
                continue
            is_target_row = all(known.get(x, v) == v for x, v in zip(qcols, r, strict=True))
            mine = 1 if is_target_row else 0  # the target may be one of this row's records
            if c - mine > 0:
                counts[(g, pin)] = counts.get((g, pin), 0) + c - mine
        out[st_source] = counts
    return out
