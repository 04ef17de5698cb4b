"""The read side as Python (:mod:`versapub.inspect`): each function returns what the matching
command prints with ``--json`` (apart from timings), so the CLI and the web interface are two
renderings of one computation."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import versapub
from versapub.cli.main import cli
from versapub.datasets import adult_config, data_path
from versapub.errors import VersapubError

TIMING_KEYS = {"seconds", "timings_s"}
#: ``versapub check``'s exit status per verdict.
EXIT = {"passed": 0, "attention": 6, "failed": 1}


def _untimed(obj: Any) -> Any:
    """``obj`` without its timings (they differ from run to run)."""
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _json(*args: str, code: int = 0) -> Any:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == code, r.output
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inspect") / "demo"
    r = CliRunner().invoke(cli, ["demo", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_the_read_side_is_reachable_from_the_package() -> None:
    assert versapub.inspect.evaluate is versapub.inspect.evaluation.evaluate
    assert callable(versapub.workflow.run)
    assert {"evaluate", "check", "rules_report", "query", "original_table"} <= set(versapub.inspect.__all__)


def test_evaluate_equals_the_command_line(demo: Path) -> None:
    ev = versapub.inspect.evaluate(demo, n_queries=200, seed=3)
    cli_json = _json("evaluate", str(demo), "--queries", "200", "--seed", "3", "--json")
    assert _untimed(ev.to_dict()) == _untimed(cli_json)
    assert ev.kl_divergence == pytest.approx(cli_json["kl_divergence"])
    assert ev.original_mismatch == ()  # the recorded input, unchanged


def test_check_equals_the_command_line(demo: Path) -> None:
    rep = versapub.inspect.check(demo, l=2, k=2)
    cli_json = _json("check", str(demo), "--l", "2", "--k", "2", "--json", code=EXIT[rep.verdict])
    assert _untimed(rep.to_json()) == _untimed(cli_json)
    assert rep.required and rep.verdict == "failed"  # T1 leaves records alone: below k = 2
    assert [i["table"] for i in rep.identity if not i["ok"]] == ["T1"]


def test_check_with_the_original_and_a_rule(demo: Path) -> None:
    original = str(data_path("adult", "adult.toml"))
    rule = "age, sex -> occupation"
    rep = versapub.inspect.check(demo, original, rules=[rule], attack="scalable")
    code = EXIT[rep.verdict]
    cli_json = _json(
        "check", str(demo), "--original", original, "--rule", rule, "--attack", "scalable", "--json", code=code
    )
    assert _untimed(rep.to_json()) == _untimed(cli_json)
    assert rep.rules_required == 1


def test_query_equals_the_command_line(demo: Path) -> None:
    text = "sex = 'Female' AND education != 'university'"
    got = versapub.inspect.query(demo, text, original=data_path("adult", "adult.toml"))
    assert got.to_dict() == _json(
        "query", str(demo), text, "--original", str(data_path("adult", "adult.toml")), "--json"
    )
    assert got.actual is not None and got.actual > 0 and got.relative_error is not None
    recorded = versapub.inspect.query(demo, text)  # the input the manifest records, found by name
    assert recorded.actual == got.actual and recorded.estimate == pytest.approx(got.estimate)
    assert _json("query", str(demo), text, "--json")["actual"] == got.actual


def test_rules_report_equals_the_command_line() -> None:
    cfg = adult_config()
    rep = versapub.inspect.rules_report(cfg)
    cli_json = _json("rules", str(data_path("adult", "adult.toml")), "--json")
    assert rep.to_dict() == cli_json
    assert rep.feasible and rep.release is not None and cli_json["schema"]["tables"]
    assert len(cli_json["rules"]) == len(rep.reduction.rules) == 4


def test_an_infeasible_rule_stops_before_the_schema() -> None:
    cfg = replace(adult_config(), l=40)
    rep = versapub.inspect.rules_report(cfg)
    assert not rep.feasible and rep.release is None and rep.to_dict()["schema"] is None
    r = CliRunner().invoke(cli, ["rules", str(data_path("adult", "adult.toml")), "--l", "40", "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["feasible"] is False


def test_a_refused_job_keeps_its_feasibility_and_schema(tmp_path: Path) -> None:
    """Issue 66: a job whose publish would be refused (here k-anonymity, which Anatomy cannot
    give) hid feasibility and the schema; the report keeps both beside the refusal's paragraph,
    the schema the decomposition's before anything is anonymized, and the command exits 2. The
    rule's groups are said to meet k-anonymity, not to be "diverse enough"."""
    args = ["--input", str(Path(__file__).resolve().parents[1] / "examples" / "data.csv"), "--qi", "age,sex,zip"]
    args += ["--sensitive", "disease", "--guarantee", "k-anonymity:k=5", "--identifying", "patient_id"]
    r = CliRunner().invoke(cli, ["rules", *args, "--others", "insensitive", "--json"])
    assert r.exit_code == 2, r.output
    got = json.loads(r.stdout)
    assert got["feasible"] and "cannot provide k-anonymity" in got["refusal"]
    assert got["schema"]["tables"][0].startswith("T1(") and "patient_id" not in got["schema"]["tables"][0]
    assert "publishing is refused" in got["schema"]["decomposition"]
    assert "meet k-anonymity with k = 5" in got["schema"]["why"][0] and "diverse" not in got["schema"]["why"][0]
    text = CliRunner().invoke(cli, ["rules", *args, "--others", "insensitive"])
    assert text.exit_code == 2 and "before anything is anonymized" in text.stdout
    assert "publishing this job would be refused" in text.stderr


def test_sample_draws_values_not_codes(demo: Path) -> None:
    records = versapub.inspect.sample(demo, 50, seed=4)
    assert records.num_rows == 50
    sexes = set(records.column("sex").to_pylist())
    assert sexes <= {"Male", "Female"} and sexes


def test_report_returns_the_html_and_its_checks(demo: Path) -> None:
    got = versapub.inspect.report(demo)
    assert got.html.startswith("<!DOCTYPE html>") and got.check.ok


def test_marginals_check_equals_the_command_line() -> None:
    args = [
        "--input",
        str(data_path("adult", "adult.csv.gz")),
        "--delimiter",
        ";",
        "--hierarchies",
        str(data_path("adult", "hierarchies")),
        "--sensitive",
        "occupation",
        "--k",
        "10",
        "--l",
        "2",
        "--column",
        "race",
        "--column",
        "sex",
        "--column",
        "occupation",
        "--marginal",
        "race, sex, occupation",
    ]
    cli_json = _json("marginals", "check", *args, "--json")
    from versapub.io.config import PublishConfig
    from versapub.marginals.spec import MarginalsSpec

    cfg = PublishConfig(
        input=data_path("adult", "adult.csv.gz"),
        rules=(),
        delimiter=";",
        hierarchy_dir=data_path("adult", "hierarchies"),
        columns=("race", "sex", "occupation"),
        marginals=MarginalsSpec(
            sensitive="occupation",
            k=10,
            diversity={"name": "l-diversity", "l": 2},
            marginals=("race, sex, occupation",),
        ),
    )
    got = versapub.inspect.marginals_check(cfg)
    assert got.to_dict() == cli_json and got.ok == cli_json["ok"]


def test_not_a_release_is_one_paragraph(tmp_path: Path) -> None:
    for call in (
        lambda: versapub.inspect.evaluate(tmp_path),
        lambda: versapub.inspect.check(tmp_path),
        lambda: versapub.inspect.query(tmp_path, "a = 'b'"),
    ):
        with pytest.raises(VersapubError, match=r"no manifest\.json"):
            call()


def test_a_check_parses_the_manifest_once(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_check`` reads manifest.json once and hands it to every check and attack."""
    import json as real_json
    import types

    import versapub.verify.reading.manifest as vm

    parsed: list[str] = []

    def loads(text: str) -> Any:
        parsed.append(text)
        return real_json.loads(text)

    monkeypatch.setattr(vm, "json", types.SimpleNamespace(loads=loads))
    rep = versapub.inspect.check(demo, k=2, attack="both")
    assert rep.attacks and rep.identity and rep.collection
    assert len(parsed) == 1


def test_a_published_generalized_value_can_be_queried(tmp_path: Path) -> None:
    """``hours = '[..]'`` as T1.csv publishes it: the values it covers, estimated and counted."""
    import csv

    data = Path(__file__).resolve().parents[1] / "examples" / "data.csv"
    out = tmp_path / "r"
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(data),
            "--qi",
            "hours,sex",
            "--guarantee",
            "k-anonymity:k=10",
            "--anonymizer",
            "mondrian",
            "--identifying",
            "patient_id",
            "--others",
            "insensitive",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    with (out / "T1_labels.csv").open() as f:
        label, first, last = next(
            (row["value"], int(row["first"]), int(row["last"]))
            for row in csv.DictReader(f)
            if row["attribute"] == "hours"
        )
    with data.open() as f:
        rows = list(csv.DictReader(f))
    with (out / "T1_order.csv").open() as f:
        order = [row["leaf"] for row in csv.DictReader(f) if row["attribute"] == "hours"]
    covered = set(order[first : last + 1])
    got = versapub.inspect.query(out, f"hours = '{label}'", original=data)
    assert got.actual == sum(row["hours"] in covered for row in rows) and got.estimate > 0
    assert versapub.inspect.query(out, f"hours != '{label}'", original=data).actual == len(rows) - got.actual


def test_largest_feasible_l_is_the_bound_published_alone_allows() -> None:
    """Frequency l-diversity needs n / (most frequent count) >= l: 100 / 14 -> 7; distinct
    l-diversity needs l distinct values: 8; recursive (c, l) keeps c; k-anonymity has no l."""
    import numpy as np

    from versapub.inspect.rules import largest_l
    from versapub.privacy import make_guarantee

    counts = np.array([14, 13, 13, 12, 12, 12, 12, 12])
    assert largest_l(make_guarantee({"name": "l-diversity", "l": 2}), counts) == 7
    assert largest_l(make_guarantee({"name": "distinct-l-diversity", "l": 2}), counts) == 8
    assert largest_l(make_guarantee({"name": "k-anonymity", "k": 2}), counts) is None
    assert largest_l(make_guarantee({"name": "l-diversity", "l": 2}), np.array([90, 10])) is None  # not even 2
    for ell in range(2, 9):  # brute force: the answer is the last l that is feasible
        g = make_guarantee({"name": "recursive-cl", "c": 2, "l": ell})
        feasible = g.single_attribute_violation(counts) is None
        assert feasible == (ell <= largest_l(make_guarantee({"name": "recursive-cl", "c": 2, "l": 2}), counts))


def test_eligible_equals_the_command_line() -> None:
    import json
    from pathlib import Path

    from click.testing import CliRunner

    import versapub
    from versapub.cli.main import cli

    data = Path(__file__).resolve().parents[1] / "examples" / "data.csv"
    r = CliRunner().invoke(cli, ["eligible", str(data), "--sensitive", "disease", "--json"])
    assert r.exit_code == 0, r.output
    cli_ranges = json.loads(r.output)
    mine = versapub.inspect.eligible(data, "disease")
    assert [(g["level"], g["m"], g["max_l"]) for g in mine] == [(g["level"], g["m"], g["max_l"]) for g in cli_ranges]
    assert {k: round(v, 9) for k, v in mine[0]["min_tau"].items()} == {
        k: round(v, 9) for k, v in cli_ranges[0]["min_tau"].items()
    }
