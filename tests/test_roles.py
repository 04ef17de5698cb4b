"""Column roles, the screen for direct identifiers, identity risk per table and check --k."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import versapub
from versapub.cli.main import cli
from versapub.errors import InputError, RuleError
from versapub.privacy.screens.roles import ColumnRoles, name_looks_identifying, unique_share
from versapub.verify.check import identity_check


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _data(n: int = 60, seed: int = 0) -> dict[str, list[str]]:
    rng = np.random.default_rng(seed)
    return {
        "patient": [f"P{i:06d}" for i in range(n)],
        "age": [f"a{v}" for v in rng.integers(0, 4, n)],
        "sex": [f"s{v}" for v in rng.integers(0, 2, n)],
        "disease": [f"d{v}" for v in rng.integers(0, 5, n)],
    }


@pytest.mark.parametrize(
    ("name", "flagged"),
    [
        ("id", True),
        ("patient_id", True),
        ("PatientID", True),
        ("SSN", True),
        ("e-mail", True),
        ("DUPERSID", True),
        ("first name", True),
        ("paid", False),
        ("valid", False),
        ("age", False),
        ("zipcode", False),
        ("idle", False),
    ],
)
def test_identifier_names(name: str, flagged: bool) -> None:
    assert name_looks_identifying(name) is flagged


def test_unique_share_is_the_share_of_records_alone() -> None:
    t = versapub.EncodedTable.from_columns({"a": ["x", "x", "y", "z"]})
    assert unique_share(t, "a") == pytest.approx(0.5)


def test_near_unique_column_is_refused_with_the_way_out() -> None:
    with pytest.raises(InputError) as e:
        versapub.publish(_data(), ["age, sex -> disease"], l=2)
    msg = str(e.value)
    assert "'patient'" in msg and "100% of the records" in msg and "--identifying" in msg and "--allow-unique" in msg


def test_identifying_column_is_removed_and_listed() -> None:
    rel = versapub.publish(_data(), ["age, sex -> disease"], l=2, columns=ColumnRoles(identifying=("patient",)))
    assert "patient" not in rel.attributes
    assert rel.columns["removed"] == ["patient"]


def test_allow_unique_publishes_it_as_decided(tmp_path: Path) -> None:
    """Declared by name (insensitive, allowed unique): records alone in their cell are the
    steward's decision — the verdict passes and the identity line says so."""
    roles = ColumnRoles(allow_unique=("patient",), insensitive=("patient",))
    rel = versapub.publish(_data(), ["age, sex -> disease"], l=2, columns=roles)
    assert "patient" in rel.attributes
    exact = [t.name for t in rel.tables if "patient" in t.attributes]
    assert rel.identity[exact[0]]["unique_share"] == pytest.approx(1.0)
    check = versapub.write_release(rel, tmp_path / "r")
    assert check.verdict == "passed" and not check.attention
    (line,) = [i for i in check.identity if i["table"] == exact[0]]
    assert line["unique_share"] == pytest.approx(1.0) and "by design" in line["message"]


def test_a_unique_cell_of_undecided_columns_needs_attention(tmp_path: Path) -> None:
    """The same column published by --others: passed, with a warning that needs attention,
    in the check, check.json, the console (exit 6) and the report's badge."""
    data = {**_data(), "visit": [f"V{i}" for i in range(60)]}
    roles = ColumnRoles(identifying=("patient",), allow_unique=("visit",), others="insensitive")
    rel = versapub.publish(data, ["age, sex -> disease"], l=2, columns=roles)
    out = tmp_path / "r"
    check = versapub.write_release(rel, out)
    assert check.ok and check.verdict == "attention"
    assert any("'visit'" in w and "--others" in w and "--k" in w for w in check.attention)
    stored = json.loads((out / "check.json").read_text())
    assert stored["verdict"] == "attention" and stored["ok"] and stored["attention"] == check.attention
    assert "PASSED — NEEDS ATTENTION" in (out / "report.html").read_text()
    code, stdout, _ = run("check", str(out))
    assert code == 6 and "PASSED — NEEDS ATTENTION" in stdout and "WARN identity risk" in stdout
    code, stdout, _ = run("check", str(out), "--k", "2")
    assert code == 1 and "CHECKS FAILED" in stdout


def test_sensitive_column_needs_a_rule_and_identifying_cannot_be_in_one() -> None:
    data = _data()
    with pytest.raises(RuleError, match="declared sensitive, but no rule protects"):
        versapub.publish(
            data, ["age -> disease"], l=2, columns=ColumnRoles(identifying=("patient",), sensitive=("sex",))
        )
    with pytest.raises(RuleError, match="declared identifying"):
        versapub.publish(
            data, ["patient -> disease"], l=2, columns=ColumnRoles(identifying=("patient",), others="insensitive")
        )
    # with undecided columns too, both problems at once (issue 44)
    with pytest.raises(versapub.errors.Refused, match=r"(?s)declared identifying.*without a decision"):
        versapub.publish(data, ["patient -> disease"], l=2, columns=ColumnRoles(identifying=("patient",)))
    with pytest.raises(InputError, match="both"):
        ColumnRoles(identifying=("a",), sensitive=("a",))


def test_identity_check_counts_cells_from_the_files(tmp_path: Path) -> None:
    data = _data()
    rel = versapub.publish(
        data, ["age -> disease"], l=2, columns=ColumnRoles(identifying=("patient",), others="insensitive")
    )
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    found = {i["table"]: i for i in identity_check(out, k=None)}
    for t in rel.tables:  # brute force over the input's records
        keys = [a for a in t.attributes if a not in t.table.sensitive_attributes]
        cells: dict[tuple[str, ...], int] = {}
        for row in zip(*(data[a] for a in keys), strict=True):
            cells[row] = cells.get(row, 0) + 1
        assert found[t.name]["k"] == min(cells.values())
        assert found[t.name]["unique_share"] == pytest.approx(sum(c for c in cells.values() if c == 1) / 60)
    smallest = min(i["k"] for i in found.values())
    assert all(i["ok"] for i in identity_check(out, k=smallest))
    assert not all(i["ok"] for i in identity_check(out, k=smallest + 1))


def test_cli_roles_and_check_k(tmp_path: Path) -> None:
    data = _data()
    f = tmp_path / "d.csv"
    f.write_text("patient,age,sex,disease\n" + "".join(",".join(r) + "\n" for r in zip(*data.values(), strict=True)))
    out = tmp_path / "rel"
    code, _, stderr = run("publish", "--input", str(f), "--rule", "age, sex -> disease", "--out", str(out))
    assert code == 2 and "'patient'" in stderr and not out.exists()
    code, stdout, stderr = run(
        "publish", "--input", str(f), "--rule", "age, sex -> disease", "--identifying", "patient", "--out", str(out)
    )
    assert code == 0, stderr
    assert "Removed as identifying: patient" in stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["columns"]["removed"] == ["patient"] and "patient" not in m["attributes"]
    assert all("identity_risk" in t for t in m["tables"])
    code, stdout, _ = run("check", str(out), "--k", "2")
    assert code == 0 and "identity risk" in stdout
    code, stdout, _ = run("check", str(out), "--k", "1000")
    assert code == 1 and "< k = 1000" in stdout
    code, _, stderr = run("check", str(out), "--k", "1")
    assert code == 2 and "--k must be at least 2" in stderr


def test_config_columns_section(tmp_path: Path) -> None:
    data = _data()
    f = tmp_path / "d.csv"
    f.write_text("patient,age,sex,disease\n" + "".join(",".join(r) + "\n" for r in zip(*data.values(), strict=True)))
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[input]\npath = "{f}"\n[columns]\nidentifying = ["patient"]\nsensitive = ["disease"]\n'
        '[privacy]\nrules = ["age, sex -> disease"]\n'
    )
    out = tmp_path / "rel"
    code, _, stderr = run("publish", str(cfg), "--out", str(out))
    assert code == 0, stderr
    assert json.loads((out / "manifest.json").read_text())["columns"]["sensitive"] == ["disease"]


def _wide() -> dict[str, list[str]]:
    """60 records: the rule's columns, two undecided ones, a near-unique record id."""
    rng = np.random.default_rng(5)
    n = 60
    return {
        "patient": [f"p{i}" for i in range(n)],
        "age": [str(x) for x in rng.integers(20, 24, n)],
        "sex": list(rng.choice(["F", "M"], n)),
        "disease": list(rng.choice(["flu", "cold", "gout", "acne"], n)),
        "ward": list(rng.choice(["A", "B", "C"], n)),
        "bed_class": list(rng.choice(["1", "2"], n)),
    }


def test_no_column_is_published_without_a_decision() -> None:
    """Issue 27: a column no rule names and no role declares is refused, every one named with
    its values and share of unique records and the ways out; --others decides the rest at once
    but never covers a likely direct identifier; the manifest records what others covered."""
    data = _wide()
    with pytest.raises(InputError) as e:
        versapub.publish(data, ["age, sex -> disease"], l=2, columns=ColumnRoles(identifying=("patient",)))
    msg = str(e.value)
    assert "2 column(s) would be published without a decision" in msg
    assert "'ward' (3 values, 0% of records unique)" in msg and "'bed_class' (2 values" in msg
    assert "--others insensitive|quasi-identifying|identifying" in msg and "--insensitive" in msg
    # others never covers the record id: it must be declared by name
    with pytest.raises(InputError, match=r"'patient'.*--others does not cover them"):
        versapub.publish(data, ["age, sex -> disease"], l=2, columns=ColumnRoles(others="insensitive"))
    rel = versapub.publish(
        data, ["age, sex -> disease"], l=2, columns=ColumnRoles(identifying=("patient",), others="insensitive")
    )
    assert rel.columns["others"] == "insensitive" and rel.columns["by_others"] == ["ward", "bed_class"]
    assert set(rel.columns["insensitive"]) == {"ward", "bed_class"} and "ward" in rel.attributes
    # others = identifying removes them
    gone = versapub.publish(
        data, ["age, sex -> disease"], l=2, columns=ColumnRoles(identifying=("patient",), others="identifying")
    )
    assert "ward" not in gone.attributes and set(gone.columns["removed"]) == {"patient", "ward", "bed_class"}
    # a declared role decides a column one by one
    by_name = ColumnRoles(identifying=("patient",), insensitive=("ward", "bed_class"))
    one = versapub.publish(data, ["age, sex -> disease"], l=2, columns=by_name)
    assert one.columns["by_others"] == [] and one.columns["others"] is None
    with pytest.raises(InputError, match="others must be one of"):
        ColumnRoles(others="sensitive")


def test_others_on_the_command_line_and_in_a_configuration(tmp_path: Path) -> None:
    data = _wide()
    f = tmp_path / "d.csv"
    f.write_text(",".join(data) + "\n" + "".join(",".join(r) + "\n" for r in zip(*data.values(), strict=True)))
    code, _, stderr = run(
        "publish",
        "--input",
        str(f),
        "--rule",
        "age, sex -> disease",
        "--identifying",
        "patient",
        "--out",
        str(tmp_path / "a"),
    )
    assert code == 2 and "'ward'" in stderr and "without a decision" in stderr and not (tmp_path / "a").exists()
    code, _, stderr = run(
        "publish",
        "--input",
        str(f),
        "--rule",
        "age, sex -> disease",
        "--identifying",
        "patient",
        "--others",
        "insensitive",
        "--out",
        str(tmp_path / "b"),
    )
    assert code == 0, stderr
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[input]\npath = "{f}"\n[columns]\nidentifying = ["patient"]\nothers = "quasi-identifying"\n'
        '[privacy]\nrules = ["age, sex -> disease"]\n'
    )
    code, _, stderr = run("publish", str(cfg), "--out", str(tmp_path / "c"))
    assert code == 0, stderr
    m = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert m["columns"]["others"] == "quasi-identifying" and set(m["columns"]["quasi-identifying"]) == {
        "ward",
        "bed_class",
    }
    cfg.write_text(f'[input]\npath = "{f}"\n[columns]\nothers = "everything"\n[privacy]\nrules = ["a -> b"]\n')
    code, _, stderr = run("publish", str(cfg), "--out", str(tmp_path / "d"))
    assert code == 2 and "others must be one of" in stderr


@pytest.mark.parametrize(
    ("name", "values", "refused"),
    [
        ("admission_type_id", [str(i % 8) for i in range(400)], False),  # a code named like an id: a note
        ("discharge_disposition_id", [str(i % 26) for i in range(400)], False),
        ("encounter_id", [f"e{i}" for i in range(400)], True),  # all unique
        ("patient_nbr", [f"p{i // 2 if i < 184 else i}" for i in range(400)], True),  # 54 % unique
        ("patient_id", [f"p{i % 150}" for i in range(400)], True),  # 150 values, a name like an id
    ],
)
def test_coded_id_columns_are_notes_and_identifiers_are_refused(name: str, values: list[str], refused: bool) -> None:
    """Issue 27: a name match alone on a column with few values is a note; real identifiers
    (all unique, 54 % unique, many values under an identifier's name) are still refused."""
    rng = np.random.default_rng(1)
    data = {
        name: values,
        "age": [str(x) for x in rng.integers(20, 30, 400)],
        "disease": list(rng.choice(["flu", "cold", "gout", "acne"], 400)),
    }
    roles = ColumnRoles(others="insensitive")
    if refused:
        with pytest.raises(InputError, match=name):
            versapub.publish(data, ["age -> disease"], l=2, columns=roles)
        return
    rel = versapub.publish(data, ["age -> disease"], l=2, columns=roles)
    assert name in rel.attributes and any(name in n and "named like an identifier" in n for n in rel.notes)
    # a column on a rule's left-hand side counts as declared: no note
    rel2 = versapub.publish(data, [f"age, {name} -> disease"], l=2)
    assert not any(name in n for n in rel2.notes)


def test_dates_and_zip_codes_get_a_note() -> None:
    rng = np.random.default_rng(2)
    n = 200
    data = {
        "admitted": [f"2021-0{1 + i % 9}-1{i % 10}" for i in range(n)],
        "home": [f"{47600 + i % 30}" for i in range(n)],
        "age": [str(x) for x in rng.integers(20, 30, n)],
        "disease": list(rng.choice(["flu", "cold", "gout", "acne"], n)),
    }
    rel = versapub.publish(
        data, ["age -> disease"], l=2, columns=ColumnRoles(others="insensitive", allow_unique=("admitted",))
    )
    assert any("'admitted' looks like a date" in x for x in rel.notes)
    assert any("'home' looks like a 5-digit zip code" in x for x in rel.notes)


def test_a_flag_named_like_a_date_is_no_date() -> None:
    """A date word in a name is a date only with a date's many values or its form: a 0/1
    ``death`` flag or an ``admission_type`` code gets no note; ``admission_date`` does."""
    rng = np.random.default_rng(4)
    n = 200
    data = {
        "death": [str(x) for x in rng.integers(0, 2, n)],
        "admission_type": [f"t{x}" for x in rng.integers(0, 8, n)],
        "admission_date": [f"2021-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(n)],
        "age": [str(x) for x in rng.integers(20, 30, n)],
        "disease": list(rng.choice(["flu", "cold", "gout"], n)),
    }
    rel = versapub.publish(data, ["age -> disease"], l=2, columns=ColumnRoles(others="insensitive"))
    dated = [x for x in rel.notes if "looks like a date" in x]
    assert len(dated) == 1 and "'admission_date'" in dated[0]


@pytest.mark.parametrize(
    ("name", "values", "refused"),
    [("patient_nbr", 120, True), ("admission_type_id", 8, False), ("discharge_disposition_id", 26, False)],
)
def test_coded_ids_are_notes_and_numbered_patients_are_refused(name: str, values: int, refused: bool) -> None:
    rng = np.random.default_rng(9)
    n = 600
    data = {
        name: [f"{x}" for x in rng.integers(0, values, n)],
        "age": [str(x) for x in rng.integers(20, 30, n)],
        "disease": list(rng.choice(["flu", "cold", "gout"], n)),
    }
    roles = ColumnRoles(others="insensitive")
    if refused:
        with pytest.raises(InputError, match=f"'{name}'.*its name reads like a direct identifier"):
            versapub.publish(data, ["age -> disease"], l=2, columns=roles)
    else:
        rel = versapub.publish(data, ["age -> disease"], l=2, columns=roles)
        assert any(f"'{name}'" in x and "a code" in x for x in rel.notes)
