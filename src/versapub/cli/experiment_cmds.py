"""``experiment``: re-running the papers' experiments and writing their results pages."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from versapub.cli.app import (
    F,
    _errors,
    cli,
    out,
)
from versapub.cli.progress import _with_bar
from versapub.errors import ConfigError

if TYPE_CHECKING:
    pass


#: The datasets of `experiment versatile` (versapub.experiments.DATASETS; kept here so --help
#: does not import the experiments; a test asserts they agree).
EXPERIMENT_DATASETS = ("adult", "texas-like", "sparcs")


@cli.group()
def experiment() -> None:
    """Re-run the papers' experiments: versatile publishing (§6, Figures 1–10), the MSA
    decomposition, functional (tau, lambda)-diversity, anonymized marginals (§7)."""


@experiment.command("versatile")
@click.option(
    "--dataset",
    type=click.Choice(EXPERIMENT_DATASETS),
    required=True,
    help="adult (Figures 1–3) or a Texas stand-in "
    "(Figures 4–10): texas-like (synthetic, Table 5b) or sparcs (real New York discharges).",
)
@click.option("--runs", type=int, help="Random rule sets per point (default 50 for adult, 5 otherwise).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments"),
    show_default=True,
    help="Results go to OUT/DATASET/ (runs.csv, figures); reruns resume.",
)
@click.option("--quick", is_flag=True, help="A few points and runs (a smoke run in minutes).")
@click.option(
    "--gd-runs",
    type=int,
    default=1,
    show_default=True,
    help="Texas stand-ins: run GD too on the first N runs of the c sweep.",
)
@click.option(
    "--gd-max-c",
    type=int,
    default=9,
    show_default=True,
    help="Texas stand-ins: run GD only up to this c (evaluating its releases is slow).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of sampling, rules and workloads.")
@click.option("--queries", "n_queries", type=int, default=1000, show_default=True, help="Queries per workload.")
@click.option("--sample", "sample_n", type=int, help="Use a random sample of this many records (adult: 10,000).")
def experiment_versatile(
    dataset: str,
    runs: int | None,
    out_dir: Path,
    quick: bool,
    gd_runs: int,
    gd_max_c: int,
    seed: int,
    n_queries: int,
    sample_n: int | None,
) -> None:
    """Run (or resume) one dataset's experiments; draw its figures; print PASS/DIFFERS per finding."""
    from versapub.experiments import Settings, findings, read_runs, run_experiment
    from versapub.experiments.figures import draw_all

    with _errors():
        default_runs = (2 if quick else 50) if dataset == "adult" else (1 if quick else 5)
        settings = Settings(
            dataset,
            runs or default_runs,
            seed=seed,
            n_queries=n_queries,
            quick=quick,
            gd_runs=gd_runs if not quick else 0,
            gd_max_c=gd_max_c,
            sample=sample_n,
        )
        target = out_dir / dataset
        start = time.perf_counter()
        path = _with_bar(lambda hook: run_experiment(settings, target, hook))
        rows = read_runs(path)
        figs = draw_all(rows, dataset, target)
        found = findings(dataset, rows)
    out.print(
        f"{dataset}: {len(rows)} result rows in {path} ({time.perf_counter() - start:.1f} s this run); "
        f"{len(figs)} figure(s) in {target}"
    )
    for f in found:
        out.print(escape(f.line()), soft_wrap=True)


def _page_options(out_dir: str, out_help: str, page: str, page_help: str, notes_help: str) -> Callable[[F], F]:
    """A results-page command's options: ``--out`` (the runs), ``--page`` and ``--notes``."""

    def add(f: F) -> F:
        f = click.option("--notes", type=click.Path(dir_okay=False, exists=True, path_type=Path), help=notes_help)(f)
        f = click.option(
            "--page",
            type=click.Path(dir_okay=False, path_type=Path),
            default=Path(page),
            show_default=True,
            help=page_help,
        )(f)
        return click.option(
            "--out",
            "out_dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=Path(out_dir),
            show_default=True,
            help=out_help,
        )(f)

    return add


def _show(found: Sequence[Any]) -> None:
    """The findings of a run, one line each."""
    for f in found:
        out.print(escape(f"[{f.verdict}] {f.figure}: {f.paper} — ours: {f.ours}"), soft_wrap=True)


def _notes(notes: Path | None) -> str:
    return notes.read_text(encoding="utf-8") if notes else ""


def _page_written(page: Path, found: Sequence[Any], no_data: bool = False) -> None:
    """One line: the results page written and its verdicts."""
    n = {v: sum(f.verdict == v for f in found) for v in ("PASS", "DIFFERS", "NO DATA")}
    out.print(
        f"Wrote {page}: {n['PASS']} PASS, {n['DIFFERS']} DIFFERS"
        + (f", {n['NO DATA']} without data." if no_data else ".")
    )


@experiment.command("page")
@_page_options(
    "experiments",
    "The experiments' directory (as given to `experiment versatile`).",
    "docs/results.md",
    "The Markdown page to write (figures go to results/ beside it).",
    "Markdown to include after the introduction (e.g. the discussion of the differences).",
)
def experiment_page(out_dir: Path, page: Path, notes: Path | None) -> None:
    """Write the results page: every figure, the paper's findings next to ours."""
    from versapub.experiments import write_page

    with _errors():
        found = write_page(out_dir, page, _notes(notes))
    _page_written(page, found, no_data=True)


@experiment.command("msa")
@click.option("--runs", type=int, default=3, show_default=True, help="Runs per randomized point (seeded).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments/msa"),
    show_default=True,
    help="Results directory (runs.csv, table7.json); reruns resume.",
)
@click.option("--quick", is_flag=True, help="A few points (a smoke run in a minute).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the decomposition's random choices.")
@click.option("--sample", "sample_n", type=int, help="Use a random sample of this many records (default: all 30,162).")
def experiment_msa(runs: int, out_dir: Path, quick: bool, seed: int, sample_n: int | None) -> None:
    """Re-run §6 of Ye et al. (DASFAA 2009): Table 7, Figures 2–9 on raw UCI Adult; print PASS/DIFFERS."""
    from versapub.experiments.msa import Settings, run_experiment
    from versapub.experiments.msa_page import findings

    with _errors():
        settings = Settings(runs=runs, seed=seed, quick=quick, sample=sample_n)
        start = time.perf_counter()
        path = _with_bar(lambda hook: run_experiment(settings, out_dir, hook))
        from versapub.experiments.runs import read_runs

        rows = read_runs(path)
        found = findings(rows, json.loads((out_dir / "table7.json").read_text(encoding="utf-8")))
    out.print(
        f"msa: {len(rows)} result rows in {path} ({time.perf_counter() - start:.1f} s this run); "
        "draw the page with `versapub experiment msa-page`"
    )
    _show(found)


@experiment.command("msa-page")
@_page_options(
    "experiments/msa",
    "The directory given to `experiment msa`.",
    "docs/results-msa.md",
    "The Markdown page (figures go to results-msa/ beside it).",
    "Markdown to include after the introduction (e.g. why findings differ).",
)
def experiment_msa_page(out_dir: Path, page: Path, notes: Path | None) -> None:
    """Write the MSA results page: Table 7, every figure, the paper's findings next to ours."""
    from versapub.experiments.msa_page import write_page

    with _errors():
        if not (out_dir / "runs.csv").is_file():
            raise ConfigError(f"{out_dir} holds no runs.csv; run `versapub experiment msa --out {out_dir}` first.")
        found = write_page(out_dir, page, _notes(notes))
    _page_written(page, found)


@experiment.command("functional")
@click.option(
    "--dataset",
    type=click.Choice(["adult", "sparcs"]),
    required=True,
    help="adult (occupation under the Census's occupation groups) or sparcs (CCSR diagnosis under its body system).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Results directory (runs.csv, eligible.json, settings.json); reruns resume.",
)
@click.option("--quick", is_flag=True, help="A few requirements and a small search grid (a smoke run).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of sampling, workloads and tie-breaks.")
@click.option("--sample", "sample_n", type=int, help="Use a random sample of this many records.")
@click.option(
    "--queries",
    "n_queries",
    type=int,
    default=300,
    show_default=True,
    help="Count queries per workload (1-, 2- and 3-D).",
)
def experiment_functional(
    dataset: str, out_dir: Path, quick: bool, seed: int, sample_n: int | None, n_queries: int
) -> None:
    """Re-run §5 of the functional (tau, lambda)-diversity paper on one dataset: Sequential
    Sweep against CLD and 1DLD over a grid of (tau, lambda); print PASS/DIFFERS."""
    from versapub.experiments.functional import Settings, run_experiment
    from versapub.experiments.functional_page import findings, load_result

    with _errors():
        settings = Settings(dataset, seed=seed, quick=quick, sample=sample_n, n_queries=n_queries)
        start = time.perf_counter()
        path = _with_bar(lambda hook: run_experiment(settings, out_dir, hook))
        found = findings([load_result(out_dir)])
    out.print(
        f"{dataset}: {path} ({time.perf_counter() - start:.1f} s this run); draw the page with "
        "`versapub experiment functional-page`"
    )
    _show(found)


@experiment.command("functional-page")
@_page_options(
    "experiments/functional",
    "The directory holding one results directory per dataset (each given to `experiment functional --out`).",
    "docs/results-functional.md",
    "The Markdown page (figures go to results-functional/ beside it).",
    "Markdown to include after the introduction (e.g. why findings differ).",
)
def experiment_functional_page(out_dir: Path, page: Path, notes: Path | None) -> None:
    """Write the functional-diversity results page: every figure, the paper's claims next to ours."""
    from versapub.experiments.functional_page import write_page

    with _errors():
        dirs = sorted(d for d in out_dir.iterdir() if (d / "runs.csv").is_file()) if out_dir.is_dir() else []
        if not dirs:
            raise ConfigError(
                f"{out_dir} holds no results; run `versapub experiment functional --dataset adult "
                f"--out {out_dir}/adult` first."
            )
        found = write_page(dirs, page, _notes(notes))
    _page_written(page, found)


@experiment.command("marginals")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments/marginals"),
    show_default=True,
    help="Results directory (results.json, settings.json, the best collection as a release).",
)
@click.option("--quick", is_flag=True, help="Three additions per search and no requirement sweep (a smoke run).")
@click.option("--max-marginals", "max_marginals", type=int, default=8, show_default=True, help="Additions per search.")
def experiment_marginals(out_dir: Path, quick: bool, max_marginals: int) -> None:
    """Re-run §7 of Kifer & Gehrke on Adult: the minimal l-diverse, k-anonymous tables, the
    best collections of anonymized marginals, the greedy injection; print PASS/DIFFERS."""
    from versapub.experiments.marginals import Settings, run_experiment
    from versapub.experiments.marginals_page import findings

    with _errors():
        start = time.perf_counter()
        path = _with_bar(lambda hook: run_experiment(Settings(max_marginals=max_marginals, quick=quick), out_dir, hook))
        found = findings(json.loads(path.read_text(encoding="utf-8")))
    out.print(f"{path} ({time.perf_counter() - start:.1f} s); draw the page with `versapub experiment marginals-page`")
    _show(found)


@experiment.command("marginals-page")
@_page_options(
    "experiments/marginals",
    "The results directory of `experiment marginals`.",
    "docs/results-marginals.md",
    "The Markdown page (figures go to results-marginals/ beside it).",
    "Markdown to include after the introduction.",
)
def experiment_marginals_page(out_dir: Path, page: Path, notes: Path | None) -> None:
    """Write the anonymized-marginals results page: the paper's claims next to the run's."""
    from versapub.experiments.marginals_page import write_page

    with _errors():
        if not (out_dir / "results.json").is_file():
            raise ConfigError(f"{out_dir} holds no results.json; run `versapub experiment marginals --out {out_dir}`.")
        found = write_page(out_dir, page, _notes(notes))
    _page_written(page, found)


@experiment.command("dp")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments/dp"),
    show_default=True,
    help="Results directory (results.json; benchmarks/dp.py --json writes benchmark.json beside it).",
)
def experiment_dp(out_dir: Path) -> None:
    """Publish Adult as Anatomy, Mondrian, a marginal collection and differentially private
    releases (several epsilon, MST, AIM), and compare them on the same workload and attacks."""
    from versapub.experiments.dp import run_experiment
    from versapub.experiments.dp_page import findings

    with _errors():
        start = time.perf_counter()
        path = _with_bar(lambda hook: run_experiment(out_dir, hook))
        bench = out_dir / "benchmark.json"
        found = findings(
            json.loads(path.read_text(encoding="utf-8")),
            json.loads(bench.read_text(encoding="utf-8")) if bench.is_file() else None,
        )
    out.print(f"{path} ({time.perf_counter() - start:.1f} s); draw the page with `versapub experiment dp-page`")
    _show(found)


@experiment.command("dp-page")
@_page_options(
    "experiments/dp",
    "The results directory of `experiment dp` (and of benchmarks/dp.py --json).",
    "docs/results-dp.md",
    "The Markdown page (its figure goes to results-dp/ beside it).",
    "Markdown to include after the introduction.",
)
def experiment_dp_page(out_dir: Path, page: Path, notes: Path | None) -> None:
    """Write the page of syntactic and differentially private releases of one file."""
    from versapub.experiments.dp_page import write_page

    with _errors():
        if not (out_dir / "results.json").is_file():
            raise ConfigError(f"{out_dir} holds no results.json; run `versapub experiment dp --out {out_dir}`.")
        found = write_page(out_dir, page, _notes(notes))
    _page_written(page, found)
