"""Files that explain themselves (issue 29): a delimiter that cannot be the file's is refused
naming the one it seems to use; markers of missing values are pointed out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.errors import InputError
from versapub.io.read import read_table, sniff_delimiter


@pytest.mark.parametrize(
    ("delimiter", "given", "said"),
    [(",", ";", "seems to use ','"), ("\t", ",", "seems to use '\\t'"), (";", None, "seems to use ';'")],
)
def test_a_wrong_delimiter_names_the_files_own(tmp_path: Path, delimiter: str, given: str | None, said: str) -> None:
    f = tmp_path / "data.csv"
    f.write_text("\n".join(delimiter.join(row) for row in [["age", "sex", "zip"], ["30", "F", "1"], ["40", "M", "2"]]))
    assert sniff_delimiter(f) == (delimiter, 3)
    with pytest.raises(InputError) as exc:
        read_table(f, delimiter=given)
    assert said in str(exc.value) and "3 columns: 'age', 'sex', 'zip'" in str(exc.value)
    assert read_table(f, delimiter=delimiter).names == ("age", "sex", "zip")


def test_a_one_column_file_is_read_as_one_column(tmp_path: Path) -> None:
    f = tmp_path / "one.csv"
    f.write_text("name\nAnn\nBob\n")
    assert sniff_delimiter(f) is None and read_table(f).names == ("name",)


def test_markers_of_missing_values_are_pointed_out(tmp_path: Path) -> None:
    f = tmp_path / "data.csv"
    rows = ["age,weight,dx"] + [f"{20 + i % 30},{'?' if i % 3 else 60 + i % 20},{'ab'[i % 2]}" for i in range(120)]
    f.write_text("\n".join(rows) + "\n")
    out = tmp_path / "r"
    r = CliRunner().invoke(
        cli, ["publish", "--input", str(f), "--rule", "age -> dx", "--others", "insensitive", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    notes = json.loads((out / "manifest.json").read_text())["notes"]
    assert any("column 'weight' holds '?' in 67% of its records" in n and "--na-values '?'" in n for n in notes)


def test_a_header_that_reads_as_a_record_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "data.csv"
    f.write_text("30,1,2.5\n40,2,3.5\n")
    with pytest.raises(InputError) as exc:
        read_table(f)
    assert "reads as a record" in str(exc.value) and "--no-header" in str(exc.value)
    assert read_table(f, header=False).n_rows == 2  # the way out: no record lost into the names
    assert read_table(f, names=["30", "1", "2.5"]).names == ("30", "1", "2.5")  # or the numbers confirmed


def test_single_quoted_fields_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "data.csv"
    f.write_text("'age','dx'\n'30','a'\n")
    with pytest.raises(InputError, match="single quotes"):
        read_table(f)
    g = tmp_path / "ok.csv"
    g.write_text('age,dx\n"30, or so",a\n')  # double quotes: RFC 4180, read as the value
    assert list(read_table(g).column("age").values) == ["30, or so"]
