"""The ``versapub`` command line (thin over the Python API).

Errors the user can cause are printed as one paragraph on stderr with a non-zero exit
status (2: bad input, 3: verification failed, 4: internal schema error); ``--debug``
shows the traceback as well.
"""

from __future__ import annotations

import csv
import json
import math
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from versapub._version import __version__
from versapub.errors import ConfigError, VersapubError
from versapub.io.manifest import read_manifest

#: ``check``'s exit status when every check passed with warnings that need attention.
ATTENTION_EXIT = 6
#: --record-input-path's help.
_RECORD_HELP = (
    "Record the input's and hierarchies' absolute paths in the release (internal use; by default "
    "only their file names: a path can itself be confidential)."
)
#: The three verdicts as the console shows them.
VERDICT_MARKUP = {
    "passed": "[green]ALL CHECKS PASSED[/]",
    "attention": "[yellow]PASSED — NEEDS ATTENTION[/]",
    "failed": "[red]CHECKS FAILED[/]",
}

if TYPE_CHECKING:
    from rich.progress import TaskID
    from rich.table import Table as RichTable

    from versapub.data import EncodedTable
    from versapub.io.config import HierarchySpec, PublishConfig
    from versapub.privacy.roles import ColumnRoles
    from versapub.release.model import Release


out = Console(highlight=False, soft_wrap=not sys.stdout.isatty())  # a log gets whole lines
err = Console(stderr=True, highlight=False, soft_wrap=not sys.stderr.isatty())
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class _State:
    debug = False
    mismatch: list[str] = []  # noqa: RUF012 - how the last original read differs from its release


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

    The table is decomposed into sub-tables in Guardian Normal Form (UAD by default; GD
    and the paper's single-attribute and multi-SA baselines on request), each sub-table
    is anonymized (Anatomy, frequency l-diversity), and the release is verified from its
    own files before it is written.  `experiment` re-runs the paper's §6.
    """
    _State.debug = debug
    _State.mismatch = []  # per invocation: nothing from an earlier command in the same process


def _config_options(f: F) -> F:
    opts = [
        click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path)),
        click.option(
            "--input",
            "input_",
            type=click.Path(path_type=Path),
            help="Input CSV (optionally .gz) or Parquet file (overrides the config); with --backend dask also a "
            "directory of Parquet or CSV files.",
        ),
        click.option(
            "--rule",
            "rules",
            multiple=True,
            metavar="'a, b -> c[ | GUARANTEE]'",
            help="A privacy rule; repeat for several (replaces the config's rules). A rule may carry its own "
            "guarantee after ' | ', e.g. 'zip, sex -> diagnosis | t-closeness:t=0.2' (the others have --guarantee).",
        ),
        click.option(
            "--guarantee",
            "guarantee",
            metavar="NAME:PARAM=V",
            help="The guarantee with its parameters (default l-diversity:l=2): l-diversity:l= (frequency), "
            "distinct-l-diversity:l=, entropy-l-diversity:l=, recursive-cl:c=,l=, k-anonymity:k=, t-closeness:t= "
            "(distance=equal|hierarchical|auto), functional:tau=,lambda= (functional (tau, lambda)-diversity).",
        ),
        click.option("--l", "ell", type=int, help="Short for --guarantee l-diversity:l=L."),
        click.option(
            "--delimiter",
            help="CSV delimiter, any text (default ',' or the config's; '\\t' for a tab; e.g. ', ').",
        ),
        click.option("--no-header", "no_header", is_flag=True, default=None, help="The file has no header line."),
        click.option(
            "--names",
            metavar="'a,b,c'",
            help="Column names, comma-separated: name a header-less file's columns (or rename the header's).",
        ),
        click.option(
            "--na-values",
            "na_values",
            metavar="'?,-9'",
            help="Comma-separated markers that mean a missing cell (compared without surrounding spaces).",
        ),
        click.option("--strip", is_flag=True, default=None, help="Remove spaces around every cell."),
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
            metavar="ATTR=FILE[:LEVEL]",
            help="An ARX hierarchy file for ATTR (repeatable). With :LEVEL the column is generalized to that "
            "level when read; without, the hierarchy goes to the anonymizer (mondrian, incognito) and the "
            "guarantee (t-closeness's hierarchical distance).",
        ),
        click.option(
            "--hierarchies",
            "hierarchy_dir",
            type=click.Path(path_type=Path),
            metavar="DIR",
            help="Every hierarchy of a folder, ARX's naming (*_hierarchy_ATTR.csv or ATTR.csv), without level.",
        ),
        click.option(
            "--decomposition",
            metavar="NAME[:P=V,...]",
            help="Decomposition: uad (default), gd, single-attribute or multi-sa, with parameters, e.g. "
            "gd:stop_when_worse=true,max_candidates=20.",
        ),
        click.option(
            "--gd-stop-when-worse",
            "gd_stop_when_worse",
            is_flag=True,
            default=None,
            help="GD: stop add-back at the first step that does not lower the KL-divergence.",
        ),
        click.option(
            "--gd-max-candidates",
            "gd_max_candidates",
            type=int,
            help="GD: score only this many random candidates per add-back step (an approximation).",
        ),
        click.option(
            "--multi-sa-time-limit",
            "multi_sa_time_limit",
            type=float,
            help="multi-sa: seconds per integer-program solve (default 60; the best solution found is used).",
        ),
        click.option(
            "--multi-sa-max-combinations",
            "multi_sa_max_combinations",
            type=int,
            help="multi-sa: refuse above this many distinct sensitive-value combinations (default 50,000).",
        ),
        click.option(
            "--identifying",
            multiple=True,
            metavar="COLUMN",
            help="A direct identifier: removed before publishing, listed in the manifest and report (repeatable).",
        ),
        click.option(
            "--quasi-identifying",
            "--qi",
            "quasi",
            multiple=True,
            metavar="COLUMN[,COLUMN...]",
            help="Declare quasi-identifiers. Without --rule: with --sensitive, the rules 'QI -> S' for every "
            "sensitive column; without, k-anonymity of the quasi-identifiers (--guarantee k-anonymity:k=K) in one "
            "generalized table (the classic one-table jobs).",
        ),
        click.option(
            "--sensitive",
            multiple=True,
            metavar="COLUMN[:L][,COLUMN[:L]...]",
            help="Declare sensitive columns (a rule must protect each). COLUMN:L gives that column's own "
            "distinct l-diversity (msa-decomposition's l_i; without :L it takes l_per there, the release's "
            "guarantee elsewhere).",
        ),
        click.option(
            "--primary",
            metavar="COLUMN",
            help="msa-decomposition: the primary sensitive attribute (default: the one with the largest l).",
        ),
        click.option(
            "--max-sensitive-level",
            type=int,
            metavar="L",
            help="sequential-sweep: generalize sensitive values at most to level L of their taxonomy (0: never; "
            "default: up to the root, so every valid requirement is met). A requirement the column cannot meet "
            "within L is refused with its eligible range (versapub eligible).",
        ),
        click.option(
            "--insensitive", multiple=True, metavar="COLUMN", help="Declare a column neither identifying nor sensitive."
        ),
        click.option(
            "--allow-unique",
            "allow_unique",
            multiple=True,
            metavar="COLUMN",
            help="Publish a near-unique column (most records hold a value no other has) as it is.",
        ),
        click.option(
            "--others",
            type=click.Choice(["insensitive", "quasi-identifying", "identifying"]),
            help="The role of every column no rule names and no role declares (identifying: removed). Without it, "
            "such a column is refused: nothing is published without a decision. Never covers a column that looks "
            "like a direct identifier.",
        ),
        click.option(
            "--allow-proxy",
            "allow_proxy",
            multiple=True,
            metavar="COLUMN",
            help="Publish a column that strongly reveals a protected attribute as it is (recorded in the manifest).",
        ),
        click.option(
            "--anonymizer",
            metavar="NAME[:P=V,...]",
            help="Anonymizer: anatomy (default; anatomy:grouping=wrap-around), multi-sa (the default of the "
            "multi-sa decomposition), mondrian, or incognito (incognito:suppression=0.02,utility=kl|discernibility|"
            "loss); mondrian and incognito generalize, with the hierarchies of --hierarchy/--hierarchies; "
            "msa-decomposition (Ye et al.: SA-groups for several sensitive attributes, one l per --sensitive "
            "COLUMN:L; msa-decomposition:above_l_per=true allows l above l_per); sequential-sweep (functional "
            "(tau, lambda)-diversity, generalizing sensitive values up their --hierarchy where needed; "
            "--max-sensitive-level caps how far); one-d-l-diversity (Ghinita et al.'s 1-D l-diversity).",
        ),
        click.option("--seed", type=int, help="Random seed (default 0)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _parse_hierarchy(spec: str) -> HierarchySpec:
    from versapub.io.config import HierarchySpec

    if "=" not in spec or not spec.split("=", 1)[1].strip():
        raise ConfigError(
            f"--hierarchy {spec!r} must look like ATTR=FILE (for the anonymizer) or ATTR=FILE:LEVEL (generalize "
            "when reading), e.g. age=age.csv:1."
        )
    attr, rest = spec.split("=", 1)
    file, _, level = rest.rpartition(":")
    if not file or not level.strip().lstrip("-").isdigit():
        if Path(rest).suffix.lower() in (".csv", ".txt") or not _:
            return HierarchySpec(attr.strip(), Path(rest))
        raise ConfigError(f"--hierarchy {spec!r}: LEVEL must be a whole number, got {level!r}.")
    return HierarchySpec(attr.strip(), Path(file), int(level))


def _unescape(delimiter: str | None) -> str | None:
    """``\\t`` typed on a command line means a tab."""
    return None if delimiter is None else delimiter.replace("\\t", "\t")


def _csv_list(text: str | None, flag: str) -> tuple[str, ...] | None:
    """A comma-separated option value (CSV quoting allowed: '"a, b",c')."""
    if text is None:
        return None
    items = next(csv.reader([text]), [])
    if not items or (any(not i.strip() for i in items) and flag == "--names"):
        raise ConfigError(f"{flag} {text!r}: give comma-separated, non-blank items, e.g. {flag} 'a,b,c'.")
    return tuple(i.strip() for i in items)


def _roles(base: ColumnRoles, opts: dict[str, Any]) -> ColumnRoles | None:
    """The config's column roles extended by the role flags (None: no flag given)."""
    from versapub.privacy.roles import ColumnRoles

    flags = {
        "identifying": opts["identifying"],
        "quasi-identifying": opts["quasi"],
        "sensitive": opts["sensitive"],
        "insensitive": opts["insensitive"],
    }
    if not any(flags.values()) and not opts["allow_unique"] and not opts.get("others") and not opts.get("allow_proxy"):
        return None
    merged = {r: (*cols, *flags[r]) for r, cols in base.by_role().items()}
    return ColumnRoles.from_mapping(
        merged,
        (*base.allow_unique, *opts["allow_unique"]),
        opts.get("others") or base.others,
        (*base.allow_proxy, *(opts.get("allow_proxy") or ())),
    )


def _plugin_override(what: str, text: str | None) -> dict[str, Any]:
    """``--decomposition NAME:P=V`` / ``--anonymizer NAME:P=V`` as config overrides."""
    if text is None:
        return {}
    from versapub.plugins import parse_spec

    name, params = parse_spec(text, f"--{what}")
    return {what: name, f"{what}_params": params}


def _sensitive_l(item: str) -> tuple[str, int | None]:
    """``occupation:7`` -> ``("occupation", 7)``; a column without ``:L`` -> ``(column, None)``."""
    name, colon, tail = item.rpartition(":")
    if not colon or not tail.strip().isdigit():
        return item, None
    if not name.strip():
        raise ConfigError(f"--sensitive {item!r}: give COLUMN:L, e.g. --sensitive occupation:7.")
    return name.strip(), int(tail)


#: Flags that are one anonymizer's parameter: flag -> (anonymizer, parameter).
_SHORTHANDS = {
    "--primary": ("msa-decomposition", "primary"),
    "--max-sensitive-level": ("sequential-sweep", "max_sensitive_level"),
}


def _anonymizer_override(text: str | None, given: dict[str, Any]) -> dict[str, Any]:
    """``--anonymizer`` as config overrides, with the shorthand flags (``--primary``,
    ``--max-sensitive-level``) as their anonymizer's parameters."""
    out = _plugin_override("anonymizer", text)
    for flag, value in given.items():
        if value is None:
            continue
        name, param = _SHORTHANDS[flag]
        if out.get("anonymizer", name) != name:
            raise ConfigError(f"{flag} is a parameter of the {name} anonymizer, not of {out['anonymizer']}.")
        out = {"anonymizer": name, "anonymizer_params": {**out.get("anonymizer_params", {}), param: value}}
    return out


def _guarantee_override(text: str | None, ell: int | None) -> dict[str, Any]:
    """``--guarantee NAME:P=V`` as config overrides (``--l`` is its short form)."""
    if text is None:
        return {}
    if ell is not None:
        raise ConfigError("Give the guarantee either with --guarantee or with --l, not both.")
    from versapub.privacy.guarantee import parse_guarantee

    spec = parse_guarantee(text)
    return {"guarantee": spec.pop("name"), "guarantee_params": spec}


def _build_config(opts: dict[str, Any], fmt: str | None = None) -> PublishConfig:
    """The configuration from CONFIG (if given) overridden by the command-line flags."""
    from versapub.io.config import PublishConfig, load_config
    from versapub.privacy.rules import format_attribute

    config, input_, rules = opts["config"], opts["input_"], list(opts["rules"])
    for role in ("quasi", "sensitive"):  # comma lists allowed: --qi age,sex,zip
        opts[role] = tuple(c for item in opts[role] for c in (_csv_list(item, "--" + role) or ()))
    own_l = dict(_sensitive_l(s) for s in opts["sensitive"])  # --sensitive occupation:7
    opts["sensitive"] = tuple(own_l)
    if not rules and opts["quasi"] and opts["sensitive"]:  # without --sensitive: k-anonymity of the QI alone
        qi = ", ".join(format_attribute(a) for a in opts["quasi"])
        rules = [
            f"{qi} -> {format_attribute(s)}"
            if own_l[s] is None
            else {"rule": f"{qi} -> {format_attribute(s)}", "guarantee": "distinct-l-diversity", "l": own_l[s]}
            for s in opts["sensitive"]
        ]
    elif any(v is not None for v in own_l.values()):
        raise ConfigError("--sensitive COLUMN:L needs --qi (the rules are then 'QI -> COLUMN'), not --rule.")
    if config is not None:
        base = load_config(config)
    else:
        if input_ is None or not (rules or opts["quasi"]):
            raise ConfigError(
                "Give a configuration file (versapub publish CONFIG.toml --out DIR) or at least "
                "--input DATA and one --rule 'a, b -> c' (or --qi COLUMNS, with --sensitive COLUMN)."
            )
        base = PublishConfig(input=input_, rules=tuple(rules))
    if opts["guarantee"] is not None:  # a new guarantee replaces the config's short form l = ...
        base = replace(base, l=None, guarantee_params={})
    return base.with_overrides(
        input=input_,
        rules=tuple(rules) or None,
        l=opts["ell"],
        **_guarantee_override(opts["guarantee"], opts["ell"]),
        delimiter=_unescape(opts["delimiter"]),
        header=False if opts["no_header"] else None,
        names=_csv_list(opts["names"], "--names"),
        na_values=_csv_list(opts["na_values"], "--na-values"),
        strip=opts["strip"],
        missing=opts["missing"],
        columns=tuple(opts["columns"]) or None,
        hierarchies=tuple(_parse_hierarchy(h) for h in opts["hierarchies"]) or None,
        hierarchy_dir=opts["hierarchy_dir"],
        **_plugin_override("decomposition", opts["decomposition"]),
        gd_stop_when_worse=opts["gd_stop_when_worse"],
        gd_max_candidates=opts["gd_max_candidates"],
        multi_sa_time_limit=opts["multi_sa_time_limit"],
        multi_sa_max_combinations=opts["multi_sa_max_combinations"],
        **_anonymizer_override(
            opts["anonymizer"], {"--primary": opts["primary"], "--max-sensitive-level": opts["max_sensitive_level"]}
        ),
        seed=opts["seed"],
        format=fmt,
        roles=_roles(base.roles, opts),
    )


class _Steps:
    """Progress on stderr: on a terminal a bar with percentage and time left for every step
    whose size is known; otherwise one line per step (and per tenth of a long step), so a
    log shows where a run is."""

    #: Seconds without a line before a step's progress is logged again.
    QUIET_S = 5.0

    def __init__(self, quiet: bool = False) -> None:
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.quiet = quiet
        self.live = err.is_terminal and not quiet
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
            disable=not self.live,
        )
        self.start = time.perf_counter()
        self.printed = self.start
        self.last: tuple[str, int] = ("", -1)

    def __enter__(self) -> _Steps:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)  # type: ignore[arg-type]

    def add_task(self, description: str, total: int | None = None) -> TaskID:
        self._line(description, 0, total)
        return self.bar.add_task(description, total=total)

    def update(
        self, task: TaskID, description: str | None = None, completed: int | None = None, total: int | None = None
    ) -> None:
        self.bar.update(task, description=description, completed=completed, total=total)
        if description is not None:
            self._line(description, completed or 0, total)

    def _line(self, description: str, completed: int, total: int | None) -> None:
        if self.live or self.quiet:
            return
        tenth = int(10 * completed / total) if total else -1
        head = description.split(":")[0]
        now = time.perf_counter()
        if (head, tenth) == self.last or (completed > 0 and now - self.printed < self.QUIET_S):
            return  # a step's start always; its later tenths only when lines have been quiet a while
        self.last, self.printed = (head, tenth), now
        pct = f" ({completed}/{total}, {100 * completed / total:.0f}%)" if total and total > 1 else ""
        err.print(f"[{time.perf_counter() - self.start:7.1f} s] {escape(description)}{pct}", soft_wrap=True)


def _progress(quiet: bool = False) -> _Steps:
    return _Steps(quiet)


def _run_publish(
    cfg: PublishConfig, out_dir: Path, overwrite: bool, quiet: bool, utility: bool = True
) -> tuple[Release, float]:
    from versapub import workflow

    start = time.perf_counter()
    with _progress(quiet) as bar:
        task = bar.add_task(f"reading {cfg.input.name}", total=None)

        def hook(desc: str, done: int, total: int) -> None:
            bar.update(task, description=desc, completed=done, total=total or None)

        if cfg.backend == "dask":  # read on the cluster
            release = workflow.run(cfg, out_dir, overwrite=overwrite, utility=utility, progress=hook)
        else:
            table = workflow.read_input(cfg, hook)  # a bad input or rule: reported before the engines load
            read_s = time.perf_counter() - start
            release = workflow.run(
                cfg, out_dir, overwrite=overwrite, utility=utility, progress=hook, table=table, read_seconds=read_s
            )
    return release, time.perf_counter() - start


#: The datasets of `experiment versatile` (versapub.experiments.DATASETS; kept here so --help
#: does not import the experiments; a test asserts they agree).
EXPERIMENT_DATASETS = ("adult", "texas-like", "sparcs")

_SUMMARY_COLS = ("table", "kind", "attributes", "enforces", "rows", "groups", "achieved", "alone")


def _summary_table(rows: list[dict[str, Any]]) -> RichTable | None:
    """The tables as a terminal table, or None when it would not fit (words never split)."""
    from rich.table import Table as RichTable

    t = RichTable(title_justify="left", expand=False)
    longest = {c: max((len(w) for r in rows for w in str(r[c]).split()), default=4) for c in _SUMMARY_COLS}
    need = sum(max(longest[c], len(c)) + 3 for c in _SUMMARY_COLS)
    if not out.is_terminal or need > out.width:
        return None
    for c in _SUMMARY_COLS:
        t.add_column(c, min_width=max(longest[c], len(c)), overflow="fold")
    for r in rows:
        enf = str(r["enforces"]) + (
            f" (covers your {r['covers']})" if r["covers"] and r["covers"] != r["enforces"] else ""
        )
        t.add_row(*(enf if c == "enforces" else str(r[c]) for c in _SUMMARY_COLS))
    return t


def _guarantee_text(release: Release) -> str:
    """The release's guarantee, or each rule's own when no rule has the release's."""
    release_g = release.guarantee.to_manifest()
    own = {r: g.to_manifest() for r, g in release.rule_guarantees.items()}
    if not own or release_g in own.values():
        return release.guarantee.describe()
    shown = [
        f"{r.rhs} {spec['name']}(" + ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name") + ")"
        for r, spec in own.items()
    ]
    return "each rule its own guarantee: " + "; ".join(shown)


def _written_verdict(out_dir: Path) -> dict[str, Any]:
    """The verdict of a release just written, as its ``check.json`` records it."""
    got = json.loads((out_dir / "check.json").read_text(encoding="utf-8"))
    return {
        "verdict": got.get("verdict", "passed" if got.get("ok") else "failed"),
        "attention": list(got.get("attention") or []),
    }


def _print_summary(release: Release, out_dir: Path, seconds: float) -> None:
    from versapub.reports.summary import COLUMN_NOTES, show, summary_rows

    rows = summary_rows(release)
    out.print(f"[bold]Release {escape(str(out_dir))}[/]")
    table = _summary_table(rows)
    if table is not None:
        out.print(table)
    else:  # one block per table: readable at any width and in a log
        for r in rows:
            out.print(f"  {r['table']} ({r['kind']}): {escape(r['attributes'])}", soft_wrap=True)
            if r["enforces"] != "-":
                covers = f"  (covers your rule {r['covers']})" if r["covers"] and r["covers"] != r["enforces"] else ""
                out.print(f"      enforces {escape(r['enforces'])}{escape(covers)}", soft_wrap=True)
            out.print(
                f"      rows {r['rows']}, groups {r['groups']}, achieved {r['achieved']}, alone {r['alone']}",
                soft_wrap=True,
            )
    for note in COLUMN_NOTES.values():
        out.print(f"[dim]  {escape(note)}[/]", soft_wrap=True)
    for t in release.tables:  # what an anonymizer reports about its table (msa-decomposition: l_per, noise)
        for line in t.table.stats.get("notes", []):
            out.print(f"  {t.name}: {escape(line)}", soft_wrap=True)
    dropped = release.input.rows_dropped_missing
    out.print(
        f"{release.n_records} records, {len(release.attributes)} attributes, "
        f"{len(release.reduction.rules)} rule(s) enforced"
        + (f" ({len(release.reduction.dropped)} implied rule(s) dropped)" if release.reduction.dropped else "")
        + (f", {dropped} row(s) with missing cells dropped" if dropped else "")
        + f"; {_guarantee_text(release)}.",
        soft_wrap=True,
    )
    removed = release.columns.get("removed") or []
    if removed:
        out.print(f"Removed as identifying: {', '.join(show(c) for c in removed)}.", soft_wrap=True)
    by_others = release.columns.get("by_others") or []
    if by_others:
        out.print(
            f"Declared {release.columns.get('others')} by --others: {len(by_others)} column(s) "
            f"({', '.join(show(c) for c in by_others[:6])}{', ...' if len(by_others) > 6 else ''}).",
            soft_wrap=True,
        )
    allowed = [a for a in release.associations if a.allowed]
    for a in allowed:
        out.print(f"Allowed proxy (--allow-proxy): {escape(a.describe())}.", soft_wrap=True)
    listed = [a for a in release.associations if not a.allowed]
    if listed:
        out.print(
            "Unprotected columns associated with protected ones (lambda: knowing the protected attribute "
            "predicts the column / the column predicts it; see the report): "
            + "; ".join(f"{show(a.column)} ~ {show(a.sensitive)} {a.derived:.0%} / {a.determines:.0%}" for a in listed)
            + ".",
            soft_wrap=True,
        )
    for note in release.notes:
        out.print(f"[dim]  note: {escape(note)}.[/]", soft_wrap=True)
    verdict = _written_verdict(out_dir)
    out.print(
        f"Schema in GNF: {'yes' if release.gnf.ok else 'NO'}; verification passed: "
        f"{VERDICT_MARKUP[verdict['verdict']]}; {seconds:.2f} s."
    )
    for line in verdict["attention"]:
        err.print(f"[bold yellow]needs attention:[/] {escape(line)}.", soft_wrap=True)
    if release.decomposition_trace:
        steps = ", ".join(
            f"{s['kl']:.4f}" + (f" (+{s['added'][0]} to {s['added'][1]})" if s["added"] else " (initial)")
            for s in release.decomposition_trace
        )
        out.print(f"GD add-back KL trace: {steps}", soft_wrap=True)
    if release.utility:
        u = release.utility
        kl = "infinite" if u["kl_infinite"] else f"{u['kl_divergence']:.4f}"
        r = u["relative_error"]
        ref = u.get("kl_all_attributes_alone")
        meaning = (
            f" (0 = perfect; exp(-KL) = {u['exp_minus_kl']:.3f}: on average a record is "
            f"{u['exp_minus_kl']:.0%} as likely under the estimate as in the original"
            + (f"; publishing every attribute alone would give {ref:.4f}" if ref is not None else "")
            + ")"
            if u.get("exp_minus_kl") is not None
            else ""
        )
        out.print(
            f"Utility: KL-divergence {kl}{meaning}; relative error of {r['n_queries']} COUNT queries "
            f"(qd = {u['workload']['qd']}, p = {u['workload']['p']}): mean {r['mean']:.3f}, median {r['median']:.3f}.",
            soft_wrap=True,
        )
    for w in release.warnings:
        err.print(f"[bold yellow]warning:[/] {escape(w)}.", soft_wrap=True)
    out.print(f"Release:  {out_dir}/ (manifest.json, tables)")
    out.print(f"Report:   {out_dir / 'report.html'} (open in a browser; text version: report.md)")


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
@click.option("--no-utility", is_flag=True, help="Skip measuring KL-divergence and the default query workload.")
@click.option(
    "--backend",
    type=click.Choice(["memory", "dask"]),
    help="Where the records are processed: memory (default: this process) or dask (a Dask cluster, for tables that "
    "do not fit in memory; needs pip install 'versapub[dask]'; uad + anatomy; Parquet output).",
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
@click.option("--record-input-path", "record_input_path", is_flag=True, default=None, help=_RECORD_HELP)
@click.option(
    "--k",
    "k_floor",
    type=int,
    help="A floor: refuse the release (exit 3, nothing written) when a table's smallest published cell of "
    "non-sensitive values holds fewer than K records — the same test as check --k (config: [privacy] k).",
)
def publish(
    out_dir: Path,
    fmt: str | None,
    overwrite: bool,
    quiet: bool,
    no_utility: bool,
    backend: str | None,
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
    scratch: Path | None,
    k_floor: int | None,
    record_input_path: bool | None,
    **opts: Any,
) -> None:
    """Publish a table under privacy rules into a verified release directory.

    Either CONFIG.toml (see the README for the format) or flags:
    versapub publish --input data.csv --rule "a, b -> c" --l 3 --out release/

    A table too large for memory (a Parquet directory or CSV files) runs on Dask:
    versapub publish --input data/ --rule "a, b -> c" --l 10 --backend dask --out release/
    (--scheduler tcp://HOST:8786 for an existing cluster). Exit status: 0 published (the verdict
    line says whether it needs attention), 2 bad input or refused, 3 verification failed or
    --k not met, 5 the Dask cluster failed (nothing written in any of these).
    """
    with _errors():
        if backend == "dask" and fmt == "csv":
            raise ConfigError(
                "--backend dask writes Parquet (its large tables are directories of Parquet parts); "
                "leave out --format csv."
            )
        if scheduler and backend is None:
            backend = "dask"
        cfg = _build_config(opts, fmt).with_overrides(
            backend=backend,
            scheduler=scheduler,
            workers=workers,
            worker_memory=worker_memory,
            scratch=scratch,
            k=k_floor,
            record_input_path=record_input_path,
        )
        if cfg.backend == "dask" and fmt is None:
            cfg = replace(cfg, format="parquet")
        release, seconds = _run_publish(cfg, out_dir, overwrite, quiet, utility=not no_utility)
        if not quiet:
            _print_summary(release, out_dir, seconds)


@cli.command()
@_config_options
def rules(**opts: Any) -> None:
    """Show the rules: reduced set, dropped rules, feasibility, rule graph, and the schema of
    the decomposition asked for (GD included: its add-back runs) with why every rule holds.
    Nothing is written; infeasible rules stop the command (exit 2) before the schema."""
    from versapub import workflow
    from versapub.api import rule_feasibility
    from versapub.privacy import make_guarantee, reduce_rules, validate_rules
    from versapub.privacy.per_rule import effective, split
    from versapub.reports.summary import show

    with _errors():
        cfg = _build_config(opts)
        table = cfg.read()
        parsed, own = split(cfg.rules)
        validate_rules(parsed, table.names)
        red = reduce_rules(parsed)
        g = make_guarantee(cfg.guarantee_spec())
        per_rule = effective(red, own, g)
        out.print(
            f"[bold]Table[/]: {escape(str(cfg.input))} — {table.n_rows} records, attributes: "
            f"{escape(', '.join(show(a) for a in table.names))}",
            soft_wrap=True,
        )
        out.print(f"[bold]Guarantee[/]: {escape(g.describe())}", soft_wrap=True)
        out.print(f"\n[bold]Irreducible rules[/] ({len(red.rules)} of {len(red.given)} given):")
        for r in red.rules:
            mine = per_rule[r]
            note = "" if mine.to_manifest() == g.to_manifest() else f"  [dim](its guarantee: {mine.describe()})[/]"
            out.print(f"  {escape(str(r))}{note}", soft_wrap=True)
        if red.dropped:
            out.print("[bold]Dropped rules[/]:")
            for d in red.dropped:
                out.print(f"  {escape(str(d.rule))}  — {escape(d.reason)}", soft_wrap=True)
        out.print(
            "\n[bold]Feasibility[/] (sensitive attribute published alone, or as far as the anonymizer may "
            "generalize it):"
        )
        feas = rule_feasibility(
            table,
            cfg.rules,
            guarantee=g,
            decomposition=cfg.decomposition,
            anonymizer=cfg.anonymizer,
            decomposition_params=cfg.decomposition_params,
            anonymizer_params=cfg.anonymizer_params,
            hierarchies=cfg.anonymizer_hierarchies(table.names),
        )
        for f in feas:
            out.print(
                f"  [{'green' if f.feasible else 'red'}]{'ok ' if f.feasible else 'NO '}[/] {escape(f.message())}",
                soft_wrap=True,
            )
        if not all(f.feasible for f in feas):
            err.print("[bold red]error:[/] some rules cannot be satisfied (see above); no schema is built.")
            sys.exit(2)
        out.print("\n[bold]Rule graph[/] (edges LHS attribute -> RHS attribute):")
        edges = sorted({(q, r.rhs) for r in red.rules for q in r.lhs})
        for a, b in edges:
            out.print(f"  {escape(show(a))} -> {escape(show(b))}")
        with _progress() as bar:
            task = bar.add_task(f"decomposing ({cfg.decomposition or 'default'})", total=None)

            def hook(desc: str, done: int, total: int) -> None:
                bar.update(task, description=desc, completed=done, total=total)

            release = workflow.publish(cfg, table, hook)
        out.print(f"\n[bold]{escape(release.decomposition.upper())} schema[/]:")
        for t in release.schema.tables:
            out.print(f"  {escape(t.describe())}", soft_wrap=True)
        out.print("\nWhy every rule holds:")
        for v in release.gnf.verdicts:
            out.print(f"  - '{escape(str(v.rule))}' {escape(v.plain())}", soft_wrap=True)
        out.print(f"[dim]{escape(release.gnf.explain())}[/]", soft_wrap=True)


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


def _original(path: Path | None, release_dir: Path, missing: str | None = None) -> EncodedTable:
    """The original table, read as the manifest records (columns, header and names,
    delimiter, markers, hierarchies and levels, missing policy): from ``path`` (a data file
    or the TOML config), or by default from the manifest's input if it is unchanged.
    Differences from the release (records, values) are warned about on stderr."""
    from versapub.io.config import original_reader
    from versapub.io.read import file_sha256
    from versapub.kinds.load import load_release
    from versapub.model import original_mismatch

    manifest = read_manifest(release_dir)
    cfg = original_reader(manifest, path, missing, release_dir)
    if path is None:  # found by name: it must be the very file published
        src = cfg.input
        recorded = (manifest.get("input") or {}).get("sha256")
        if recorded and file_sha256(src) != recorded:
            raise ConfigError(
                f"{src} is not the input the release was published from (its sha256 differs from the manifest's "
                f"{recorded[:16]}…): it changed since, or another file has its name. Give the original with "
                "--original."
            )
    table = cfg.read()
    _State.mismatch = original_mismatch(load_release(release_dir), table)
    for line in _State.mismatch:
        err.print(f"[bold yellow]warning:[/] {escape(line)}", soft_wrap=True)
    return table


_RECORD_HELP = (
    "Record the input's and hierarchies' absolute paths in the release (internal use; by default "
    "only their file names: a path can itself be confidential)."
)


_MISSING_HELP = "Missing-cell policy for reading --original (default: the one the release was published with)."


_ORIGINAL_HELP = (
    "The original table: CSV/Parquet, or the TOML config it was published with (applies its "
    "hierarchies). Default: the input recorded in the manifest, if unchanged."
)


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option("--original", type=click.Path(dir_okay=False, path_type=Path), help=_ORIGINAL_HELP)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=_MISSING_HELP)
@click.option("--queries", "n_queries", default=1000, show_default=True, help="Number of random COUNT queries.")
@click.option("--qd", type=int, help="Query dimension: attributes per query (default 3, or all if fewer).")
@click.option("--p", "frac", default=0.4, show_default=True, help="Fraction of each attribute's domain per predicate.")
@click.option("--seed", default=1, show_default=True, help="Workload seed (same seed = same queries).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of text.")
def evaluate(
    release_dir: Path,
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
    sensitive attribute, 1-D and 2-D count queries on published values), timings."""
    with _errors(), _progress(as_json) as bar:
        read_manifest(release_dir)  # not a release: one paragraph, before the engines load
        from versapub.kinds.load import load_release
        from versapub.model import kl_divergence, make_workload, relative_error
        from versapub.model.utility import marginal_errors

        task = bar.add_task("loading the release", total=None)
        t0 = time.perf_counter()
        model = load_release(release_dir)
        table = _original(original, release_dir, missing)
        load_s = time.perf_counter() - t0
        bar.update(task, description="KL-divergence")
        kl = kl_divergence(model, table)
        bar.update(task, description=f"{n_queries} COUNT queries")
        qd = qd if qd is not None else min(3, len(table.names))
        w = make_workload(table, n_queries, qd, frac, seed)
        re_ = relative_error(model, table, w)
        marg = marginal_errors(model, table)
        from versapub.release.metrics import file_functional_measures, file_metrics

        metrics = file_metrics(release_dir)
        bar.update(task, description="the functional-diversity paper's measures")
        functional = file_functional_measures(release_dir, table, seed)
    result = {
        **kl.to_json(),
        "relative_error": re_.to_json(),
        "workload": {"n_queries": n_queries, "qd": qd, "p": frac, "seed": seed},
        "marginal_error": marg,
        "metrics": metrics,
        "functional": functional,
        "model_path": model.path,
        "original_mismatch": _State.mismatch,
        "timings_s": {"load": round(load_s, 4), "kl": round(kl.seconds, 4), "queries": round(re_.seconds, 4)},
    }
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    kl_text = (
        f"infinite ({kl.n_zero_probability} of {kl.n_distinct} distinct records get probability 0)"
        if math.isinf(kl.value)
        else f"{kl.value:.6f} over {kl.n_distinct} distinct records"
    )
    out.print(f"Release {release_dir}: {model.n} records, model: {model.path}")
    out.print(f"KL-divergence: {kl_text}")
    out.print(
        f"Relative error of {re_.n_queries} queries (qd = {qd}, p = {frac}, seed = {seed}): "
        f"mean {re_.mean:.4f}, median {re_.median:.4f}"
        + (f"; {re_.redrawn} empty queries were redrawn" if re_.redrawn else "")
    )
    worst = max(marg.values()) if marg else 0.0
    out.print(f"Largest per-attribute marginal error: {worst:.2e} (0 = every published marginal is exact)")
    for name, mt in metrics.items():
        norm = mt["normalized_average_class_size"]
        out.print(
            f"{name}: {mt['classes']} classes/groups, discernibility {mt['discernibility']:,}, average class size "
            f"{mt['average_class_size']:.2f}"
            + (f" ({norm:.2f} x k)" if norm is not None else "")
            + f", generalization loss {mt['generalization_loss']:.3f}, information um {mt['information']:.3f}, "
            f"suppressed records {mt['suppressed_records']}",
            soft_wrap=True,
        )
    from versapub.reports.summary import functional_text

    for name, fm in functional.items():
        out.print(escape(functional_text(name, fm)), soft_wrap=True)
    out.print(f"Timings: load {load_s:.2f} s, KL {kl.seconds:.2f} s, queries {re_.seconds:.2f} s")


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.argument("predicate")
@click.option(
    "--original",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also count on the original table (CSV/Parquet or TOML config) and show the error.",
)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=_MISSING_HELP)
@click.option("--json", "as_json", is_flag=True, help='Print {"estimate": ..., "actual": ...}.')
def query(release_dir: Path, predicate: str, original: Path | None, missing: str | None, as_json: bool) -> None:
    """Estimated COUNT(*) WHERE PREDICATE under the release's maximum-entropy model.

    PREDICATE: conditions attr = 'v', !=, <, <=, >, >= (in value order: numbers inside
    values compare as numbers), attr [NOT] IN ('v1', 'v2'), attr [NOT] BETWEEN a AND b,
    joined by AND, OR, NOT and parentheses. Example:
    "age IN ('25-34','35-44') AND (sex = 'Female' OR hours >= 40)". A value that the
    release does not publish is an error with the closest spellings.
    """
    with _errors():
        read_manifest(release_dir)  # not a release: one paragraph, before the engines load
        from versapub.kinds.load import load_release
        from versapub.model.query import count as count_query
        from versapub.model.query import count_rows, parse_query

        model = load_release(release_dir)
        q = parse_query(predicate)
        est = count_query(model, q)
        actual = None
        if original is not None:
            table = _original(original, release_dir, missing)
            actual = count_rows(
                q, {a: table.column(a).values for a in q.attributes}, {a: table.codes(a) for a in q.attributes}
            )
    if as_json:
        click.echo(json.dumps({"estimate": est, "actual": actual, "original_mismatch": _State.mismatch}))
        return
    out.print(f"estimate: {est:.2f}")
    if actual is not None:
        rel = abs(actual - est) / actual if actual else float("nan")
        out.print(f"actual:   {actual}")
        out.print(f"relative error: {rel:.4f}" if actual else "relative error: undefined (actual count is 0)")


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option("-n", "n", default=10000, show_default=True, help="Number of synthetic records.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Output CSV file.")
@click.option("--seed", default=0, show_default=True, help="Sampling seed.")
def sample(release_dir: Path, n: int, output: Path, seed: int) -> None:
    """Draw synthetic records from the release's maximum-entropy model into a CSV file."""
    with _errors():
        read_manifest(release_dir)  # not a release: one paragraph, before the engines load
        import numpy as np
        import pyarrow as pa
        import pyarrow.csv as pacsv

        from versapub.kinds.load import load_release

        if n < 1:
            raise ConfigError(f"-n must be at least 1, got {n}.")
        model = load_release(release_dir)
        draws = model.sample(n, np.random.default_rng(seed))
        arrays = [pa.array(model.domains[a].astype(str)).take(pa.array(draws[a])) for a in model.attributes]
        pacsv.write_csv(pa.Table.from_arrays(arrays, names=list(model.attributes)), output)
        out.print(f"Wrote {n} synthetic records ({len(model.attributes)} attributes) to {output}.")


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
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=_MISSING_HELP)
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
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def check(
    release_dir: Path,
    rules_cfg: Path | None,
    rule: tuple[str, ...],
    policy: Path | None,
    original: Path | None,
    missing: str | None,
    attack: str,
    guarantee: str | None,
    ell: int | None,
    k: int | None,
    as_json: bool,
) -> None:
    """Verify a release from its files alone and attack it.

    Exit status: 0 every check passed; 6 every check passed, with warnings that need attention (a table leaves
    records alone in their cell of columns that got no decision of their own: generalize, drop or protect
    columns, or require --k); 1 a check failed; 2 bad input.

    Schema (GNF per rule), guarantee in every group, consistency (sums, QIT/ST sizes, file digests, and
    with --original every marginal), intersection attacks, maximum-entropy posterior, row-order hygiene.
    Checked against your requirement (--policy, --guarantee/--l, --rule) or, without one, against the
    release's own claim (its manifest): the first line of the verdict says which.
    """
    with _errors(), _progress(as_json) as bar:
        read_manifest(release_dir)  # not a release: one paragraph, before the engines load
        from versapub.kinds.load import load_release
        from versapub.verify.check import run_check

        bar.add_task("checking the release", total=None)
        from versapub.io.policy import requirement

        req = requirement(policy, guarantee, ell, rule, rules_cfg)
        table = _original(original, release_dir, missing) if original is not None else None
        if k is not None and k < 2:
            raise ConfigError(f"--k must be at least 2 (every cell has at least one record), got {k}.")
        rep = run_check(
            release_dir,
            model=lambda: load_release(release_dir),
            original=table,
            attack=attack,
            k=k,
            requirement=req,
            pairing_max_rows=None,
        )
    if as_json:
        click.echo(json.dumps(rep.to_json(), indent=2))
    else:
        v = rep.verification
        out.print(f"Release {release_dir}: {VERDICT_MARKUP[rep.verdict]}")
        out.print(f"  {escape(rep.checked_against)}", soft_wrap=True)
        if req.rules is not None:
            out.print(f"  rules checked: the {len(req.rules)} rule(s) of your requirement (not the manifest's)")
        out.print(f"  file checks: {len(v.findings) - len(v.failures)} of {len(v.findings)} passed")
        for f in v.findings:
            if f.check == "schema":
                out.print(f"  {'ok  ' if f.ok else 'FAIL'} {escape(f.message)}")
        for a in rep.attacks:
            risk = f"{len(a.disclosures)} record(s) at risk"
            out.print(
                f"  {'ok  ' if a.ok else 'FAIL'} {a.method} attack: {a.targets} targets, {risk} ({a.seconds:.2f} s)"
            )
            for d in a.disclosures[:20]:
                out.print(f"         {escape(d.describe())}")
        for p in rep.posterior:
            out.print(f"  {'ok  ' if p['ok'] else 'FAIL'} posterior {escape(p['message'])}")
        for ka in rep.kind_attacks:  # e.g. sa-groups: the adversary with background knowledge
            out.print(
                f"  {'ok  ' if ka['ok'] else 'FAIL'} {ka['kind']} attack ({escape(ka['targets'])}): "
                f"{escape(ka['message'])}",
                soft_wrap=True,
            )
            for r in ka["rows"]:
                out.print(
                    f"         knowing {r['known']} other sensitive value(s): {r['below']:,} target(s) "
                    f"({r['share']:.1%}) below l = {r['l']} for {escape(r['attribute'])}; fewest candidates "
                    f"{r['min_candidates']}",
                    soft_wrap=True,
                )
        for i in rep.identity:
            mark = "FAIL" if not i["ok"] else ("WARN" if i.get("attention") else ("ok  " if k is not None else "info"))
            out.print(f"  {mark} identity risk of {escape(str(i['table']))}: {escape(i['message'])}", soft_wrap=True)
        for c in rep.collection:  # --k: the tables as a collection of marginals (k-link, k-combinatorial)
            where = f" {escape(c['file'])}" if c["file"] else ""
            out.print(
                f"  {'ok  ' if c['ok'] else 'FAIL'} {escape(c['check'])}{where}: {escape(c['message'])}", soft_wrap=True
            )
        for f in v.findings:  # a collection of marginals: its own checks
            if f.check in ("k-link", "k-combinatorial", "maxent-diversity", "collection"):
                where = f" {escape(f.file)}" if f.file else ""
                out.print(
                    f"  {'ok  ' if f.ok else 'FAIL'} {escape(f.check)}{where}: {escape(f.message)}", soft_wrap=True
                )
        bad_h = [f for f in rep.hygiene if not f.ok]
        out.print(f"  row-order hygiene: {'ok' if not bad_h else f'{len(bad_h)} file(s) out of order'}")
        for f in [*v.failures, *bad_h]:
            if f.check != "schema":
                out.print(f"  FAIL [{f.check}] {escape(f.file or '')} {escape(f.message)}")
    if not rep.ok:
        sys.exit(1)
    if rep.verdict == "attention":
        sys.exit(ATTENTION_EXIT)


@cli.command()
@click.argument("release_dir", metavar="RELEASE", type=click.Path(file_okay=False, path_type=Path))
@click.option("--original", type=click.Path(dir_okay=False, path_type=Path), help=_ORIGINAL_HELP)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=_MISSING_HELP)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="Output HTML file.",
)
def report(release_dir: Path, original: Path | None, missing: str | None, output: Path) -> None:
    """Write a self-contained HTML report (rules, attribute graph, tables, utility, attacks)."""
    with _errors(), _progress() as bar:
        read_manifest(release_dir)  # not a release: one paragraph, before the engines load
        from versapub.kinds.load import load_release
        from versapub.model import utility_summary
        from versapub.reports.html import html_report
        from versapub.verify.check import run_check

        bar.add_task("building the report", total=None)
        model = load_release(release_dir)
        table = _original(original, release_dir, missing) if original is not None else None
        rep = run_check(release_dir, model=model, original=table)
        utility = utility_summary(model, table) if table is not None else None
        output.write_text(html_report(release_dir, rep, utility, title=release_dir.name), encoding="utf-8")
    out.print(f"Wrote {output} ({'all checks passed' if rep.ok else 'CHECKS FAILED'}).")


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
@click.option("--mask", is_flag=True, help="Mask codes from the right, one character per level (71000 -> 7100*).")
@click.option("--groups-of", "group_size", type=int, metavar="K", help="Group K consecutive ordered values per level.")
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
    mask: bool,
    group_size: int | None,
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
            )
            if on
        ]
        if len(chosen) != 1:
            raise ConfigError("Give exactly one of --intervals, --mask, --groups-of or --level (repeated per level).")
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
            h = hb.intervals(column, values, widths, start)
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
        out_file.write_text(hb.to_arx(h), encoding="utf-8")
    out.print(f"Wrote {out_file}: {len(h.levels)} values, {h.height} levels (0 = the values, {h.height - 1} = *).")


@hierarchy.command("check")
@click.argument("data", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--hierarchy", "spec", required=True, metavar="ATTR=FILE", help="The column and its hierarchy file.")
@click.option("--delimiter", help="The data file's delimiter (default: , or \\t for .tsv).")
@click.option("--hierarchy-delimiter", default=";", show_default=True, help="The hierarchy file's delimiter.")
def hierarchy_check(data: Path, spec: str, delimiter: str | None, hierarchy_delimiter: str) -> None:
    """Check a hierarchy against a column: every value a leaf, one parent per node, every
    row as high as the others; prints the nodes per level."""
    from versapub.data.hierarchy import Hierarchy

    with _errors():
        attr, eq, file = spec.partition("=")
        if not eq or not file:
            raise ConfigError(f"--hierarchy {spec!r} must look like ATTR=FILE.")
        h = Hierarchy.read(
            Path(file.rpartition(":")[0] if file.rpartition(":")[2].isdigit() else file), attr, hierarchy_delimiter
        )
        col = _column(data, attr, delimiter)
        h.require_covers(col)
        h.require_uniform()
        nodes = [len({row[k] for row in h.levels}) for k in range(h.height)]
        unused = len(h.levels) - col.cardinality
    per_level = ", ".join(f"{n} node(s) at level {k}" for k, n in enumerate(nodes))
    extra = f"; {unused} leaf/leaves the column does not hold" if unused else ""
    out.print(
        f"{file} fits column {attr!r} of {data.name}: every one of its {col.cardinality} values is a leaf; "
        f"{h.height} levels with {per_level}{extra}.",
        soft_wrap=True,
    )


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
    from versapub.privacy.eligible import ranges

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
            json.dumps(
                [{"level": r.level, "m": r.m, "max_l": r.max_l, "min_c": r.min_c, "min_tau": r.min_tau} for r in found],
                indent=2,
                default=str,
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


def _marginals_options(f: F) -> F:
    opts = [
        click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path)),
        click.option(
            "--input",
            "input_",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Input CSV (optionally .gz) or Parquet file (overrides the config's [input] path).",
        ),
        click.option("--delimiter", help="CSV delimiter, any text (default ','; '\\t' for a tab)."),
        click.option("--column", "columns", multiple=True, help="Publish only these columns (repeatable)."),
        click.option("--missing", type=click.Choice(["error", "value", "drop"]), help="Missing-cell policy."),
        click.option(
            "--hierarchy",
            "hierarchies",
            multiple=True,
            metavar="ATTR=FILE",
            help="An ARX hierarchy for ATTR (repeatable): its levels are the levels of ATTR@LEVEL.",
        ),
        click.option(
            "--hierarchies",
            "hierarchy_dir",
            type=click.Path(path_type=Path),
            metavar="DIR",
            help="Every hierarchy of a folder (ARX's naming: *_hierarchy_ATTR.csv or ATTR.csv).",
        ),
        click.option("--sensitive", metavar="COLUMN", help="The sensitive column (published exactly)."),
        click.option("--k", "k", type=int, help="k of k-link and k-combinatorial anonymity (>= 2)."),
        click.option("--l", "ell", type=int, help="Short for --diversity l-diversity:l=L (frequency l-diversity)."),
        click.option(
            "--diversity",
            metavar="NAME:PARAM=V",
            help="What the maximum-entropy estimate must satisfy: "
            "l-diversity:l= (frequency), recursive-cl:c=,l=, entropy-l-diversity:l= (default "
            "l-diversity:l=2).",
        ),
        click.option(
            "--base",
            metavar="incognito|'a@1, b, ...'",
            help="The base table: 'incognito' (the minimal "
            "l-diverse, k-anonymous full-domain generalization with the lowest KL-divergence) or a "
            "marginal over every column.",
        ),
        click.option(
            "--marginal",
            "marginal",
            multiple=True,
            metavar="'age@2, race'",
            help="A marginal: attributes, each at a level of its hierarchy (ATTR@LEVEL, 0 = exact; the "
            "sensitive column exact); repeatable.",
        ),
        click.option(
            "--inject", type=int, help="Then add up to N marginals that keep every check (utility injection)."
        ),
        click.option(
            "--search",
            type=click.Choice(["greedy", "stepwise"]),
            help="Injection: greedy one-attribute "
            "marginals (the paper's Figure 8, default) or stepwise over multi-attribute marginals.",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _marginals_config(opts: dict[str, Any], fmt: str | None = None) -> PublishConfig:
    """The configuration of a marginals job: CONFIG (with [marginals]) and the flags."""
    from versapub.io.config import MarginalsSpec, PublishConfig, load_config

    config = opts["config"]
    base = load_config(config) if config is not None else None
    if base is None:
        if opts["input_"] is None:
            raise ConfigError(
                "Give a configuration file with a [marginals] section, or --input DATA with "
                "--sensitive COLUMN, --k K and --base or --marginal."
            )
        base = PublishConfig(input=opts["input_"], rules=())
    spec = base.marginals
    if opts["diversity"] is not None and opts["ell"] is not None:
        raise ConfigError("Give the diversity either with --diversity or with --l, not both.")
    div: dict[str, Any] | None = None
    if opts["diversity"] is not None:
        from versapub.privacy.guarantee import parse_guarantee

        div = parse_guarantee(opts["diversity"])
    elif opts["ell"] is not None:
        div = {"name": "l-diversity", "l": opts["ell"]}
    sensitive = opts["sensitive"] or (spec.sensitive if spec else None)
    k = opts["k"] if opts["k"] is not None else (spec.k if spec else None)
    if sensitive is None or k is None:
        raise ConfigError("A marginals job needs --sensitive COLUMN and --k K (or a [marginals] section).")
    spec = MarginalsSpec(
        sensitive=sensitive,
        k=k,
        diversity=div or (spec.diversity if spec else {"name": "l-diversity", "l": 2}),
        base=opts["base"] if opts["base"] is not None else (spec.base if spec else None),
        marginals=tuple(opts["marginal"]) or (spec.marginals if spec else ()),
        inject=opts["inject"] if opts["inject"] is not None else (spec.inject if spec else 0),
        search=opts["search"] or (spec.search if spec else "greedy"),
    )
    return replace(
        base.with_overrides(
            input=opts["input_"],
            delimiter=_unescape(opts["delimiter"]),
            columns=tuple(opts["columns"]) or None,
            missing=opts["missing"],
            hierarchies=tuple(_parse_hierarchy(h) for h in opts["hierarchies"]) or None,
            hierarchy_dir=opts["hierarchy_dir"],
            format=fmt,
        ),
        marginals=spec,
    )


def _print_collection(release: Release, out_dir: Path | None, seconds: float) -> None:
    section = release.marginals or {}
    out.print(f"[bold]Collection of anonymized marginals{' ' + escape(str(out_dir)) if out_dir else ''}[/]")
    levels = {t["name"]: t for t in section.get("tables", [])}
    for t in release.tables:
        info = levels.get(t.name, {})
        written = ", ".join(f"{a}@{lv}" for a, lv in (info.get("levels") or {}).items())
        st = t.table.stats
        out.print(
            f"  {t.name} ({info.get('role', 'given')}): {escape(written)} — {st.get('rows')} rows, "
            f"{st.get('groups')} cells of non-sensitive values, smallest {st.get('achieved')}",
            soft_wrap=True,
        )
    for c in (section.get("checks") or {}).get("checks", []):
        out.print(f"  {'ok  ' if c['ok'] else 'FAIL'} {escape(c['message'])}", soft_wrap=True)
    for st in section.get("search") or []:
        what = f"+ {st['added']}" if st["added"] else "start"
        out.print(f"  KL {st['kl']:.4f}  {escape(what)}", soft_wrap=True)
    kl = section.get("kl_closed_form")
    if kl is not None:
        out.print(f"KL-divergence of the maximum-entropy estimate: {kl:.4f} (closed form).")
    if release.utility:
        u = release.utility
        r = u["relative_error"]
        out.print(
            f"Utility: KL-divergence {u['kl_divergence']:.4f} ({escape(str(u.get('model_path')))}); relative "
            f"error of {r['n_queries']} COUNT queries: mean {r['mean']:.3f}, median {r['median']:.3f}.",
            soft_wrap=True,
        )
    out.print(f"{release.n_records} records; verification passed; {seconds:.2f} s.")
    if out_dir is not None:
        out.print(f"Release:  {out_dir}/ (manifest.json, tables)")
        out.print(f"Report:   {out_dir / 'report.html'} (open in a browser; text version: report.md)")


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
@click.option("--record-input-path", "record_input_path", is_flag=True, default=None, help=_RECORD_HELP)
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
@click.option("--original", type=click.Path(dir_okay=False, path_type=Path), help=_ORIGINAL_HELP)
@click.option("--missing", type=click.Choice(["error", "value", "drop"]), help=_MISSING_HELP)
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
    from versapub.io.config import hierarchies_in

    with _errors():
        read_manifest(release_dir)
        if max_marginals < 0:
            raise ConfigError(f"--max-marginals must be >= 0, got {max_marginals}.")
        table = _original(original, release_dir, missing)
        hier = {h.attribute: h.load() for h in hierarchies_in(hierarchy_dir)} if hierarchy_dir else None
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
    from versapub.marginals.collection import Collection
    from versapub.marginals.space import Space
    from versapub.marginals.spec import Marginal, Requirement, parse_marginals

    with _errors():
        cfg = _marginals_config(opts)
        spec = cfg.marginals
        assert spec is not None
        table = cfg.read()
        hier = cfg.anonymizer_hierarchies(table.names)
        req = Requirement.build(spec.sensitive, spec.k, spec.diversity)
        space = Space.of_table(table, spec.sensitive, hier)
        ms = list(parse_marginals(spec.marginals))
        if spec.base is not None:
            if spec.base.strip().lower() == "incognito":
                from versapub.marginals.base_table import best_table

                ms.insert(0, best_table(table, space, req, hier))
            else:
                ms.insert(0, Marginal.parse(spec.base))
        coll = Collection(space, tuple(ms))
        verdict = coll.check(req, relaxed=relaxed)
        kl = coll.kl() if coll.decomposable() else None
    if as_json:
        click.echo(
            json.dumps({**verdict.to_json(), "kl": kl, "marginals": [m.label for m in coll.marginals]}, indent=2)
        )
    else:
        for n, m in zip(coll.names, coll.marginals, strict=True):
            out.print(f"  {n}: {escape(m.label)}")
        for o in verdict.outcomes:
            out.print(f"  {'ok  ' if o.ok else 'FAIL'} {escape(o.message)}", soft_wrap=True)
        out.print(
            f"KL-divergence of the maximum-entropy estimate: {kl:.4f}"
            if kl is not None
            else "Not decomposable: the KL-divergence needs the release model (IPF)."
        )
    if not verdict.ok:
        sys.exit(1)


def _with_bar(run: Callable[[Callable[[str, int, int], None]], T]) -> T:
    """``run(hook)`` under a progress bar that ``hook(description, done, total)`` moves."""
    with _progress() as bar:
        task = bar.add_task("starting", total=None)

        def hook(desc: str, done: int, total: int) -> None:
            bar.update(task, description=desc, completed=done, total=total)

        return run(hook)


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
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments"),
    show_default=True,
    help="The experiments' directory (as given to `experiment versatile`).",
)
@click.option(
    "--page",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/results.md"),
    show_default=True,
    help="The Markdown page to write (figures go to results/ beside it).",
)
@click.option(
    "--notes",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Markdown to include after the introduction (e.g. the discussion of the differences).",
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
    for f in found:
        out.print(escape(f"[{f.verdict}] {f.figure}: {f.paper} — ours: {f.ours}"), soft_wrap=True)


@experiment.command("msa-page")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments/msa"),
    show_default=True,
    help="The directory given to `experiment msa`.",
)
@click.option(
    "--page",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/results-msa.md"),
    show_default=True,
    help="The Markdown page (figures go to results-msa/ beside it).",
)
@click.option(
    "--notes",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Markdown to include after the introduction (e.g. why findings differ).",
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
    for f in found:
        out.print(escape(f"[{f.verdict}] {f.figure}: {f.paper} — ours: {f.ours}"), soft_wrap=True)


@experiment.command("functional-page")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments/functional"),
    show_default=True,
    help="The directory holding one results directory per dataset (each given to `experiment functional --out`).",
)
@click.option(
    "--page",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/results-functional.md"),
    show_default=True,
    help="The Markdown page (figures go to results-functional/ beside it).",
)
@click.option(
    "--notes",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Markdown to include after the introduction (e.g. why findings differ).",
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
    for f in found:
        out.print(escape(f"[{f.verdict}] {f.figure}: {f.paper} — ours: {f.ours}"), soft_wrap=True)


@experiment.command("marginals-page")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("experiments/marginals"),
    show_default=True,
    help="The results directory of `experiment marginals`.",
)
@click.option(
    "--page",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/results-marginals.md"),
    show_default=True,
    help="The Markdown page (figures go to results-marginals/ beside it).",
)
@click.option(
    "--notes",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Markdown to include after the introduction.",
)
def experiment_marginals_page(out_dir: Path, page: Path, notes: Path | None) -> None:
    """Write the anonymized-marginals results page: the paper's claims next to the run's."""
    from versapub.experiments.marginals_page import write_page

    with _errors():
        if not (out_dir / "results.json").is_file():
            raise ConfigError(f"{out_dir} holds no results.json; run `versapub experiment marginals --out {out_dir}`.")
        found = write_page(out_dir, page, _notes(notes))
    _page_written(page, found)


def main() -> None:
    cli(prog_name="versapub")


if __name__ == "__main__":
    main()
