"""The verifier's check of the files against the digests the manifest records.

A reader trusts what the tables say, a hierarchy copied into the release (t-closeness's
hierarchical distance), a listing of generalized values; each can be replaced after
publishing without breaking any other check.  ``manifest.json``'s ``digests`` maps every
file the manifest lists — each part of a partitioned table — to its SHA-256
(``docs/release-format.md``); this module recomputes them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from versapub.verify.finding import Finding


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def listed_files(directory: Path, manifest: dict[str, Any]) -> list[str]:
    """Every file the manifest lists (tables' files and listings, hierarchies), each part of a
    partitioned table by its relative path."""
    names = [str(f) for e in manifest.get("tables", []) if isinstance(e, dict) for f in (e.get("files") or {}).values()]
    names += [str(f) for f in (manifest.get("hierarchies") or {}).values()]
    out: list[str] = []
    for name in sorted(set(names)):
        path = directory / name
        if path.is_dir():
            out += sorted(p.relative_to(directory).as_posix() for p in path.rglob("*") if p.is_file())
        else:
            out.append(name)
    return out


def digests_ok(directory: Path, manifest: dict[str, Any]) -> Finding:
    """Every listed file present with the digest the manifest records, and no digest of a
    file the manifest does not list."""
    if "digests" not in manifest:  # a release written before digests existed (docs/release-format.md)
        return Finding(
            "digests",
            True,
            "the manifest records no SHA-256 digests of its files (a release written before versapub recorded "
            "them): its files cannot be shown unchanged since publication; publish it again to record them",
            attention=True,
        )
    recorded = manifest.get("digests")
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        return Finding(
            "digests",
            False,
            "the manifest's 'digests' must map every listed file to its SHA-256: a table, listing or hierarchy "
            "could have been replaced unnoticed",
        )
    files = listed_files(directory, manifest)
    missing = [f for f in files if f not in recorded]
    extra = [f for f in recorded if f not in files]
    changed = [
        f for f in files if f in recorded and (not (directory / f).is_file() or _sha256(directory / f) != recorded[f])
    ]
    problems = []
    if changed:
        problems.append(f"{len(changed)} file(s) differ from their recorded SHA-256: {', '.join(changed[:5])}")
    if missing:
        problems.append(f"no digest recorded for {', '.join(missing[:5])}")
    if extra:
        problems.append(f"digests of files the manifest does not list: {', '.join(extra[:5])}")
    if problems:
        return Finding("digests", False, "; ".join(problems) + " (a file was replaced or edited after publishing)")
    return Finding("digests", True, f"all {len(files)} listed file(s) match their recorded SHA-256 digests")
