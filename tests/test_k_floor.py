"""``publish --k K`` and ``check --k K`` test the same thing (issue 27; since issue 47
``publish`` meets the floor instead of refusing: ``tests/test_k_recoding.py``);
``[privacy] k`` in a job and a policy."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("kfloor")
    rng = np.random.default_rng(5)
    with (d / "t.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["age", "sex", "town", "disease"])
        for _ in range(300):  # cells of (age, sex, town) from a few records to ~30
            w.writerow(
                [
                    f"a{min(int(rng.geometric(0.35)), 6)}",
                    rng.choice(["F", "M"]),
                    f"t{rng.integers(0, 2)}",
                    f"d{rng.integers(0, 5)}",
                ]
            )
    return ["--input", str(d / "t.csv"), "--rule", "age, sex -> disease", "--insensitive", "town", "--no-utility"]


@pytest.mark.parametrize("seed", [0, 1])
def test_publish_k_meets_the_floor_that_check_k_tests(job: list[str], tmp_path: Path, seed: int) -> None:
    """Since issue 47 the default job meets ``--k`` (Anatomy's exactly published columns
    recoded): where ``check --k`` passes on the release without a floor, the same release is
    written; where it fails, the release written with ``--k`` recodes columns and passes it."""
    base = tmp_path / "base"
    assert run("publish", *job, "--seed", str(seed), "--out", str(base))[0] == 0
    outcomes = []
    for k in range(2, 9):
        checked = run("check", str(base), "--k", str(k))[0]
        assert checked in (0, 1, 6)
        out = tmp_path / f"k{k}"
        code, _, err = run("publish", *job, "--seed", str(seed), "--k", str(k), "--out", str(out))
        assert code == 0, (k, err)
        recoded = json.loads((out / "manifest.json").read_text()).get("recoded")
        assert bool(recoded) == (checked == 1), (k, checked, recoded)
        assert run("check", str(out), "--k", str(k))[0] in (0, 6)
        outcomes.append(bool(recoded))
    assert True in outcomes and False in outcomes  # both sides of the floor are exercised


def test_k_in_the_job_file_and_in_a_policy(job: list[str], tmp_path: Path) -> None:
    data = job[1]
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[input]\npath = "{data}"\n[columns]\ninsensitive = ["town"]\n'
        '[privacy]\nl = 2\nk = 40\nrules = ["age, sex -> disease"]\n'
    )
    code, _, err = run("publish", str(cfg), "--out", str(tmp_path / "r40"), "--no-utility")
    assert code == 0, err  # met: the exactly published columns recoded until every cell holds 40
    assert json.loads((tmp_path / "r40" / "manifest.json").read_text())["recoded"]
    assert run("check", str(tmp_path / "r40"), "--policy", str(cfg))[0] in (0, 6)
    assert run("publish", str(cfg), "--k", "2", "--out", str(tmp_path / "r"), "--no-utility")[0] == 0
    code, stdout, _ = run("check", str(tmp_path / "r"), "--policy", str(cfg))  # the policy's k = 40
    assert code == 1 and "smallest published cell at least k = 40" in stdout
    with pytest.raises(Exception, match="k must be a whole number >= 2"):
        from versapub.io.config import PublishConfig

        PublishConfig(input=Path(data), rules=("a -> b",), k=1)
