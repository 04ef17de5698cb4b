"""Group-by against a Counter oracle; Anatomy's guarantee and record preservation."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from versapub.anonymizers import Anatomy
from versapub.anonymizers.base import PublishRequest
from versapub.anonymizers.bucketizing.anatomy import GROUPINGS, greedy_schedule
from versapub.data.groupby import group_rows
from versapub.errors import InfeasibleError
from versapub.privacy import LDiversity, parse_rule

from .conftest import random_table


@settings(max_examples=100)
@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=4),
    st.integers(1, 300),
    st.integers(0, 2**31),
    st.booleans(),
)
def test_group_rows_matches_counter(cards: list[int], n: int, seed: int, huge: bool) -> None:
    rng = np.random.default_rng(seed)
    if huge:  # force the overflow/compression path
        cards = [2**40 + c for c in cards]
    cols = [rng.integers(0, min(c, 50), size=n).astype(np.int32) for c in cards]
    g = group_rows(cols, cards, with_inverse=True)
    expected = Counter(zip(*(c.tolist() for c in cols), strict=True))
    got = {tuple(int(k[i]) for k in g.keys): int(c) for i, c in enumerate(g.counts)}
    assert got == dict(expected)
    keys = list(zip(*(k.tolist() for k in g.keys), strict=True))
    assert keys == sorted(keys)  # lexicographic (= value) order
    assert g.inverse is not None
    for row in range(n):
        assert keys[g.inverse[row]] == tuple(int(c[row]) for c in cols)


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 6), st.lists(st.integers(0, 30), min_size=2, max_size=25))
def test_greedy_schedule_takes_the_l_largest_buckets_at_every_step(ell: int, counts: list[int]) -> None:
    """Oracle: replay the schedule on the counts; every group must consist of l distinct
    buckets none smaller than any bucket left out, and the greedy stops only when fewer
    than l non-empty buckets remain, each with a single record (Xiao & Tao)."""
    c = np.array(counts, dtype=np.int64)
    n = int(c.sum())
    if n < ell or ell * int(c.max()) > n:
        return  # not eligible; the anonymizer refuses it (tested below)
    table, leftover = greedy_schedule(c, ell)
    remaining = c.copy()
    for group in table.tolist():
        assert len(set(group)) == ell
        chosen_min = min(remaining[b] for b in group)
        others = [remaining[b] for b in range(len(c)) if b not in group]
        assert all(chosen_min >= o for o in others)
        for b in group:
            remaining[b] -= 1
    assert (remaining >= 0).all()
    assert sorted(leftover) == sorted(b for b in range(len(c)) for _ in range(remaining[b]))
    assert int((remaining > 0).sum()) < ell and int(remaining.max()) <= 1
    assert len(table) == n // ell


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 6), st.integers(2, 400), st.floats(0, 2.5), st.integers(0, 2**31), st.sampled_from(sorted(GROUPINGS))
)
def test_anatomy_groups_are_l_diverse_and_lose_no_record(
    ell: int, n: int, skew: float, seed: int, grouping: str
) -> None:
    rng = np.random.default_rng(seed)
    table = random_table(rng, n, {"q1": 5, "q2": 3, "s": 12}, skew=skew)
    s_counts = table.column("s").counts()
    rule = parse_rule("q1, q2 -> s")
    if ell * int(s_counts.max()) > n:
        with pytest.raises(InfeasibleError):
            Anatomy(grouping).publish(PublishRequest.of(table, rule, LDiversity(ell), rng))
        return
    out = Anatomy(grouping).publish(PublishRequest.of(table, rule, LDiversity(ell), rng))
    qit, st_ = out.parts["qit"], out.parts["st"]
    # every group: l * max_count <= |group|, sizes l or l+1, floor(n/l) groups
    sizes = Counter()
    mx = Counter()
    for gid, c in zip(st_.column("group_id").tolist(), st_.counts.tolist(), strict=True):
        sizes[gid] += c
        mx[gid] = max(mx[gid], c)
    assert len(sizes) == n // ell
    assert all(ell * mx[g] <= sizes[g] for g in sizes)
    assert all(mx[g] == 1 for g in sizes)  # pairwise distinct sensitive values in every group
    assert min(sizes.values()) >= ell
    if grouping == "wrap-around":  # groups as even as possible: floor(n/G) or ceil(n/G) records
        g = n // ell
        assert set(sizes.values()) <= {n // g, -(-n // g)}
    # QIT agrees on group sizes
    qsizes = Counter()
    for gid, c in zip(qit.column("group_id").tolist(), qit.counts.tolist(), strict=True):
        qsizes[gid] += c
    assert qsizes == sizes
    # no record lost: marginals equal the input's projections
    orig_q = Counter(zip(table.codes("q1").tolist(), table.codes("q2").tolist(), strict=True))
    pub_q = Counter()
    for a, b, c in zip(qit.column("q1").tolist(), qit.column("q2").tolist(), qit.counts.tolist(), strict=True):
        pub_q[(a, b)] += c
    assert pub_q == orig_q
    pub_s = Counter()
    for s, c in zip(st_.column("s").tolist(), st_.counts.tolist(), strict=True):
        pub_s[s] += c
    assert pub_s == Counter(table.codes("s").tolist())
    assert out.stats["achieved"] >= ell


def test_anatomy_group_ids_are_a_permutation_not_creation_order() -> None:
    from versapub.data.table import EncodedTable

    t = EncodedTable.from_columns({"q": [str(i) for i in range(200)], "s": [str(i % 50) for i in range(200)]})
    out = Anatomy().publish(PublishRequest.of(t, parse_rule("q -> s"), LDiversity(4), np.random.default_rng(3)))
    qit = out.parts["qit"]
    assert sorted(set(qit.column("group_id").tolist())) == list(range(50))
    # in input (= q) order, the group ids are not simply 0, 0, 0, 0, 1, ... (creation order)
    by_q = qit.column("group_id")[np.argsort(qit.column("q"))]
    assert list(dict.fromkeys(by_q.tolist())) != list(range(50))


def test_unknown_grouping_is_refused() -> None:
    from versapub.errors import ConfigError

    with pytest.raises(ConfigError, match="grouping of anatomy must be one of greedy, wrap-around, got"):
        Anatomy("random")


def test_anatomy_is_reproducible_with_a_seed() -> None:
    rng_table = np.random.default_rng(0)
    t = random_table(rng_table, 200, {"q": 4, "s": 9})
    r = parse_rule("q -> s")
    a = Anatomy().publish(PublishRequest.of(t, r, LDiversity(3), np.random.default_rng(7)))
    b = Anatomy().publish(PublishRequest.of(t, r, LDiversity(3), np.random.default_rng(7)))
    assert np.array_equal(a.parts["st"].codes[0], b.parts["st"].codes[0])
    assert np.array_equal(a.parts["qit"].counts, b.parts["qit"].counts)
