"""One configuration language (issue 29): TOML keys spelled like the CLI's flags are read as the
configuration's own, a guarantee's parameters sit beside its name, and quasi-identifiers
with sensitive columns create the rules ``--qi``/``--sensitive`` create."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.datasets import data_path
from versapub.io.config import load_config

DATA = data_path("running_example.csv")


def _toml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "job.toml"
    p.write_text(f'[input]\npath = "{DATA}"\n' + text)
    return p


def test_columns_qi_and_sensitive_create_the_rules_of_the_flags(tmp_path: Path) -> None:
    cfg = load_config(
        _toml(
            tmp_path,
            '[columns]\nquasi-identifying = ["age", "gender"]\nsensitive = ["ICD-9-CM"]\nothers = "insensitive"\n',
        )
    )
    flags = CliRunner().invoke(
        cli,
        [
            "rules",
            "--input",
            str(DATA),
            "--qi",
            "age,gender",
            "--sensitive",
            "ICD-9-CM",
            "--others",
            "insensitive",
            "--json",
        ],
    )
    assert flags.exit_code == 0, flags.output
    assert cfg.rules == ("age, gender -> ICD-9-CM",)
    assert [r["rhs"] for r in json.loads(flags.stdout)["rules"]] == ["ICD-9-CM"]
    assert any("quasi-identifying is read as quasi_identifying" in n for n in cfg.notes)


def test_a_guarantees_parameters_beside_its_name(tmp_path: Path) -> None:
    cfg = load_config(_toml(tmp_path, '[privacy]\nrules = ["age -> race"]\nguarantee = "recursive-cl"\nc = 3\nl = 2\n'))
    assert cfg.guarantee_spec() == {"name": "recursive-cl", "c": 3, "l": 2}


def test_both_spellings_of_one_key_are_refused(tmp_path: Path) -> None:
    import pytest

    from versapub.errors import ConfigError

    with pytest.raises(ConfigError, match="gives both 'allow-unique' and 'allow_unique'"):
        load_config(_toml(tmp_path, '[columns]\nallow-unique = ["age"]\nallow_unique = ["age"]\n'))
