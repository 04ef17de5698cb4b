"""Group-by against a Counter oracle; Anatomy's guarantee and record preservation."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from versapub.anonymizers import Anatomy
from versapub.anonymizers.anatomy import anatomy_groups
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


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 6), st.integers(2, 400), st.floats(0, 2.5), st.integers(0, 2**31))
def test_anatomy_groups_are_l_diverse_and_lose_no_record(ell: int, n: int, skew: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = random_table(rng, n, {"q1": 5, "q2": 3, "s": 12}, skew=skew)
    s_counts = table.column("s").counts()
    rule = parse_rule("q1, q2 -> s")
    if ell * int(s_counts.max()) > n:
        with pytest.raises(InfeasibleError):
            Anatomy().publish(table, rule, LDiversity(ell), rng)
        return
    out = Anatomy().publish(table, rule, LDiversity(ell), rng)
    qit, st_ = out.parts["qit"], out.parts["st"]
    # every group: l * max_count <= |group|, sizes l or l+1, floor(n/l) groups
    sizes = Counter()
    mx = Counter()
    for gid, c in zip(st_.column("group_id").tolist(), st_.counts.tolist(), strict=True):
        sizes[gid] += c
        mx[gid] = max(mx[gid], c)
    assert len(sizes) == n // ell
    assert all(ell * mx[g] <= sizes[g] for g in sizes)
    assert set(sizes.values()) <= {ell, ell + 1}
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
    s = np.repeat(np.arange(50), 4).astype(np.int32)
    rng = np.random.default_rng(3)
    group, g = anatomy_groups(s, 4, rng)
    assert g == 50
    assert sorted(set(group.tolist())) == list(range(50))
    # the group of the first records is not simply 0, 1, 2, ... in input order
    first_seen = list(dict.fromkeys(group.tolist()))
    assert first_seen != list(range(50))


def test_anatomy_is_reproducible_with_a_seed() -> None:
    rng_table = np.random.default_rng(0)
    t = random_table(rng_table, 200, {"q": 4, "s": 9})
    r = parse_rule("q -> s")
    a = Anatomy().publish(t, r, LDiversity(3), np.random.default_rng(7))
    b = Anatomy().publish(t, r, LDiversity(3), np.random.default_rng(7))
    assert np.array_equal(a.parts["st"].codes[0], b.parts["st"].codes[0])
    assert np.array_equal(a.parts["qit"].counts, b.parts["qit"].counts)
