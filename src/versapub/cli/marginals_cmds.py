"""``marginals publish|inject|check``: collections of anonymized marginals."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from versapub.cli.app import (
    MISSING_HELP,
    ORIGINAL_HELP,
    RECORD_HELP,
    _errors,
    cli,
    out,
)
from versapub.cli.options import (
    _marginals_config,
    _marginals_options,
)
from versapub.cli.progress import _progress, _with_bar
from versapub.cli.read_cmds import _original
from versapub.cli.render import _print_collection
from versapub.errors import ConfigError
from versapub.formats import json_text, read_manifest

if TYPE_CHECKING:
    pass


@cli.group()
def marginals() -> None:
    """Collections of anonymized marginals (Kifer & Gehrke): publish several generalized
    cross-tabulations of one table, checked together for k-link, k-combinatorial
    anonymity and maxent l-diversity; inject utility into an anonymized table."""


@marginals.command("publish")
@_marginals_options
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory of the release (must not exist unless --overwrite).",
)
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), help="Table file format (default csv).")
@click.option("--overwrite", is_flag=True, help="Replace an existing release directory.")
@click.option("--quiet", is_flag=True, help="Print nothing on success.")
@click.option("--no-utility", is_flag=True, help="Skip the release model's KL-divergence and query workload.")
@click.option("--record-input-path", "record_input_path", is_flag=True, default=None, help=RECORD_HELP)
def marginals_publish(
    out_dir: Path,
    fmt: str | None,
    overwrite: bool,
    quiet: bool,
    no_utility: bool,
    record_input_path: bool | None,
    **opts: Any,
) -> None:
    """Publish a collection of anonymized marginals, checked together and verified.

    versapub marginals publish --input adult.csv --sensitive occupation --k 10 --l 4
    --hierarchies hierarchies/ --base incognito --marginal "age@1" --marginal "race, sex" --out rel/
    """
    from versapub import workflow

    with _errors():
        cfg = _marginals_config(opts, fmt).with_overrides(record_input_path=record_input_path)
        start = time.perf_counter()
        with _progress(quiet) as bar:
            task = bar.add_task(f"reading {cfg.input.name}", total=None)

            def hook(desc: str, done: int, total: int) -> None:
                bar.update(task, description=desc, completed=done, total=total or None)

            release = workflow.run_marginals(cfg, out_dir, overwrite=overwrite, utility=not no_utility, progress=hook)
        if not quiet:
            _print_collection(release, out_dir, time.perf_counter() - start)


@marginals.command("inject")
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the enlarged release.",
)
@click.option("--max-marginals", "max_marginals", type=int, required=True, help="Add at most this many marginals.")
@click.option(
    "--search",
    type=click.Choice(["greedy", "stepwise"]),
    default="greedy",
    show_default=True,
    help="Greedy one-attribute marginals (Figure 8) or stepwise over multi-attribute marginals.",
)
@click.option("--original", type=click.Path(dir_okay=False, path_type=Path), help=ORIGINAL_HELP)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=MISSING_HELP)
@click.option(
    "--hierarchies",
    "hierarchy_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="The hierarchies (default: the files the release records).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out directory.")
@click.option("--quiet", is_flag=True, help="Print nothing on success.")
def marginals_inject(
    release_dir: Path,
    out_dir: Path,
    max_marginals: int,
    search: str,
    original: Path | None,
    missing: str | None,
    hierarchy_dir: Path | None,
    overwrite: bool,
    quiet: bool,
) -> None:
    """Add marginals to a released collection (each keeps every check; the KL after each
    addition is printed) and write the enlarged release, verified."""
    from versapub import workflow
    from versapub.io.config import match_hierarchies

    with _errors():
        read_manifest(release_dir)
        if max_marginals < 0:
            raise ConfigError(f"--max-marginals must be >= 0, got {max_marginals}.")
        table = _original(original, release_dir, missing).table
        folder = match_hierarchies(hierarchy_dir, table.names) if hierarchy_dir else None
        hier = {h.attribute: h.load() for h in folder.specs} if folder else None
        start = time.perf_counter()
        release = _with_bar(
            lambda hook: workflow.inject(
                release_dir,
                out_dir,
                max_marginals,
                original=table,
                search=search,
                hierarchies=hier,
                overwrite=overwrite,
                progress=hook,
            )
        )
        if not quiet:
            _print_collection(release, out_dir, time.perf_counter() - start)


@marginals.command("check")
@_marginals_options
@click.option(
    "--relaxed",
    type=float,
    metavar="EPSILON",
    help="The paper's relaxed maxent check for large joins: "
    "l values each at least EPSILON^p times as likely as the most likely (p: marginals holding the "
    "sensitive column).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def marginals_check(relaxed: float | None, as_json: bool, **opts: Any) -> None:
    """Check a proposed collection against the data without writing anything: k-link,
    k-combinatorial anonymity, maxent diversity, and its KL-divergence; exit 1 if a check fails."""
    from versapub import inspect

    with _errors():
        got = inspect.marginals_check(_marginals_config(opts), relaxed)
    if as_json:
        click.echo(json_text(got.to_dict(), indent=2))
    else:
        for n, m in zip(got.collection.names, got.collection.marginals, strict=True):
            out.print(f"  {n}: {escape(m.label)}")
        for o in got.verdict.outcomes:
            out.print(f"  {'ok  ' if o.ok else 'FAIL'} {escape(o.message)}", soft_wrap=True)
        out.print(
            f"KL-divergence of the maximum-entropy estimate: {got.kl:.4f}"
            if got.kl is not None
            else "Not decomposable: the KL-divergence needs the release model (IPF)."
        )
    if not got.ok:
        sys.exit(1)
