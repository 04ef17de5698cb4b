"""SQL helpers shared by every reader of published files: how DuckDB reads a file (every
column as text), quoted identifiers, aliases that cannot collide with attribute names."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (any attribute name is safe inside)."""
    return '"' + name.replace('"', '""') + '"'


def fresh_alias(base: str, taken: Iterable[str]) -> str:
    """An alias starting with ``base`` that no attribute name in ``taken`` equals (in any case)."""
    used = {t.lower() for t in taken}
    alias, i = base, 0
    while alias.lower() in used:
        i += 1
        alias = f"{base}_{i}"
    return alias


def duckdb_source(path: Path) -> str:
    """A DuckDB table expression reading ``path`` (CSV: all columns as text, quoted empty
    strings kept as empty strings; Parquet: as stored; a directory: its Parquet parts)."""
    if path.is_dir():  # a table written as a directory of Parquet parts (the Dask backend)
        return "read_parquet('" + str(path / "*.parquet").replace("'", "''") + "')"
    lit = "'" + str(path).replace("'", "''") + "'"
    if path.suffix.lower() == ".parquet":
        return f"read_parquet({lit})"
    return (
        f"read_csv({lit}, all_varchar=true, header=true, delim=',', quote='\"', escape='\"', allow_quoted_nulls=false)"
    )


def spill_settings(fraction: float, spill: str | Path) -> str:
    """DuckDB ``SET`` statements for a connection over large data: at most ``fraction`` of
    the machine's memory (at least 1 GB), spilling into directory ``spill`` beyond it, no
    insertion-order bookkeeping."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    limit = max(int(total * fraction) >> 20, 1024)
    return (f"SET memory_limit = '{limit}MB'; SET temp_directory = '{Path(spill).as_posix()}'; "
            "SET preserve_insertion_order = false")  # fmt: skip
