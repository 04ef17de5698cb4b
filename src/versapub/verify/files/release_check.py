"""Independent verification of a written release, from its files alone.

This module shares no code with the decompositions, anonymizers or the release
writer: it parses ``manifest.json`` itself, reads every table with DuckDB, and checks
with SQL.  It relies only on the manifest's core keys (``format``, ``n_records``,
``attributes``, ``guarantee``, ``rules``, ``tables`` with ``name``/``attributes``/
``kind``/``enforces``/``files``), so hand-made releases in the same format can be
checked too.  Checks:

* structure: format version, core keys, every file present with the expected columns;
* every count is a positive integer, every count table is duplicate-free and sums to
  ``n_records``;
* anatomy: QIT and ST agree on every group's size; every group satisfies the
  guarantee (l-diversity: ``l * max_count <= |group|``); for a table with several
  sensitive attributes (multi-SA), for every ``A_i`` and every combination of the other
  sensitive values inside a group; a suppressed group has no ST rows and the ST sums to
  ``n_records`` minus its size;
* group ids of every anatomy table are exactly ``0 .. G-1``;
* no file in the release directory that the manifest does not list (a leak);
* schema: the published schema is in GNF for the manifest's rules (or the rules the
  steward requires), each group against the manifest's guarantee (or the one required);
* with the original table: every attribute is published, and every published marginal
  (plain table, QIT without ``group_id``, ST's sensitive column) equals the original's
  projection, so no record is missing or invented; and every anatomy table's QIT rows and
  ST rows can each be paired with the input's records through groups that hold both the
  record's quasi-identifier values and its sensitive value (two b-matchings, solved as
  maximum flows with OR-Tools) — a sensitive value moved between groups fails this even
  when every size and marginal still agrees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from versapub.data.source import Source
from versapub.data.sql import connect
from versapub.privacy.rules import Rule
from versapub.verify.collection.collection_check import check_collection
from versapub.verify.dp.dp_checks import mechanism_findings
from versapub.verify.dp.dp_noise import scale_findings
from versapub.verify.files.digests import digests_ok
from versapub.verify.finding import Finding
from versapub.verify.guarantees.gnf import gnf_verdicts, read_tables
from versapub.verify.identity.households import household_findings
from versapub.verify.identity.key_cells import suppressed_columns, suppression_findings
from versapub.verify.reading.kind_checks import KIND_CHECKS
from versapub.verify.reading.manifest import Manifest, ManifestProblem, contents, manifest_of
from versapub.verify.reading.primitives import PAIRING_MAX_ROWS, Checker, VerificationReport
from versapub.verify.requirement import Requirement
from versapub.verify.treatments.perturbation import changed_findings, perturbation_findings
from versapub.verify.treatments.recoding import recoded_original, recoding_problems
from versapub.verify.treatments.removal import removal_ok
from versapub.verify.treatments.treatments import perturbed_columns, recounted, treated_original, treatment_findings

FORMAT = "versapub-release/1"
#: Files a release holds besides the tables its manifest lists.
_EXTRAS = {"manifest.json", "verification.json", "check.json", "report.md", "report.html"}


class _Checker(Checker):
    """The driver: the manifest, the files it lists, the schema, then each table by its kind."""

    # -- driver -------------------------------------------------------------------
    def run(self, parsed: Manifest | None = None) -> VerificationReport:
        """Every check of the release's files: the manifest, the files it lists, the
        requirement, coverage, GNF, each table by its kind's check, a collection's checks."""
        rep = self.report
        read = self._manifest(parsed)
        if read is None or not self._listing_ok(read[0]):
            return rep
        manifest, specs, rules, tables = read
        guarantee = self._requirement(manifest, specs, rules)
        self._coverage(manifest, tables)
        removal_ok(self, manifest)
        if _measured(manifest):  # differential privacy: no table guards a rule
            if rules:
                rep.add(
                    "schema",
                    True,
                    f"the {len(rules)} rule(s) chose what was measured; the noise, not a table's "
                    "grouping, protects them (Guardian Normal Form is a property of syntactic releases)",
                )
        else:
            for v in gnf_verdicts([(r.lhs, r.rhs) for r in rules], tables):
                rep.add("schema", v.holds, v.explain())

        for entry, sub in zip(manifest["tables"], tables, strict=True):
            files = entry.get("files") or {}
            check = KIND_CHECKS.get(str(entry["kind"]))
            if check is None:
                rep.add("manifest", False, f"table {sub.name!r} has unknown kind {entry['kind']!r}", "manifest.json")
            else:
                check.verify(self, entry, sub, files, guarantee)
            self.drop_relations()
        if isinstance(manifest.get("marginals"), dict):  # a collection of marginals: its own checks
            for found in check_collection(self.dir, manifest=manifest):
                rep.add(found.check, found.ok, found.message, found.file)
        for found in mechanism_findings(self.dir, manifest):  # a differentially private release's ledger
            rep.add(found.check, found.ok, found.message, found.file)
        for found in scale_findings(self.noise_tests):  # with the original: the noise has the ledger's scale
            rep.add(found.check, found.ok, found.message, found.file)
        return rep

    def _manifest(self, parsed: Manifest | None) -> tuple[Manifest, Any, list[Rule], list[Any]] | None:
        """The manifest, its rule specifications, rules and tables (None: a failure said why)."""
        rep = self.report
        try:
            manifest = manifest_of(self.dir, parsed)
        except FileNotFoundError:
            rep.add("manifest", False, "manifest.json is missing", "manifest.json")
            return None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            rep.add("manifest", False, f"manifest.json is not valid JSON ({exc})", "manifest.json")
            return None
        try:
            self.contents = contents(manifest, FORMAT)
        except ManifestProblem as exc:
            rep.add("manifest", False, str(exc), "manifest.json")
            return None
        self.n = n = self.contents.n_records
        self.removed = self.contents.removed
        job = manifest.get("job")
        self.job = job if isinstance(job, dict) else {}
        try:
            specs = self.requirement.rule_specs(manifest)
            rules = [Rule.from_json(r) for r, _ in specs]
            tables = read_tables(manifest["tables"])
        except Exception as exc:
            rep.add("manifest", False, f"malformed rules or tables: {exc}", "manifest.json")
            return None
        rep.add("manifest", True, f"format {FORMAT}, {len(tables)} table(s), n_records = {n}", "manifest.json")
        return manifest, specs, rules, tables

    def _listing_ok(self, manifest: Manifest) -> bool:
        """The hierarchies are file names, and the directory holds only the listed files."""
        rep = self.report
        problem = self.contents.hierarchy_problem()
        if problem is not None or self.contents.hierarchies is None:
            rep.add("manifest", False, str(problem), "manifest.json")
            return False
        self.hierarchies = self.contents.hierarchies
        listed = self.contents.listed_files() | _EXTRAS
        foreign = sorted(p.name for p in self.dir.iterdir() if p.name not in listed)
        rep.add(
            "files",
            not foreign,
            "the directory holds only the files the manifest lists"
            if not foreign
            else f"file(s) the manifest does not list: {', '.join(foreign[:10])} (a leak: a reader sees them too)",
        )
        return True

    def _requirement(self, manifest: Manifest, specs: Any, rules: list[Rule]) -> dict[str, Any]:
        """The digests, and the requirement checked against (each rule's guarantee)."""
        rep = self.report
        digest = digests_ok(self.dir, manifest)
        rep.findings.append(Finding(digest.check, digest.ok, digest.message, "manifest.json", digest.attention))
        guarantee = self.requirement.default(manifest)
        # the table protecting S meets the guarantee of every rule on S
        self.rule_guarantees = joined_by_attribute([{**r, "guarantee": g} for r, g in specs], guarantee)
        self.anonymizer = manifest.get("anonymizer")
        self.population_entry = manifest.get("population")
        self.rule_anonymizers = {
            str(r.get("rhs")): r["anonymizer"]
            for r in manifest.get("rules") or []
            if isinstance(r, dict) and "anonymizer" in r
        }
        rep.add("guarantee", True, self.requirement.describe(manifest))
        if self.requirement.rules is not None:
            rep.add("schema", True, f"rules checked: the {len(rules)} rule(s) of your requirement")
        return guarantee

    def _coverage(self, manifest: Manifest, tables: list[Any]) -> None:
        """The tables publish exactly the manifest's attributes (and the input's)."""
        rep, n = self.report, self.n
        attrs = manifest["attributes"]
        published = set().union(*(set(t.attributes) for t in tables)) if tables else set()
        rep.add(
            "coverage",
            isinstance(attrs, list) and set(attrs) == published,
            "the tables publish exactly the manifest's attributes"
            if isinstance(attrs, list) and set(attrs) == published
            else f"manifest attributes {attrs} but tables publish {sorted(published)}",
        )
        raw = manifest.get("columns")
        roles: dict[str, Any] = raw if isinstance(raw, dict) else {}
        removed = {str(c) for c in roles.get("removed") or []}
        if roles.get("household"):
            removed.add(str(roles["household"]))
        if removed:  # identifiers the manifest says were removed (the household id among them, issue 68)
            leaked = sorted(removed & published)
            rep.add(
                "coverage",
                not leaked,
                f"no removed identifier is published ({', '.join(sorted(removed))})"
                if not leaked
                else f"{', '.join(leaked)} declared removed (an identifier) but published",
            )
        if self.original is not None:
            block = manifest.get("household")  # the household id a floor counted by (never published)
            names = set(self.original.names) - {block.get("column")} if isinstance(block, dict) else set()
            names = names or set(self.original.names)
            rep.add(
                "coverage",
                names == published,
                "every input attribute is published"
                if names == published
                else f"input attributes {sorted(names - published)} are not published"
                + (f"; {sorted(published - names)} are not input attributes" if published - names else ""),
            )
            gone = self.removed.records if self.removed is not None else 0
            noisy = _measured(manifest)  # n_records is the mechanism's estimate
            if self.original.n_rows != n + gone and not noisy:
                rep.add(
                    "coverage",
                    False,
                    f"n_records = {n}"
                    + (f" and {gone} record(s) removed by suppression" if gone else "")
                    + f", but the input has {self.original.n_rows} records",
                )
            self.original.register_duckdb(self.con)  # original_codes and dict_<attribute>, in memory or on disk


def _measured(manifest: Manifest) -> bool:
    """A release measured by a mechanism: a ``mechanism`` section and only tables whose counts
    are not records (noisy or expected). A section beside tables of records changes nothing:
    those tables are checked as any other."""
    tables = manifest.get("tables") or []
    kinds = [KIND_CHECKS.get(str(t.get("kind"))) for t in tables if isinstance(t, dict)]
    return (
        isinstance(manifest.get("mechanism"), dict)
        and bool(kinds)
        and all(k is not None and k.reading is not None and not k.reading.records for k in kinds)
    )


def joined_by_attribute(rules: list[Any], release: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per sensitive attribute, the guarantee its table must meet: every rule on it with its
    own guarantee (the manifest's per-rule ``guarantee``) or the release's — all of them
    (docs/release-format.md, "Guarantees")."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for r in rules:
        if not isinstance(r, dict):
            continue
        own = r.get("guarantee")
        g: dict[str, Any] = own if isinstance(own, dict) else release
        flat: list[dict[str, Any]] = (
            g["guarantees"] if g.get("name") == "all-of" and isinstance(g.get("guarantees"), list) else [g]
        )
        mine = parts.setdefault(str(r.get("rhs")), [])
        mine += [p for p in flat if p not in mine]
    return {s: gs[0] if len(gs) == 1 else {"name": "all-of", "guarantees": gs} for s, gs in parts.items()}


def verify_release(
    directory: str | Path,
    original: Source | None = None,
    rules: list[Rule] | None = None,
    guarantee: dict[str, Any] | None = None,
    pairing_max_rows: int | None = PAIRING_MAX_ROWS,
    requirement: Requirement | None = None,
    manifest: Manifest | None = None,
    population: Source | None = None,
) -> VerificationReport:
    """Verify the release in ``directory`` (and, if given, against the ``original`` table)
    against ``requirement`` — what the steward requires — or, when nothing is required, the
    release's own claim (its manifest).  ``rules`` and ``guarantee`` (``{"name": ...,
    params}``) are a shorthand for a requirement stated by the caller.  ``manifest``: the
    manifest already parsed by the caller (``run_check``); its contents are checked here.
    ``population``: the population the records were drawn from, for the models checked
    against it (:mod:`versapub.verify.guarantees.population_checks`)."""
    # Large releases (partitioned tables): DuckDB holds at most its share of the memory and
    # spills the rest into a temporary directory of its own, removed afterwards.
    with connect(ordered=False) as con:
        req = requirement or required(rules, guarantee)
        try:
            parsed = manifest_of(Path(directory), manifest)
        except (OSError, ValueError):
            parsed = None  # the checker reports it
        as_read, original = original, recoded_original(treated_original(original, parsed), parsed)
        checker = _Checker(Path(directory), original, req, pairing_max_rows, con=con, population=population)
        # locally suppressed key columns: the input cannot show which values went (their own check below)
        checker.perturbed = perturbed_columns(parsed) | suppressed_columns(parsed)
        report = checker.run(manifest)
        if isinstance(parsed, dict) and parsed.get("recoded") is not None:
            problems = recoding_problems(parsed["recoded"])
            report.add(
                "recoding",
                not problems,
                "; ".join(problems)
                or f"{', '.join(parsed['recoded'])} recoded: one published value per leaf"
                + (", the input recoded likewise before every comparison" if original is not None else ""),
                "manifest.json",
            )
        if isinstance(parsed, dict) and original is not None:  # a floor counting households (issue 68)
            for ok, message in household_findings(parsed, original):
                report.add("households", ok, message, "manifest.json")
        if isinstance(parsed, dict) and parsed.get("suppressed") is not None:
            for ok, message in suppression_findings(Path(directory), parsed, original, con):
                report.add("suppression", ok, message, "manifest.json")
        if isinstance(parsed, dict) and parsed.get("treatments") is not None:
            found: list[tuple[Any, ...]] = list(treatment_findings(Path(directory), parsed, con))
            if isinstance(parsed.get("treatments"), list):
                found += perturbation_findings(Path(directory), parsed, con)
                if original is not None:
                    found += changed_findings(Path(directory), parsed, original, con)
                    found += recounted(as_read, parsed)  # the input as read: before any rule
            for ok, message, *attention in found:  # a third member: passed, but needs attention
                report.findings.append(Finding("treatment", ok, message, "manifest.json", bool(attention)))
        return report


def required(rules: list[Rule] | None, guarantee: dict[str, Any] | None, source: str = "") -> Requirement:
    """A requirement from rules (without guarantees of their own) and a guarantee."""
    return Requirement(
        guarantee, tuple(r.to_json() for r in rules) if rules is not None else None, source or "given by the caller"
    )
