"""Treatments of household-level columns drawn once per household (issue 68, item 3): with
``--household``, noise, microaggregation and PRAM of a column constant within every household
leave it constant within every household (without it, members drift apart), microaggregation
groups at least k households, the manifest's record counts records changed (recounted here by
brute force) and says the unit; invariant PRAM is refused with a way out that publishes; the
verifier's PRAM expectation reads the households' clustered variance (hand-computed)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.datasets.households import households
from versapub.publishing.household_treating import per_household
from versapub.treatments import parse_treatment
from versapub.verify.treatments.perturbation import _pram_expected

TREATMENTS = [
    "noise:columns=hh_income,magnitude=20",
    "microaggregation:columns=hh_income,k=5",
    "pram:columns=region,retention=0.7",
]


def _table(n_households: int = 300) -> EncodedTable:
    return EncodedTable.from_columns(households(n_households=n_households, seed=1))


def _constant_within(table: EncodedTable, column: str) -> bool:
    hh, v = table.codes("hh_id").astype(np.int64), table.codes(column).astype(np.int64)
    order = np.lexsort((v, hh))
    same = hh[order][1:] == hh[order][:-1]
    return bool(np.all(v[order][1:][same] == v[order][:-1][same]))


@pytest.mark.parametrize("spec", TREATMENTS)
def test_a_household_level_column_stays_one_value_per_household(spec: str) -> None:
    t = _table()
    treatment = parse_treatment(spec)
    (column,) = treatment.columns
    assert _constant_within(t, column)
    out = per_household(treatment, t, "hh_id", np.random.default_rng(0))
    assert out is not None and _constant_within(out.table, column)
    before, after = t.column(column).decode(), out.table.column(column).decode()
    assert out.record["changed"][column] == int((before != after).sum()) > 0  # records, brute force
    assert out.record["unit"] == "household" and out.record["households"] == len(np.unique(t.codes("hh_id")))
    drifted = treatment.apply(t, np.random.default_rng(0)).table  # per record, as without --household
    assert spec.startswith("micro") or not _constant_within(drifted, column)
    if spec.startswith("micro"):  # every published value held by at least k households
        hh, v = out.table.codes("hh_id"), out.table.codes(column)
        pairs = np.unique(np.column_stack([v, hh]), axis=0)
        assert np.bincount(pairs[:, 0]).max() >= 5 and np.bincount(pairs[:, 0])[np.unique(pairs[:, 0])].min() >= 5


def test_a_person_level_column_is_treated_per_record() -> None:
    t = _table()
    assert (
        per_household(parse_treatment("noise:columns=age,magnitude=10"), t, "hh_id", np.random.default_rng(0)) is None
    )
    assert (
        per_household(parse_treatment("noise:columns=hh_income,magnitude=10"), t, None, np.random.default_rng(0))
        is None
    )


def _csv(path: Path, n_households: int = 400) -> Path:
    data = households(n_households=n_households, seed=2)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(data))
        w.writerows(zip(*data.values(), strict=True))
    return path


JOB = ["--rule", "region, hh_size, sex, age -> tenure", "--l", "2", "--household", "hh_id", "--others", "insensitive"]
JOB += ["--allow-unique", "hh_income", "--allow-proxy", "hh_income,dwelling", "--seed", "3", "--no-utility"]


@pytest.mark.parametrize("spec", TREATMENTS)
def test_published_and_checked_against_the_input(tmp_path: Path, spec: str) -> None:
    """Through the CLI: published, the record says the unit, and ``check --original``
    (which recounts every changed count and PRAM's expectation) accepts the release."""
    data = _csv(tmp_path / "hh.csv")
    r = CliRunner().invoke(cli, ["publish", "--input", str(data), *JOB, "--treat", spec, "--out", str(tmp_path / "r")])
    assert r.exit_code in (0, 6), r.output
    assert "drawn once per household" in r.output
    (record,) = json.loads((tmp_path / "r" / "manifest.json").read_text())["treatments"]
    assert record["unit"] == "household"
    checked = CliRunner().invoke(cli, ["check", str(tmp_path / "r"), "--original", str(data)])
    assert checked.exit_code in (0, 6), checked.output
    assert "FAIL" not in checked.output


def test_invariant_pram_of_a_household_level_column_is_refused_and_the_way_out_works(tmp_path: Path) -> None:
    data = _csv(tmp_path / "hh.csv")
    args = ["publish", "--input", str(data), *JOB]
    r = CliRunner().invoke(cli, [*args, "--treat", "pram:columns=region,invariant=true", "--out", str(tmp_path / "no")])
    assert r.exit_code == 2 and "invariant=false" in r.output and not (tmp_path / "no").exists(), r.output
    r = CliRunner().invoke(
        cli, [*args, "--treat", "pram:columns=region,invariant=false", "--out", str(tmp_path / "ok")]
    )
    assert r.exit_code in (0, 6), r.output


def test_the_pram_expectation_reads_the_households_variance() -> None:
    """Two values, stay 0.8 and 0.5; households (a, 3 members), (a, 1), (b, 2): mean
    3·0.2 + 1·0.2 + 2·0.5 = 1.8 either way; variance per record 4·0.16 + 2·0.25 = 1.14, per
    household 9·0.16 + 1·0.16 + 4·0.25 = 2.6. A declared 1.8 + 4.5·sqrt(2.6) passes only
    with the households' variance (PRAM_SIGMAS standard deviations)."""
    from versapub.verify.treatments.treatments import PRAM_SIGMAS

    record = {"matrices": [{"column": "x", "values": ["a", "b"], "matrix": [[0.8, 0.2], [0.5, 0.5]]}]}
    counts = {"a": 4, "b": 2}
    clusters = (["a", "a", "b"], np.array([3.0, 1.0, 2.0]))
    declared = int(1.8 + (PRAM_SIGMAS - 0.2) * 2.6**0.5)
    assert declared > 1.8 + PRAM_SIGMAS * 1.14**0.5  # beyond the per-record reading
    ((ok_records, _),) = _pram_expected(record, "x", counts, declared)
    ((ok_households, said),) = _pram_expected(record, "x", counts, declared, clusters)
    assert not ok_records and ok_households, said
