"""Persons in households (issue 68, first part): household risk and uniqueness on the household
structure, against hand computations and a brute-force oracle; the seeded household generator
keeps its household-level columns constant within every household."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.datasets.households import HOUSEHOLD_LEVEL, households
from versapub.datasets.synthetic import write_csv
from versapub.inspect.risks import risk
from versapub.privacy.risk.households import household_level, household_risk, structure_classes


def test_household_risk_is_one_minus_the_product_by_hand() -> None:
    r = [0.5, 0.2, 0.1, 1.0, 0.0, 0.25]
    h = [0, 0, 0, 1, 1, 2]
    got = household_risk(r, h)
    first = 1 - (1 - 0.5) * (1 - 0.2) * (1 - 0.1)  # 0.64
    assert got == pytest.approx([first, first, first, 1.0, 1.0, 0.25])
    assert first == pytest.approx(0.64)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6))
def test_structure_classes_equal_a_brute_force_count(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_h = int(rng.integers(1, 30))
    size = rng.integers(1, 5, n_h)
    hh = np.repeat(np.arange(n_h), size)
    perm = rng.permutation(len(hh))  # records in any order
    hh = hh[perm]
    person = rng.integers(0, 3, len(hh))
    level = rng.integers(0, 2, n_h)[hh]
    sizes, _ = structure_classes(hh, person, level)
    keys = {h: (int(level[hh == h][0]), tuple(sorted(person[hh == h].tolist()))) for h in range(n_h)}
    count = Counter(keys.values())
    assert sizes.tolist() == [count[keys[h]] for h in range(n_h)]


def test_a_household_unique_by_its_composition_although_each_member_sits_in_a_cell_of_five(tmp_path: Path) -> None:
    """Five households of (A, B), five of (C, D) and one of (A, D): every person's cell holds
    five or more persons, yet the last household is alone on its structure."""
    pairs = [("A", "B")] * 5 + [("C", "D")] * 5 + [("A", "D")]
    rows = [(f"h{i}", key) for i, pair in enumerate(pairs) for key in pair]
    table = EncodedTable.from_columns({"hh": [r[0] for r in rows], "key": [r[1] for r in rows]})
    rep = risk(table, qi=["key"], household="hh", with_suda=False)
    assert rep.tables[0].prosecutor.highest <= 1 / 5  # every record in a cell of at least 5
    hh = rep.households
    assert hh is not None and hh.households == 11 and hh.unique_households == 1 and hh.smallest_class == 1
    assert hh.person_keys == ("key",) and hh.household_keys == ()


def test_household_level_columns_are_found() -> None:
    h = np.array([0, 0, 1, 1, 2])
    cols = {"region": np.array([3, 3, 1, 1, 3]), "age": np.array([40, 12, 30, 30, 50])}
    assert household_level(cols, h) == ["region"]


def test_the_generator_keeps_household_level_columns_constant() -> None:
    t = households(2_000, seed=3)
    hh = np.unique(t["hh_id"], return_inverse=True)[1]
    codes = {c: np.unique(t[c], return_inverse=True)[1] for c in t if c != "hh_id"}
    found = household_level(codes, hh)
    assert set(HOUSEHOLD_LEVEL) <= set(found)
    sizes = np.bincount(hh)
    assert (np.asarray(t["hh_size"], dtype=int) == sizes[hh]).all()
    ages = np.asarray(t["age"], dtype=int)
    rel = np.asarray(t["relationship"])
    head_age = {h: a for h, a, r in zip(hh, ages, rel, strict=True) if r == "reference"}
    children = rel == "child"
    assert all(ages[i] < head_age[hh[i]] for i in np.flatnonzero(children))


def test_risk_with_households_on_the_command_line(tmp_path: Path) -> None:
    data = tmp_path / "hh.csv"
    write_csv(households(500, seed=1), str(data))
    args = ["risk", str(data), "--qi", "region,hh_size,sex,age", "--household", "hh_id", "--no-suda"]
    r = CliRunner().invoke(cli, [*args, "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["households"]
    assert got["households"] == 500 and got["structure_key"]["household_level"] == ["region", "hh_size"]
    assert 0 < got["unique_on_structure"] <= 500
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 0 and "unique on their structure" in text.stdout
    for bad, said in (
        (["--household", "hh_id", "--qi", "hh_id,age"], "never a key variable"),
        (["--household", "nope"], "not a column"),
        (["--household-level", "region"], "give the household id"),
        (["--household", "hh_id", "--household-level", "tenure"], "not among the key variables"),
    ):
        qi = [] if "--qi" in bad else ["--qi", "region,age"]
        r = CliRunner().invoke(cli, ["risk", str(data), *qi, *bad, "--no-suda"])
        assert r.exit_code == 2 and said in r.stderr, r.output


def test_the_docs_household_example_runs_as_written(tmp_path: Path) -> None:
    """docs/risk.md's household example, run verbatim in bash from an empty folder."""
    import os
    import re
    import subprocess
    import sys

    text = (Path(__file__).resolve().parents[1] / "docs" / "risk.md").read_text(encoding="utf-8")
    block = next(m.group(1) for m in re.finditer(r"```sh\n(.*?)```", text, re.S) if "--household" in m.group(1))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "unique on their structure" in r.stdout


def _hh_release(tmp_path: Path, *extra: str) -> tuple[Path, Path, int]:
    data = tmp_path / "hh.csv"
    write_csv(households(600, seed=2), str(data))
    out = tmp_path / "rel"
    args = ["publish", "--input", str(data), "--rule", "region, hh_size, sex, age -> tenure", "--household", "hh_id"]
    # household income and dwelling fingerprint a household: held-out members of a household whose
    # other members were learned from compute its tenure (the proxy screen refuses them)
    args += ["--identifying", "hh_income,dwelling"]
    r = CliRunner().invoke(cli, [*args, "--others", "insensitive", "--out", str(out), *extra])
    return data, out, r.exit_code


def test_publish_with_a_household_id_removes_it_and_reports_the_households(tmp_path: Path) -> None:
    """``--household``: the id is removed (never published), the manifest records it, and the
    household figures of each table that publishes key variables exactly are those ``risk
    --household`` gives on the same keys; ``check`` accepts the release."""
    data, out, code = _hh_release(tmp_path)
    assert code in (0, 6)
    m = json.loads((out / "manifest.json").read_text())
    assert m["columns"]["household"] == "hh_id" and "hh_id" in m["columns"]["removed"]
    assert all("hh_id" not in t["attributes"] for t in m["tables"])
    block = m["household"]
    assert block["id_published"] is False and block["tables"]
    t1 = block["tables"][0]
    keys = [*t1["structure_key"]["household_level"], *t1["structure_key"]["members"]]
    r = CliRunner().invoke(
        cli, ["risk", str(data), "--qi", ",".join(keys), "--household", "hh_id", "--no-suda", "--json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["households"]["unique_on_structure"] == t1["unique_on_structure"]
    r = CliRunner().invoke(cli, ["check", str(out), "--json"])
    assert r.exit_code in (0, 6)
    found = json.loads(r.stdout)["verification"]["findings"]
    assert any(f["ok"] and "no removed identifier is published (" in f["message"] for f in found)


def test_the_verifier_fails_a_published_identifier(tmp_path: Path) -> None:
    """A manifest that says a published column was removed (a forged or broken release) fails."""
    from .conftest import seal

    _, out, code = _hh_release(tmp_path)
    assert code in (0, 6)
    m = json.loads((out / "manifest.json").read_text())
    m["columns"]["household"] = m["tables"][0]["attributes"][0]
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    r = CliRunner().invoke(cli, ["check", str(out)])
    assert r.exit_code == 1 and "declared removed (an identifier) but published" in r.stdout, r.stdout


def test_a_household_id_declared_with_another_role_is_refused(tmp_path: Path) -> None:
    _, out, code = _hh_release(tmp_path, "--quasi-identifying", "hh_id")
    assert code == 2 and not out.exists()


def test_a_household_fingerprint_beside_a_household_level_secret_is_refused_never_rejected(tmp_path: Path) -> None:
    """Household income and dwelling fingerprint a household; tenure is the same for all its
    members. Published beside the rule's left-hand side, they let an adversary find a
    household's members and intersect their Anatomy groups: the set screen refuses the job
    before anything is anonymized (exit 2, nothing written) — holding out whole households in
    that screen hid the linkage and ended in a release the verifier rejects (exit 3)."""
    data = tmp_path / "hh.csv"
    write_csv(households(600, seed=2), str(data))
    out = tmp_path / "rel"
    args = ["publish", "--input", str(data), "--rule", "region, hh_size, sex, age -> tenure", "--household", "hh_id"]
    r = CliRunner().invoke(cli, [*args, "--others", "insensitive", "--out", str(out)])
    assert r.exit_code == 2 and "together recover 'tenure'" in r.stderr and not out.exists(), r.stderr[-1500:]
