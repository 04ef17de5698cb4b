"""One check's outcome, as every part of the verifier records it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One check's outcome: the check, whether it passed, its sentence, the file or table, and
    whether a passed check still needs the steward's attention (the verdict *needs attention*:
    an older release whose files cannot be shown unchanged, say)."""

    check: str
    ok: bool
    message: str
    file: str | None = None
    attention: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "ok": self.ok, "message": self.message, "file": self.file}
        if self.attention:
            out["attention"] = True
        return out
