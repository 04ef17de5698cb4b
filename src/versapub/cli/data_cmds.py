"""Data tools: ``hierarchy build|check`` and ``eligible``."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from versapub.cli.app import (
    _errors,
    cli,
    err,
    out,
)
from versapub.cli.options import (
    _csv_list,
    _unescape,
)
from versapub.errors import ConfigError
from versapub.formats import json_text

if TYPE_CHECKING:
    pass


@cli.group()
def hierarchy() -> None:
    """Build generalization hierarchies (ARX format) and check one against a column."""


def _column(data: Path, column: str, delimiter: str | None) -> Any:
    from versapub.io.read import read_table

    table = read_table(data, delimiter=_unescape(delimiter), columns=[column], missing="value")
    return table.column(column)


@hierarchy.command("build")
@click.argument("data", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--column", required=True, help="The column whose values are the hierarchy's leaves.")
@click.option("--intervals", metavar="W1,W2,...", help="Numeric intervals of these widths, e.g. 5,10,20 (then *).")
@click.option("--start", type=float, default=0.0, show_default=True, help="Where the intervals start.")
@click.option(
    "--labels",
    "label_style",
    type=click.Choice(["arx", "math", "dash"]),
    default="arx",
    show_default=True,
    help="How --intervals are written: arx [0, 5[, math [0, 5), dash [0-5) (as files whose values read [70-80)).",
)
@click.option("--mask", is_flag=True, help="Mask codes from the right, one character per level (71000 -> 7100*).")
@click.option("--groups-of", "group_size", type=int, metavar="K", help="Group K consecutive ordered values per level.")
@click.option(
    "--dates",
    "date_levels",
    metavar="hour,day,week,month,quarter,year",
    help="ARX's date hierarchy: each date (ISO, 03/14/2021 or 14.03.2021) or ISO 8601 date-time "
    "(2017-01-01T06:00:42Z, with an offset, fractional seconds or a space for T) generalized to these levels, "
    "finest first; hour and a day level of its own for date-times.",
)
@click.option(
    "--date-format",
    "date_format",
    metavar="FORMAT",
    help="With --dates: the dates are written in FORMAT (strftime codes, e.g. %d/%m/%Y for 14/03/2021); "
    "publish the column with --date-format COL=FORMAT too.",
)
@click.option(
    "--level",
    "levels",
    multiple=True,
    metavar="'G=a,b;H=c'",
    help="Explicit groups of one level (repeat per level, lowest first): members are values, or groups "
    "of the level before.",
)
@click.option("--delimiter", help="The data file's delimiter (default: , or \\t for .tsv).")
@click.option(
    "-o",
    "--out",
    "out_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The hierarchy file to write (ARX: ';'-separated, leaf first, root last).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing file.")
def hierarchy_build(
    data: Path,
    column: str,
    intervals: str | None,
    start: float,
    label_style: str,
    mask: bool,
    group_size: int | None,
    date_levels: str | None,
    date_format: str | None,
    levels: tuple[str, ...],
    delimiter: str | None,
    out_file: Path,
    overwrite: bool,
) -> None:
    """Build a hierarchy for one column of DATA and write it in ARX's format."""
    from versapub.data import hierarchy_build as hb

    with _errors():
        chosen = [
            n
            for n, on in (
                ("--intervals", intervals),
                ("--mask", mask),
                ("--groups-of", group_size),
                ("--level", levels),
                ("--dates", date_levels),
            )
            if on
        ]
        if date_format is not None and not date_levels:
            raise ConfigError("--date-format goes with --dates (the dates' written form).")
        if len(chosen) != 1:
            raise ConfigError(
                "Give exactly one of --intervals, --mask, --groups-of, --dates or --level (repeated per level)."
            )
        if out_file.exists() and not overwrite:
            raise ConfigError(f"{out_file} exists; add --overwrite to replace it.")
        if out_file.resolve() == data.resolve():
            raise ConfigError(f"{out_file} is the data file; write the hierarchy elsewhere.")
        col = _column(data, column, delimiter)
        values = [str(v) for v in col.values]
        if intervals:
            try:
                widths = [float(w) for w in _csv_list(intervals, "--intervals") or ()]
            except ValueError:
                raise ConfigError(
                    f"--intervals {intervals!r}: give numbers separated by commas, e.g. 5,10,20."
                ) from None
            h = hb.intervals(column, values, widths, start, label_style)
        elif date_levels:
            if date_format is not None:
                from versapub.data.dates import require_format

                require_format(column, date_format)
            h = hb.dates(column, values, list(_csv_list(date_levels, "--dates") or ()), date_format)
        elif mask:
            h = hb.masking(column, values)
        elif group_size is not None:
            h = hb.grouped(column, values, group_size)
        else:
            parsed = []
            for spec in levels:
                groups: dict[str, list[str]] = {}
                for part in filter(None, (p.strip() for p in spec.split(";"))):
                    name, eq, members = part.partition("=")
                    if not eq or not name.strip():
                        raise ConfigError(f"--level {spec!r}: write groups as NAME=member,member;NAME=...")
                    groups[name.strip()] = [m.strip() for m in members.split(",") if m.strip()]
                parsed.append(groups)
            h = hb.explicit(column, values, parsed)
        if not out_file.parent.is_dir():
            raise ConfigError(f"-o {out_file}: the folder {out_file.parent} does not exist; create it first.")
        out_file.write_text(hb.to_arx(h), encoding="utf-8")
    out.print(f"Wrote {out_file}: {len(h.levels)} values, {h.height} levels (0 = the values, {h.height - 1} = *).")


@hierarchy.command("check")
@click.argument("data", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--hierarchy",
    "specs",
    required=True,
    multiple=True,
    metavar="ATTR=FILE",
    help="A column and its hierarchy file (repeatable: every one is checked).",
)
@click.option("--delimiter", help="The data file's delimiter (default: , or \\t for .tsv).")
@click.option("--hierarchy-delimiter", default=";", show_default=True, help="The hierarchy file's delimiter.")
def hierarchy_check(data: Path, specs: tuple[str, ...], delimiter: str | None, hierarchy_delimiter: str) -> None:
    """Check hierarchies against their columns: every value a leaf, one parent per node, no
    cycle, every row as high as the others; prints the nodes per level and the labels that
    will be published under another name. Exit 2 if any does not fit."""
    from versapub import inspect
    from versapub.errors import VersapubError

    failed = 0
    for spec in specs:
        with _errors():
            attr, eq, file = spec.partition("=")
            if not eq or not file:
                raise ConfigError(f"--hierarchy {spec!r} must look like ATTR=FILE.")
        path = file.rpartition(":")[0] if file.rpartition(":")[2].isdigit() else file
        try:
            fit = inspect.hierarchy_fit(data, attr, path, _unescape(delimiter), hierarchy_delimiter)
        except VersapubError as exc:
            failed += 1
            err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            continue
        except Exception as exc:  # an internal error: the one paragraph with --debug's hint
            with _errors():
                raise exc
        out.print(escape(fit.describe(data.name)), soft_wrap=True)
    if failed:
        sys.exit(2)


@cli.command()
@click.argument("data", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--sensitive", required=True, metavar="COLUMN", help="The sensitive column.")
@click.option(
    "--taxonomy",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The sensitive attribute's taxonomy (ARX hierarchy file): also the ranges when its values are "
    "generalized to each level.",
)
@click.option("--max-sensitive-level", "max_level", type=int, help="Show taxonomy levels up to this one only.")
@click.option("--delimiter", help="The data file's delimiter (default: , or \\t for .tsv).")
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also draw the smallest eligible tau per lambda, one line per level (PNG).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing --plot file.")
@click.option("--json", "as_json", is_flag=True, help="Print the ranges as JSON.")
def eligible(
    data: Path,
    sensitive: str,
    taxonomy: Path | None,
    max_level: int | None,
    delimiter: str | None,
    plot_file: Path | None,
    overwrite: bool,
    as_json: bool,
) -> None:
    """Which l, (c, l) and (tau, lambda) requirements the sensitive column admits at all
    (the eligible ranges), without and with generalizing its values up a taxonomy."""
    from versapub.data.hierarchy import Hierarchy
    from versapub.privacy.guarantees.eligible import ranges

    with _errors():
        if plot_file is not None:
            if plot_file.resolve() in {data.resolve(), *([taxonomy.resolve()] if taxonomy else [])}:
                raise ConfigError(f"--plot {plot_file} is an input file; draw the plot elsewhere.")
            if plot_file.exists() and not overwrite:
                raise ConfigError(f"--plot {plot_file} exists; add --overwrite to replace it.")
        col = _column(data, sensitive, delimiter)
        h = Hierarchy.read(taxonomy, sensitive) if taxonomy is not None else None
        if max_level is not None and max_level < 0:
            raise ConfigError(f"--max-sensitive-level must be 0 or more, got {max_level}.")
        found = ranges(col, h, max_level)
    if as_json:
        click.echo(
            json_text(
                [{"level": r.level, "m": r.m, "max_l": r.max_l, "min_c": r.min_c, "min_tau": r.min_tau} for r in found],
                indent=2,
            )
        )
        return
    from rich.table import Table

    m = found[0].m
    out.print(
        f"Sensitive column {sensitive!r} of {data.name}: {col.cardinality} distinct values"
        + (f" ({m} leaves in the taxonomy)" if h is not None else "")
        + "."
    )
    t = Table(
        title="Eligible requirements (outside them no partition can meet one)",
        caption="(c, l): recursive (c, l)-diversity needs c above this; (tau, lambda): functional diversity "
        "needs tau at least this; L0: values as they are, Lk: every value generalized to level k",
        caption_justify="left",
    )
    t.add_column("l or lambda", justify="right")
    for r in found:
        t.add_column(f"c > [L{r.level}]", justify="right")
        t.add_column(f"tau >= [L{r.level}]", justify="right")
    for k in range(2, min(m, 12) + 1):
        cells = []
        for r in found:
            c = r.min_c.get(k, math.inf)
            cells += ["none" if math.isinf(c) else f"{c:.3f}", f"{r.min_tau[k]:.3f}" if k in r.min_tau else "-"]
        t.add_row(str(k), *cells)
    out.print(t)
    for r in found:
        where = "as they are" if r.level == 0 else f"at level {r.level}"
        out.print(f"Simple l-diversity, values {where}: l <= {r.max_l}.")
    if h is not None:
        out.print(
            "With no limit on generalizing the sensitive values every valid requirement is eligible (at the "
            f"root every value has frequency 1/{m}); --max-sensitive-level caps how far it may go.",
            soft_wrap=True,
        )
    if m > 12:
        out.print(f"(lambda and l up to 12 shown of {m}; --json gives all.)")
    if plot_file is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        f, ax = plt.subplots(figsize=(5.2, 3.4))
        for r in found:
            lams = sorted(r.min_tau)
            ax.plot(
                lams,
                [r.min_tau[x] for x in lams],
                marker="o",
                ms=3,
                label="as they are" if r.level == 0 else f"level {r.level}",
            )
        ax.plot(lams, [1 / x for x in lams], ls=":", color="grey", label="1/lambda (the smallest valid tau)")
        ax.set_xlabel("lambda")
        ax.set_ylabel("smallest eligible tau")
        ax.set_title(f"Eligible (tau, lambda) for {sensitive}", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        f.tight_layout()
        f.savefig(plot_file, dpi=90)
        plt.close(f)
        out.print(f"Plot: {plot_file}")
