"""Nothing confidential in a release's metadata (issue 27): no file of a release holds an
absolute path — the input and hierarchies are recorded by file name and SHA-256 — and the
commands that need the input find it by name beside the release, or take --original;
``--record-input-path`` keeps the absolute paths for internal use."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _write_job(folder: Path, n: int = 400) -> tuple[Path, list[str]]:
    """A table with a hierarchy applied when reading (age) and one for the anonymizer (zip)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(11)
    with (folder / "patients_2024.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["age", "zip", "sex", "disease"])
        for _ in range(n):
            w.writerow(
                [
                    int(rng.integers(20, 60)),
                    f"4760{rng.integers(0, 4)}",
                    rng.choice(["F", "M"]),
                    f"d{rng.integers(0, 6)}",
                ]
            )
    (folder / "age.csv").write_text("".join(f"{a};{a // 10 * 10}s;*\n" for a in range(20, 60)))
    (folder / "zip.csv").write_text("".join(f"4760{d};476**;*\n" for d in range(4)))
    flags = [
        "--input",
        str(folder / "patients_2024.csv"),
        "--hierarchy",
        f"age={folder / 'age.csv'}:1",
        "--hierarchy",
        f"zip={folder / 'zip.csv'}",
        "--rule",
        "age, zip, sex -> disease",
        "--anonymizer",
        "mondrian",
        "--no-utility",
    ]
    return folder / "patients_2024.csv", flags


def _files_mention(release: Path, needles: list[str]) -> list[str]:
    hits = []
    for f in release.rglob("*"):
        if f.is_file():
            text = f.read_bytes().decode("utf-8", errors="replace")
            hits += [f"{f.name}: {n}" for n in needles if n in text]
    return hits


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_no_file_of_a_release_holds_an_absolute_path(tmp_path: Path, fmt: str) -> None:
    data, flags = _write_job(tmp_path / "data" / "patients_2024")
    out = tmp_path / "out" / "rel"
    code, _, err = run("publish", *flags, "--format", fmt, "--out", str(out))
    assert code == 0, err
    needles = [str(tmp_path), str(Path.cwd()), str(data.parent), "patients_2024/"]
    assert _files_mention(out, needles) == []
    m = json.loads((out / "manifest.json").read_text())
    assert m["input"]["path"] == "patients_2024.csv" and len(m["input"]["sha256"]) == 64
    assert m["input"]["hierarchies"]["age"]["file"] == "age.csv"


def test_marginals_release_records_hierarchies_by_name(tmp_path: Path) -> None:
    from versapub.datasets import data_path

    out = tmp_path / "marg"
    code, _, err = run(
        "marginals",
        "publish",
        "--input",
        str(data_path("adult", "adult.csv.gz")),
        "--delimiter",
        ";",
        "--hierarchies",
        str(data_path("adult", "hierarchies")),
        "--column",
        "race",
        "--column",
        "sex",
        "--column",
        "occupation",
        "--sensitive",
        "occupation",
        "--k",
        "10",
        "--l",
        "2",
        "--base",
        "race, sex, occupation",
        "--out",
        str(out),
        "--no-utility",
    )
    assert code == 0, err
    assert _files_mention(out, [str(tmp_path), str(data_path()), str(Path.cwd())]) == []


def test_the_input_is_found_by_name_beside_the_release(tmp_path: Path) -> None:
    data, flags = _write_job(tmp_path / "job")
    out = tmp_path / "job" / "rel"
    assert run("publish", *flags, "--out", str(out))[0] == 0
    code, stdout, err = run("evaluate", str(out), "--queries", "20")  # input and hierarchies beside the release
    assert code == 0, err
    assert "Relative error of 20 COUNT queries" in stdout
    moved = tmp_path / "elsewhere" / "rel"
    moved.parent.mkdir()
    shutil.copytree(out, moved)
    code, _, err = run("evaluate", str(moved), "--queries", "20")
    assert code == 2 and "'patients_2024.csv'" in err and "--original" in err
    other = moved.parent / "patients_2024.csv"  # another file of that name: passed over for its SHA-256
    other.write_text(data.read_text().replace("d1", "d2"))
    code, _, err = run("evaluate", str(moved), "--queries", "20")
    assert code == 2 and "another sha256" in err and "--original" in err
    shutil.copy(data, other)  # the very input, but the age hierarchy is not there: named, never guessed
    code, _, err = run("evaluate", str(moved), "--queries", "20")
    assert code == 2 and "the hierarchy of 'age' as 'age.csv'" in err
    (moved.parent / "age.csv").write_text("".join(f"{a};{a // 5 * 5}s;*\n" for a in range(20, 60)))
    code, _, err = run("evaluate", str(moved), "--queries", "20")  # another age.csv: passed over
    assert code == 2 and "another sha256" in err
    shutil.copy(data.parent / "age.csv", moved.parent / "age.csv")
    code, _, err = run("evaluate", str(moved), "--queries", "20")
    assert code == 0, err


def test_record_input_path_keeps_the_absolute_path(tmp_path: Path) -> None:
    data, flags = _write_job(tmp_path / "job")
    out = tmp_path / "rel"
    assert run("publish", *flags, "--record-input-path", "--out", str(out))[0] == 0
    m = json.loads((out / "manifest.json").read_text())
    assert m["input"]["path"] == str(data.resolve())
    assert m["input"]["hierarchies"]["age"]["file"] == str((data.parent / "age.csv").resolve())
    code, _, err = run("evaluate", str(out), "--queries", "20")  # found where recorded
    assert code == 0, err
