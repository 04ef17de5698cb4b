"""SQL helpers shared by every reader of published files: how DuckDB reads a file (every
column as text), quoted identifiers, aliases that cannot collide with attribute names, and
the connections themselves (memory share, spilling, no terminal progress bar)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import duckdb

from versapub.data.parsed import shared


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
    strings kept as empty strings; Parquet: as stored; a directory: its Parquet parts); while
    files are shared (:func:`versapub.data.parsed.sharing`), a shared file's relation name."""
    if path.is_dir():  # a table written as a directory of Parquet parts (the Dask backend)
        return "read_parquet('" + str(path / "*.parquet").replace("'", "''") + "')"
    lit = "'" + str(path).replace("'", "''") + "'"
    if path.suffix.lower() == ".parquet":
        return f"read_parquet({lit})"
    files = shared()
    name = files.name(path) if files is not None else None
    if name is not None:  # parsed once for every reader (data.parsed), same semantics
        return name
    return (
        f"read_csv({lit}, all_varchar=true, header=true, delim=',', quote='\"', escape='\"', allow_quoted_nulls=false)"
    )


#: The share of the machine's memory a DuckDB connection opened by :func:`connect` may hold
#: (the rest spills to disk); set per thread by :func:`memory_share` when several readers
#: run side by side (the checks of ``versapub check``).
_SHARE: ContextVar[float] = ContextVar("versapub_duckdb_share", default=0.5)


@contextmanager
def memory_share(fraction: float) -> Iterator[None]:
    """Connections opened by :func:`connect` in this thread (context) hold at most
    ``fraction`` of the machine's memory."""
    if not 0 < fraction <= 1:
        raise ValueError(f"a memory share is in (0, 1], got {fraction}")
    token = _SHARE.set(fraction)
    try:
        yield
    finally:
        _SHARE.reset(token)


def machine_memory() -> int:
    """The machine's physical memory in bytes (8 GiB when it cannot be read)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


@contextmanager
def connect(share: float | None = None, *, ordered: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB connection over large data: no terminal progress bar, at most
    ``share`` of the machine's memory (default: the current :func:`memory_share`, else
    half; at least 1 GB), spilling beyond it into a temporary directory of its own that is
    removed with the connection; the files shared in this context registered by name
    (:mod:`versapub.data.parsed`); ``ordered=False``: no insertion-order bookkeeping (results
    without ``ORDER BY`` come in any order)."""
    fraction = _SHARE.get() if share is None else share
    limit = max(int(machine_memory() * fraction) >> 20, 1024)
    with tempfile.TemporaryDirectory(prefix="versapub-duckdb-") as spill:
        con = duckdb.connect(":memory:", config={"preserve_insertion_order": ordered})
        try:
            con.execute(
                f"SET enable_progress_bar = false; SET memory_limit = '{limit}MiB'; "
                f"SET temp_directory = '{Path(spill).as_posix()}'"
            )
            files = shared()
            for name, table in files.relations() if files is not None else ():
                con.register(name, table)  # no copy: DuckDB scans the Arrow buffers
            yield con
        finally:
            con.close()
