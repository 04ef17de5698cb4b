"""The served folder: every path the browser names is resolved inside ``--root`` (symlinks
followed first), or refused; nothing outside it is ever read or written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from versapub.errors import ConfigError
from versapub.io.locate import walk

#: File kinds the file browser lists.
DATA = (".csv", ".tsv", ".txt", ".gz", ".parquet", ".pq")
#: Folders never listed (the tool's own, version control, environments).
HIDDEN = (".git", ".venv", "node_modules", "__pycache__")
#: How deep the listing walks.
DEPTH = 4
#: Entries listed at most.
MAX_ENTRIES = 2_000


class OutsideRoot(ConfigError):
    """A path that leaves the served folder."""


@dataclass(frozen=True)
class Root:
    """The served folder (absolute, symlinks resolved)."""

    path: Path

    @classmethod
    def of(cls, path: str | Path) -> Root:
        p = Path(path).expanduser().resolve()
        if not p.is_dir():
            raise ConfigError(f"--root {path}: not a folder.")
        return cls(p)

    def resolve(self, rel: str) -> Path:
        """``rel`` (a path relative to the root, ``/`` separated) as an absolute path inside
        the root; absolute paths, ``..`` leaving it and symlinks pointing out are refused."""
        if not isinstance(rel, str) or not rel.strip() or "\x00" in rel:
            raise OutsideRoot("Give a path inside the served folder.")
        given = Path(rel)
        if given.is_absolute() or rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
            raise OutsideRoot(f"{rel!r}: give a path relative to the served folder, not an absolute one.")
        full = (self.path / given).resolve()
        if full != self.path and self.path not in full.parents:
            raise OutsideRoot(f"{rel!r} lies outside the served folder; only files under it can be used.")
        return full

    def hide(self, text: str) -> str:
        """``text`` with the served folder's absolute path left out (its files named relative
        to it): no page message shows where the server keeps them (issue 66)."""
        return text.replace(str(self.path) + "/", "").replace(str(self.path), ".")

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.path).as_posix()

    def folders(self) -> list[Path]:
        """The folders under the root the listing walks (dot-folders and links left out)."""
        out = []
        for d, dirs, _ in walk(self.path, DEPTH, HIDDEN):
            out += [d / x for x in dirs]
        return out[:MAX_ENTRIES]

    def listing(self) -> dict[str, list[str]]:
        """Data files, configurations (``.toml``), hierarchies (``.csv`` too) and releases
        (folders with a ``manifest.json``) under the root, relative, sorted."""
        data: list[str] = []
        configs: list[str] = []
        releases: list[str] = []
        for d, dirs, files in walk(self.path, DEPTH, HIDDEN):
            if "manifest.json" in files:
                releases.append(self.relative(d))
                dirs[:] = []
                continue
            for f in sorted(files):
                p = d / f
                if p.is_symlink() and not _inside(self.path, p):
                    continue
                if f.lower().endswith(DATA):
                    data.append(self.relative(p))
                elif f.lower().endswith(".toml"):
                    configs.append(self.relative(p))
            if len(data) + len(configs) + len(releases) > MAX_ENTRIES:
                break
        return {"data": data, "configs": configs, "releases": releases}


def _inside(root: Path, p: Path) -> bool:
    full = p.resolve()
    return full == root or root in full.parents
