"""One workflow: the command line and the Python route give the same release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub import ColumnRoles, PublishConfig, workflow
from versapub.cli.main import cli
from versapub.datasets import data_path


def _manifest(path: Path) -> dict:  # type: ignore[type-arg]
    m = json.loads((path / "manifest.json").read_text())
    m.pop("timings_s")
    if m.get("utility"):
        m["utility"].pop("seconds", None)
    return m


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_cli_and_python_routes_give_identical_releases(tmp_path: Path, fmt: str) -> None:
    data = data_path("running_example.csv")
    rules = ("age, ICD-9-CM -> race", "gender, ICD-9-CM -> zipcode")
    args = [
        "publish",
        "--input",
        str(data),
        "--l",
        "2",
        "--seed",
        "3",
        "--format",
        fmt,
        "--others",
        "insensitive",
        "--out",
        str(tmp_path / "cli"),
    ]
    for r in rules:
        args += ["--rule", r]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.stderr
    cfg = PublishConfig(input=data, rules=rules, l=2, seed=3, format=fmt, roles=ColumnRoles(others="insensitive"))
    workflow.run(cfg, tmp_path / "py")
    a, b = tmp_path / "cli", tmp_path / "py"
    tables = sorted(p.name for p in a.iterdir() if p.name.startswith("T"))
    assert tables == sorted(p.name for p in b.iterdir() if p.name.startswith("T")) and tables
    for name in tables:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ma, mb = _manifest(a), _manifest(b)
    assert ma == mb
    assert ma["utility"] is not None and ma["input"]["sha256"]
