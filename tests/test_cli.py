"""The command line: publish by flags and by config, rules, demo, error paragraphs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.datasets import data_path


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def example_csv() -> Path:
    return data_path("running_example.csv")


def test_publish_with_flags(tmp_path: Path, example_csv: Path) -> None:
    out = tmp_path / "rel"
    code, stdout, stderr = run(
        "publish",
        "--input",
        str(example_csv),
        "--rule",
        "age, ICD-9-CM -> race",
        "--rule",
        "gender, ICD-9-CM -> zipcode",
        "--rule",
        "hospital, race -> zipcode",
        "--l",
        "2",
        "--seed",
        "4",
        "--out",
        str(out),
    )
    assert code == 0, stderr
    assert "Schema in GNF: yes" in stdout and "verification passed" in stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["guarantee"] == {"name": "l-diversity", "l": 2}
    assert m["seed"] == 4
    assert len(m["input"]["sha256"]) == 64
    assert (out / "report.md").exists()


def test_publish_with_config_and_parquet(tmp_path: Path, example_csv: Path) -> None:
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f"""
[input]
path = "{example_csv}"
[columns]
others = "insensitive"
[privacy]
l = 2
rules = ["age, ICD-9-CM -> race", "age -> race"]
[publish]
seed = 2
format = "parquet"
"""
    )
    out = tmp_path / "rel"
    code, stdout, stderr = run("publish", str(cfg), "--out", str(out))
    assert code == 0, stderr
    assert "1 implied rule(s) dropped" in stdout
    # UAD: the attributes in no rule join {age, ICD-9-CM}; race is added -> one Anatomy table
    assert sorted(p.name for p in out.glob("T*")) == ["T1_qit.parquet", "T1_st.parquet"]
    m = json.loads((out / "manifest.json").read_text())
    assert m["rules"] == [{"lhs": ["age", "ICD-9-CM"], "rhs": "race"}]
    assert m["rules_dropped"][0]["rule"] == {"lhs": ["age"], "rhs": "race"}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--rule", "age -> zip"], "unknown attribute"),
        (["--rule", "age -> race", "--l", "4", "--others", "insensitive"], "cannot be satisfied"),
        (["--rule", "age -> race", "--l", "1"], "l of l-diversity must be a whole number >= 2, got 1"),
        (["--rule", "age race"], "exactly one '->'"),
        (["--rule", "age -> race", "--hierarchy", "age"], "ATTR=FILE:LEVEL"),
        (["--rule", "age -> race", "--decomposition", "magic"], "Unknown decomposition"),
    ],
)
def test_publish_errors_are_one_paragraph(tmp_path: Path, example_csv: Path, args: list[str], fragment: str) -> None:
    out = tmp_path / "rel"
    code, _stdout, stderr = run("publish", "--input", str(example_csv), *args, "--out", str(out))
    assert code == 2
    assert fragment in stderr
    assert "Traceback" not in stderr
    assert not out.exists()


def test_missing_input_and_debug_traceback(tmp_path: Path) -> None:
    code, _, stderr = run(
        "publish", "--input", str(tmp_path / "x.csv"), "--rule", "a -> b", "--out", str(tmp_path / "o")
    )
    assert code == 2 and "does not exist" in stderr and "Traceback" not in stderr
    code, _, stderr = run("--debug", "publish", "--input", str(tmp_path / "x.csv"), "--rule", "a -> b", "--out", "o")
    assert code == 2 and "Traceback" in stderr
    code, _, stderr = run("publish", "--out", str(tmp_path / "o"))
    assert code == 2 and "configuration file" in stderr


def test_rules_command(example_csv: Path) -> None:
    code, stdout, stderr = run(
        "rules",
        "--input",
        str(example_csv),
        "--rule",
        "age, ICD-9-CM -> race",
        "--rule",
        "gender, ICD-9-CM -> zipcode",
        "--rule",
        "hospital, race -> zipcode",
        "--rule",
        "race -> zipcode",
    )
    assert code == 0, stderr
    assert "Irreducible rules (3 of 4 given)" in stdout
    assert "race -> zipcode  — implied by 'hospital, race -> zipcode'" in stdout
    assert "T1(hospital, gender, race, zipcode)" in stdout
    assert "Schema is in GNF" in stdout
    code, stdout, _ = run("rules", "--input", str(example_csv), "--rule", "age -> race", "--l", "3")
    assert code == 2 and "NO" in stdout


def test_demo(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    code, stdout, stderr = run("demo", "--out", str(out))
    assert code == 0, stderr
    assert "30162 records, 7 attributes" in stdout
    assert f"Report:   {out / 'report.html'}" in stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["n_records"] == 30162


def test_help_mentions_every_command() -> None:
    code, stdout, _ = run("--help")
    assert code == 0
    for cmd in ("publish", "rules", "demo", "evaluate", "query", "sample"):
        assert cmd in stdout


@pytest.mark.parametrize(
    ("content", "extra", "fragment"),
    [
        (b"a,b\nx,1\n,2\ny,3\nz,4\n", [], "'a' (1 cell(s), first at row(s) 2)"),
        (b"a,a\nx,1\n", [], "duplicate column name"),
        (b"a,b\nx,caf\xe9\n", [], "not UTF-8"),
        (b"a,b\n", [], "no records"),
        (b"a,b\nx,1\ny,2\n", ["--hierarchy", "a=HIER:1"], "does not cover column 'a'"),
        (b"a,b\nx,1\ny,2\n", ["--hierarchy", "a=HIER:5"], "level 5 does not exist"),
    ],
)
def test_bad_input_gives_one_paragraph_and_no_release(
    tmp_path: Path, content: bytes, extra: list[str], fragment: str
) -> None:
    data = tmp_path / "in.csv"
    data.write_bytes(content)
    hier = tmp_path / "h.csv"
    hier.write_text("x;*\nz;*\n")
    extra = [e.replace("HIER", str(hier)) for e in extra]
    out = tmp_path / "rel"
    code, _, stderr = run("publish", "--input", str(data), "--rule", "a -> b", *extra, "--out", str(out))
    assert code == 2, stderr
    assert fragment in stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ("[input]\npath = 'x.csv'\n[privacy]\nl = 'two'\n", "'l' has the wrong type"),
        ("[input]\npath = 'x.csv'\n[output]\nx = 1\n", "unknown section [output]"),
        ("[input]\npath = 'x.csv'\ncolour = 'red'\n", "unknown key(s) ['colour']"),
        ("[privacy]\nl = 2\n", "[input] needs 'path'"),
        ("[input\npath = 'x.csv'\n", "not valid TOML"),
        ("[input]\npath = 'x.csv'\n[input.hierarchies.a]\nlevel = 1\n", "needs 'file'"),
    ],
)
def test_config_errors(tmp_path: Path, toml: str, fragment: str) -> None:
    cfg = tmp_path / "job.toml"
    cfg.write_text(toml)
    code, _, stderr = run("publish", str(cfg), "--out", str(tmp_path / "rel"))
    assert code == 2
    assert fragment in stderr.replace("\n", " ")


# -- using a release (issue 3) ---------------------------------------------------------


def test_publish_stores_utility_and_no_utility_skips_it(demo_release: Path, tmp_path: Path, example_csv: Path) -> None:
    m = json.loads((demo_release / "manifest.json").read_text())
    u = m["utility"]
    assert u["kl_divergence"] > 0 and u["kl_infinite"] is False
    assert u["relative_error"]["n_queries"] == 1000
    assert max(u["marginal_error"].values()) < 1e-9
    report = (demo_release / "report.md").read_text()
    assert "## Utility" in report and f"{u['kl_divergence']:.4f}" in report
    out = tmp_path / "r"
    code, stdout, _ = run(
        "publish",
        "--input",
        str(example_csv),
        "--rule",
        "age -> race",
        "--others",
        "insensitive",
        "--out",
        str(out),
        "--no-utility",
    )
    assert code == 0
    assert json.loads((out / "manifest.json").read_text())["utility"] is None
    assert "Utility:" not in stdout


def test_evaluate_json_matches_manifest(demo_release: Path) -> None:
    cfg = str(data_path("adult", "adult.toml"))
    code, stdout, stderr = run("evaluate", str(demo_release), "--original", cfg, "--json")
    assert code == 0, stderr
    res = json.loads(stdout)
    stored = json.loads((demo_release / "manifest.json").read_text())["utility"]
    assert res["kl_divergence"] == pytest.approx(stored["kl_divergence"], rel=1e-12)
    assert res["relative_error"]["mean"] == pytest.approx(stored["relative_error"]["mean"], rel=1e-12)
    assert set(res["relative_error"]) >= {"mean", "median", "n_queries"}
    # without --original the manifest's recorded input (unchanged) is used
    code, stdout, _ = run("evaluate", str(demo_release), "--queries", "50", "--qd", "2")
    assert code == 0 and "KL-divergence: 0.6" in stdout and "Relative error of 50 COUNT queries" in stdout


def test_query_and_sample(demo_release: Path, tmp_path: Path) -> None:
    cfg = str(data_path("adult", "adult.toml"))
    code, stdout, _ = run("query", str(demo_release), "sex = 'Female'", "--original", cfg, "--json")
    assert code == 0
    res = json.loads(stdout)
    assert res["actual"] == 9782  # sex is published exactly (a one-attribute marginal)
    assert res["estimate"] == pytest.approx(9782, abs=1e-6)
    assert (res["lower"], res["upper"], res["sharp"], res["actual_inside"]) == (9782, 9782, True, True)
    code, stdout, _ = run("query", str(demo_release), "age IN ('25-34','35-44') AND sex = 'Female'")
    assert code == 0 and "estimate " in stdout and "any table consistent with the release: " in stdout
    code, _, stderr = run("query", str(demo_release), "colour = 'red'")
    assert code == 2 and "attribute 'colour', which the release does not have" in stderr
    out = tmp_path / "syn.csv"
    code, stdout, _ = run("sample", str(demo_release), "-n", "500", "-o", str(out), "--seed", "3")
    assert code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 501 and lines[0].startswith('"age","native-country"')


def test_use_commands_on_bad_release(tmp_path: Path) -> None:
    code, _, stderr = run("evaluate", str(tmp_path), "--original", str(data_path("running_example.csv")))
    assert code == 2 and "no manifest.json" in stderr
    code, _, stderr = run("sample", str(tmp_path / "missing"), "-o", str(tmp_path / "x.csv"))
    assert code == 2 and "not a release directory" in stderr


def test_check_command(demo_release: Path, tmp_path: Path) -> None:
    code, stdout, _ = run("check", str(demo_release))
    assert code == 0 and "ALL CHECKS PASSED" in stdout and "scalable attack" in stdout
    code, stdout, _ = run("check", str(demo_release), "--json", "--original", str(data_path("adult", "adult.toml")))
    res = json.loads(stdout)
    assert code == 0 and res["ok"] and res["verification"]["n_failed"] == 0
    # a rule the release was not built for: education and marital-status share T1 unprotected
    code, stdout, _ = run("check", str(demo_release), "--rule", "education -> marital-status")
    assert code == 1 and "NOT guaranteed" in stdout
    fixture = Path(__file__).parent / "fixtures" / "table2"
    code, stdout, _ = run("check", str(fixture), "--original", str(data_path("running_example.csv")))
    assert code == 1
    assert "(hospital=333333, race=white) -> zipcode in {72000}" in stdout
    code, _, stderr = run("check", str(tmp_path))
    assert code == 2 and "manifest.json" in stderr


def test_report_command(demo_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, _, stderr = run("report", str(demo_release), "-o", str(out))
    assert code == 0, stderr
    text = out.read_text()
    assert 'id="rules"' in text and 'id="attribute-graph"' in text and "ALL CHECKS PASSED" in text
    assert "http://" not in text and "https://" not in text  # self-contained, works offline


def test_help_and_input_errors_do_not_load_the_engines(tmp_path: Path) -> None:
    """Start-up stays fast: --help and a bad input never import the heavy engines (the
    benchmark of start-up time is benchmarks/startup.py; this asserts the cause)."""
    import subprocess
    import sys

    bad = tmp_path / "t.csv"
    bad.write_text("a,b\nx,1\n")
    probe = (
        "import sys\nfrom versapub.cli.main import cli\n"
        "for args in (['--help'], ['publish', '--input', sys.argv[1], '--rule', 'a -> c', '--out', sys.argv[2]], "
        "['check', sys.argv[2]]):\n"
        "    try:\n        cli(args, standalone_mode=False)\n    except BaseException:\n        pass\n"
        "heavy = [m for m in ('ortools', 'duckdb', 'pandas', 'networkx', 'matplotlib', 'lark') if m in sys.modules]\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    r = subprocess.run([sys.executable, "-c", probe, str(bad), str(tmp_path / "none")], capture_output=True, text=True)
    assert "HEAVY:\n" in r.stdout + "\n", r.stdout[-300:] + r.stderr


def test_every_command_is_found_where_the_lazy_group_looks() -> None:
    """The CLI imports a command's module when the command is named: the map it reads must
    name, for every command, the module that registers it (and nothing else)."""
    from versapub.cli.app import COMMAND_MODULES, cli, load_all

    load_all()
    registered = {n: c.callback.__module__.rsplit(".", 1)[1] for n, c in cli.commands.items() if c.callback}
    assert registered == COMMAND_MODULES


def test_query_loads_neither_the_publish_side_nor_pandas(tmp_path: Path) -> None:
    """``versapub query`` is the steward's interactive loop (issue 50): it must not import the
    anonymizers, the publish commands or pandas (pyarrow's ``to_numpy`` pulls pandas in)."""
    import subprocess
    import sys

    data = tmp_path / "t.csv"
    data.write_text("a,s\n" + "".join(f"{'xyz'[i % 3]},{'pq'[i % 2]}\n" for i in range(30)))
    code, _, stderr = run("publish", "--input", str(data), "--rule", "a -> s", "--out", str(tmp_path / "rel"))
    assert code == 0, stderr
    probe = (
        "import sys\nfrom versapub.cli.main import cli\n"
        "try:\n    cli(['query', sys.argv[1], \"a = 'x'\", '--original', sys.argv[2]], standalone_mode=False)\n"
        "except BaseException as e:\n    print('RAISED', repr(e))\n"
        "heavy = [m for m in ('pandas', 'versapub.cli.publish_cmds', 'versapub.anonymizers.generalizing.mondrian',"
        " 'versapub.anonymizers.bucketizing.anatomy') if m in sys.modules]\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    r = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "rel"), str(data)], capture_output=True, text=True)
    assert "estimate" in r.stdout and "RAISED" not in r.stdout, r.stdout[-600:] + r.stderr[-600:]
    assert "HEAVY:\n" in r.stdout + "\n", r.stdout[-300:]


def test_experiment_dataset_choices_match_the_experiments() -> None:
    from versapub.cli.main import EXPERIMENT_DATASETS
    from versapub.experiments import DATASETS

    assert tuple(EXPERIMENT_DATASETS) == tuple(DATASETS)


def test_rules_shows_the_decomposition_asked_for(example_csv: Path) -> None:
    args = [
        "rules",
        "--input",
        str(example_csv),
        "--rule",
        "age, ICD-9-CM -> race",
        "--rule",
        "gender -> zipcode",
        "--others",
        "insensitive",
    ]
    code, stdout, stderr = run(*args, "--decomposition", "gd", "--l", "2")
    assert code == 0, stderr
    assert "GD schema" in stdout and "UAD schema" not in stdout and "Why every rule holds" in stdout
    code, stdout, _ = run(*args, "--decomposition", "single-attribute", "--l", "2")
    assert code == 0 and "SINGLE-ATTRIBUTE schema" in stdout


def test_rules_stops_after_infeasible_rules(example_csv: Path) -> None:
    code, stdout, stderr = run("rules", "--input", str(example_csv), "--rule", "age -> race", "--l", "6")
    assert code == 2
    assert "NO " in stdout and "schema" not in stdout.lower().split("feasibility")[-1]
    assert "no schema is built" in stderr


def test_progress_off_a_terminal_is_one_line_per_step_with_percentages(tmp_path: Path, example_csv: Path) -> None:
    code, _, stderr = run(
        "publish",
        "--input",
        str(example_csv),
        "--rule",
        "age, ICD-9-CM -> race",
        "--rule",
        "gender -> zipcode",
        "--others",
        "insensitive",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 0, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("[")]
    assert any("reading" in ln for ln in lines) and any("anonymizing" in ln and "%)" in ln for ln in lines)
    assert any("writing and verifying" in ln for ln in lines)


def test_demo_release_carries_its_workloads_ranges(demo_release: Path) -> None:
    """Issue 49: the publish's workload gets the range of every query; every true answer is
    inside, and the report plots the widest."""
    m = json.loads((demo_release / "manifest.json").read_text())
    g = m["utility"]["ranges"]
    assert g["share_inside"] == 1.0 and not g["outside"]
    assert 0 < g["share_sharp"] < 1 and g["median_relative_width"] > 0
    w = g["widest"][0]
    assert w["lower"] <= w["actual"] <= w["upper"] and w["query"].count(" IN (") == 3
    html = (demo_release / "report.html").read_text()
    assert "The range each count can take" in html and 'aria-label="ranges of the widest queries"' in html
    assert "Ranges the release allows: 100.0% of true answers inside" in (demo_release / "report.md").read_text()
