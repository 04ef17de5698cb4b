"""One check's outcome, as every part of the verifier records it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One check's outcome: the check, whether it passed, its sentence, the file or table."""

    check: str
    ok: bool
    message: str
    file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "message": self.message, "file": self.file}
