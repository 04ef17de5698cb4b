"""Read-side commands over :mod:`versapub.inspect`: ``evaluate``, ``query``, ``sample``, ``check``, ``report``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from versapub.cli.app import (
    ATTENTION_EXIT,
    MISSING_HELP,
    ORIGINAL_HELP,
    _errors,
    cli,
    err,
    out,
)
from versapub.cli.progress import _progress
from versapub.cli.render import render_check, render_evaluation
from versapub.errors import ConfigError
from versapub.formats import json_text

if TYPE_CHECKING:
    from versapub.inspect import Original


def _warn(mismatch: Sequence[str]) -> None:
    """How the original differs from the release, on stderr."""
    for line in mismatch:
        err.print(f"[bold yellow]warning:[/] {escape(line)}", soft_wrap=True)


def _original(path: Path | None, release_dir: Path, missing: str | None = None) -> Original:
    """The original table (:func:`versapub.inspect.original_table`), its differences from the
    release warned about on stderr."""
    from versapub.inspect import original_table

    got = original_table(release_dir, path, missing, households=True)
    _warn(got.mismatch)
    return got


@cli.command()
@click.argument(
    "release_dirs", metavar="RELEASE...", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path)
)
@click.option("--original", type=click.Path(dir_okay=False, path_type=Path), help=ORIGINAL_HELP)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=MISSING_HELP)
@click.option("--queries", "n_queries", default=1000, show_default=True, help="Number of random COUNT queries.")
@click.option("--qd", type=int, help="Query dimension: attributes per query (default 3, or all if fewer).")
@click.option("--p", "frac", default=0.4, show_default=True, help="Fraction of each attribute's domain per predicate.")
@click.option("--seed", default=1, show_default=True, help="Workload seed (same seed = same queries).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
@click.pass_context
def evaluate(
    ctx: click.Context,
    release_dirs: tuple[Path, ...],
    original: Path | None,
    missing: str | None,
    n_queries: int,
    qd: int | None,
    frac: float,
    seed: int,
    as_json: bool,
) -> None:
    """Utility of a release: KL-divergence to the original, relative error of a random
    COUNT workload, per-attribute marginal error (0 for a faithful release), the classic
    metrics, and for generalized tables the functional-diversity paper's measures
    (excessive protection, ID3's ratio of classification accuracies predicting the
    sensitive attribute, 1-D and 2-D count queries on published values), timings.

    Several releases of one input (syntactic or differentially private) are measured side by
    side on the same workload, as `versapub compare` does."""
    from versapub import inspect

    if len(release_dirs) > 1:
        from versapub.cli.compare_cmds import compare

        with _errors():
            if qd is not None or frac != 0.4 or missing is not None:
                raise ConfigError(
                    "Several releases are evaluated side by side as `versapub compare` does: its workload takes "
                    "--queries and --seed; --qd, --p and --missing apply to one release."
                )
        ctx.invoke(
            compare,
            releases=release_dirs,
            original=original,
            n_queries=n_queries,
            seed=seed,
            sampling_fraction=None,
            as_json=as_json,
        )
        return
    release_dir = release_dirs[0]

    with _errors(), _progress(as_json) as bar:
        task = bar.add_task("loading the release", total=None)
        ev = inspect.evaluate(
            release_dir,
            original,
            missing=missing,
            n_queries=n_queries,
            qd=qd,
            p=frac,
            seed=seed,
            progress=lambda desc, done, total: bar.update(task, description=desc),
        )
    _warn(ev.original_mismatch)
    if as_json:
        click.echo(json_text(ev.to_dict(), indent=2))
    else:
        render_evaluation(ev)


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.argument("predicate")
@click.option(
    "--original",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also count on this original table (CSV/Parquet or TOML config) and show the error (default: the input "
    "the manifest records, when it is found unchanged).",
)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=MISSING_HELP)
@click.option(
    "--seconds",
    default=2.0,
    show_default=True,
    help="Time the integer program for the range may take (marginal collections); past it the cheap bounds, "
    "marked not sharp. 0: never run it.",
)
@click.option(
    "--json", "as_json", is_flag=True, help='Print {"estimate": ..., "lower": ..., "upper": ..., "sharp": ..., ...}.'
)
def query(
    release_dir: Path, predicate: str, original: Path | None, missing: str | None, seconds: float, as_json: bool
) -> None:
    """Estimated COUNT(*) WHERE PREDICATE under the release's maximum-entropy model.

    PREDICATE: conditions attr = 'v', !=, <, <=, >, >= (in value order: numbers inside
    values compare as numbers), attr [NOT] IN ('v1', 'v2'), attr [NOT] BETWEEN a AND b,
    joined by AND, OR, NOT and parentheses. Example:
    "age IN ('25-34','35-44') AND (sex = 'Female' OR hours >= 40)". A value that the
    release does not publish is an error with the closest spellings; a generalized value
    as published ('[60-80)') stands for the values it covers. The actual count uses
    --original, else the input the manifest records when it is found unchanged.

    Beside the estimate: the smallest and largest count of any table consistent with the
    release (the true count is always inside; "not sharp" when no consistent table is known
    to reach an end; a release that removed records: the whole input's count lies up to that
    many above it, and the note says so); for a PRAM'd column the correction's 95 % interval
    instead.
    """
    from versapub import inspect

    with _errors():
        got = inspect.query(release_dir, predicate, original, missing, seconds=seconds)
    _warn(got.original_mismatch)
    if as_json:
        click.echo(json_text(got.to_dict()))
        return
    out.print(escape(got.text()), soft_wrap=True)
    for note in got.notes:
        out.print(f"  ({escape(note)})", soft_wrap=True)
    if got.actual is not None:
        where = "" if got.inside is None else (" (inside the range)" if got.inside else " (OUTSIDE the range)")
        out.print(f"actual:   {got.actual}{where}")
        rel = got.relative_error
        out.print(f"relative error: {rel:.4f}" if rel is not None else "relative error: undefined (actual count is 0)")


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option("-n", "n", default=10000, show_default=True, help="Number of synthetic records.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Output CSV file.")
@click.option("--seed", default=0, show_default=True, help="Sampling seed.")
def sample(release_dir: Path, n: int, output: Path, seed: int) -> None:
    """Draw synthetic records from the release's maximum-entropy model into a CSV file."""
    from versapub import inspect

    with _errors():
        records = inspect.sample(release_dir, n, seed)
        import pyarrow.csv as pacsv

        pacsv.write_csv(records, output)
    out.print(f"Wrote {n} synthetic records ({records.num_columns} attributes) to {output}.")


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--rules",
    "rules_cfg",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Check these rules (the [privacy] rules of a TOML config) instead of the manifest's.",
)
@click.option(
    "--rule",
    "rule",
    multiple=True,
    metavar="'a, b -> c'",
    help="A rule to check (repeatable), optionally with its own guarantee after ' | ' "
    "('zip -> dx | t-closeness:t=0.2').",
)
@click.option(
    "--policy",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Your requirement, stated once: a TOML file with a [privacy] section (guarantee, l, rules — the keys of "
    "a job's configuration, which is a policy too). Without it (or --guarantee, --l, --rule), the release is "
    "checked against its own claim (its manifest), and the verdict says so.",
)
@click.option(
    "--original",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The original table (CSV/Parquet or TOML config): adds marginal checks and attack targets.",
)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=MISSING_HELP)
@click.option(
    "--population",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The population the records were drawn from (read like the input): delta-presence and k-map without a "
    "fraction are checked against it (a release claiming them fails without it).",
)
@click.option(
    "--attack",
    type=click.Choice(["auto", "exact", "scalable", "both"]),
    default="auto",
    show_default=True,
    help="auto: exact possible-worlds attack when the release has at most 500 records, plus the "
    "scalable attack always.",
)
@click.option(
    "--guarantee",
    "guarantee",
    metavar="NAME:PARAM=V",
    help="The guarantee to require, e.g. l-diversity:l=3 or k-anonymity:k=5 (default: the manifest's, and each "
    "rule's own).",
)
@click.option("--l", "ell", type=int, help="Short for --guarantee l-diversity:l=L.")
@click.option(
    "--k",
    "k",
    type=int,
    help="Also require k-anonymity of the published cells: fail a table whose smallest cell of non-sensitive "
    "values holds fewer than K records; and read the tables as a collection of marginals: k-link and "
    "k-combinatorial anonymity (Kifer & Gehrke) of the attributes no rule protects.",
)
@click.option(
    "--keys",
    "keys",
    help="The key variables --k and --max-risk count, comma-separated (default: the ones the release names with "
    "its --keys, else every exactly published column).",
)
@click.option(
    "--max-risk",
    "max_risk",
    type=float,
    help="Also require a ceiling on re-identification risk: fail a table whose prosecutor risk (see "
    "--risk-measure) is above R, e.g. 0.2 (versapub risk gives every measure).",
)
@click.option(
    "--risk-measure",
    type=click.Choice(["highest", "average"]),
    default="highest",
    show_default=True,
    help="Which prosecutor risk --max-risk bounds: highest (1 / the smallest cell) or average (cells / records).",
)
@click.option(
    "--max-singling-out",
    "max_singling_out",
    type=float,
    help="With --original: fail a table whose measured singling-out risk (the attacks on everything published, "
    "anonymeter's) is above this share, e.g. 0.05.",
)
@click.option(
    "--attacks",
    "n_attacks",
    type=int,
    help="With --original: how many original records the attacks on everything published target (default 500).",
)
@click.option(
    "--sampling-fraction",
    type=float,
    help="The share of the population the original data was, in (0, 1]: each table's identity finding adds the "
    "records estimated unique in the population (the log-linear model by default; versapub risk --model gives "
    "every model).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def check(
    release_dir: Path,
    rules_cfg: Path | None,
    rule: tuple[str, ...],
    policy: Path | None,
    original: Path | None,
    missing: str | None,
    population: Path | None,
    attack: str,
    guarantee: str | None,
    ell: int | None,
    k: int | None,
    keys: str | None,
    max_risk: float | None,
    risk_measure: str,
    max_singling_out: float | None,
    n_attacks: int | None,
    sampling_fraction: float | None,
    as_json: bool,
) -> None:
    """Verify a release from its files alone and attack it.

    Exit status: 0 every check passed; 6 every check passed, with warnings that need attention (a table leaves
    records alone in their cell of columns that got no decision of their own: generalize, drop or protect
    columns, or require --k); 1 a check failed; 2 bad input.

    Schema (GNF per rule), guarantee in every group, consistency (sums, QIT/ST sizes, file digests, and
    with --original every marginal), intersection attacks, maximum-entropy posterior, row-order hygiene;
    with --original also the attacks on everything published: inference per rule (failing a rule whose
    protected attribute an adversary guesses more often than its guarantee allows and than its left-hand
    side alone does), singling out and linkability per table.
    Checked against your requirement (--policy, --guarantee/--l, --rule) or, without one, against the
    release's own claim (its manifest): the first line of the verdict says which.
    """
    from versapub import inspect

    with _errors(), _progress(as_json) as bar:
        task = bar.add_task("checking the release", total=None)

        def step(desc: str) -> None:
            bar.update(task, description=desc)

        rep = inspect.check(
            release_dir,
            _original(original, release_dir, missing) if original is not None else None,
            policy=policy,
            guarantee=guarantee,
            l=ell,
            rules=rule,
            rules_file=rules_cfg,
            attack=attack,
            k=k,
            keys=None if keys is None else [a.strip() for a in keys.split(",")],
            max_risk=max_risk,
            risk_measure=risk_measure,
            population=population,
            max_singling_out=max_singling_out,
            sampling_fraction=sampling_fraction,
            attacks=n_attacks,
            progress=step,
        )
    if as_json:
        click.echo(json_text(rep.to_json(), indent=2))
    else:
        render_check(release_dir, rep)
    if not rep.ok:
        sys.exit(1)
    if rep.verdict == "attention":
        sys.exit(ATTENTION_EXIT)


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option("--original", type=click.Path(dir_okay=False, path_type=Path), help=ORIGINAL_HELP)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=MISSING_HELP)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="Output HTML file.",
)
@click.option(
    "--sampling-fraction",
    type=float,
    help="The share of the population the original data was, in (0, 1]: the risk section adds each table's "
    "records estimated unique in the population.",
)
def report(
    release_dir: Path, original: Path | None, missing: str | None, output: Path, sampling_fraction: float | None
) -> None:
    """Write a self-contained HTML report (rules, attribute graph, tables, utility, attacks)."""
    from versapub import inspect

    with _errors(), _progress() as bar:
        bar.add_task("building the report", total=None)
        got = inspect.report(
            release_dir,
            _original(original, release_dir, missing) if original is not None else None,
            sampling_fraction=sampling_fraction,
        )
        output.write_text(got.html, encoding="utf-8")
    out.print(f"Wrote {output} ({'all checks passed' if got.check.ok else 'CHECKS FAILED'}).")
