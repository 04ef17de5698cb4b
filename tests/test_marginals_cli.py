"""``versapub marginals publish | inject | check`` and ``versapub check --k`` on Adult's
nonsensitive race, sex, age, marital status with occupation sensitive (the paper's §7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.datasets import data_path

ADULT = [
    "--input",
    str(data_path("adult", "adult.csv.gz")),
    "--delimiter",
    ";",
    "--hierarchies",
    str(data_path("adult", "hierarchies")),
    "--column",
    "race",
    "--column",
    "sex",
    "--column",
    "age",
    "--column",
    "marital-status",
    "--column",
    "occupation",
    "--sensitive",
    "occupation",
    "--k",
    "10",
    "--diversity",
    "recursive-cl:c=3,l=8",
]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("m") / "rel"
    code, stdout, stderr = run(
        "marginals", "publish", *ADULT, "--base", "incognito", "--marginal", "age@1", "--out", str(out)
    )
    assert code == 0, stderr
    assert "k-link anonymity holds" in stdout and "maxent recursive-cl-diversity holds" in stdout
    return out


def test_publish_writes_a_verified_collection(released: Path) -> None:
    m = json.loads((released / "manifest.json").read_text())
    section = m["marginals"]
    assert section["sensitive"] == "occupation" and section["k"] == 10
    assert [t["role"] for t in section["tables"]] == ["base", "given"]
    assert section["tables"][1]["levels"] == {"age": 1}
    assert all(c["ok"] for c in section["checks"]["checks"])
    v = json.loads((released / "verification.json").read_text())
    names = {f["check"] for f in v["findings"]}
    assert {"k-link", "k-combinatorial", "maxent-diversity"} <= names and v["ok"]
    # the release model over induced attributes reproduces the closed form
    assert m["utility"]["kl_divergence"] == pytest.approx(section["kl_closed_form"], abs=1e-9)
    assert "induced attributes" in m["utility"]["model_path"]


def test_inject_prints_the_kl_after_each_addition(released: Path, tmp_path: Path) -> None:
    out = tmp_path / "more"
    code, stdout, stderr = run("marginals", "inject", str(released), "--max-marginals", "2", "--out", str(out))
    assert code == 0, stderr
    m = json.loads((out / "manifest.json").read_text())
    steps = m["marginals"]["search"]
    assert len(steps) == 3 and steps[1]["kl"] < steps[0]["kl"] and steps[2]["kl"] < steps[1]["kl"]
    for st in steps[1:]:
        assert f"+ {st['added']}" in stdout
    assert [t["role"] for t in m["marginals"]["tables"]][-2:] == ["injected", "injected"]
    added = [ln.split(" added ", 1)[1].split(" (KL")[0] for ln in stderr.splitlines() if " added " in ln]
    assert added and all(a in stdout for a in added)  # the progress names what was added, not the last tried
    code, stdout, _ = run("check", str(out))
    assert code == 0 and "maxent-diversity" in stdout


def test_check_a_proposal_names_the_failing_marginal_and_cell() -> None:
    code, stdout, _ = run("marginals", "check", *ADULT, "--marginal", "race, sex, age@1, marital-status@1, occupation")
    assert code == 1
    assert "FAIL k-link anonymity fails" in stdout and "marginal M1, cell (" in stdout
    code, stdout, _ = run(
        "marginals", "check", *ADULT, "--base", "race@1, sex@1, age@1, marital-status@2, occupation", "--json"
    )
    assert code == 0
    assert json.loads(stdout)["ok"] and json.loads(stdout)["kl"] > 0


def test_relaxed_check_from_the_command_line() -> None:
    _, stdout, _ = run(
        "marginals",
        "check",
        *ADULT,
        "--base",
        "race@1, sex@1, age@1, marital-status@2, occupation",
        "--marginal",
        "race, occupation",
        "--relaxed",
        "0.5",
    )
    assert "relaxed maxent l-diversity (l = 8, epsilon = 0.5)" in stdout


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--marginal", "height, occupation"], "names 'height', which is not an attribute"),
        (["--marginal", "age@9, occupation"], "level 9 is beyond its hierarchy"),
        (["--marginal", "age@1"], "Column(s) 'race', 'sex', 'marital-status', 'occupation' are in no marginal"),
        (["--marginal", "race, sex, age, marital-status, occupation@1"], "published exactly"),
    ],
)
def test_bad_marginals_are_one_paragraph_and_write_nothing(tmp_path: Path, extra: list[str], fragment: str) -> None:
    out = tmp_path / "rel"
    code, _, stderr = run("marginals", "publish", *ADULT, *extra, "--out", str(out))
    assert code == 2 and fragment in stderr.replace("\n", " "), stderr
    assert "Traceback" not in stderr and not out.exists()


def test_k_below_two_and_a_failing_collection_are_refused(tmp_path: Path) -> None:
    args = [a if a != "10" else "1" for a in ADULT]
    code, _, stderr = run("marginals", "publish", *args, "--base", "incognito", "--out", str(tmp_path / "a"))
    assert code == 2 and "k must be a whole number >= 2" in stderr
    code, _, stderr = run(
        "marginals",
        "publish",
        *ADULT,
        "--marginal",
        "race, sex, age, marital-status, occupation",
        "--out",
        str(tmp_path / "b"),
    )
    assert code != 0 and "cannot be published together" in stderr and "k-link anonymity fails" in stderr
    assert not (tmp_path / "b").exists()


def test_check_k_reads_a_versatile_release_as_a_collection(demo_release: Path) -> None:
    code, stdout, _ = run("check", str(demo_release), "--k", "5", "--json")
    rep = json.loads(stdout)
    checks = {c["check"] for c in rep["collection"]}
    assert checks == {"k-link", "k-combinatorial"}
    code, stdout, _ = run("check", str(demo_release), "--k", "400", "--json")
    rep = json.loads(stdout)
    assert code == 1 and not all(c["ok"] for c in rep["collection"])


def test_publish_from_a_toml_configuration(tmp_path: Path) -> None:
    job = tmp_path / "job.toml"
    job.write_text(f"""
[input]
path = "{data_path("adult", "adult.csv.gz")}"
delimiter = ";"
columns = ["race", "sex", "age", "marital-status", "occupation"]
hierarchy_dir = "{data_path("adult", "hierarchies")}"

[marginals]
sensitive = "occupation"
k = 10
diversity = {{ name = "recursive-cl-diversity", c = 3, l = 8 }}
base = "race@1, sex@1, age@1, marital-status@2, occupation"
marginals = ["race", "marital-status@1"]
inject = 1
search = "stepwise"
""")
    out = tmp_path / "rel"
    code, _, stderr = run("marginals", "publish", str(job), "--out", str(out))
    assert code == 0, stderr
    m = json.loads((out / "manifest.json").read_text())
    assert [t["role"] for t in m["marginals"]["tables"]] == ["base", "given", "given", "injected"]
    assert m["marginals"]["diversity"] == {"name": "recursive-cl-diversity", "c": 3, "l": 8}
    job.write_text(job.read_text().replace("k = 10", "k = 1"))
    code, _, stderr = run("marginals", "publish", str(job), "--out", str(tmp_path / "x"))
    assert code == 2 and "k must be a whole number >= 2" in stderr
