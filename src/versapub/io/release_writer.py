"""Writing a release's files: tables (as each kind names them) and ``manifest.json`` into a
hidden temporary directory beside the destination, and the atomic move into place.

This module only writes; :func:`versapub.workflow.write_release` puts the steps together
(stage, write, verify from the files, add the reports, commit), so a failure at any point
leaves no partial or unverified release behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.errors import ReleaseError
from versapub.formats import json_text
from versapub.io import workdirs
from versapub.io.safety import check_destination
from versapub.kinds import entry_of, get_kind
from versapub.release.value import Release


def _write_listing(columns: list[str], rows: list[tuple[str, ...]], path: Path, fmt: str) -> None:
    """A listing (text columns, no counts; ``group_id`` an integer), e.g. the leaves of
    generalized values, or the value sets of SA-groups."""
    table = pa.table(
        {
            c: pa.array([int(r[i]) for r in rows], type=pa.int64())
            if c == "group_id"
            else pa.array([r[i] for r in rows], type=pa.string())
            for i, c in enumerate(columns)
        }
    )
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        pacsv.write_csv(table, path, write_options=pacsv.WriteOptions(quoting_style="needed"))


def _files(release: Release, fmt: str) -> dict[str, dict[str, str]]:
    ext = "parquet" if fmt == "parquet" else "csv"
    return {t.name: get_kind(t.kind).file_names(t.name, ext) for t in release.tables}


@contextmanager
def staging(dest: Path, overwrite: bool, protect: Iterable[str | Path | None]) -> Iterator[Path]:
    """A hidden temporary directory beside ``dest`` (after checking that ``dest`` may be
    written at all); removed, with everything in it, if the block fails. Staging
    directories of earlier runs towards ``dest`` whose process is gone (killed before it
    could remove them) are removed first (:mod:`versapub.io.workdirs`)."""
    check_destination(dest, overwrite, protect)
    workdirs.sweep(dest.parent, f".{dest.name}.tmp-")
    tmp = workdirs.claim(dest.parent / f".{dest.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        yield tmp
    finally:  # committed: only the mark is left; failed: the directory too
        workdirs.remove(tmp)


def write_files(release: Release, directory: Path, fmt: str) -> dict[str, dict[str, str]]:
    """Write every table's files (each kind names its own) and ``manifest.json`` into
    ``directory``; return the file names per table.  Writing only: no checks."""
    if fmt not in ("csv", "parquet"):
        raise ReleaseError(f"Unknown release format {fmt!r}; use csv or parquet.")
    t0 = time.perf_counter()
    files = _files(release, fmt)
    for t in release.tables:
        kind = get_kind(t.kind)
        for role, ct in t.table.parts.items():
            ct.write(directory / files[t.name][role], fmt)
        columns = kind.listing_roles(entry_of(t.name, t.table))
        for role, rows in kind.listings(t.table).items():
            _write_listing(columns[role], rows, directory / files[t.name][role], fmt)
    for attr, name in release.hierarchy_files().items():  # ARX format, the domain's leaves only
        domain = {str(v) for v in release.source.column(attr).values}
        rows = sorted(row for row in release.hierarchies[attr].levels if row[0] in domain)
        (directory / name).write_text("".join(";".join(r) + "\n" for r in rows), encoding="utf-8")
    release.timings["write"] = time.perf_counter() - t0
    rewrite_manifest(release, directory, files)
    return files


def digests(directory: Path, names: Iterable[str]) -> dict[str, str]:
    """The SHA-256 of every file ``names`` lists in ``directory`` (a directory of Parquet
    parts: each part, as ``directory/part``), by relative path in sorted order."""
    out: dict[str, str] = {}
    for name in sorted(set(names)):
        path = directory / name
        parts = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for p in parts:
            h = hashlib.sha256()
            with p.open("rb") as f:
                while block := f.read(1 << 20):
                    h.update(block)
            out[p.relative_to(directory).as_posix()] = h.hexdigest()
    return out


def rewrite_manifest(release: Release, directory: Path, files: dict[str, dict[str, str]]) -> None:
    """``manifest.json`` of ``release`` (whose tables are written as ``files``), with the
    digest of every file it lists (tables, listings, hierarchies)."""
    manifest = release.manifest({t.name: entry_of(t.name, t.table, files[t.name]).raw for t in release.tables})
    manifest["timings_s"] = {k: round(v, 4) for k, v in release.timings.items()}
    listed = [f for per in files.values() for f in per.values()] + list(release.hierarchy_files().values())
    manifest["digests"] = digests(directory, listed)
    (directory / "manifest.json").write_text(json_text(manifest, indent=2) + "\n", encoding="utf-8")


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json_text(data, indent=2) + "\n", encoding="utf-8")


def commit(tmp: Path, dest: Path, overwrite: bool, protect: Iterable[str | Path | None]) -> None:
    """Move the finished ``tmp`` into place atomically (replacing an earlier release only
    if it still holds nothing of the user's)."""
    if dest.exists():
        check_destination(dest, overwrite, protect)  # nothing foreign appeared meanwhile
        old = dest.parent / f".{dest.name}.old-{uuid.uuid4().hex[:12]}"
        os.rename(dest, old)
        os.rename(tmp, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, dest)
