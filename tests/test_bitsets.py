"""Issue 31's faster paths against the paths they replace and against brute force:
``data.bitsets`` (rows meeting every condition), ``data.parallel``, ``match_rows`` by
sorted keys, and each caller of the bit sets (generalized record probabilities are in
test_generalization.py) giving exactly what its join gave."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import versapub
from versapub.anonymizers.bucketizing import msa_decomposition as md
from versapub.data import bitsets, parallel
from versapub.data.table import EncodedTable
from versapub.kinds.build import model_from_release
from versapub.model import set_groups, sparse


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(1, 200), n_attrs=st.integers(1, 3))
def test_matching_pairs_equal_brute_force(seed: int, n_rows: int, n_attrs: int) -> None:
    rng = np.random.default_rng(seed)
    cards = rng.integers(1, 6, n_attrs).tolist()
    listed = [
        {(int(v), int(r)) for v, r in zip(rng.integers(0, c, 40), rng.integers(0, n_rows, 40), strict=True)}
        for c in cards
    ]
    sets = [
        bitsets.bitset(
            np.array([v for v, _ in ls], dtype=np.int64), np.array([r for _, r in ls], dtype=np.int64), c, n_rows
        )
        for ls, c in zip(listed, cards, strict=True)
    ]
    probes = [rng.integers(0, c, 25).astype(np.int64) for c in cards]
    old = bitsets.CHUNK_WORDS
    bitsets.CHUNK_WORDS = 3  # several chunks of probes
    try:
        p, r = bitsets.matching_pairs(sets, probes)
    finally:
        bitsets.CHUNK_WORDS = old
    expected = [
        (i, row)
        for i in range(25)
        for row in range(n_rows)
        if all((int(pr[i]), row) in ls for pr, ls in zip(probes, listed, strict=True))
    ]
    assert list(zip(p.tolist(), r.tolist(), strict=True)) == expected


def test_parallel_pieces_cover_in_order_and_map_keeps_order() -> None:
    for n, k in itertools.product(range(0, 12), range(1, 6)):
        got = [i for piece in parallel.pieces(n, k) for i in piece]
        assert got == list(range(n)) and len(parallel.pieces(n, k)) <= max(k, 1)
    assert parallel.map_ordered(lambda x: x * x, list(range(50))) == [x * x for x in range(50)]


def test_match_rows_by_sorted_keys_equals_joint_ids_and_rejects_out_of_range() -> None:
    rng = np.random.default_rng(3)
    cards = [7, 5, 9]
    table = np.unique(np.stack([rng.integers(0, c, 300) for c in cards], axis=1), axis=0)
    cols = [table[:, j].astype(np.int64) for j in range(3)]
    query = [rng.integers(-1, c + 1, 500).astype(np.int64) for c in cards]  # some codes out of range
    got = sparse.match_rows(cols, query, cards)
    rows = {tuple(r): i for i, r in enumerate(table.tolist())}
    expected = [rows.get(tuple(q), -1) for q in zip(*(c.tolist() for c in query), strict=True)]
    assert got.tolist() == expected
    # a key space beyond 2^62 takes the grouping path: the same answers (codes in range)
    inside = [np.clip(q, 0, c - 1) for q, c in zip(query, cards, strict=True)]
    huge = [1 << 31, 1 << 31, 9]
    assert sparse.match_rows(cols, inside, huge).tolist() == [
        rows.get(tuple(q), -1) for q in zip(*(c.tolist() for c in inside), strict=True)
    ]


def _msa_table(seed: int, n: int = 600) -> EncodedTable:
    rng = np.random.default_rng(seed)
    return EncodedTable.from_columns(
        {
            "q1": rng.integers(0, 4, n).astype(str).tolist(),
            "q2": rng.integers(0, 3, n).astype(str).tolist(),
            "s1": rng.integers(0, 12, n).astype(str).tolist(),
            "s2": rng.integers(0, 6, n).astype(str).tolist(),
        }
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_msa_paths_by_bit_sets_equal_their_joins(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _msa_table(seed)
    rel = versapub.publish(table, ["q1, q2 -> s1", "q1, q2 -> s2"], anonymizer="msa-decomposition", seed=seed)
    (factor,) = model_from_release(rel).factors
    records = {a: table.codes(a) for a in factor.attrs}
    # Algorithm 1's groups and sets, for the paper's measure
    s1, s2 = table.codes("s1"), table.codes("s2")
    dec = md.decompose(s1, [s2], [table.cardinality("s2")], md.l_per(s1), [md.l_per(s2)], np.random.default_rng(seed))
    first = np.zeros((dec.n_groups, table.cardinality("s1")), dtype=bool)
    first[dec.group, s1] = True
    members = [first, dec.sets[0]]
    rng = np.random.default_rng(seed)
    member = [rng.random((40, c)) < 0.3 for c in (12, 6)]
    combos = [rng.integers(0, c, 50).astype(np.int64) for c in (12, 6)]
    out = {}
    for forced in (True, False):  # each path in turn
        with monkeypatch.context() as m:
            m.setattr(bitsets, "pays", lambda *a, forced=forced: forced)
            out[forced] = (
                factor._latent_prob(records),
                set_groups.allowed_pairs(member, combos),
                md.uniform_kl(table, ["q1", "q2"], dec.group, [s1, s2], members),
            )
    (p_fast, pairs_fast, kl_fast), (p_slow, pairs_slow, kl_slow) = out[True], out[False]
    assert np.allclose(p_fast, p_slow, rtol=1e-12, atol=0) and (p_fast > 0).all()
    assert all(np.array_equal(a, b) for a, b in zip(pairs_fast, pairs_slow, strict=True))
    assert kl_fast == pytest.approx(kl_slow, rel=1e-12)
