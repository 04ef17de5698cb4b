"""The table-kind extension point: what a published table *is*, declared once.

A kind (``plain``, ``anatomy``; generalized tables and others plug in here) declares, for
the tables it names in a manifest:

* its **file roles and columns** (``roles``) and the manifest fields it adds
  (``manifest_fields``), and checks an anonymizer's output against them (``validate``);
* how its count tables become a :class:`~versapub.model.factors.Factor` of the release model
  (``factor``) — from the files or from memory alike;
* **what the adversary reads** from it (``view``: named count tables, with a latent group
  column where the kind hides a link);
* its **summary for reports** (``summary``: groups, group sizes, achieved guarantee).

Everything that once branched on the kind asks :func:`get_kind` instead.  The independent
verifier keeps its own ``{kind: check}`` table, written from ``docs/release-format.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, Labels
from versapub.data.counts import CountTable
from versapub.errors import ReleaseError
from versapub.formats import TableEntry
from versapub.model.factors import Factor
from versapub.model.sparse import Codes
from versapub.privacy.guarantees.guarantee import Guarantee


@dataclass(frozen=True)
class TablePart:
    """One count table with its columns already encoded into the model's domains."""

    columns: dict[str, Codes]
    counts: npt.NDArray[np.float64]


@dataclass(frozen=True)
class CountRows:
    """Distinct rows over ``columns`` (values as text) with their counts: what an adversary reads."""

    source: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class View:
    """A table as the adversary sees it: count tables over named columns (a latent group
    column shared by two of them hides which rows go together), the sensitive attribute the
    kind protects, and records whose sensitive values are withheld (QI columns, their rows,
    each sensitive domain)."""

    tables: tuple[CountRows, ...]
    sensitive: tuple[str, ...] = ()
    withheld_records: int = 0
    suppressed: tuple[tuple[str, ...], tuple[tuple[str, ...], ...], dict[str, frozenset[str]]] | None = None
    #: A generalized table: per attribute, the leaves each published label covers.
    covers: Mapping[str, Mapping[str, Sequence[str]]] | None = None


#: ``codes_of(attribute, values or None) -> codes`` into the model's domain, in the order of
#: ``values`` (-1 for a value outside the domain); ``None``: every code.
CodesOf = Callable[[str, Sequence[str] | None], Codes]
#: Per attribute, the leaves each published label covers (a value not listed is a leaf).
LeafSets = dict[str, Labels]


@dataclass(frozen=True)
class Entry(TableEntry):
    """A manifest table entry, parsed (:class:`versapub.formats.TableEntry`: the keys every
    kind has, and the kind's own in ``raw``), with what reading its files adds."""

    #: Generalized tables: each label's leaves, and each label's code in the count parts
    #: (leaves have codes ``0 .. card-1``, labels ``card`` and above).
    leaf_sets: LeafSets = field(default_factory=dict)
    label_codes: dict[str, dict[str, int]] = field(default_factory=dict)
    #: The table's listings (files without counts) by role, rows as text.
    listings: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)


class TableKind(Protocol):
    """What a table kind declares (see the module docstring)."""

    name: str
    #: The kind in a sentence or two, for the report's glossary.
    glossary: str
    #: Every published value is a value of the attribute's domain (False: some are
    #: generalized values covering several; the attacks then read the covers).
    exact_values: bool
    #: What the ``count`` column holds: ``"exact"`` (positive integers summing to the
    #: record count, less what the kind withholds), ``"noisy"`` (integers of any sign, a
    #: measurement under differential privacy: any sum) or ``"expected"`` (non-negative
    #: reals summing to the record count: a fitted model's marginal).
    counts: str
    #: The table is a factor of the release model (False: evidence the model was fitted to,
    #: read for intervals only — the ``noisy`` kind).
    in_model: bool

    def sensitive_of(self, entry: Entry) -> tuple[str, ...]:
        """The attributes the table publishes apart (empty for an exact table); a malformed
        entry is a :class:`ReleaseError`."""
        ...

    def roles(self, entry: Entry) -> dict[str, list[str]]:
        """File role -> the file's columns in order (attributes, ``group_id``, ``count``)."""
        ...

    def file_names(self, table: str, ext: str) -> dict[str, str]:
        """File role -> file name for a table written with extension ``ext`` (count tables
        and listings)."""
        ...

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        """The file role holding the sensitive attribute per group, and the columns naming a
        group (Anatomy: the ST and ``group_id``; generalized: the table and its equivalence
        class columns); ``None`` for a table without groups.  ``max P(s | group)`` bounds
        every posterior of the sensitive attribute given the table's other attributes."""
        ...

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        """The file role and columns whose distinct values are the cells an adversary can
        single records out by (the identity check)."""
        ...

    def unguarded(self, entry: Entry) -> list[str]:
        """The columns a record's row publishes exactly *beside* the table's guarantee rather
        than under it: someone who finds a person's row reads them, and an unprotected one
        among them may reveal a protected attribute (the proxy screen,
        :mod:`versapub.privacy.screens.proxies`).  A plain table's every column; Anatomy's QIT
        columns; none for a generalized table, whose every class meets the guarantee with
        its published values."""
        ...

    def product_parts(self, table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
        """The table as a factor of a product estimate measured out of core
        (:mod:`versapub.model.outofcore`): its first part, its second part and the attribute
        that part holds (Anatomy's ST with one sensitive attribute and nothing suppressed),
        or ``(data, None, None)`` (a table with ``leaves`` has its rows spread over the
        leaves they cover); None when the kind is no such factor."""
        ...

    def listing_roles(self, entry: Entry) -> dict[str, list[str]]:
        """Files that are listings, not count tables (no ``count`` column): role -> columns."""
        ...

    def listings(self, table: AnonymizedTable) -> dict[str, list[tuple[str, ...]]]:
        """The rows of each listing of an in-memory table (for the writer)."""
        ...

    def leaf_sets(self, entry: Entry, listings: Mapping[str, Sequence[tuple[str, ...]]]) -> LeafSets:
        """Per attribute, the leaves each published label covers, read from the listings
        (empty for a table that publishes leaves only); a malformed listing is a
        :class:`ReleaseError`."""
        ...

    def manifest_fields(self, table: AnonymizedTable) -> dict[str, Any]:
        """The keys the kind adds to the table's manifest entry."""
        ...

    def sensitive_runs(self, directory: Path, entry: Entry) -> dict[str, tuple[str, str]]:
        """Per sensitive attribute whose published values are generalized (taxonomy nodes:
        Sequential Sweep), two DuckDB queries: ``(pv, f, l)``, each published value and the
        run ``f .. l`` of leaf positions it covers, so that its records count ``1/(l-f+1)``
        towards each leaf (induced frequencies); and ``(position, leaf)``, the leaves.
        Empty when every sensitive value is exact."""
        ...

    def validate(self, table: AnonymizedTable) -> None:
        """Refuse an anonymizer's output that does not have the kind's parts and rules."""
        ...

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        """Per file role: records the role does not cover (its counts sum to ``n`` minus this);
        ``group_counts``: records per group id of the table's first file."""
        ...

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        """The table's factor in the release model (``parts`` encoded into the domains)."""
        ...

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        """What the adversary reads from the table."""
        ...

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        """For reports, from the files: ``groups``, ``group_sizes`` ({size: groups}),
        ``achieved`` (the guarantee's own measure); empty for a table without groups."""
        ...


KINDS: dict[str, TableKind] = {}
#: Where each kind registers itself: its module is imported when a release first names the kind
#: (reading a release loads only the kinds it holds; :func:`all_kinds` loads every one).
KIND_MODULES: dict[str, str] = {
    "plain": "versapub.kinds.plain",
    "anatomy": "versapub.kinds.anatomy",
    "generalized": "versapub.kinds.generalized",
    "sa-groups": "versapub.kinds.sa_groups",
    "noisy": "versapub.kinds.noisy",
    "fitted": "versapub.kinds.fitted",
}


def register(kind: TableKind) -> TableKind:
    """Add a kind to the registry (its module calls this once)."""
    KINDS[kind.name] = kind
    return kind


def product_parts(table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
    """``table``'s kind's :meth:`TableKind.product_parts`."""
    return get_kind(table.kind).product_parts(table)


def get_kind(name: object) -> TableKind:
    """The registered kind ``name``; an unknown kind is a one-paragraph error."""
    key = str(name)
    if key not in KINDS and key in KIND_MODULES:
        importlib.import_module(KIND_MODULES[key])
    kind = KINDS.get(key)
    if kind is None:
        raise ReleaseError(f"Unknown table kind {name!r}; this versapub knows: {', '.join(sorted(KIND_MODULES))}.")
    return kind


def all_kinds() -> dict[str, TableKind]:
    """Every registered kind, each module imported (for listings and the conformance suite)."""
    for module in KIND_MODULES.values():
        importlib.import_module(module)
    return KINDS


def parse_entry(entry: object, where: str = "manifest.json") -> Entry:
    """A manifest table entry with the keys every kind has checked (the release format's
    one reading of them: :meth:`versapub.formats.TableEntry.parse`)."""
    e = entry if isinstance(entry, TableEntry) else TableEntry.parse(entry, where)
    return Entry(e.name, e.attributes, e.kind, e.files, e.raw)


class LeavesOnly:
    """The listing methods of a kind whose tables publish leaves only."""

    exact_values = True

    def sensitive_runs(self, directory: Path, entry: Entry) -> dict[str, tuple[str, str]]:
        return {}

    def listing_roles(self, entry: Entry) -> dict[str, list[str]]:
        return {}

    def listings(self, table: AnonymizedTable) -> dict[str, list[tuple[str, ...]]]:
        return {}

    def leaf_sets(self, entry: Entry, listings: Mapping[str, Sequence[tuple[str, ...]]]) -> LeafSets:
        return {}


def label_codes(table: AnonymizedTable) -> dict[str, dict[str, int]]:
    """In memory: each label's code in the count parts (its place in the column's
    dictionary, after the leaves)."""
    out: dict[str, dict[str, int]] = {}
    for ct in table.parts.values():
        for name, values in zip(ct.names, ct.dictionaries, strict=True):
            if name in table.leaves and values is not None:
                spans = table.leaves[name].spans
                out[name] = {str(v): i for i, v in enumerate(values) if str(v) in spans}
    return out


def entry_of(name: str, table: AnonymizedTable, files: Mapping[str, str] | None = None) -> Entry:
    """The manifest entry of an in-memory table (as the writer records it)."""
    raw: dict[str, Any] = {
        "name": name,
        "attributes": list(table.attributes),
        "kind": table.kind,
        "enforces": None if table.enforces is None else table.enforces.to_json(),
        "files": dict(files or {}),
        **get_kind(table.kind).manifest_fields(table),
    }
    # Listings the anonymizer emitted as rows (sa-groups' sets); a generalized table's are
    # derived from its leaves, which the entry already carries.
    listed = {role: [tuple(str(v) for v in r) for r in rows] for role, rows in table.listed.items()}
    return Entry(
        name,
        tuple(table.attributes),
        table.kind,
        dict(files or {}),
        raw,
        dict(table.leaves),
        label_codes(table),
        listed,
    )
