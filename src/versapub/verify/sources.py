"""How the verification code reads a published file with DuckDB (every column as text)."""

from __future__ import annotations

from pathlib import Path


def duckdb_source(path: Path) -> str:
    """A DuckDB table expression reading ``path`` (CSV: all columns as text, quoted empty
    strings kept as empty strings; Parquet: as stored)."""
    lit = "'" + str(path).replace("'", "''") + "'"
    if path.suffix.lower() == ".parquet":
        return f"read_parquet({lit})"
    return (
        f"read_csv({lit}, all_varchar=true, header=true, delim=',', quote='\"', escape='\"', allow_quoted_nulls=false)"
    )
