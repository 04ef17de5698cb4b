"""The population the published records were drawn from (Nergiz, Atzori & Clifton,
SIGMOD 2007: the public table ``P`` with the private table ``T`` a subset of it; Sweeney's
k-map: the population an attacker knows a person belongs to).

Given with ``--population FILE`` (Python: ``publish(..., population=...)``), it is what
delta-presence and exact k-map are checked against: every published equivalence class is
matched to the population records its generalized values cover.  The input is then the
research subset: every one of its combinations of quasi-identifier values must occur at
least as often in the population (the anonymizers check it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from versapub.data.table import EncodedTable


@dataclass(frozen=True)
class Population:
    """The population table (its columns include the quasi-identifiers of every rule it
    serves), the file it was read from (as recorded) and that file's SHA-256."""

    table: EncodedTable
    file: str = "<memory>"
    sha256: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.table, EncodedTable):
            raise TypeError("a population is an EncodedTable (read with versapub.read_table)")

    @property
    def size(self) -> int:
        """Records in the population."""
        return self.table.n_rows

    def to_manifest(self) -> dict[str, Any]:
        """What the manifest records of it (``population``: file, digest, records)."""
        return {"file": self.file, "sha256": self.sha256, "records": self.size}
