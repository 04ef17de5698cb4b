"""Anatomy (Xiao & Tao, VLDB 2006): bucketization into l-diverse groups.

The sub-table is split into a quasi-identifier table (QIT: the non-sensitive
attributes and a group id) and a sensitive table (ST: group id and the sensitive
value); within a group the link between a QIT row and an ST value is hidden.

Group creation (Xiao & Tao's algorithm): hash records into buckets by sensitive value;
while at least l buckets are non-empty, form a group from one (random) record of each
of the l largest buckets; give each residual record to a group that does not yet hold
its value.  For an eligible table (every value count ``<= n/l``) this yields
``floor(n/l)`` groups of at least ``l`` records with pairwise distinct sensitive values
(fewer than ``l`` residual records are spread over the groups), so every group satisfies
``l * max_count <= |group|``.  No record is
ever dropped; group ids are a seeded random permutation, not creation order.

Two implementations (``Anatomy(grouping=...)``; see ``docs/choices.md``), both a
:class:`~versapub.data.grouping.Grouping` — a group per bucket and rank — that the table's
backend applies (in memory, or on a Dask cluster without a global sort):

* ``"greedy"`` (default) runs the procedure above on bucket *counts* (ties: the bucket
  chosen least recently), taking all groups of a run of equally large buckets in one
  slice; records are then dealt to the groups by their rank in their bucket.
* ``"wrap-around"`` produces groups of the same kind in closed form: records are
  laid out bucket after bucket and the record at position ``p`` joins group
  ``p mod G``, ``G = floor(n/l)`` (a bucket of ``c <= G`` records lands in ``c`` distinct
  groups; groups hold ``floor(n/G)`` or ``ceil(n/G)`` records).  About twice as fast;
  which values share a group differs from the greedy's.
"""

from __future__ import annotations

import bisect
import functools
from typing import Any, ClassVar, cast

import numpy as np

from versapub.anonymizers.base import AnonymizedTable, PublishRequest, as_rules
from versapub.data.counts import CountTable
from versapub.data.grouping import GROUP_ID, Grouping
from versapub.errors import ConfigError, InfeasibleError
from versapub.plugins import Param, validated


def _check_eligible(counts: np.ndarray, width: int) -> int:
    """The number of groups, ``floor(n/l)``; refuses a table that cannot be l-diverse."""
    n = int(counts.sum())
    g = n // width
    if g == 0:
        raise InfeasibleError(f"Anatomy needs at least l = {width} records; the table has {n}.")
    if int(counts.max()) > g:
        raise InfeasibleError(
            f"Anatomy cannot form l-diverse groups: a sensitive value occurs {int(counts.max())} "
            f"times but only floor(n/l) = {g} groups exist (n = {n}, l = {width})."
        )
    return g


def wraparound_grouping(sensitive: str, counts: np.ndarray, width: int, rng: np.random.Generator) -> Grouping:
    """The wrap-around assignment: the record at position ``p`` (buckets laid out one after
    another, random inside each) joins group ``p mod G``, ``G = floor(n/l)``."""
    del rng  # the ranks are the only randomness
    return Grouping(sensitive, _check_eligible(counts, width), counts.astype(np.int64))


def greedy_grouping(sensitive: str, counts: np.ndarray, width: int, rng: np.random.Generator) -> Grouping:
    """Xiao & Tao's group creation on the bucket counts: each group takes one record from
    each of the ``width`` buckets with the most remaining records; each residual record
    joins a random group that lacks its value (preferring groups no other residual
    joined).  The k-th record of bucket ``b`` (in a random order) fills the k-th slot the
    schedule gave ``b``.

    Ties between equally large buckets go to the bucket chosen least recently (never-chosen
    buckets first, by code).  Buckets are kept in FIFO lists per remaining count; when the
    largest count is shared by at least ``width`` buckets, all the groups those buckets
    form before any of them must wait are taken in one slice, so the loop runs once per
    such batch or per group whose buckets span several counts, never once per record.
    """
    _check_eligible(counts, width)
    table, leftover = _schedule(counts.astype(np.int64).tobytes(), width)
    g = len(table)
    slot_bucket = table.ravel()
    slot_group = np.repeat(np.arange(g, dtype=np.int64), width)
    residual_b: list[int] = []
    residual_g: list[int] = []
    used = np.zeros(g, dtype=bool)
    for b in leftover:  # fewer than l buckets remain, each with one record (Xiao & Tao)
        lacking = ~(table == b).any(axis=1)
        fresh = np.flatnonzero(lacking & ~used)  # spread residuals over distinct groups where possible
        pick = int(rng.choice(fresh if len(fresh) else np.flatnonzero(lacking)))
        used[pick] = True
        residual_b.append(b)
        residual_g.append(pick)
    slot_bucket = np.concatenate([slot_bucket, np.asarray(residual_b, dtype=np.int64)])
    slot_group = np.concatenate([slot_group, np.asarray(residual_g, dtype=np.int64)])
    slots = slot_group[np.argsort(slot_bucket, kind="stable")]  # bucket after bucket, in creation order
    return Grouping(sensitive, g, counts.astype(np.int64), slots)


def wraparound_groups(s_codes: np.ndarray, width: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Group index of every record by the wrap-around assignment, and the number of groups
    (in memory; the records in a random order inside their bucket)."""
    return _record_groups(wraparound_grouping("s", np.bincount(s_codes), width, rng), s_codes, rng)


def greedy_groups(s_codes: np.ndarray, width: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Group index of every record by Xiao & Tao's procedure (:func:`greedy_grouping`)."""
    return _record_groups(greedy_grouping("s", np.bincount(s_codes), width, rng), s_codes, rng)


def _record_groups(grouping: Grouping, s_codes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    shuffled = rng.permutation(len(s_codes))
    order = shuffled[np.argsort(s_codes[shuffled], kind="stable")]
    bucket = s_codes[order].astype(np.int64)
    group = np.empty(len(s_codes), dtype=np.int64)
    group[order] = grouping.of(bucket, np.arange(len(s_codes), dtype=np.int64) - grouping.start[bucket])
    return group, grouping.n_groups


@functools.lru_cache(maxsize=32)
def _schedule(counts: bytes, width: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """:func:`greedy_schedule` of the bucket counts, computed once per distinct counts and
    width (it depends on nothing else: GD anonymizes many tables with the same sensitive
    attribute, whose schedules are all the same)."""
    table, leftover = greedy_schedule(np.frombuffer(counts, dtype=np.int64), width)
    table.setflags(write=False)
    return table, tuple(leftover)


def greedy_schedule(counts: np.ndarray, width: int) -> tuple[np.ndarray, list[int]]:
    """The bucket of every slot of every group, in creation order (``G x width``), and
    the buckets left over (one entry per residual record)."""
    levels: dict[int, list[int]] = {}
    for b in np.argsort(counts, kind="stable").tolist():  # within a count: code order
        if counts[b] > 0:
            levels.setdefault(int(counts[b]), []).append(b)
    nonzero = int((counts > 0).sum())
    keys = sorted(levels)  # counts that have a non-empty list, ascending
    members: list[int] = []

    def append(lvl: int, buckets: list[int]) -> None:
        if lvl not in levels or not levels[lvl]:
            levels[lvl] = []
            bisect.insort(keys, lvl)
        levels[lvl].extend(buckets)

    def shrink(lvl: int, rest: list[int]) -> None:
        if rest:
            levels[lvl] = rest
        else:
            del levels[lvl]
            keys.pop(bisect.bisect_left(keys, lvl))

    while nonzero >= width:
        top = keys[-1]
        level = levels[top]
        if len(level) >= width:
            q = len(level) // width
            chunk = level[: q * width]
            shrink(top, level[q * width :])
            members.extend(chunk)
            if top > 1:
                append(top - 1, chunk)
            else:
                nonzero -= len(chunk)
            continue
        taken = [(top, level)]
        need = width - len(level)
        shrink(top, [])
        i = len(keys) - 1
        while need:
            v = keys[i]
            lower = levels[v]
            taken.append((v, lower[:need]))
            need -= len(taken[-1][1])
            i -= 1
        for v, buckets in taken[1:]:
            shrink(v, levels[v][len(buckets) :])
        for _, buckets in taken:
            members.extend(buckets)
        for v, buckets in taken:  # chosen just now: to the end of the next count's list
            if v > 1:
                append(v - 1, buckets)
            else:
                nonzero -= len(buckets)
    leftover = [b for lvl, bs in levels.items() for b in bs for _ in range(lvl)]
    return np.asarray(members, dtype=np.int64).reshape(-1, width), leftover


GROUPINGS = {"greedy": greedy_grouping, "wrap-around": wraparound_grouping}


class Anatomy:
    """Anatomy bucketization (see the module docstring).

    ``grouping`` is ``"greedy"`` (Xiao & Tao's procedure step by step, the default) or
    ``"wrap-around"`` (the same group structure in closed form, faster on large tables).
    The group width comes from the guarantee (``l`` for l-diversity).
    """

    #: Every attribute but the sensitive ones published exactly (PublishesExactly).
    exact_quasi_identifiers = True
    name = "anatomy"
    max_rules = 1
    parameter_constraints: ClassVar[dict[str, Param]] = {"grouping": Param("choice", choices=tuple(sorted(GROUPINGS)))}
    glossary: ClassVar[str] = (
        "Anatomy (Xiao & Tao, VLDB 2006): records are put into groups whose sensitive values are all distinct and "
        "numerous enough; the quasi-identifiers are published exactly with the group number (QIT), each group's "
        "sensitive values separately (ST). Nobody can tell which value of its group belongs to which record."
    )

    def __init__(self, grouping: str = "greedy") -> None:
        self.grouping = validated(self.name, self.parameter_constraints, {"grouping": grouping})["grouping"]

    def params(self) -> dict[str, Any]:
        return {"grouping": self.grouping}

    #: Runs on any backend (its groups come from counts and ranks: ``versapub.data.source``).
    out_of_core = True

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        table, guarantee, rng = request.table, request.guarantee, request.rng
        (rule,) = as_rules(request.rules, self.name, self.max_rules)
        s_col = table.column(rule.rhs)
        qi = [a for a in table.names if a != rule.rhs]
        width = guarantee.group_width()
        if width is None:
            raise ConfigError(
                f"The anatomy anonymizer cannot provide {guarantee.name} for rule '{rule}': it publishes the other "
                "attributes exactly and only hides which sensitive value goes with which record inside a group. "
                "Use a generalizing anonymizer (mondrian or incognito)."
            )
        try:
            grouping = GROUPINGS[self.grouping](rule.rhs, s_col.counts(), width, rng)
        except InfeasibleError as exc:
            if guarantee.name == "l-diversity":
                raise
            raise InfeasibleError(  # the user gave the guarantee, not the group width it implies
                f"Under {guarantee.describe()}, Anatomy groups every {width} records with distinct sensitive values "
                f"(the guarantee's group width, as l = {width}) for rule '{rule}': {exc} Relax the guarantee's "
                f"parameters {', '.join(f'{k} = {v}' for k, v in guarantee.params().items())}, generalize "
                f"{rule.rhs!r}, or drop the rule."
            ) from None
        qit, st = (
            cast(CountTable, t)  # a backend's count tables (in memory: CountTable)
            for t in table.grouped_count_tables(grouping, [(*qi, GROUP_ID), (GROUP_ID, rule.rhs)], rng)
        )
        summary = st.group_summary(guarantee, rule.rhs)
        if summary.failing:  # cannot happen for an eligible table; never publish if it does
            raise InfeasibleError(
                f"Anatomy produced {summary.failing} group(s) violating {guarantee.describe()} for rule '{rule}'."
            )
        stats = {
            "rows_qit": qit.n_rows,
            "rows_st": st.n_rows,
            "groups": grouping.n_groups,
            "group_sizes": summary.sizes,
            "achieved": summary.achieved,
        }
        return AnonymizedTable(table.names, "anatomy", rule, {"qit": qit, "st": st}, stats)
