"""Finding the files a release names: by default a release records its input's and
hierarchies' *file names* and SHA-256 only (an absolute path such as
``/data/patients_2024/...`` can itself be confidential), so ``check``, ``evaluate``,
``query`` and ``marginals inject`` look for them beside the release directory, then in the
current directory, then — for a file whose SHA-256 the release records — among versapub's
own embedded datasets (the demo's input); a path recorded with ``--record-input-path`` is
tried first.  A file of the right name with another SHA-256 is passed over, never read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def places(recorded: str, release_dir: Path | None, sha256: str | None = None) -> list[Path]:
    """Where a recorded file is looked for, in order."""
    p = Path(recorded)
    out = [p] if p.is_absolute() else []
    if release_dir is not None:
        out.append(release_dir.resolve().parent / p.name)
    out.append(Path.cwd() / p.name)
    if sha256 and p.name:  # only a file the digest identifies may come from elsewhere
        out += sorted((Path(__file__).resolve().parent.parent / "datasets" / "data").rglob(p.name))
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Found:
    """The file found (``None``: none), and the files of that name passed over for their digest."""

    path: Path | None
    passed_over: tuple[Path, ...] = ()

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
        return (
            f"The release records {what} as {recorded!r} and no file of that name was found beside the release "
            f"or in the current directory{other}"
        )


def locate(recorded: str, release_dir: Path | None, sha256: str | None = None) -> Found:
    """The first of :func:`places` that is a file with the recorded ``sha256`` (any, without one)."""
    from versapub.formats import file_sha256

    skipped = []
    for p in places(recorded, release_dir, sha256):
        if not p.is_file():
            continue
        if sha256 and file_sha256(p) != sha256:
            skipped.append(p)
            continue
        return Found(p, tuple(skipped))
    return Found(None, tuple(skipped))
