"""The verifier's reading of ``manifest.json``: parsed once per ``check`` (``run_check``
hands the parsed manifest to every check and attack) and here for a check run on its own.
The verifier validates the manifest with its own rules, independently of the publisher's
reading (``versapub.formats``): :func:`contents` checks the core keys and types them,
each problem one sentence as the verification reports it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The manifest as written (every check reads its own keys from it).
Manifest = dict[str, Any]

#: The keys every release's manifest has.
CORE = ("format", "n_records", "attributes", "guarantee", "rules", "tables")


def manifest_of(directory: str | Path, given: Manifest | None = None) -> Manifest:
    """``given`` when the caller has parsed the manifest already, else the directory's."""
    if given is not None:
        return given
    parsed: Manifest = json.loads((Path(directory) / "manifest.json").read_text(encoding="utf-8"))
    return parsed


class ManifestProblem(ValueError):
    """A manifest the verifier cannot read: the sentence says why."""


@dataclass(frozen=True)
class TableFiles:
    """One table entry as the verifier lists it: its name, kind and files (role -> name)."""

    name: str
    kind: str
    files: dict[str, str]


@dataclass(frozen=True)
class Removed:
    """Records removed by suppression (the manifest's optional ``removed``): how many, the
    anonymizer's share and budget, the table whose classes they failed, and the input's
    number of records (``n_records`` + ``records``)."""

    records: int
    suppression: float
    budget: int
    #: The generalized table whose classes they failed; ``None``: removed from every table
    #: by the recoding that met ``--k`` (the job's ``--suppression``).
    table: str | None
    input_records: int


@dataclass(frozen=True)
class Contents:
    """The manifest's core, checked and typed: the ``format``, ``n_records``, the published
    ``attributes`` (``None`` when not a list: the coverage check says so), every table's
    files (:class:`TableFiles`) and the ``hierarchies`` (attribute -> file name; ``None``
    when malformed: :meth:`hierarchy_problem`)."""

    raw: Manifest
    format: str
    n_records: int
    attributes: tuple[str, ...] | None
    tables: tuple[TableFiles, ...] = ()
    hierarchies: dict[str, str] | None = field(default_factory=dict)
    removed: Removed | None = None

    def hierarchy_problem(self) -> str | None:
        """Why the hierarchies cannot be read (``None``: they can)."""
        if self.hierarchies is not None:
            return None
        return f"hierarchies must map attributes to file names, got {self.raw.get('hierarchies')!r}"

    def listed_files(self) -> set[str]:
        """Every file the manifest names: the tables' and the hierarchies'."""
        return {f for t in self.tables for f in t.files.values()} | set((self.hierarchies or {}).values())


def contents(raw: object, expected_format: str) -> Contents:
    """The core of ``raw`` checked in order (an object; the core keys; the format; a positive
    ``n_records``): :class:`ManifestProblem` with the first problem."""
    if not isinstance(raw, dict):
        raise ManifestProblem("manifest.json is not a JSON object")
    missing = [k for k in CORE if k not in raw]
    if missing:
        raise ManifestProblem(f"core key(s) {missing} are missing")
    if raw["format"] != expected_format:
        raise ManifestProblem(f"unknown format {raw['format']!r} (expected {expected_format!r})")
    n = raw["n_records"]
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ManifestProblem(f"n_records must be a positive integer, got {n!r}")
    attrs = raw["attributes"]
    hier = raw.get("hierarchies") or {}
    good = isinstance(hier, dict) and all(isinstance(v, str) and "/" not in v for v in hier.values())
    return Contents(
        raw,
        str(raw["format"]),
        n,
        tuple(str(a) for a in attrs) if isinstance(attrs, list) else None,
        tuple(_files(e) for e in raw["tables"]) if isinstance(raw["tables"], list) else (),
        {str(k): str(v) for k, v in hier.items()} if good else None,
        _removed(raw.get("removed")),
    )


def _removed(raw: object) -> Removed | None:
    """The ``removed`` block, typed (:class:`ManifestProblem` when malformed)."""
    if raw is None:
        return None
    whole = ("records", "budget", "input_records")
    if not isinstance(raw, dict) or any(isinstance(raw.get(k), bool) or not isinstance(raw.get(k), int) for k in whole):
        raise ManifestProblem(f"removed must give whole numbers {list(whole)}, got {raw!r}")
    share, table = raw.get("suppression"), raw.get("table")
    if isinstance(share, bool) or not isinstance(share, int | float) or not isinstance(table, str | None):
        raise ManifestProblem(f"removed must give the suppression share and the table, got {raw!r}")
    return Removed(int(raw["records"]), float(share), int(raw["budget"]), table, int(raw["input_records"]))


def _files(entry: object) -> TableFiles:
    e: Mapping[str, Any] = entry if isinstance(entry, dict) else {}
    files = e.get("files") or {}
    return TableFiles(
        str(e.get("name", "")),
        str(e.get("kind", "")),
        {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {},
    )
