"""Hierarchy builders, `versapub hierarchy build/check`, hierarchies on the command line
(`--hierarchy ATTR=FILE`, `--hierarchies DIR`), and every bad hierarchy input as a clear
one-paragraph error with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.data import hierarchy_build as hb
from versapub.data.hierarchy import Hierarchy
from versapub.errors import HierarchyError

FIXTURES = Path(__file__).parent / "fixtures"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_interval_builder_nests_widths_and_ends_at_the_root() -> None:
    h = hb.intervals("age", ["17", "23", "39", "40"], [5, 10, 20])
    rows = {r[0]: r for r in h.levels}
    assert rows["23"] == ("23", "[20, 25[", "[20, 30[", "[20, 40[", "*")
    assert rows["40"] == ("40", "[40, 45[", "[40, 50[", "[40, 60[", "*")
    with pytest.raises(HierarchyError, match="multiple of the one before"):
        hb.intervals("age", ["1"], [5, 7])
    with pytest.raises(HierarchyError, match="not a number, 'x'"):
        hb.intervals("age", ["1", "x"], [5])


def test_interval_label_styles(tmp_path: Path) -> None:
    """Issue 29: a file whose own values read ``[70-80)`` gets intervals in the same style."""
    assert hb.intervals("age", ["73"], [10], style="dash").levels[0][1] == "[70-80)"
    assert hb.intervals("age", ["73"], [10], style="math").levels[0][1] == "[70, 80)"
    with pytest.raises(HierarchyError, match="choose arx, math, dash"):
        hb.intervals("age", ["73"], [10], style="iso")
    data = tmp_path / "d.csv"
    data.write_text("age\n73\n12\n")
    code, _, err = run("hierarchy", "build", str(data), "--column", "age", "--intervals", "10", "--labels", "dash",
                       "-o", str(tmp_path / "h.csv"))  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "h.csv").read_text().splitlines() == ["12;[10-20);*", "73;[70-80);*"]


def test_masking_builder_follows_the_issue_example() -> None:
    h = hb.masking("zip", ["71000", "71011", "72000"])
    assert {r[0]: r for r in h.levels}["71000"] == ("71000", "7100*", "710**", "71***", "7****", "*")
    assert h.mapping(2) == {"71000": "710**", "71011": "710**", "72000": "720**"}


def test_grouping_builders() -> None:
    h = hb.grouped("n", [str(i) for i in range(1, 10)], 3)
    assert h.mapping(1)["5"] == "[4, 6]" and h.height == 3
    e = hb.explicit("s", ["a", "b", "c"], [{"ab": ["a", "b"], "c": ["c"]}, {"all": ["ab", "c"]}])
    assert {r[0]: r for r in e.levels}["b"] == ("b", "ab", "all", "*")
    with pytest.raises(HierarchyError, match="does not place 1 value"):
        hb.explicit("s", ["a", "b", "c"], [{"ab": ["a", "b"]}])
    with pytest.raises(HierarchyError, match="puts 'a' in two groups"):
        hb.explicit("s", ["a", "b"], [{"x": ["a"], "y": ["a", "b"]}])


def test_build_and_check_commands(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("age,zip,s\n23,71000,a\n37,71011,b\n41,72000,a\n", encoding="utf-8")
    out = tmp_path / "age.csv"
    code, stdout, stderr = run(
        "hierarchy", "build", str(data), "--column", "age", "--intervals", "10,20", "-o", str(out)
    )
    assert code == 0, stderr
    assert out.read_text().splitlines()[0] == "23;[20, 30[;[20, 40[;*"
    code, stdout, _ = run("hierarchy", "check", str(data), "--hierarchy", f"age={out}")
    assert code == 0 and "every one of its 3 values is a leaf" in stdout
    code, _, stderr = run("hierarchy", "build", str(data), "--column", "age", "--mask", "-o", str(out))
    assert code == 2 and "exists; add --overwrite" in stderr
    code, _, stderr = run("hierarchy", "build", str(data), "--column", "age", "-o", str(tmp_path / "x.csv"))
    assert code == 2 and "exactly one of" in stderr
    code, _, stderr = run(
        "hierarchy", "build", str(data), "--column", "age", "--intervals", "five", "-o", str(tmp_path / "x.csv")
    )
    assert code == 2 and "give numbers separated by commas" in stderr and not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ("23;young;*\n37;young;*\n", "not leaves of the hierarchy, e.g. '41'"),  # a data value missing
        ("23;a;x;*\n37;a;y;*\n41;b;y;*\n", "value 'a' at level 1 has two parents"),  # a node with two parents
        ("23;a;*\n37;*\n41;b;*\n", "rows of different heights (row(s) 2"),  # ragged
    ],
)
def test_bad_hierarchies_are_one_paragraph_errors_and_nothing_is_written(tmp_path: Path, rows: str, words: str) -> None:
    data = tmp_path / "d.csv"
    data.write_text("age,zip,s\n23,71000,a\n37,71011,b\n41,72000,a\n23,72000,b\n37,71000,a\n41,71011,b\n")
    bad = tmp_path / "h.csv"
    bad.write_text(rows)
    code, _, stderr = run("hierarchy", "check", str(data), "--hierarchy", f"age={bad}")
    assert code == 2 and words in stderr and "Traceback" not in stderr
    out = tmp_path / "rel"
    code, _, stderr = run(
        "publish",
        "--input",
        str(data),
        "--rule",
        "age, zip -> s",
        "--anonymizer",
        "mondrian",
        "--hierarchy",
        f"age={bad}",
        "--out",
        str(out),
        "--allow-unique",
        "zip",
    )
    assert code == 2 and words in stderr.replace("\n", " ") and not out.exists()


def test_a_hierarchy_given_twice_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("age,s\n23,a\n37,b\n")
    h = tmp_path / "h.csv"
    h.write_text("23;*\n37;*\n")
    code, _, stderr = run(
        "publish",
        "--input",
        str(data),
        "--rule",
        "age -> s",
        "--hierarchy",
        f"age={h}",
        "--hierarchy",
        f"age={h}:1",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "'age' has two hierarchies" in stderr


def test_hierarchies_dir_uses_arx_naming(tmp_path: Path) -> None:
    from versapub.io.config import hierarchies_in

    (tmp_path / "adult_hierarchy_age.csv").write_text("1;*\n")
    (tmp_path / "sex.csv").write_text("M;*\nF;*\n")
    assert sorted(h.attribute for h in hierarchies_in(tmp_path)) == ["age", "sex"]
    assert Hierarchy.read(tmp_path / "sex.csv", "sex").height == 2


def test_classic_one_table_job_with_qi_and_sensitive(tmp_path: Path) -> None:
    import json

    data = FIXTURES / "arx_test2.csv"
    out = tmp_path / "rel"
    hierarchies = str(FIXTURES / "arx_test2_hierarchies")
    code, _, stderr = run(
        "publish",
        "--input",
        str(data),
        "--delimiter",
        ";",
        "--qi",
        "ZIPCode,Age,Salary",
        "--sensitive",
        "Disease",
        "--guarantee",
        "t-closeness:t=0.5",
        "--anonymizer",
        "mondrian",
        "--hierarchies",
        hierarchies,
        "--out",
        str(out),
    )
    assert code == 0, stderr
    m = json.loads((out / "manifest.json").read_text())
    assert m["rules"] == [{"lhs": ["ZIPCode", "Age", "Salary"], "rhs": "Disease"}]
    assert m["tables"][0]["kind"] == "generalized" and m["hierarchies"] == {"Disease": "hierarchy_1.csv"}
    verification = json.loads((out / "verification.json").read_text())
    assert any("hierarchical distance" in f["message"] for f in verification["findings"])
    code, _, stderr = run(
        "publish",
        "--input",
        str(data),
        "--delimiter",
        ";",
        "--qi",
        "ZIPCode,Age",
        "--insensitive",
        "Salary",
        "--insensitive",
        "Disease",
        "--out",
        str(tmp_path / "r2"),
    )
    assert code == 2 and "protected by k-anonymity only" in stderr  # l-diversity needs a sensitive attribute


def test_k_anonymity_of_quasi_identifiers_alone(tmp_path: Path) -> None:
    """The classic job with no sensitive attribute: one generalized table whose every class
    of quasi-identifier values holds k records (checked by the verifier and pycanon), the
    other columns kept exactly in each record's row (ARX's insensitive attributes)."""
    import json

    import pandas as pd
    from pycanon import anonymity

    data = FIXTURES / "arx_test2.csv"
    out = tmp_path / "rel"
    hierarchies = str(FIXTURES / "arx_test2_hierarchies")
    code, _, stderr = run(
        "publish",
        "--input",
        str(data),
        "--delimiter",
        ";",
        "--qi",
        "ZIPCode,Age",
        "--guarantee",
        "k-anonymity:k=3",
        "--anonymizer",
        "incognito",
        "--hierarchies",
        hierarchies,
        "--others",
        "insensitive",
        "--out",
        str(out),
    )
    assert code == 0, stderr
    m = json.loads((out / "manifest.json").read_text())
    assert m["rules"] == [] and [t["kind"] for t in m["tables"]] == ["generalized"]
    assert m["tables"][0]["enforces"] is None and m["tables"][0]["attributes"] == [
        "ZIPCode",
        "Age",
        "Salary",
        "Disease",
    ]
    assert m["tables"][0]["kept"] == ["Salary", "Disease"]
    df = pd.read_csv(out / "T1.csv", dtype=str)
    rows = df.loc[df.index.repeat(df["count"].astype(int))].drop(columns="count")
    assert anonymity.k_anonymity(rows, ["ZIPCode", "Age"]) >= 3
    # a stricter k in the manifest fails the verifier, naming a class
    m["guarantee"] = {"name": "k-anonymity", "k": 4}
    (out / "manifest.json").write_text(json.dumps(m))
    code, stdout, _ = run("check", str(out))
    assert code != 0 and "violate k-anonymity" in stdout
    # only k-anonymity protects quasi-identifiers alone
    code, _, stderr = run(
        "publish",
        "--input",
        str(data),
        "--delimiter",
        ";",
        "--qi",
        "ZIPCode,Age",
        "--l",
        "2",
        "--others",
        "insensitive",
        "--out",
        str(tmp_path / "r2"),
    )
    assert code == 2 and "protected by k-anonymity only" in stderr


def test_a_hierarchy_with_a_cycle_is_refused_by_publish_and_hierarchy_check(tmp_path: Path) -> None:
    """Issue 26: 47601 generalizes to 47602 on one row and 47602 to 47601 on another."""
    with pytest.raises(HierarchyError, match=r"cycle: '47601' -> '47602' -> '47601' \(rows 1, 2\)"):
        Hierarchy.from_rows("zip", [["47601", "47602", "*"], ["47602", "47601", "*"]])
    # a longer cycle through three levels
    with pytest.raises(HierarchyError, match="cycle"):
        Hierarchy.from_rows("x", [["a", "b", "c", "*"], ["c", "a", "b", "*"]])
    # a label that is also a leaf is no cycle (ARX's Other;Other;* beside Asian;Other;*)
    Hierarchy.from_rows("race", [["Other", "Other", "*"], ["Asian", "Other", "*"]])
    h = tmp_path / "zip.csv"
    h.write_text("47601;47602;*\n47602;47601;*\n", encoding="utf-8")
    data = tmp_path / "d.csv"
    data.write_text("zip,d\n47601,a\n47602,b\n47601,b\n47602,a\n", encoding="utf-8")
    for args in (
        ["hierarchy", "check", str(data), "--hierarchy", f"zip={h}"],
        [
            "publish",
            "--input",
            str(data),
            "--rule",
            "zip -> d",
            "--anonymizer",
            "mondrian",
            "--hierarchy",
            f"zip={h}",
            "--out",
            str(tmp_path / "rel"),
        ],
    ):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "has a cycle" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "rel").exists()
