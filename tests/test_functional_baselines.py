"""The functional-diversity paper's baselines and measures: the 1-D l-diversity algorithm
(Ghinita et al.), the strength theorems (Theorems 20 and 23, with a general LP solver as
the oracle), excessive protection, count queries with fractional contributions and ID3 on
generalized data — each against an independent computation."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import versapub
from versapub.anonymizers.generalizing.one_d import eligible_groups, hilbert_keys
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.privacy.guarantees.functional import linear_phi
from versapub.privacy.guarantees.strength import (
    cl_is_stronger,
    simple_is_stronger,
    sup_cumulative,
    weakest_c,
    weakest_cl_pairs,
    weakest_simple_l,
)
from versapub.release.cells import Cells
from versapub.release.functional import (
    CountQuery,
    count_actuals,
    count_estimates,
    excessive_protection,
    protection_summary,
)
from versapub.release.id3 import classification, learn, of_table
from versapub.verify.files.release_check import verify_release

from .conftest import random_table

# -- 1-D l-diversity ---------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), l=st.integers(2, 5))
def test_eligible_groups_are_l_eligible_and_cover_everyone(seed: int, l: int) -> None:
    """Every group is l-eligible (at most |G|/l records share a value) with at least l
    records, and every record is in one (Ghinita et al.'s invariant keeps the rest eligible)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(l, 9))
    n = int(rng.integers(l, 90))
    w = 1 / np.arange(1, m + 1) ** rng.uniform(0, 2)
    s = rng.choice(m, size=n, p=w / w.sum())
    if l * np.bincount(s).max() > n:
        return
    g = eligible_groups(s.astype(np.int64), l)
    assert (g >= 0).all()
    for k in np.unique(g):
        members = s[g == k]
        assert len(members) >= l and l * np.bincount(members).max() <= len(members)


def test_hilbert_keys_walk_the_grid_one_step_at_a_time() -> None:
    """The Hilbert index is a bijection on the 2^b x 2^b grid and consecutive indices are
    grid neighbours (the curve's defining property); in one dimension it is the rank."""
    b = 3
    xs, ys = np.meshgrid(np.arange(2**b), np.arange(2**b), indexing="ij")
    keys = hilbert_keys([xs.ravel(), ys.ravel()], [2**b, 2**b]).astype(np.int64)
    assert sorted(keys.tolist()) == list(range(4**b))
    order = np.argsort(keys)
    steps = np.abs(np.diff(xs.ravel()[order])) + np.abs(np.diff(ys.ravel()[order]))
    assert (steps == 1).all()
    assert hilbert_keys([np.array([3, 0, 2])], [4]).tolist() == [3, 0, 2]


def test_one_d_release_is_l_eligible_and_verified(tmp_path: Path) -> None:
    table = random_table(np.random.default_rng(4), 300, {"q1": 8, "q2": 6, "s": 7}, skew=0.4)
    for spec, l in (
        ({"name": "l-diversity", "l": 3}, 3),
        ({"name": "functional-diversity", "tau": 0.5, "lambda": 3}, 3),
    ):
        rel = versapub.publish(table, ["q1, q2 -> s"], guarantee=spec, anonymizer="one-d-l-diversity", seed=1)
        t = rel.tables[0].table
        assert t.stats["l"] == l and t.parts["data"].counts.sum() == 300
        out = tmp_path / spec["name"]
        versapub.write_release(rel, out)
        assert verify_release(out, original=table).ok


# -- strength (Theorems 20, 23) --------------------------------------------------------------


def _lp_sup(c: float, l: int, m: int, k: int) -> float:
    """max F(k) over sorted distributions of m values with f_1 <= c (f_l + ... + f_m)."""
    a = [np.eye(m)[i + 1] - np.eye(m)[i] for i in range(m - 1)]
    row = np.zeros(m)
    row[0] = 1
    row[l - 1 :] -= c
    res = linprog(
        -np.r_[np.ones(k), np.zeros(m - k)],
        A_ub=[*a, row],
        b_ub=np.zeros(m),
        A_eq=[np.ones(m)],
        b_eq=[1],
        bounds=[(0, None)] * m,
    )
    return -float(res.fun) if res.status == 0 else math.nan


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 8), l_pick=st.integers(0, 10), c=st.floats(0.05, 6))
def test_sup_of_cumulative_frequencies_is_the_linear_program(m: int, l_pick: int, c: float) -> None:
    l = 2 + l_pick % (m - 1)
    sup = sup_cumulative(c, l, m)
    for k in range(1, m + 1):
        lp = _lp_sup(c, l, m, k)
        assert (math.isnan(lp) and math.isnan(sup[k - 1])) or sup[k - 1] == pytest.approx(lp, abs=1e-7)


def test_theorem_20_simple_lambda_diversity_is_the_weakest() -> None:
    """For the linear bound, simple l-diversity implies (tau, lambda) iff l >= lambda: the
    paper's Example 10 bound (0.5, 3) needs l = 3 (simple 2-diversity allows F(2) = 1)."""
    assert weakest_simple_l(linear_phi(0.5, 3)) == 3
    assert not simple_is_stronger(2, linear_phi(0.5, 3)) and simple_is_stronger(3, linear_phi(0.5, 3))
    rng = np.random.default_rng(0)
    for _ in range(200):  # brute force: random simple-l-diverse distributions meet the bound
        lam = int(rng.integers(2, 7))
        tau = 1 / lam + rng.uniform(0, 0.99) * (1 - 1 / lam)
        phi = linear_phi(tau, lam)
        l = weakest_simple_l(phi)
        assert l == lam
        f = rng.dirichlet(np.ones(lam + 3))
        f = np.minimum(f, 1 / l)
        f = np.r_[f, 1 - f.sum()] if f.sum() < 1 else f / f.sum()
        if f.max() > 1 / l + 1e-12:
            continue
        cum = np.cumsum(np.sort(f)[::-1])
        assert all(cum[k] <= (phi[k] if k < len(phi) else 1) + 1e-9 for k in range(len(cum)))


def test_theorem_23_weakest_c_is_tight() -> None:
    """At the weakest c the implication holds (every (c, l)-diverse distribution meets the
    bound); just above it a distribution breaks it — both against the LP."""
    phi = linear_phi(0.4, 4)
    m = 6
    for c, l in weakest_cl_pairs(phi, m):
        assert cl_is_stronger(c, l, phi, m)
        worse = c * 1.001
        assert any(_lp_sup(worse, l, m, k) > (phi[k - 1] if k <= len(phi) else 1) + 1e-9 for k in range(1, m + 1))
    assert weakest_c(1, phi, m) is None and weakest_c(m + 1, phi, m) is None
    # (0.5, 3) over 4 values: c = 0.6 with l = 2 (r_1 < 0.6 (1 - r_1) keeps F(2) <= 0.75), as derived by hand
    assert weakest_cl_pairs(linear_phi(0.5, 3), 4)[0] == (pytest.approx(0.6, abs=1e-9), 2)


# -- measures ---------------------------------------------------------------------------------


def _ss_release(seed: int = 2) -> tuple[EncodedTable, versapub.Release]:
    rng = np.random.default_rng(seed)
    n = 120
    q = rng.choice(["a", "b", "c", "d"], size=n).tolist()
    r = rng.choice(["x", "y"], size=n).tolist()
    s = rng.choice(["flu", "cold", "ulcer", "colitis", "acne"], size=n, p=[0.5, 0.2, 0.1, 0.1, 0.1]).tolist()
    table = EncodedTable.from_columns({"q": q, "r": r, "s": s})
    s_rows = [
        ["flu", "resp", "*"],
        ["cold", "resp", "*"],
        ["ulcer", "gi", "*"],
        ["colitis", "gi", "*"],
        ["acne", "skin", "*"],
    ]
    q_rows = [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]]
    hs = {"s": Hierarchy.from_rows("s", s_rows), "q": Hierarchy.from_rows("q", q_rows)}
    rel = versapub.publish(
        table,
        ["q, r -> s"],
        guarantee={"name": "functional-diversity", "tau": 0.35, "lambda": 4},
        anonymizer="sequential-sweep",
        hierarchies=hs,
        seed=seed,
    )
    return table, rel


def test_excessive_protection_by_brute_force(tmp_path: Path) -> None:
    """Per published class, e(E) = min over k < lambda of phi(k) - F(k), with induced
    frequencies computed by spreading each row over its leaves in plain Python; the same
    from the files as in memory."""
    _, rel = _ss_release()
    anon = rel.tables[0].table
    phi = linear_phi(0.35, 4)
    e, sizes = excessive_protection(Cells.of_table(anon), phi)
    ct = anon.parts["data"]
    classes: dict[tuple[str, ...], dict[str, float]] = {}
    labels = anon.leaves.get("s")
    for q, r, s, c in zip(ct.decoded("q"), ct.decoded("r"), ct.decoded("s"), ct.counts, strict=True):
        leaves = labels[str(s)] if labels is not None and str(s) in labels else (str(s),)
        for leaf in leaves:
            classes.setdefault((str(q), str(r)), {}).setdefault(leaf, 0.0)
            classes[(str(q), str(r))][leaf] += c / len(leaves)
    want = []
    for hist in classes.values():
        f = sorted(hist.values(), reverse=True)
        n = sum(f)
        cum = np.cumsum(f) / n
        want.append(min(phi[k] - (cum[k] if k < len(cum) else 1.0) for k in range(len(phi))))
    assert sorted(e.tolist()) == pytest.approx(sorted(want))
    assert (e >= -1e-9).all() and sizes.sum() == 120
    summary = protection_summary(e, sizes)
    assert summary["min"] == pytest.approx(min(max(w, 0) if w > -1e-9 else w for w in want), abs=1e-9)
    versapub.write_release(rel, tmp_path / "r")
    import json

    from versapub.kinds import parse_entry

    entry = parse_entry(json.loads((tmp_path / "r" / "manifest.json").read_text())["tables"][0])
    e2, _ = excessive_protection(Cells.of_files(tmp_path / "r", entry, "s"), phi)
    assert sorted(e2.tolist()) == pytest.approx(sorted(e.tolist()))


def test_count_queries_by_expanding_rows_into_leaves() -> None:
    """A generalized value contributes the fraction of its leaves inside the predicate:
    the estimate equals expanding every published row into its leaf combinations with
    weight 1 / (number of combinations) and counting those in the predicate."""
    table, rel = _ss_release(5)
    anon = rel.tables[0].table
    cells = Cells.of_table(anon)
    ct = anon.parts["data"]
    rng = np.random.default_rng(1)
    queries = []
    for _ in range(25):
        nodes = {}
        for a in rng.choice(["q", "r", "s"], size=int(rng.integers(1, 4)), replace=False):
            vals = sorted(set(table.column(str(a)).values.astype(str)))
            nodes[str(a)] = frozenset(
                rng.choice(vals, size=int(rng.integers(1, len(vals) + 1)), replace=False).tolist()
            )
        queries.append(CountQuery(nodes))
    est = count_estimates(cells, queries)
    for q, got in zip(queries, est, strict=True):
        want = 0.0
        for row in range(ct.n_rows):
            per = []
            for a in ("q", "r", "s"):
                v = str(ct.decoded(a)[row])
                per.append(anon.leaves[a][v] if a in anon.leaves and v in anon.leaves[a] else (v,))
            combos = list(itertools.product(*per))
            inside = sum(all(c[i] in q.nodes.get(a, {c[i]}) for i, a in enumerate(("q", "r", "s"))) for c in combos)
            want += ct.counts[row] * inside / len(combos)
        assert got == pytest.approx(want)
    act = count_actuals(table, queries)
    df = table.to_pydict()
    for q, a in zip(queries, act, strict=True):
        assert a == sum(all(df[k][i] in v for k, v in q.nodes.items()) for i in range(table.n_rows))


def test_id3_root_split_is_the_largest_information_gain() -> None:
    """On exact data the root splits on the attribute of largest information gain computed
    by hand (pandas); the tree's accuracy on its own training data matches predicting
    each leaf's majority."""
    rng = np.random.default_rng(3)
    n = 400
    a = rng.integers(0, 3, n)
    b = rng.integers(0, 4, n)
    y = np.where(rng.random(n) < 0.8, a % 2, rng.integers(0, 2, n))  # y depends on a
    table = EncodedTable.from_columns({"a": [f"a{x}" for x in a], "b": [f"b{x}" for x in b], "y": [f"y{x}" for x in y]})
    df = pd.DataFrame(table.to_pydict())

    def h(s: pd.Series) -> float:
        p = s.value_counts(normalize=True)
        return float(-(p * np.log2(p)).sum())

    gains = {c: h(df.y) - sum(len(g) / n * h(g.y) for _, g in df.groupby(c)) for c in ("a", "b")}
    like = Cells(
        ("a", "b", "y"), {c: tuple(sorted(set(df[c]))) for c in ("a", "b", "y")}, {}, {}, np.zeros(0, np.int64), "y"
    )
    cells = of_table(table, like)
    tree = learn(cells, "y", ["a", "b"], max_depth=1, min_weight=1)
    assert ("a", "b")[tree.attribute[0]] == max(gains, key=gains.get)
    majority = df.groupby("a").y.agg(lambda s: s.value_counts().index[0])
    acc = float((df.a.map(majority) == df.y).mean())
    out = classification(cells, table, "y", max_depth=1, min_weight=1)
    assert out["accuracy_original"] == pytest.approx(acc) and out["rca"] == pytest.approx(1.0)


def test_id3_generalized_value_equals_its_fractional_records() -> None:
    """A row whose value covers w leaves with count w*c learns the same tree as w exact rows
    of count c, one per leaf (the fractional-record reading)."""
    order = {"a": ("a0", "a1", "a2"), "y": ("n", "y")}
    gen = Cells(
        ("a", "y"),
        order,
        {"a": np.array([0, 0, 1, 2]), "y": np.array([0, 1, 1, 0])},
        {"a": np.array([2, 0, 1, 2]), "y": np.array([0, 1, 1, 0])},
        np.array([30, 5, 7, 4]),
        "y",
    )
    exact = Cells(
        ("a", "y"),
        order,
        {"a": np.array([0, 1, 2, 0, 1, 2]), "y": np.array([0, 0, 0, 1, 1, 0])},
        {"a": np.array([0, 1, 2, 0, 1, 2]), "y": np.array([0, 0, 0, 1, 1, 0])},
        np.array([10, 10, 10, 5, 7, 4]),
        "y",
    )
    t1, t2 = learn(gen, "y", ["a"], 3, 1), learn(exact, "y", ["a"], 3, 1)
    assert t1.attribute == t2.attribute and t1.prediction == t2.prediction and t1.child == t2.child
    assert t1.weight == pytest.approx(t2.weight)
