"""Reading CSV and Parquet inputs into an :class:`EncodedTable`.

Every column is read as text: ``"02139"`` stays ``"02139"`` and ``"NA"`` is the
two-letter value NA, not a missing marker.  A cell is *missing* when it is empty or
whitespace-only (or null in Parquet); the missing-value policy decides what happens.
Files are streamed in blocks and dictionary-encoded block by block, so the text is
never held in memory all at once.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.data.dates import dated_hierarchy, to_iso
from versapub.data.missing import SHOWN_ROWS, MissingPolicy, missing_error
from versapub.data.order import is_number
from versapub.data.reading import ReadOptions
from versapub.data.table import CODE_DTYPE, Column, EncodedTable, is_missing_value
from versapub.errors import InputError
from versapub.formats import file_sha256

_BLOCK = 1 << 24  # bytes per CSV block


def _is_parquet(path: Path, fmt: str | None) -> bool:
    if fmt:
        if fmt.lower() not in ("csv", "parquet"):
            raise InputError(f"Unknown input format {fmt!r}; use csv or parquet.")
        return fmt.lower() == "parquet"
    return path.suffix.lower() in (".parquet", ".pq")


def _default_delimiter(path: Path) -> str:
    name = path.name.lower().removesuffix(".gz")
    return "\t" if name.endswith((".tsv", ".tab")) else ","


#: What a multi-character delimiter is replaced with before parsing (ASCII unit separator).
_UNIT = "\x1f"


def _opener(path: Path) -> Any:
    return gzip.open if path.suffix.lower() == ".gz" else open


class _Hashing(io.RawIOBase):
    """A binary file whose bytes are fed to SHA-256 as they are read (the input's
    fingerprint without a second pass over the file)."""

    def __init__(self, path: Path) -> None:
        self._f = open(path, "rb")  # noqa: SIM115 - closed with this stream
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self._f.readinto(b)
        if n:
            self.digest.update(memoryview(b)[:n])
        return n or 0

    def close(self) -> None:
        self._f.close()
        super().close()


def _open_hashed(path: Path) -> tuple[Any, _Hashing]:
    """The file's (decompressed) bytes as a stream, and the hashing stream under it."""
    raw = _Hashing(path)
    buffered = io.BufferedReader(raw, 1 << 22)
    return (gzip.GzipFile(fileobj=buffered, mode="rb") if path.suffix.lower() == ".gz" else buffered), raw


class _DelimiterStream(io.RawIOBase):
    """A binary file whose multi-character delimiter is replaced by :data:`_UNIT` while it is
    read (so the single-character CSV parser can read it); block by block, in C."""

    def __init__(self, path: Path, delimiter: str) -> None:
        self._f, self.hashed = _open_hashed(path)
        self._old, self._new = delimiter.encode("utf-8"), _UNIT.encode()
        self._carry = b""
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            chunk = self._f.read(1 << 22)
            data = self._carry + chunk
            if not chunk:
                self._buf, self._carry = data.replace(self._old, self._new), b""
                break
            # A proper prefix of the delimiter at the very end may continue in the next block.
            k = next((k for k in range(len(self._old) - 1, 0, -1) if data.endswith(self._old[:k])), 0)
            head, self._carry = (data[:-k], data[-k:]) if k else (data, b"")
            self._buf = head.replace(self._old, self._new)
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        self._f.close()
        self.hashed.close()
        super().close()


def _first_line(path: Path) -> str:
    try:
        with _opener(path)(path, "rb") as f:
            first = f.readline()
    except (OSError, EOFError) as exc:
        raise InputError(f"Cannot read {path}: {exc}.") from None
    if not first.strip():
        raise InputError(f"{path} is empty: expected a first line of column names or data.")
    try:
        return str(first.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise InputError(
            f"{path} is not UTF-8 text (invalid bytes in the first line). Re-save it as "
            "UTF-8 (e.g. iconv -f latin1 -t utf-8)."
        ) from None


def _split(line: str, delimiter: str) -> list[str]:
    if len(delimiter) > 1:
        line, delimiter = line.replace(delimiter, _UNIT), _UNIT
    return next(csv.reader(io.StringIO(line), delimiter=delimiter), [])


#: Delimiters a file may seem to use (the sniffer's candidates).
CANDIDATES = (",", ";", "\t", "|")
#: Lines the sniffer reads.
SNIFF_LINES = 50


def _first_lines(path: Path, n: int = SNIFF_LINES) -> list[str]:
    with _opener(path)(path, "rb") as f:
        out = []
        for raw in f:
            out.append(raw.decode("utf-8-sig", errors="replace").rstrip("\r\n"))
            if len(out) >= n:
                break
    return [ln for ln in out if ln.strip()]


def sniff_delimiter(path: Path) -> tuple[str, int] | None:
    """The delimiter the file seems to use: the candidate (``,``, ``;``, tab, ``|``) that
    splits every one of its first lines into the same number of fields, the most fields
    winning; ``(delimiter, fields)`` or None when no candidate splits them alike."""
    lines = _first_lines(path)
    best: tuple[str, int] | None = None
    for cand in CANDIDATES:
        widths = {len(_split(ln, cand)) for ln in lines}
        if len(widths) == 1 and (w := widths.pop()) > 1 and (best is None or w > best[1]):
            best = (cand, w)
    return best


def _shown(delimiter: str) -> str:
    return "'\\t'" if delimiter == "\t" else repr(delimiter)


def _delimiter_hint(path: Path, delimiter: str, fields: list[str]) -> None:
    """Refuse a header that the delimiter cannot have meant (one long column, or names with
    control characters), naming the delimiter the file seems to use."""
    controls = [f for f in fields if any(ord(ch) < 32 for ch in f)]
    if len(fields) > 1 and not controls:
        return
    seen = sniff_delimiter(path)
    if seen is None or seen[0] == delimiter:
        return
    cand, width = seen
    head = _split(_first_line(path), cand)
    raise InputError(
        f"{path}: read with delimiter {_shown(delimiter)}, its header is "
        + (f"one column of {len(fields[0])} characters" if len(fields) == 1 else "names with control characters")
        + f"; the file seems to use {_shown(cand)} ({width} columns: {', '.join(map(repr, head[:6]))}"
        + (", ..." if len(head) > 6 else "")
        + f"). Give --delimiter {_shown(cand)} ([input] delimiter in a configuration)."
    )


def _header_hint(path: Path, fields: list[str]) -> None:
    """Refuse a header line that reads as a record (every field a number: the file seems to
    have no header) or whose names are all wrapped in single quotes (a quoting the reader
    does not undo): the first would lose a record into the names, the second publish the
    quotes."""
    names = [f.strip() for f in fields]
    shown = ", ".join(map(repr, names[:6])) + (", ..." if len(names) > 6 else "")
    if names and all(is_number(n) for n in names):
        raise InputError(
            f"{path}: its first line reads as a record, not column names (every field is a number: {shown}). "
            "If the file has no header line, give --no-header (columns named column1, column2, ... or by "
            "--names 'a,b,c'; [input] header = false); if these numbers are its column names, confirm them "
            "with --names."
        )
    if len(names) > 1 and all(len(n) >= 2 and n[0] == n[-1] == "'" for n in names):
        raise InputError(
            f"{path}: its fields seem quoted with single quotes ({shown}); versapub reads fields quoted with "
            'double quotes (RFC 4180: "a, b") and would publish the quotes. Re-save the file with double quotes '
            "or none."
        )


def _read_header(path: Path, delimiter: str, header: bool, names: Sequence[str] | None, strip: bool) -> list[str]:
    fields = _split(_first_line(path), delimiter)
    _delimiter_hint(path, delimiter, fields)
    if header and names is None:
        _header_hint(path, fields)
    if header:
        found = [h.strip() for h in fields] if strip else fields
        if names is not None:
            if len(names) != len(found):
                raise InputError(
                    f"{path}: --names gives {len(names)} name(s) but the header line has {len(found)} column(s) "
                    f"(delimiter {delimiter!r})."
                )
            found = list(names)
    else:
        found = list(names) if names is not None else [f"column{i + 1}" for i in range(len(fields))]
        if len(found) != len(fields):
            raise InputError(
                f"{path}: --names gives {len(found)} name(s) but the first line has {len(fields)} field(s) "
                f"(delimiter {delimiter!r}); give one name per field."
            )
    blank = [i + 1 for i, h in enumerate(found) if not h.strip()]
    if blank:
        raise InputError(
            f"{path}: header column(s) {blank} are blank; every column needs a name "
            f"(header read with delimiter {delimiter!r}; --names gives names to a file without a header)."
        )
    dups = sorted({h for h in found if found.count(h) > 1})
    if dups:
        raise InputError(f"{path}: duplicate column name(s) in the header: {', '.join(map(repr, dups))}.")
    return found


def _bad_lines(path: Path, delimiter: str, width: int, skip: int, limit: int) -> tuple[int, list[tuple[int, int]]]:
    """How many records do not have ``width`` fields, and ``(line number, fields)`` of the
    first ``limit`` (only run when the parser found one: it does not know line numbers)."""
    out: list[tuple[int, int]] = []
    count = 0
    with _opener(path)(path, "rt", encoding="utf-8-sig", newline="") as f:
        lines: Any = f if len(delimiter) == 1 else (ln.replace(delimiter, _UNIT) for ln in f)
        reader = csv.reader(lines, delimiter=delimiter if len(delimiter) == 1 else _UNIT)
        start = 0
        for i, row in enumerate(reader):
            line_no = start + 1
            start = reader.line_num
            if i < skip or not row:
                continue
            if len(row) != width:
                count += 1
                if len(out) < limit:
                    out.append((line_no, len(row)))
    return count, out


def _utf8_error_line(path: Path) -> int:
    with _opener(path)(path, "rb") as f:
        for i, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return i
    return 0


def _int_array(arr: pa.Array) -> npt.NDArray[np.integer]:
    """A null-free Arrow integer array as numpy, zero-copy (without pyarrow's pandas shim,
    whose import costs a third of a second at start-up)."""
    dtype = np.dtype(f"int{arr.type.bit_width}")
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


class _Encoder:
    """Incremental dictionary encoder for one column (global dictionary in first-seen order)."""

    def __init__(self, name: str, markers: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.markers = markers
        self.index: dict[str, int] = {}
        self.chunks: list[npt.NDArray[np.int32]] = []
        self.missing_rows: list[npt.NDArray[np.int64]] = []

    def add(self, arr: pa.Array | pa.ChunkedArray, offset: int) -> None:
        enc = pc.dictionary_encode(arr)
        chunks = enc.chunks if isinstance(enc, pa.ChunkedArray) else [enc]
        for d in chunks:
            local = d.dictionary.to_pylist()
            gmap = np.fromiter(
                (self.index.setdefault(v, len(self.index)) for v in local), dtype=CODE_DTYPE, count=len(local)
            )
            idx = _int_array(d.indices)
            self.chunks.append(gmap[idx] if len(local) else np.zeros(0, CODE_DTYPE))
            miss_local = np.fromiter(
                (is_missing_value(v) or v.strip() in self.markers for v in local), dtype=bool, count=len(local)
            )
            if miss_local.any():
                self.missing_rows.append(np.flatnonzero(miss_local[idx]) + offset)
            offset += len(d)

    def finish(self, keep: npt.NDArray[np.bool_] | None) -> Column:
        codes = np.concatenate(self.chunks) if self.chunks else np.zeros(0, CODE_DTYPE)
        self.chunks = []
        values = np.empty(len(self.index), dtype=object)
        values[:] = list(self.index)
        if keep is not None:
            codes = codes[keep]
        present = np.bincount(codes, minlength=len(values)) > 0
        kept = np.flatnonzero(present)
        order = kept[np.argsort(values[kept].astype(str), kind="stable")]
        rank = np.zeros(len(values), dtype=CODE_DTYPE)
        rank[order] = np.arange(len(order), dtype=CODE_DTYPE)
        return Column(self.name, rank[codes], values[order])


#: How many offending lines an error lists.
_SHOWN_LINES = 5


def _csv_batches(
    path: Path, delimiter: str, header: list[str], columns: Sequence[str] | None, has_header: bool, digest: list[str]
) -> Iterator[pa.RecordBatch]:
    """The file's records in blocks, every column as text.  Records with the wrong number
    of fields are collected while reading and reported together at the end.  The file's
    SHA-256 is appended to ``digest`` once it has been read to the end."""
    multi = len(delimiter) > 1
    read_opts = pacsv.ReadOptions(column_names=header, skip_rows=1 if has_header else 0, block_size=_BLOCK)
    parse_opts = pacsv.ParseOptions(delimiter=_UNIT if multi else delimiter, newlines_in_values=False)
    conv_opts = pacsv.ConvertOptions(
        column_types={h: pa.string() for h in header},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        null_values=[],
        include_columns=list(columns) if columns is not None else None,
    )
    # The parser reads native Arrow streams only: a Python file object (or a Python callback)
    # in the reader is released on Arrow's I/O thread when its last read-ahead finishes, which
    # needs the GIL — and aborted the interpreter at exit ("terminate called without an active
    # exception") when that happened during finalization.  So the file's SHA-256 is taken by
    # a thread of ours (joined here) and a multi-character delimiter is substituted into a
    # temporary copy first.
    with tempfile.TemporaryDirectory(prefix="versapub-read-") as scratch:
        hashing = _Sha256Thread(path)
        if multi:
            copy = Path(scratch) / "input.csv"
            with _DelimiterStream(path, delimiter) as sub, copy.open("wb") as out:
                shutil.copyfileobj(sub, out, 1 << 22)
            source = pa.input_stream(str(copy))
        else:
            source = pa.input_stream(str(path), compression="gzip" if path.suffix.lower() == ".gz" else None)
        try:
            reader = pacsv.open_csv(source, read_options=read_opts, parse_options=parse_opts, convert_options=conv_opts)
            yield from reader
            digest.append(hashing.result())
        except pa.ArrowInvalid as exc:
            msg = str(exc)
            if "UTF8" in msg or "utf8" in msg.lower():
                line = _utf8_error_line(path)
                raise InputError(
                    f"{path} is not UTF-8 text (first invalid byte on line {line}). Re-save it as "
                    "UTF-8 (e.g. iconv -f latin1 -t utf-8)."
                ) from None
            if "Expected" in msg and "columns, got" in msg:
                _wrong_widths(path, delimiter, len(header), has_header)
            raise InputError(f"{path}: cannot parse as CSV (delimiter {delimiter!r}): {msg[:300]}") from None
        finally:
            source.close()
            hashing.join()


class _Sha256Thread(threading.Thread):
    """The SHA-256 of a file, computed beside the parser (hashlib releases the GIL)."""

    def __init__(self, path: Path) -> None:
        super().__init__(name="versapub-sha256", daemon=False)
        self.path = path
        self.digest: str | None = None
        self.start()

    def run(self) -> None:
        try:
            self.digest = file_sha256(self.path)
        except OSError:
            self.digest = None

    def result(self) -> str:
        self.join()
        if self.digest is None:
            raise InputError(f"Cannot read {self.path} to the end (its SHA-256 could not be taken).")
        return self.digest


def _wrong_widths(path: Path, delimiter: str, width: int, has_header: bool) -> None:
    """Every record without the header's number of fields, counted and the first listed,
    as one paragraph (the parser stops at the first and does not know line numbers)."""
    count, lines = _bad_lines(path, delimiter, width, 1 if has_header else 0, _SHOWN_LINES)
    if not count:
        return
    shown = "; ".join(f"line {ln} has {k} field(s)" for ln, k in lines)
    raise InputError(
        f"{path}: {count} record(s) do not have the {width} fields of the "
        f"{'header' if has_header else 'first line'} (delimiter {delimiter!r}): {shown}"
        + (" ..." if count > len(lines) else "")
        + ". Fix those lines, or check the delimiter (--delimiter) and quoting."
    )


def _parquet_batches(
    path: Path, columns: Sequence[str] | None, names: Sequence[str] | None = None
) -> tuple[list[str], Iterator[pa.RecordBatch]]:
    try:
        pf = pq.ParquetFile(str(path))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"Cannot read {path} as Parquet: {exc}.") from None
    stored = list(pf.schema_arrow.names)
    if names is not None and len(names) != len(stored):
        raise InputError(f"{path}: --names gives {len(names)} name(s) but the file has {len(stored)} column(s).")
    header = list(names) if names is not None else stored
    rename = dict(zip(header, stored, strict=True))
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise InputError(f"{path}: duplicate column name(s): {', '.join(map(repr, dups))}.")
    blank = [i + 1 for i, h in enumerate(header) if not str(h).strip()]
    if blank:
        raise InputError(f"{path}: column(s) {blank} have blank names.")

    def gen() -> Iterator[pa.RecordBatch]:
        wanted = [rename[c] for c in columns] if columns is not None else None
        own = list(columns) if columns is not None else header
        for b in pf.iter_batches(columns=wanted):
            arrays = []
            for name, a in zip(own, b.columns, strict=True):
                try:
                    s = pc.cast(a, pa.string())
                except pa.ArrowException as exc:
                    raise InputError(f"{path}: column {name!r} cannot be read as text: {exc}.") from None
                arrays.append(pc.fill_null(s, ""))
            yield pa.RecordBatch.from_arrays(arrays, names=own)

    return header, gen()


def read_table(path: str | Path, options: ReadOptions | None = None, **overrides: Any) -> EncodedTable:
    """Read a CSV (optionally ``.gz``) or Parquet file as an encoded table, as ``options``
    say (:class:`~versapub.data.reading.ReadOptions`), or its fields given by name:
    ``read_table(path, delimiter=";", missing="drop")``.

    ``columns`` selects attributes (default: all); ``hierarchies`` maps an attribute to
    ``(hierarchy, level)`` and publishes it generalized to that level; ``missing`` is the
    missing-value policy (``error`` | ``value`` | ``drop``).  ``delimiter`` may be any
    string (a multi-character one, e.g. ``", "``, may not occur inside quoted fields);
    ``header=False`` reads a file without a header line, its columns named by ``names``
    (default ``column1, column2, ...``; with a header, ``names`` renames its columns);
    ``na_values`` are markers (e.g. ``?``, ``-9``) that make a cell missing, compared after
    removing surrounding whitespace; ``strip`` removes surrounding whitespace from every cell;
    ``date_formats`` maps a column to the format its dates are written in (``%d/%m/%Y``): they
    are read in it and published in ISO 8601 (:mod:`versapub.data.dates`), and a hierarchy of
    that column is read with its leaves in the same format.  Every problem of one kind is
    reported at once: all columns with missing cells, the first lines with the wrong number
    of fields.
    """
    opts = ReadOptions.of(options, **overrides)
    p = Path(path)
    _require_file(p)
    digest: list[str] = []
    header_names, batches = _batches(p, opts, digest)
    _require_selection(p, opts.columns, header_names)
    selected = opts.selected(header_names)
    encoders = {n: _Encoder(n, opts.markers) for n in selected}
    n = 0
    for batch in batches:
        for name, arr in zip(batch.schema.names, batch.columns, strict=True):
            encoders[name].add(pc.utf8_trim_whitespace(arr) if opts.strip else arr, n)
        n += batch.num_rows
    if n == 0:
        raise InputError(f"{p} has no records; there is nothing to publish.")
    keep = _missing_keep(encoders, n, opts.missing, str(p))
    cols = tuple(encoders[name].finish(keep) for name in selected)
    n_dropped = 0 if keep is None else int((~keep).sum())
    if n_dropped == n:
        raise InputError(f"{p}: every record has a missing cell; the 'drop' policy left no records.")
    table = EncodedTable(cols, n_dropped=n_dropped, source=str(p), sha256=digest[0] if digest else None)
    table = apply_date_formats(table, opts.date_formats, str(p))
    for attr, (h, level) in opts.hierarchies.items():
        if attr not in table:
            raise InputError(
                f"A hierarchy is given for {attr!r}, which is not a column of {p} (columns: {', '.join(table.names)})."
            )
        if attr in opts.date_formats:
            h = dated_hierarchy(h, opts.date_formats[attr])
        table = table.replace(h.generalize(table.column(attr), level))
    return table


def _require_file(p: Path) -> None:
    if p.is_dir():
        raise InputError(
            f"Input {p} is a directory; the in-memory backend reads one CSV or Parquet file. A dataset "
            "of many files (or one too large for memory) is read by --backend dask."
        )
    if not p.is_file():
        raise InputError(f"Input file {p} does not exist.")


def _batches(p: Path, opts: ReadOptions, digest: list[str]) -> tuple[list[str], Iterator[pa.RecordBatch]]:
    """The file's column names and its records in batches (a CSV's digest into ``digest``)."""
    if _is_parquet(p, opts.format):
        return _parquet_batches(p, opts.columns, opts.names)
    delim = opts.delimiter or _default_delimiter(p)
    if delim.strip("\r\n") != delim or not delim or delim == '"':
        raise InputError(f"The delimiter {delim!r} cannot separate fields; use e.g. ',' or ';' or ', '.")
    header_names = _read_header(p, delim, opts.header, opts.names, opts.strip)
    return header_names, _csv_batches(p, delim, header_names, opts.columns, opts.header, digest)


def _require_selection(p: Path, columns: Sequence[str] | None, header_names: Sequence[str]) -> None:
    if columns is None:
        return
    unknown = [c for c in columns if c not in header_names]
    if unknown:
        raise InputError(
            f"{p}: selected column(s) {', '.join(map(repr, unknown))} are not in the file; "
            f"its columns are: {', '.join(map(repr, header_names))}."
        )
    dup = sorted({c for c in columns if list(columns).count(c) > 1})
    if dup:
        raise InputError(f"Column(s) {dup} are selected twice.")


def apply_date_formats(table: EncodedTable, formats: Mapping[str, str], where: str) -> EncodedTable:
    """The table with each column of ``formats`` read as dates in its format and written
    in ISO 8601 (:func:`versapub.data.dates.to_iso`); an unknown column is refused."""
    unknown = [c for c in formats if c not in table]
    if unknown:
        raise InputError(
            f"A date format is given for {', '.join(map(repr, unknown))}, which is not a column of {where} "
            f"(columns: {', '.join(table.names)})."
        )
    for name, fmt in formats.items():
        table = table.replace(to_iso(table.column(name), fmt))
    return table


def _missing_keep(
    encoders: dict[str, _Encoder], n: int, policy: MissingPolicy, source: str
) -> npt.NDArray[np.bool_] | None:
    if policy is MissingPolicy.VALUE:
        return None
    found = {name: np.concatenate(enc.missing_rows) for name, enc in encoders.items() if enc.missing_rows}
    if not found:
        return None
    if policy is MissingPolicy.ERROR:
        raise missing_error(
            source, {name: (len(rows), (rows[:SHOWN_ROWS] + 1).tolist()) for name, rows in found.items()}
        )
    keep = np.ones(n, dtype=bool)
    for rows in found.values():
        keep[rows] = False
    return keep


#: Cell values that usually mean "missing" in exported files.
MARKERS = ("?", "NA", "N/A", "n/a", "NaN", "nan", "-", "NULL", "null", "None", ".")
#: From this share of a column's cells, a marker is pointed out.
MARKER_SHARE = 0.01


def marker_notes(table: EncodedTable, na_values: Sequence[str] = ()) -> list[str]:
    """Columns holding a usual missing-value marker (``?``, ``NA``, ``-``, ...) in at least
    1 % of their cells that ``na_values`` does not declare: each a sentence suggesting
    ``--na-values`` (read from the value counts, never the records)."""
    declared = {v.strip() for v in na_values}
    out = []
    for name in table.names:
        col = table.column(name)
        index = {str(v): i for i, v in enumerate(col.values)}
        found = [(m, index[m]) for m in MARKERS if m in index and m not in declared]
        if not found:
            continue
        counts = col.counts()
        for marker, code in found:
            share = int(counts[code]) / max(table.n_rows, 1)
            if share >= MARKER_SHARE:
                out.append(
                    f"column {name!r} holds {marker!r} in {share:.0%} of its records; if it means a missing value, "
                    f"give --na-values '{marker}' ([input] na_values) and choose --missing"
                )
    return out
