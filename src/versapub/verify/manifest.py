"""The verifier's reading of ``manifest.json``: parsed once per ``check`` (``run_check``
hands the parsed manifest to every check and attack) and here for a check run on its own.
The verifier validates the manifest's contents with its own rules (``release_check``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Manifest = dict[str, Any]


def manifest_of(directory: str | Path, given: Manifest | None = None) -> Manifest:
    """``given`` when the caller has parsed the manifest already, else the directory's."""
    if given is not None:
        return given
    parsed: Manifest = json.loads((Path(directory) / "manifest.json").read_text(encoding="utf-8"))
    return parsed
