"""Multi-SA publishing (Appendix B): the BIP against brute force, releases verified from
their files, suppression, the release model, corrupt releases and the size limit."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import versapub
from versapub.anonymizers.bucketizing.multi_sa import select, select_per_tuple
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.model.utility import kl_divergence
from versapub.privacy import Rule
from versapub.verify.files.release_check import verify_release

from .conftest import random_table


def _feasible(x: dict[tuple[int, ...], int], l: int) -> bool:
    """Every line along every axis: l * cell <= line total (the paper's constraint)."""
    m = len(next(iter(x))) if x else 0
    for i in range(m):
        lines: dict[tuple[int, ...], list[int]] = {}
        for w, c in x.items():
            lines.setdefault(w[:i] + w[i + 1 :], []).append(c)
        if any(l * max(cs) > sum(cs) for cs in lines.values()):
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 3), st.integers(1, 3))
def test_bip_finds_the_largest_feasible_selection(seed: int, ell: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 13))
    cards = [int(rng.integers(2, 4)) for _ in range(m)]
    cols = [rng.integers(0, c, size=n) for c in cards]
    g = group_rows(cols, cards)
    combos = list(zip(*(k.tolist() for k in g.keys), strict=True))
    best = 0
    for take in itertools.product(*(range(int(c) + 1) for c in g.counts)):
        if sum(take) > best and _feasible({w: t for w, t in zip(combos, take, strict=True) if t}, ell):
            best = sum(take)
    sel = select(g.keys, cards, g.counts, ell, time_limit_s=10, seed=seed)
    assert sel.optimal
    assert int(sel.take.sum()) == best
    literal = select_per_tuple(cols, cards, ell, time_limit_s=10, seed=seed)  # the paper's binary program
    assert literal.optimal and int(literal.take.sum()) == best and literal.variables == n
    assert (sel.take <= g.counts).all()
    assert _feasible({w: int(t) for w, t in zip(combos, sel.take, strict=True) if t}, ell)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _independent_check(directory: Path, n: int, ell: int) -> int:
    """From the files with the csv module: every record accounted for, every line of every
    group diverse.  Returns the number of suppressed records."""
    m = json.loads((directory / "manifest.json").read_text())
    (t,) = m["tables"]
    sens = [t["enforces"]["rhs"], *(r["rhs"] for r in t.get("also_enforces", []))]
    qit = _read_csv(directory / t["files"]["qit"])
    st_rows = _read_csv(directory / t["files"]["st"])
    assert sum(int(r["count"]) for r in qit) == n
    sup = t.get("suppressed_group")
    withheld = sum(int(r["count"]) for r in qit if sup is not None and int(r["group_id"]) == sup)
    assert sum(int(r["count"]) for r in st_rows) + withheld == n
    assert all(int(r["group_id"]) != sup for r in st_rows)
    for s in sens:
        lines: dict[tuple[str, ...], Counter[str]] = {}
        for r in st_rows:
            key = (r["group_id"], *(r[o] for o in sens if o != s))
            lines.setdefault(key, Counter())[r[s]] += int(r["count"])
        for c in lines.values():
            assert ell * max(c.values()) <= sum(c.values())
    return withheld


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**31))
def test_multi_sa_releases_verify_and_account_for_every_record(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    attrs = [f"a{i}" for i in range(int(rng.integers(3, 6)))]
    table = random_table(rng, int(rng.integers(20, 120)), {a: int(rng.integers(2, 5)) for a in attrs}, skew=0.3)
    rules = []
    for rhs in rng.choice(attrs, size=int(rng.integers(1, len(attrs))), replace=False):
        others = [a for a in attrs if a != rhs]
        lhs = rng.choice(others, size=int(rng.integers(1, len(others) + 1)), replace=False)
        rules.append(Rule(tuple(str(x) for x in lhs), str(rhs)))
    try:
        rel = versapub.publish(
            table, rules, l=2, seed=seed, decomposition="multi-sa", columns=versapub.ColumnRoles(others="insensitive")
        )
    except InfeasibleError:
        return
    (sub,) = rel.schema.tables
    assert set(sub.sensitive_attributes) == {r.rhs for r in rel.reduction.rules}
    assert all(set(r.lhs) == set(attrs) - {r.rhs} for r in sub.enforced_rules)
    out = tmp_path / f"r{seed}"
    report = versapub.write_release(rel, out)  # runs the verifier and both attacks first
    assert report.ok
    assert verify_release(out, table).ok
    check = json.loads((out / "check.json").read_text())
    assert check["ok"] and {a["method"] for a in check["attacks"]} == {"exact", "scalable"}
    withheld = _independent_check(out, table.n_rows, 2)
    assert withheld == rel.tables[0].table.stats.get("suppressed_records", 0)
    m_mem = versapub.model_from_release(rel)
    m_file = versapub.load_release(out)
    assert kl_divergence(m_file, table).value == pytest.approx(kl_divergence(m_mem, table).value, rel=1e-9)


def _square() -> EncodedTable:
    """SA combinations (0,0) x2, (0,1), (1,0), (1,1) x2: every line must be balanced, so the
    best selection takes one of each combination and suppresses two records."""
    xs = ["0", "0", "0", "1", "1", "1"]
    ys = ["0", "0", "1", "0", "1", "1"]
    return EncodedTable.from_columns({"q": [f"q{i}" for i in range(6)], "x": xs, "y": ys})


def test_suppression_by_hand(tmp_path: Path) -> None:
    table = _square()
    said: list[str] = []
    rel = versapub.publish(
        table, ["q -> x", "q -> y"], l=2, seed=3, decomposition="multi-sa", progress=lambda d, i, n: said.append(d)
    )
    assert any("integer program over 4 sensitive-value combinations" in d for d in said)
    assert any("4 of 6 records selected" in d for d in said)
    stats = rel.tables[0].table.stats
    assert stats["suppressed_records"] == 2 and stats["selected_records"] == 4 and stats["groups"] == 1
    out = tmp_path / "r"
    assert versapub.write_release(rel, out).ok
    assert _independent_check(out, 6, 2) == 2
    # Hand computation: a selected q has P = (1/6)·(1/4) for each (x, y); a suppressed q
    # is spread over the 4 combinations, (1/6)·(1/4) too.  Each record has 1/6 in the
    # original, so KL = ln 4.
    for model in (versapub.model_from_release(rel), versapub.load_release(out)):
        assert kl_divergence(model, table).value == pytest.approx(math.log(4), abs=1e-12)
        assert model.probability({"q": ["q0"], "x": ["1"], "y": ["0"]}) == pytest.approx(1 / 24)


def _corrupt(src: Path, dst: Path, edit) -> None:
    import shutil

    shutil.copytree(src, dst)
    m = json.loads((dst / "manifest.json").read_text())
    st_file = dst / m["tables"][0]["files"]["st"]
    rows = _read_csv(st_file)
    edit(rows, m["tables"][0]["suppressed_group"])
    with st_file.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_verifier_flags_corrupt_multi_sa_releases(tmp_path: Path) -> None:
    table = _square()
    rel = versapub.publish(table, ["q -> x", "q -> y"], l=2, seed=3, decomposition="multi-sa")
    good = tmp_path / "good"
    versapub.write_release(rel, good)

    def leak(rows: list[dict[str, str]], sup: int) -> None:
        rows.append({"group_id": str(sup), "x": "0", "y": "0", "count": "2"})

    def skew(rows: list[dict[str, str]], sup: int) -> None:
        del sup  # (x=0, y=0) twice and (x=0, y=1) gone: the line y = 0 is 2:1
        for r in rows:
            if (r["x"], r["y"]) == ("0", "0"):
                r["count"] = "2"
        rows[:] = [r for r in rows if (r["x"], r["y"]) != ("0", "1")]

    _corrupt(good, tmp_path / "leak", leak)
    rep = verify_release(tmp_path / "leak", table)
    assert not rep.ok
    assert any("row(s) of the suppressed group" in f.message for f in rep.failures)
    _corrupt(good, tmp_path / "skew", skew)
    rep = verify_release(tmp_path / "skew", table)
    assert any(f.check == "guarantee" and "'x'" in f.message for f in rep.failures)
    assert any(f.check == "guarantee" and "'y'" in f.message for f in rep.failures)


def test_multi_sa_refuses_beyond_its_size_limit() -> None:
    table = versapub.datasets.running_example()
    with pytest.raises(InfeasibleError, match=r"integer program with \d+ variables.*above the limit of 2"):
        versapub.publish(
            table,
            versapub.datasets.RUNNING_EXAMPLE_RULES,
            l=2,
            decomposition="multi-sa",
            anonymizer_params={"max_combinations": 2},
        )


def test_multi_sa_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from versapub.cli.main import cli

    data = tmp_path / "d.csv"
    t = _square()
    with data.open("w", encoding="utf-8") as f:
        f.write("q,x,y\n" + "".join(",".join(r) + "\n" for r in zip(*t.to_pydict().values(), strict=True)))
    res = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(data),
            "--rule",
            "q -> x",
            "--rule",
            "q -> y",
            "--decomposition",
            "multi-sa",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m["decomposition"]["name"] == "multi-sa" and m["tables"][0]["suppressed_group"] is not None
    res = CliRunner().invoke(cli, ["check", str(tmp_path / "r"), "--original", str(data)])
    assert res.exit_code == 0, res.output
