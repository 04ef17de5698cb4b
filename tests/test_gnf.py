"""Reachability (Def. 3), guardian tables (Def. 4) and GNF (Def. 5) on the paper's
running example, plus properties over random schemas."""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from versapub.datasets import RUNNING_EXAMPLE_RULES
from versapub.privacy import parse_rule, reduce_rules
from versapub.privacy.rules import Rule
from versapub.schema import Schema, SubTable, check_gnf, components
from versapub.schema.gnf import check_rule
from versapub.schema.reachability import shortest_path

from .conftest import rule_sets

R1, R2, R3 = (parse_rule(r) for r in RUNNING_EXAMPLE_RULES)


def _t(name: str, attrs: str, rule: str | None = None) -> SubTable:
    return SubTable(name, tuple(a.strip() for a in attrs.split(",")), parse_rule(rule) if rule else None)


TABLE3 = Schema(
    (
        _t("T1", "hospital, age, gender, ICD-9-CM"),
        _t("T2", "race, zipcode", "race -> zipcode"),
    )
)
TABLE4 = Schema(
    (
        _t("T1", "gender, ICD-9-CM, hospital", "ICD-9-CM, gender -> hospital"),
        _t("T2", "age, hospital, zipcode", "hospital -> zipcode"),
        _t("T3", "age, hospital, gender, race", "age, hospital, gender -> race"),
        _t("T4", "age, zipcode"),
    )
)
TABLE2 = Schema(
    (
        _t("Ta", "age, ICD-9-CM, race", "age, ICD-9-CM -> race"),
        _t("Tb", "gender, ICD-9-CM, zipcode", "gender, ICD-9-CM -> zipcode"),
        _t("Tc", "hospital, race, zipcode", "hospital, race -> zipcode"),
    )
)


def test_table3_is_in_gnf() -> None:
    v = check_gnf(TABLE3, [R1, R2, R3])
    assert v.ok
    kinds = [x.kind for x in v.verdicts]
    assert kinds == ["not-reachable", "not-reachable", "guardian"]
    g = v.verdicts[2]
    assert (g.guardian, g.w_q, g.q_star) == ("T2", ("race",), ())
    assert "T2 is its guardian" in g.explain()


def test_table4_is_not_in_gnf() -> None:
    v = check_gnf(TABLE4, [R1, R2])
    assert not v.ok
    r1, r2 = v.verdicts
    # Rule 1's guardian is T3 with {age} ∪ {hospital, gender}
    assert r1.kind == "guardian"
    assert r1.guardian == "T3"
    assert r1.w_q == ("age",)
    assert set(r1.q_star) == {"hospital", "gender"}
    # Rule 2 has no guardian: T2 and T4 contain zipcode, neither qualifies
    assert r2.kind == "violation"
    assert {a.table for a in r2.attempts} == {"T2", "T4"}
    assert all(not a.condition_iii for a in r2.attempts)
    text = r2.explain()
    assert "NOT guaranteed" in text and "(iii) fails" in text and "zipcode" in text


def test_table2_is_not_in_gnf() -> None:
    v = check_gnf(TABLE2, [R1, R2, R3])
    assert not v.ok
    bad = [x for x in v.verdicts if not x.holds]
    assert [x.rule for x in bad] == [R3] or R3 in [x.rule for x in bad]
    r3 = next(x for x in v.verdicts if x.rule == R3)
    assert r3.kind == "violation"
    # the offending path joins race to zipcode through Ta and Tb (or directly via Tc)
    assert r3.path[-1].target == "zipcode"


def test_unpublished_lhs_is_not_reachable() -> None:
    s = Schema((_t("T1", "x, y"),))
    assert check_gnf(s, [parse_rule("z -> x")]).verdicts[0].kind == "not-reachable"


def test_plain_table_linking_q_and_s_violates() -> None:
    s = Schema((_t("T1", "a, b, c"),))
    v = check_gnf(s, [parse_rule("a -> c")])
    assert not v.ok
    assert "(ii) fails" in v.verdicts[0].explain()


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    attrs = [f"a{i}" for i in range(draw(st.integers(2, 7)))]
    k = draw(st.integers(1, 4))
    tables = []
    for i in range(k):
        cols = draw(st.lists(st.sampled_from(attrs), min_size=1, max_size=len(attrs), unique=True))
        tables.append(SubTable(f"T{i}", tuple(cols)))
    return Schema(tuple(tables))


@given(schemas())
def test_components_match_networkx(schema: Schema) -> None:
    g = nx.Graph()
    for t in schema.tables:
        g.add_nodes_from(t.attributes)
        g.add_edges_from(itertools.combinations(t.attributes, 2))
    comp = components(t.attributes for t in schema.tables)
    for a, b in itertools.combinations(sorted(g.nodes), 2):
        assert (comp[a] == comp[b]) == nx.has_path(g, a, b)
        path = shortest_path([a], b, [(t.name, t.attributes) for t in schema.tables])
        assert (path is not None) == nx.has_path(g, a, b)
        if path is not None:
            assert len(path) == nx.shortest_path_length(g, a, b)


@settings(max_examples=200)
@given(rule_sets(), st.data())
def test_single_attribute_schema_is_always_gnf(case: tuple[list[str], list], data: st.DataObject) -> None:
    """Publishing every attribute alone makes every rule unreachable (Lemma 1)."""
    attrs, rules = case
    s = Schema(tuple(SubTable(f"T{i}", (a,)) for i, a in enumerate(attrs)))
    v = check_gnf(s, reduce_rules(rules).rules)
    assert v.ok
    assert all(x.kind == "not-reachable" for x in v.verdicts)


@settings(max_examples=300, deadline=None)
@given(rule_sets(max_attrs=6, max_rules=4), st.data())
def test_fast_gnf_answer_equals_the_explained_verdict(case: tuple, data: st.DataObject) -> None:
    """GD prunes candidates with :func:`rule_holds` (components); it must agree with
    :func:`check_rule` (shortest paths, guardian attempts) on every random schema."""
    from versapub.schema.gnf import rule_holds

    attrs, rules = case
    tables = []
    for i in range(data.draw(st.integers(1, 4))):
        cols = data.draw(st.lists(st.sampled_from(attrs), min_size=1, max_size=len(attrs), unique=True))
        enforce = None
        if len(cols) > 1 and data.draw(st.booleans()):
            s = data.draw(st.sampled_from(cols))
            lhs = data.draw(st.lists(st.sampled_from([a for a in cols if a != s]), min_size=1, unique=True))
            enforce = Rule(tuple(lhs), s)
        tables.append(SubTable(f"T{i + 1}", tuple(cols), enforce))
    schema = Schema(tuple(tables))
    for r in rules:
        assert rule_holds(schema, r) == check_rule(schema, r).holds, (schema.describe(), str(r))
