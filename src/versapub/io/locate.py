"""Finding the files a release names: by default a release records its input's and
hierarchies' *file names* and SHA-256 only (an absolute path such as
``/data/patients_2024/...`` can itself be confidential), so ``check``, ``evaluate``,
``query`` and ``marginals inject`` look for them beside the release directory, then in the
current directory, then — for a file whose SHA-256 the release records — among versapub's
own embedded datasets (the demo's input); a path recorded with ``--record-input-path`` is
tried first.  A file of the right name with another SHA-256 is passed over, never read.
Confined to a folder (``within``: the web server's root), only places inside it are tried:
beside the release, then anywhere under the folder (a few levels deep), never an absolute
path, the current directory or the embedded datasets."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: How deep a confined search walks under its folder (as the web page's file listing).
DEPTH = 4


def places(
    recorded: str, release_dir: Path | None, sha256: str | None = None, within: Path | None = None
) -> list[Path]:
    """Where a recorded file is looked for, in order; ``within``: only inside that folder."""
    if within is not None:
        return _confined(Path(recorded).name, release_dir, within.resolve())
    p = Path(recorded)
    out = [p] if p.is_absolute() else []
    if release_dir is not None:
        out.append(release_dir.resolve().parent / p.name)
    out.append(Path.cwd() / p.name)
    if sha256 and p.name:  # only a file the digest identifies may come from elsewhere
        out += sorted((Path(__file__).resolve().parent.parent / "datasets" / "data").rglob(p.name))
    return list(dict.fromkeys(out))


#: Folders a walk never enters, besides those starting with a dot.
SKIPPED = ("node_modules", "__pycache__")


Walked = Iterator[tuple[Path, list[str], list[str]]]


def walk(root: Path, depth: int = DEPTH, skipped: tuple[str, ...] = SKIPPED) -> Walked:
    """``os.walk`` of ``root`` at most ``depth`` levels down, dot-folders and ``skipped``
    left out, links to folders not followed; the caller may prune ``dirs`` in place."""
    start = len(root.parts)
    for here, dirs, files in os.walk(root, followlinks=False):
        d = Path(here)
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x not in skipped)
        if len(d.parts) - start >= depth:
            dirs[:] = []
        yield d, dirs, files


def _confined(name: str, release_dir: Path | None, root: Path) -> list[Path]:
    """Files called ``name`` inside ``root``: beside the release first, then the folder's own
    (dot-folders skipped, links leading out never followed)."""
    if not name:
        return []
    out = []
    if release_dir is not None:
        beside = release_dir.resolve().parent / name
        if _inside(root, beside):
            out.append(beside)
    for d, _, files in walk(root):
        if name in files and _inside(root, d / name):
            out.append((d / name).resolve())
    return list(dict.fromkeys(out))


def _inside(root: Path, p: Path) -> bool:
    full = p.resolve()
    return full == root or root in full.parents


@dataclass(frozen=True)
class Found:
    """The file found (``None``: none), and the files of that name passed over for their digest."""

    path: Path | None
    passed_over: tuple[Path, ...] = ()
    within: Path | None = None

    def explain(self, recorded: str, what: str) -> str:
        """Why nothing was found, in one sentence."""
        other = (
            (
                f" ({', '.join(str(p) for p in self.passed_over)} has that name but another sha256: it changed "
                "since publishing, or is another file)"
            )
            if self.passed_over
            else ""
        )
        where = (
            f"under the served folder {self.within}"
            if self.within is not None
            else "beside the release or in the current directory"
        )
        return f"The release records {what} as {recorded!r} and no file of that name was found {where}{other}"


def locate(recorded: str, release_dir: Path | None, sha256: str | None = None, within: Path | None = None) -> Found:
    """The first of :func:`places` that is a file with the recorded ``sha256`` (any, without
    one); ``within``: only files inside that folder are looked at."""
    from versapub.formats import file_sha256

    skipped = []
    for p in places(recorded, release_dir, sha256, within):
        if not p.is_file():
            continue
        if sha256 and file_sha256(p) != sha256:
            skipped.append(p)
            continue
        return Found(p, tuple(skipped), within)
    return Found(None, tuple(skipped), within)
