"""Command-line options into a :class:`~versapub.io.config.PublishConfig` (flags over a TOML file)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from versapub.cli.app import (
    F,
)
from versapub.errors import ConfigError

if TYPE_CHECKING:
    from versapub.io.config import HierarchySpec, PublishConfig
    from versapub.privacy.screens.roles import ColumnRoles


def _job_options() -> list[Callable[[F], F]]:
    """The configuration file, the input and the rules with their guarantee."""
    return [
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
            "(distance=equal|hierarchical|auto), functional:tau=,lambda= (functional (tau, lambda)-diversity), "
            "beta-likeness:beta= (enhanced=true), delta-disclosure:delta=, k-map:k=,fraction= (estimated from the "
            "sampling fraction; significance=0.01; without fraction: counted in --population), "
            "delta-presence:delta_min=,delta_max= (against --population).",
        ),
        click.option("--l", "ell", type=int, help="Short for --guarantee l-diversity:l=L."),
    ]


def _reading_options() -> list[Callable[[F], F]]:
    """How the input is read: its format, missing cells, columns and hierarchies."""
    return [
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
            "--date-format",
            "date_formats",
            multiple=True,
            metavar="COL=FORMAT",
            help="COL holds dates written in FORMAT (strftime codes, e.g. %d/%m/%Y for day-first 14/03/2021); "
            "they are read in it and published in ISO 8601 (2021-03-14), ordered in time (repeatable). Without "
            "it, ISO, US (03/14/2021) and dotted (14.03.2021) dates are recognized by their form.",
        ),
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
    ]


def _decomposition_options() -> list[Callable[[F], F]]:
    """The decomposition and its parameters."""
    return [
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
    ]


def _role_options() -> list[Callable[[F], F]]:
    """Column roles, sensitive columns and their anonymizers' per-column settings."""
    return [
        click.option(
            "--identifying",
            multiple=True,
            metavar="COLUMN",
            help="A direct identifier: removed before publishing, listed in the manifest and report (repeatable; "
            "a,b lists).",
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
            "--insensitive",
            multiple=True,
            metavar="COLUMN",
            help="Declare a column neither identifying nor sensitive (repeatable; a,b lists).",
        ),
        click.option(
            "--allow-unique",
            "allow_unique",
            multiple=True,
            metavar="COLUMN",
            help="Publish a near-unique column (most records hold a value no other has) as it is (a,b lists).",
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
            help="Publish a column that strongly reveals a protected attribute as it is (recorded in the manifest; "
            "a,b lists).",
        ),
        click.option(
            "--household",
            metavar="COLUMN",
            help="The column of each person's household id ([columns] household): removed as an identifier; the "
            "summary and manifest add household figures (uniqueness on the household structure, household risk) "
            "computed on the input's exactly published key variables.",
        ),
    ]


def _anonymizer_options() -> list[Callable[[F], F]]:
    """The anonymizer and the seed."""
    return [
        click.option(
            "--anonymizer",
            metavar="NAME[:P=V,...]",
            help="Anonymizer: anatomy (default; anatomy:grouping=wrap-around), multi-sa (the default of the "
            "multi-sa decomposition), mondrian (mondrian:suppression=0.02 suppresses up to 2% of records), or "
            "incognito (incognito:suppression=0.02,utility=kl|discernibility|loss); mondrian and incognito "
            "generalize, with the hierarchies of --hierarchy/--hierarchies; "
            "msa-decomposition (Ye et al.: SA-groups for several sensitive attributes, one l per --sensitive "
            "COLUMN:L; msa-decomposition:above_l_per=true allows l above l_per); sequential-sweep (functional "
            "(tau, lambda)-diversity, generalizing sensitive values up their --hierarchy where needed; "
            "--max-sensitive-level caps how far); one-d-l-diversity (Ghinita et al.'s 1-D l-diversity).",
        ),
        click.option(
            "--seed",
            type=int,
            help="Random seed of the anonymizers (default 0). Treatments that draw (noise, PRAM, swapping) draw "
            "secretly without it; with it they are reproducible and the summary and manifest warn (for tests).",
        ),
    ]


def _config_options(f: F) -> F:
    """Every option of a publishing command, in --help's order."""
    opts = [*_job_options(), *_reading_options(), *_decomposition_options(), *_role_options(), *_anonymizer_options()]
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


def _date_formats(specs: tuple[str, ...]) -> dict[str, str]:
    """``--date-format COL=FORMAT`` options as a mapping, each format checked."""
    from versapub.data.dates import require_format

    out = {}
    for spec in specs:
        col, eq, fmt = spec.partition("=")
        if not eq or not col.strip() or not fmt.strip():
            raise ConfigError(f"--date-format {spec!r} must look like COLUMN=FORMAT, e.g. admitted=%d/%m/%Y.")
        out[col.strip()] = require_format(col.strip(), fmt.strip())
    return out


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
    from versapub.privacy.screens.roles import ColumnRoles

    def listed(key: str, flag: str) -> tuple[str, ...]:  # every role flag takes comma lists, as --qi does
        return tuple(c for item in opts.get(key) or () for c in (_csv_list(item, flag) or ()))

    flags = {
        "identifying": listed("identifying", "--identifying"),
        "quasi-identifying": tuple(opts["quasi"]),
        "sensitive": tuple(opts["sensitive"]),
        "insensitive": listed("insensitive", "--insensitive"),
    }
    allow_unique, allow_proxy = listed("allow_unique", "--allow-unique"), listed("allow_proxy", "--allow-proxy")
    household = opts.get("household")
    if not any(flags.values()) and not allow_unique and not opts.get("others") and not allow_proxy and not household:
        return None
    merged = {r: (*cols, *flags[r]) for r, cols in base.by_role().items()}  # a replaced id stays removed
    return ColumnRoles.from_mapping(
        merged,
        (*base.allow_unique, *allow_unique),
        opts.get("others") or base.others,
        (*base.allow_proxy, *allow_proxy),
        household or base.household,
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
    from versapub.privacy.guarantees.guarantee import parse_guarantee

    spec = parse_guarantee(text)
    return {"guarantee": spec.pop("name"), "guarantee_params": spec}


def _build_config(opts: dict[str, Any], fmt: str | None = None, need_rules: bool = True) -> PublishConfig:
    """The configuration from CONFIG (if given) overridden by the command-line flags
    (``need_rules=False``: a differentially private release, which needs none)."""
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
        if input_ is None or (need_rules and not (rules or opts["quasi"])):
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
        date_formats={**base.date_formats, **_date_formats(opts["date_formats"])} if opts["date_formats"] else None,
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
    from versapub.io.config import PublishConfig, load_config
    from versapub.marginals.spec import MarginalsSpec

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
        from versapub.privacy.guarantees.guarantee import parse_guarantee

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
