"""The classic guarantees against independent expectations: hand-computed cases, the
definitions computed naively per group, a linear program for the Earth Mover's Distance,
the independent verifier's own implementation, and pycanon (k-anonymity, distinct
l-diversity, t-closeness with equal distance; not its entropy or recursive forms)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from versapub.errors import RuleError
from versapub.privacy.guarantees.base import GuaranteeContext, Histograms, Taxonomy
from versapub.privacy.guarantees.closeness import emd
from versapub.privacy.guarantees.guarantee import make_guarantee
from versapub.verify.guarantees.group_checks import emd_hierarchical, failing_groups, group_test, taxonomy_parents

# Li et al.'s disease taxonomy (ICDE 2007, Figure 2), as in ARX's test fixture.
DISEASES = ["gastric ulcer", "gastritis", "stomach cancer", "flu", "bronchitis", "pneumonia"]
TAXONOMY_ROWS = [
    [
        d,
        "stomach disease" if i < 3 else "respiratory infection",
        "digestive system disease" if i < 3 else "vascular lung disease",
        "respiratory&digestive disease",
    ]
    for i, d in enumerate(DISEASES)
]
TABLE_COUNTS = np.array([1, 2, 2, 1, 2, 1])  # the paper's nine patients (Table 3)


def _taxonomy(rows: list[list[str]], values: list[str]) -> Taxonomy:
    by = {r[0]: r for r in rows}
    levels = []
    for k in range(len(rows[0])):
        _, ids = np.unique(np.array([by[v][k] for v in values], dtype=object), return_inverse=True)
        levels.append(ids.astype(np.int64))
    return Taxonomy(tuple(levels))


def _hist(groups: list[dict[int, int]]) -> Histograms:
    g, v, c = [], [], []
    for i, h in enumerate(groups):
        for val, cnt in h.items():
            if cnt:
                g.append(i), v.append(val), c.append(cnt)
    return Histograms(np.array(g, dtype=np.int64), np.array(c, dtype=np.int64), len(groups), np.array(v))


def _lp_emd(p: np.ndarray, q: np.ndarray, dist: np.ndarray) -> float:
    """The EMD by its definition (Li et al. §4.1): the cheapest flow turning p into q."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m : (i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    res = linprog(dist.ravel(), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return float(res.fun)


def _tree_distance(tax: Taxonomy) -> np.ndarray:
    """level(lowest common ancestor) / H between every two leaves."""
    m = len(tax.nodes[0])
    d = np.zeros((m, m))
    for k in range(tax.height, -1, -1):
        same = tax.nodes[k][:, None] == tax.nodes[k][None, :]
        d[same] = k / tax.height
    return d


def test_hierarchical_emd_of_li_et_al_first_class_by_hand() -> None:
    """Class {gastric ulcer, gastritis, stomach cancer} of the paper's 3-diverse table: all
    4/9 of excess mass sits under 'digestive', all deficit under 'respiratory', so it moves
    through the root at distance 3/3: EMD = 4/9 (0 at every lower node)."""
    tax = _taxonomy(TAXONOMY_ROWS, DISEASES)
    q = TABLE_COUNTS / TABLE_COUNTS.sum()
    h = _hist([{0: 1, 1: 1, 2: 1}])
    assert emd(h, q, tax)[0] == pytest.approx(4 / 9)
    parents = taxonomy_parents(TAXONOMY_ROWS, DISEASES)
    dense = np.array([[1.0, 1, 1, 0, 0, 0]])
    assert emd_hierarchical(dense, q[None, :], parents)[0] == pytest.approx(4 / 9)
    assert _lp_emd(np.array([1, 1, 1, 0, 0, 0]) / 3, q, _tree_distance(tax)) == pytest.approx(4 / 9)
    # Equal distance: ½ Σ|p - q| = ½ (2/9 + 1/9 + 1/9 + 1/9 + 2/9 + 1/9) = 4/9 as well.
    assert emd(h, q, None)[0] == pytest.approx(4 / 9)
    g = make_guarantee({"name": "t-closeness", "t": 0.4}).bind(GuaranteeContext(TABLE_COUNTS, tax))
    assert not g.groups_satisfied(h)[0]
    assert g.achieved(h) == pytest.approx(4 / 9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_emd_equals_the_linear_program_and_the_verifiers_recursion(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 8))
    fan = int(rng.integers(1, 4))
    values = [f"v{i}" for i in range(m)]
    rows = [[v, f"a{i // fan}", f"b{i // (2 * fan)}", "*"] for i, v in enumerate(values)]
    tax = _taxonomy(rows, values)
    counts = rng.integers(0, 5, size=(3, m))
    counts[:, 0] += 1
    q_counts = counts.sum(axis=0) + rng.integers(0, 3, size=m)
    q = q_counts / q_counts.sum()
    h = _hist([{j: int(c) for j, c in enumerate(row)} for row in counts])
    got = emd(h, q, tax)
    ver = emd_hierarchical(counts.astype(float), q[None, :], taxonomy_parents(rows, values))
    for i, row in enumerate(counts):
        want = _lp_emd(row / row.sum(), q, _tree_distance(tax))
        assert got[i] == pytest.approx(want, abs=1e-7)
        assert ver[i] == pytest.approx(want, abs=1e-7)
    equal = emd(h, q, None)
    for i, row in enumerate(counts):
        assert equal[i] == pytest.approx(0.5 * np.abs(row / row.sum() - q).sum())


def _naive(name: str, params: dict[str, float], counts: list[int]) -> bool:
    """The definitions, one group at a time, in plain Python."""
    c = sorted((x for x in counts if x), reverse=True)
    n = sum(c)
    if name == "l-diversity":
        return params["l"] * c[0] <= n
    if name == "distinct-l-diversity":
        return len(c) >= params["l"]
    if name == "entropy-l-diversity":
        return -sum(x / n * math.log(x / n) for x in c) >= math.log(params["l"]) - 1e-12
    if name == "recursive-cl-diversity":
        l = int(params["l"])
        return len(c) >= l and c[0] < params["c"] * sum(c[l - 1 :])
    if name == "k-anonymity":
        return n >= params["k"]
    raise AssertionError(name)


SPECS = [
    ("l-diversity", {"l": 2}),
    ("l-diversity", {"l": 3}),
    ("distinct-l-diversity", {"l": 3}),
    ("entropy-l-diversity", {"l": 2.5}),
    ("entropy-l-diversity", {"l": 3}),
    ("recursive-cl-diversity", {"c": 2, "l": 3}),
    ("recursive-cl-diversity", {"c": 0.5, "l": 2}),
    ("recursive-cl-diversity", {"c": 3, "l": 2}),
    ("k-anonymity", {"k": 4}),
]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_every_guarantee_agrees_with_its_definition_and_the_verifier(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 7))
    groups = [
        {int(v): int(rng.integers(1, 6)) for v in rng.choice(m, size=int(rng.integers(1, m + 1)), replace=False)}
        for _ in range(int(rng.integers(1, 12)))
    ]
    h = _hist(groups)
    for name, params in SPECS:
        g = make_guarantee({"name": name, **params})
        want = [_naive(name, params, list(gr.values())) for gr in groups]
        assert g.groups_satisfied(h).tolist() == want, (name, params, groups)
        bad = failing_groups(group_test({"name": name, **params}, None), h.group, h.values(), h.count)
        assert sorted(bad.tolist()) == [i for i, ok in enumerate(want) if not ok], (name, params)


def test_recursive_cl_hand_computed() -> None:
    # counts 5, 3, 2, 1: (c=2, l=2): 5 < 2 * (3+2+1) = 12 yes; (c=2, l=3): 5 < 2 * 3 = 6 yes;
    # (c=1, l=3): 5 < 3 no.  Largest l with c = 2: l = 4 needs 5 < 2 * 1, no -> 3.
    h = _hist([{0: 5, 1: 3, 2: 2, 3: 1}])
    assert make_guarantee({"name": "recursive-cl", "c": 2, "l": 2}).groups_satisfied(h)[0]
    assert make_guarantee({"name": "recursive-cl", "c": 2, "l": 3}).groups_satisfied(h)[0]
    assert not make_guarantee({"name": "recursive-cl", "c": 1, "l": 3}).groups_satisfied(h)[0]
    assert make_guarantee({"name": "recursive-cl", "c": 2, "l": 2}).achieved(h) == 3


def test_entropy_hand_computed() -> None:
    # counts 2, 1, 1: H = -(1/2 ln 1/2 + 2 * 1/4 ln 1/4) = 1.5 ln 2 = ln(2.828...)
    h = _hist([{0: 2, 1: 1, 2: 1}])
    g = make_guarantee({"name": "entropy-l", "l": 2.8})
    assert g.groups_satisfied(h)[0]
    assert g.achieved(h) == pytest.approx(2**1.5)
    assert not make_guarantee({"name": "entropy-l", "l": 2.9}).groups_satisfied(h)[0]


def test_feasibility_names_the_largest_feasible_parameter() -> None:
    counts = np.array([6, 3, 1])  # n = 10
    assert make_guarantee({"name": "l-diversity", "l": 2}).single_attribute_violation(counts).largest_feasible == {
        "l": 1
    }
    v = make_guarantee({"name": "distinct-l", "l": 4}).single_attribute_violation(counts)
    assert v is not None and v.largest_feasible == {"l": 3}
    v = make_guarantee({"name": "entropy-l", "l": 3}).single_attribute_violation(counts)
    h = -(0.6 * math.log(0.6) + 0.3 * math.log(0.3) + 0.1 * math.log(0.1))
    assert v is not None and v.largest_feasible["l"] == pytest.approx(math.exp(h), abs=1e-4)
    # recursive (c=2): l=2: 6 < 2 * 4 yes; l=3: 6 < 2 * 1 no -> largest l = 2
    assert make_guarantee({"name": "recursive-cl", "c": 2, "l": 2}).single_attribute_violation(counts) is None
    v = make_guarantee({"name": "recursive-cl", "c": 2, "l": 3}).single_attribute_violation(counts)
    assert v is not None and v.largest_feasible["l"] == 2
    v = make_guarantee({"name": "k-anonymity", "k": 11}).single_attribute_violation(counts)
    assert v is not None and v.largest_feasible == {"k": 10}
    assert make_guarantee({"name": "t-closeness", "t": 0.01}).single_attribute_violation(counts) is None


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"name": "k-anonymity", "k": 1}, "k of k-anonymity must be a whole number >= 2"),
        ({"name": "recursive-cl", "c": 0, "l": 2}, "c of recursive"),
        ({"name": "recursive-cl", "c": -1, "l": 2}, "c of recursive"),
        ({"name": "t-closeness", "t": 0}, "t of t-closeness must be a number in (0, 1), got 0."),
        ({"name": "t-closeness", "t": 1.0}, "t of t-closeness must be a number in (0, 1), got 1.0."),
        ({"name": "t-closeness", "t": 0.2, "distance": "ordered"}, "distance of t-closeness must be one of auto,"),
        ({"name": "entropy-l", "l": 1}, "l of entropy-l-diversity must be a number > 1, got 1."),
        ({"name": "distinct-l", "l": 2.5}, "l of distinct-l-diversity must be a whole number >= 2, got 2.5."),
        ({"name": "recursive-cl", "l": 2}, "needs a value for c"),
    ],
)
def test_bad_parameters_are_named(spec: dict[str, object], words: str) -> None:
    with pytest.raises(RuleError) as exc:
        make_guarantee(spec)
    assert words in str(exc.value)


def test_hierarchical_t_closeness_needs_a_hierarchy() -> None:
    with pytest.raises(RuleError, match="needs a hierarchy for the sensitive attribute"):
        make_guarantee({"name": "t-closeness", "t": 0.2, "distance": "hierarchical"}).bind(
            GuaranteeContext(np.array([1, 2]))
        )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_pycanon_agrees_on_k_anonymity_distinct_l_and_t_closeness(seed: int) -> None:
    from pycanon import anonymity

    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 60))
    df = pd.DataFrame(
        {
            "q1": rng.choice(["a", "b", "c"], n),
            "q2": rng.choice(["x", "y"], n),
            "s": rng.choice([f"s{i}" for i in range(int(rng.integers(2, 6)))], n),
        }
    )
    cells = df.groupby(["q1", "q2", "s"]).size().reset_index(name="c")
    group = cells.groupby(["q1", "q2"]).ngroup().to_numpy()
    value = pd.Categorical(cells["s"], categories=sorted(df["s"].unique())).codes.astype(np.int64)
    h = Histograms(group, cells["c"].to_numpy(), int(group.max()) + 1, value)
    k = anonymity.k_anonymity(df, ["q1", "q2"])
    assert make_guarantee({"name": "k-anonymity", "k": 2}).achieved(h) == k
    assert make_guarantee({"name": "distinct-l", "l": 2}).achieved(h) == anonymity.l_diversity(df, ["q1", "q2"], ["s"])
    counts = df["s"].value_counts().reindex(sorted(df["s"].unique())).to_numpy()
    tc = make_guarantee({"name": "t-closeness", "t": 0.5, "distance": "equal"}).bind(GuaranteeContext(counts))
    assert tc.achieved(h) == pytest.approx(anonymity.t_closeness(df, ["q1", "q2"], ["s"]), abs=1e-9)


def test_per_rule_guarantees_reach_the_tables_the_manifest_and_the_checks(tmp_path: Path) -> None:
    import json

    import versapub
    from versapub.data.table import EncodedTable
    from versapub.verify.files.release_check import verify_release

    rng = np.random.default_rng(2)
    n = 600
    t = EncodedTable.from_columns(
        {
            "zip": list(rng.choice(["a1", "a2", "b1", "b2", "Z9"], n)),
            "sex": list(rng.choice(["M", "F"], n)),
            "age": [str(x) for x in rng.integers(1, 90, n)],
            "dx": list(rng.choice(list("abcdef"), n)),
            "inc": list(rng.choice(list("pqrstu"), n)),
        }
    )
    rules = [
        {"rule": "zip, sex -> dx", "guarantee": "t-closeness", "t": 0.3},
        "age -> inc | distinct-l:l=3",
        "zip -> dx",
    ]
    rel = versapub.publish(
        t, rules, l=2, anonymizer="mondrian", columns=versapub.ColumnRoles(allow_unique=t.names, others="insensitive")
    )
    by_rule = {str(r): g.to_manifest() for r, g in rel.rule_guarantees.items()}
    # zip -> dx (the release's 2-diversity) is implied by zip, sex -> dx: that rule's table meets both.
    assert by_rule["zip, sex -> dx"]["name"] == "all-of"
    assert {g["name"] for g in by_rule["zip, sex -> dx"]["guarantees"]} == {"t-closeness", "l-diversity"}
    assert by_rule["age -> inc"] == {"name": "distinct-l-diversity", "l": 3}
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    m = json.loads((out / "manifest.json").read_text())
    assert {r["rhs"]: r["guarantee"]["name"] for r in m["rules"]} == {"dx": "all-of", "inc": "distinct-l-diversity"}
    rep = verify_release(out, original=t)
    assert rep.ok and any("t-closeness" in f.message and "dx" in f.message for f in rep.findings)
    # The verifier reads each rule's guarantee from the manifest: a stricter one there fails.
    m["rules"][0]["guarantee"] = {"name": "t-closeness", "t": 0.01}
    (out / "manifest.json").write_text(json.dumps(m))
    assert not verify_release(out).ok


def test_a_rule_guarantee_must_be_named() -> None:
    from versapub.privacy.per_rule import split

    with pytest.raises(RuleError, match="needs guarantee = 'NAME'"):
        split([{"rule": "a -> b", "t": 0.2}])
    with pytest.raises(RuleError, match=r"Rule 'a -> b'.*t of t-closeness"):
        split(["a -> b | t-closeness:t=2"])


def test_a_rule_may_name_the_anonymizer_of_its_table(tmp_path: Path) -> None:
    import json

    import versapub
    from versapub.data.table import EncodedTable
    from versapub.errors import RuleError as RE

    rng = np.random.default_rng(3)
    n = 400
    t = EncodedTable.from_columns(
        {
            "zip": list(rng.choice(["a1", "a2", "b1", "b2"], n)),
            "sex": list(rng.choice(["M", "F"], n)),
            "age": [str(x) for x in rng.integers(20, 70, n)],
            "dx": list(rng.choice(list("abcdef"), n)),
            "inc": list(rng.choice(list("pqrstu"), n)),
        }
    )
    rules = [{"rule": "zip, sex -> dx", "anonymizer": "mondrian", "guarantee": "k-anonymity", "k": 5}, "age -> inc"]
    rel = versapub.publish(t, rules, l=2, columns=versapub.ColumnRoles(allow_unique=t.names, others="insensitive"))
    kinds = {str(tt.table.enforces): tt.kind for tt in rel.tables if tt.table.enforces is not None}
    assert kinds["zip, sex -> dx"] == "generalized" and rel.anonymizer == "anatomy"
    assert all(k == "anatomy" for r, k in kinds.items() if r != "zip, sex -> dx")
    versapub.write_release(rel, tmp_path / "r")
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m["rules"][0]["anonymizer"] == {
        "name": "mondrian",
        "params": {"suppression": 0.0, "suppression_mode": "remove"},
    }
    with pytest.raises(RE, match="asks for two anonymizers"):
        versapub.publish(
            t,
            [{"rule": "zip -> dx", "anonymizer": "mondrian"}, {"rule": "zip -> dx", "anonymizer": "incognito"}],
            l=2,
            columns=versapub.ColumnRoles(allow_unique=t.names, others="insensitive"),
        )


@pytest.mark.parametrize("decomposition", ["uad", "gd", "single-attribute", "multi-sa"])
def test_a_rule_given_twice_meets_both_guarantees(decomposition: str, tmp_path: Path) -> None:
    """Issue 26, defect 1: a rule repeated (left side in another order) with and without its
    own guarantee is one rule under both guarantees: here the release's l = 3 is infeasible
    (the most frequent disease is in 40 % of the records), so the answer is a refusal, not a
    release under the other occurrence's distinct 2-diversity."""
    import versapub
    from versapub.data.table import EncodedTable
    from versapub.errors import InfeasibleError
    from versapub.privacy.per_rule import effective, split
    from versapub.privacy.rules import reduce_rules

    rng = np.random.default_rng(4)
    n = 400
    t = EncodedTable.from_columns(
        {
            "zip": list(rng.choice(["z1", "z2", "z3", "z4"], n)),
            "sex": list(rng.choice(["F", "M"], n)),
            "disease": ["flu"] * 160 + list(rng.choice(["a", "b", "c", "d"], n - 160)),
        }
    )
    given = ["zip, sex -> disease | distinct-l-diversity:l=2", "sex, zip -> disease"]
    parsed, own = split(given)
    per_rule = effective(reduce_rules(parsed), own, make_guarantee({"name": "l-diversity", "l": 3}))
    assert [g.to_manifest() for g in per_rule.values()] == [
        {"name": "all-of", "guarantees": [{"name": "distinct-l-diversity", "l": 2}, {"name": "l-diversity", "l": 3}]}
    ]
    # the same whichever occurrence comes first
    parsed2, own2 = split(given[::-1])
    per_rule2 = effective(reduce_rules(parsed2), own2, make_guarantee({"name": "l-diversity", "l": 3}))
    assert {g["name"] for g in next(iter(per_rule2.values())).to_manifest()["guarantees"]} == {
        "distinct-l-diversity",
        "l-diversity",
    }
    with pytest.raises(InfeasibleError, match="disease"):
        versapub.publish(t, given, l=3, decomposition=decomposition)
    # Feasible (l = 2): the manifest and the verifier hold the joined guarantee.
    rel = versapub.publish(t, given, l=2, decomposition=decomposition)
    (g,) = rel.rule_guarantees.values()
    assert g.to_manifest()["name"] == "all-of"
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    import json

    (rule,) = json.loads((out / "manifest.json").read_text())["rules"]
    assert rule["guarantee"]["name"] == "all-of"


GUARANTEE_CHOICES = [
    "l-diversity:l=2",
    "l-diversity:l=3",
    "functional:tau=0.5,lambda=4",
    "distinct-l:l=2",
    "t-closeness:t=0.4",
    "entropy-l:l=2",
    "recursive-cl:c=3,l=2",
]


def random_job(seed: int) -> tuple[object, list[str], str, str, int]:
    """A random versatile job whose rules often share a sensitive attribute and carry their own
    guarantees (the stress test of issue 26: 2 of 912 such jobs failed their own checks)."""
    from versapub.data.table import EncodedTable

    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 400))
    names = [f"a{i}" for i in range(int(rng.integers(3, 7)))]
    t = EncodedTable.from_columns({a: [f"v{x}" for x in rng.integers(0, int(rng.integers(2, 9)), n)] for a in names})
    rules = []
    for _ in range(int(rng.integers(1, 5))):
        s = str(rng.choice(names[:2]))
        lhs = [a for a in names if a != s and rng.random() < 0.4] or [next(a for a in names if a != s)]
        rules.append(
            f"{', '.join(lhs)} -> {s}" + (" | " + str(rng.choice(GUARANTEE_CHOICES)) if rng.random() < 0.6 else "")
        )
    return (
        t,
        rules,
        str(rng.choice(["mondrian", "mondrian", "anatomy", "incognito"])),
        str(rng.choice(["uad", "gd"])),
        int(rng.integers(2, 4)),
    )


@pytest.mark.parametrize("seed", [105, 155, 328])
def test_the_table_protecting_an_attribute_meets_every_rule_on_it(tmp_path: Path, seed: int) -> None:
    """Issue 26, defect 4 (the seeds the stress test found): a table anonymized for one rule's
    guarantee was verified against the conjunction with another rule's on the same attribute
    (155: entropy and distinct l-diversity, GD + Mondrian), or let another rule's posterior
    exceed its limit (105, 328). The anonymizer now gets every rule's guarantee on its
    sensitive attribute, as the verifier reads them: published and verified."""
    import versapub

    table, rules, anonymizer, decomposition, l = random_job(seed)
    rel = versapub.publish(
        table,
        rules,
        l=l,
        anonymizer=anonymizer,
        decomposition=decomposition,
        seed=seed,
        columns=versapub.ColumnRoles(allow_unique=table.names, others="insensitive"),
    )  # type: ignore[arg-type]
    versapub.write_release(rel, tmp_path / "r")  # its own checks, the posterior across the release included


@pytest.mark.slow
def test_random_versatile_jobs_never_fail_their_own_checks(tmp_path: Path) -> None:
    """800 random jobs: each is refused (infeasible, or a guarantee the anonymizer cannot give)
    or published and verified — never written-off by its own checks."""
    import shutil

    import versapub
    from versapub.errors import ConfigError as CE
    from versapub.errors import InfeasibleError

    published = 0
    for seed in range(2000, 2800):
        table, rules, anonymizer, decomposition, l = random_job(seed)
        try:
            rel = versapub.publish(
                table,
                rules,
                l=l,
                anonymizer=anonymizer,
                decomposition=decomposition,
                seed=seed,
                columns=versapub.ColumnRoles(allow_unique=table.names, others="insensitive"),
            )  # type: ignore[arg-type]
        except (InfeasibleError, CE):
            continue
        versapub.write_release(rel, tmp_path / "r")
        shutil.rmtree(tmp_path / "r")
        published += 1
    assert published > 400
