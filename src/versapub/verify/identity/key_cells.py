"""The verifier's reading of the key variables and of local suppression (issue 65), from the
release's files and manifest alone.

* **Keys.**  ``check --keys`` names them; else the manifest's ``job.keys`` (what the release
  claims its floor counted); else every column a table publishes as cells.  A table holding
  none of them is one cell.
* **Local suppression.**  A manifest whose ``suppressed`` block says ``"reading": "matches
  any value"`` published suppressed key values empty; a record's cell is then every record
  *compatible* with it — equal on each key where neither value is empty (sdcMicro's
  ``freqCalc`` with ``alpha = 1``).  The sizes are computed here on the distinct published
  rows: for every pair of emptiness patterns, the rows of the second summed per combination
  of the keys both hold (a sort-based group-by), without any code of the publisher's.
* **The suppression count.**  Each column's empty values in the release minus the input's
  must be the count the manifest states, no other value may be published more often than
  the input holds it, and the records touched lie between the largest column count and the
  sum (within the job's ``--suppression`` share when it set one)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from versapub.data.source import Source
from versapub.data.sql import duckdb_source
from versapub.data.sql import ident as _ident
from versapub.data.table import EncodedTable
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.reading import parse_entry

#: The value a suppressed key is published as.
EMPTY = ""


def keys_of(manifest: dict[str, Any], given: list[str] | None) -> list[str] | None:
    """The key variables: ``given`` (``check --keys``), else the manifest's ``job.keys``
    (``None``: every published cell column)."""
    if given is not None:
        return list(given)
    job = manifest.get("job")
    raw = job.get("keys") if isinstance(job, dict) else None
    return [str(a) for a in raw] if isinstance(raw, list) else None


def excluded_of(manifest: dict[str, Any], given: list[str] | None) -> set[str]:
    """Without keys named (by ``check --keys`` or the release), the columns the release says
    its floor left out (``job.keys_excluded``: perturbed by a treatment, counted only when
    named)."""
    job = manifest.get("job")
    raw = job.get("keys_excluded") if isinstance(job, dict) else None
    if given is not None or keys_of(manifest, None) is not None or not isinstance(raw, list):
        return set()
    return {str(a) for a in raw}


def matches_any(manifest: dict[str, Any]) -> bool:
    """Does the release read an empty key value as matching any value (local suppression)?"""
    block = manifest.get("suppressed")
    return isinstance(block, dict) and block.get("reading") == "matches any value"


def compatible_sizes(con: Any, path: Path, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct published row over ``keys``: the records compatible with it (an empty
    value matching any value) and the records it holds."""
    cols = ", ".join(_ident(a) for a in keys)
    cnt = 'sum(CAST(round(CAST("count" AS DOUBLE)) AS BIGINT))'
    rows = con.execute(f"SELECT {cols}, {cnt} FROM {duckdb_source(path)} GROUP BY {cols}").fetchall()
    counts = np.array([int(r[-1]) for r in rows], dtype=np.int64)
    if not rows:
        return counts, counts
    values = np.array([[EMPTY if v is None else str(v) for v in r[:-1]] for r in rows], dtype=object)
    codes = np.stack([np.unique(values[:, j], return_inverse=True)[1].ravel() for j in range(len(keys))], axis=1)
    empty = values == EMPTY
    patterns, which = np.unique(empty, axis=0, return_inverse=True)
    which = which.ravel()
    sizes = np.zeros(len(rows), dtype=np.int64)
    for p in range(len(patterns)):
        mine = np.flatnonzero(which == p)
        for q in range(len(patterns)):
            theirs = np.flatnonzero(which == q)
            both = ~(patterns[p] | patterns[q])
            if not both.any():
                sizes[mine] += int(counts[theirs].sum())
                continue
            joined = codes[np.concatenate([mine, theirs])][:, both]
            ids = np.unique(joined, axis=0, return_inverse=True)[1].ravel()
            sums = np.bincount(ids[len(mine) :], weights=counts[theirs], minlength=int(ids.max()) + 1)
            sizes[mine] += np.rint(sums[ids[: len(mine)]]).astype(np.int64)
    return sizes, counts


def suppressed_columns(manifest: Any) -> frozenset[str]:
    """The columns whose values local suppression emptied (the manifest's ``suppressed``):
    the input cannot show which, so the comparisons with it leave them out."""
    block = manifest.get("suppressed") if isinstance(manifest, dict) else None
    cells = block.get("cells") if isinstance(block, dict) else None
    return frozenset(str(a) for a, c in cells.items() if c) if isinstance(cells, dict) else frozenset()


def shared_keys(manifest: dict[str, Any], keys: list[str] | None) -> list[tuple[str, list[str]]]:
    """Key columns two tables publish (``(column, tables)``): a value matching any value has
    no reading across tables joined on them (the collection checks read tables together)."""
    held: dict[str, list[str]] = {}
    for e in manifest.get("tables", []):
        if not isinstance(e, dict):
            continue
        for a in e.get("attributes") or []:
            if keys is None or a in keys:
                held.setdefault(str(a), []).append(str(e.get("name")))
    return [(a, ts) for a, ts in held.items() if len(ts) > 1]


def suppression_findings(
    directory: Path, manifest: dict[str, Any], original: Source | None, con: Any
) -> list[tuple[bool, str]]:
    """The ``suppressed`` block against the files (and, given, the input as recoded)."""
    block = manifest.get("suppressed")
    if block is None:
        return []
    if not isinstance(block, dict) or block.get("mode") != "cells" or not isinstance(block.get("cells"), dict):
        return [(False, f"the suppressed block must state mode 'cells' and cells per column, got {block!r}")]
    cells = {str(a): block["cells"][a] for a in block["cells"]}
    bad = [a for a, c in cells.items() if isinstance(c, bool) or not isinstance(c, int) or c < 0]
    records = block.get("records")
    if bad or isinstance(records, bool) or not isinstance(records, int):
        return [
            (False, f"the suppressed block's counts must be whole numbers, got cells {cells!r}, records {records!r}")
        ]
    out: list[tuple[bool, str]] = []
    low, high = max(cells.values(), default=0), sum(cells.values())
    if not low <= records <= high:
        out.append(
            (False, f"{records} record(s) with a suppressed value, outside [{low}, {high}] (the cells per column)")
        )
    job = manifest.get("job")
    share = job.get("suppression") if isinstance(job, dict) else None
    if isinstance(share, int | float) and share > 0:
        limit = math.floor(share * int(manifest.get("n_records", 0)))
        if records > limit:
            out.append((False, f"{records} record(s) with a suppressed value, above floor({share:g} x n) = {limit}"))
    # a treated column's values are not the input's: it is checked from the files alone
    treated = {str(c) for r in manifest.get("treatments") or [] if isinstance(r, dict) for c in r.get("columns") or []}
    for a, claimed in cells.items():
        out += _column(directory, manifest, a, claimed, None if a in treated else original, con)
    if not out:
        total = sum(cells.values())
        out.append((True, f"{total:,} key value(s) suppressed in {records:,} record(s), as the files show"))
    return out


def _column(
    directory: Path, manifest: dict[str, Any], a: str, claimed: int, original: Source | None, con: Any
) -> list[tuple[bool, str]]:
    """One column's suppressed count: its published values against the input's."""
    published = _published_values(directory, manifest, a, con)
    if published is None:
        return [(False, f"{a!r} is suppressed, but no table publishes it as cells")]
    empties = published.get(EMPTY, 0)
    if not isinstance(original, EncodedTable) or a not in original.names:
        ok = empties >= claimed
        return [] if ok else [(False, f"{a!r}: {claimed} value(s) suppressed, but the release holds {empties} empty")]
    col = original.column(a)
    held = dict(zip(col.values.tolist(), np.bincount(col.codes, minlength=col.cardinality).tolist(), strict=True))
    out = []
    more = sorted(v for v, c in published.items() if v != EMPTY and c > held.get(v, 0))
    if more:
        out.append((False, f"{a!r}: value(s) {more[:3]} published more often than the input holds them"))
    if empties - held.get(EMPTY, 0) != claimed:
        out.append(
            (
                False,
                f"{a!r}: the manifest says {claimed} value(s) suppressed; the release holds "
                f"{empties - held.get(EMPTY, 0)} more empty value(s) than the input",
            )
        )
    return out


def _published_values(directory: Path, manifest: dict[str, Any], a: str, con: Any) -> dict[str, int] | None:
    """How many records each value of ``a`` holds in the first table that publishes it as a
    cell column (``None``: none does)."""
    for e in manifest.get("tables", []):
        entry = parse_entry(e)
        kind = reading(entry.kind)
        if not kind.records:
            continue
        role, keys = kind.cells(entry)
        path = directory / entry.files.get(role, "")
        if a not in keys or not path.is_file():
            continue
        col = _ident(a)
        rows = con.execute(
            f'SELECT {col}, sum(CAST(round(CAST("count" AS DOUBLE)) AS BIGINT)) FROM {duckdb_source(path)} '
            f"GROUP BY {col}"
        ).fetchall()
        return {EMPTY if v is None else str(v): int(c) for v, c in rows}
    return None
