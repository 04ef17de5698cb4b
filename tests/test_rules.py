"""Rule syntax, validation, reduction (Theorem 3.1 / Definition 2), guarantees, feasibility."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError, RuleError
from versapub.privacy import LDiversity, Rule, make_guarantee, parse_rule, reduce_rules, validate_rules
from versapub.privacy.feasibility import require_feasible
from versapub.privacy.guarantees.guarantee import Histograms
from versapub.privacy.rules import format_attribute

from .conftest import rule_sets


@pytest.mark.parametrize(
    ("text", "lhs", "rhs"),
    [
        ("a, b -> c", ("a", "b"), "c"),
        ("  a ,b->   c ", ("a", "b"), "c"),
        ("hospital,gender->zipcode", ("hospital", "gender"), "zipcode"),
        ("'length of stay', ICD-9-CM -> 'zip-code'", ("length of stay", "ICD-9-CM"), "zip-code"),
        ('"a, b", \'c\' -> "d->e"', ("a, b", "c"), "d->e"),
        ("marital-status -> age", ("marital-status",), "age"),
    ],
)
def test_parse_rule(text: str, lhs: tuple[str, ...], rhs: str) -> None:
    r = parse_rule(text)
    assert r.lhs == lhs
    assert r.rhs == rhs


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a, b", "exactly one '->'"),
        ("a -> b -> c", "exactly one '->'"),
        ("-> c", "no left-hand side"),
        ("a, , b -> c", "empty attribute name"),
        ("a, b -> c, d", "several right-hand-side"),
        ("a, a -> c", "twice"),
        ("a, c -> c", "both sides"),
        ("'a -> c", "unclosed"),
        ("", "empty"),
    ],
)
def test_parse_rule_errors(text: str, fragment: str) -> None:
    with pytest.raises(RuleError, match=fragment):
        parse_rule(text)


@given(rule_sets())
def test_format_then_parse_roundtrip(case: tuple[list[str], list[Rule]]) -> None:
    for r in case[1]:
        assert parse_rule(str(r)) == r


@given(st.text(min_size=1, max_size=8).filter(lambda s: s.strip() and "\n" not in s))
def test_quoted_names_roundtrip(name: str) -> None:
    if "'" in name and '"' in name:
        return  # a name with both quote kinds cannot be written in rule syntax
    r = Rule((name,), "x" if name != "x" else "y")
    assert parse_rule(str(r)) == r
    assert format_attribute("plain_name") == "plain_name"


def test_rule_equality_ignores_lhs_order() -> None:
    assert parse_rule("a, b -> c") == parse_rule("b, a -> c")
    assert len({parse_rule("a, b -> c"), parse_rule("b,a->c")}) == 1


def test_validate_unknown_attribute() -> None:
    with pytest.raises(RuleError, match=r"unknown attribute\(s\) 'zip'.*'age', 'sex'"):
        validate_rules([parse_rule("age, zip -> sex")], ["age", "sex"])
    with pytest.raises(RuleError, match="No privacy rules"):
        validate_rules([], ["a"])


def test_reduce_drops_implied_and_duplicates() -> None:
    rules = [parse_rule(t) for t in ["a -> c", "a, b -> c", "b -> d", "a, b -> c", "a -> d", "a, b, e -> c"]]
    red = reduce_rules(rules)
    assert list(red.rules) == [parse_rule("b -> d"), parse_rule("a -> d"), parse_rule("a, b, e -> c")]
    dropped = {str(d.rule): d for d in red.dropped}
    assert set(dropped) == {"a -> c", "a, b -> c"}
    # "a -> c" is implied by a kept rule (the maximal one), not by a dropped one
    assert dropped["a -> c"].implied_by == parse_rule("a, b, e -> c")
    assert "Theorem 3.1" in dropped["a -> c"].reason
    assert any(d.reason.startswith("repeats an earlier rule") for d in red.dropped)


@given(rule_sets())
def test_reduction_is_irreducible_and_equivalent(case: tuple[list[str], list[Rule]]) -> None:
    _, rules = case
    red = reduce_rules(rules)
    kept = list(red.rules)
    # Definition 2: no two kept rules with Q ⊆ Q' and the same S
    for i, r in enumerate(kept):
        for j, q in enumerate(kept):
            if i != j:
                assert not q.implies(r)
    # Theorem 3.1: every given rule is implied by a kept one (the sets are equivalent)
    for r in rules:
        assert any(k.implies(r) for k in kept)
    assert len(kept) + len(red.dropped) == len(rules)


def test_ldiversity_validators() -> None:
    for bad in (1, 0, -3, 2.5, True, "2"):
        with pytest.raises(RuleError):
            LDiversity(bad)  # type: ignore[arg-type]
    assert LDiversity(3).to_manifest() == {"name": "l-diversity", "l": 3}
    with pytest.raises(RuleError, match="Unknown guarantee"):
        make_guarantee({"name": "p-sensitivity", "p": 0.2})
    with pytest.raises(RuleError, match="needs a value for l"):
        make_guarantee({"name": "l-diversity"})


def test_groups_satisfied_hand_computed() -> None:
    import numpy as np

    g = LDiversity(2)
    # group 0: {x:1, y:1} ok; group 1: {x:2, y:1} -> 2*2 > 3 fails; group 2: {x:2, y:2} ok
    group = np.array([0, 0, 1, 1, 2, 2])
    count = np.array([1, 1, 2, 1, 2, 2])
    h = Histograms(group, count, 3)
    assert g.groups_satisfied(h).tolist() == [True, False, True]
    assert g.achieved(h) == pytest.approx(1.5)


def test_infeasible_rule_message_names_rule_value_share_and_largest_l() -> None:
    t = EncodedTable.from_columns({"a": list("xyzxyzxyzx"), "s": ["p"] * 6 + ["q", "r", "s", "t"]})
    with pytest.raises(InfeasibleError) as exc:
        require_feasible(t, [parse_rule("a -> s")], LDiversity(2))
    msg = str(exc.value)
    assert "'a -> s'" in msg
    assert "value 'p'" in msg
    assert "6 of 10 records (60.0%)" in msg
    assert "largest feasible l is 1" in msg and "no l >= 2 is feasible" in msg
    t2 = EncodedTable.from_columns({"a": list("xyzxyzxyzx"), "s": ["p"] * 3 + list("qrstuvw")})
    with pytest.raises(InfeasibleError, match=r"largest feasible l is 3 \(floor\(n/n1\) = floor\(10/3\)\)"):
        require_feasible(t2, [parse_rule("a -> s")], LDiversity(4))
    assert require_feasible(t2, [parse_rule("a -> s")], LDiversity(3))[0].feasible


@given(st.integers(1, 9), st.integers(1, 3), st.integers(0, 2**31))
def test_random_rules_are_irreducible_with_feasible_rhs(c: int, lhs: int, seed: int) -> None:
    import numpy as np

    from versapub.privacy.random_rules import random_rules

    attrs = [f"a{i}" for i in range(7)]
    infeasible = {"a0", "a1"}
    rules = random_rules(attrs, c, lhs, np.random.default_rng(seed), lambda a: a not in infeasible)
    assert len(rules) == c
    assert all(len(r.lhs) == lhs and r.rhs not in infeasible for r in rules)
    assert list(reduce_rules(rules).rules) == rules  # already irreducible
    again = random_rules(attrs, c, lhs, np.random.default_rng(seed), lambda a: a not in infeasible)
    assert again == rules  # seeded
