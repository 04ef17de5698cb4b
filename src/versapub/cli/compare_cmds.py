"""``versapub compare``: several releases of one input side by side; the measures are
computed by :func:`versapub.inspect.comparison.compare`, rendered here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from versapub.cli.app import _errors, cli, out
from versapub.cli.progress import _progress
from versapub.formats import json_text

#: The columns shown, each with how its value is written.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("release", "release", "s"),
    ("kinds", "kind", "s"),
    ("guarantee", "guarantee", "s"),
    ("verdict", "check", "s"),
    ("kl", "KL", "4"),
    ("workload_median", "median rel. error", "3"),
    ("ranges_inside", "true count in range", "%"),
    ("prosecutor_highest", "highest risk", "4"),
    ("records_at_risk", "records at risk", "%"),
    ("attack_rate", "best attack", "%"),
    ("attack_bound", "allowed", "%"),
    ("attack_rule", "on the rule", "s"),
)


def cell(value: Any, how: str) -> str:
    """A measure as the table writes it (``—``: not measured)."""
    if value is None or value == "":
        return "—"
    if how == "%":
        return f"{100 * float(value):.1f}%"
    if how.isdigit():
        return f"{float(value):.{int(how)}f}"
    return str(value)


@cli.command()
@click.argument("releases", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--original",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The original table (CSV/Parquet or TOML config; default: the input the releases record, found as "
    "evaluate finds it).",
)
@click.option("--queries", "n_queries", default=1000, show_default=True, help="Number of random COUNT queries.")
@click.option("--seed", default=1, show_default=True, help="Workload seed (the same queries for every release).")
@click.option("--sampling-fraction", type=float, help="The share of the population the input is (risk measures).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of the table.")
def compare(
    releases: tuple[Path, ...],
    original: Path | None,
    n_queries: int,
    seed: int,
    sampling_fraction: float | None,
    as_json: bool,
) -> None:
    """Compare two or more releases of one input side by side: parameters, the check's
    verdict, utility (KL-divergence, the same seeded workload's median relative error,
    the share of true counts inside their ranges), re-identification risk on the same
    quasi-identifiers (the union of those the releases declare) with the input's own
    risk first, and the strongest attack each release's check recorded."""
    from versapub import inspect

    with _errors(), _progress(as_json) as bar:
        task = bar.add_task("comparing", total=None)
        c = inspect.compare(
            releases,
            original,
            n_queries=n_queries,
            seed=seed,
            sampling_fraction=sampling_fraction,
            progress=lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total),
        )
    if as_json:
        click.echo(json_text(c.to_dict(), indent=2))
        return
    # one column per release (and the input itself), one row per measure: narrow enough for a terminal
    table = Table(title=f"releases of {escape(c.input)} (risk on {escape(', '.join(c.qi)) or 'no column'})")
    table.add_column("measure")
    for row in c.rows:
        table.add_column(escape(str(row.get("release"))))
    for key, head, how in COLUMNS[1:]:
        table.add_row(
            head,
            *(
                infinite_kl(row) if key == "kl" and row.get("kl_infinite") else escape(cell(row.get(key), how))
                for row in c.rows
            ),
        )
    out.print(table)
    for note in c.notes:
        out.print(escape(note), soft_wrap=True)


def infinite_kl(row: dict[str, Any]) -> str:
    """An infinite KL with what stays finite: the KL on the shared support and the lost mass."""
    shared, lost = row.get("kl_shared"), row.get("lost_mass")
    if not isinstance(shared, (int, float)) or not isinstance(lost, (int, float)):
        return "infinite"
    return f"infinite; {shared:.4f} on the shared support, {100 * lost:.1f} % of the input outside it"
