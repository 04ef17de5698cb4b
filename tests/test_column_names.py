"""Any column name works: SQL keywords, one-letter names, names with spaces, quotes, commas,
``->`` and non-ASCII letters publish, verify and load; the release format's own column
names are refused with a clear message (issue: "Column names break the checks")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import versapub
from versapub.errors import InputError
from versapub.privacy.rules import Rule, parse_rule
from versapub.verify.check import run_check

NAMES = [
    "select",
    "order",
    "group",
    "from",
    "where",
    "table",
    "value",
    "c",
    "n",
    "k0",
    "d0",
    "p",
    "o",
    "g",
    "v",
    "mx",
    "t0",
    "q",
    "s",
    "line",
    "cells",
    "with space",
    "it's",
    'say "hi"',
    "a, b",
    "x -> y",
    "größe",
    "年龄",
    "sum",
    "__g",
    "count",
    "group_id",
    "Count",
]


@st.composite
def named_jobs(draw: st.DrawFn) -> tuple[dict[str, list[str]], list[Rule], int]:
    m = draw(st.integers(3, 5))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=m, max_size=m, unique=True))
    seed = draw(st.integers(0, 1000))
    rng = np.random.default_rng(seed)
    n = 40
    # four values, ten records each (in a random order): every rule is feasible at l = 2
    data = {a: [f"{a[:2]}{v}" for v in rng.permutation(np.arange(n) % 4)] for a in names}
    rhs = draw(st.sampled_from(names))
    others = [a for a in names if a != rhs]
    lhs = draw(st.lists(st.sampled_from(others), min_size=1, max_size=len(others), unique=True))
    rules = [Rule(tuple(lhs), rhs)]
    if draw(st.booleans()):
        rhs2 = draw(st.sampled_from(others))
        rules.append(Rule(tuple(a for a in names if a != rhs2)[:2], rhs2))
    return data, rules, seed


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    job=named_jobs(), fmt=st.sampled_from(["csv", "parquet"]), dec=st.sampled_from(["uad", "gd", "single-attribute"])
)
def test_awkward_names_publish_check_and_load(
    tmp_path_factory: pytest.TempPathFactory, job: tuple[dict[str, list[str]], list[Rule], int], fmt: str, dec: str
) -> None:
    data, rules, seed = job
    if any(a.lower() in ("count", "group_id") for a in data):  # the format's own columns: refused, clearly
        with pytest.raises(InputError, match="reserved by the release format"):
            versapub.EncodedTable.from_columns(data)
        return
    table = versapub.EncodedTable.from_columns(data)
    rel = versapub.publish(
        table, rules, l=2, seed=seed, decomposition=dec, columns=versapub.ColumnRoles(others="insensitive")
    )
    out = tmp_path_factory.mktemp("r") / "release"
    assert versapub.write_release(rel, out, format=fmt).ok  # runs every check from the files
    rep = run_check(out, original=table)
    assert rep.ok, rep.failures()
    model = versapub.load_release(out)
    for a in data:
        est = model.marginal((a,))
        assert abs(est.values.sum() - 1.0) < 1e-9


def test_quoted_rule_syntax_for_awkward_names() -> None:
    r = parse_rule("'a, b', 'x -> y', \"it's\" -> größe")
    assert r.lhs == ("a, b", "x -> y", "it's") and r.rhs == "größe"


@pytest.mark.parametrize("name", ["count", "group_id", "COUNT", "Group_ID"])
def test_reserved_names_are_refused(name: str) -> None:
    with pytest.raises(InputError, match="reserved by the release format"):
        versapub.EncodedTable.from_columns({name: ["a", "b"], "x": ["1", "2"]})


def test_reserved_name_in_a_file_is_refused_by_the_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from versapub.cli.main import cli

    f = tmp_path / "d.csv"
    f.write_text("count,disease\n1,flu\n2,cold\n")
    r = CliRunner().invoke(
        cli, ["publish", "--input", str(f), "--rule", "count -> disease", "--out", str(tmp_path / "o")]
    )
    assert r.exit_code == 2
    assert "'count'" in r.stderr and "reserved" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_names_differing_only_in_case_are_refused() -> None:
    with pytest.raises(InputError, match="differ only in letter case"):
        versapub.EncodedTable.from_columns({"Sex": ["a"], "sex": ["b"]})
