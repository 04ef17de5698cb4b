"""Attacks on everything published (issue 45, part 2): the verifier's own records drawn from a
release, anonymeter's three attacks re-implemented, the learned adversary, and check's
verdict on the two real cases (an amortisation, a sum identity) and on a table without any
relation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from versapub.cli.main import cli
from versapub.datasets.synthetic import loans, panel, write_csv
from versapub.verify.adversary.adversary import inference, linkability, success_rate
from versapub.verify.adversary.adversary_singling import singling_out

LOAN_Q = "state, emp_title, emp_length, homeownership, annual_income"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def rec(**cols: list[str]) -> dict[str, np.ndarray]:
    return {k: np.array(v, dtype=object) for k, v in cols.items()}


def test_wilson_rate_is_anonymeters() -> None:
    """anonymeter's ``success_rate``: point ``(k + z²/2) / (n + z²)``, error
    ``z/(n + z²) sqrt(k (n-k)/n + z²/4)`` at z = 1.95996 (95 %), by hand."""
    z = 1.959964
    r = success_rate(100, 30)
    point = (30 + z * z / 2) / (100 + z * z)
    err = z / (100 + z * z) * math.sqrt(30 * 70 / 100 + z * z / 4)
    assert r.value == pytest.approx(point, abs=1e-6)
    assert (r.low, r.high) == pytest.approx((point - err, point + err), abs=1e-6)
    assert success_rate(10, 0).low == 0.0


def test_inference_guesses_the_nearest_drawn_records_secret() -> None:
    """Gower-like distance: numbers scaled to [0, 1] over both tables, categories 0/1."""
    syn = rec(age=["20", "40", "60"], sex=["M", "F", "F"], s=["a", "b", "c"])
    ori = rec(age=["21", "58", "39", "41"], sex=["M", "F", "F", "M"], s=["a", "c", "b", "x"])
    rng = np.random.default_rng(0)
    fig = inference(ori, syn, ["age", "sex"], "s", np.arange(4), rng)
    # nearest: 21M -> 20M (a), 58F -> 60F (c), 39F -> 40F (b), 41M -> 40F? |41-40|/40 + 1 = 1.025 vs 20M: 0.525 -> a
    assert fig.attack_rate.successes == 3


def test_linkability_links_when_both_halves_meet_one_record() -> None:
    syn = rec(a=["1", "2", "3"], b=["x", "y", "z"])
    ori = rec(a=["1", "2", "3"], b=["x", "z", "z"])
    fig = linkability(ori, syn, ["a"], ["b"], np.arange(3), np.random.default_rng(0))
    assert fig.attack_rate.successes == 2  # the second target's halves meet records 1 and 2


def test_univariate_singling_out_counts_predicates_that_single_out_an_original() -> None:
    """A value held once among the drawn records singles one out; it counts when it holds
    for exactly one original record (the drawn table's ``<= min``/``>= max`` too)."""
    syn = rec(c=["u", "v", "v", "w"], n=["1", "5", "5", "9"])  # distinct rows: (u,1), (v,5), (w,9)
    ori = rec(c=["u", "v", "w", "w"], n=["1", "5", "9", "8"])
    fig = singling_out(ori, syn, ["c", "n"], 10, np.random.default_rng(0), "univariate")
    # on the distinct drawn rows every value is held once: c == u, v, w; n == 1, 5, 9; n <= 1; n >= 9
    assert fig.details["queries"] == 8
    # on the original all but c == w (two records) single one out
    assert fig.attack_rate.successes == 7
    assert fig.attack_rate.n == 10  # anonymeter's risk: successes over the attacks asked for


def _publish(data: Path, out: Path, rules: list[str], *extra: str) -> tuple[int, str, str]:
    args = [a for r in rules for a in ("--rule", r)]
    return run("publish", "--input", str(data), *args, "--l", "2", "--others", "insensitive", *extra, "--out", str(out))


def test_check_flags_the_loans_released_with_allow_proxy(tmp_path: Path) -> None:
    """Issue 45: the loans' QIT publishes amount, term and installment beside a near-unique
    left-hand side; released anyway (--allow-proxy), `check --original` measures the grade rule
    breached: the learned adversary reads the row and recovers the grade. Since issue 64 an
    allowed proxy is the steward's decision: *needs attention* with the figure, not a failure."""
    data = tmp_path / "loans.csv"
    write_csv(loans(4000, 5), str(data))
    out = tmp_path / "rel"
    rules = [f"{LOAN_Q} -> {s}" for s in ("grade", "sub_grade", "interest_rate")]
    code, stdout, err = _publish(
        data, out, rules, "--allow-unique", "installment", "--allow-proxy", "installment,loan_amount,term"
    )
    assert code in (0, 6), stdout + err
    code, stdout, err = run("check", str(out), "--original", str(data), "--json")
    assert code == 6, err
    rep = json.loads(stdout)
    grade = next(r for r in rep["adversary"]["rules"] if r["rule"]["rhs"] == "grade")
    assert grade["ok"] and grade["attention"] and "allowed by the steward" in grade["message"]
    assert grade["learned"]["ci"][0] > max(grade["bound"], grade["reference"]["ci"][1])
    assert "loan_amount" in grade["learned"]["learner"] or "installment" in grade["learned"]["learner"]


def test_check_flags_the_panel_released_with_allow_proxy(tmp_path: Path) -> None:
    """Issue 45: inpdol = meddol - outpdol - drugdol - suppdol - mentdol, all published beside
    the rule's left-hand side: the learned adversary's trimmed least squares recovers it (the
    allowed set: needs attention, issue 64)."""
    data = tmp_path / "panel.csv"
    write_csv(panel(5000, 2), str(data))
    out = tmp_path / "rel"
    money = "meddol,outpdol,drugdol,suppdol,mentdol"
    code, stdout, err = _publish(
        data, out, ["site, xage, female, income -> inpdol"], "--allow-unique", f"xage,{money}", "--allow-proxy", money
    )
    assert code in (0, 6), stdout + err
    code, stdout, _ = run("check", str(out), "--original", str(data), "--json")
    rep = json.loads(stdout)
    (r,) = rep["adversary"]["rules"]
    assert code == 6 and r["attention"] and r["learned"]["rate"] > 0.6


def test_a_table_without_relations_publishes_and_passes(tmp_path: Path) -> None:
    """Columns unrelated to the protected attribute: nothing refused at publish, every attack
    within its bound at check."""
    rng = np.random.default_rng(12)
    n = 3000
    cols = {
        "age": [str(v) for v in rng.integers(18, 90, n)],
        "sex": [["F", "M"][v] for v in rng.integers(0, 2, n)],
        "zone": [f"z{v}" for v in rng.integers(0, 30, n)],
        "amount": [f"{v:.2f}" for v in rng.gamma(2, 100, n)],
        "visits": [str(v) for v in rng.poisson(3, n)],
        "dx": [f"d{v}" for v in rng.integers(0, 8, n)],
    }
    data = tmp_path / "plain.csv"
    write_csv(cols, str(data))
    out = tmp_path / "rel"
    code, stdout, err = _publish(data, out, ["age, sex, zone -> dx"], "--allow-unique", "amount")
    assert code in (0, 6), stdout + err
    code, stdout, _ = run("check", str(out), "--original", str(data), "--json")
    rep = json.loads(stdout)
    assert code in (0, 6) and rep["adversary"]["ok"], stdout[-2000:]
    (r,) = rep["adversary"]["rules"]
    assert r["learned"]["rate"] < 0.5 and r["inference"]["risk"]["rate"] < 0.5


def test_drawn_anatomy_records_take_their_values_from_their_group(tmp_path: Path) -> None:
    """The verifier's drawer: every drawn record's sensitive value is one of its group's ST
    values (read back from the files)."""
    import csv

    from versapub.verify.reading.kind_checks import drawers
    from versapub.verify.reading.manifest import manifest_of

    examples = Path(__file__).resolve().parents[1] / "examples"
    out = tmp_path / "rel"
    code, stdout, err = run("publish", "--input", str(examples / "data.csv"), "--rule", "age, sex -> disease",
                            "--identifying", "patient_id", "--others", "insensitive", "--out", str(out))  # fmt: skip
    assert code in (0, 6), stdout + err
    m = manifest_of(out)
    entry = next(t for t in m["tables"] if t["kind"] == "anatomy")
    drawn = drawers()["anatomy"](out, entry, np.random.default_rng(3), 10_000, 0).records
    groups: dict[tuple[str, ...], set[str]] = {}
    qi = [a for a in entry["attributes"] if a != "disease"]
    with (out / entry["files"]["qit"]).open() as f:
        for row in csv.DictReader(f):
            groups.setdefault(tuple(row[a] for a in qi), set()).add(row["group_id"])
    values: dict[str, set[str]] = {}
    with (out / entry["files"]["st"]).open() as f:
        for row in csv.DictReader(f):
            values.setdefault(row["group_id"], set()).add(row["disease"])
    assert len(drawn["disease"]) == 1000
    for i in range(1000):
        key = tuple(str(drawn[a][i]) for a in qi)
        assert drawn["disease"][i] in set().union(*(values[g] for g in groups[key]))


def test_singling_out_reads_the_distinct_rows_in_first_occurrence_order() -> None:
    """anonymeter drops duplicates before singling out: the distinct rows, each at its first
    occurrence, in input order (brute force on a table with repeats)."""
    from versapub.verify.adversary.adversary_singling import _distinct

    rng = np.random.default_rng(1)
    t = {
        "a": rng.choice(["x", "y", "z"], 3000).astype(object),
        "b": rng.integers(0, 40, 3000).astype(str).astype(object),
    }
    seen: set[tuple[str, str]] = set()
    rows = []
    for i, pair in enumerate(zip(t["a"], t["b"], strict=True)):
        if pair not in seen:
            seen.add(pair)
            rows.append(i)
    got = _distinct(t, ["a", "b"])
    assert list(got["a"]) == [t["a"][i] for i in rows] and list(got["b"]) == [t["b"][i] for i in rows]


def test_the_block_size_never_changes_the_nearest_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50: the search runs in blocks of a fixed number of cells (memory bounded whatever the
    number of records); tie-breaking draws come in the same order, so any block size gives the
    same picks and the same expected hits."""
    from versapub.verify.adversary import adversary

    rng = np.random.default_rng(4)
    q = rng.integers(0, 4, (300, 3)).astype(float)
    repeated = rng.integers(0, 4, (900, 3)).astype(float)  # few distinct rows: distances to those
    continuous = np.column_stack([rng.random(900), repeated[:, 1:]])  # every row distinct
    secrets = [rng.integers(0, 3, 900).astype(object)]
    truth = rng.integers(0, 3, 300).astype(object)
    for c in (repeated, continuous):
        runs = []
        for cells in (1 << 22, 2000, 7):
            monkeypatch.setattr(adversary, "BLOCK_CELLS", cells)
            picks = adversary.nearest(q, c, 1, np.random.default_rng(5))
            runs.append((picks.tolist(), adversary.tied_hits(q, c, 1, secrets, truth).tolist()))
        assert runs[0] == runs[1] == runs[2]
        d = np.abs(q[:, None, 0] - c[None, :, 0]) + (q[:, None, 1:] != c[None, :, 1:]).sum(axis=2)
        assert (d[np.arange(300), runs[0][0]] == d.min(axis=1)).all()  # each pick is a nearest record
        tied = d == d.min(axis=1, keepdims=True)  # the expected hit: the share of nearest records with the truth
        want = (tied & (secrets[0][None, :] == truth[:, None])).sum(axis=1) / tied.sum(axis=1)
        assert np.allclose(runs[0][1], want)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), width=st.integers(1, 3))
def test_the_indexed_singling_out_counts_equal_the_dense_ones(seed: int, width: int) -> None:
    """Issue 67: on a large original the predicates are counted through a sorted index per
    column (the most selective term's candidates, then the others); every operator, missing
    values and values absent from the table give the dense evaluation's counts."""
    from versapub.verify.adversary.adversary_singling import Encoded, Predicates, _Index, counts

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    values = {}
    for c, card in (("a", 3), ("b", 7), ("x", 40)):
        v = rng.integers(0, card, n).astype(np.float64)
        v[rng.random(n) < 0.1] = np.nan
        values[c] = v
    t = Encoded(("a", "b", "x"), frozenset({"x"}), values, n)
    k = 50
    col = rng.integers(0, 3, (k, width))
    op = rng.integers(0, 6, (k, width))
    val = rng.integers(-1, 41, (k, width)).astype(np.float64)
    val[rng.random((k, width)) < 0.1] = np.nan
    op = np.where(np.isnan(val), np.minimum(op, 1), op)
    p = Predicates(col, op, val)
    assert (counts(p, t, _Index(t)) == counts(p, t)).all()
