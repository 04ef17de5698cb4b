"""The published tables of a release, read for the attacks (independently of the writer).

Every published table becomes count tables over named columns, as its kind's *view*
declares (:mod:`versapub.verify.reading.reading`): a plain table its rows; an Anatomy table its QIT over
``QI ∪ {g}`` and its ST over ``{g, S}``, where ``g`` is a latent column named
``⟨group of T⟩`` that only these two share.  Values are text, counts integers.  Files are
read with DuckDB; the manifest's core keys suffice.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from versapub.data.sql import connect, duckdb_source
from versapub.errors import ReleaseError
from versapub.privacy.rules import Rule
from versapub.verify.identity.key_cells import suppressed_columns
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.manifest import Manifest, manifest_of
from versapub.verify.reading.reading import CountRows, group_column, parse_entry


@dataclass(frozen=True)
class PublishedRelease:
    """What an adversary sees: ``n``, the rules, the guarantee and the count tables."""

    n: int
    attributes: tuple[str, ...]
    rules: tuple[Rule, ...]
    guarantee: dict[str, Any]
    tables: tuple[CountRows, ...]
    kinds: dict[str, str]
    sensitive: dict[str, str]
    #: Per table with a suppressed group: its QI columns and the QI rows of that group
    #: (those records are left out of ``tables`` and ``n``), and each sensitive domain.
    suppressed: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...], dict[str, frozenset[str]]]] = field(
        default_factory=dict
    )
    #: Records removed by suppression (the manifest's ``removed``): in no table, so an
    #: original record whose values no table publishes is one of them, not a disclosure.
    removed: int = 0
    #: Columns whose values local suppression emptied (the manifest's ``suppressed``): there
    #: an empty value is a record's value withheld, matching any value the adversary knows.
    wildcard: frozenset[str] = frozenset()


def _read(con: duckdb.DuckDBPyConnection, path: Path, columns: list[str]) -> CountRows:
    if not path.exists():  # a file, or a directory of Parquet parts (the Dask backend's form)
        raise ReleaseError(f"The release lists {path.name}, but the file is missing from {path.parent}.")
    src = duckdb_source(path)
    try:
        rel = con.execute(f"SELECT * FROM {src}")
        names = [d[0] for d in rel.description]
        data = rel.fetchall()
    except duckdb.Error as exc:
        raise ReleaseError(f"Cannot read {path.name}: {str(exc).splitlines()[0]}.") from None
    if names != columns:
        raise ReleaseError(f"{path.name} has columns {names}, expected {columns}.")
    try:
        counts = tuple(int(r[-1]) for r in data)
    except (TypeError, ValueError):
        raise ReleaseError(f"{path.name} has a count that is not an integer.") from None
    return CountRows(path.name, tuple(columns[:-1]), tuple(tuple(str(v) for v in r[:-1]) for r in data), counts)


def read_published(
    directory: str | Path, rules: list[Rule] | None = None, manifest: Manifest | None = None
) -> PublishedRelease:
    """Read the release in ``directory`` as the adversary sees it (each table through its
    kind's view); ``rules`` override the manifest's."""
    d = Path(directory)
    try:
        m = manifest_of(d, manifest)
        n = int(m["n_records"])
        entries = [parse_entry(e, str(d / "manifest.json")) for e in m["tables"]]
        manifest_rules = [Rule.from_json(r) for r in m["rules"]]
    except FileNotFoundError:
        raise ReleaseError(f"{d} has no manifest.json; it is not a versapub release.") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"{d / 'manifest.json'} is malformed: {exc}.") from None
    opened = ExitStack()  # closed (the connection and its spill directory) below
    con = opened.enter_context(connect())
    tables: list[CountRows] = []
    kinds: dict[str, str] = {}
    sensitive: dict[str, str] = {}
    attrs: list[str] = []
    suppressed: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...], dict[str, frozenset[str]]]] = {}
    try:
        for e in entries:
            kind = reading(e.kind)
            kinds[e.name] = e.kind
            attrs += [a for a in e.attributes if a not in attrs]
            if not kind.exact_values:  # attacked by verify.attack_generalized; leaving it out only widens
                continue
            if not kind.records:  # noisy or expected counts constrain no record (the drawn-record attacks read them)
                continue
            parts = {role: _read(con, d / e.files[role], cols) for role, cols in kind.roles(e).items()}
            assert kind.view is not None  # every kind with exact values has a view
            view = kind.view(e, parts)
            if view.sensitive:
                sensitive[e.name] = view.sensitive[0]
            if view.suppressed is not None:
                if len(entries) > 1:
                    raise ReleaseError(
                        f"Table {e.name!r} has a suppressed group and the release has other tables; "
                        "the attacks handle suppression only in a single-table release."
                    )
                suppressed[e.name] = view.suppressed
            n -= view.withheld_records
            tables.extend(view.tables)
    except KeyError as exc:
        raise ReleaseError(f"{d / 'manifest.json'} lists no {exc.args[0]!r} file for a table.") from None
    finally:
        opened.close()
    return PublishedRelease(
        n,
        tuple(attrs),
        tuple(rules if rules is not None else manifest_rules),
        dict(m.get("guarantee", {})),
        tuple(tables),
        kinds,
        sensitive,
        suppressed,
        _removed_records(m),
        suppressed_columns(m),
    )


def _removed_records(m: Manifest) -> int:
    gone = m.get("removed")
    records = gone.get("records") if isinstance(gone, dict) else 0
    return records if isinstance(records, int) and not isinstance(records, bool) else 0


__all__ = ["CountRows", "PublishedRelease", "group_column", "read_published"]
