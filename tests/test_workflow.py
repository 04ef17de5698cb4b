"""One workflow: the command line and the Python route give the same release."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

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


def _untimed(obj: Any) -> Any:
    """A JSON value without its timings (``seconds``)."""
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k != "seconds"}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _report_md(path: Path) -> str:
    """report.md without its timings section (the last one)."""
    text = (path / "report.md").read_text()
    return _no_seconds(text.split("## Timings (seconds)")[0])


def _no_seconds(text: str) -> str:
    """A report's text with every duration ("0.01 s") blanked."""
    return re.sub(r"\d+(\.\d+)? s\b", "… s", text)


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
        str(tmp_path / "cli" / "release"),
    ]
    for r in rules:
        args += ["--rule", r]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.stderr
    cfg = PublishConfig(input=data, rules=rules, l=2, seed=3, format=fmt, roles=ColumnRoles(others="insensitive"))
    workflow.run(cfg, tmp_path / "py" / "release")
    a, b = tmp_path / "cli" / "release", tmp_path / "py" / "release"
    tables = sorted(p.name for p in a.iterdir() if p.name.startswith("T"))
    assert tables == sorted(p.name for p in b.iterdir() if p.name.startswith("T")) and tables
    for name in tables:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ma, mb = _manifest(a), _manifest(b)
    assert ma == mb
    assert ma["utility"] is not None and ma["input"]["sha256"]
    # the reports and the checks too, apart from timings (README, "CLI or Python")
    assert _no_seconds((a / "report.html").read_text()) == _no_seconds((b / "report.html").read_text())
    assert _report_md(a) == _report_md(b) and "## Verification" in _report_md(a)
    for name in ("check.json", "verification.json"):
        assert _untimed(json.loads((a / name).read_text())) == _untimed(json.loads((b / name).read_text())), name


def test_one_model_per_publish_and_the_check_reads_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The release model is built once, for the utility; the posterior check never reads it
    (issue 46: a multi-SA table's posterior comes from the verifier's own estimate)."""
    import versapub.kinds.build as build

    built: list[object] = []
    real_build = build.model_from_release

    def counting(release: Any) -> Any:
        built.append(real_build(release))
        return built[-1]

    monkeypatch.setattr(build, "model_from_release", counting)
    cfg = PublishConfig(
        input=data_path("running_example.csv"),
        rules=("age -> race", "age -> zipcode"),
        l=2,
        decomposition="multi-sa",
        roles=ColumnRoles(others="insensitive"),
    )
    workflow.run(cfg, tmp_path / "r")
    assert len(built) == 1
    posterior = json.loads((tmp_path / "r" / "check.json").read_text())["posterior"]
    assert posterior and all("skipped" not in p for p in posterior), posterior


def test_a_refused_out_costs_no_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`demo --out mydocs` (a folder of the user's) is refused before anything is published."""
    mine = tmp_path / "mydocs"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")

    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("published before the destination was checked")

    monkeypatch.setattr(workflow, "publish", no_work)
    r = CliRunner().invoke(cli, ["demo", "--out", str(mine)])
    assert r.exit_code == 2 and "not a versapub release" in r.stderr
    assert (mine / "notes.txt").read_text() == "mine" and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
