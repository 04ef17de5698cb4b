"""The in-memory release: published count tables plus everything needed to describe
and verify them (format ``versapub-release/1``, documented in ``docs/release-format.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from versapub._version import __version__
from versapub.anonymizers.base import AnonymizedTable
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.formats import FORMAT
from versapub.privacy.feasibility import Feasibility
from versapub.privacy.guarantees.guarantee import Guarantee
from versapub.privacy.guarantees.population import Population
from versapub.privacy.rules import Reduction, Rule
from versapub.privacy.screens.proxies import Association
from versapub.privacy.screens.proxy_sets import SetProxy
from versapub.schema.gnf import GNFVerdict
from versapub.schema.model import Schema


@dataclass(frozen=True)
class PublishedTable:
    """One published sub-table: its schema entry and its anonymized count tables."""

    name: str
    table: AnonymizedTable

    @property
    def attributes(self) -> tuple[str, ...]:
        return self.table.attributes

    @property
    def kind(self) -> str:
        return self.table.kind


@dataclass(frozen=True)
class InputInfo:
    """Where the data came from (provenance keys of the manifest)."""

    path: str | None = None
    sha256: str | None = None
    rows_read: int = 0
    rows_dropped_missing: int = 0
    missing_policy: str = "error"
    hierarchies: dict[str, dict[str, Any]] = field(default_factory=dict)
    delimiter: str | None = None
    columns: list[str] | None = None
    format: str | None = None
    header: bool = True
    names: list[str] | None = None
    na_values: list[str] = field(default_factory=list)
    strip: bool = False
    #: Column -> the format its dates were read in (published in ISO 8601).
    date_formats: dict[str, str] = field(default_factory=dict)
    #: The absolute paths of the files the job read (input, hierarchies, configuration): kept
    #: in memory so that writing never touches them; never written to the release.
    local_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Removal:
    """Records removed by suppression (ARX's semantics): their number, by reason, the
    anonymizer's share and budget (``floor(share x input records)``) and the table whose
    classes they failed."""

    records: int
    by_reason: dict[str, int]
    share: float
    budget: int
    #: The generalized table whose classes they failed (``None``: every table, removed by the
    #: recoding that met ``--k``, with the job's ``--suppression``).
    table: str | None

    def __post_init__(self) -> None:
        if self.records < 1 or self.records > self.budget or sum(self.by_reason.values()) != self.records:
            raise ValueError("removed records are at least one, within the budget, and every one has a reason")

    def to_manifest(self, n_records: int) -> dict[str, Any]:
        return {
            "records": self.records,
            "by_reason": dict(self.by_reason),
            "suppression": self.share,
            "budget": self.budget,
            "table": self.table,
            "input_records": n_records + self.records,
        }


#: How many recoded columns a preview sentence names before "and N more".
SHOWN = 3


def k_preview_text(preview: dict[str, Any]) -> list[str]:
    """What ``--k 3`` and ``--k 5`` would cost, one sentence each (the summary, the report),
    naming at most :data:`SHOWN` recoded columns and how many more."""
    out = []
    keys = preview.get("keys")
    cells = f"key values ({', '.join(keys)})" if isinstance(keys, list) else "exactly published values"
    for k, one in preview.get("k", {}).items():
        now = f"{one['share_below']:.1%} of records are in cells of fewer than {k} {cells}"
        if one.get("refused"):
            cost = f"--k {k} would be refused: {one['refused']}"
        else:
            recoded = one.get("recoded") or {}
            parts = [f"{a} {v}" for a, v in list(recoded.items())[:SHOWN]]
            more = len(recoded) - SHOWN
            cost = f"--k {k} would publish " + (
                "; ".join(parts) + (f"; and {more} more column(s) coarser" if more > 0 else "")
                if parts
                else "every exact column as it is"
            )
            if recoded:
                cost += f" (information lost on those columns: KL {one['kl_recoded_columns']:.3f})"
            if one.get("generalized_further"):
                cost += f", and generalize {', '.join(one['generalized_further'])} further (cost not estimated)"
        out.append(f"Without --k: {now}; {cost} ({preview.get('computed', 'computed')}).")
    return out


def household_text(block: dict[str, Any]) -> list[str]:
    """The manifest's ``household`` block in sentences (the summary and the report)."""
    out = [
        f"Household id {block.get('column')!r}: removed (never published); "
        + (f"household figures {block.get('computed')}." if block.get("tables") else "no household figures.")
    ]
    for t in block.get("tables") or []:
        risk = t.get("household_risk") or {}
        key = t.get("structure_key") or {}
        out.append(
            f"  {t.get('table')}: {t.get('unique_on_structure', 0):,} of {t.get('households', 0):,} households "
            f"({t.get('unique_on_structure_share', 0):.1%}) unique on their structure (household-level "
            f"{', '.join(key.get('household_level') or []) or 'none'}; members' "
            f"{', '.join(key.get('members') or []) or 'nothing'}); household risk: expected re-identifications "
            f"{risk.get('expected_reidentifications', 0):,.1f}, highest {risk.get('highest', 0):.4f}."
        )
    if block.get("note"):
        out.append(f"  note: {block['note']}.")
    return out


def manifest_facts(m: Mapping[str, Any]) -> list[str]:
    """What a release's manifest says of records removed by suppression, of columns recoded
    to meet ``--k`` and of what ``--k 3`` and ``--k 5`` would cost, as sentences (the HTML
    report and the web page, from the files)."""
    out = []
    gone = m.get("removed")
    if isinstance(gone, dict):
        try:
            removal = Removal(
                int(gone["records"]),
                dict(gone["by_reason"]),
                float(gone["suppression"]),
                int(gone["budget"]),
                None if gone.get("table") is None else str(gone["table"]),
            )
            out.append(removal_text(removal, int(m["n_records"])))
        except (KeyError, TypeError, ValueError):
            out.append(f"The manifest's removed block cannot be read: {gone!r}.")
    recoded = m.get("recoded")
    if isinstance(recoded, dict) and recoded:
        out.append(
            "To meet --k, these columns are published coarser in every table: "
            + "; ".join(
                f"{a} at level {spec.get('level')} of {spec.get('hierarchy')}"
                for a, spec in recoded.items()
                if isinstance(spec, dict)
            )
            + "."
        )
    if isinstance(m.get("k_preview"), dict):
        out += k_preview_text(m["k_preview"])
    if isinstance(m.get("household"), dict):
        out += household_text(m["household"])
    return out


def removal_text(removed: Removal, n_records: int) -> str:
    """The records removed by suppression, in one sentence for the summary and the report."""
    why = "; ".join(f"{c:,} {r}" for r, c in removed.by_reason.items())
    return (
        f"Suppression removed {removed.records:,} of {n_records + removed.records:,} input records from every table "
        f"(at most floor({removed.share:g} x {n_records + removed.records:,}) = {removed.budget:,} allowed): {why}. "
        f"The utility figures and the release model cover the {n_records:,} published records."
    )


@dataclass(frozen=True)
class Release:
    """Everything one publishing run produced.  ``source`` is the (encoded) input the
    release is verified against before it is written; it is never written."""

    tables: tuple[PublishedTable, ...]
    source: EncodedTable
    guarantee: Guarantee
    reduction: Reduction
    feasibility: tuple[Feasibility, ...]
    schema: Schema
    gnf: GNFVerdict
    decomposition: str
    anonymizer: str
    anonymizer_params: dict[str, Any]
    seed: int
    input: InputInfo
    timings: dict[str, float] = field(default_factory=dict)
    utility: dict[str, Any] | None = None
    decomposition_params: dict[str, Any] = field(default_factory=dict)
    decomposition_trace: list[dict[str, Any]] = field(default_factory=list)
    columns: dict[str, list[str]] = field(default_factory=dict)
    identity: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: Notes worth a look that need no action (a code named like an identifier, a column that
    #: looks like a date or zip code left undeclared, ...).
    notes: list[str] = field(default_factory=list)
    #: Unprotected columns associated with protected ones, measured on the input (proxies the
    #: steward allowed among them): :mod:`versapub.privacy.screens.proxies`.
    associations: tuple[Association, ...] = ()
    #: Sets of unprotected columns that together recover a protected one, measured on held-out
    #: input records (allowed breaches among them): :mod:`versapub.privacy.screens.proxy_sets`.
    proxy_sets: tuple[SetProxy, ...] = ()
    #: Hierarchies of sensitive attributes the guarantee measures with (t-closeness's
    #: hierarchical distance), copied into the release for the verifier.
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    #: Each enforced rule's guarantee (its own, or the release's; with the rules it implies).
    rule_guarantees: dict[Rule, Guarantee] = field(default_factory=dict)
    #: Rules whose table was anonymized by their own anonymizer: ``{"name", "params"}``.
    rule_anonymizers: dict[Rule, dict[str, Any]] = field(default_factory=dict)
    #: A collection of anonymized marginals: its requirement and checks (the manifest's
    #: ``marginals`` section, :mod:`versapub.marginals.release`).
    marginals: dict[str, Any] | None = None
    #: Where the records were held and counted: ``{"name": "memory"}`` or the Dask cluster.
    backend: dict[str, Any] = field(default_factory=lambda: {"name": "memory"})
    #: The population the records were drawn from, when a guarantee is checked against it
    #: (delta-presence, k-map with ``--population``); never written, recorded by digest.
    population: Population | None = None
    #: Records removed by suppression (ARX's semantics): ``source`` holds the records kept.
    removed: Removal | None = None
    #: Exactly published columns recoded to meet ``--k`` (the manifest's ``recoded``:
    #: :mod:`versapub.publishing.recoding`): ``source`` holds the recoded values.
    recoded: dict[str, Any] | None = None
    #: Key values suppressed to meet ``--k`` (``--suppression-mode cells``; the manifest's
    #: ``suppressed``: :mod:`versapub.publishing.local_suppression`).
    suppressed: dict[str, Any] | None = None
    #: Without ``--k``: what ``--k 3`` and ``--k 5`` would cost (the manifest's ``k_preview``).
    k_preview: dict[str, Any] | None = None
    #: The household id removed and the household figures (the manifest's ``household``:
    #: :mod:`versapub.publishing.households`).
    household: dict[str, Any] | None = None
    #: Treatments applied to the input before anonymizing (the manifest's ``treatments``:
    #: :mod:`versapub.treatments`), in order; ``source`` holds the treated values.
    treatments: tuple[dict[str, Any], ...] = ()
    #: What the treatments changed, measured on the input and the treated table record by
    #: record (the manifest's ``perturbation``: :mod:`versapub.treatments.measures`).
    perturbation: dict[str, Any] | None = None
    #: The input as read, when the release is checked against more than ``source``: before
    #: recoding, with the records suppression removed (never written).
    verified_against: EncodedTable | None = None
    #: What the job asked of the release beside its guarantees (the manifest's ``job``): the
    #: floor on published cells (``--k``, ``--max-risk`` as ``ceil(1/R)``; 1: none) and the
    #: share of records ``--suppression`` may remove — so a share stated elsewhere in the
    #: manifest can be compared with the one asked for (issue 71).
    requested: dict[str, Any] | None = None

    @property
    def checked_against(self) -> EncodedTable:
        """The table the release is verified against before it is written: the whole input
        as read (the verifier recodes it from the manifest, and finds the records removed by
        suppression in no table)."""
        return self.verified_against if self.verified_against is not None else self.source

    def rule_json(self, rule: Rule) -> dict[str, Any]:
        """A rule in the manifest, with its guarantee when it is not the release's."""
        g = self.rule_guarantees.get(rule)
        own = g.to_manifest() if g is not None else None
        out = {**rule.to_json(), **({"guarantee": own} if own and own != self.guarantee.to_manifest() else {})}
        if rule in self.rule_anonymizers:
            out["anonymizer"] = self.rule_anonymizers[rule]
        return out

    def hierarchy_files(self) -> dict[str, str]:
        """Attribute -> the file name of its hierarchy in the release."""
        return {a: f"hierarchy_{i + 1}.csv" for i, a in enumerate(sorted(self.hierarchies))}

    @property
    def n_records(self) -> int:
        return self.source.n_rows

    @property
    def attributes(self) -> tuple[str, ...]:
        return self.source.names

    def manifest(self, entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The manifest, given each table's entry as its kind writes it (``name``,
        ``attributes``, ``kind``, ``enforces``, ``files`` and the kind's own keys)."""
        tables = []
        for t in self.tables:
            entry = dict(entries[t.name])
            entry["stats"] = t.table.stats
            if t.name in self.identity:
                entry["identity_risk"] = self.identity[t.name]
            tables.append(entry)
        return {
            "format": FORMAT,
            "n_records": self.n_records,
            "attributes": list(self.attributes),
            "guarantee": self.guarantee.to_manifest(),
            "rules": [self.rule_json(r) for r in self.reduction.rules],
            "tables": tables,
            "hierarchies": self.hierarchy_files(),
            **({"population": self.population.to_manifest()} if self.population is not None else {}),
            **({"job": dict(self.requested)} if self.requested is not None else {}),
            **({"removed": self.removed.to_manifest(self.n_records)} if self.removed is not None else {}),
            **({"recoded": self.recoded} if self.recoded else {}),
            **({"suppressed": self.suppressed} if self.suppressed else {}),
            **({"k_preview": self.k_preview} if self.k_preview else {}),
            **({"household": self.household} if self.household else {}),
            **({"treatments": list(self.treatments)} if self.treatments else {}),
            **({"perturbation": self.perturbation} if self.perturbation else {}),
            # Provenance (optional to a checker):
            "tool": {"name": "versapub", "version": __version__},
            "input": {
                "path": self.input.path,
                "sha256": self.input.sha256,
                "rows_read": self.input.rows_read,
                "rows_dropped_missing": self.input.rows_dropped_missing,
                "missing_policy": self.input.missing_policy,
                "hierarchies": self.input.hierarchies,
                "delimiter": self.input.delimiter,
                "columns": self.input.columns,
                "format": self.input.format,
                "header": self.input.header,
                "names": self.input.names,
                "na_values": self.input.na_values,
                "strip": self.input.strip,
                "date_formats": self.input.date_formats,
            },
            "rules_given": [r.to_json() for r in self.reduction.given],
            "rules_dropped": [
                {"rule": d.rule.to_json(), "implied_by": d.implied_by.to_json(), "reason": d.reason}
                for d in self.reduction.dropped
            ],
            "decomposition": {
                "name": self.decomposition,
                "params": self.decomposition_params,
                "add_back_trace": self.decomposition_trace,
            },
            "anonymizer": {"name": self.anonymizer, "params": self.anonymizer_params},
            "seed": self.seed,
            "backend": self.backend,
            "gnf": self.gnf.to_json(),
            "timings_s": {k: round(v, 4) for k, v in self.timings.items()},
            "utility": self.utility,
            "columns": self.columns,
            "warnings": self.warnings,
            "notes": self.notes,
            "associations": [a.to_json() for a in self.associations],
            **({"proxy_sets": [p.to_json() for p in self.proxy_sets]} if self.proxy_sets else {}),
            **({"marginals": self.marginals} if self.marginals is not None else {}),
        }
