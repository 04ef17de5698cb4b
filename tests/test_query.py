"""The COUNT query language: every operator against a row-by-row oracle, value order,
did-you-mean errors, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import versapub
from versapub.cli.main import cli
from versapub.datasets import data_path
from versapub.errors import ReleaseError
from versapub.model.query import count, count_rows, order_key, parse_query

AGES = ["9", "10", "17", "25", "40", "100"]
SEXES = ["Female", "Male"]
ROWS = [(a, s, d) for a in AGES for s in SEXES for d in ("flu", "cold", "x, y")]


def _table() -> versapub.EncodedTable:
    return versapub.EncodedTable.from_columns(
        {"age": [r[0] for r in ROWS], "sex": [r[1] for r in ROWS], "dx": [r[2] for r in ROWS]}
    )


def _oracle(pred) -> int:  # type: ignore[no-untyped-def]
    return sum(1 for r in ROWS if pred(dict(zip(("age", "sex", "dx"), r, strict=True))))


@pytest.mark.parametrize(
    ("text", "pred"),
    [
        ("age < 17", lambda r: int(r["age"]) < 17),
        ("age <= 17", lambda r: int(r["age"]) <= 17),
        ("age > 25", lambda r: int(r["age"]) > 25),
        ("age >= 10 AND age < 40", lambda r: 10 <= int(r["age"]) < 40),
        ("age BETWEEN 10 AND 25", lambda r: 10 <= int(r["age"]) <= 25),
        ("age NOT BETWEEN 10 AND 25", lambda r: not 10 <= int(r["age"]) <= 25),
        ("sex != 'Male'", lambda r: r["sex"] != "Male"),
        ("sex <> 'Male' OR dx = 'flu'", lambda r: r["sex"] != "Male" or r["dx"] == "flu"),
        (
            "NOT (sex = 'Male' AND dx IN ('flu', 'cold'))",
            lambda r: not (r["sex"] == "Male" and r["dx"] in ("flu", "cold")),
        ),
        ("dx NOT IN ('x, y')", lambda r: r["dx"] != "x, y"),
        (
            "age = 9 or age = 100 and sex = Female",
            lambda r: r["age"] == "9" or (r["age"] == "100" and r["sex"] == "Female"),
        ),
    ],
)
def test_operators_against_the_oracle(text: str, pred) -> None:  # type: ignore[no-untyped-def]
    table = _table()
    q = parse_query(text)
    assert count_rows(
        q, {a: table.column(a).values for a in table.names}, {a: table.codes(a) for a in table.names}
    ) == (_oracle(pred))


def test_model_answers_general_queries_exactly_on_a_plain_release() -> None:
    table = _table()
    from versapub.anonymizers import publish_plain
    from versapub.kinds.build import factor_of

    f = factor_of(publish_plain(table), table.n_rows, {c.name: c.cardinality for c in table.columns})
    model = versapub.ReleaseModel([f], {c.name: c.values for c in table.columns}, table.n_rows)
    for text in ["age < 17 OR sex = 'Female'", "NOT dx = 'flu'", "age BETWEEN 10 AND 40 AND NOT sex = 'Male'"]:
        q = parse_query(text)
        want = count_rows(q, {a: table.column(a).values for a in table.names}, {a: table.codes(a) for a in table.names})
        assert count(model, q) == pytest.approx(want)


def test_value_order_compares_numbers_inside_values() -> None:
    assert order_key("9") < order_key("10") < order_key("100")
    assert order_key("25-34") < order_key("35-44")
    assert order_key("-5") < order_key("3")
    assert sorted(["<=50K", ">50K"], key=order_key) == ["<=50K", ">50K"]


@settings(max_examples=60, deadline=None)
@given(
    vals=st.lists(st.integers(-50, 500), min_size=1, max_size=30),
    lo=st.integers(-60, 510),
    hi=st.integers(-60, 510),
)
def test_between_and_comparisons_follow_numeric_order(vals: list[int], lo: int, hi: int) -> None:
    dom = np.array(sorted({str(v) for v in vals}), dtype=object)
    codes = {"x": np.arange(len(dom))}
    got = parse_query(f"x BETWEEN {lo} AND {hi}").mask({"x": dom}, codes)
    assert [str(v) for v in dom[got]] == [v for v in dom if lo <= int(v) <= hi]
    got = parse_query(f"x < {lo}").mask({"x": dom}, codes)
    assert [str(v) for v in dom[got]] == [v for v in dom if int(v) < lo]


def test_unknown_value_names_the_closest_spelling() -> None:
    dom = {"sex": np.array(["Female", "Male"], dtype=object)}
    with pytest.raises(ReleaseError, match="Did you mean 'Female'"):
        parse_query("sex = 'female'").validate(dom)
    with pytest.raises(ReleaseError, match="does not have; did you mean 'sex'"):
        parse_query("sexx = 'Female'").validate(dom)


def test_cli_query_refuses_a_misspelt_value(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    ex = str(data_path("running_example.csv"))
    r = CliRunner().invoke(
        cli, ["publish", "--input", ex, "--rule", "age, ICD-9-CM -> race", "--others", "insensitive", "--out", str(out)]
    )
    assert r.exit_code == 0, r.stderr
    races = sorted({line.split(",")[4] for line in Path(ex).read_text().splitlines()[1:]})
    r = CliRunner().invoke(cli, ["query", str(out), f"race = '{races[0].upper()}'"])
    assert r.exit_code == 2 and "did you mean" in r.stderr.lower() and "Traceback" not in r.stderr
    r = CliRunner().invoke(cli, ["query", str(out), f"race = '{races[0]}' OR race != '{races[0]}'", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["estimate"] == pytest.approx(versapub.load_release(out).n)


@pytest.mark.parametrize("policy", ["value", "drop"])
def test_query_reads_only_the_columns_it_names(policy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50: the actual count reads the query's columns of the original, not the whole
    file — unless the missing policy drops records, which then depends on every column."""
    import versapub.io.config as config
    from versapub.inspect import query

    rows = ["age,sex,zip,dx"] + [f"{20 + i % 7},{'FM'[i % 2]},{i % 5},{'abc'[i % 3]}" for i in range(120)]
    rows[5] = "25,F,,b"  # one missing zip
    data = tmp_path / "in.csv"
    data.write_text("\n".join(rows) + "\n")
    args = ["publish", "--input", str(data), "--rule", "age, sex, zip -> dx", "--l", "2", "--missing", policy]
    r = CliRunner().invoke(cli, [*args, "--no-utility", "--out", str(tmp_path / "r")])
    assert r.exit_code in (0, 6), r.output
    seen: list[tuple[str, ...] | None] = []
    real = config.read_table

    def spy(path: Any, options: Any) -> Any:
        seen.append(options.columns)
        return real(path, options)

    monkeypatch.setattr(config, "read_table", spy)
    got = query(tmp_path / "r", "sex = 'F' AND dx = 'b'")  # the recorded input, found beside the release
    want = sum(1 for r in rows[1:] if r.split(",")[1] == "F" and r.split(",")[3] == "b")
    if policy == "drop":
        want -= 1  # the record with the missing zip is not in the release
    assert got.actual == want and got.inside and not got.original_mismatch
    assert seen == [("sex", "dx")] if policy == "value" else seen == [("age", "sex", "zip", "dx")]


def test_query_loads_no_risk_measure_and_no_scipy_stats() -> None:
    """Issue 50: a command loads what it runs — ``query``'s modules leave scipy.stats (about
    1 s to import) and the read side's other functions unloaded."""
    import subprocess
    import sys

    code = (
        "import sys, versapub.inspect as i; i.query; import versapub.kinds.load, versapub.io.config; "
        "print(sorted(m for m in ('scipy.stats', 'versapub.inspect.risks', 'versapub.inspect.profiling') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
