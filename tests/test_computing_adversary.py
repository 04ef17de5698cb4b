"""Adversaries that compute (issue 64): arithmetic proxies found at full strength at publish
and in ``check``, the protected attribute's original value as the target, allowed proxies
never a plain pass, computed ways out that work, attacks at full strength."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.datasets.synthetic import loans, write_csv
from versapub.privacy.guarantees.context import bind
from versapub.privacy.guarantees.guarantee import make_guarantee
from versapub.privacy.rules import parse_rule
from versapub.privacy.screens.computing import Limit
from versapub.privacy.screens.linking import unit_ids
from versapub.privacy.screens.proxy_sets import screen_sets

LOAN_Q = "state, emp_title, emp_length, homeownership, annual_income"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def loan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("loans") / "loans.csv"
    write_csv(loans(3000, 5), str(data))
    return data


def _job(data: Path) -> list[str]:
    return ["publish", "--input", str(data), "--rule", f"{LOAN_Q} -> interest_rate", "--l", "2", "--others",
            "insensitive", "--identifying", "grade,sub_grade", "--no-utility"]  # fmt: skip


def test_the_amortisation_is_refused_at_its_whole_strength_and_the_remedy_works(
    loan_file: Path, tmp_path: Path
) -> None:
    """A loan file (issue 64): the rate is the amortisation of the installment, the amount and
    the term, all published beside the rule in Anatomy's groups of two rates. The refusal
    states what the whole set recovers — an adversary who computes the rate and picks the
    nearer of its group's two candidates — (>= 95 %, issue 45's screen said 54.7 %), names a
    computed treatment, and that treatment, followed as written, publishes a release whose
    computing adversary in ``check --original`` stays within the bound."""
    job = [*_job(loan_file), "--allow-unique", "installment,loan_amount"]
    code, _, err = run(*job, "--out", str(tmp_path / "r"))
    assert code == 2, err
    said = " ".join(err.split())
    share = re.search(r"together recover 'interest_rate' \(rule [^)]*\) for ([\d.]+)%", said)
    assert share and float(share.group(1)) >= 95.0, said
    assert "picking among the 2 candidates each group of the release shows" in said
    remedy = re.search(r"--treat '([^']+)'", said)
    assert remedy, said
    out = tmp_path / "fixed"
    code, _, err = run(*_job(loan_file), "--treat", remedy.group(1), "--out", str(out))  # as written
    assert code in (0, 6), err
    code, stdout, _ = run("check", str(out), "--original", str(loan_file), "--json")
    rep = json.loads(stdout)
    (rate,) = [r for r in rep["adversary"]["rules"] if r["rule"]["rhs"] == "interest_rate"]
    assert rate["ok"] and rate["computed"] is not None and rate["computed"]["ci"][0] <= rate["bound"], rate["message"]


def test_an_allowed_proxy_is_never_a_plain_pass(loan_file: Path, tmp_path: Path) -> None:
    """``--allow-proxy`` writes the release; ``check --original`` then measures what the
    allowed set recovers (every rate: the computing adversary) and the verdict is *needs
    attention* naming the set and the share — issue 64 saw it pass at 49.4 %."""
    out = tmp_path / "allowed"
    code, stdout, err = run(*_job(loan_file), "--allow-unique", "installment,loan_amount",
                            "--allow-proxy", "installment,loan_amount,term", "--out", str(out))  # fmt: skip
    assert code in (0, 6), err
    assert "Allowed set of columns (--allow-proxy)" in stdout
    code, stdout, _ = run("check", str(out), "--original", str(loan_file))
    flat = " ".join(stdout.split())
    assert code == 6 and "allowed by the steward (--allow-proxy" in flat, flat
    computed = re.search(r"and ([\d.]+)% computing from them", flat)
    assert computed and float(computed.group(1)) >= 90.0


def _panel(n: int, seed: int, zero: float = 0.9) -> EncodedTable:
    rng = np.random.default_rng(seed)
    parts = {
        name: np.round(rng.gamma(shape, scale, size=n) * (rng.random(n) < share), 2)
        for name, shape, scale, share in (
            ("inpdol", 0.6, 4000.0, 1 - zero),
            ("outpdol", 1.0, 600.0, 0.8),
            ("drugdol", 0.8, 300.0, 0.7),
            ("suppdol", 0.5, 100.0, 0.3),
            ("mentdol", 0.5, 400.0, 0.15),
        )
    }
    cols = {
        "site": [str(v) for v in rng.integers(1, 7, n)],
        "xage": [f"{v:.2f}" for v in rng.uniform(0, 65, n)],
        "female": [str(v) for v in rng.integers(0, 2, n)],
        **{k: [f"{v:.2f}" for v in x] for k, x in parts.items()},
        "meddol": [f"{v:.2f}" for v in sum(parts.values())],
    }
    return EncodedTable.from_columns(cols)


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "t-closeness", "t": 0.2},
        {"name": "beta-likeness", "beta": 1.0},
        {"name": "delta-disclosure", "delta": 1.0},
    ],
)
def test_a_sum_identity_on_a_skewed_value_is_refused_under_every_distribution_guarantee(spec: dict) -> None:
    """A panel (issue 64): inpatient spending is 90 % zero and the difference of five
    published columns; under t-closeness the screen's bound was ``max q + t >= 1`` — it could
    never refuse. Read per value (``p + t``, ``(1 + beta) p``, ``p e^delta``) on the records
    that carry information (a non-zero value), the identity is refused under each."""
    t = _panel(6000, 3)
    rule = parse_rule("site, xage, female -> inpdol")
    g = bind(make_guarantee(spec), t, "inpdol")
    layout = [("T2", ["site", "xage", "female", "outpdol", "drugdol", "suppdol", "mentdol", "meddol"])]
    (found,) = screen_sets(t, [rule], layout, {rule: Limit(g.value_limits, g.group_width())})
    assert found.refused and found.scope.startswith("the records whose value is not")
    assert found.best_share >= 0.95 and found.bound < 0.5
    assert set(found.best_columns) == {"meddol", "outpdol", "drugdol", "suppdol", "mentdol"}


def test_a_copy_of_the_protected_value_is_refused_whatever_the_pram_draw(tmp_path: Path) -> None:
    """A column copying the disease beside a PRAM'd disease (issue 64): the screen measured the
    copy against the *treated* disease and refused only for some secret draws; the target is
    the original value, so every draw is refused."""
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(300):
        d = f"d{rng.integers(0, 6)}"
        rows.append([int(rng.integers(20, 70)), "FM"[int(rng.integers(0, 2))], d, d])
    data = tmp_path / "t.csv"
    with data.open("w", newline="") as f:
        csv.writer(f).writerows([["age", "sex", "disease", "code"], *rows])
    for seed in range(6):
        code, _, err = run("publish", "--input", str(data), "--rule", "age, sex -> disease", "--insensitive", "code",
                           "--treat", "pram:columns=disease,retention=0.85", "--seed", str(seed), "--no-utility",
                           "--out", str(tmp_path / f"r{seed}"))  # fmt: skip
        assert code == 2 and "'code' reveals 'disease'" in " ".join(err.split()), (seed, err)


def _unrelated(n: int, rng: np.random.Generator, numeric: bool) -> EncodedTable:
    base = {
        "q": [f"q{i % 50}" for i in range(n)],
        "a": [str(v) for v in rng.integers(0, 1000, n)],
        "b": [f"{v:.2f}" for v in rng.gamma(2.0, 50.0, n)],
        "c": [str(v) for v in rng.integers(0, 5, n)],
        "d": [f"{v:.3f}" for v in rng.uniform(1, 2, n)],
    }
    s = [f"{v:.2f}" for v in rng.gamma(2.0, 30.0, n)] if numeric else [str(v) for v in rng.integers(0, 4, n)]
    return EncodedTable.from_columns({**base, "s": s})


@pytest.mark.parametrize("numeric", [False, True])
def test_unrelated_sets_are_not_refused_by_the_computing_adversary(numeric: bool) -> None:
    """Unrelated columns beside the protected value, the adversary picking among two candidates
    (Anatomy's groups under l = 2): refused in none of 25 seeded screens (the slow sweep runs
    100; the family-wise error is 1 %)."""
    rng = np.random.default_rng(11 + numeric)
    rule = parse_rule("q -> s")
    refused = sum(
        any(
            f.breach
            for f in screen_sets(
                _unrelated(2000, rng, numeric),
                [rule],
                [("T1", ["q", "a", "b", "c", "d"])],
                {rule: Limit.constant(0.5, 2)},
            )
        )
        for _ in range(25)
    )
    assert refused == 0


@pytest.mark.slow
@pytest.mark.parametrize("numeric", [False, True])
def test_unrelated_sets_are_refused_under_one_percent_of_a_hundred(numeric: bool) -> None:
    rng = np.random.default_rng(110 + numeric)
    rule = parse_rule("q -> s")
    refused = sum(
        any(
            f.breach
            for f in screen_sets(
                _unrelated(3000, rng, numeric),
                [rule],
                [("T1", ["q", "a", "b", "c", "d"])],
                {rule: Limit.constant(0.5, 2)},
            )
        )
        for _ in range(100)
    )
    assert refused <= 1


def test_a_panel_person_id_beside_many_valued_person_constant_columns() -> None:
    """``zper`` (four rows per person) beside thirty spending columns: the unit-id screen read
    the thirty most even columns and missed site and sex; it reads the few-valued ones."""
    rng = np.random.default_rng(1)
    cols: dict[str, list[str]] = {"zper": [], "site": [], "female": [], "income": []}
    for j in range(30):
        cols[f"dol{j}"] = []
    for p in range(1000):
        site, female, income = rng.integers(1, 7), rng.integers(0, 2), rng.integers(100, 2000) * 100
        for _ in range(4):
            cols["zper"].append(str(5000 + p))
            cols["site"].append(str(site))
            cols["female"].append(str(female))
            cols["income"].append(str(income))
            for j in range(30):
                cols[f"dol{j}"].append(f"{rng.gamma(1, 500):.2f}")
    found = unit_ids(EncodedTable.from_columns(cols), ["zper"])
    assert found and found[0][0] == "zper" and {"site", "female"} <= set(found[0][1])


def test_singling_out_runs_to_anonymeters_budget(loan_file: Path) -> None:
    """Issue 45 stopped after 20 predicates per attack: 16.9 % where anonymeter's 500
    predicates find 84.5 % (a loan release published as read). At the budget now the figure
    reaches anonymeter's."""
    from versapub.verify.adversary.adversary_singling import singling_out

    rows = list(csv.DictReader(loan_file.open()))
    cols = ["state", "emp_title", "emp_length", "homeownership", "annual_income", "loan_amount", "term", "installment"]
    ori = {c: np.array([r[c] for r in rows], dtype=object) for c in cols}
    got = singling_out(ori, ori, cols, 500, np.random.default_rng(1), "multivariate", 3)
    assert got.risk.value >= 0.8


def test_nearest_with_a_key_no_training_record_holds() -> None:
    """The combination sweep's case (exit 70): a held-out record whose key sorts after every
    training record's gets the fallback, never an index past the end; the others their
    nearest neighbour's value within their key (by hand)."""
    from versapub.privacy.screens.computing import nearest

    x = np.array([1.0, 5.0, 2.0, 9.0, 4.9, 1.1])
    key = np.array([0, 0, 1, 1, 0, 2])  # key 2: the held-out record only
    target = np.array([10, 11, 12, 13, 14, 15])
    train = np.array([True, True, True, True, False, False])
    got = nearest(x, [key], target, train, fallback=-1)
    assert got.tolist() == [11, -1]  # 4.9 within key 0: 5.0's value; key 2: none


def test_every_refused_set_is_named_at_once(tmp_path: Path) -> None:
    """Issue 66: a refusal named one set per check (4 rounds to find 6 columns on the survey).
    Two independent sets each compute the protected value ((x1 + x2) mod 6, (y1 + y2) mod 6)
    beside a near-unique left-hand side: one refusal names both, and its --allow-proxy way out
    names every column of both, which publishes when followed as written."""
    rng = np.random.default_rng(4)
    rows = []
    for _ in range(3000):
        s, x1, y1 = (int(v) for v in rng.integers(0, 6, 3))
        rows.append(
            [int(rng.integers(20, 70)), f"z{rng.integers(0, 2000)}", x1, (s - x1) % 6, y1, (s - y1) % 6, f"d{s}"]
        )
    data = tmp_path / "t.csv"
    data.write_text("age,zip,x1,x2,y1,y2,s\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    job = ["publish", "--input", str(data), "--rule", "age, zip -> s", "--others", "insensitive", "--no-utility"]
    code, _, err = run(*job, "--out", str(tmp_path / "r"))
    said = " ".join(err.split())
    assert code == 2 and "Refused: 2 set(s)" in said, said
    way = re.search(r"--allow-proxy (\S+) \(every column of every set", said)
    assert way and set(way.group(1).split(",")) == {"x1", "x2", "y1", "y2"}
    code, _, err = run(*job, "--allow-proxy", way.group(1), "--out", str(tmp_path / "ok"))
    assert code in (0, 6), err
