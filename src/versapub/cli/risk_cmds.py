"""``versapub risk``: re-identification risk of a data file or a release (issue 32); the
measures are computed by :func:`versapub.inspect.risks.risk`, rendered here."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from versapub.cli.app import _errors, cli, out
from versapub.cli.progress import _progress
from versapub.cli.render import attack_mark
from versapub.errors import ConfigError
from versapub.formats import json_text


def _qi(value: str | None) -> list[str] | None:
    return None if value is None else [c.strip() for c in value.split(",") if c.strip()]


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def uniques_line(pu: dict[str, Any]) -> str:
    """The population-uniqueness figure: the chosen model's estimate with its interval, the
    other models beside it."""
    iv = pu.get("interval")
    within = f", 95% under the model {iv[0]:,.1f}-{iv[1]:,.1f}" if iv else ""
    line = (
        f"population uniques: {pu['estimate']:,.1f} sample records ({_pct(pu['share'])}{within}) estimated unique in "
        f"the population, by {pu['model']}" + (f" ({pu['chosen_by']})" if pu.get("chosen_by") else "")
    )
    if pu["sampling_fraction"] >= 1:
        return line
    models = ", ".join(
        f"{k} {v:,.1f}" if v is not None else f"{k} -" for k, v in pu.get("models", {}).items() if k != pu["model"]
    )
    ll = pu.get("loglinear")
    terms = f"; log-linear terms {' + '.join(ll['terms'])} (fit to the uniques z = {ll['z']:.2f})" if ll else ""
    arx = f"; ARX's rule picks {pu['arx_model']}" if pu.get("arx_model") else ""
    return line + f" (others: {models}{arx}{terms})"


def describe(t: dict[str, Any]) -> list[str]:
    """One table's measures as lines of text (also used by the report)."""
    p, j, pu = t["prosecutor"], t["journalist"], t["population_uniques"]
    lines = [
        f"records {t['records']:,} in {t['classes']:,} classes over ({', '.join(t['attributes']) or 'none'}); "
        f"sample uniques {t['sample_uniques']:,} ({_pct(t['sample_uniques'] / max(t['records'], 1))})",
        f"prosecutor: highest {p['highest']:.4f}, average {p['average']:.4f}, records at risk (> {p['threshold']:g}) "
        f"{_pct(p['records_at_risk'])} ({p['records_at_risk_count']:,})",
        f"journalist: highest {j['highest']:.4f}, average {j['average']:.4f}, records at risk "
        f"{_pct(j['records_at_risk'])} ({j['records_at_risk_count']:,})",
        f"marketer: average {t['marketer']['average']:.4f}",
        uniques_line(pu),
        f"individual risk (Benedetti-Franconi): highest {t['individual_risk']['highest']:.4f}, average "
        f"{t['individual_risk']['average']:.4f}; expected re-identifications "
        f"{t['individual_risk']['expected_reidentifications']:,.1f}",
        t["population"],
    ]
    s = t.get("suda")
    if s:
        by = ", ".join(f"{k}: {v:,}" for k, v in s["msus_by_size"].items())
        lines.append(
            f"SUDA (MSUs up to {s['max_size']} attributes): {s['records_with_msu']:,} records with an MSU, "
            f"{s['msus']:,} MSUs (by size {by}); highest score {s['highest_score']:,.0f}, mean {s['mean_score']:.2f}"
        )
        if s.get("not_searched"):
            lines.append(str(s["not_searched"]))
    return lines


def plot_histogram(tables: list[dict[str, Any]], path: Path) -> None:
    """Records per band of prosecutor risk, one bar group per table (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    edges = tables[0]["risk_histogram"]["edges"]
    labels = [f"({a:.2g}, {b:.2g}]" for a, b in itertools.pairwise(edges)]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(tables)
    x = np.arange(len(labels))
    for i, t in enumerate(tables):
        ax.bar(x + i * width, t["risk_histogram"]["records"], width, label=t["table"])
    ax.set_xticks(x + 0.4 - width / 2, labels, rotation=30, ha="right")
    ax.set_xlabel("prosecutor risk of a record (1 / its class size)")
    ax.set_ylabel("records")
    if len(tables) > 1:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _write_records(
    source: Path,
    out: Path,
    qi: list[str],
    sampling_fraction: float | None,
    population_size: int | None,
    weights: str | None,
    suda_max_size: int | None,
    suda_limit: int | None,
    delimiter: str | None,
) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from versapub.inspect.risks import record_risks
    from versapub.io.read import read_table

    table = read_table(source, delimiter=delimiter, missing="value", columns=[*qi, *([weights] if weights else [])])
    risks = record_risks(
        table,
        qi,
        sampling_fraction=sampling_fraction,
        population_size=population_size,
        weights=weights,
        suda_max_size=suda_max_size,
        suda_limit=suda_limit,
    )
    cols = {"row": np.arange(1, table.n_rows + 1), **risks}
    pacsv.write_csv(pa.table(cols), out)


@cli.command()
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--qi",
    help="Quasi-identifiers, comma-separated: the columns an attacker may know (required for a data file; "
    "default for a release: its key variables when it was published with --keys, else every published "
    "non-sensitive column of each table).",
)
@click.option("--sampling-fraction", type=float, help="The share of the population the data holds, in (0, 1].")
@click.option("--population-size", type=int, help="The size of the population the data was drawn from.")
@click.option(
    "--model",
    type=click.Choice(["auto", "loglinear", "copula", "pitman", "zayatz", "snb", "arx"]),
    default="auto",
    show_default=True,
    help="The population-uniqueness model reported with a sampling fraction or weights (every model is printed "
    "beside it): loglinear (Skinner & Shlomo), copula (Rocher et al.), ARX's pitman, zayatz, snb, or arx (Dankar "
    "et al.'s rule among them). auto: loglinear, the closest in the simulation of docs/risk.md.",
)
@click.option("--weights", metavar="COLUMN", help="A column of sampling weights (a data file only).")
@click.option(
    "--household",
    metavar="COLUMN",
    help="A data file only: the column of each person's household id. Adds household risk (sdcMicro's 1 - Π(1 - r) "
    "over the members) and the households unique on their structure (household-level keys and the members' keys).",
)
@click.option(
    "--household-level",
    metavar="COLUMNS",
    help="With --household: the key variables constant within a household (region, size, ...), comma-separated "
    "(default: those found constant within every household).",
)
@click.option(
    "--threshold",
    type=float,
    default=0.2,
    show_default=True,
    help="A record is at risk when its re-identification probability is above this.",
)
@click.option(
    "--suda-max-size",
    type=int,
    help="Largest minimal sample unique searched by SUDA (default: 5, or the number of quasi-identifiers).",
)
@click.option(
    "--suda-limit",
    type=click.IntRange(min=0),
    default=200_000_000,
    show_default=True,
    help="Ceiling on SUDA's cost in row-groupings (rows x attribute subsets; the default takes about 4 s): the "
    "largest MSU sizes that fit are searched and the result names the ones that were not. 0: no ceiling.",
)
@click.option("--no-suda", is_flag=True, help="Skip the special uniques (SUDA).")
@click.option(
    "--missing-matches-any",
    is_flag=True,
    help="Read a missing (empty) value as matching any value, as sdcMicro does: a record's class size counts every "
    "record equal to it wherever neither is missing. Default: a missing value is a value like any other (ARX), "
    "which never gives larger classes.",
)
@click.option("--delimiter", help="The data file's delimiter (default: , or \\t for .tsv).")
@click.option(
    "--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path), help="Draw the risk histogram (PNG)."
)
@click.option(
    "--records",
    "records_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A data file only: write each record's risks to this CSV (row number, class size, prosecutor, journalist "
    "and individual risk, MSUs, smallest MSU, SUDA score; with a sampling fraction or weights the log-linear "
    "model's risk and probability of being unique in the population), in the data's order.",
)
@click.option(
    "--original",
    "original",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A release only: also attack it with everything it publishes against this original (inference per "
    "rule, singling out and linkability per table, as check --original runs them).",
)
@click.option("--attacks", "n_attacks", type=int, help="With --original: the original records attacked (default 500).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --plot or --records file.")
@click.option("--json", "as_json", is_flag=True, help="Print every measure as JSON.")
def risk(
    source: Path,
    qi: str | None,
    sampling_fraction: float | None,
    population_size: int | None,
    model: str,
    weights: str | None,
    household: str | None,
    household_level: str | None,
    threshold: float,
    suda_max_size: int | None,
    suda_limit: int,
    no_suda: bool,
    missing_matches_any: bool,
    delimiter: str | None,
    plot_file: Path | None,
    records_file: Path | None,
    original: Path | None,
    n_attacks: int | None,
    overwrite: bool,
    as_json: bool,
) -> None:
    """Re-identification risk of a data file or a release directory, as ARX and sdcMicro
    report it: prosecutor, journalist and marketer risk (El Emam), population uniques
    (a log-linear model by default; a Gaussian copula and ARX's Zayatz, Pitman and SNB
    beside it), Benedetti-Franconi individual risk and
    SUDA special uniques. A release is measured per table and, at the top, at its worst."""
    from versapub.inspect.risks import risk as measure_risk

    with _errors():
        for flag, path in (("--plot", plot_file), ("--records", records_file)):
            if path is not None and path.resolve() == source.resolve():
                raise ConfigError(f"{flag} {path} is the input; write it elsewhere.")
            if path is not None and path.exists() and not overwrite:
                raise ConfigError(f"{flag} {path} exists; add --overwrite to replace it.")
        if records_file is not None and source.is_dir():
            raise ConfigError("--records lists a data file's records; a release publishes classes, not records.")
        with _progress(as_json) as bar:
            task = bar.add_task("reading", total=None)
            rep = measure_risk(
                source,
                qi=_qi(qi),
                sampling_fraction=sampling_fraction,
                population_size=population_size,
                weights=weights,
                threshold=threshold,
                suda_max_size=suda_max_size,
                with_suda=not no_suda,
                delimiter=delimiter,
                missing_matches_any=missing_matches_any,
                suda_limit=suda_limit or None,
                progress=lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total),
                household=household,
                household_level=_qi(household_level),
                model=model,
            )
        data = rep.to_json()
        if plot_file is not None and data["tables"]:
            plot_histogram(data["tables"], plot_file)
        if records_file is not None:
            _write_records(
                source,
                records_file,
                _qi(qi) or [],
                sampling_fraction,
                population_size,
                weights,
                suda_max_size,
                suda_limit or None,
                delimiter,
            )
        if original is not None:
            if not source.is_dir():
                raise ConfigError("--original attacks a release; give a release directory as SOURCE.")
            from versapub.inspect import attacks

            data["attacks"] = attacks(source, original, n_attacks=n_attacks)
        if source.is_dir():
            from versapub.inspect import treatment_effect

            effect = treatment_effect(source, original)
            if effect is not None:  # a treated release only
                data["perturbation"] = effect
    if as_json:
        click.echo(json_text(data, indent=2))
        return
    _render(data, rep.households, original is not None, plot_file)


def _render(data: dict[str, Any], households: Any, with_original: bool, plot_file: Path | None) -> None:
    """``risk``'s text: each table's measures, the worst over tables, the household figures,
    the notes and extras."""
    for t in data["tables"]:
        out.print(f"[bold]{escape(t['table'])}[/]")
        for line in describe(t):
            out.print("  " + escape(line), soft_wrap=True)
    if len(data["tables"]) > 1:
        worst = Table(title="worst over the tables")
        worst.add_column("measure")
        worst.add_column("value", justify="right")
        worst.add_row("prosecutor highest", f"{data['prosecutor']['highest']:.4f} ({data['prosecutor']['table']})")
        worst.add_row("prosecutor average", f"{data['prosecutor']['average']:.4f}")
        worst.add_row("records at risk", _pct(data["prosecutor"]["records_at_risk"]))
        worst.add_row("journalist highest", f"{data['journalist']['highest']:.4f}")
        worst.add_row("marketer average", f"{data['marketer']['average']:.4f}")
        worst.add_row("population uniques", f"{data['population_uniques']['estimate']:,.1f}")
        out.print(worst)
    if households is not None:
        out.print(f"[bold]households[/]: {escape(households.text())}", soft_wrap=True)
    _render_notes_and_extras(data, with_original)
    if plot_file is not None:
        out.print(f"Histogram: {escape(str(plot_file))}")


def _render_notes_and_extras(data: dict[str, Any], with_original: bool) -> None:
    """``risk``'s notes, its attacks (``--original``) and what a treated release's
    treatments changed."""
    for note in data["notes"]:
        out.print(escape(f"note: {note}"), soft_wrap=True)
    adv = data.get("attacks")
    if adv:
        out.print(f"[bold]attacks on everything published[/] ({adv['n_attacks']} original records attacked)")
        for r in adv["rules"]:
            out.print(f"  {attack_mark(r)} inference {escape(r['message'])}", soft_wrap=True)
        for t in adv["tables"]:
            out.print(f"  {attack_mark(t)} {escape(str(t['table']))}: {escape(t['message'])}", soft_wrap=True)
    if data.get("perturbation"):
        from versapub.verify.treatments.perturbation_effect import effect_lines

        out.print(
            "[bold]what the treatments changed[/]" + ("" if with_original else " (give --original for the files' view)")
        )
        for line in effect_lines(data["perturbation"]):
            out.print(f"  {escape(line)}", soft_wrap=True)
