"""What every resumable experiment shares: its settings recorded beside the results (a
directory holding results of other settings is refused), and ``runs.csv`` kept to complete
rows and appended one task at a time, so an interrupted run resumes."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from versapub.errors import ConfigError


def cell(v: Any) -> Any:
    """A value as written to ``runs.csv``."""
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.10g}"
    return "" if v is None else v


def read_runs(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def record_settings(
    out: Path, mine: Mapping[str, Any], may_differ: Collection[str] = (), defaults: Mapping[str, Any] | None = None
) -> None:
    """Write ``out/settings.json``; refuse when it holds other settings (keys in
    ``may_differ`` aside; keys added since it was written take ``defaults``)."""
    out.mkdir(parents=True, exist_ok=True)
    sfile = out / "settings.json"
    if sfile.is_file():
        theirs = {**(defaults or {}), **json.loads(sfile.read_text(encoding="utf-8"))}
        if {k: v for k, v in theirs.items() if k not in may_differ} != {
            k: v for k, v in mine.items() if k not in may_differ
        }:
            raise ConfigError(
                f"{out} holds results of different settings ({theirs}); use another --out or delete it to start over."
            )
    sfile.write_text(json.dumps(dict(mine), indent=2) + "\n", encoding="utf-8")


class Runs:
    """``runs.csv`` with the columns ``fields``: rows of an interrupted run that miss a
    field are dropped when it is opened; :meth:`append` writes one row and flushes."""

    def __init__(self, path: Path, fields: Sequence[str]) -> None:
        self.path, self.fields = path, list(fields)
        self.rows = [r for r in read_runs(path) if None not in r and all(r.get(k) is not None for k in self.fields)]
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.fields)
            w.writeheader()
            w.writerows(self.rows)

    def done(self, keys: Sequence[str]) -> set[tuple[str, ...]]:
        """The ``keys`` of the rows already there."""
        return {tuple(r[k] for k in keys) for r in self.rows}

    def append(self, *rows: Mapping[str, Any]) -> None:
        """Write rows (one task's) in one write."""
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=self.fields).writerows({k: cell(r.get(k)) for k in self.fields} for r in rows)
        with self.path.open("a", encoding="utf-8", newline="") as f:
            f.write(buf.getvalue())
