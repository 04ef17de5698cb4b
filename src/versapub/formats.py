"""The release format on the ground floor: its name, written into every manifest, and the one
reader of a release's ``manifest.json`` (``docs/release-format.md``).  Light on purpose: the
command line checks a release directory before it loads any engine; the independent verifier
checks the manifest's contents with its own rules (:mod:`versapub.verify.files.release_check`)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from versapub.errors import ReleaseError

FORMAT = "versapub-release/1"


@dataclass(frozen=True)
class TableEntry:
    """A manifest's table entry, with the keys every kind has checked (``name``,
    ``attributes``, ``kind``, ``files``: role -> file name); ``raw`` holds the entry as
    written, the kind's own keys among them (each kind reads and checks those:
    ``versapub.kinds``)."""

    name: str
    attributes: tuple[str, ...]
    kind: str
    files: dict[str, str]
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, entry: object, where: str = "manifest.json") -> TableEntry:
        """The entry checked: a :class:`ReleaseError` naming what is wrong."""
        name, attrs, kind, files = _entry_keys(entry, where)
        return cls(name, attrs, kind, files, dict(cast(dict[str, Any], entry)))


def _entry_keys(entry: object, where: str) -> tuple[str, tuple[str, ...], str, dict[str, str]]:
    if not isinstance(entry, dict):
        raise ReleaseError(f"A table entry of {where} is not an object: {entry!r}.")
    try:
        name, attrs, kind, files = entry["name"], entry["attributes"], entry["kind"], entry["files"]
    except KeyError as exc:
        raise ReleaseError(f"A table entry of {where} lacks {exc.args[0]!r} (name/attributes/kind/files).") from None
    if not isinstance(attrs, list) or not isinstance(files, dict):
        raise ReleaseError(f"Table {name!r} of {where}: 'attributes' must be a list and 'files' an object.")
    return str(name), tuple(str(a) for a in attrs), str(kind), {str(k): str(v) for k, v in files.items()}


@dataclass(frozen=True)
class Manifest(Mapping[str, Any]):
    """A release's ``manifest.json`` as read by the publisher's side (the independent
    verifier has its own reading: ``versapub.verify.reading.manifest``): the core keys checked and
    typed (``format``, ``n_records``, the ``attributes``, the ``input`` record, the
    ``hierarchies`` file names, ``notes``); the table entries parsed on demand
    (:meth:`entries`: a malformed entry is reported by whoever reads it, the verifier among
    them); every other key as written, read as a mapping (``manifest["utility"]``)."""

    path: Path
    n_records: int
    raw: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    @property
    def format(self) -> str:
        return str(self.raw["format"])

    @property
    def attributes(self) -> tuple[str, ...]:
        got = self.raw.get("attributes")
        return tuple(str(a) for a in got) if isinstance(got, list) else ()

    @property
    def input(self) -> dict[str, Any]:
        got = self.raw.get("input")
        return got if isinstance(got, dict) else {}

    @property
    def hierarchies(self) -> dict[str, str]:
        got = self.raw.get("hierarchies")
        return {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}

    @property
    def notes(self) -> tuple[str, ...]:
        got = self.raw.get("notes")
        return tuple(str(x) for x in got) if isinstance(got, list) else ()

    def entries(self) -> tuple[TableEntry, ...]:
        """Every table entry, checked (:meth:`TableEntry.parse`)."""
        return tuple(TableEntry.parse(t, str(self.path)) for t in self.raw["tables"])


def manifest_json(directory: str | Path) -> dict[str, Any]:
    """The JSON object of a release directory's ``manifest.json`` (the one reader of the
    file): a :class:`ReleaseError` when the directory, the file or its JSON is not there."""
    d = Path(directory)
    path = d / "manifest.json"
    if not d.is_dir():
        raise ReleaseError(f"{d} is not a release directory (it does not exist or is a file).")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseError(f"{d} has no manifest.json; it is not a versapub release.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{path} is not valid JSON: {exc}.") from None
    if not isinstance(manifest, dict):
        raise ReleaseError(f"{path} is not a JSON object.")
    return manifest


def read_manifest(directory: str | Path) -> Manifest:
    """The manifest of a release directory, with its core keys checked."""
    path = Path(directory) / "manifest.json"
    manifest = manifest_json(directory)
    missing = [k for k in ("format", "n_records", "tables") if k not in manifest]
    if missing:
        raise ReleaseError(f"{path} lacks the core key(s) {missing}.")
    if manifest["format"] != FORMAT:
        raise ReleaseError(f"{path}: unknown format {manifest['format']!r}; this versapub reads {FORMAT!r}.")
    n = manifest["n_records"]
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ReleaseError(f"{path}: n_records must be a positive integer, got {n!r}.")
    if not isinstance(manifest["tables"], list) or not manifest["tables"]:
        raise ReleaseError(f"{path}: 'tables' must be a non-empty list.")
    return Manifest(path, n, manifest)


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (the input fingerprint recorded in the manifest)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _finite(obj: Any) -> Any:
    """``obj`` with every float that is not a finite number replaced by ``None``."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def json_text(obj: Any, indent: int | None = None) -> str:
    """The one JSON writer of every file and answer the tool writes: valid JSON always
    (``allow_nan=False``; a number that is not defined — a measure that does not apply — is
    written as ``null``), keys in the given order."""
    return json.dumps(_finite(obj), indent=indent, allow_nan=False)
