"""The release format on the ground floor: its name, written into every manifest, and the one
reader of a release's ``manifest.json`` (``docs/release-format.md``).  Light on purpose: the
command line checks a release directory before it loads any engine; the independent verifier
checks the manifest's contents with its own rules (:mod:`versapub.verify.release_check`)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from versapub.errors import ReleaseError

FORMAT = "versapub-release/1"


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a release directory, with its core keys checked."""
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
    return manifest


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
