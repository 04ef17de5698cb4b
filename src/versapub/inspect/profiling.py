"""``profile``: a data file as it was read — the delimiter it seems to use, the first rows,
and per column its number of values, share of unique values, missing cells and what the
tool would warn about (a likely identifier, a near-unique column, a date, a zip code, a
missing-value marker) — for deciding every column before publishing (the web interface's
data and column screens)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from versapub.data.order import date_key
from versapub.io.config import PublishConfig
from versapub.io.read import marker_notes, sniff_delimiter
from versapub.privacy.screens.roles import ColumnRoles, forgotten_quasi_identifiers, likely_identifiers, unique_share

#: Rows shown.
PREVIEW_ROWS = 12


@dataclass(frozen=True)
class ColumnProfile:
    """One column as read, with the tool's warnings about it."""

    name: str
    values: int
    unique_share: float
    missing: int
    warnings: tuple[str, ...] = ()
    #: A role the warnings suggest (``identifying``, ``quasi_identifying``) or "".
    suggested: str = ""
    date: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "values": self.values,
            "unique_share": round(self.unique_share, 4),
            "missing": self.missing,
            "warnings": list(self.warnings),
            "suggested": self.suggested,
            "date": self.date,
        }


@dataclass(frozen=True)
class Profile:
    """A data file as read with a configuration's reading options."""

    input: str
    records: int
    dropped: int
    delimiter: str | None
    sniffed: str | None
    columns: tuple[ColumnProfile, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "records": self.records,
            "dropped": self.dropped,
            "delimiter": self.delimiter,
            "sniffed": self.sniffed,
            "columns": [c.to_dict() for c in self.columns],
            "rows": [list(r) for r in self.rows],
            "notes": list(self.notes),
        }


def profile(config: PublishConfig) -> Profile:
    """Read ``config``'s input with its reading options (delimiter, header, markers, missing
    policy ``value`` unless one is set: every record kept) and describe every column."""
    cfg = config if config.missing != "error" else config.with_overrides(missing="value")
    table = cfg.read()
    sniffed = None if cfg.input_format == "parquet" or cfg.input.suffix == ".parquet" else sniff_delimiter(cfg.input)
    suspects, name_notes = likely_identifiers(table, [], ColumnRoles())
    flagged = {s.column: s for s in suspects}
    forgotten = forgotten_quasi_identifiers(table, [], ColumnRoles())
    markers = marker_notes(table, cfg.na_values)
    cols = []
    for name in table.names:
        col = table.column(name)
        warns: list[str] = []
        suggested = ""
        if name in flagged:
            warns.append("likely identifier: " + "; ".join(flagged[name].reasons))
            suggested = "identifying"
        warns += [n for n in name_notes if n.startswith(f"column {name!r}")]
        for note in forgotten:
            if note.startswith(f"column {name!r}"):
                warns.append(note)
                suggested = suggested or "quasi_identifying"
        warns += [n for n in markers if n.startswith(f"column {name!r}")]
        sample = [str(v) for v in col.values[:200]]
        dated = bool(sample) and sum(date_key(v) is not None or _iso(v) for v in sample) >= 0.9 * len(sample)
        missing = int(col.counts()[np.flatnonzero(np.char.strip(col.values.astype(str)) == "")].sum())
        cols.append(
            ColumnProfile(name, col.cardinality, unique_share(table, name), missing, tuple(warns), suggested, dated)
        )
    n = min(PREVIEW_ROWS, table.n_rows)
    rows = tuple(zip(*(table.column(c).decode(table.codes(c)[:n]).astype(str) for c in table.names), strict=True))
    return Profile(
        input=str(cfg.input),
        records=table.n_rows,
        dropped=table.n_dropped,
        delimiter=cfg.delimiter,
        sniffed=sniffed[0] if sniffed else None,
        columns=tuple(cols),
        rows=tuple(tuple(str(v) for v in r) for r in rows),
        notes=tuple(cfg.notes),
    )


def _iso(value: str) -> bool:
    v = value.strip()
    return len(v) == 10 and v[4] == "-" and v[7] == "-" and v[:4].isdigit() and v[5:7].isdigit() and v[8:].isdigit()
