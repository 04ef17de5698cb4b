"""UAD (Algorithm 2): hand-computed running example and GNF on random rule sets."""

from __future__ import annotations

from hypothesis import given, settings

from versapub.datasets import RUNNING_EXAMPLE_RULES
from versapub.decompositions import uad_schema
from versapub.privacy import Rule, parse_rule, reduce_rules
from versapub.schema import check_gnf

from .conftest import rule_sets

ATTRS = ("hospital", "age", "gender", "zipcode", "race", "ICD-9-CM")


def test_uad_running_example_by_hand() -> None:
    # Rule graph edges: age,ICD->race; gender,ICD,hospital,race->zipcode.  DSATUR colours
    # zipcode first (degree 4), race next; the largest class is {hospital, gender, race};
    # zipcode receives 3 edges from it and sends none -> T1; {age, ICD-9-CM} remain -> T2.
    rules = [parse_rule(r) for r in RUNNING_EXAMPLE_RULES]
    s = uad_schema(ATTRS, rules)
    assert [t.attributes for t in s.tables] == [("hospital", "gender", "race", "zipcode"), ("age", "ICD-9-CM")]
    assert s.tables[0].enforces == parse_rule("hospital, gender, race -> zipcode")
    assert s.tables[1].enforces is None
    v = check_gnf(s, rules)
    assert v.ok
    assert [x.kind for x in v.verdicts] == ["not-reachable", "guardian", "guardian"]


def test_uad_without_rules_publishes_one_plain_table() -> None:
    s = uad_schema(("a", "b", "c"), [])
    assert [t.attributes for t in s.tables] == [("a", "b", "c")]


@settings(max_examples=400)
@given(rule_sets(max_attrs=10, max_rules=12))
def test_uad_is_always_gnf_and_covers_every_attribute_once(case: tuple[list[str], list[Rule]]) -> None:
    attrs, rules = case
    red = reduce_rules(rules).rules
    s = uad_schema(attrs, red)
    assert check_gnf(s, red).ok, s.describe()
    published = [a for t in s.tables for a in t.attributes]
    assert sorted(published) == sorted(attrs)
    for t in s.tables:
        qi = [a for a in t.attributes if a != t.sensitive]
        # the LHS of each table is an independent set of the rule graph
        for r in red:
            assert not (r.rhs in qi and r.lhs_set & set(qi)), (t, r)
        if t.enforces is not None:
            assert set(t.enforces.lhs) <= set(qi)


def test_uad_with_one_rule_publishes_one_table_enforcing_it() -> None:
    # the paper (§6.2): with c = 1, GD and UAD coincide -- one table enforcing the rule
    s = uad_schema(("a", "b", "c", "d", "e"), [parse_rule("a, b -> c")])
    assert [t.attributes for t in s.tables] == [("a", "b", "d", "e", "c")]
    assert s.tables[0].enforces == parse_rule("a, b -> c")
