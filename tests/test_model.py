"""The release model against independent oracles: a dense IPF fit on the published
tables (with Anatomy's group as a latent variable), hand calculations, entropies."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import versapub
from versapub.anonymizers import Anatomy, publish_plain
from versapub.anonymizers.base import PublishRequest
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError, ReleaseError
from versapub.kinds.build import factor_of, model_from_release
from versapub.model import ReleaseModel, kl_divergence, make_workload, relative_error
from versapub.model.query import parse_query
from versapub.privacy import LDiversity, Rule

from .conftest import random_table, rule_sets


# -- an independent oracle ------------------------------------------------------------
def dense_ipf(cards: list[int], constraints: list[tuple[list[int], np.ndarray]], iters: int = 20000) -> np.ndarray:
    """Maximum-entropy joint with the given marginals (axes, target) by plain IPF."""
    q = np.full(cards, 1.0 / math.prod(cards))
    for _ in range(iters):
        for axes, target in constraints:
            other = tuple(i for i in range(len(cards)) if i not in axes)
            cur = q.sum(axis=other)
            ratio = np.divide(target, cur, out=np.zeros_like(cur), where=cur > 0)
            shape = [cards[i] if i in axes else 1 for i in range(len(cards))]
            q = q * ratio.reshape(shape)
        err = max(
            np.abs(q.sum(axis=tuple(i for i in range(len(cards)) if i not in axes)) - t).max()
            for axes, t in constraints
        )
        if err < 1e-14:
            break
    return q


def oracle(table: EncodedTable, parts: list) -> np.ndarray:
    """Dense maxent over the table's attributes (+ one latent group axis per Anatomy table)."""
    names = list(table.names)
    cards = [table.cardinality(a) for a in names]
    constraints = []
    n = table.n_rows
    for out in parts:
        if out.kind == "plain":
            ct = out.parts["data"]
            t = np.zeros([table.cardinality(a) for a in ct.names])
            np.add.at(t, tuple(ct.codes), ct.counts / n)
            # axes must be increasing for the reshape in dense_ipf
            order = sorted(range(len(ct.names)), key=lambda j: names.index(ct.names[j]))
            constraints.append(([names.index(ct.names[j]) for j in order], np.transpose(t, order)))
        else:
            g_axis = len(cards)
            qit, st_ = out.parts["qit"], out.parts["st"]
            n_groups = int(st_.column("group_id").max()) + 1
            cards.append(n_groups)
            qi = list(qit.names[:-1])
            tq = np.zeros([table.cardinality(a) for a in qi] + [n_groups])
            np.add.at(tq, tuple(qit.codes), qit.counts / n)
            order = sorted(range(len(qi)), key=lambda j: names.index(qi[j]))
            constraints.append(([names.index(qi[j]) for j in order] + [g_axis], np.transpose(tq, [*order, len(qi)])))
            s = st_.names[1]
            ts = np.zeros([n_groups, table.cardinality(s)])
            np.add.at(ts, tuple(st_.codes), st_.counts / n)
            constraints.append((sorted([names.index(s), g_axis]), ts.T))  # s axis < latent axis
    q = dense_ipf(cards, constraints)
    return q.sum(axis=tuple(range(len(names), len(cards))))


def model_dense(model: ReleaseModel, names: list[str]) -> np.ndarray:
    grids = np.meshgrid(*[np.arange(model.cards[a]) for a in names], indexing="ij")
    recs = {a: g.ravel().astype(np.int64) for a, g in zip(names, grids, strict=True)}
    return model.prob(recs).reshape(grids[0].shape)


def build(
    table: EncodedTable, schema: list[tuple[tuple[str, ...], Rule | None]], seed: int
) -> tuple[ReleaseModel, list]:
    rng = np.random.default_rng(seed)
    cards = {c.name: c.cardinality for c in table.columns}
    parts, factors = [], []
    for attrs, rule in schema:
        sub = table.select(attrs)
        out = (
            publish_plain(sub) if rule is None else Anatomy().publish(PublishRequest.of(sub, rule, LDiversity(2), rng))
        )
        parts.append(out)
        factors.append(factor_of(out, table.n_rows, cards))
    domains = {c.name: c.values for c in table.columns}
    return ReleaseModel(factors, domains, table.n_rows), parts


SCHEMAS = {
    "chain of plain tables": [(("a", "b"), None), (("b", "c"), None), (("c", "d"), None)],
    "star of plain tables": [(("a", "b"), None), (("a", "c"), None), (("a", "d"), None)],
    "overlapping triples": [(("a", "b", "c"), None), (("b", "c", "d"), None)],
    "anatomy + plain on a QI separator": [(("a", "b", "s"), Rule(("a", "b"), "s")), (("b", "c"), None)],
    "anatomy + plain on the sensitive separator": [(("a", "s"), Rule(("a",), "s")), (("s", "d"), None)],
    "two disjoint anatomy tables": [(("a", "b"), Rule(("a",), "b")), (("c", "s"), Rule(("c",), "s"))],
    "anatomy tables sharing a QI separator (GD)": [
        (("a", "b", "s"), Rule(("a", "b"), "s")),
        (("a", "b", "c"), Rule(("a", "b"), "c")),
        (("b", "d"), None),
    ],
}
#: The batched and carried queries also run where the tables disagree on a separator (Z < 1).
QUERY_SCHEMAS = {
    **SCHEMAS,
    "inconsistent separator (anatomy root, plain child)": [
        (("a", "b", "s"), Rule(("a",), "s")),
        (("b", "s", "c"), None),
    ],
}


def test_inconsistent_separator_uses_root_times_conditional() -> None:
    """Anatomy's joint over (b, s) differs from the plain table's exact one: no joint has
    both marginals, and the model is the root's distribution times the child's
    conditional, renormalized, each table's distribution computed independently."""
    rng = np.random.default_rng(0)
    table = random_table(rng, 24, {"a": 3, "b": 3, "c": 3, "s": 4}, skew=0.3)
    schema = [(("a", "b", "s"), Rule(("a",), "s")), (("b", "s", "c"), None)]
    model, parts = build(table, schema, 0)
    root = oracle(table.select(["a", "b", "s"]), [parts[0]])  # axes a, b, s
    child = oracle(table.select(["b", "c", "s"]), [parts[1]])  # axes b, c, s
    sep = child.sum(axis=1)  # b, s
    cond = np.divide(child, sep[:, None, :], out=np.zeros_like(child), where=sep[:, None, :] > 0)
    expected = np.einsum("abs,bcs->abcs", root, cond)
    assert expected.sum() < 1  # the anatomy root has (b, s) pairs the plain child lacks
    expected /= expected.sum()  # the model renormalizes (Z)
    got = model_dense(model, ["a", "b", "c", "s"])
    assert np.abs(got - expected).max() < 1e-12
    assert got.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_model_equals_dense_ipf(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    schema = SCHEMAS[name]
    attrs = sorted({a for t in schema for a in t[0]})
    for _ in range(20):  # redraw (seeded) until the random sensitive column is 2-eligible
        table = random_table(rng, 24, {a: (4 if a == "s" else 3) for a in attrs}, skew=0.3)
        try:
            model, parts = build(table, schema, seed)
            break
        except InfeasibleError:
            continue
    else:
        pytest.fail("no 2-eligible random table in 20 draws")
    assert model.path.startswith("junction-tree")
    names = list(table.names)
    expected = oracle(table, parts)
    got = model_dense(model, names)
    assert np.abs(got - expected).max() < 1e-9
    assert got.sum() == pytest.approx(1.0, abs=1e-12)
    # count(predicate) equals the sum of the dense joint over the selected cells
    for _ in range(5):
        pred = {a: rng.random(table.cardinality(a)) < 0.5 for a in names}
        sel = np.ix_(*[pred[a] for a in names])
        assert model.probability_masks(pred) == pytest.approx(float(expected[sel].sum()), abs=1e-9)


def test_non_decomposable_schema_uses_ipf() -> None:
    rng = np.random.default_rng(5)
    table = random_table(rng, 40, {"a": 3, "b": 3, "c": 3}, skew=0.5)
    schema = [(("a", "b"), None), (("b", "c"), None), (("a", "c"), None)]
    model, parts = build(table, schema, 0)
    assert model.path.startswith("ipf")
    assert np.abs(model_dense(model, ["a", "b", "c"]) - oracle(table, parts)).max() < 1e-9


# -- properties of the closed form ----------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule_sets(max_attrs=5, max_rules=4), st.integers(0, 2**31))
def test_published_marginals_are_reproduced_exactly(case: tuple, seed: int) -> None:
    attrs, rules = case
    rng = np.random.default_rng(seed)
    table = random_table(rng, 60, {a: 4 for a in attrs}, skew=0.3)
    try:
        rel = versapub.publish(table, rules, l=2, seed=seed, columns=versapub.ColumnRoles(others="insensitive"))
    except InfeasibleError:
        return
    model = model_from_release(rel)
    for t in rel.tables:
        for ct in t.table.parts.values():
            cols = [c for c in ct.names if c != "group_id"]
            m = model.marginal(cols)
            want = Counter()
            for i in range(ct.n_rows):
                want[tuple(int(ct.column(c)[i]) for c in cols)] += int(ct.counts[i])
            got = {tuple(int(k[i]) for k in m.codes): v for i, v in enumerate(m.values)}
            assert set(got) == set(want)
            for k, c in want.items():
                assert got[k] == pytest.approx(c / table.n_rows, abs=1e-12)


def _entropy(counts: np.ndarray) -> float:
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def test_kl_of_whole_table_is_zero_and_single_attribute_is_multi_information() -> None:
    rng = np.random.default_rng(3)
    table = random_table(rng, 300, {"a": 4, "b": 3, "c": 5}, skew=1.0)
    whole, _ = build(table, [(("a", "b", "c"), None)], 0)
    assert kl_divergence(whole, table).value == pytest.approx(0.0, abs=1e-12)
    single, _ = build(table, [(("a",), None), (("b",), None), (("c",), None)], 0)
    joint = Counter(zip(*(table.codes(a).tolist() for a in "abc"), strict=True))
    multi_info = sum(_entropy(table.column(a).counts()) for a in "abc") - _entropy(np.array(list(joint.values())))
    assert kl_divergence(single, table).value == pytest.approx(multi_info, abs=1e-12)


def test_anatomy_estimate_by_hand() -> None:
    # Four records; l = 2; with a fixed seed Anatomy groups {r0, r2} and {r1, r3} or similar:
    # whatever the grouping, P(q, s) = Σ_g p(g) p(q|g) p(s|g) is checked against a hand sum.
    table = EncodedTable.from_columns({"q": ["x", "x", "y", "y"], "s": ["1", "2", "1", "2"]})
    model, parts = build(table, [(("q", "s"), Rule(("q",), "s"))], 4)
    qit, st_ = parts[0].parts["qit"], parts[0].parts["st"]
    groups: dict[int, dict[str, Counter]] = {}
    for q, g, c in zip(qit.column("q"), qit.column("group_id"), qit.counts, strict=True):
        groups.setdefault(int(g), {"q": Counter(), "s": Counter()})["q"][int(q)] += int(c)
    for g, s, c in zip(st_.column("group_id"), st_.column("s"), st_.counts, strict=True):
        groups[int(g)]["s"][int(s)] += int(c)
    for q, s in itertools.product(range(2), range(2)):
        hand = sum(
            (sum(v["q"].values()) / 4) * (v["q"][q] / sum(v["q"].values())) * (v["s"][s] / sum(v["s"].values()))
            for v in groups.values()
        )
        got = model.prob({"q": np.array([q]), "s": np.array([s])})[0]
        assert got == pytest.approx(hand, abs=1e-15)
    # every group of 2 holds both s values, so q and s are independent under the model
    assert all(set(v["s"]) == {0, 1} for v in groups.values())
    assert model.prob({"q": np.array([0]), "s": np.array([0])})[0] == pytest.approx(0.25)


def test_sampling_reproduces_marginals() -> None:
    rel = versapub.publish(versapub.datasets.adult(), versapub.datasets.adult_config().rules, l=2, seed=1)
    model = model_from_release(rel)
    n = 20000
    draws = model.sample_codes(n, np.random.default_rng(11))
    for a in model.attributes:
        m = model.marginal((a,))
        p = np.zeros(model.cards[a])
        p[m.codes[0]] = m.values
        freq = np.bincount(draws[a], minlength=model.cards[a]) / n
        assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-9), a
    # a pair inside one table follows the model's joint too
    m2 = model.marginal(("education", "occupation"))
    got = Counter(zip(draws["education"].tolist(), draws["occupation"].tolist(), strict=True))
    for i in range(len(m2.values)):
        p = m2.values[i]
        f = got[(int(m2.codes[0][i]), int(m2.codes[1][i]))] / n
        assert abs(f - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-9


def test_kl_reports_infinite_when_a_record_is_impossible() -> None:
    table = EncodedTable.from_columns({"a": ["x", "y", "x", "y"], "b": ["1", "2", "2", "1"]})
    model, _ = build(table, [(("a", "b"), None)], 0)
    other = EncodedTable.from_columns({"a": ["x", "z"], "b": ["1", "1"]})
    res = kl_divergence(model, other)
    assert math.isinf(res.value) and res.n_zero_probability == 1
    assert res.to_json()["kl_infinite"] is True


# -- workload, predicates ------------------------------------------------------------
def test_workload_is_seeded_nonempty_and_shaped() -> None:
    table = versapub.datasets.adult()
    a = make_workload(table, 200, 3, 0.4, seed=7)
    b = make_workload(table, 200, 3, 0.4, seed=7)
    assert [sorted(q) for q in a.queries] == [sorted(q) for q in b.queries]
    assert all(np.array_equal(x[k], y[k]) for x, y in zip(a.queries, b.queries, strict=True) for k in x)
    assert (a.actual > 0).all()
    for q in a.queries:
        assert len(q) == 3
        for attr, vals in q.items():
            assert len(vals) == max(1, round(0.4 * table.cardinality(attr)))
    # actual counts are right
    q = a.queries[0]
    mask = np.ones(table.n_rows, dtype=bool)
    for attr, vals in q.items():
        mask &= np.isin(table.codes(attr), vals)
    assert a.actual[0] == mask.sum()
    model, _ = build(table, [(tuple(table.names), None)], 0)
    re_ = relative_error(model, table, a)
    assert re_.mean == pytest.approx(0.0, abs=1e-9)  # the whole table published: exact answers


@pytest.mark.parametrize("qd", [2, 4])
def test_workload_keeps_the_first_nonempty_draws_with_their_true_counts(qd: int) -> None:
    """The batched draw (both backends' ``draw_queries``) keeps exactly the queries a
    one-at-a-time draw keeps — the first ``n`` non-empty in draw order — with counts by
    ``np.isin`` and the empty draws counted."""
    from versapub.model.utility import draw_query

    table = versapub.datasets.texas_like(3_000, 2)
    attrs = list(table.names)
    cards = {a: table.cardinality(a) for a in attrs}
    rng = np.random.default_rng(11)
    kept, counts, empty = [], [], 0
    while len(kept) < 150:
        q = draw_query(rng, attrs, cards, qd, 0.1)
        c = int(np.logical_and.reduce([np.isin(table.codes(a), v) for a, v in q.items()]).sum())
        if c == 0:
            empty += 1
            continue
        kept.append(q)
        counts.append(c)
    w = make_workload(table, 150, qd, 0.1, seed=11)
    assert [sorted(q) for q in w.queries] == [sorted(q) for q in kept]
    assert all(np.array_equal(x[k], y[k]) for x, y in zip(w.queries, kept, strict=True) for k in x)
    assert w.actual.tolist() == counts
    assert w.redrawn == empty and empty > 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("age IN ('25-34','35-44') AND sex = 'Female'", {"age": ("25-34", "35-44"), "sex": ("Female",)}),
        ("\"marital-status\" = 'Never-married'", {"marital-status": ("Never-married",)}),
        ("a in (1, 2) and a in (2, 3)", {"a": ("2",)}),
        ("name = 'O''Brien'", {"name": ("O'Brien",)}),
        ("age == 'x'", {"age": ("x",)}),
        ("age = 'x' OR sex = 'y'", None),
        ("NOT age = 'x'", None),
    ],
)
def test_parse_query_conjunctions(text: str, expected: dict | None) -> None:
    assert parse_query(text).conjunction() == expected


@pytest.mark.parametrize("text", ["", "age", "age IN 'x'", "age IN ('x'", "age = 'x' AND", "(age = 'x'", "age ~ 3"])
def test_parse_query_errors(text: str) -> None:
    with pytest.raises(ReleaseError, match="query"):
        parse_query(text)


# -- reading a written release ---------------------------------------------------------
def test_loaded_release_equals_in_memory_model(tmp_path: Path) -> None:
    table = versapub.datasets.adult()
    rel = versapub.publish(table, versapub.datasets.adult_config().rules, l=2, seed=2)
    versapub.write_release(rel, tmp_path / "r", format="parquet")
    loaded = versapub.load_release(tmp_path / "r")
    mem = model_from_release(rel)
    assert kl_divergence(loaded, table).value == pytest.approx(kl_divergence(mem, table).value, abs=1e-12)
    pred = {"age": ["25-34"], "education": ["university", "post_graduate"]}
    assert loaded.count(pred) == pytest.approx(mem.count(pred), abs=1e-9)


def test_load_release_errors(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="not a release directory"):
        versapub.load_release(tmp_path / "none")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReleaseError, match=r"no manifest\.json"):
        versapub.load_release(tmp_path / "empty")
    table = versapub.datasets.running_example()
    versapub.write_release(versapub.publish(table, versapub.datasets.RUNNING_EXAMPLE_RULES, l=2), tmp_path / "r")
    (tmp_path / "r" / "T2.csv").write_text("age,ICD-9-CM,count\n23,alcoholism,1\n")
    with pytest.raises(ReleaseError, match=r"T2\.csv counts sum to 1, but n_records is 6"):
        versapub.load_release(tmp_path / "r")
    (tmp_path / "r" / "T2.csv").unlink()
    with pytest.raises(ReleaseError, match=r"T2\.csv, but the file is missing"):
        versapub.load_release(tmp_path / "r")


# -- batched and carried queries against one-at-a-time answers and the dense joint ----
def _eligible(name: str, seed: int) -> tuple[ReleaseModel, EncodedTable]:
    """A random table over the schema's attributes whose sensitive columns are 2-eligible."""
    rng = np.random.default_rng(seed)
    schema = QUERY_SCHEMAS[name]
    attrs = sorted({a for t in schema for a in t[0]})
    while True:
        table = random_table(rng, 30, {a: (4 if a == "s" else 3) for a in attrs}, skew=0.3)
        try:
            return build(table, schema, seed)[0], table
        except InfeasibleError:
            continue


@pytest.mark.parametrize("name", sorted(QUERY_SCHEMAS))
@pytest.mark.parametrize("seed", [0, 1])
def test_batched_queries_equal_one_at_a_time_and_dense(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    model, table = _eligible(name, seed)
    names = list(table.names)
    dense = model_dense(model, names)
    queries = []
    for _ in range(40):  # random conjunctions on 1..all attributes, some with no evidence at all
        chosen = [a for a in names if rng.random() < 0.5]
        queries.append({a: rng.random(table.cardinality(a)) < 0.5 for a in chosen})
    got = model.probability_batch(queries)
    for q, p in zip(queries, got, strict=True):
        sel = np.ix_(*[q.get(a, np.ones(table.cardinality(a), dtype=bool)) for a in names])
        assert p == pytest.approx(model.probability_masks(q), abs=1e-12)
        assert p == pytest.approx(float(dense[sel].sum()), abs=1e-9)


@pytest.mark.parametrize("name", sorted(QUERY_SCHEMAS))
def test_marginals_across_linked_tables_equal_dense(name: str) -> None:
    model, table = _eligible(name, 3)
    names = list(table.names)
    dense = model_dense(model, names)
    for k in (1, 2, 3):
        for want in itertools.combinations(names, k):
            m = model.marginal(want)
            expected = dense.sum(axis=tuple(i for i, a in enumerate(names) if a not in want))
            got = np.zeros(expected.shape)
            got[tuple(m.codes)] = m.values
            assert np.abs(got - expected).max() < 1e-12, want


@pytest.mark.parametrize("name", sorted(QUERY_SCHEMAS))
def test_posterior_check_on_linked_tables_equals_brute_force(name: str) -> None:
    """``check``'s maxent posterior max P(S = s | Q = q) against the dense joint."""
    from versapub.model.posterior import posterior_check

    model, table = _eligible(name, 4)
    names = list(table.names)
    dense = model_dense(model, names)
    rules = [Rule(lhs, s) for s in names for lhs in itertools.combinations([a for a in names if a != s], 2)]
    got = posterior_check(model, rules, LDiversity(2))
    for r, res in zip(rules, got, strict=True):
        keep = [*r.lhs, r.rhs]
        joint = dense.sum(axis=tuple(i for i, a in enumerate(names) if a not in keep))
        joint = np.transpose(joint, [sorted(keep, key=names.index).index(a) for a in keep])
        q = joint.sum(axis=-1, keepdims=True)
        post = np.divide(joint, q, out=np.zeros_like(joint), where=q > 1e-15)
        if res["method"] == "exact":
            assert res["max_posterior"] == pytest.approx(float(post.max()), abs=1e-9), r
        else:  # the group bound is an upper bound on the exact maximum
            assert res["max_posterior"] >= float(post.max()) - 1e-9, r


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5, unique=True), min_size=1, max_size=7))
def test_junction_tree_matches_networkx(cliques: list[list[str]]) -> None:
    """The hand-written Kruskal + breadth-first order equals networkx's maximum spanning
    tree and BFS from clique 0 (the model's root and orientation depend on it)."""
    import networkx as nx

    from versapub.model import junction_tree

    k = len(cliques)
    g = nx.Graph()
    g.add_nodes_from(range(k))
    for i in range(k):
        for j in range(i + 1, k):
            g.add_edge(i, j, weight=len(set(cliques[i]) & set(cliques[j])))
    tree = nx.maximum_spanning_tree(g) if k > 1 else g
    ok = all(
        nx.is_connected(tree.subgraph([i for i in range(k) if a in cliques[i]]))
        for a in set().union(*map(set, cliques))
    )
    got = junction_tree(cliques)
    assert (got is not None) == ok
    if got is not None:
        assert list(got.order) == list(nx.bfs_tree(tree, 0))
        assert got.parent == {c: p for p, c in nx.bfs_edges(tree, 0)}


@pytest.mark.parametrize("chunk", [7, 1 << 22])
@pytest.mark.parametrize("dense_st", [True, False])
def test_anatomy_record_probabilities_by_join_equal_the_expanded_joint(
    monkeypatch: pytest.MonkeyPatch, chunk: int, dense_st: bool
) -> None:
    """The latent join (in chunks, with a dense or a matched ST lookup) equals the
    Anatomy table expanded to all its (q, s) pairs, record by record."""
    import versapub.model.factors as factors

    monkeypatch.setattr(factors, "JOIN_CHUNK", chunk)
    monkeypatch.setattr(factors, "DENSE_ST_CELLS", (1 << 26) if dense_st else 0)
    rng = np.random.default_rng(11)
    table = random_table(rng, 60, {"a": 3, "b": 2, "s": 5}, skew=0.2)
    out = Anatomy().publish(PublishRequest.of(table, Rule(("a", "b"), "s"), LDiversity(2), rng))
    f = factor_of(out, table.n_rows, {c.name: c.cardinality for c in table.columns})
    grids = np.meshgrid(*[np.arange(table.cardinality(a)) for a in f.attrs], indexing="ij")
    recs = {a: gr.ravel().astype(np.int64) for a, gr in zip(f.attrs, grids, strict=True)}
    got = f._latent_prob(recs)
    expected = f.as_plain().prob(f.attrs, recs)
    assert np.allclose(got, expected, atol=1e-15)
    assert got.sum() == pytest.approx(1.0)
