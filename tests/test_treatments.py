"""Treatments (issue 48, first part): top and bottom coding and rounding, applied to the
input before anonymizing — hand-computed cases (sdcMicro's ``topBotCoding`` semantics:
values beyond the threshold replaced by it, or by the value given), properties over random
columns, the manifest's record, the verifier's checks from the files and against the
untreated original, the configuration's ``[[treatment]]`` and the CLI's ``--treat``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import versapub
from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InputError
from versapub.io.config import load_config
from versapub.treatments import make_treatment, parse_treatment
from versapub.verify.files.release_check import verify_release

from .conftest import seal

DATA = Path(__file__).resolve().parents[1] / "examples" / "data.csv"
RNG = np.random.default_rng(0)


def _x(values: list[str]) -> EncodedTable:
    return EncodedTable.from_columns({"x": values}, missing="value")  # an empty cell kept: missing


def _apply(spec: str, values: list[str]) -> list[str]:
    return list(parse_treatment(spec).apply(_x(values), RNG).table.column("x").decode())


def test_hand_computed_top_bottom_coding_and_rounding() -> None:
    v = ["1", "5", "10", "20", "100", ""]
    assert _apply("top-coding:columns=x,threshold=20", v) == ["1", "5", "10", "20", "20", ""]
    assert _apply("top-coding:columns=x,threshold=20,value=25", v) == ["1", "5", "10", "20", "25", ""]
    # the 0.8 quantile of 1, 5, 10, 20, 100 (4 of the 5 records at or below 20; the missing one left out)
    assert _apply("top-coding:columns=x,quantile=0.8", v) == ["1", "5", "10", "20", "20", ""]
    assert _apply("bottom-coding:columns=x,threshold=5", v) == ["5", "5", "10", "20", "100", ""]
    assert _apply("rounding:columns=x,base=5", ["1", "2.5", "-2.5", "7.4", "12", ""]) == [
        "0", "5", "0", "5", "10", "",
    ]  # fmt: skip  # halves up; missing stays
    assert _apply("rounding:columns=x,base=0.1", ["0.25", "0.04"]) == ["0.3", "0"]
    out = parse_treatment("top-coding:columns=x,quantile=0.8").apply(_x(v), RNG)
    assert out.record == {
        "name": "top-coding",
        "columns": ["x"],
        "threshold": {"x": 20.0},
        "replacement": {"x": 20.0},
        "quantile": 0.8,
        "changed": {"x": 1},
    }
    assert "1 value(s) of x above 20 published as 20" in out.note


def test_bad_treatments_are_one_paragraph() -> None:
    with pytest.raises(ConfigError, match="threshold or a quantile"):
        make_treatment("top-coding", columns="x")
    with pytest.raises(ConfigError, match="base of rounding must be a number > 0"):
        make_treatment("rounding", columns="x", base=0)
    with pytest.raises(ConfigError, match="Unknown treatment 'blur'"):
        parse_treatment("blur:columns=x")
    with pytest.raises(ConfigError, match="needs a value for magnitude"):
        parse_treatment("noise:columns=x")
    with pytest.raises(InputError, match="column 'x' holds 'ten'"):
        parse_treatment("rounding:columns=x,base=2").apply(_x(["1", "ten"]), RNG)
    with pytest.raises(InputError, match="names column 'y'"):
        parse_treatment("rounding:columns=y,base=2").apply(_x(["1"]), RNG)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=60),
    threshold=st.integers(-500, 500),
    base=st.sampled_from([1, 2, 5, 10, 0.5]),
)
def test_properties_over_random_columns(values: list[int], threshold: int, base: float) -> None:
    """Top coding: nothing above the threshold, values at or below it unchanged, as many
    changed as were above; rounding: every value a multiple of the base, within half a base."""
    text = [str(v) for v in values]
    top = parse_treatment(f"top-coding:columns=x,threshold={threshold}").apply(_x(text), RNG)
    got = [float(v) for v in top.table.column("x").decode()]
    assert all(g <= threshold for g in got)
    assert all(g == v for g, v in zip(got, values, strict=True) if v <= threshold)
    assert top.record["changed"]["x"] == sum(v > threshold for v in values)
    rounded = [float(v) for v in _apply(f"rounding:columns=x,base={base}", text)]
    assert all(
        abs(r / base - round(r / base)) < 1e-9 and abs(r - v) <= base / 2 + 1e-9
        for r, v in zip(rounded, values, strict=True)
    )


def _published(tmp_path: Path, treatments: list) -> tuple[Path, versapub.Release, EncodedTable]:
    table = versapub.read_table(DATA)
    roles = versapub.ColumnRoles(identifying=("patient_id",), others="insensitive")
    rel = versapub.publish(table, ["age, sex -> disease"], l=2, columns=roles, treatments=treatments)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    return out, rel, table.select(list(rel.attributes))


def test_a_treated_release_verifies_and_a_forged_record_fails(tmp_path: Path) -> None:
    """Top coding then rounding of hours: the release verifies against the untreated input;
    a threshold below what is published fails from the files alone; without its treatments
    block the release no longer matches the original."""
    out, rel, original = _published(
        tmp_path, ["top-coding:columns=hours,threshold=50", {"name": "rounding", "columns": ["hours"], "base": 5}]
    )
    assert rel.treatments[0]["threshold"] == {"hours": 50.0}
    assert max(float(v) for v in rel.source.column("hours").decode()) == 50
    rep = verify_release(out, original=original)
    assert rep.ok, rep.explain()
    said = [f.message for f in rep.findings if f.check == "treatment"]
    assert "rounding: every published value of 'hours' is multiples of 5" in said
    assert any("a later treatment changes it" in s for s in said)
    m = json.loads((out / "manifest.json").read_text())
    forged = json.loads(json.dumps(m))
    forged["treatments"] = [{**m["treatments"][0], "threshold": {"hours": 30.0}, "replacement": {"hours": 30.0}}]
    (out / "manifest.json").write_text(json.dumps(forged))
    seal(out)
    bad = [f.message for f in verify_release(out).failures if f.check == "treatment"]
    assert bad and "not at most 30" in bad[0]
    hidden = {k: v for k, v in m.items() if k != "treatments"}
    (out / "manifest.json").write_text(json.dumps(hidden))
    seal(out)
    assert verify_release(out).ok and not verify_release(out, original=original).ok


def test_the_original_as_published_is_treated_too(tmp_path: Path) -> None:
    """evaluate and query --original read the original through the treatments."""
    out, _, _ = _published(tmp_path, ["top-coding:columns=hours,quantile=0.9"])
    original = versapub.inspect.original_table(out, DATA)
    assert not original.mismatch
    assert (
        max(float(v) for v in original.table.column("hours").decode())
        <= json.loads((out / "manifest.json").read_text())["treatments"][0]["threshold"]["hours"]
    )


def test_the_configurations_treatment_tables_and_the_clis_treat(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text(
        f'[input]\npath = "{DATA}"\n[privacy]\nrules = ["age, sex -> disease"]\nl = 2\n'
        '[columns]\nidentifying = ["patient_id"]\nothers = "insensitive"\n'
        '[[treatment]]\nname = "top-coding"\ncolumns = ["hours"]\nthreshold = 50\n'
    )
    cfg = load_config(job)
    assert cfg.treatments == ({"name": "top-coding", "columns": ["hours"], "threshold": 50},)
    bad = tmp_path / "bad.toml"
    bad.write_text(job.read_text().replace('name = "top-coding"\n', ""))
    with pytest.raises(ConfigError, match=r"each \[\[treatment\]\] is a table with a name"):
        load_config(bad)
    res = CliRunner().invoke(
        cli, ["publish", str(job), "--treat", "rounding:columns=hours,base=10", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    assert "Treated before anonymizing — top-coding" in res.output and "rounding to multiples of 10" in res.output
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert [t["name"] for t in m["treatments"]] == ["top-coding", "rounding"]


def test_the_web_page_shows_a_jobs_treatments_as_lines() -> None:
    pytest.importorskip("starlette", reason="the web extra is installed by make test (pip install '.[test,dask,web]')")
    from versapub.web.jobs import job_of_toml

    text = '[input]\npath = "data.csv"\n[[treatment]]\nname = "rounding"\ncolumns = ["hours"]\nbase = 5\n'
    assert job_of_toml(text, "job.toml")["treatments"] == ["rounding:columns=hours,base=5"]
