"""Files parsed once and handed to every reader (issue 31: the checks of ``versapub check``
each used to parse the release's CSV files themselves, side by side).

:class:`ParsedFiles` parses a directory's CSV files with pyarrow into Arrow tables of text
columns, with the semantics of DuckDB's ``read_csv(all_varchar=true,
allow_quoted_nulls=false)`` (:func:`versapub.data.sql.duckdb_source`): an unquoted empty
field is NULL, a quoted one the empty string. Inside :func:`sharing`, DuckDB connections
opened by :func:`versapub.data.sql.connect` see each parsed file as a registered relation
(no copy), :func:`versapub.data.sql.duckdb_source` names it instead of the file, and
:func:`arrow_of` gives pyarrow readers their own view of it (empty fields as empty strings,
integer columns cast). Only the parsing is shared: each reader keeps its own logic.

A file pyarrow cannot parse, or whose header repeats a name, is left out, and its readers
parse it themselves as before (so they report its errors in their own words).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from versapub.data.arrow import string_array

#: Files larger than this are not held in memory by :class:`ParsedFiles` (each reader streams).
MAX_BYTES = 2 << 30


def _parse(path: Path) -> pa.Table | None:
    try:
        with path.open("rb") as f:
            head = f.readline()
        names = pacsv.read_csv(pa.py_buffer(head), read_options=pacsv.ReadOptions(autogenerate_column_names=False))
        cols = names.column_names
        if len(set(cols)) != len(cols) or any(not c for c in cols):
            return None
        return pacsv.read_csv(
            path,
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(cols, pa.string()),
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
                null_values=[""],
            ),
        )
    except (pa.ArrowException, OSError, ValueError):
        return None


class ParsedFiles:
    """The CSV files directly under ``directory`` (at most :data:`MAX_BYTES` in all), each
    parsed on first use (one thread parses, the others wait) and kept for every reader."""

    def __init__(self, directory: str | Path) -> None:
        d = Path(directory)
        files = sorted(p for p in d.glob("*.csv") if p.is_file()) if d.is_dir() else []
        total = sum(p.stat().st_size for p in files)
        self._paths = {p.resolve(): f"__versapub_file_{i}" for i, p in enumerate(files)} if total <= MAX_BYTES else {}
        self._tables: dict[Path, pa.Table | None] = {}
        self._locks = {p: threading.Lock() for p in self._paths}

    def table(self, path: Path) -> pa.Table | None:
        """``path`` parsed (text columns, DuckDB's NULL semantics), or None when it is not
        one of the shared files or cannot be parsed."""
        key = path.resolve()
        lock = self._locks.get(key)
        if lock is None:
            return None
        with lock:
            if key not in self._tables:
                self._tables[key] = _parse(key)
            return self._tables[key]

    def name(self, path: Path) -> str | None:
        """The relation name of ``path`` in connections opened while sharing (parsing it now
        if needed), or None."""
        return self._paths[path.resolve()] if self.table(path) is not None else None

    def relations(self) -> Iterator[tuple[str, pa.Table]]:
        """Every shared file (parsed now if needed) as (relation name, table)."""
        for p, name in self._paths.items():
            t = self.table(p)
            if t is not None:
                yield name, t


_SHARED: ContextVar[ParsedFiles | None] = ContextVar("versapub_parsed_files", default=None)


@contextmanager
def sharing(files: ParsedFiles | None) -> Iterator[None]:
    """Readers in this thread (context) use ``files`` (None: each parses for itself)."""
    token = _SHARED.set(files)
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared() -> ParsedFiles | None:
    """The :class:`ParsedFiles` readers in this context share, if any."""
    return _SHARED.get()


def arrow_of(path: Path, ints: tuple[str, ...] = ()) -> pa.Table | None:
    """The shared parse of ``path`` as pyarrow readers read it (every empty field the empty
    string; the columns in ``ints`` as int64), or None when it is not shared or a column in
    ``ints`` is not an integer everywhere (the reader then parses the file and reports)."""
    files = shared()
    t = files.table(path) if files is not None else None
    if t is None:
        return None
    empty = string_array([""])[0]  # a scalar made without pa.scalar, which imports pandas
    try:
        cols = [
            pc.cast(t.column(c), pa.int64()) if c in ints else pc.fill_null(t.column(c), empty) for c in t.column_names
        ]
    except (pa.ArrowException, ValueError):
        return None
    if any(c.null_count for c in cols):  # an empty integer field: the reader's own parse says so
        return None
    return pa.Table.from_arrays(cols, names=t.column_names)
