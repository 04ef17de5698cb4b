"""Real files as they come (no header, any delimiter, missing markers, stripping, every
problem reported at once) and an --original that just works."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.errors import InputError
from versapub.io.read import read_table

UCI = "39, State-gov, Bachelors, Male, <=50K\n50, ?, Bachelors, Male, >50K\n38, Private, HS-grad, Female, <=50K\n"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_headerless_file_with_names_multichar_delimiter_and_markers(tmp_path: Path) -> None:
    f = tmp_path / "adult.data"
    f.write_text(UCI + "\n")
    t = read_table(
        f, header=False, names=["age", "wc", "edu", "sex", "inc"], delimiter=", ", na_values=["?"], missing="drop"
    )
    assert t.n_rows == 2 and t.n_dropped == 1
    assert list(t.column("wc").values) == ["Private", "State-gov"]
    assert list(t.column("inc").values) == ["<=50K"]


def test_strip_removes_surrounding_spaces(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a , b\n x ,1\nx, 2 \n")
    t = read_table(f, strip=True)
    assert t.names == ("a", "b") and list(t.column("a").values) == ["x"]
    assert list(read_table(f).column("a ").values) == [" x ", "x"]  # kept as typed by default


def test_multichar_delimiter_split_across_blocks(tmp_path: Path) -> None:
    f = tmp_path / "big.txt.gz"
    rows = [f"{i % 7}::{i % 5}::v{i % 3}" for i in range(300_000)]
    with gzip.open(f, "wt") as fh:
        fh.write("a::b::c\n" + "\n".join(rows) + "\n")
    t = read_table(f, delimiter="::")
    assert t.n_rows == 300_000 and t.cardinality("a") == 7 and t.cardinality("c") == 3


def test_every_column_with_missing_cells_is_named(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,b,c\n,1,x\n2,,y\n3,-9,\n")
    with pytest.raises(InputError) as e:
        read_table(f, na_values=["-9"])
    msg = str(e.value)
    assert "3 column(s)" in msg and "'a' (1 cell(s)" in msg and "'b' (2 cell(s), first at row(s) 2, 3)" in msg
    assert "'c' (1 cell(s)" in msg


def test_bad_lines_are_listed_with_line_numbers(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,b\n1,2\n3\n4,5,6\n7,8\n9\n")
    with pytest.raises(InputError) as e:
        read_table(f)
    msg = str(e.value)
    assert "3 record(s)" in msg and "line 3 has 1 field(s)" in msg and "line 4 has 3 field(s)" in msg
    assert "line 6 has 1 field(s)" in msg


def test_names_must_match_the_fields(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("1,2\n3,4\n")
    with pytest.raises(InputError, match="2 field"):
        read_table(f, header=False, names=["a"])


def _publish_uci(tmp_path: Path) -> tuple[Path, Path]:
    f = tmp_path / "adult.data"
    lines = [
        f"{a}, {w}, {e}, {s}, {i}"
        for a, w, e, s, i in [
            (
                20 + k % 40,
                ["Private", "State-gov", "?"][(k // 5) % 3],
                ["HS-grad", "Bachelors", "Masters"][k % 3 - 1],
                ["Male", "Female"][k % 2],
                ["<=50K", ">50K"][(k // 3) % 2],
            )
            for k in range(90)
        ]
    ]
    f.write_text("\n".join(lines) + "\n")
    hier = tmp_path / "age.csv"
    hier.write_text("\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(20, 60)) + "\n")
    out = tmp_path / "rel"
    code, _stdout, stderr = run(
        "publish",
        "--input",
        str(f),
        "--no-header",
        "--names",
        "age,workclass,education,sex,income",
        "--delimiter",
        ", ",
        "--na-values",
        "?",
        "--missing",
        "drop",
        "--hierarchy",
        f"age={hier}:1",
        "--rule",
        "age, sex -> education",
        "--insensitive",
        "workclass",
        "--insensitive",
        "income",
        "--out",
        str(out),
        "--no-utility",
    )
    assert code == 0, stderr
    return f, out


def test_cli_reads_a_raw_file_and_the_manifest_records_how(tmp_path: Path) -> None:
    _f, out = _publish_uci(tmp_path)
    m = json.loads((out / "manifest.json").read_text())
    assert m["n_records"] == 60 and m["input"]["rows_dropped_missing"] == 30
    assert m["input"]["header"] is False and m["input"]["na_values"] == ["?"] and m["input"]["delimiter"] == ", "
    assert m["input"]["names"] == ["age", "workclass", "education", "sex", "income"]


def test_original_raw_file_is_read_as_the_manifest_says(tmp_path: Path) -> None:
    f, out = _publish_uci(tmp_path)
    code, stdout, stderr = run("check", str(out), "--original", str(f))
    assert code == 0, stdout + stderr
    assert "warning" not in stderr
    code, stdout, stderr = run("query", str(out), "age = '20-29'", "--original", str(f), "--json")
    assert code == 0, stderr
    res = json.loads(stdout)
    assert res["actual"] > 0 and res["original_mismatch"] == []
    code, stdout, stderr = run("evaluate", str(out), "--original", str(f), "--json", "--queries", "50")
    assert code == 0, stderr
    assert json.loads(stdout)["kl_divergence"] is not None


def test_original_with_an_extra_column_is_projected(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,b,c\n" + "".join(f"x{i % 3},y{i % 4},z{i % 2}\n" for i in range(40)))
    out = tmp_path / "rel"
    assert (
        run("publish", "--input", str(f), "--column", "a", "--column", "b", "--rule", "a -> b", "--out", str(out))[0]
        == 0
    )
    for cmd in (["evaluate", str(out), "--queries", "20"], ["report", str(out), "-o", str(tmp_path / "r.html")]):
        code, _stdout, stderr = run(*cmd, "--original", str(f))
        assert code == 0, stderr
        assert "internal error" not in stderr


def test_original_that_differs_is_reported_before_numbers(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,b\n" + "".join(f"x{i % 3},y{i % 4}\n" for i in range(40)))
    out = tmp_path / "rel"
    assert run("publish", "--input", str(f), "--rule", "a -> b", "--out", str(out))[0] == 0
    other = tmp_path / "other.csv"
    other.write_text("a,b\n" + "".join(f"X{i % 3},y{i % 4}\n" for i in range(20)))
    _code, _stdout, stderr = run("evaluate", str(out), "--original", str(other), "--queries", "10")
    assert "does not match the release" in stderr and "20 records, the release 40" in stderr
    assert "'a'" in stderr


def test_missing_option_overrides_the_recorded_policy(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,b\n" + "".join(f"x{i % 3},y{i % 4}\n" for i in range(40)) + ",y1\n")
    out = tmp_path / "rel"
    assert run("publish", "--input", str(f), "--rule", "a -> b", "--missing", "drop", "--out", str(out))[0] == 0
    code, _, stderr = run("check", str(out), "--original", str(f))  # the recorded policy (drop) applies
    assert code == 0, stderr
    code, _, stderr = run("check", str(out), "--original", str(f), "--missing", "error")
    assert code == 2 and "missing" in stderr
