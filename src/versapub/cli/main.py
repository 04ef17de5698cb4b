"""The ``versapub`` command line (thin over the Python API).

Errors the user can cause are printed as one paragraph on stderr with a non-zero exit
status (2: bad input, 3: verification failed, 4: internal schema error); ``--debug``
shows the traceback as well.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from versapub import __version__
from versapub.api import publish as api_publish
from versapub.datasets import adult_config
from versapub.decompositions import uad_schema
from versapub.errors import ConfigError, VersapubError
from versapub.io.config import HierarchySpec, PublishConfig, load_config
from versapub.io.read import file_sha256
from versapub.io.release_writer import write_release
from versapub.privacy import (
    feasibility,
    make_guarantee,
    parse_rules,
    reduce_rules,
    validate_rules,
)
from versapub.release.model import InputInfo, Release
from versapub.reports.summary import summary_rows
from versapub.schema.gnf import check_gnf

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)
F = TypeVar("F", bound=Callable[..., Any])


class _State:
    debug = False


def _fail(exc: BaseException) -> None:
    if _State.debug:
        traceback.print_exception(exc)
    if isinstance(exc, VersapubError):
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        sys.exit(exc.exit_code)
    err.print(
        f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}. This is a bug in versapub; "
        "run again with --debug for the traceback and report it.",
        soft_wrap=True,
    )
    sys.exit(70)


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except (KeyboardInterrupt, SystemExit, click.exceptions.Exit, click.ClickException):
        raise
    except BaseException as exc:
        _fail(exc)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="versapub")
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
def cli(debug: bool) -> None:
    """versapub: publish microdata under many privacy rules (Q -> S) at once.

    The table is decomposed into sub-tables in Guardian Normal Form (UAD), each
    sub-table is anonymized for at most one rule (Anatomy, frequency l-diversity), and
    the release is verified from its own files before it is written.
    """
    _State.debug = debug


def _config_options(f: F) -> F:
    opts = [
        click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path)),
        click.option(
            "--input",
            "input_",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Input CSV (optionally .gz) or Parquet file (overrides the config).",
        ),
        click.option(
            "--rule",
            "rules",
            multiple=True,
            metavar="'a, b -> c'",
            help="A privacy rule; repeat for several (replaces the config's rules).",
        ),
        click.option("--l", "ell", type=int, help="The l of l-diversity (default 2)."),
        click.option("--delimiter", help="CSV delimiter (default ',' or the config's)."),
        click.option(
            "--missing",
            type=click.Choice(["error", "value", "drop"]),
            help="Missing-cell policy (default error).",
        ),
        click.option("--column", "columns", multiple=True, help="Publish only these columns (repeatable)."),
        click.option(
            "--hierarchy",
            "hierarchies",
            multiple=True,
            metavar="ATTR=FILE:LEVEL",
            help="Generalize ATTR with an ARX hierarchy file to LEVEL (repeatable).",
        ),
        click.option("--decomposition", help="Decomposition algorithm (default uad)."),
        click.option("--anonymizer", help="Anonymizer (default anatomy)."),
        click.option("--seed", type=int, help="Random seed (default 0)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _parse_hierarchy(spec: str) -> HierarchySpec:
    if "=" not in spec or ":" not in spec.split("=", 1)[1]:
        raise ConfigError(f"--hierarchy {spec!r} must look like ATTR=FILE:LEVEL, e.g. age=age.csv:1.")
    attr, rest = spec.split("=", 1)
    file, level = rest.rsplit(":", 1)
    try:
        lvl = int(level)
    except ValueError:
        raise ConfigError(f"--hierarchy {spec!r}: LEVEL must be a whole number, got {level!r}.") from None
    return HierarchySpec(attr.strip(), Path(file), lvl)


def _build_config(opts: dict[str, Any], fmt: str | None = None) -> PublishConfig:
    """The configuration from CONFIG (if given) overridden by the command-line flags."""
    config, input_, rules = opts["config"], opts["input_"], opts["rules"]
    if config is not None:
        base = load_config(config)
    else:
        if input_ is None or not rules:
            raise ConfigError(
                "Give a configuration file (versapub publish CONFIG.toml --out DIR) or at least "
                "--input DATA and one --rule 'a, b -> c'."
            )
        base = PublishConfig(input=input_, rules=tuple(rules))
    return base.with_overrides(
        input=input_,
        rules=tuple(rules) or None,
        l=opts["ell"],
        delimiter=opts["delimiter"],
        missing=opts["missing"],
        columns=tuple(opts["columns"]) or None,
        hierarchies=tuple(_parse_hierarchy(h) for h in opts["hierarchies"]) or None,
        decomposition=opts["decomposition"],
        anonymizer=opts["anonymizer"],
        seed=opts["seed"],
        format=fmt,
    )


def _progress(quiet: bool = False) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=quiet,
    )


def _run_publish(cfg: PublishConfig, out_dir: Path, overwrite: bool, quiet: bool) -> tuple[Release, float]:
    start = time.perf_counter()
    with _progress(quiet) as bar:
        task = bar.add_task(f"reading {cfg.input.name}", total=None)
        t0 = time.perf_counter()
        table = cfg.read()
        read_s = time.perf_counter() - t0
        info = InputInfo(
            path=str(cfg.input),
            sha256=file_sha256(cfg.input),
            rows_read=table.n_rows + table.n_dropped,
            rows_dropped_missing=table.n_dropped,
            missing_policy=cfg.missing,
            hierarchies={h.attribute: {"file": str(h.file), "level": h.level} for h in cfg.hierarchies},
        )

        def hook(desc: str, done: int, total: int) -> None:
            bar.update(task, description=desc, completed=done, total=total)

        release = api_publish(
            table,
            cfg.rules,
            guarantee=make_guarantee(cfg.guarantee_spec()),
            decomposition=cfg.decomposition,
            anonymizer=cfg.anonymizer,
            seed=cfg.seed,
            input_info=info,
            progress=hook,
        )
        release.timings["read"] = read_s
        bar.update(task, description="writing and verifying the release", total=None)
        write_release(release, out_dir, format=cfg.format, overwrite=overwrite)
    return release, time.perf_counter() - start


def _print_summary(release: Release, out_dir: Path, seconds: float) -> None:
    t = RichTable(title=f"Release {out_dir}", title_justify="left")
    for col in ("table", "kind", "attributes", "enforces", "rows", "groups", "achieved"):
        t.add_column(col, overflow="fold")
    for row in summary_rows(release):
        t.add_row(*(str(row[c]) for c in ("table", "kind", "attributes", "enforces", "rows", "groups", "achieved")))
    out.print(t)
    dropped = release.input.rows_dropped_missing
    out.print(
        f"{release.n_records} records, {len(release.attributes)} attributes, "
        f"{len(release.reduction.rules)} rule(s) enforced"
        + (f" ({len(release.reduction.dropped)} implied rule(s) dropped)" if release.reduction.dropped else "")
        + (f", {dropped} row(s) with missing cells dropped" if dropped else "")
        + f"; {release.guarantee.describe()}."
    )
    out.print(f"Schema in GNF: {'yes' if release.gnf.ok else 'NO'}; verification passed; {seconds:.2f} s.")
    out.print(f"Release:  {out_dir}/ (manifest.json, tables)")
    out.print(f"Report:   {out_dir / 'report.md'}")


@cli.command()
@_config_options
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
def publish(out_dir: Path, fmt: str | None, overwrite: bool, quiet: bool, **opts: Any) -> None:
    """Publish a table under privacy rules into a verified release directory.

    Either CONFIG.toml (see the README for the format) or flags:
    versapub publish --input data.csv --rule "a, b -> c" --l 3 --out release/
    """
    with _errors():
        cfg = _build_config(opts, fmt)
        release, seconds = _run_publish(cfg, out_dir, overwrite, quiet)
        if not quiet:
            _print_summary(release, out_dir, seconds)


@cli.command()
@_config_options
def rules(**opts: Any) -> None:
    """Show the rules: reduced set, dropped rules, feasibility, rule graph, UAD schema and
    its GNF explanation (nothing is published)."""
    with _errors():
        cfg = _build_config(opts)
        table = cfg.read()
        parsed = parse_rules(cfg.rules)
        validate_rules(parsed, table.names)
        red = reduce_rules(parsed)
        g = make_guarantee(cfg.guarantee_spec())
        out.print(f"[bold]Table[/]: {cfg.input} — {table.n_rows} records, attributes: {', '.join(table.names)}")
        out.print(f"[bold]Guarantee[/]: {g.describe()}")
        out.print(f"\n[bold]Irreducible rules[/] ({len(red.rules)} of {len(red.given)} given):")
        for r in red.rules:
            out.print(f"  {r}")
        if red.dropped:
            out.print("[bold]Dropped rules[/]:")
            for d in red.dropped:
                out.print(f"  {d.rule}  — {d.reason}")
        out.print("\n[bold]Feasibility[/] (sensitive attribute published alone):")
        feas = feasibility(table, red.rules, g)
        for f in feas:
            out.print(f"  [{'green' if f.feasible else 'red'}]{'ok ' if f.feasible else 'NO '}[/] {f.message()}")
        out.print("\n[bold]Rule graph[/] (edges LHS attribute -> RHS attribute):")
        edges = sorted({(q, r.rhs) for r in red.rules for q in r.lhs})
        for a, b in edges:
            out.print(f"  {a} -> {b}")
        schema = uad_schema(table.names, red.rules)
        out.print("\n[bold]UAD schema[/]:")
        for t in schema.tables:
            out.print(f"  {t.describe()}")
        out.print("\n" + check_gnf(schema, red.rules).explain())
        if not all(f.feasible for f in feas):
            sys.exit(2)


@cli.command()
@click.option(
    "--out",
    "out_dir",
    default=Path("demo-release"),
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory.",
)
@click.option("--overwrite/--no-overwrite", default=True, show_default=True, help="Replace an existing demo release.")
def demo(out_dir: Path, overwrite: bool) -> None:
    """Publish the embedded default: Adult (Table 5a domains), four rules, l = 2."""
    with _errors():
        cfg = adult_config()
        out.print(f"Publishing the embedded Adult data ({cfg.input.name}) under {len(cfg.rules)} rules, l = {cfg.l}:")
        for r in cfg.rules:
            out.print(f"  {r}")
        release, seconds = _run_publish(cfg, out_dir, overwrite, False)
        _print_summary(release, out_dir, seconds)


def main() -> None:
    cli(prog_name="versapub")


if __name__ == "__main__":
    main()
