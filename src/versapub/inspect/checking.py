"""``check`` and ``report``: verify a release from its files alone, attack it, report it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from versapub.errors import ConfigError
from versapub.formats import read_manifest

if TYPE_CHECKING:
    from versapub.data import EncodedTable
    from versapub.inspect.original import Original
    from versapub.model.maxent import ReleaseModel
    from versapub.verify.check import CheckReport


def _original(
    d: Path, original: str | Path | Original | None, missing: str | None, model: ReleaseModel | None = None
) -> Original | None:
    from versapub.inspect.original import Original, original_table

    if original is None or isinstance(original, Original):
        return original
    return original_table(d, original, missing, model, households=True)


def _table(
    d: Path, original: str | Path | Original | None, missing: str | None, model: ReleaseModel | None = None
) -> EncodedTable | None:
    """The original as read — before the release's treatments and recoding, which the
    verifier applies itself from the manifest (applying them here too would treat it twice)."""
    got = _original(d, original, missing, model)
    return got.read if got is not None else None


def check(
    release: str | Path,
    original: str | Path | Original | None = None,
    *,
    missing: str | None = None,
    policy: str | Path | None = None,
    guarantee: str | None = None,
    l: int | None = None,
    rules: Sequence[str] = (),
    rules_file: str | Path | None = None,
    attack: str = "auto",
    k: int | None = None,
    max_risk: float | None = None,
    risk_measure: str = "highest",
    population: str | Path | None = None,
    max_singling_out: float | None = None,
    attacks: int | None = None,
    progress: Callable[[str], None] | None = None,
    keys: Sequence[str] | None = None,
    sampling_fraction: float | None = None,
) -> CheckReport:
    """Every check of ``versapub check`` (its ``--json`` is ``.to_json()``): the schema (GNF
    per rule), the guarantee in every group, consistency (sums, sizes, digests, and with
    ``original`` every marginal), intersection attacks, the maximum-entropy posterior, the
    kinds' own attacks, identity risk, row-order hygiene; with ``k`` also the smallest
    published cell and k-link/k-combinatorial anonymity, counted on the key variables ``keys``
    (default: the ones the release names, else every published cell column).

    Checked against the steward's requirement — ``policy`` (a TOML file with ``[privacy]``),
    ``guarantee`` (``"l-diversity:l=3"``) or ``l``, ``rules`` (each optionally
    ``"q -> s | guarantee"``) or ``rules_file`` (a config's rules) — or, without one,
    against the release's own claim (its manifest); ``.checked_against`` says which.
    ``original``: a data file, a TOML config or an :class:`~versapub.inspect.Original`.
    ``attack``: ``auto``, ``exact``, ``scalable`` or ``both``.  ``population``: the file of
    the population the records were drawn from (delta-presence and k-map without a sampling
    fraction are checked against it; read as the manifest records the input).  With
    ``original``, the attacks on everything published (inference per rule, singling out and
    linkability per table) run on ``attacks`` original records (default 500);
    ``max_singling_out`` fails a table whose singling-out risk is above it.
    ``sampling_fraction``: the share of the population the original was; each table's
    identity finding then adds the records estimated unique in the population
    (:mod:`versapub.privacy.risk.population`)."""
    d = Path(release)
    read_manifest(d)  # not a release: one paragraph, before the engines load
    from versapub.io.policy import requirement
    from versapub.verify.check import run_check

    req = requirement(
        Path(policy) if policy else None,
        guarantee,
        l,
        tuple(rules),
        Path(rules_file) if rules_file else None,
    )
    if k is not None and k < 2:
        raise ConfigError(f"--k must be at least 2 (every cell has at least one record), got {k}.")
    if max_risk is None and risk_measure != "highest":
        raise ConfigError("--risk-measure says which risk --max-risk bounds; give --max-risk R too.")
    if max_risk is not None:
        from dataclasses import replace

        from versapub.io.config import check_max_risk

        check_max_risk(max_risk, risk_measure, "--max-risk")
        shown = f"{req.source}, " if req.source else ""
        req = replace(req, max_risk=max_risk, risk_measure=risk_measure, source=f"{shown}--max-risk {max_risk:g}")
    if max_singling_out is not None:
        from dataclasses import replace as _replace

        if not 0 <= max_singling_out <= 1:
            raise ConfigError(f"--max-singling-out is a share in [0, 1], got {max_singling_out!r}.")
        if original is None:
            raise ConfigError("--max-singling-out measures the attacks against the original: give --original FILE.")
        req = _replace(req, max_singling_out=max_singling_out)
    _check_fraction(sampling_fraction)
    if attacks is not None and attacks < 10:
        raise ConfigError(f"--attacks is the number of original records attacked (at least 10), got {attacks}.")
    table = _table(d, original, missing)
    from versapub.inspect.original import population_table
    from versapub.verify.adversary.adversary_check import N_ATTACKS

    rep = run_check(
        d,
        original=table,
        attack=attack,
        k=k,
        requirement=req,
        pairing_max_rows=None,
        population=population_table(d, population, missing) if population is not None else None,
        n_attacks=attacks or N_ATTACKS,
        progress=progress,
        keys=None if keys is None else list(keys),
    )
    if sampling_fraction is not None:
        from versapub.inspect.population_figures import with_population

        rep.identity = with_population(d, rep.identity, sampling_fraction)
    return rep


def _check_fraction(sampling_fraction: float | None) -> None:
    if sampling_fraction is not None and (isinstance(sampling_fraction, bool) or not 0 < sampling_fraction <= 1):
        raise ConfigError(f"--sampling-fraction is a share of the population in (0, 1], got {sampling_fraction!r}.")


@dataclass(frozen=True)
class Report:
    """A release's HTML report and the checks it shows."""

    html: str
    check: CheckReport


def report(
    release: str | Path,
    original: str | Path | Original | None = None,
    missing: str | None = None,
    *,
    sampling_fraction: float | None = None,
) -> Report:
    """The self-contained HTML report of a release (rules, attribute graph, tables, utility
    against ``original`` when given, attacks) with the checks it shows; ``sampling_fraction``:
    the share of the population the original was (the risk section adds each table's
    population-uniqueness estimate)."""
    d = Path(release)
    read_manifest(d)
    _check_fraction(sampling_fraction)
    from versapub.kinds.load import load_release
    from versapub.model import utility_summary
    from versapub.reports.html import html_report
    from versapub.verify.check import run_check

    model = load_release(d)
    got = _original(d, original, missing, model)
    rep = run_check(d, original=got.read if got is not None else None)
    if sampling_fraction is not None:
        from versapub.inspect.population_figures import with_population

        rep.identity = with_population(d, rep.identity, sampling_fraction)
    utility = utility_summary(model, got.table) if got is not None else None  # the input as published
    return Report(html_report(d, rep, utility, title=d.name), rep)


def attacks(
    release: str | Path,
    original: str | Path | Original,
    *,
    missing: str | None = None,
    n_attacks: int | None = None,
    max_singling_out: float | None = None,
) -> dict[str, Any]:
    """The attacks on everything published (``check --original``'s ``adversary`` section, on
    its own): per rule the inference figures, per table singling out and linkability
    (:mod:`versapub.verify.adversary.adversary_check`); as ``check.json`` records them."""
    d = Path(release)
    read_manifest(d)
    from versapub.io.policy import requirement
    from versapub.verify.adversary.adversary_check import N_ATTACKS, adversary_check
    from versapub.verify.check import _by_guarantee
    from versapub.verify.reading.kind_checks import drawers
    from versapub.verify.reading.manifest import manifest_of

    got = _original(d, original, missing)
    assert got is not None
    table = got.table  # treated and recoded as published, as check's attacks read it
    manifest = manifest_of(d)
    req = requirement()
    return adversary_check(
        d,
        manifest,
        table,
        _by_guarantee(d, req, manifest),
        drawers(),
        n_attacks=n_attacks or N_ATTACKS,
        max_singling_out=max_singling_out,
    )


def treatment_effect(
    release: str | Path, original: str | Path | Original | None = None, *, missing: str | None = None
) -> dict[str, Any] | None:
    """What a treated release's treatments changed (None without treatments): the
    publisher's record-by-record measures from the manifest (``publisher``) and, with the
    original, the verifier's from the files (``versapub risk``'s ``perturbation``)."""
    import json

    from versapub.data.sql import connect
    from versapub.verify.treatments.perturbation_effect import CLAIMED, perturbation_effect

    d = Path(release)
    read_manifest(d)
    raw = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    if not raw.get("treatments"):
        return None
    claimed = raw.get("perturbation") if isinstance(raw.get("perturbation"), dict) else {}
    table = _table(d, original, missing)
    if table is None:
        return {"columns": {}, "correlations": [], "publisher": {k: claimed[k] for k in CLAIMED if k in claimed}}
    with connect() as con:
        return perturbation_effect(d, raw, table, con)
