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
from versapub.privacy.roles import ColumnRoles, name_looks_identifying, unique_share
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
    [("id", True), ("patient_id", True), ("PatientID", True), ("SSN", True), ("e-mail", True), ("DUPERSID", True),
     ("first name", True), ("paid", False), ("valid", False), ("age", False), ("zipcode", False), ("idle", False)],
)  # fmt: skip
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


def test_allow_unique_publishes_it_and_warns_about_the_exact_table() -> None:
    rel = versapub.publish(_data(), ["age, sex -> disease"], l=2, columns=ColumnRoles(allow_unique=("patient",)))
    assert "patient" in rel.attributes
    exact = [t.name for t in rel.tables if "patient" in t.attributes]
    assert any(exact[0] in w and "only one with their values" in w for w in rel.warnings)
    assert rel.identity[exact[0]]["unique_share"] == pytest.approx(1.0)


def test_sensitive_column_needs_a_rule_and_identifying_cannot_be_in_one() -> None:
    data = _data()
    with pytest.raises(RuleError, match="declared sensitive, but no rule protects"):
        versapub.publish(
            data, ["age -> disease"], l=2, columns=ColumnRoles(identifying=("patient",), sensitive=("sex",))
        )
    with pytest.raises(RuleError, match="declared identifying"):
        versapub.publish(data, ["patient -> disease"], l=2, columns=ColumnRoles(identifying=("patient",)))
    with pytest.raises(InputError, match="both"):
        ColumnRoles(identifying=("a",), sensitive=("a",))


def test_identity_check_counts_cells_from_the_files(tmp_path: Path) -> None:
    data = _data()
    rel = versapub.publish(data, ["age -> disease"], l=2, columns=ColumnRoles(identifying=("patient",)))
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
