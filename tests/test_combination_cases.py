"""The combinations that broke (issues 63 and 71), each on a small table built here that
reproduces it: every one publishes a release that ``check`` accepts, or is refused in one
paragraph with a way out that works when followed as written.  The real case each stands
for is in its docstring (no file here is from a user)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli

from .conftest import seal


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def write(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def published(args: list[str], out: Path, k: int | None = None) -> None:
    """``publish`` exits 0 (or 6) and ``check`` (with ``--k``) accepts what it wrote."""
    code, _, err = run("publish", *args, "--out", str(out))
    assert code in (0, 6), err
    code, stdout, _ = run("check", str(out), *(["--k", str(k)] if k else []))
    assert code in (0, 6), stdout


def refused(args: list[str], out: Path, *said: str) -> str:
    """``publish`` exits 2 with one ``error:`` paragraph naming ``said``; nothing written."""
    code, _, err = run("publish", *args, "--out", str(out))
    assert code == 2, err
    text = [line for line in err.splitlines() if line.strip() and not line.startswith("[")]
    assert text and text[0].startswith("error:") and sum(t.startswith("error:") for t in text) == 1, err
    assert "Traceback" not in err and not out.exists()
    said_all = " ".join(text)  # one paragraph, or one numbered section per problem (every problem at once)
    for s in said:
        assert s in said_all, said_all
    return said_all


# ---------------------------------------------------------------------------------- crashes


@pytest.mark.parametrize("name", ["c", "C", "rid", "cid"])
@pytest.mark.parametrize("anonymizer", ["mondrian", "incognito", "one-d-l-diversity"])
def test_a_column_named_like_the_verifiers_own_publishes(tmp_path: Path, name: str, anonymizer: str) -> None:
    """Issue 71, item 1: 60 records ``a`` (20-40), ``c`` (x/y/z), ``dis`` (p/q/r) and
    ``--qi a,c --sensitive dis --l 2 --anonymizer mondrian`` ended in ``ValueError: invalid
    literal for int()`` (the verifier's count column ``c`` collided with the attribute; ``C``:
    ``KeyError``, DuckDB's names being case-insensitive)."""
    rng = np.random.default_rng(3)
    rows = [[int(rng.integers(20, 41)), "xyz"[i % 3], "pqr"[int(rng.integers(0, 3))]] for i in range(60)]
    data = write(tmp_path / "t.csv", ["a", name, "dis"], rows)
    published(["--input", str(data), "--qi", f"a,{name}", "--sensitive", "dis", "--l", "2",
               "--anonymizer", anonymizer, "--no-utility"], tmp_path / "r")  # fmt: skip
    # the same name as the sensitive attribute
    data = write(tmp_path / "s.csv", ["a", "b", name], rows)
    published(["--input", str(data), "--qi", "a,b", "--sensitive", name, "--l", "2",
               "--anonymizer", anonymizer, "--no-utility"], tmp_path / "s")  # fmt: skip


@pytest.mark.parametrize("name", ["c", "C"])
def test_multi_sa_with_a_sensitive_column_named_like_the_verifiers_count(tmp_path: Path, name: str) -> None:
    """This stop's sweep (issue 63): ``--decomposition multi-sa`` with rules ``order -> C`` and
    ``r -> order`` ended in exit 70 — the verifier's grouped bound summed its own count column
    ``c`` in a table holding an attribute ``C`` (DuckDB's names are case-insensitive:
    ``sum(VARCHAR)``). The count now takes a name no attribute has."""
    rows = [[63, 61, 32, 48, 53, 40], [65, 76, 48, 55, 61, 35], [66, 87, 59, 55, 60, 37]]
    data = write(tmp_path / "t.csv", ["order", "r", "position", "age", "k", name], rows)
    args = ["--input", str(data), "--seed", "0", "--rule", f"order -> {name}", "--rule", "r -> order"]
    published([*args, "--others", "insensitive", "--decomposition", "multi-sa", "--no-utility"], tmp_path / "out")


def test_aim_with_fewer_rounds_than_columns_is_refused(tmp_path: Path) -> None:
    """Issue 71, item 2: ``select=aim,rounds=1`` on 2 columns ended in ``math domain error``
    (the one-way measurements alone spend more than the budget)."""
    data = write(tmp_path / "t.csv", ["x", "y"], [[i % 3, i % 2] for i in range(50)])
    args = ["--input", str(data), "--mechanism", "dp:epsilon=1,delta=1e-6,select=aim,rounds=1",
            "--domain", "x=0..2", "--domain", "y=0..1"]  # fmt: skip
    refused(args, tmp_path / "r", "rounds of at least 3")
    published([*args[:3], "dp:epsilon=1,delta=1e-6,select=aim,rounds=3", *args[4:]], tmp_path / "ok")


# ------------------------------------------------------------- releases the verifier rejected


def test_k_on_a_plain_table_holding_a_sensitive_attribute(tmp_path: Path) -> None:
    """Issue 71, item 3 (and the 64,600-record survey of issue 63): T2 holding ``s2`` alone
    was generalized by Mondrian to meet ``--k 3`` and then held by the verifier to the
    release's l-diversity: ``3 of 3 equivalence classes violate l-diversity``. The table
    carries the guarantee it was built for (k-anonymity of its columns)."""
    rng = np.random.default_rng(1)
    rows = [["ab"[i % 2], "xy"[i // 2 % 2], f"s{rng.integers(0, 4)}", "rare" if i < 2 else f"n{i % 3}"]
            for i in range(60)]  # fmt: skip
    data = write(tmp_path / "t.csv", ["a", "b", "s1", "s2"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--rule", "a, b -> s1", "--rule", "a, b -> s2", "--l", "2", "--k", "3",
               "--no-utility"], out, k=3)  # fmt: skip
    m = json.loads((out / "manifest.json").read_text())
    floored = [t for t in m["tables"] if t.get("guarantee")]
    assert floored and all(t["guarantee"] == {"name": "k-anonymity", "k": 3} for t in floored)


def test_a_forged_table_guarantee_fails(tmp_path: Path) -> None:
    """A table that enforces no rule may declare only k-anonymity (what flooring builds)."""
    rows = [["ab"[i % 2], "xy"[i // 2 % 2], f"s{i % 4}", "rare" if i < 2 else f"n{i % 3}"] for i in range(60)]
    data = write(tmp_path / "t.csv", ["a", "b", "s1", "s2"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--rule", "a, b -> s1", "--rule", "a, b -> s2", "--l", "2", "--k", "3",
               "--no-utility"], out)  # fmt: skip
    m = json.loads((out / "manifest.json").read_text())
    t = next(t for t in m["tables"] if t.get("guarantee"))
    t["guarantee"] = {"name": "l-diversity", "l": 1}
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    code, stdout, _ = run("check", str(out))
    assert code == 1 and "a table's own guarantee is k-anonymity" in stdout


def test_a_microaggregated_quasi_identifier_under_mondrian(tmp_path: Path) -> None:
    """Issue 71, item 4: 120 records, ``--qi age,sex --sensitive disease --l 2 --anonymizer
    mondrian --treat microaggregation:columns=age,k=4``: Mondrian split microaggregation
    groups and the verifier counted its ranges as microaggregated values (``5 published
    combination(s) of ['age'] held by fewer than 4 records``)."""
    rng = np.random.default_rng(4)
    rows = [[int(rng.integers(20, 71)), "FM"[int(rng.integers(0, 2))], f"d{rng.integers(0, 4)}"] for _ in range(120)]
    data = write(tmp_path / "t.csv", ["age", "sex", "disease"], rows)
    published(["--input", str(data), "--qi", "age,sex", "--sensitive", "disease", "--l", "2", "--anonymizer",
               "mondrian", "--treat", "microaggregation:columns=age,k=4", "--no-utility"], tmp_path / "r")  # fmt: skip


def _five(tmp_path: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    rows = [["12"[int(rng.integers(0, 2))], ("single", "married", "widowed")[int(rng.integers(0, 3))],
             "ABCD"[int(rng.integers(0, 4))], ("low", "mid", "high", "top")[int(rng.integers(0, 4))],
             f"d{rng.integers(1, 6)}"] for _ in range(150)]  # fmt: skip
    return write(tmp_path / f"t{seed}.csv", ["sex", "Status", "city", "income band", "drug"], rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_gd_mondrian_and_k_is_refused_with_ways_out_that_work(tmp_path: Path, seed: int) -> None:
    """Issue 71, item 5: 150 records, ``--anonymizer mondrian --decomposition gd --k 5`` with
    three rules ended in ``the tables cannot be read as one collection: in table T1, two values
    of 'sex' cover the leaf '2'`` (GD shares attributes between tables; Mondrian's ranges
    overlap). Refused before anonymizing; both ways out publish."""
    data = _five(tmp_path, seed)
    job = ["--input", str(data), "--rule", "Status -> income band", "--rule", "income band, Status -> drug",
           "--rule", "sex, income band -> drug", "--l", "2", "--k", "5", "--others", "insensitive",
           "--no-utility"]  # fmt: skip
    refused([*job, "--anonymizer", "mondrian", "--decomposition", "gd"], tmp_path / "r",
            "--anonymizer incognito", "--decomposition uad")  # fmt: skip
    published([*job, "--anonymizer", "incognito", "--decomposition", "gd"], tmp_path / "a", k=5)
    published([*job, "--anonymizer", "mondrian", "--decomposition", "uad"], tmp_path / "b", k=5)


@pytest.mark.parametrize("retentions", [(0.7, 0.95), (0.9, 0.9)])
@pytest.mark.parametrize("invariant", ["", ",invariant=true"])
def test_a_column_treated_twice(tmp_path: Path, retentions: tuple[float, float], invariant: str) -> None:
    """Issue 71, item 6: two PRAMs of one column (retention 0.7 then 0.95): the verifier
    compared the first's declared changes with all changes (``13 declared, but the files show
    17 records moved``), or tested an invariant PRAM's stationary distribution after a later
    treatment changed the column. Checked against the original too."""
    rng = np.random.default_rng(6)
    rows = [[int(rng.integers(20, 60)), "FM"[int(rng.integers(0, 2))], f"c{rng.choice(4, p=[0.85, 0.05, 0.05, 0.05])}",
             f"d{rng.integers(0, 4)}"] for _ in range(300)]  # fmt: skip
    data = write(tmp_path / "t.csv", ["age", "sex", "city", "disease"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--rule", "age, sex -> disease", "--insensitive", "city",
               "--treat", f"pram:columns=city,retention={retentions[0]}{invariant}",
               "--treat", f"pram:columns=city,retention={retentions[1]}", "--seed", "2",
               "--no-utility"], out)  # fmt: skip
    code, stdout, _ = run("check", str(out), "--original", str(data))
    assert code in (0, 6), stdout


def test_microaggregation_twice_and_after_rank_swapping(tmp_path: Path) -> None:
    """Microaggregation, then microaggregation again or rank swapping of the same column: each
    claim read where the files can bear it out."""
    rng = np.random.default_rng(7)
    rows = [[int(rng.integers(20, 80)), int(rng.integers(1000, 9000)), f"d{rng.integers(0, 4)}"] for _ in range(200)]
    data = write(tmp_path / "t.csv", ["age", "income", "disease"], rows)
    for second in (
        "microaggregation:columns=income,k=2,method=individual-ranking",
        "rank-swapping:columns=income,p=10",
    ):
        out = tmp_path / second.split(":")[0]
        published(["--input", str(data), "--rule", "age -> disease", "--insensitive", "income",
                   "--treat", "microaggregation:columns=income,k=3", "--treat", second, "--seed", "1",
                   "--no-utility"], out)  # fmt: skip
        code, stdout, _ = run("check", str(out), "--original", str(data))
        assert code in (0, 6), stdout


def test_msa_decomposition_with_removal(tmp_path: Path) -> None:
    """Issue 71, item 7: ``--qi sex,city --sensitive "income band:2,proc" --anonymizer
    msa-decomposition:above_l_per=true --max-risk 0.5 --suppression 0.2`` on 800 records:
    ``[grouping T1] only 717 of 800 input records fit a group`` (the grouping check expected
    every input record, the removed ones too)."""
    rng = np.random.default_rng(8)
    rows = [["FM"[int(rng.integers(0, 2))], f"city{min(int(rng.zipf(1.7)), 80)}",
             ("low", "mid", "high")[int(rng.integers(0, 3))], f"p{rng.integers(0, 6)}"]
            for _ in range(800)]  # fmt: skip
    data = write(tmp_path / "t.csv", ["sex", "city", "income band", "proc"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--qi", "sex,city", "--sensitive", "income band:2,proc", "--anonymizer",
               "msa-decomposition:above_l_per=true", "--max-risk", "0.5", "--suppression", "0.2",
               "--no-utility"], out)  # fmt: skip
    assert json.loads((out / "manifest.json").read_text())["removed"]["records"] > 0
    code, stdout, _ = run("check", str(out), "--original", str(data))
    assert code in (0, 6), stdout


def test_msa_rule_between_two_sensitive_attributes_is_refused(tmp_path: Path) -> None:
    """A rule whose left-hand side is another rule's sensitive attribute, in one MSA table:
    ``T^S`` publishes their joint exactly (the exact attack then found ``(v=v3) -> city in
    {12}``); refused before anonymizing, and the way out (the default anonymizer) publishes."""
    rng = np.random.default_rng(9)
    rows = [[f"v{rng.integers(0, 4)}", str(rng.integers(10, 25)), str(rng.integers(1000, 1200))] for _ in range(90)]
    data = write(tmp_path / "t.csv", ["v", "city", "s"], rows)
    job = ["--input", str(data), "--rule", "v -> city", "--rule", "s -> v", "--others", "insensitive", "--no-utility"]
    refused([*job, "--anonymizer", "msa-decomposition"], tmp_path / "r", "rule 'v -> city'", "default anonymizer")
    published(job, tmp_path / "ok")


@pytest.mark.parametrize("select", ["auto", "mst", "given,marginals=age+sex"])
def test_dp_on_a_one_record_file(tmp_path: Path, select: str) -> None:
    """Issue 71, item 8: DP on a one-record file failed 2 runs in 16 (``expected counts are
    non-negative and sum to 1.00``: the fitted tables' rounding to 1e-9 records over their
    cells outgrew the verifier's tolerance)."""
    data = write(tmp_path / "t.csv", ["age", "sex"], [[34, "F"]])
    (tmp_path / "sex.txt").write_text("F\nM\n")
    for i in range(6):
        published(["--input", str(data), "--mechanism", f"dp:epsilon=1,delta=1e-9,select={select}",
                   "--domain", "age=0..99", "--domain", f"sex={tmp_path / 'sex.txt'}"], tmp_path / f"r{i}")  # fmt: skip


# ------------------------------------------------------------------ options ignored, unbounded


def test_options_that_would_do_nothing_are_refused(tmp_path: Path) -> None:
    """Issue 71, item 9, and issue 63: ``--domain nosuch=...`` and ``--suppression`` without
    a floor were accepted and did nothing; ``--domain age=0..9999999`` ran past 300 s; a
    treatment of a column declared identifying was accepted."""
    rows = [[20 + i % 40, "FM"[i % 2], f"d{i % 4}"] for i in range(80)]
    data = write(tmp_path / "t.csv", ["age", "sex", "disease"], rows)
    (tmp_path / "sex.txt").write_text("F\nM\n")
    (tmp_path / "dis.txt").write_text("d0\nd1\nd2\nd3\n")
    dp = ["--input", str(data), "--mechanism", "dp:epsilon=1,delta=1e-9", "--domain", f"sex={tmp_path / 'sex.txt'}",
          "--domain", f"disease={tmp_path / 'dis.txt'}"]  # fmt: skip
    refused([*dp, "--domain", "age=0..99", "--domain", f"nosuch={tmp_path / 'sex.txt'}"], tmp_path / "a", "'nosuch'")
    refused([*dp, "--domain", "age=0..9999999"], tmp_path / "b", "'age' is declared with 10,000,000 values")
    job = ["--input", str(data), "--no-utility"]
    refused([*job, "--rule", "age, sex -> disease", "--suppression", "0.05"], tmp_path / "c", "--suppression 0.05")
    refused([*job, "--identifying", "sex", "--rule", "age -> disease", "--treat", "pram:columns=sex,retention=0.9"],
            tmp_path / "d", "'sex'", "identifying")  # fmt: skip


def test_allow_unique_with_a_floor_that_generalizes_it(tmp_path: Path) -> None:
    """Issue 71, item 10: ``--allow-unique COLUMN`` ("publishes ... as it is") with ``--k``:
    the column was recoded to ``*`` without a word. Refused; the way out it names (a
    hierarchy applied when read, in place of ``--allow-unique``) publishes."""
    rng = np.random.default_rng(10)
    rows = [[int(rng.integers(20, 70)), "FM"[int(rng.integers(0, 2))], 1000 + 7 * i, f"d{rng.integers(0, 4)}"]
            for i in range(120)]  # fmt: skip
    data = write(tmp_path / "t.csv", ["age", "sex", "score", "disease"], rows)
    job = ["--input", str(data), "--rule", "age, sex -> disease", "--others", "insensitive", "--k", "3", "--no-utility"]
    said = refused([*job, "--allow-unique", "score"], tmp_path / "r", "--allow-unique", "'score'")
    assert "--hierarchy score=FILE:LEVEL" in said
    assert run("hierarchy", "build", str(data), "--column", "score", "--intervals", "100,400",
               "--out", str(tmp_path / "h.csv"))[0] == 0  # fmt: skip
    published([*job, "--hierarchy", f"score={tmp_path / 'h.csv'}:1"], tmp_path / "ok", k=3)
    assert "--keys" in said  # and the key variables without it (issue 65): score stays as it is
    published([*job, "--allow-unique", "score", "--keys", "age,sex"], tmp_path / "keys", k=3)
    assert pd.read_csv(tmp_path / "keys" / "T1_qit.csv")["score"].nunique() == 120


def _dp_release(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(11)
    rows = [[int(rng.integers(20, 60)), "FM"[int(rng.integers(0, 2))]] for _ in range(300)]
    data = write(tmp_path / "t.csv", ["age", "sex"], rows)
    (tmp_path / "sex.txt").write_text("F\nM\n")
    out = tmp_path / "dp"
    published(["--input", str(data), "--mechanism", "dp:epsilon=1,delta=1e-9,select=given,marginals=age+sex;age",
               "--domain", "age=20..59", "--domain", f"sex={tmp_path / 'sex.txt'}"], out)  # fmt: skip
    return out, data


def test_check_k_on_a_dp_release_says_it_has_no_meaning(tmp_path: Path) -> None:
    """Issue 71, item 11: ``check --k 5`` on a DP release failed ``the tables are not
    marginals of one table`` (noisy tables disagree by design)."""
    out, _ = _dp_release(tmp_path)
    code, stdout, _ = run("check", str(out), "--k", "5")
    assert code in (0, 6) and "--k 5 has no meaning here" in stdout


# ------------------------------------------------------------------ the verifier's blind spots


def test_a_ledger_whose_steps_do_not_add_up_fails(tmp_path: Path) -> None:
    """Issue 71, item 12: one step's rho halved (its sigma raised to match), ``spent_rho``
    kept, digests recomputed: passed. The steps must add up to ``spent_rho``."""
    out, _ = _dp_release(tmp_path)
    m = json.loads((out / "manifest.json").read_text())
    step = m["mechanism"]["ledger"]["measurements"][0]
    step["rho"], step["sigma"] = step["rho"] / 2, step["sigma"] * math.sqrt(2)
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    code, stdout, _ = run("check", str(out))
    assert code == 1 and "the ledger states spent_rho" in stdout


@pytest.mark.parametrize("forgery", ["exact", "shrunk"])
def test_noise_replaced_or_shrunk_fails_with_the_original(tmp_path: Path, forgery: str) -> None:
    """Issue 71, item 13: noisy tables replaced by the exact counts (or the noise divided by
    10), digests recomputed: passed even with ``--original``. With the input the verifier
    tests each table's deviations against the ledger's scale; the genuine release passes."""
    out, data = _dp_release(tmp_path)
    code, stdout, _ = run("check", str(out), "--original", str(data), "--json")
    assert code in (0, 6) and "over every noisy table the deviations have the stated scale" in stdout
    ages = [r[0] for r in csv.reader((data).open())][1:]
    sexes = [r[1] for r in csv.reader((data).open())][1:]
    truth: dict[tuple[str, ...], int] = {}
    for a, s in zip(ages, sexes, strict=True):
        for key in ((a, s), (a,)):
            truth[key] = truth.get(key, 0) + 1
    m = json.loads((out / "manifest.json").read_text())
    for t in m["tables"]:
        if t["kind"] != "noisy":
            continue
        path = out / t["files"]["data"]
        rows = list(csv.reader(path.open()))
        for r in rows[1:]:
            true = truth.get(tuple(r[:-1]), 0)
            r[-1] = str(true if forgery == "exact" else true + round((int(r[-1]) - true) / 10))
        write(path, rows[0], rows[1:])  # type: ignore[arg-type]
    seal(out)
    code, stdout, _ = run("check", str(out), "--original", str(data))
    assert code == 1 and "the noise is not what the ledger says" in stdout


def test_a_value_rules_changed_count_is_recounted(tmp_path: Path) -> None:
    """Issue 71, item 14: a top-coding's ``changed`` raised by 5 passed; it is a function of
    the original, so ``check --original`` recounts it (before and after a rounding)."""
    rng = np.random.default_rng(14)
    rows = [[int(rng.integers(20, 70)), "FM"[int(rng.integers(0, 2))], f"d{rng.integers(0, 4)}"] for _ in range(200)]
    data = write(tmp_path / "t.csv", ["age", "sex", "disease"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--rule", "sex -> disease", "--insensitive", "age", "--treat",
               "top-coding:columns=age,quantile=0.9", "--treat", "rounding:columns=age,base=5",
               "--no-utility"], out)  # fmt: skip
    code, stdout, _ = run("check", str(out), "--original", str(data), "--json")
    assert code in (0, 6) and "declared changed, as the input shows" in stdout
    m = json.loads((out / "manifest.json").read_text())
    m["treatments"][0]["changed"]["age"] += 5
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    code, stdout, _ = run("check", str(out), "--original", str(data))
    assert code == 1 and "but the rule changes" in stdout


def test_a_suppression_share_raised_with_its_budget_fails(tmp_path: Path) -> None:
    """Issue 71, item 15: the ``removed`` block's share raised (0.5 for 0.05) with its budget
    recomputed passed; the manifest records the job's request (``job``) and the verifier
    compares the two."""
    rng = np.random.default_rng(15)
    rows = [[f"a{int(rng.integers(0, 3))}" if i > 3 else "rare", "FM"[i % 2], f"d{rng.integers(0, 5)}"]
            for i in range(300)]  # fmt: skip
    data = write(tmp_path / "t.csv", ["age", "sex", "disease"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--rule", "age, sex -> disease", "--k", "6", "--suppression", "0.05",
               "--no-utility"], out)  # fmt: skip
    m = json.loads((out / "manifest.json").read_text())
    assert m["removed"]["table"] is None and m["job"] == {
        "floor": 6,
        "suppression": 0.05,
        "keys": None,
        "suppression_mode": "remove",
    }
    m["removed"]["suppression"] = 0.5
    m["removed"]["budget"] = math.floor(0.5 * m["removed"]["input_records"])
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    code, stdout, _ = run("check", str(out))
    assert code == 1 and "the job's suppression is 0.05, the removed block says 0.5" in stdout


# ----------------------------------------------------------------------- issue 63's own cases


def test_microaggregation_k_after_suppression_is_said_plainly(tmp_path: Path) -> None:
    """Issue 63: 120 records, ``--treat "microaggregation:columns=inc,k=8" --k 3 --suppression
    0.2``: ALL CHECKS PASSED while values of ``inc`` were held by 6 records (suppression
    removed records from the groups; the verifier required "k = 8 less the 10 removed"). The
    release now declares the smallest published group (``published_k``), warns, and the
    verifier checks that figure and flags it for attention."""
    rng = np.random.default_rng(63)
    rows = [
        [
            "a0" if i >= 10 else f"r{i}",  # ten ages held by one record each; every other cell is a whole group
            "F",
            int(rng.integers(500, 9000)),
            f"d{rng.integers(0, 4)}",
        ]
        for i in range(120)
    ]  # fmt: skip  (ten ages held by one record each)
    data = write(tmp_path / "t.csv", ["age", "sex", "inc", "disease"], rows)
    out = tmp_path / "r"
    code, _, err = run("publish", "--input", str(data), "--rule", "age, sex -> disease", "--insensitive", "inc",
                       "--treat", "microaggregation:columns=inc,k=8", "--k", "3", "--suppression", "0.2",
                       "--no-utility", "--out", str(out))  # fmt: skip
    assert code in (0, 6), err
    m = json.loads((out / "manifest.json").read_text())
    record = m["treatments"][0]
    assert m["removed"]["records"] >= 10
    counts: dict[str, int] = {}
    t = next(t for t in m["tables"] if "inc" in t["attributes"])
    for r in csv.DictReader((out / next(iter(t["files"].values()))).open()):
        counts[r["inc"]] = counts.get(r["inc"], 0) + int(r["count"])
    smallest = min(counts.values())
    assert smallest < 8 and record["published_k"] == smallest  # the groups lost records, and the release says so
    assert any("published_k" in w for w in m["warnings"])
    code, stdout, _ = run("check", str(out))
    assert code == 6 and "suppression removed records of its groups afterwards" in stdout


def test_a_query_with_a_range_on_a_many_valued_column(tmp_path: Path) -> None:
    """Issue 63: ``query`` on a Mondrian release of a 51,920-record police-stop file, ``date
    BETWEEN '2017-06-01' AND '2017-06-30' AND personSearch = 'YES'``: ``internal error:
    JoinTooLarge`` (the date is a time stamp to the second: the joint of date and
    personSearch expanded to 76 million rows). Ranges are answered by message passing, OR and
    NOT by inclusion-exclusion: each estimate lies in its range and equals the marginal's."""
    from versapub.datasets.synthetic import stops, write_csv

    data = tmp_path / "stops.csv"
    write_csv(stops(3000, seed=1), str(data))
    out = tmp_path / "r"
    code, _, err = run("publish", "--input", str(data), "--qi", "date,preRace,gender,ageBand", "--sensitive",
                       "personSearch", "--guarantee", "t-closeness:t=0.3", "--anonymizer", "mondrian", "--others",
                       "insensitive", "--missing", "value", "--no-utility", "--out", str(out))  # fmt: skip
    assert code in (0, 6), err
    for q in (
        "date BETWEEN '2017-06-01' AND '2017-06-30' AND personSearch = 'YES'",
        "date BETWEEN '2017-06-01' AND '2017-06-30' OR personSearch = 'YES'",
        "NOT (date < '2017-03-01') AND (personSearch = 'YES' OR gender = 'Female')",
    ):
        code, stdout, err = run("query", str(out), q, "--original", str(data))
        assert code == 0, err
        assert "inside the range" in stdout, stdout


def test_inclusion_exclusion_equals_the_marginal() -> None:
    """OR and NOT answered by inclusion-exclusion over ANDs equal the model's marginal (a
    brute-force oracle on a small release of every kind)."""
    import versapub
    from versapub.kinds.build import model_from_release
    from versapub.model.query import count, parse_query

    rng = np.random.default_rng(5)
    data = {
        "a": [str(v) for v in rng.integers(0, 5, 200)],
        "b": [str(v) for v in rng.integers(0, 3, 200)],
        "s": [f"s{v}" for v in rng.integers(0, 4, 200)],
    }
    for anon in ("anatomy", "mondrian"):
        rel = versapub.publish(data, ["a, b -> s"], l=2, anonymizer=anon, seed=1)
        model = model_from_release(rel)
        for text in (
            "a < '2' OR s = 's1'",
            "NOT (a = '1') AND (b = '0' OR s IN ('s0', 's2'))",
            "NOT b BETWEEN '1' AND '2'",
        ):
            q = parse_query(text)
            m = model.marginal(q.attributes)
            mask = q.mask(model.domains, dict(zip(m.attrs, m.codes, strict=True)))
            assert count(model, q) == pytest.approx(model.n * m.values[mask].sum(), rel=1e-9, abs=1e-9), (anon, text)


def test_top_coding_then_a_recoded_label_across_the_threshold(tmp_path: Path) -> None:
    """The long sweep's case (issue 63): age top-coded at its 0.9 quantile (65), then recoded
    to level 2 of the steward's hierarchy to meet --k 2; the label '[60, 80[' covers leaves
    above 65 that no record holds any more. The verifier read the label's 80 as a published
    value above the threshold (exit 3); a label obeys a value rule when a leaf it covers does."""
    text = "63,v3,v4,F,v2 65,v0,v0,M,v1 66,v1,v6,M,v2 55,v0,v1,M,v0 60,v1,v0,F,v1 54,v3,v3,F,v2 57,v0,v6,M,v2 "
    text += "55,v0,v2,M,v0 62,v1,v6,F,v2 65,v0,v2,F,v2 62,v0,v2,F,v2 58,v2,v3,M,v0"
    rows = [r.split(",") for r in text.split()]
    data = write(tmp_path / "t.csv", ["age", "sex", "zip", "income", "disease"], rows)
    levels = {54: "[50, 55[", 55: "[55, 60[", 57: "[55, 60[", 58: "[55, 60[", 60: "[60, 65[", 62: "[60, 65[",
              63: "[60, 65[", 65: "[65, 70[", 66: "[65, 70["}  # fmt: skip
    (tmp_path / "h0.csv").write_text(
        "".join(f"{a};{b};{'[40, 60[' if a < 60 else '[60, 80['};*\n" for a, b in levels.items())
    )
    out = tmp_path / "r"
    published(["--input", str(data), "--seed", "0", "--rule", "age -> sex | l-diversity:l=2", "--others",
               "insensitive", "--hierarchy", f"age={tmp_path / 'h0.csv'}", "--k", "2", "--treat",
               "top-coding:columns=age,quantile=0.9", "--no-utility"], out, k=2)  # fmt: skip
    code, stdout, _ = run("check", str(out), "--original", str(data), "--k", "2")
    assert code in (0, 6), stdout


def test_a_combination_no_possible_world_holds_is_no_target(tmp_path: Path) -> None:
    """The long sweep's case (issue 63): four records, GD, rules ``sex -> age``, ``sex, zip ->
    age`` and ``zip -> sex``; publish exited 0 and ``check`` failed it: without the original,
    the scalable attack's targets for a left-hand side spanning tables are the values seen
    apart, and (sex=5, zip=34) — a combination no world consistent with the release holds —
    was 'disclosed' with no possible value. No one holds it: it is no target."""
    data = write(tmp_path / "t.csv", ["age", "sex", "zip"], [[63, 6, 36], [65, 7, 34], [66, 6, 31], [55, 5, 31]])
    rules = ["--rule", "sex -> age", "--rule", "sex, zip -> age", "--rule", "zip -> sex"]
    published(["--input", str(data), "--seed", "0", *rules, "--others", "insensitive", "--decomposition", "gd",
               "--no-utility"], tmp_path / "r")  # fmt: skip


def test_local_suppression_keeps_microaggregation_groups_whole(tmp_path: Path) -> None:
    """The long sweep's case (issues 63/65): age microaggregated in pairs (k = 2), then --k 2
    on the keys age, zip, income in cells mode: local suppression emptied microaggregated ages,
    leaving a published mean held by one record (exit 3: 'published combination(s) of
    ['age'] held by fewer than 2 records'), and the verifier compared a treated column's
    values with the untreated input. A microaggregated key keeps its groups whole (the other
    keys are suppressed), and a treated column's suppression is checked from the files."""
    rng = np.random.default_rng(6)
    rows = [[int(rng.integers(29, 33)), int(rng.integers(50, 80)), int(rng.integers(20, 50)), f"v{rng.integers(0, 2)}",
             int(rng.integers(10, 15)), int(rng.integers(45, 55))] for _ in range(200)]  # fmt: skip
    data = write(tmp_path / "t.csv", ["age", "sex", "zip", "income", "disease", "city"], rows)
    out = tmp_path / "r"
    published(["--input", str(data), "--seed", "0", "--rule", "age -> sex", "--others", "insensitive", "--k", "2",
               "--keys", "age,zip,income", "--suppression-mode", "cells", "--treat", "microaggregation:columns=age,k=2",
               "--no-utility"], out, k=2)  # fmt: skip
    m = json.loads((out / "manifest.json").read_text())
    assert m["suppressed"]["cells"].get("age", 0) == 0 and m["suppressed"]["records"] > 0
    code, stdout, _ = run("check", str(out), "--original", str(data), "--k", "2")
    assert code in (0, 6), stdout


def test_a_noised_key_suppressed_locally(tmp_path: Path) -> None:
    """The long sweep's case (issues 63/65): disease (numeric) noised, then --k 2 on the key
    disease in cells mode: local suppression emptied a noised value and the verifier counted it
    as a record the noise moved beyond what the treatment declared (exit 3). The values the
    release suppressed are part of what the files may show changed."""
    data = Path(__file__).parent / "fixtures" / "sweep_noised_key.csv"  # the sweep's 89 records, as drawn
    published(["--input", str(data), "--seed", "0", "--rule", "sex -> age", "--others", "insensitive", "--k", "2",
               "--keys", "disease", "--suppression-mode", "cells", "--treat", "noise:columns=zip;disease,magnitude=5",
               "--no-utility"], tmp_path / "r", k=2)  # fmt: skip
    code, stdout, _ = run("check", str(tmp_path / "r"), "--original", str(data), "--k", "2")
    assert code in (0, 6), stdout


def test_a_column_named_w_beside_rules_and_a_floor(tmp_path: Path) -> None:
    """The long sweep's case (issue 71 item 1's family): a column named ``w`` crashed the
    verifier's posterior estimate (its weight column had the same name: exit 70). Every
    internal column takes a name no attribute has."""
    data = write(tmp_path / "t.csv", ["age", "sex", "zip", "w", "income", "disease"],
                 [[63, 61, 32, 48, 53, 40], [65, 76, 48, 55, 61, 35], [66, 87, 59, 55, 60, 37]])  # fmt: skip
    rules = ["--rule", "sex -> age", "--rule", "w -> age", "--rule", "income -> zip"]
    published(["--input", str(data), "--seed", "0", *rules, "--others", "insensitive", "--k", "2", "--no-utility"],
              tmp_path / "r", k=2)  # fmt: skip


def test_a_rule_attack_on_a_dp_release_with_no_record_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The long sweep's case (issue 63): epsilon = 0.0001 on 30 records with a rule: the
    fitted model held almost no record, none was drawn, and the rule's inference attack took
    the minimum of an empty array (exit 70, 3 publishes in 30). A rule with nothing drawn to
    read is not attacked; the release publishes. (The draw is made empty here on purpose: the
    mechanism's own noise is secret and decides it only sometimes.)"""
    import numpy as np_

    import versapub.verify.check as check_module
    from versapub.verify.adversary.adversary_records import Drawn

    real = check_module.drawers

    def empty() -> dict[str, object]:
        def draw(directory: Path, entry: dict, rng: object, limit: int, redraws: int) -> Drawn:
            cols = entry.get("attributes") or []
            return Drawn({str(c): np_.zeros(0, dtype=object) for c in cols})

        return {kind: draw for kind in real()}

    monkeypatch.setattr(check_module, "drawers", empty)
    rows = [["MF"[i % 2], "FM"[(i // 3) % 2]] for i in range(30)]
    data = write(tmp_path / "t.csv", ["pos", "pv"], rows)
    (tmp_path / "d.txt").write_text("F\nM\n")
    code, _, err = run("publish", "--input", str(data), "--mechanism", "dp:epsilon=0.0001,delta=1e-09,select=auto",
                       "--rule", "pos -> pv", "--domain", f"pos={tmp_path / 'd.txt'}", "--domain",
                       f"pv={tmp_path / 'd.txt'}", "--out", str(tmp_path / "r"))  # fmt: skip
    assert code in (0, 6), err


@pytest.mark.parametrize("name", ["pv", "f", "l", "leaf", "position"])
def test_a_column_named_like_the_verifiers_run_columns(tmp_path: Path, name: str) -> None:
    """The long sweep's case (issue 71 item 1's family): Sequential Sweep on three records with
    a column named ``pv``: the verifier's posterior bound and the induced-frequency check
    joined the table with their own runs (``pv``, ``f``, ``l``) and the name was ambiguous
    (exit 70). Every column is read through its table's alias."""
    data = write(tmp_path / "t.csv", ["age", "sex", "zip", "income", name],
                 [[63, 61, 32, 48, 53], [65, 76, 48, 55, 61], [66, 87, 59, 55, 60]])  # fmt: skip
    published(["--input", str(data), "--seed", "0", "--rule", "age -> sex", "--others", "insensitive",
               "--anonymizer", "sequential-sweep", "--no-utility"], tmp_path / "r")  # fmt: skip


def test_removal_that_would_make_a_rule_infeasible_is_refused(tmp_path: Path) -> None:
    """The long sweep's case (issue 63): 24 records, ``sex -> age``, --k 2 --suppression 0.1:
    the record removed for the floor left 'v0' in 12 of the 23 others (52 %, above 1/l) and
    the release failed its own posterior check (exit 3). Refused before anonymizing, with the
    way out that works as written: without --suppression the release publishes."""
    data = Path(__file__).parent / "fixtures" / "sweep_suppression_feasibility.csv"  # the sweep's records, as drawn
    job = ["--input", str(data), "--seed", "0", "--rule", "sex -> age", "--others", "insensitive", "--k", "2",
           "--no-utility"]  # fmt: skip
    said = refused([*job, "--suppression", "0.1"], tmp_path / "no", "Publish without --suppression")
    assert "12 of 23 records" in said
    published(job, tmp_path / "ok", k=2)


def test_gd_add_back_never_publishes_a_cell_below_the_floor(tmp_path: Path) -> None:
    """The third long sweep's case (issue 63): GD's add-back put ``age`` beside ``income`` in
    an Anatomy table, whose QIT then published ``(age, income)`` exactly with every record
    alone — a floor the recoding, met on the schema before the add-back, never saw (exit 3).
    A candidate that breaks the floor is never taken: the release publishes and checks."""
    data = write(
        tmp_path / "t.csv", ["age", "sex", "zip", "income"], [[63, 61, 32, 48], [65, 76, 48, 55], [66, 87, 59, 55]]
    )
    rules = ["--rule", "zip -> age", "--rule", "age -> zip", "--rule", "age -> sex"]
    args = ["--input", str(data), "--decomposition", "gd", "--max-risk", "0.5", "--seed", "0", *rules]
    published([*args, "--others", "insensitive", "--no-utility"], tmp_path / "out")
    code, out, _ = run("check", str(tmp_path / "out"), "--max-risk", "0.5")
    assert code in (0, 6), out


def _pairs(text: str) -> list[int]:
    return [int(text[i : i + 2]) for i in range(0, len(text), 2)]


def test_a_plain_table_published_again_after_suppression_keeps_the_floor(tmp_path: Path) -> None:
    """This stop's long sweep's case (issue 63, exit 3): rules ``age, zip -> sex`` and
    ``age -> zip``, ``--anonymizer mondrian:suppression=0.02 --max-risk 0.5``. UAD publishes
    ``zip`` alone in a plain T2, whose cells all held 2 records; Mondrian then removed one
    record from T1, and T2 was published again of the records kept — plainly, leaving that
    record's partner alone in its zip cell, which the verifier rejected. A plain table
    published again of the records kept meets the floor as it did the first time (generalized
    when a cell is short); the same for the classic job's detached table."""
    age = _pairs(
        "63656655605457556265625860535563625656605356566461645256616163606062595360585353556066526256635562556162585558"
    )
    sex = [8, 15, 1, 6, 7, 6, 12, 6, 4, 9, 7, 12, 10, 5, 3, 5, 2, 16, 9, 8, 9, 7, 12, 9, 7, 9, 6, 2, 7, 7, 16, 7, 6]
    sex += [9, 4, 4, 4, 16, 9, 5, 7, 11, 7, 8, 6, 6, 4, 7, 10, 4, 8, 4, 10, 8, 9]
    zips = _pairs(
        "20102020192115231721192218152120161522242618132019191821222223202218212423232216181116172017192112242114261819"
    )
    income = _pairs(
        "52525251505050515152505251535151505251505253515153515151505052515150525153515151525150525151515151515151525252"
    )
    data = write(
        tmp_path / "t.csv", ["age", "sex", "zip", "income"], [list(r) for r in zip(age, sex, zips, income, strict=True)]
    )
    args = ["--input", str(data), "--seed", "0", "--rule", "age, zip -> sex", "--rule", "age -> zip"]
    args += [
        "--others",
        "insensitive",
        "--anonymizer",
        "mondrian:suppression=0.02",
        "--max-risk",
        "0.5",
        "--no-utility",
    ]
    published(args, tmp_path / "out")
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m["removed"]["records"] == 1 and m["n_records"] == 54
    code, out, _ = run("check", str(tmp_path / "out"), "--max-risk", "0.5")
    assert code in (0, 6) and "smallest cell 1 " not in out, out


def test_an_anatomy_grouping_at_its_bound_by_chance_needs_attention_not_exit_3(tmp_path: Path) -> None:
    """This stop's second long sweep's case (issue 63, exit 3): 43 records of independent
    columns, ``cid, age -> pos`` under Anatomy with l = 2, ``--seed 2``: the computing
    adversary picked the right one of a group's two values for 67.1 % of the targets, above
    the rule's 50 % at 95 % confidence — where Anatomy's blind pick scores exactly 50 %, so a
    95 % test fails about 2.5 % of honest groupings (1 seed in 40 here). The release is
    written and needs attention with the figure; the verdict fails a release only at 99.9 %
    (the adversaries read together), which a real leak on this table still reaches: ``pos``
    copied into a published column is refused before anything is written."""
    cols = {
        "pos": "v3,v1,v4,v3,v2,v2,v1,v4,v1,v0,v0,v1,v2,v1,v0,v0,v4,v2,v1,v0,v3,v4,v3,v1,v1,v0,v1,v3,v3,v0,v1,v1,v0,v2,"
        "v4,v3,v0,v3,v1,v0,v4,v2,v3",
        "cid": "76,73,61,65,64,56,56,57,80,86,85,66,65,74,74,60,83,59,69,60,82,63,70,63,54,74,79,77,66,73,58,82,62,57,"
        "78,58,70,62,70,75,60,74,53",
        "age": "r1,r0,r0,r2,r1,r2,r0,r1,rare,r0,r2,r1,r0,r1,r0,r2,r0,r0,r2,r2,r1,r1,r0,r0,r2,r0,r0,r1,r1,r0,r2,r1,r1,"
        "r2,r0,r0,r1,r1,r2,r1,r1,r1,r2",
        "last": "v0,v3,v6,v6,v2,v3,v2,v4,v6,v2,v6,v0,v1,v0,v6,v3,v3,v2,v6,v2,v0,v3,v0,v2,v2,v2,v5,v4,v4,v3,v5,v1,v4,v2,"
        "v3,v1,v2,v0,v5,v3,v1,v2,v0",
    }
    values = {c: v.split(",") for c, v in cols.items()}
    data = write(tmp_path / "t.csv", list(values), [list(r) for r in zip(*values.values(), strict=True)])
    args = ["--input", str(data), "--seed", "2", "--rule", "cid, age -> pos", "--others", "insensitive", "--no-utility"]
    published(args, tmp_path / "out")
    check = json.loads((tmp_path / "out" / "check.json").read_text())
    (rule,) = check["adversary"]["rules"]
    assert rule["ok"] and rule["attention"] and rule["computed"]["rate"] > 0.6, rule
    leak = write(
        tmp_path / "leak.csv",
        [*values, "copy"],
        [[*r, r[0]] for r in zip(*values.values(), strict=True)],
    )
    code, _, err = run("publish", "--input", str(leak), "--seed", "2", "--rule", "cid, age -> pos", "--others",
                       "insensitive", "--no-utility", "--out", str(tmp_path / "leak"))  # fmt: skip
    assert code == 2 and "copy" in err and not (tmp_path / "leak").exists(), err


def test_a_treated_column_the_population_holds_is_refused_with_ways_out_that_work(tmp_path: Path) -> None:
    """This stop's third long sweep's case (issue 63, exit 3): the classic job on ``income``
    under delta-presence against a population, with ``income`` top-coded at its 0.9 quantile
    (49): the population, matched as read, brought a class of 52 into a release whose
    top-coding promised at most 49. Refused before anonymizing, naming the column; each way
    out it names publishes when followed as written."""
    income = [41, 47, 40, 52, 46, 49, 41, 41, 38, 41]
    data = write(tmp_path / "t.csv", ["sex", "income"], [[f"s{i % 3}", v] for i, v in enumerate(income)])
    write(tmp_path / "pop.csv", ["sex", "income"], [[f"s{i % 3}", v] for i, v in enumerate(income * 2)])
    job = ["--input", str(data), "--seed", "0", "--qi", "income", "--others", "insensitive", "--no-utility"]
    population = ["--guarantee", "delta-presence:delta_min=0,delta_max=0.5", "--population", str(tmp_path / "pop.csv")]
    treat = ["--treat", "top-coding:columns=income,quantile=0.9"]
    said = refused([*job, *population, *treat], tmp_path / "no", "'income'", "population")
    assert "Leave the treatment of these columns out" in said and "k-map:k=K,fraction=F" in said
    published([*job, *population], tmp_path / "untreated")
    published([*job, "--guarantee", "k-map:k=2,fraction=0.5", *treat], tmp_path / "kmap")
