"""One publishing workflow for every front end: read → publish → utility → write.

The command line, the Python API (:func:`run`) and any later front end call this module,
so they produce the same release from the same configuration: the same tables, byte for
byte, and the same manifest (provenance and utility included) apart from timings.

>>> from versapub import PublishConfig, workflow                       # doctest: +SKIP
>>> cfg = PublishConfig(input=Path("data.csv"), rules=("age, sex -> disease",), l=3)
>>> release = workflow.run(cfg, "release/")                            # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from versapub.errors import MissingCellsError, RuleError, VersapubError, refusal
from versapub.io.config import PublishConfig

if TYPE_CHECKING:
    from versapub.data.hierarchy import Hierarchy
    from versapub.data.table import EncodedTable
    from versapub.model.maxent import ReleaseModel
    from versapub.privacy.guarantees.population import Population
    from versapub.release.value import InputInfo, Release
    from versapub.verify.check import CheckReport

#: ``progress(description, completed, total)``; ``total`` 0 means the size is unknown.
Progress = Callable[[str, int, int], None]


def _silent(description: str, completed: int, total: int) -> None:
    del description, completed, total


def read_input(cfg: PublishConfig, progress: Progress = _silent) -> EncodedTable:
    """Read the configured input and validate the rules against it — before any engine is
    loaded, so a bad input or rule is reported at once."""
    from versapub.privacy.per_rule import split
    from versapub.privacy.rules import validate_rules

    progress(f"reading {cfg.input.name}", 0, 0)
    table = cfg.read()
    validate_rules(split(cfg.rules)[0], table.names, none_ok=bool(cfg.roles.quasi_identifying))
    return table


def read_for_publish(
    cfg: PublishConfig, progress: Progress = _silent
) -> tuple[EncodedTable, list[tuple[str, VersapubError]]]:
    """:func:`read_input` for a job that reports every problem at once: missing cells under
    the ``error`` policy do not stop the other checks (the input is read again with them as
    values) but are returned, to be reported with the rest before anything is anonymized."""
    from versapub.privacy.per_rule import split
    from versapub.privacy.rules import validate_rules

    problems: list[tuple[str, VersapubError]] = []
    progress(f"reading {cfg.input.name}", 0, 0)
    try:
        table = cfg.read()
    except MissingCellsError as exc:
        problems.append(("missing cells", exc))
        table = replace(cfg, missing="value").read()
    try:
        validate_rules(split(cfg.rules)[0], table.names, none_ok=bool(cfg.roles.quasi_identifying))
    except RuleError as exc:
        raise refusal([*problems, ("rules", exc)]) from None
    return table, problems


def publish(
    cfg: PublishConfig,
    table: EncodedTable | None = None,
    progress: Progress = _silent,
    read_seconds: float | None = None,
    problems: Sequence[tuple[str, VersapubError]] = (),
) -> Release:
    """Publish as configured (in memory): the input's provenance recorded, nothing written.
    ``table``: the input already read with ``cfg`` (``read_seconds``: how long that took);
    ``problems``: what reading it found (:func:`read_for_publish`), reported with the rest."""
    from versapub.api import publish as api_publish
    from versapub.privacy import make_guarantee

    t0 = time.perf_counter()
    if table is None:
        table, found = read_for_publish(cfg, progress)
        problems = [*problems, *found]
    read_s = time.perf_counter() - t0 if read_seconds is None else read_seconds
    info = _input_info(cfg, table)
    population = read_population(cfg, progress)
    from versapub.publishing.request import Method, Privacy

    release = api_publish(
        table,
        cfg.rules,
        guarantee=make_guarantee(cfg.guarantee_spec()) if cfg.guarantee_given() else None,
        seed=cfg.seed,
        columns=cfg.roles,
        treatments=cfg.treatments,
        privacy=Privacy(
            k=cfg.k,
            max_risk=cfg.max_risk,
            risk_measure=cfg.risk_measure,
            keys=None if cfg.keys is None else tuple(cfg.keys),
            suppression=cfg.suppression,
            suppression_mode=cfg.suppression_mode,
            importance=tuple(cfg.importance),
            population=population,
            unit=cfg.unit,
        ),
        method=Method(
            decomposition=cfg.decomposition,
            anonymizer=cfg.anonymizer,
            decomposition_params=cfg.decomposition_params,
            anonymizer_params=cfg.anonymizer_params,
            plugin_defaults=cfg.plugin_defaults(),
            hierarchies=cfg.anonymizer_hierarchies(table.names),
            detach_others=cfg.detach_others,
        ),
        input_info=info,
        progress=progress,
        known_problems=problems,
    )
    release.timings["read"] = read_s
    from versapub.io.read import marker_notes

    # how the job was read: the configuration, the hierarchy folder, markers of missing values
    release.notes[:0] = [
        *cfg.notes,
        *cfg.hierarchy_notes(table.names),
        *cfg.date_notes(),
        *marker_notes(table, cfg.na_values),
    ]
    return release


def read_population(cfg: PublishConfig, progress: Progress = _silent) -> Population | None:
    """The configured population (``--population``), read exactly as the input is (same
    delimiter, missing values, dates and hierarchy levels; every column), or ``None``."""
    if cfg.population is None:
        return None
    from versapub.formats import file_sha256
    from versapub.privacy.guarantees.population import Population

    progress(f"reading the population {cfg.population.name}", 0, 0)
    table = replace(cfg, input=cfg.population, columns=None).read()
    return Population(table, cfg.recorded(cfg.population), table.sha256 or file_sha256(cfg.population))


def _input_info(cfg: PublishConfig, table: EncodedTable) -> InputInfo:
    from versapub.formats import file_sha256
    from versapub.release.value import InputInfo

    return InputInfo(
        path=cfg.recorded(cfg.input),  # the file name unless --record-input-path
        sha256=table.sha256 or file_sha256(cfg.input),  # CSV: hashed while it was read
        rows_read=table.n_rows + table.n_dropped,
        rows_dropped_missing=table.n_dropped,
        local_files=cfg.read_files(),
        **cfg.input_settings(),
    )


def publish_marginals(
    cfg: PublishConfig,
    table: EncodedTable | None = None,
    progress: Progress = _silent,
    read_seconds: float | None = None,
) -> Release:
    """A collection of anonymized marginals as configured (``cfg.marginals``): built,
    checked (refused when it fails a check, naming the marginal and cell), enlarged by the
    configured injection, as an in-memory release."""
    from versapub.errors import ConfigError
    from versapub.marginals.job import build
    from versapub.marginals.release import collection_release

    if cfg.marginals is None:
        raise ConfigError(f"{cfg.source}: no [marginals] section (sensitive, k, l, base, marginals).")
    t0 = time.perf_counter()
    if table is None:
        progress(f"reading {cfg.input.name}", 0, 0)
        table = cfg.read()
    read_s = time.perf_counter() - t0 if read_seconds is None else read_seconds
    t1 = time.perf_counter()
    job = build(table, cfg.marginals, cfg.anonymizer_hierarchies(table.names), progress)
    return collection_release(
        table,
        job.collection,
        job.requirement,
        job.verdict,
        _input_info(cfg, table),
        roles=job.roles,
        hierarchies=cfg.hierarchy_files(table.names),
        hierarchy_sha256=cfg.hierarchy_digests(table.names),
        search=job.search_json(),
        timings={"read": read_s, "marginals": time.perf_counter() - t1},
    )


def run_marginals(
    cfg: PublishConfig,
    out: str | Path,
    *,
    overwrite: bool = False,
    utility: bool = True,
    progress: Progress = _silent,
    table: EncodedTable | None = None,
    read_seconds: float | None = None,
) -> Release:
    """``versapub marginals publish``: build, measure, write verified."""
    release = publish_marginals(cfg, table, progress, read_seconds)
    if utility:
        release = with_utility(release, progress)
    write(release, cfg, out, overwrite=overwrite, progress=progress)
    return release


def inject(
    release_dir: str | Path,
    out: str | Path,
    max_marginals: int,
    *,
    original: EncodedTable,
    search: str = "greedy",
    hierarchies: Mapping[str, Hierarchy] | None = None,
    overwrite: bool = False,
    utility: bool = True,
    progress: Progress = _silent,
) -> Release:
    """``versapub marginals inject``: reopen a released collection over its ``original``
    table, add up to ``max_marginals`` marginals by ``search`` (each keeping every check),
    and write the enlarged release, verified."""
    from versapub.data.hierarchy import Hierarchy as _H
    from versapub.errors import ConfigError
    from versapub.formats import read_manifest
    from versapub.marginals import job as jobs
    from versapub.marginals.release import collection_release
    from versapub.release.value import InputInfo

    d = Path(release_dir)
    manifest = read_manifest(d)
    section = manifest.get("marginals")
    if not isinstance(section, dict):
        raise ConfigError(f"{d} is not a collection of anonymized marginals (its manifest has no 'marginals').")
    if hierarchies is None:
        from versapub.io.locate import locate

        hierarchies = {}
        digests = section.get("hierarchy_sha256") or {}
        for a, f in (section.get("hierarchies") or {}).items():
            got = locate(str(f), d, digests.get(a))
            if got.path is None:
                raise ConfigError(
                    got.explain(str(f), f"the hierarchy of {a!r}") + ". Give the hierarchies with --hierarchies DIR."
                )
            found = got.path
            try:
                hierarchies[str(a)] = _H.read(found, str(a))
            except OSError as exc:
                raise ConfigError(f"Cannot read the hierarchy {found} ({exc}); give them with --hierarchies.") from None
    t1 = time.perf_counter()
    job = jobs.reopen(original, section, hierarchies)
    start = len(job.collection.marginals)
    coll, steps = jobs.search(job.collection, job.requirement, max_marginals, search, progress)
    verdict = coll.check(job.requirement)
    roles = {**job.roles, **{coll.names[i]: "injected" for i in range(start, len(coll.marginals))}}
    inp = manifest.get("input") or {}
    info = InputInfo(
        path=inp.get("path"),
        sha256=inp.get("sha256"),
        rows_read=int(inp.get("rows_read") or 0),
        rows_dropped_missing=int(inp.get("rows_dropped_missing") or 0),
        missing_policy=str(inp.get("missing_policy") or "error"),
        hierarchies=dict(inp.get("hierarchies") or {}),
        delimiter=inp.get("delimiter"),
        columns=inp.get("columns"),
        format=inp.get("format"),
        header=bool(inp.get("header", True)),
        names=inp.get("names"),
        na_values=list(inp.get("na_values") or []),
        strip=bool(inp.get("strip", False)),
        date_formats=dict(inp.get("date_formats") or {}),
    )
    files = section.get("hierarchies") or {}
    release = collection_release(
        original,
        coll,
        job.requirement,
        verdict,
        info,
        roles=roles,
        hierarchies=files,
        hierarchy_sha256=section.get("hierarchy_sha256") or {},
        search=[st.to_json() for st in steps],
        timings={"marginals": time.perf_counter() - t1},
    )
    if utility:
        release = with_utility(release, progress)
    first = next(iter(manifest.entries()[0].files.values()), "x.csv")
    fmt = "parquet" if str(first).endswith(".parquet") else "csv"
    progress("writing and verifying the release", 0, 0)
    write_release(release, out, format=fmt, overwrite=overwrite, protect=[d])
    return release


#: What ``utility`` may be: ``"basic"`` (default; ``True``), ``"full"`` or ``"none"`` (``False``).
UTILITY_LEVELS = ("basic", "full", "none")


def utility_level(utility: bool | str) -> str:
    """``utility`` as one of :data:`UTILITY_LEVELS` (a bool: basic or none)."""
    if isinstance(utility, bool):
        return "basic" if utility else "none"
    if utility not in UTILITY_LEVELS:
        from versapub.errors import ConfigError

        raise ConfigError(f"utility must be one of {', '.join(UTILITY_LEVELS)}, got {utility!r}.")
    return utility


def with_utility(
    release: Release, progress: Progress = _silent, model: ReleaseModel | None = None, *, full: bool = False
) -> Release:
    """The release with its utility measured against its own input (KL-divergence, the
    default workload, marginal errors, class metrics, excessive protection), as stored in
    the manifest; ``full``: also the functional paper's ID3 classification and count
    queries on published values (otherwise ``versapub evaluate`` computes them, and the
    manifest lists them as not computed); ``model``: the release's model when already
    built (one model per publish: :func:`run` hands the same one to the posterior check)."""
    from versapub.kinds.build import model_from_release
    from versapub.kinds.metrics import functional_measures
    from versapub.model import utility_summary
    from versapub.release.metrics import release_metrics

    extra = "; ID3 and count queries for generalized tables" if full else ""
    progress(f"measuring utility (KL-divergence, 1,000 COUNT queries{extra})", 0, 0)
    t = time.perf_counter()
    out = replace(
        release,
        utility={
            **utility_summary(model or model_from_release(release), release.source),
            "metrics": release_metrics(release),
            "functional": functional_measures(release, full=full),
            "level": "full" if full else "basic",
        },
    )
    out.timings["utility"] = time.perf_counter() - t
    return out


def _refuse_failed(
    check: CheckReport, release: Release, dest: Path, asked: tuple[int | None, float | None, str, float | None]
) -> None:
    """Nothing is written when a check fails: a release its own verifier rejects (exit 3, a
    bug), or one that does not meet a ceiling measured on it (exit 2, with the ways out)."""
    from versapub.errors import RequirementError, VerificationError

    k, max_risk, risk_measure, max_singling_out = asked
    if not check.verification.ok:
        raise VerificationError(
            f"The release failed verification, so nothing was written to {dest}: {check.verification.explain()}"
        )
    if check.ok or _only_allowed(check, release):
        return
    measured = _measured_only(check, risk_measure)
    if measured:
        raise RequirementError(
            f"The release does not meet what you required of it, so nothing was written to {dest}: "
            + "; ".join(measured[:10])
            + _measured_hint(max_singling_out, max_risk if risk_measure == "average" else None)
        )
    raise VerificationError(
        f"The release failed its privacy checks, so nothing was written to {dest}: "
        + "; ".join(check.failures()[:10])
        + _floors_hint(k, max_risk, risk_measure)
    )


def _measured_only(check: CheckReport, risk_measure: str) -> list[str]:
    """The failures of a check when every one is a requirement measured on the release
    rather than built into it — a table's singling-out risk above ``--max-singling-out``, its
    average prosecutor risk above ``--max-risk`` — (empty: some other check failed)."""
    adv = check.adversary or {}
    singled = [t for t in adv.get("tables", []) if not t["ok"]]
    risky = [i for i in check.identity if not i["ok"]]
    rules_ok = all(r["ok"] for r in adv.get("rules", []))
    rest = replace(
        check,
        adversary={**adv, "tables": [t for t in adv.get("tables", []) if t["ok"]], "ok": rules_ok} if adv else None,
        identity=[i for i in check.identity if i["ok"]] if risk_measure == "average" else check.identity,
    )
    if not rest.ok or not (singled or (risky and risk_measure == "average")):
        return []
    out = [f"[singling out {t['table']}] {t['message']}" for t in singled]
    return out + ([f"[identity {i['table']}] {i['message']}" for i in risky] if risk_measure == "average" else [])


def _measured_hint(max_singling_out: float | None, max_average_risk: float | None) -> str:
    """The ways out of a measured requirement the release does not meet."""
    out = []
    if max_singling_out is not None:
        out.append(
            f" (--max-singling-out {max_singling_out:g} is a ceiling on the share of records the attacks single out "
            "of what is published: require a smallest cell with --k, generalize a column with a hierarchy, drop or "
            "protect columns, or raise it)"
        )
    if max_average_risk is not None:
        out.append(
            f" (--max-risk {max_average_risk:g} is a ceiling on every table's average prosecutor risk, cells / "
            "records: require a smallest cell with --k, generalize a column with a hierarchy, drop columns, or "
            "raise it)"
        )
    return "".join(out)


def _floors_hint(k: int | None, max_risk: float | None, risk_measure: str) -> str:
    """What a failed ``--k`` floor or ``--max-risk`` ceiling means, and the ways out."""
    floor = (
        f" (--k {k} is a floor on every table's smallest published cell: generalize a column with a "
        "hierarchy, drop or protect columns, or lower it)"
        if k
        else ""
    )
    ceiling = (
        f" (--max-risk {max_risk:g} is a ceiling on every table's {risk_measure} prosecutor risk: "
        "generalize a column with a hierarchy, drop or protect columns, or raise it)"
        if max_risk
        else ""
    )
    return floor + ceiling


def write_release(
    release: Release,
    out: str | Path,
    *,
    format: str = "csv",
    overwrite: bool = False,
    protect: Iterable[str | Path | None] = (),
    utility: Callable[[], dict[str, Any]] | None = None,
    progress: Progress = _silent,
    k: int | None = None,
    max_risk: float | None = None,
    risk_measure: str = "highest",
    max_singling_out: float | None = None,
) -> CheckReport:
    """Write ``release`` to directory ``out`` (CSV or Parquet tables), verified first.

    The files are written to a hidden temporary directory; the independent verifier
    re-reads them and checks them against the input, the attacks and the posterior check
    run on them; only if every check passes are ``verification.json``, ``check.json``,
    ``report.md`` and ``report.html`` added and the directory moved into place.  Raises
    :class:`ReleaseError` if ``out`` exists (unless ``overwrite``, and even then unless it
    is an earlier versapub release holding only its own files) or is or contains the input,
    a hierarchy file or a path in ``protect``; :class:`VerificationError` if any check
    fails.  In every such case nothing is written and nothing is deleted.  ``utility``:
    measured once the tables are written (a release whose records are on a cluster: out of
    core), before the checks.  ``k``: a floor — the release is refused when a table's
    smallest published cell of non-sensitive values holds fewer than ``k`` records (and the
    collection checks of ``check --k`` fail); ``max_risk``: a ceiling — refused when a
    table's prosecutor risk (``risk_measure``: ``highest`` = 1 / its smallest cell, or
    ``average`` = cells / records) is above it.  The checks read the written files only
    (never the model the publisher built).  Returns the checks' report
    (``verdict``: passed, or passed with warnings that need attention).
    """
    from versapub.errors import ConfigError
    from versapub.io import release_writer as rw
    from versapub.reports.html import html_report
    from versapub.reports.summary import markdown_report
    from versapub.verify.check import run_check
    from versapub.verify.requirement import Requirement

    dest = Path(out)
    recorded = [release.input.path, *(h.get("file") for h in release.input.hierarchies.values())]
    inputs = [*release.input.local_files, *(f for f in recorded if f and Path(f).is_absolute()), *protect]
    with rw.staging(dest, overwrite, inputs) as tmp:
        files = rw.write_files(release, tmp, format)
        if utility is not None:
            t = time.perf_counter()
            release = replace(release, utility=utility())
            release.timings["utility"] = time.perf_counter() - t
            rw.rewrite_manifest(release, tmp, files)
        t1 = time.perf_counter()
        progress("verifying the written files and checking the release", 0, 0)
        floors = (f" and --k {k}" if k else "") + (f" and --max-risk {max_risk:g}" if max_risk else "")
        try:
            job = Requirement(
                release.guarantee.to_manifest(),
                tuple(release.rule_json(r) for r in release.reduction.rules),
                "the publishing job's rules and guarantee" + floors,
                k,
                max_risk,
                risk_measure,
                max_singling_out,
            )
        except ValueError as exc:
            raise ConfigError(f"--max-risk/--risk-measure: {exc}.") from None
        check = run_check(
            tmp,
            original=release.checked_against,
            requirement=job,
            population=release.population.table if release.population is not None else None,
        )
        report = check.verification
        _refuse_failed(check, release, dest, (k, max_risk, risk_measure, max_singling_out))
        timings = dict(release.timings)
        timings["verify"] = check.seconds.get("verify", 0.0)
        timings["check"] = time.perf_counter() - t1 - timings["verify"]
        rw.write_json(tmp / "verification.json", {**report.to_json(), "seconds": round(timings["verify"], 4)})
        rw.write_json(tmp / "check.json", check.to_json())
        html = _or_note(lambda: html_report(tmp, check, release.utility, title=dest.name), "report.html")
        (tmp / "report.html").write_text(html, encoding="utf-8")
        shown = replace(release, timings=timings)
        md = _or_note(lambda: markdown_report(shown, report, files, (check.verdict, check.attention)), "report.md")
        (tmp / "report.md").write_text(md, encoding="utf-8")
        rw.commit(tmp, dest, overwrite, inputs)
    return check


def _only_allowed(check: CheckReport, release: Release) -> bool:
    """Whether every failure is an inference breach of a protected attribute the steward
    allowed a proxy of (``--allow-proxy``: a set of columns or a column, recorded in the
    manifest): such a release is written as the steward decided, and ``check`` fails it."""
    allowed = {p.sensitive for p in release.proxy_sets if p.allowed} | {
        a.sensitive for a in release.associations if a.allowed
    }
    adv = check.adversary or {}
    breaches = [r for r in adv.get("rules", []) if not r["ok"]]
    if not breaches or not all(r["rule"]["rhs"] in allowed for r in breaches):
        return False
    others = {**adv, "rules": [r for r in adv.get("rules", []) if r["ok"]]}
    others["ok"] = all(t["ok"] for t in adv.get("tables", []))
    return replace(check, adversary=others).ok


def _or_note(make: Callable[[], str], name: str) -> str:
    """A report's text, or — when writing it fails — a page that says so: a verified release
    is never lost to its report (issue 44; ``versapub report`` writes it again)."""
    try:
        return make()
    except VersapubError:
        raise
    except Exception as exc:
        return (
            f"{name} could not be written ({type(exc).__name__}: {exc}). The release is complete and verified: "
            "check.json and verification.json hold its checks; `versapub report RELEASE` writes the report again.\n"
        )


def run_dask(
    cfg: PublishConfig, out: str | Path, *, overwrite: bool = False, utility: bool = True, progress: Progress = _silent
) -> Release:
    """The whole job on a Dask cluster (``cfg.backend == "dask"``): connect (or start a
    LocalCluster), read the input into a scratch directory, publish (UAD and Anatomy from
    counts and ranks), write the tables as Parquet parts, measure the utility out of core,
    verify from the files, commit; the scratch directory is removed whatever happens."""

    import duckdb

    from versapub.api import plugins_for, require_out_of_core
    from versapub.errors import ClusterError, ReleaseError, VersapubError
    from versapub.io import workdirs
    from versapub.io.safety import check_destination
    from versapub.kinds import product_parts
    from versapub.model.outofcore import utility_summary as outofcore_utility
    from versapub.privacy.per_rule import split
    from versapub.privacy.rules import validate_rules
    from versapub.scale import require_dask
    from versapub.scale.cluster import Runner, cluster_failure, connect
    from versapub.scale.read import read_dask

    require_dask()
    dec, anon = plugins_for(cfg.decomposition, cfg.anonymizer, cfg.decomposition_params, cfg.anonymizer_params)
    require_out_of_core(
        dec, anon, cfg.rules, cfg.roles, cfg.anonymizer
    )  # before the cluster starts and any record is read
    dest = Path(out).resolve()
    protect = [cfg.input, cfg.config_path, *(h.file for h in cfg.hierarchies)]
    if dest.exists():
        check_destination(dest, overwrite, protect)  # before any work
    scratch = workdirs.dask_scratch(dest, cfg.scratch)
    progress("starting the Dask cluster" if not cfg.scheduler else f"connecting to {cfg.scheduler}", 0, 0)
    with connect(cfg.scheduler, cfg.workers, cfg.worker_memory) as client:
        runner = Runner(client, progress)
        progress(f"Dask dashboard (tasks, memory, progress): {client.dashboard_link}", 0, 0)
        try:
            t0 = time.perf_counter()
            workdirs.claim(scratch)
            table = read_dask(cfg.input, runner, scratch, cfg.read_options())
            validate_rules(split(cfg.rules)[0], table.names, none_ok=bool(cfg.roles.quasi_identifying))
            release = publish(cfg, table, progress, time.perf_counter() - t0)  # type: ignore[arg-type]
            release = replace(
                release,
                backend={
                    "name": "dask",
                    "scheduler": cfg.scheduler or "LocalCluster",
                    "workers": runner.n_workers,
                    "partitions": table.n_parts,
                },
            )
            measure = (
                (lambda: outofcore_utility(release, parts_of=product_parts, progress=progress)) if utility else None
            )
            progress("writing, measuring and verifying the release", 0, 0)
            write_release(
                release,
                dest,
                format="parquet",
                overwrite=overwrite,
                protect=protect,
                utility=measure,
                progress=progress,
                k=cfg.k,
                max_risk=cfg.max_risk,
                risk_measure=cfg.risk_measure,
            )
        except Exception as exc:
            if isinstance(exc, duckdb.OutOfMemoryException):
                raise ReleaseError(
                    f"DuckDB ran out of memory in this process while measuring or verifying the release "
                    f"({str(exc).splitlines()[0][:200]}). Nothing was written to {dest} and the intermediate files "
                    "were removed. Run on a machine with more memory, or publish with --no-utility."
                ) from exc
            if isinstance(exc, VersapubError) or not cluster_failure(exc):
                raise
            raise ClusterError(
                f"The Dask cluster failed while publishing ({type(exc).__name__}: {str(exc)[:300]}). Nothing was "
                f"written to {dest} and the intermediate files were removed. A worker may have died (out of memory: "
                "give workers more memory, or the input more partitions) or the scheduler gone away; run again "
                "once the cluster is healthy."
            ) from exc
        finally:
            workdirs.remove(scratch)
    if utility:  # measured out of core while writing: the summary shows it as in memory
        from versapub.formats import read_manifest

        release = replace(release, utility=read_manifest(dest).get("utility"))
    return release


def write(
    release: Release,
    cfg: PublishConfig,
    out: str | Path,
    *,
    overwrite: bool = False,
    progress: Progress = _silent,
) -> None:
    """Write, verified from its own files, never over a user's file (the input, hierarchy
    and configuration files are protected)."""
    progress("writing and verifying the release", 0, 0)
    write_release(
        release,
        out,
        format=cfg.format,
        overwrite=overwrite,
        protect=[cfg.config_path],
        progress=progress,
        k=cfg.k,
        max_risk=cfg.max_risk,
        risk_measure=cfg.risk_measure,
        max_singling_out=cfg.max_singling_out,
    )


def run(
    cfg: PublishConfig,
    out: str | Path,
    *,
    overwrite: bool = False,
    utility: bool | str = True,
    progress: Progress = _silent,
    table: EncodedTable | None = None,
    read_seconds: float | None = None,
    problems: Sequence[tuple[str, VersapubError]] = (),
) -> Release:
    """The whole job: read (unless ``table`` is given, already read with ``cfg``; ``problems``:
    what reading it found, :func:`read_for_publish`),
    publish, measure utility (``utility``: ``"basic"``/``True`` the default measures,
    ``"full"`` also ID3 and count queries on generalized tables, ``"none"``/``False``
    nothing) and write the verified release (on a Dask cluster with ``cfg.backend ==
    "dask"``: :func:`run_dask`)."""
    level = utility_level(utility)
    if cfg.backend == "dask":
        return run_dask(cfg, out, overwrite=overwrite, utility=level != "none", progress=progress)
    from versapub.io.safety import check_destination

    check_destination(Path(out), overwrite, [*cfg.read_files()])  # a refused --out costs no work
    release = publish(cfg, table, progress, read_seconds, problems)
    if level != "none":
        release, _ = measured(release, progress, full=level == "full")
    write(release, cfg, out, overwrite=overwrite, progress=progress)
    return release


def measured(
    release: Release, progress: Progress = _silent, *, full: bool = False
) -> tuple[Release, ReleaseModel | None]:
    """The release with its utility and the model it was measured on; a step after the
    release is computed never turns a good release into an error: when the utility cannot
    be computed, the release is published without it and a note says why (issue 44)."""
    from versapub.kinds.build import model_from_release

    try:
        model = model_from_release(release)
        return with_utility(release, progress, model, full=full), model
    except VersapubError:  # a user's error or a Cancel: as it is
        raise
    except Exception as exc:  # reported in the release, never a lost release
        note = (
            f"utility not measured: computing it failed ({type(exc).__name__}: {exc}); the release itself is "
            "complete and verified — versapub evaluate measures it from the files"
        )
        return replace(release, utility=None, notes=[*release.notes, note]), None
