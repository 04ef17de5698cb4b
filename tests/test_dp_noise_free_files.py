"""A differentially private release holds nothing computed from the input without noise
(issue 66): a 137-record input is published under DP and every file it writes — manifest,
check, verification, reports, tables — is read for the record count and the attacks' exact
figures; the steward's own ``check --original`` still shows them on the terminal."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli

N = 137


@pytest.fixture(scope="module")
def dp_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("dp66")
    rng = np.random.default_rng(1)
    with (d / "t.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["age", "sex", "disease"])
        for _ in range(N):
            w.writerow([int(rng.integers(20, 60)), "FM"[int(rng.integers(0, 2))], f"d{rng.integers(0, 4)}"])
    (d / "sex.txt").write_text("F\nM\n")
    (d / "dis.txt").write_text("d0\nd1\nd2\nd3\n")
    out = d / "dp"
    r = CliRunner().invoke(cli, ["publish", "--input", str(d / "t.csv"), "--mechanism", "dp:epsilon=1,delta=1e-9",
                                 "--domain", "age=20..59", "--domain", f"sex={d / 'sex.txt'}", "--domain",
                                 f"disease={d / 'dis.txt'}", "--seed", "3", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.stderr
    return out, d / "t.csv"


def test_no_file_of_a_dp_release_holds_the_record_count(dp_release: tuple[Path, Path]) -> None:
    """The record count appears in no file but as a noisy count (the manifest's own
    ``n_records`` is the noisy one; with this seed it is not 137)."""
    out, _ = dp_release
    m = json.loads((out / "manifest.json").read_text())
    assert m["n_records"] != N
    for f in sorted(out.iterdir()):
        text = f.read_text(encoding="utf-8")
        if f.suffix == ".csv":  # the noisy and fitted tables: noise on every cell
            continue
        assert not re.search(rf"(?<![\d.]){N}(?![\d.])", text), f"{f.name} holds {N}"


def test_the_attacks_and_the_noise_test_give_verdicts_not_figures(dp_release: tuple[Path, Path]) -> None:
    """check.json: the attacks give way to their verdict and a sentence; the noise-scale test
    keeps its verdict without its sum of squares (a one-cell table's squared deviation is the
    record count's distance from the noisy one)."""
    out, _ = dp_release
    c = json.loads((out / "check.json").read_text())
    adv = c["adversary"]
    assert adv["withheld"] and adv["rules"] == [] and adv["tables"] == [] and "n_attacks" not in adv
    noise = [f for f in c["verification"]["findings"] if f["check"] == "dp noise"]
    assert noise and all(not re.search(r"\d", f["message"]) for f in noise)
    v = json.loads((out / "verification.json").read_text())
    assert all(not re.search(r"\d", f["message"]) for f in v["findings"] if f["check"] == "dp noise")


def test_the_stewards_own_check_still_shows_the_figures(dp_release: tuple[Path, Path]) -> None:
    """``check --original`` (the steward's terminal, nothing written) runs the attacks."""
    out, data = dp_release
    r = CliRunner().invoke(cli, ["check", str(out), "--original", str(data)])
    assert r.exit_code in (0, 6), r.stdout
    assert "attacks on everything published" in r.stdout and "singled out" in r.stdout
