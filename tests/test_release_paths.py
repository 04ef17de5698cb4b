"""No release file names a folder of the machine that published it (issue 66): a hierarchy
given by its absolute path and used by the recoding that meets ``--k`` is recorded by its
file name only (a path such as ``/data/patients_2024/`` can itself be confidential)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from versapub.cli.main import cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_hierarchy_used_by_the_recoding_is_named_not_located(tmp_path: Path) -> None:
    secret = tmp_path / "patients_2024"
    secret.mkdir()
    run = CliRunner().invoke
    r = run(cli, ["hierarchy", "build", str(EXAMPLES / "data.csv"), "--column", "hours", "--intervals", "5,10",
                  "--out", str(secret / "hours.csv")])  # fmt: skip
    assert r.exit_code == 0, r.output
    out = tmp_path / "rel"
    r = run(cli, ["publish", "--input", str(EXAMPLES / "data.csv"), "--rule", "age, sex -> disease", "--identifying",
                  "patient_id", "--others", "insensitive", "--hierarchy", f"hours={secret / 'hours.csv'}", "--k", "5",
                  "--no-utility", "--out", str(out)])  # fmt: skip
    assert r.exit_code in (0, 6), r.stderr
    assert '"hours.csv"' in (out / "manifest.json").read_text()
    for f in out.iterdir():
        assert str(secret) not in f.read_text(encoding="utf-8"), f.name
