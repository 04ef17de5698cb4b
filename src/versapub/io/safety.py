"""Where a release may be written: never over a user's files.

``--overwrite`` replaces a directory only if it *is* a versapub release (its
``manifest.json`` names the format) holding nothing but the release's own files; the
destination may never be, or contain, the input file, a hierarchy file or the
configuration the run read.  Every refusal is a one-paragraph :class:`ReleaseError`
naming the directory and what is in the way.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from versapub.errors import ReleaseError
from versapub.formats import FORMAT, manifest_json

#: Files a release directory holds besides the tables its manifest lists.
RELEASE_EXTRAS = frozenset({"manifest.json", "verification.json", "check.json", "report.md", "report.html"})


def _listed_files(manifest: dict[str, object]) -> set[str]:
    out: set[str] = set()
    tables = manifest.get("tables")
    for entry in tables if isinstance(tables, list) else []:
        files = entry.get("files") if isinstance(entry, dict) else None
        if isinstance(files, dict):
            out.update(str(f) for f in files.values())
    hierarchies = manifest.get("hierarchies")
    if isinstance(hierarchies, dict):
        out.update(str(f) for f in hierarchies.values())
    return out


def foreign_entries(directory: Path) -> list[str] | None:
    """``None`` when ``directory`` is not a versapub release; otherwise the names of the
    entries in it that the release does not own (empty: safe to replace)."""
    try:
        manifest = manifest_json(directory)  # the release format's one reader of the file
    except (OSError, ReleaseError):
        return None
    if manifest.get("format") != FORMAT:
        return None
    own = RELEASE_EXTRAS | _listed_files(manifest)
    return sorted(p.name + ("/" if p.is_dir() else "") for p in directory.iterdir() if p.name not in own)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def check_destination(dest: Path, overwrite: bool, protected: Iterable[str | Path | None] = ()) -> None:
    """Refuse a destination that would lose a user's file (see the module docstring)."""
    target = dest.resolve()
    for p in protected:
        if p is None:
            continue
        src = Path(p).resolve()
        if _inside(src, target):
            raise ReleaseError(
                f"The output directory {dest} is or contains {p}, which this run reads; writing the release "
                "there could destroy it. Choose an output directory outside the input's folder, e.g. a new "
                "sub-folder such as --out release/."
            )
    if dest.is_symlink():
        raise ReleaseError(f"{dest} is a symbolic link; give the real directory as the output (nothing was written).")
    if not dest.exists():
        return
    if dest.is_dir() and not any(dest.iterdir()):
        return  # an empty directory (e.g. made beforehand): nothing in it can be lost
    if not dest.is_dir():
        raise ReleaseError(
            f"{dest} exists and is not a directory; choose another output directory (nothing was written)."
        )
    if not overwrite:
        raise ReleaseError(
            f"{dest} already exists; choose another output directory, or pass --overwrite to replace it "
            "(only an earlier versapub release is ever replaced)."
        )
    foreign = foreign_entries(dest)
    if foreign is None:
        raise ReleaseError(
            f"{dest} exists and is not a versapub release (it has no manifest.json of format {FORMAT}), so "
            "--overwrite will not replace it: versapub only ever replaces its own releases. Choose a new "
            "output directory, or move that directory away yourself."
        )
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise ReleaseError(
            f"{dest} is a versapub release but also holds file(s) that are not part of it ({shown}); "
            "--overwrite would delete them, so nothing was written. Move them out of the directory or "
            "choose another output directory."
        )
