"""Issue 27's "Done means" on a wide real hospital file (``tests/hospital.py``): undeclared
columns refused and named; ``--others insensitive`` writes a release whose verdict needs
attention; the diagnosis's recoding and its coarsening refused as proxies; an unrelated
column published; ``--allow-proxy`` publishes and is recorded; coded ``*_id`` columns are
notes, not refusals; the two identifiers refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.hospital import CHAPTER, CODED, DIAGNOSIS, IDENTIFIERS, RECODING, RULES, write_hospital
from versapub.cli.main import cli


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def hospital(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hospital(tmp_path_factory.mktemp("hospital") / "discharges.csv")


def _publish(data: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    rules = [a for r in RULES for a in ("--rule", r)]
    return run("publish", "--input", str(data), *rules, "--no-utility", "--out", str(out), *extra)


#: Near-unique money columns a steward drops (or generalizes): 99 % of their values are unique.
MONEY = ("--identifying", "Total.Charges", "--identifying", "Total.Costs")
IDS = ("--identifying", IDENTIFIERS[0], "--identifying", IDENTIFIERS[1])


def test_identifiers_are_refused_one_by_one_and_others_does_not_cover_them(hospital: Path, tmp_path: Path) -> None:
    code, _, err = _publish(hospital, tmp_path / "r", "--others", "insensitive", *MONEY)
    assert code == 2 and not (tmp_path / "r").exists()
    assert all(f"'{c}'" in err for c in IDENTIFIERS) and "--others does not cover them" in err
    assert not any(f"'{c}'" in err for c in CODED)  # coded *_id columns are not identifiers


def test_undeclared_columns_are_refused_and_named(hospital: Path, tmp_path: Path) -> None:
    code, _, err = _publish(hospital, tmp_path / "r", *IDS, *MONEY)
    assert code == 2 and not (tmp_path / "r").exists()
    assert "would be published without a decision" in err
    for col in ("Ethnicity", "APR.DRG.Code", RECODING, CHAPTER, "payer_id"):
        assert f"'{col}' (" in err
    assert "--others insensitive|quasi-identifying|identifying" in err


def test_the_recoding_and_the_coarsening_are_refused_as_proxies(hospital: Path, tmp_path: Path) -> None:
    code, _, err = _publish(hospital, tmp_path / "r", *IDS, *MONEY, "--others", "insensitive")
    assert code == 2 and not (tmp_path / "r").exists()
    assert f"'{RECODING}' reveals '{DIAGNOSIS}'" in err and "a copy or recoding of it" in err
    assert f"'{CHAPTER}' reveals '{DIAGNOSIS}'" in err and "a coarsening of it" in err
    assert "'Race' reveals" not in err and "'Payment.Typology.1' reveals" not in err
    assert f"--allow-proxy {RECODING}" in err


def test_others_insensitive_with_decisions_writes_a_release_that_needs_attention(
    hospital: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    code, stdout, err = _publish(
        hospital, out, *IDS, *MONEY, "--others", "insensitive", "--identifying", RECODING, "--allow-proxy", CHAPTER
    )
    assert code == 0, err
    m = json.loads((out / "manifest.json").read_text())
    published = {a for t in m["tables"] for a in t["attributes"]}
    assert {"Race", "Payment.Typology.1", "Ethnicity", CHAPTER} <= published  # unrelated columns, the allowed proxy
    assert not published & {*IDENTIFIERS, RECODING}
    assert m["columns"]["allowed_proxy"] == [CHAPTER]
    (chapter,) = [a for a in m["associations"] if a["column"] == CHAPTER]
    assert chapter["allowed"] and chapter["derived"] == pytest.approx(1.0, abs=1e-3)
    listed = {a["column"] for a in m["associations"] if not a["allowed"]}
    assert "APR.DRG.Code" in listed and "Race" not in listed  # associated, not a proxy; unrelated: not listed
    assert any("'payer_id'" in n and "a code" in n for n in m["notes"])  # a note, not a refusal
    check = json.loads((out / "check.json").read_text())
    assert check["ok"] and check["verdict"] == "attention"
    assert "PASSED — NEEDS ATTENTION" in stdout and "needs attention:" in err
    html = (out / "report.html").read_text()
    assert "PASSED — NEEDS ATTENTION" in html and "by --others insensitive" in html and "Proxies you allowed" in html
    assert run("check", str(out))[0] == 6
