"""Publish-side commands: ``publish``, ``rules``, ``demo``."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from versapub.cli.app import (
    RECORD_HELP,
    _errors,
    cli,
    err,
    out,
)
from versapub.cli.options import (
    _build_config,
    _config_options,
)
from versapub.cli.progress import _progress, _run_publish
from versapub.cli.render import _print_summary, render_rules
from versapub.errors import ConfigError
from versapub.formats import json_text

if TYPE_CHECKING:
    pass


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
@click.option("--no-utility", is_flag=True, help="Skip measuring utility (the same as --utility none).")
@click.option(
    "--utility",
    "utility_level",
    type=click.Choice(["basic", "full", "none"]),
    default="basic",
    show_default=True,
    help="Utility measured at publish: basic (KL-divergence, 1,000 COUNT queries, marginal errors, class metrics, "
    "excessive protection), full (also ID3 classification and count queries on published values of generalized "
    "tables; versapub evaluate computes them later), none.",
)
@click.option(
    "--backend",
    type=click.Choice(["memory", "dask"]),
    help="Where the records are processed: memory (default: this process) or dask (a Dask cluster, for tables that "
    "do not fit in memory; needs pip install 'versapub[dask]'; uad with anatomy, mondrian or incognito, and the "
    "classic --qi job; Parquet output; with --mechanism, the records counted on the cluster and measured here).",
)
@click.option(
    "--scheduler",
    metavar="tcp://HOST:8786",
    help="--backend dask: an existing Dask scheduler (default: a LocalCluster on this machine).",
)
@click.option(
    "--workers", type=int, help="--backend dask without --scheduler: worker processes (default: one per core)."
)
@click.option(
    "--worker-memory",
    "worker_memory",
    metavar="SIZE",
    help="--backend dask without --scheduler: memory per worker, e.g. 4GiB (default: 3/4 of the machine's, shared).",
)
@click.option(
    "--scratch",
    type=click.Path(file_okay=False, path_type=Path),
    help="--backend dask: directory for intermediate Parquet files, visible to every worker (default: beside --out).",
)
@click.option("--record-input-path", "record_input_path", is_flag=True, default=None, help=RECORD_HELP)
@click.option(
    "--population",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The population the input (then the research subset) was drawn from, read like the input: delta-presence "
    "and k-map without a fraction are checked against it (config: [input] population).",
)
@click.option(
    "--detach-others",
    "detach_others",
    is_flag=True,
    default=None,
    help="Classic job (--qi without a rule): publish the other columns in a plain table of their own, not linked "
    "to the generalized one (default: in each record's row of it, as ARX keeps insensitive attributes); with "
    "--sensitive: generalize them with the quasi-identifiers (default: kept exact beside the classes).",
)
@click.option(
    "--k",
    "k_floor",
    type=int,
    help="A floor on published cells: every record shares its exactly published non-sensitive values with at "
    "least K-1 others — the same test as check --k (config: [privacy] k). Mondrian and Incognito meet it while "
    "they generalize; the columns Anatomy, the MSA decomposition and plain tables publish exactly are generalized "
    "the same way in every table (a level of your hierarchy, or of one built from the values) until they meet it "
    "(an unreachable K is refused naming the largest one). Without --k, the summary says what --k 3 and --k 5 "
    "would cost.",
)
@click.option(
    "--mechanism",
    "mechanism",
    help="Publish under differential privacy instead of syntactic rules (config: [privacy] mechanism): "
    "dp:epsilon=1,delta=1e-9 measures marginals with OpenDP's discrete Gaussian noise under zCDP and publishes "
    "them with the model fitted to them (Private-PGM's estimator); select=auto|rules|mst|given chooses the "
    "marginals (auto: each rule's Q and S when rules are given, else MST), marginals=age+sex;disease with "
    "select=given. Every column needs a declared domain (--domain). Needs the dp extra: pip install 'versapub[dp]'.",
)
@click.option(
    "--domain",
    "domains",
    multiple=True,
    help="With --mechanism, repeatable: COLUMN=FILE, the values COLUMN may take, one per line, or COLUMN=17..90, "
    "a range of whole numbers — public knowledge, never read from the data (config: [privacy.domains]). A column "
    "given a hierarchy uses its leaves.",
)
@click.option(
    "--treat",
    "treat",
    multiple=True,
    help="A treatment applied to the input before anything else, repeatable, in order (config: [[treatment]]): "
    "top-coding:columns=income,threshold=100000 (or quantile=0.99; value=V publishes V instead), "
    "bottom-coding:columns=age,threshold=18, rounding:columns=income;rent,base=1000, "
    "microaggregation:columns=income;wealth,k=3 (method=mdav|individual-ranking|optimal, aggregate=mean|median), "
    "noise:columns=income,magnitude=10 (method=uncorrelated|correlated), "
    "pram:columns=sex,retention=0.8 (invariant=true, strata=region, matrix=FILE.csv), "
    "rank-swapping:columns=income,p=5, "
    "targeted-swapping:columns=region;district,keys=age;sex,unit=hid,rate=0.05 (threshold=3, similar=COLUMNS). "
    "Random draws stay secret unless --seed is given. The manifest records them; the verifier checks them from "
    "the files and applies the value rules to the original itself.",
)
@click.option(
    "--suppression",
    "k_suppression",
    type=float,
    help="With --k (or --max-risk): the largest share of records that may be removed, published in no table, "
    "instead of generalizing the exactly published columns further (ARX's suppression limit; 0.02: at most 2 %; "
    "config: [privacy] suppression). The manifest and the summary count them.",
)
@click.option(
    "--keys",
    "keys",
    help="With --k (or --max-risk): the key variables, comma-separated — the columns an adversary is assumed to "
    "know (sdcMicro's keyVars): the floor, the identity verdict and the previews count their cells only "
    "(config: [privacy] keys). Without it every exactly published column counts, and the summary says so.",
)
@click.option(
    "--suppression-mode",
    "suppression_mode",
    type=click.Choice(["remove", "cells"]),
    help="How --k meets short cells beside generalizing (config: [privacy] suppression_mode): remove (default, "
    "ARX: records removed, in no table, at most --suppression of them) or cells (sdcMicro's local suppression: "
    "key values published empty, an empty value matching any value; --suppression then bounds the share of "
    "records with a suppressed value, no bound without it).",
)
@click.option(
    "--unit",
    "unit",
    type=click.Choice(["record", "household"]),
    help="What --k (or --max-risk) counts (config: [privacy] unit): record (default) or household — with "
    "--household ID, every household's structure (its household-level keys and its members' keys) shared by at "
    "least k households, short households removed whole within --suppression.",
)
@click.option(
    "--importance",
    "importance",
    help="With --suppression-mode cells: key variables, most important first, comma-separated — suppressed last "
    "(config: [privacy] importance; default: a key with more distinct values is suppressed first, as sdcMicro).",
)
@click.option(
    "--max-risk",
    "max_risk",
    type=float,
    help="A ceiling on each table's prosecutor re-identification risk (0.2: every record in a class of at least "
    "5) — the same test as check --max-risk (config: [privacy] max_risk). With the highest risk (the default "
    "measure) it is met as the floor K = ceil(1/R), as --k is; with the average risk a release above it is "
    "refused (exit 2, nothing written, with the ways out).",
)
@click.option(
    "--risk-measure",
    type=click.Choice(["highest", "average"]),
    help="Which prosecutor risk --max-risk bounds: highest (1 / the smallest class, default) or average "
    "(classes / records) (config: [privacy] risk_measure).",
)
@click.option(
    "--max-singling-out",
    "max_singling_out",
    type=float,
    help="A ceiling: refuse the release when a table's measured singling-out risk (the attacks on everything "
    "published) is above this share — the same test as check --max-singling-out (config: [privacy] "
    "max_singling_out).",
)
def publish(
    out_dir: Path,
    fmt: str | None,
    overwrite: bool,
    quiet: bool,
    no_utility: bool,
    utility_level: str,
    backend: str | None,
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
    scratch: Path | None,
    k_floor: int | None,
    k_suppression: float | None,
    keys: str | None,
    suppression_mode: str | None,
    unit: str | None,
    importance: str | None,
    treat: tuple[str, ...],
    max_risk: float | None,
    risk_measure: str | None,
    max_singling_out: float | None,
    mechanism: str | None,
    domains: tuple[str, ...],
    record_input_path: bool | None,
    population: Path | None,
    detach_others: bool | None,
    **opts: Any,
) -> None:
    """Publish a table under privacy rules into a verified release directory.

    Either CONFIG.toml (see docs/configuration.md for the format) or flags:
    versapub publish --input data.csv --rule "a, b -> c" --l 3 --out release/

    A table too large for memory (a Parquet directory or CSV files) runs on Dask:
    versapub publish --input data/ --rule "a, b -> c" --l 10 --backend dask --out release/
    (--scheduler tcp://HOST:8786 for an existing cluster). Exit status: 0 published (the verdict
    line says whether it needs attention), 2 bad input or refused (an option the job cannot honour,
    or a measured ceiling such as --max-singling-out not met: each with its way out), 3 the release
    failed its own verification (a bug in versapub: report it), 5 the Dask cluster failed (nothing
    written in any of these).
    """
    with _errors():
        if backend == "dask" and fmt == "csv":
            raise ConfigError(
                "--backend dask writes Parquet (its large tables are directories of Parquet parts); "
                "leave out --format csv."
            )
        if scheduler and backend is None:
            backend = "dask"
        if mechanism is not None or domains or _configured_mechanism(opts["config"]):  # needs no rule
            syntactic = {  # what a syntactic release reads and a differentially private one would ignore
                "--k": k_floor,
                "--suppression": k_suppression,
                "--keys": keys,
                "--suppression-mode": suppression_mode,
                "--unit": unit,
                "--importance": importance,
                "--treat": treat or None,
                "--max-risk": max_risk,
                "--risk-measure": risk_measure,
                "--max-singling-out": max_singling_out,
                "--population": population,
                "--l": opts.get("ell"),
                "--guarantee": opts.get("guarantee"),
                "--anonymizer": opts.get("anonymizer"),
                "--decomposition": opts.get("decomposition"),
                "--format parquet": fmt == "parquet" or None,  # its tables are CSV
            }
            cluster: dict[str, Any] = {"backend": backend, "scheduler": scheduler, "workers": workers}
            cluster |= {"worker_memory": worker_memory, "scratch": scratch}
            ignored = [f for f, v in syntactic.items() if v]
            _publish_dp(opts, fmt, (mechanism, domains, cluster), out_dir, overwrite, quiet, ignored)
            return
        cfg = _build_config(opts, fmt).with_overrides(
            backend=backend,
            scheduler=scheduler,
            workers=workers,
            worker_memory=worker_memory,
            scratch=scratch,
            k=k_floor,
            suppression=k_suppression,
            keys=_listed(keys),
            suppression_mode=suppression_mode,
            unit=unit,
            importance=_listed(importance),
            max_risk=max_risk,
            risk_measure=risk_measure,
            max_singling_out=max_singling_out,
            record_input_path=record_input_path,
            detach_others=detach_others,
            population=population,
        )
        if treat:  # after the configuration's [[treatment]]s, in order
            cfg = replace(cfg, treatments=(*cfg.treatments, *treat))
        if cfg.backend == "dask" and fmt is None:
            cfg = replace(cfg, format="parquet")
        release, seconds = _run_publish(cfg, out_dir, overwrite, quiet, utility="none" if no_utility else utility_level)
        if not quiet:
            _print_summary(release, out_dir, seconds)


def _listed(text: str | None) -> tuple[str, ...] | None:
    """A comma-separated list of column names (``None``: not given)."""
    return None if text is None else tuple(p.strip() for p in text.split(","))


def _configured_mechanism(config: Path | None) -> bool:
    """Does the configuration file ask for a differentially private release?"""
    from versapub.io.config import load_config

    return config is not None and load_config(config).mechanism is not None


def _publish_dp(
    opts: dict[str, Any],
    fmt: str | None,
    asked: tuple[str | None, tuple[str, ...], dict[str, Any]],
    out_dir: Path,
    overwrite: bool,
    quiet: bool,
    ignored: list[str],
) -> None:
    """``publish --mechanism``: the differentially private release, and its summary
    (``asked``: the mechanism, the ``--domain`` options and the cluster's options; ``ignored``:
    syntactic options given, refused)."""
    mechanism, domains, cluster = asked
    if ignored:
        raise ConfigError(
            f"{', '.join(ignored)} belong(s) to a syntactic release; a differentially private one (--mechanism) "
            "protects by its budget alone and writes CSV tables. Leave them out, or publish without --mechanism."
        )
    from versapub.cli.dp_render import dp_summary, run_dp_with_bar
    from versapub.io.dp_config import domain_values

    if opts["config"] is None and opts["input_"] is None:
        raise ConfigError("Give a configuration file or --input DATA with --mechanism.")
    cfg = _build_config(opts, fmt, need_rules=False)
    given = []
    for d in domains:
        column, eq, file = d.partition("=")
        if not eq or not column.strip() or not file.strip():
            raise ConfigError(f"--domain {d!r}: write COLUMN=FILE (a file with one value per line) or COLUMN=17..90.")
        given.append((column.strip(), domain_values(column.strip(), file.strip(), Path.cwd(), "--domain")))
    cfg = replace(cfg, mechanism=mechanism or cfg.mechanism, domains=(*cfg.domains, *given))
    cfg = cfg.with_overrides(**cluster)  # --backend dask: the records counted on the cluster
    if cfg.mechanism is None:
        raise ConfigError("--domain declares domains for --mechanism (e.g. --mechanism dp:epsilon=1); give one.")
    synth, check, seconds = run_dp_with_bar(cfg, out_dir, overwrite, quiet)
    if not quiet:
        click.echo(dp_summary(synth, check, out_dir, seconds))


@cli.command()
@_config_options
@click.option("--json", "as_json", is_flag=True, help="Print the rules, feasibility and schema as JSON.")
def rules(as_json: bool, **opts: Any) -> None:
    """Show the rules: reduced set, dropped rules, feasibility, rule graph, and the schema of
    the decomposition asked for (GD included: its add-back runs) with why every rule holds.
    Nothing is written; infeasible rules stop the command (exit 2) before the schema."""
    from versapub import inspect

    with _errors():
        cfg = _build_config(opts)
        with _progress(as_json) as bar:
            task = bar.add_task(f"reading {cfg.input.name}", total=None)

            def hook(desc: str, done: int, total: int) -> None:
                bar.update(task, description=desc, completed=done, total=total)

            rep = inspect.rules_report(cfg, hook)
        if as_json:
            click.echo(json_text(rep.to_dict(), indent=2))
        else:
            render_rules(rep)
        if not rep.feasible:
            err.print("[bold red]error:[/] some rules cannot be satisfied (see above); no schema is built.")
            sys.exit(2)
        if rep.refusal is not None:
            err.print(
                f"[bold red]error:[/] publishing this job would be refused: {escape(rep.refusal)}", soft_wrap=True
            )
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
    from versapub.datasets import adult_config

    with _errors():
        cfg = adult_config()
        spec = ", ".join(f"{k} = {v}" for k, v in cfg.guarantee_spec().items() if k != "name")
        out.print(f"Publishing the embedded Adult data ({cfg.input.name}) under {len(cfg.rules)} rules, {spec}:")
        for r in cfg.rules:
            out.print(f"  {r}")
        release, seconds = _run_publish(cfg, out_dir, overwrite, False)
        _print_summary(release, out_dir, seconds)
