"""A floor that counts households (issue 68, ``--unit household``): a household unique on its
composition although each member sits in a cell of at least k persons is never published
(removed whole, within ``--suppression``), while ``--k`` on records publishes it; the refusal
names the share that works, and following it publishes; the verifier, written apart, recounts
the households from the input and fails a release whose counts were forged; the options it
cannot honour are refused in one paragraph."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub import read_table
from versapub.cli.main import cli
from versapub.verify.identity.households import household_findings


def _households(path: Path) -> Path:
    """Five households of a woman and a man, five of two women, one of two men — all aged 30
    in the north: every person's (region, sex, age) cell holds at least 7 people, but the
    two men's household is the only one of its composition."""
    rows = []
    kinds = [("F", "M")] * 5 + [("F", "F")] * 5 + [("M", "M")]
    diseases = ["flu", "cold", "asthma", "ulcer"]
    for h, members in enumerate(kinds):
        for j, sex in enumerate(members):
            rows.append([f"h{h:02d}", "north", sex, "30", diseases[(h + j) % 4]])
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["hh", "region", "sex", "age", "disease"])
        w.writerows(rows)
    return path


JOB = ["--rule", "region, sex, age -> disease", "--l", "2", "--household", "hh", "--seed", "1", "--no-utility"]


def _publish(data: Path, out: Path, *extra: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["publish", "--input", str(data), *JOB, *extra, "--out", str(out)])
    return r.exit_code, r.output


def test_a_household_unique_on_its_composition_is_never_published(tmp_path: Path) -> None:
    data = _households(tmp_path / "hh.csv")
    code, out = _publish(data, tmp_path / "records", "--k", "5")  # the floor on records: every cell holds 7+
    assert code in (0, 6), out
    assert json.loads((tmp_path / "records" / "manifest.json").read_text())["n_records"] == 22
    code, out = _publish(data, tmp_path / "hh", "--k", "5", "--unit", "household", "--suppression", "0.1")
    assert code in (0, 6), out
    m = json.loads((tmp_path / "hh" / "manifest.json").read_text())
    assert m["n_records"] == 20 and m["removed"]["records"] == 2 and m["job"]["unit"] == "household"
    (figures,) = m["household"]["tables"]
    assert figures["households"] == 10 and figures["smallest_structure_class"] == 5
    qit = (tmp_path / "hh" / "T1_qit.csv").read_text()
    assert "M" in qit  # the women-and-men households stay; only the men's own is gone
    checked = CliRunner().invoke(cli, ["check", str(tmp_path / "hh"), "--original", str(data), "--json"])
    assert checked.exit_code in (0, 6), checked.output
    found = [f for f in json.loads(checked.stdout)["verification"]["findings"] if f["check"] == "households"]
    assert found and found[0]["ok"] and "10 households (20 records)" in found[0]["message"]


def test_the_refusal_names_the_share_that_works(tmp_path: Path) -> None:
    data = _households(tmp_path / "hh.csv")
    code, out = _publish(data, tmp_path / "no", "--k", "5", "--unit", "household")
    assert code == 2 and "1 households (2 records" in out and not (tmp_path / "no").exists(), out
    share = out.split("Give --suppression ")[1].split()[0]
    code, out = _publish(data, tmp_path / "ok", "--k", "5", "--unit", "household", "--suppression", share)
    assert code in (0, 6), out


def test_the_verifier_fails_a_forged_household_count(tmp_path: Path) -> None:
    data = _households(tmp_path / "hh.csv")
    code, out = _publish(data, tmp_path / "hh", "--k", "5", "--unit", "household", "--suppression", "0.1")
    assert code in (0, 6), out
    m = json.loads((tmp_path / "hh" / "manifest.json").read_text())
    original = read_table(data)
    ((ok, _),) = household_findings(m, original)
    assert ok
    kept = {**m, "n_records": 22, "removed": None}  # the unique household claimed kept
    ((ok, said),) = household_findings(kept, original)
    assert not ok and "leaves 20 records" in said
    ((ok, _),) = household_findings({**m, "household": {"column": "nowhere"}}, original)
    assert not ok


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--k", "5", "--unit", "household", "--household", "region"], None),
        (["--unit", "household"], "sets no floor"),
        (["--k", "5", "--unit", "household", "--suppression-mode", "cells"], "--suppression-mode cells"),
        (["--k", "5", "--unit", "household", "--anonymizer", "mondrian:suppression=0.1"], "own"),
    ],
)
def test_what_the_household_floor_cannot_honour_is_refused(tmp_path: Path, extra: list[str], says: str | None) -> None:
    data = _households(tmp_path / "hh.csv")
    args = ["publish", "--input", str(data), "--rule", "region, sex, age -> disease", "--l", "2", "--no-utility"]
    if says is None:  # no household id named at all
        args += ["--k", "5", "--unit", "household"]
        r = CliRunner().invoke(cli, [*args, "--identifying", "hh", "--out", str(tmp_path / "x")])
        assert r.exit_code == 2 and "--household COLUMN" in r.output, r.output
        return
    r = CliRunner().invoke(cli, [*args, "--household", "hh", *extra, "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output, r.output
    assert not (tmp_path / "x").exists()


def test_no_short_household_may_empty_the_release_or_break_a_rule(tmp_path: Path) -> None:
    """Removing households must leave records and every rule still feasible: ``--k 20`` (no
    structure shared by 20 households) is refused naming fewer keys; on a table whose two
    men's household holds the only two 'cold' beyond an even split (11 flu, 11 cold: l = 2
    feasible; without them 11 of 20 flu), removing it is refused naming the ways out that
    keep the records — never "without --suppression", which would not publish here."""
    data = _households(tmp_path / "hh.csv")
    code, out = _publish(data, tmp_path / "all", "--k", "20", "--unit", "household", "--suppression", "0.99")
    assert code == 2 and "would leave no record" in out and not (tmp_path / "all").exists(), out
    rows = [[f"a{h}", "north", s, "30", d] for h in range(5) for s, d in (("F", "flu"), ("M", "cold"))]
    pairs = ["flu"] * 3 + ["cold"] * 2  # three households of two women with flu, two with cold
    rows += [[f"b{h}", "north", "F", "30", d] for h, d in enumerate(pairs) for _ in range(2)]
    rows += [["m0", "north", "M", "30", "cold"], ["m0", "north", "M", "30", "cold"]]
    path = tmp_path / "cold.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["hh", "region", "sex", "age", "disease"])
        w.writerows(rows)
    flu = sum(r[4] == "flu" for r in rows)
    assert (flu, len(rows)) == (11, 22)
    code, out = _publish(path, tmp_path / "cold", "--k", "5", "--unit", "household", "--suppression", "0.1")
    assert code == 2 and "could no longer be met" in out and "--keys" in out and "without --suppression" not in out
