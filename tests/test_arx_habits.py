"""ARX habits (issue 29): hierarchies as ARX files come (a group label that is also a leaf),
``--hierarchies DIR`` with ``PREFIX_ATTR.csv`` names, ``hierarchy check`` of several files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli

#: ARX's usual race hierarchy: the level-1 group 'Other' reuses the leaf 'Other'.
RACE = "White;White;*\nBlack;Black;*\nAsian;Other;*\nOther;Other;*\nHispanic;Other;*\n"
AGE = "".join(f"{a};{10 * (a // 10)}-{10 * (a // 10) + 9};*\n" for a in range(20, 60))


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _classic(tmp_path: Path, hospital: Path, *extra: str) -> tuple[int, Path, str, str]:
    """The classic k-anonymity job on the hospital file with the hierarchy folder."""
    out = tmp_path / ("r" + "".join(extra).replace("-", ""))
    code, stdout, stderr = run(
        "publish",
        "--input",
        str(hospital),
        "--qi",
        "race,age",
        "--guarantee",
        "k-anonymity:k=5",
        "--hierarchies",
        str(hospital.parent / "hier"),
        "--others",
        "insensitive",
        "--out",
        str(out),
        *extra,
    )
    return code, out, stdout, stderr


@pytest.fixture
def hospital(tmp_path: Path) -> Path:
    """A small hospital file whose rare races carry one diagnosis each: race must be
    generalized to its level-1 group 'Other' to be 2-diverse."""
    rng = np.random.default_rng(5)
    n = 600
    race = rng.choice(["White", "Black", "Asian", "Other", "Hispanic"], n, p=[0.4, 0.3, 0.1, 0.1, 0.1])
    dx = rng.choice(list("abcdef"), n)
    dx[race == "Asian"], dx[race == "Other"], dx[race == "Hispanic"] = "a", "b", "c"
    path = tmp_path / "diabetes.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["race", "age", "gender", "dx"])
        for i in range(n):
            w.writerow([race[i], int(rng.integers(20, 60)), rng.choice(["F", "M"]), dx[i]])
    folder = tmp_path / "hier"
    folder.mkdir()
    (folder / "diabetes_race.csv").write_text(RACE)
    (folder / "diabetes_age.csv").write_text(AGE)
    (folder / "diabetes_weight.csv").write_text("1;*\n")
    return path


@pytest.mark.parametrize("anonymizer", ["mondrian", "incognito"])
def test_a_group_label_that_is_also_a_leaf_is_published_disambiguated(
    tmp_path: Path, hospital: Path, anonymizer: str
) -> None:
    out = tmp_path / anonymizer
    code, _, stderr = run(
        "publish",
        "--input",
        str(hospital),
        "--rule",
        "race -> dx",
        "--l",
        "2",
        "--anonymizer",
        anonymizer,
        "--hierarchy",
        f"race={hospital.parent / 'hier' / 'diabetes_race.csv'}",
        "--others",
        "insensitive",
        "--out",
        str(out),
    )
    assert code == 0, stderr
    labels = (out / "T1_labels.csv").read_text()
    assert '"Other (level 1)"' in labels
    manifest = json.loads((out / "manifest.json").read_text())
    notes = [n for t in manifest["tables"] for n in (t.get("stats") or {}).get("notes", [])]
    assert any("'Other (level 1)'" in n for n in notes), notes
    assert run("check", str(out))[0] in (0, 6)


def test_a_hierarchy_folder_matches_prefix_attr_names_and_says_what_it_loaded(tmp_path: Path, hospital: Path) -> None:
    code, out, stdout, stderr = _classic(tmp_path, hospital)
    assert code == 0, stderr
    said = stdout.replace("\n", " ")
    assert "hierarchy of 'race' from diabetes_race.csv" in said and "hierarchy of 'age' from diabetes_age.csv" in said
    assert "not used: diabetes_weight.csv" in said
    notes = json.loads((out / "manifest.json").read_text())["notes"]
    assert any("diabetes_age.csv" in n for n in notes)


def test_a_hierarchy_folder_matching_no_column_is_refused(tmp_path: Path, hospital: Path) -> None:
    empty = tmp_path / "other"
    empty.mkdir()
    (empty / "zip.csv").write_text("1;*\n")
    code, _, stderr = run(
        "publish",
        "--input",
        str(hospital),
        "--qi",
        "race,age",
        "--guarantee",
        "k-anonymity:k=5",
        "--hierarchies",
        str(empty),
        "--others",
        "insensitive",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "no file matches a column" in stderr and "zip.csv" in stderr
    assert not (tmp_path / "r").exists()


def test_hierarchy_check_checks_every_hierarchy_it_is_given(tmp_path: Path, hospital: Path) -> None:
    hier = hospital.parent / "hier"
    bad = tmp_path / "gender.csv"
    bad.write_text("F;*\n")  # 'M' is no leaf
    code, stdout, stderr = run(
        "hierarchy",
        "check",
        str(hospital),
        "--hierarchy",
        f"race={hier / 'diabetes_race.csv'}",
        "--hierarchy",
        f"gender={bad}",
        "--hierarchy",
        f"age={hier / 'diabetes_age.csv'}",
    )
    assert code == 2
    said = stdout.replace("\n", " ")
    assert "fits column 'race'" in said and "fits column 'age'" in said
    assert "published as 'Other (level 1)'" in said
    assert "'M'" in stderr and "gender" in stderr


@pytest.mark.parametrize("anonymizer", ["mondrian", "incognito"])
def test_classic_k_anonymity_keeps_the_other_columns_in_the_records(
    tmp_path: Path, hospital: Path, anonymizer: str
) -> None:
    """ARX's semantics: one generalized table; diagnosis and gender stay in each record's
    row (analysable by age group); pycanon confirms k on the quasi-identifiers."""
    import pandas as pd
    from pycanon import anonymity

    code, out, _, stderr = _classic(tmp_path, hospital, "--anonymizer", anonymizer)
    assert code == 0, stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert [t["name"] for t in manifest["tables"]] == ["T1"]
    (t1,) = manifest["tables"]
    assert set(t1["attributes"]) == {"race", "age", "gender", "dx"} and set(t1["kept"]) == {"gender", "dx"}
    data = pd.read_csv(out / "T1.csv", dtype=str)
    rows = data.loc[data.index.repeat(data["count"].astype(int))].drop(columns="count")
    assert len(rows) == 600
    assert anonymity.k_anonymity(rows, ["race", "age"]) >= 5
    assert anonymity.k_anonymity(rows, ["race", "age", "gender", "dx"]) < 5  # the kept columns are not QI
    check = json.loads((out / "check.json").read_text())
    assert check["ok"] and any(i["table"] == "T1" for i in check["identity"])  # identity risk covers them


@pytest.mark.parametrize("anonymizer", ["mondrian", "incognito"])
def test_classic_job_with_a_sensitive_column_keeps_the_insensitive_ones(
    tmp_path: Path, hospital: Path, anonymizer: str
) -> None:
    """``--qi`` with ``--sensitive``: the QIs generalized, dx exact and 2-diverse in every
    class of the QIs (pycanon), gender (insensitive) exact in each record's row, not part of
    the classes; the independent check passes."""
    import pandas as pd
    from pycanon import anonymity

    out = tmp_path / anonymizer
    code, _, stderr = run(
        "publish", "--input", str(hospital), "--qi", "race,age", "--sensitive", "dx", "--guarantee",
        "distinct-l-diversity:l=2", "--anonymizer", anonymizer, "--hierarchies", str(hospital.parent / "hier"),
        "--others", "insensitive", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    (t1,) = json.loads((out / "manifest.json").read_text())["tables"]
    assert t1["kept"] == ["gender"] and set(t1["attributes"]) == {"race", "age", "gender", "dx"}
    data = pd.read_csv(out / "T1.csv", dtype=str)
    rows = data.loc[data.index.repeat(data["count"].astype(int))].drop(columns="count").reset_index(drop=True)
    assert len(rows) == 600 and set(rows["gender"]) == {"F", "M"}  # exact values
    assert anonymity.l_diversity(rows, ["race", "age"], ["dx"]) >= 2
    assert json.loads((out / "check.json").read_text())["ok"]
    same = run(
        "publish", "--input", str(hospital), "--rule", "race, age -> dx", "--guarantee", "distinct-l-diversity:l=2",
        "--anonymizer", anonymizer, "--hierarchies", str(hospital.parent / "hier"), "--others", "insensitive",
        "--out", str(tmp_path / "rules"),
    )  # fmt: skip
    assert same[0] == 0, same[2]  # written rules (no --qi): every non-sensitive column generalized, as before
    assert "kept" not in json.loads((tmp_path / "rules" / "manifest.json").read_text())["tables"][0]


def test_the_detached_layout_stays_available(tmp_path: Path, hospital: Path) -> None:
    code, out, _, stderr = _classic(tmp_path, hospital, "--detach-others")
    assert code == 0, stderr
    tables = json.loads((out / "manifest.json").read_text())["tables"]
    assert [(t["name"], t["kind"]) for t in tables] == [("T1", "generalized"), ("T2", "plain")]
    assert set(tables[1]["attributes"]) == {"gender", "dx"} and "kept" not in tables[0]


def test_a_refusal_naming_a_derived_rule_says_which_rule_it_comes_from(tmp_path: Path, hospital: Path) -> None:
    code, _, stderr = run(
        "publish",
        "--input",
        str(hospital),
        "--rule",
        "age -> dx",
        "--decomposition",
        "gd",
        "--guarantee",
        "t-closeness:t=0.3",
        "--others",
        "insensitive",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "cannot provide t-closeness" in stderr
    said = stderr.replace("\n", " ")
    assert "is not one you wrote: the decomposition derived it from your rule(s) 'age -> dx'" in said
