"""Issue 70: the Python API a notebook user meets — ``versapub.publish`` with keyword groups
that mirror the job's sections (:class:`versapub.Privacy`, :class:`versapub.Method`), the long
form kept working with a deprecation warning, and the notebook-style example run as written."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import versapub
from versapub.errors import ConfigError, InputError

ROOT = Path(__file__).resolve().parents[1]


def _table() -> versapub.EncodedTable:
    return versapub.read_table(ROOT / "examples/data.csv", missing="error")


ROLES = versapub.ColumnRoles(identifying=("patient_id",), others="insensitive")
RULES = ["age, sex -> disease", "zip -> education"]


def _files(release: versapub.Release, out: Path) -> dict[str, object]:
    """The published tables and the job the manifest records."""
    versapub.write_release(release, out)
    job = json.loads((out / "manifest.json").read_text())["job"]
    return {"job": job, **{p.name: p.read_text() for p in sorted(out.glob("*.csv"))}}


def test_groups_publish_what_the_long_form_publishes(tmp_path: Path) -> None:
    """The same job by groups and by the long form: the same published files, and the long
    form warns, naming the groups to use."""
    grouped = versapub.publish(
        _table(),
        RULES,
        l=2,
        seed=1,
        columns=ROLES,
        privacy=versapub.Privacy(k=5, keys=["age", "sex", "zip"], suppression_mode="cells"),
        method=versapub.Method(decomposition="uad"),
    )
    with pytest.warns(DeprecationWarning, match=r"k=, keys=, suppression_mode=.*versapub\.Privacy"):
        long = versapub.publish(
            _table(), RULES, l=2, seed=1, columns=ROLES, k=5, keys=["age", "sex", "zip"], suppression_mode="cells"
        )
    a, b = _files(grouped, tmp_path / "a"), _files(long, tmp_path / "b")
    assert a == b and a["job"]["keys"] == ["age", "sex", "zip"]  # type: ignore[index]


def test_a_setting_given_twice_or_unknown_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"k given both as a keyword and in Privacy"):
        versapub.publish(_table(), RULES, columns=ROLES, privacy=versapub.Privacy(k=5), k=3)
    with pytest.raises(ConfigError, match=r"anonymizer given both"):
        versapub.publish(
            _table(), RULES, columns=ROLES, anonymizer="anatomy", method=versapub.Method(anonymizer="mondrian")
        )
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*bogus"):
        versapub.publish(_table(), RULES, columns=ROLES, bogus=1)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: versapub.Privacy(k=0), "whole number >= 1"),
        (lambda: versapub.Privacy(max_risk=1.5), r"probability in \(0, 1\]"),
        (lambda: versapub.Privacy(risk_measure="worst"), "highest, average"),
        (lambda: versapub.Privacy(suppression_mode="drop"), "remove, cells"),
        (lambda: versapub.Privacy(keys="age"), "sequence of column names"),
        (lambda: versapub.Method(hierarchies=["zip"]), "is a mapping"),
        (lambda: versapub.Method(detach_others="yes"), "True or False"),
    ],
)
def test_groups_are_validated_on_construction(make: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        make()  # type: ignore[operator]


def test_the_signature_is_short() -> None:
    """The long signature a notebook user met (22 keyword parameters) is now the common
    settings plus the groups."""
    params = inspect.signature(versapub.publish).parameters
    named = [p for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert len(named) <= 13 and {"privacy", "method"} <= set(params)
    assert versapub.Privacy(keys=["a"]).keys == ("a",)  # lists taken, kept as tuples (a frozen value)


def test_the_notebook_example_runs(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    r = subprocess.run(
        [sys.executable, "examples/notebook.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "verdict:" in r.stdout and "women with flu" in r.stdout
    manifest = json.loads((tmp_path / "notebook-release" / "manifest.json").read_text())
    assert manifest["job"]["keys"] == ["age", "sex", "zip"]
