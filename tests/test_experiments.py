"""The §6 experiment runner: plan, resumption, figures, findings and the results page."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.errors import ConfigError
from versapub.experiments import Settings, findings, plan, read_runs, run_experiment
from versapub.experiments.versatile import FIELDS, series


def test_plan_covers_every_figure_setting() -> None:
    adult = plan(Settings("adult", runs=50), 7)
    assert len(adult) == 4 * 9 * 50  # 4 methods x c = 1..9 x 50 runs (Figures 1-3)
    assert {t.method for t in adult} == {"multi-sa", "single-attribute", "gd", "uad"}
    assert {(t.l, t.lhs) for t in adult} == {(2, 3)}
    texas = plan(Settings("texas-like", runs=3, gd_runs=1), 18)
    by = {s: [t for t in texas if t.sweep == s] for s in ("c", "workload", "lhs", "l")}
    assert {t.x for t in by["c"]} == set(range(1, 10)) and len(by["c"]) == 9 * (3 * 2 + 1)
    qd = {w[1] for t in by["workload"] for w in t.workloads if w[0] == "qd"}
    ps = {w[1] for t in by["workload"] for w in t.workloads if w[0] == "p"}
    assert qd == set(range(2, 11)) and ps == {0.3, 0.4, 0.5, 0.6, 0.7}
    assert {t.x for t in by["lhs"]} == set(range(1, 10)) and {t.x for t in by["l"]} == {5, 10, 15, 20}
    assert all(t.c == 5 for s in ("workload", "lhs", "l") for t in by[s])
    sparcs = plan(Settings("sparcs", runs=1), 12)
    assert max(t.lhs for t in sparcs) == 9  # capped at the attribute count - 1 only when needed
    # SPARCS: no attribute is protectable at l >= 8, so l = 3 and the l sweep is 2..7
    assert {t.l for t in sparcs if t.sweep != "l"} == {3}
    assert {t.x for t in sparcs if t.sweep == "l"} == {2, 3, 4, 5, 6, 7}
    assert (
        len(plan(Settings("texas-like", runs=1), 5))
        and max(t.lhs for t in plan(Settings("texas-like", runs=1), 5)) == 4
    )


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="Unknown dataset"):
        Settings("texas", runs=1)
    with pytest.raises(ConfigError, match="runs"):
        Settings("adult", runs=0)


def _row(sweep: str, x: float, method: str, run: int, **metrics: float) -> dict[str, str]:
    row = {k: "" for k in FIELDS}
    row.update(
        sweep=sweep,
        x=f"{x:g}",
        method=method,
        run=str(run),
        n_tables="1",
        groups="0",
        suppressed="0",
        n_sensitive="1",
        **{k: str(v) for k, v in metrics.items()},
    )
    return row


def test_series_and_findings_by_hand() -> None:
    rows = []
    for run, bump in ((0, 0.0), (1, 0.2)):
        for c in (1, 2, 3):
            rows.append(_row("c", c, "uad", run, kl=0.1 * c + bump, rel_error=0.1, seconds=0.01))
            rows.append(_row("c", c, "gd", run, kl=0.1 * c + bump, rel_error=0.1, seconds=0.1))
            rows.append(_row("c", c, "multi-sa", run, kl=0.1 if c == 1 else 0.5 * c, rel_error=0.5, seconds=1.0))
            rows.append(_row("c", c, "single-attribute", run, kl=1.0, rel_error=0.9, seconds=0.001))
    s = series(rows, "c", "kl")["uad"]
    assert [(p.x, round(p.mean, 9), round(p.lo, 9), round(p.hi, 9), p.n) for p in s] == [
        (1.0, 0.2, 0.1, 0.3, 2),
        (2.0, 0.3, 0.2, 0.4, 2),
        (3.0, 0.4, 0.3, 0.5, 2),
    ]
    got = {f.key: f.verdict for f in findings("adult", rows)}
    # c = 1: uad/gd mean 0.2 but multi-SA 0.1 -> not equivalent
    assert got["c1"] == "DIFFERS"
    assert got["gd_uad_kl"] == "PASS" and got["better_kl"] == "PASS" and got["better_rel_error"] == "PASS"
    assert got["msa_degrades"] == "PASS"
    assert got["msa_slow"] == "PASS"  # 100x UAD, 10x GD
    assert got["uad_faster"] == "PASS"
    rows.append(_row("c", 3, "uad", 2, kl=5.0, rel_error=0.1, seconds=0.01))  # UAD now worse than multi-SA at c = 3
    f = {f.key: f for f in findings("adult", rows)}
    assert f["better_kl"].verdict == "DIFFERS" and "c=3" in f["better_kl"].ours
    assert "tables" in f["better_kl"].evidence


def test_texas_findings_flatness() -> None:
    rows = [_row("lhs", x, "uad", 0, kl=1.0 + (0.5 if x < 3 else 0.01 * x), rel_error=0.2) for x in range(1, 10)]
    rows += [_row("l", x, "uad", 0, rel_error=0.2 + 0.1 * (x == 20)) for x in (5, 10, 15, 20)]
    got = {f.key: f.verdict for f in findings("texas-like", rows)}
    assert got["lhs_kl"] == "PASS"  # lhs < 3 is excluded from the claim
    assert got["l_rel_error"] == "DIFFERS"  # 0.1 over a mean of 0.225
    assert got["uad_single_kl"] == "NO DATA"


def test_quick_adult_experiment_resumes_and_writes_the_page(tmp_path: Path) -> None:
    """The smoke run of the suite: a quick Adult sweep (1 run, 200 queries)."""
    out = tmp_path / "exp"
    args = [
        "experiment",
        "versatile",
        "--dataset",
        "adult",
        "--quick",
        "--runs",
        "1",
        "--queries",
        "200",
        "--out",
        str(out),
    ]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    rows = read_runs(out / "adult" / "runs.csv")
    assert len(rows) == 4 * 4  # 4 methods x c in (1, 2, 5, 9)
    assert not [r for r in rows if r["error"]]
    assert "PASS" in res.output or "DIFFERS" in res.output
    assert (out / "adult" / "fig01_adult.png").stat().st_size > 5000
    # c = 1: one rule, so multi-SA, GD and UAD publish the same Anatomy table
    c1 = {r["method"]: float(r["kl"]) for r in rows if r["x"] == "1"}
    assert c1["uad"] == pytest.approx(c1["gd"]) == pytest.approx(c1["multi-sa"])
    # resuming recomputes nothing
    before = (out / "adult" / "runs.csv").read_text()
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and (out / "adult" / "runs.csv").read_text() == before
    # a row cut short by an interruption is dropped and its task redone
    text = (out / "adult" / "runs.csv").read_text()
    (out / "adult" / "runs.csv").write_text(text[: text.rstrip().rfind(",")] + "\n")
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and len(read_runs(out / "adult" / "runs.csv")) == 16

    def strip(rs: list[dict[str, str]]) -> list[str]:  # everything but the (timing) seconds
        return sorted(str({k: v for k, v in r.items() if k != "seconds"}) for r in rs)

    assert strip(read_runs(out / "adult" / "runs.csv")) == strip(rows)
    # other settings in the same directory are refused
    res = CliRunner().invoke(cli, [*args[:-2], "--seed", "7", "--out", str(out)])
    assert res.exit_code == 2 and "different settings" in res.output
    page = tmp_path / "docs" / "results.md"
    res = CliRunner().invoke(cli, ["experiment", "page", "--out", str(out), "--page", str(page)])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    assert "Figure 1" in text and "results/fig01_adult.png" in text and (page.parent / "results").is_dir()


@pytest.mark.slow
def test_texas_like_sample_runs_every_sweep(tmp_path: Path) -> None:
    settings = Settings("texas-like", runs=1, quick=True, gd_runs=1, sample=1500, n_queries=100)
    path = run_experiment(settings, tmp_path / "t")
    rows = read_runs(path)
    assert {r["sweep"] for r in rows} == {"c", "qd", "p", "lhs", "l"}
    assert {r["method"] for r in rows if r["sweep"] == "c"} == {"uad", "single-attribute", "gd"}
    ok = [r for r in rows if not r["error"]]
    assert ok and all(float(r["kl"]) >= 0 for r in ok)
    with path.open(newline="") as f:
        assert next(csv.reader(f)) == list(FIELDS)


def test_unsatisfiable_settings_are_recorded_not_raised() -> None:
    from versapub.datasets import running_example
    from versapub.experiments.versatile import Task, execute

    task = Task("l", 50, 0, "uad", 2, 2, 50, (("l", 50, 2, 0.4),))
    (row,) = execute(running_example(), task, Settings("texas-like", runs=1), {})
    assert row["error"] and "right-hand side" in row["error"] and row["sweep"] == "l" and row["x"] == "50"


def test_texas_like_smoke_every_sweep_shares_rules_across_methods(tmp_path: Path) -> None:
    """Fast smoke of the Texas experiments (the full sample run is marked slow): every sweep
    produces rows, and within one run every method publishes the same rule set."""
    settings = Settings("texas-like", runs=1, quick=True, gd_runs=0, sample=400, n_queries=20)
    rows = read_runs(run_experiment(settings, tmp_path / "t"))
    assert {r["sweep"] for r in rows} == {"c", "qd", "p", "lhs", "l"}
    by_point: dict[tuple[str, str, str], set[str]] = {}
    for r in rows:
        if not r["error"]:
            by_point.setdefault((r["sweep"], r["x"], r["run"]), set()).add(r["rules"])
    assert by_point and all(len(v) == 1 for v in by_point.values())


def test_msa_experiment_quick_resumes_and_writes_the_page(tmp_path: Path) -> None:
    """``experiment msa`` on a sample: every sweep runs, a rerun computes nothing new, the
    page shows Table 7 (computed on the whole file) and every figure with verdicts."""
    from versapub.experiments.msa import Settings, adult_table, fnlwgt_bins, run_experiment
    from versapub.experiments.msa_page import write_page
    from versapub.experiments.runs import read_runs

    settings = Settings(runs=1, quick=True, sample=1000)
    out = tmp_path / "msa"
    path = run_experiment(settings, out)
    rows = read_runs(path)
    assert {r["sweep"] for r in rows} == {"ssa", "msa", "noise", "attack"}
    assert not [r for r in rows if r["error"]]
    before = path.read_text()
    run_experiment(settings, out)
    assert path.read_text() == before  # resumed: nothing recomputed
    t7 = {r["column"]: r for r in json.loads((out / "table7.json").read_text())}
    assert t7["occupation"]["l_per"] == 7 and t7["education"]["l_per"] == 3  # the whole file, not the sample
    assert t7["fnlwgt"]["distinct"] == 100 and t7["workclass"]["l_per"] == 1
    found = write_page(out, tmp_path / "docs" / "results-msa.md")
    page = (tmp_path / "docs" / "results-msa.md").read_text()
    for fig in ("Fig. 2–5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9"):
        assert f"## {fig}" in page
    assert {f.figure for f in found} >= {"Table 7", "Fig. 2–5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9", "SSA", "§5.2"}
    assert all(f.verdict in ("PASS", "DIFFERS") for f in found)
    assert len(list((tmp_path / "docs" / "results-msa").glob("*.png"))) == 5
    # Final-Weight bins: 100 equal-frequency bins, ordered labels.
    bins = fnlwgt_bins(np.arange(1000))
    assert len(set(bins)) == 100 and bins[0] == "000" and bins[-1] == "099" and bins == sorted(bins)
    assert adult_table(Settings()).n_rows == 30_162


def test_functional_experiment_quick_run_resumes_and_writes_the_page(tmp_path: Path) -> None:
    """`experiment functional --quick` on 1,500 Adult records: every task leaves a row (an
    output or the reason there is none), a rerun computes nothing, Sequential Sweep
    publishes at every requirement, and the page carries a verdict for every claim."""
    from versapub.experiments.functional import Settings, choices, run_experiment
    from versapub.experiments.functional_page import write_page
    from versapub.experiments.runs import read_runs

    settings = Settings("adult", quick=True, sample=1500, n_queries=40)
    path = run_experiment(settings, tmp_path / "adult")
    rows = read_runs(path)
    assert len(rows) == 31 and {r["method"] for r in rows} == {"ss", "cld-theorem", "cld", "1dld"}
    picked = choices(rows)
    assert picked and all(p["ss"] is not None and p["ss"].ep_min >= -1e-9 for p in picked.values())
    for p in picked.values():  # a chosen baseline output satisfies the requirement it was chosen for
        assert all(c is None or c.ep_min >= -1e-9 for k, c in p.items() if k in ("cld-b", "1dld-b"))
    before = path.read_text()
    run_experiment(settings, tmp_path / "adult")
    assert path.read_text() == before
    found = write_page([tmp_path / "adult"], tmp_path / "docs" / "results-functional.md")
    page = (tmp_path / "docs" / "results-functional.md").read_text()
    assert {f.figure for f in found} >= {"Table 1", "§1.2", "Fig. 9–13", "Fig. 14–15", "§5.3.2", "Fig. 22"}
    assert all(f.verdict in ("PASS", "DIFFERS", "NO DATA") for f in found) and "## All findings" in page
    assert (tmp_path / "docs" / "results-functional" / "ep_adult.png").stat().st_size > 0
    with pytest.raises(ConfigError, match="different settings"):
        run_experiment(Settings("adult", quick=True, sample=1600), tmp_path / "adult")


def test_marginals_experiment_quick_run_writes_the_page(tmp_path: Path) -> None:
    """`experiment marginals --quick`: three minimal tables, every search lowers the
    KL-divergence, the best collection is released and verified, the page has every
    figure and a verdict per claim."""
    out = tmp_path / "marginals"
    r = CliRunner().invoke(cli, ["experiment", "marginals", "--quick", "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert len(res["tables"]) == 3 and res["release"]["verified"]
    assert res["opt"]["kl"] < min(t["kl"] for t in res["tables"].values()) < res["suppressed"]["kl"]
    for run in [*res["greedy"].values(), *res["best_containing"].values()]:
        kls = [s["kl"] for s in run["steps"]]
        assert kls == sorted(kls, reverse=True) and len(kls) >= 2
    page = tmp_path / "docs" / "results-marginals.md"
    r = CliRunner().invoke(cli, ["experiment", "marginals-page", "--out", str(out), "--page", str(page)])
    assert r.exit_code == 0, r.stderr
    text = page.read_text()
    assert text.count("| **PASS** |") + text.count("| **DIFFERS** |") == 7
    for fig in ("figure6.png", "figure7.png", "figure8.png"):
        assert (page.parent / "results-marginals" / fig).stat().st_size > 0
