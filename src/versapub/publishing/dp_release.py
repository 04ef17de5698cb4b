"""A differentially private release written in the release format (issue 52): the
mechanism's noisy marginals as ``noisy`` tables, the fitted model's clique marginals as
``fitted`` tables (:mod:`versapub.kinds.noisy`, :mod:`versapub.kinds.fitted`), and the
manifest's ``mechanism`` section with the budget ledger; written to a hidden directory,
checked by the independent verifier from the written files, then moved into place
(``docs/release-format.md``, "Differentially private releases").

Nothing computed from the data without noise is published: ``n_records`` is the model's
estimate of the record count (the noisy marginals' minimum-variance total), and the input's
provenance keeps its name and reading options, not its row count or digest (each a function
of the data without noise)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from versapub._version import __version__
from versapub.data.table import EncodedTable
from versapub.errors import VerificationError
from versapub.formats import FORMAT
from versapub.mechanisms.mst import Synthesis
from versapub.mechanisms.precounted import Precounted

Progress = Callable[[str, int, int], None]

#: What the check of a release measured on the Dask backend reads (its manifest's ``backend``).
CHECKED_ON_DASK = (
    "from the release's files alone (the ledger, every table's scale, domains and totals, the model's "
    "consistency, the attacks on records drawn from the tables); the noise test against the input's exact "
    "counts reads the input in memory (versapub check RELEASE --original DATA) and was not run"
)


def _silent(description: str, done: int, total: int) -> None:
    del description, done, total


def _cells(attributes: Sequence[str], domains: Mapping[str, Sequence[str]], counts: np.ndarray) -> pa.Table:
    """Every cell of ``attributes``' domains with ``counts`` (C order over the domains), rows
    in text order (as every published table: no row order carries information)."""
    grid = list(itertools.product(*(domains[a] for a in attributes)))
    flat = np.asarray(counts).ravel()
    order = sorted(range(len(grid)), key=lambda i: grid[i])
    cols = {a: pa.array([grid[r][i] for r in order], type=pa.string()) for i, a in enumerate(attributes)}
    cols["count"] = pa.array(flat[order])
    return pa.table(cols)


def release_tables(
    synth: Synthesis, domains: Mapping[str, Sequence[str]]
) -> tuple[int, list[tuple[dict[str, Any], pa.Table]]]:
    """``n_records`` and each table's manifest entry and contents: the noisy marginals, then
    the fitted model's cliques scaled to sum to ``n_records``."""
    n = max(1, round(synth.model.total))
    out: list[tuple[dict[str, Any], pa.Table]] = []
    width = len(str(max(len(synth.measured), len(synth.model.cliques))))
    merged = synth.compression.merged
    for i, m in enumerate(synth.measured, 1):
        name = f"noisy_{i:0{width}d}"
        own = dict(zip(m.attributes, m.domains, strict=True))  # a compressed domain names its merged value
        entry = {
            "name": name,
            "attributes": list(m.attributes),
            "kind": "noisy",
            "files": {"data": f"{name}.csv"},
            "sigma": m.entry.sigma,
            "rho": m.entry.rho,
            "domains": {a: list(v) for a, v in own.items()},
        }
        labels = {
            a: {"label": merged[a][0], "values": list(merged[a][1])}
            for a in m.attributes
            if a in merged and merged[a][0] in own[a]
        }
        if labels:
            entry["merged"] = labels
        out.append((entry, _cells(m.attributes, own, m.counts.astype(np.int64))))
    for i, (clique, marginal) in enumerate(zip(synth.model.cliques, synth.model.marginals, strict=True), 1):
        name = f"model_{i:0{width}d}"
        p = synth.compression.spread(clique, np.clip(marginal, 0.0, None))
        entry = {
            "name": name,
            "attributes": list(clique),
            "kind": "fitted",
            "files": {"data": f"{name}.csv"},
            "domains": {a: list(domains[a]) for a in clique},
        }
        # rounded to 1e-9 records: no subnormal number in the file (readers differ on them)
        out.append((entry, _cells(clique, domains, np.round(p * (n / p.sum()), 9))))
    return n, out


def manifest(
    synth: Synthesis,
    n: int,
    entries: Sequence[dict[str, Any]],
    attributes: Sequence[str],
    mechanism: Mapping[str, Any],
    source: Mapping[str, Any],
    domains: Mapping[str, Sequence[str]],
    rules: Sequence[tuple[Sequence[str], str]] = (),
) -> dict[str, Any]:
    """The release's manifest (without digests); ``domains``: every column's declared values;
    ``rules``: the job's (the checks attack each, under the release's guarantee)."""
    ledger = synth.ledger.to_json()
    return {
        "format": FORMAT,
        "n_records": n,
        "attributes": list(attributes),
        "guarantee": {"name": "differential-privacy", "epsilon": ledger["epsilon"], "delta": ledger["delta"]},
        "rules": [{"lhs": list(q), "rhs": s} for q, s in rules],
        "tables": list(entries),
        "hierarchies": {},
        "mechanism": {
            **dict(mechanism),
            "domains": {a: list(v) for a, v in domains.items()},
            "selected": [list(p) for p in synth.selected],
            # what was done before measuring, and its cost: nothing read from the data without noise
            "preprocessing": [
                {"step": "domains", "source": "declared (public knowledge)", "rho": 0.0},
                *(
                    [
                        {
                            "step": "compression",
                            "source": "the noisy one-way marginals (post-processing)",
                            "rho": 0.0,
                            "merged": {a: list(v) for a, (_, v) in synth.compression.merged.items()},
                        }
                    ]
                    if synth.compression.merged
                    else []
                ),
            ],
            "ledger": ledger,
            "model": {
                "estimator": "Private-PGM mirror descent (McKenna, Sheldon & Miklau 2019)",
                "cliques": [list(c) for c in synth.model.cliques],
                "iterations": synth.model.iterations,
                "loss": synth.model.loss,
                "total": synth.model.total,
            },
        },
        "tool": {"name": "versapub", "version": __version__},
        "input": dict(source),
    }


def write_dp_release(
    synth: Synthesis,
    table: EncodedTable | Precounted,
    domains: Mapping[str, Sequence[str]],
    out: str | Path,
    *,
    mechanism: Mapping[str, Any],
    source: Mapping[str, Any],
    rules: Sequence[tuple[Sequence[str], str]] = (),
    overwrite: bool = False,
    protect: Iterable[str | Path | None] = (),
    progress: Progress = _silent,
    backend: Mapping[str, Any] | None = None,
) -> Any:
    """Write ``synth`` as a release in ``out``, verified from its own files against
    ``table`` first (nothing is written when a check fails); returns the check's report.
    ``backend``: the Dask backend's block (``table`` then holds the exact marginals counted
    on the cluster, no records: the release is checked from its files alone, and the
    manifest says so)."""
    from versapub.io import release_writer as rw
    from versapub.reports.html import html_report
    from versapub.verify.check import run_check
    from versapub.verify.requirement import Requirement

    dest = Path(out)
    n, tables = release_tables(synth, domains)
    with rw.staging(dest, overwrite, protect) as tmp:
        progress("writing the noisy marginals and the fitted model", 0, 0)
        for entry, t in tables:
            pacsv.write_csv(t, tmp / entry["files"]["data"], pacsv.WriteOptions(quoting_style="needed"))
        m = manifest(synth, n, [e for e, _ in tables], table.names, mechanism, source, domains, rules)
        if backend is not None:
            m["backend"] = {**backend, "checked": CHECKED_ON_DASK}
        m["digests"] = rw.digests(tmp, [e["files"]["data"] for e, _ in tables])
        rw.write_json(tmp / "manifest.json", m)
        progress("verifying the written files", 0, 0)
        job = Requirement(m["guarantee"], tuple(m["rules"]), "the mechanism's budget", None, None, "highest", None)
        original = table if isinstance(table, EncodedTable) else None
        check = run_check(tmp, original=original, requirement=job).noise_free_withheld()  # issue 66
        report = check.verification
        if not report.ok:
            raise VerificationError(
                f"The release failed verification, so nothing was written to {dest}: {report.explain()}"
            )
        rw.write_json(tmp / "verification.json", report.to_json())
        rw.write_json(tmp / "check.json", check.to_json())
        (tmp / "report.html").write_text(html_report(tmp, check, None, title=dest.name), encoding="utf-8")
        rw.commit(tmp, dest, overwrite, protect)
    return check


def resolve_domains(cfg: Any, table: EncodedTable) -> dict[str, tuple[str, ...]]:
    """Every column's declared domain (``cfg.domains``), else its hierarchy's leaves (a
    hierarchy is the steward's own declaration); a column with neither is refused."""
    from versapub.errors import ConfigError

    declared = dict(cfg.domains)
    extra = [a for a in declared if a not in table.names]
    if extra:  # issue 71: a domain for no column (a typo) is refused, not ignored
        raise ConfigError(
            f"A domain is declared for {', '.join(map(repr, extra))}, which the input does not hold; its columns: "
            f"{', '.join(map(repr, table.names))}. Correct the name or leave the domain out."
        )
    hierarchies = cfg.anonymizer_hierarchies(table.names)
    out: dict[str, tuple[str, ...]] = {}
    for a in table.names:
        if a in declared:
            out[a] = tuple(declared[a])
        elif a in hierarchies:
            out[a] = tuple(dict.fromkeys(str(row[0]) for row in hierarchies[a].levels))
    missing = [a for a in table.names if a not in out]
    if missing:
        raise ConfigError(
            f"Declare the domain of {', '.join(map(repr, missing))} for a differentially private release: the "
            "values each column may take, from public knowledge (--domain COLUMN=FILE with one value per line, "
            "[privacy.domains] in the configuration, or a hierarchy whose leaves are the values). Reading them "
            "from the data would reveal which values occur."
        )
    return out


def refuse_syntactic(cfg: Any) -> None:
    """A configuration asking for a differentially private release and for what only a
    syntactic one reads is refused, naming what would be ignored."""
    from versapub.errors import ConfigError

    given = {
        "[privacy] l": cfg.l,
        "[privacy] k": cfg.k,
        "[privacy] max_risk": cfg.max_risk,
        "[privacy] suppression": cfg.suppression or None,
        "[privacy] max_singling_out": cfg.max_singling_out,
        "[[treatment]]": cfg.treatments or None,
        "[publish] anonymizer": cfg.anonymizer,
        "[publish] decomposition": cfg.decomposition,
        "[input] population": cfg.population,
    }
    named = [k for k, v in given.items() if v is not None]
    if named:
        raise ConfigError(
            f"{', '.join(named)} belong(s) to a syntactic release; a differentially private one ([privacy] "
            "mechanism) protects by its budget alone. Leave them out, or publish without the mechanism."
        )


def mechanism_of(spec: Any) -> Any:
    """The configured mechanism plug-in (:data:`versapub.mechanisms.MECHANISMS`)."""
    from versapub.mechanisms import parse_mechanism

    return parse_mechanism(spec)


def _rules_of(cfg: Any, names: Sequence[str]) -> list[tuple[tuple[str, ...], str]]:
    """The job's rules as (Q, S) pairs, each checked against the columns ``names``."""
    if not cfg.rules:
        return []
    from versapub.privacy.rules import parse_rules, validate_rules

    parsed = parse_rules([r if isinstance(r, str) else str(r.get("rule")) for r in cfg.rules])
    validate_rules(parsed, list(names))
    return [(tuple(r.lhs), r.rhs) for r in parsed]


def run_dp(
    cfg: Any,
    out: str | Path,
    *,
    overwrite: bool = False,
    progress: Progress = _silent,
) -> tuple[Synthesis, Any]:
    """``versapub publish --mechanism dp:...``: read, measure, fit, write verified; returns the
    mechanism's output and the check's report."""
    from versapub.io.safety import check_destination

    mech = mechanism_of(cfg.mechanism)
    refuse_syntactic(cfg)
    check_destination(Path(out), overwrite, [*cfg.read_files()])
    progress(f"reading {cfg.input.name}", 0, 0)
    # columns declared identifying are removed first, as a syntactic release removes them (issue 66):
    # no domain to declare for them, nothing of them measured
    identifying = tuple(getattr(cfg.roles, "identifying", ()))
    backend: dict[str, Any] | None = None
    table: Any
    if cfg.backend == "dask":  # the records stay on the cluster: the marginals the mechanism reads come here

        def plan(on_cluster: Any) -> tuple[dict[str, tuple[str, ...]], Sequence[tuple[str, ...]]]:
            doms = resolve_domains(cfg, on_cluster)
            return doms, mech.marginals_read(list(on_cluster.names), doms, _rules_of(cfg, on_cluster.names))

        from versapub.publishing.dp_dask import counted_on_dask

        counted = counted_on_dask(cfg, Path(out), identifying, plan, progress)
        table, removed, backend = counted.counts, list(counted.removed), counted.backend
        domains = {a: counted.counts.domains[a] for a in table.names}
    else:
        table = cfg.read()
        removed = [c for c in identifying if c in table.names]
        if removed:
            table = table.select([c for c in table.names if c not in removed])
        domains = resolve_domains(cfg, table)
    rules = _rules_of(cfg, table.names)
    synth = mech.run(table, domains, rules, progress)
    source = {
        "path": cfg.recorded(cfg.input),
        "columns": list(table.names),
        **({"removed_identifying": removed} if removed else {}),
        **{k: v for k, v in cfg.input_settings().items() if k in ("delimiter", "format", "header", "names")},
    }
    check = write_dp_release(
        synth,
        table,
        domains,
        out,
        mechanism={"name": mech.name, "parameters": mech.params()},
        source=source,
        rules=rules,
        overwrite=overwrite,
        protect=[*cfg.read_files()],
        progress=progress,
        backend=backend,
    )
    return synth, check
