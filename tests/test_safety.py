"""Never lose a user's file: --overwrite replaces only a versapub release holding nothing
else, --out may not be or contain the input, demo refuses an existing non-release."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.datasets import data_path

RULES = ["--rule", "age, ICD-9-CM -> race", "--l", "2", "--others", "insensitive"]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    f = folder / "input.csv"
    shutil.copy(data_path("running_example.csv"), f)
    (folder / "sub").mkdir()
    (folder / "sub" / "notes.txt").write_text("keep me")
    return f


def test_overwrite_refuses_a_directory_that_is_not_a_release(tmp_path: Path, data: Path) -> None:
    target = tmp_path / "docs"
    target.mkdir()
    (target / "thesis.docx").write_text("years of work")
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(target), "--overwrite")
    assert code == 2
    assert "not a versapub release" in stderr and "Traceback" not in stderr
    assert (target / "thesis.docx").read_text() == "years of work"


def test_out_equal_to_the_inputs_folder_is_refused(data: Path) -> None:
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(data.parent), "--overwrite")
    assert code == 2 and "this run reads" in stderr
    assert data.is_file() and (data.parent / "sub" / "notes.txt").read_text() == "keep me"


def test_out_containing_the_input_is_refused(tmp_path: Path, data: Path) -> None:
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(tmp_path), "--overwrite")
    assert code == 2 and "this run reads" in stderr
    assert data.is_file()


def test_out_inside_the_inputs_folder_is_fine(data: Path) -> None:
    out = data.parent / "release"
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(out))
    assert code == 0, stderr
    assert (out / "manifest.json").is_file() and data.is_file()


def test_overwrite_replaces_an_earlier_release(data: Path) -> None:
    out = data.parent / "release"
    assert run("publish", "--input", str(data), *RULES, "--out", str(out))[0] == 0
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--seed", "3", "--out", str(out), "--overwrite")
    assert code == 0, stderr
    assert '"seed": 3' in (out / "manifest.json").read_text()
    assert not list(out.parent.glob(".release.*"))  # no temporary or old directory left behind


def test_overwrite_refuses_a_release_holding_a_foreign_file(data: Path) -> None:
    out = data.parent / "release"
    assert run("publish", "--input", str(data), *RULES, "--out", str(out))[0] == 0
    (out / "my-notes.txt").write_text("mine")
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(out), "--overwrite")
    assert code == 2 and "my-notes.txt" in stderr
    assert (out / "my-notes.txt").read_text() == "mine"


def test_an_empty_existing_directory_is_used(tmp_path: Path, data: Path) -> None:
    out = tmp_path / "made-beforehand"
    out.mkdir()
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(out))
    assert code == 0, stderr
    assert (out / "manifest.json").is_file()


def test_existing_out_without_overwrite_is_refused(tmp_path: Path, data: Path) -> None:
    out = tmp_path / "exists"
    out.mkdir()
    (out / "something.txt").write_text("x")
    code, _, stderr = run("publish", "--input", str(data), *RULES, "--out", str(out))
    assert code == 2 and "--overwrite" in stderr


def test_out_that_is_a_file_is_refused(tmp_path: Path, data: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    code, _, _ = run("publish", "--input", str(data), *RULES, "--out", str(f), "--overwrite")
    assert code == 2 and f.read_text() == "x"


def test_demo_refuses_an_existing_non_release_directory(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "report.docx").write_text("keep")
    code, _, stderr = run("demo", "--out", str(target))
    assert code == 2 and "not a versapub release" in stderr
    assert (target / "report.docx").read_text() == "keep"


def test_config_file_inside_out_is_protected(tmp_path: Path, data: Path) -> None:
    cfg = tmp_path / "job" / "job.toml"
    cfg.parent.mkdir()
    cfg.write_text(f'[input]\npath = "{data}"\n[privacy]\nrules = ["age, ICD-9-CM -> race"]\n')
    code, _, _ = run("publish", str(cfg), "--out", str(cfg.parent), "--overwrite")
    assert code == 2 and cfg.is_file()
