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
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.data.hierarchy import Hierarchy
from versapub.data.missing import SHOWN_ROWS, MissingPolicy, missing_error
from versapub.data.table import CODE_DTYPE, Column, EncodedTable, is_missing_value
from versapub.errors import InputError

_BLOCK = 1 << 24  # bytes per CSV block


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (the input fingerprint recorded in the manifest)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _is_parquet(path: Path, fmt: str | None) -> bool:
    if fmt:
        if fmt.lower() not in ("csv", "parquet"):
            raise InputError(f"Unknown input format {fmt!r}; use csv or parquet.")
        return fmt.lower() == "parquet"
    return path.suffix.lower() in (".parquet", ".pq")


def _default_delimiter(path: Path) -> str:
    name = path.name.lower().removesuffix(".gz")
    return "\t" if name.endswith((".tsv", ".tab")) else ","


def _read_header(path: Path, delimiter: str) -> list[str]:
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rb") as f:
            first = f.readline()
    except (OSError, EOFError) as exc:
        raise InputError(f"Cannot read {path}: {exc}.") from None
    if not first.strip():
        raise InputError(f"{path} is empty: expected a header line naming the columns.")
    try:
        line = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(
            f"{path} is not UTF-8 text (invalid bytes in the header line). Re-save it as "
            "UTF-8 (e.g. iconv -f latin1 -t utf-8)."
        ) from None
    header = next(csv.reader(io.StringIO(line), delimiter=delimiter))
    blank = [i + 1 for i, h in enumerate(header) if not h.strip()]
    if blank:
        raise InputError(
            f"{path}: header column(s) {blank} are blank; every column needs a name "
            f"(header read with delimiter {delimiter!r})."
        )
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise InputError(f"{path}: duplicate column name(s) in the header: {', '.join(map(repr, dups))}.")
    return header


def _utf8_error_line(path: Path) -> int:
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rb") as f:
        for i, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return i
    return 0


class _Encoder:
    """Incremental dictionary encoder for one column (global dictionary in first-seen order)."""

    def __init__(self, name: str) -> None:
        self.name = name
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
            idx = d.indices.to_numpy(zero_copy_only=False)
            self.chunks.append(gmap[idx] if len(local) else np.zeros(0, CODE_DTYPE))
            miss_local = np.fromiter((is_missing_value(v) for v in local), dtype=bool, count=len(local))
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


def _csv_batches(
    path: Path, delimiter: str, header: list[str], columns: Sequence[str] | None
) -> Iterator[pa.RecordBatch]:
    read_opts = pacsv.ReadOptions(column_names=header, skip_rows=1, block_size=_BLOCK)
    parse_opts = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=False)
    conv_opts = pacsv.ConvertOptions(
        column_types={h: pa.string() for h in header},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        null_values=[],
        include_columns=list(columns) if columns is not None else None,
    )
    try:
        reader = pacsv.open_csv(str(path), read_options=read_opts, parse_options=parse_opts, convert_options=conv_opts)
        yield from reader
    except pa.ArrowInvalid as exc:
        msg = str(exc)
        if "UTF8" in msg or "utf8" in msg.lower():
            line = _utf8_error_line(path)
            raise InputError(
                f"{path} is not UTF-8 text (first invalid byte on line {line}). Re-save it as "
                "UTF-8 (e.g. iconv -f latin1 -t utf-8)."
            ) from None
        if "columns" in msg and "Expected" in msg:
            raise InputError(
                f"{path}: a row has the wrong number of fields for the {len(header)}-column "
                f"header (delimiter {delimiter!r}): {msg.split(':', 1)[-1].strip()[:300]}"
            ) from None
        raise InputError(f"{path}: cannot parse as CSV (delimiter {delimiter!r}): {msg[:300]}") from None


def _parquet_batches(path: Path, columns: Sequence[str] | None) -> tuple[list[str], Iterator[pa.RecordBatch]]:
    try:
        pf = pq.ParquetFile(str(path))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"Cannot read {path} as Parquet: {exc}.") from None
    header = list(pf.schema_arrow.names)
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise InputError(f"{path}: duplicate column name(s): {', '.join(map(repr, dups))}.")
    blank = [i + 1 for i, h in enumerate(header) if not str(h).strip()]
    if blank:
        raise InputError(f"{path}: column(s) {blank} have blank names.")

    def gen() -> Iterator[pa.RecordBatch]:
        for b in pf.iter_batches(columns=list(columns) if columns is not None else None):
            arrays = []
            for name, a in zip(b.schema.names, b.columns, strict=True):
                try:
                    s = pc.cast(a, pa.string())
                except pa.ArrowException as exc:
                    raise InputError(f"{path}: column {name!r} cannot be read as text: {exc}.") from None
                arrays.append(pc.fill_null(s, ""))
            yield pa.RecordBatch.from_arrays(arrays, names=b.schema.names)

    return header, gen()


def read_table(
    path: str | Path,
    *,
    delimiter: str | None = None,
    missing: str | MissingPolicy = "error",
    columns: Sequence[str] | None = None,
    hierarchies: dict[str, tuple[Hierarchy, int]] | None = None,
    format: str | None = None,
) -> EncodedTable:
    """Read a CSV (optionally ``.gz``) or Parquet file as an encoded table.

    ``columns`` selects attributes (default: all); ``hierarchies`` maps an attribute to
    ``(hierarchy, level)`` and publishes it generalized to that level; ``missing`` is the
    missing-value policy (``error`` | ``value`` | ``drop``).
    """
    p = Path(path)
    policy = MissingPolicy.parse(missing)
    if not p.is_file():
        raise InputError(f"Input file {p} does not exist.")
    if _is_parquet(p, format):
        header, batches = _parquet_batches(p, columns)
    else:
        delim = delimiter or _default_delimiter(p)
        if len(delim) != 1:
            raise InputError(f"The delimiter must be a single character, got {delim!r}.")
        header = _read_header(p, delim)
        batches = _csv_batches(p, delim, header, columns)
    if columns is not None:
        unknown = [c for c in columns if c not in header]
        if unknown:
            raise InputError(
                f"{p}: selected column(s) {', '.join(map(repr, unknown))} are not in the file; "
                f"its columns are: {', '.join(map(repr, header))}."
            )
        dup = sorted({c for c in columns if list(columns).count(c) > 1})
        if dup:
            raise InputError(f"Column(s) {dup} are selected twice.")
    names = list(columns) if columns is not None else header
    encoders = {n: _Encoder(n) for n in names}
    n = 0
    for batch in batches:
        for name, arr in zip(batch.schema.names, batch.columns, strict=True):
            encoders[name].add(arr, n)
        n += batch.num_rows
    if n == 0:
        raise InputError(f"{p} has a header but no records; there is nothing to publish.")
    keep = _missing_keep(encoders, n, policy, str(p))
    cols = tuple(encoders[name].finish(keep) for name in names)
    n_dropped = 0 if keep is None else int((~keep).sum())
    if n_dropped == n:
        raise InputError(f"{p}: every record has a missing cell; the 'drop' policy left no records.")
    table = EncodedTable(cols, n_dropped=n_dropped, source=str(p))
    for attr, (h, level) in (hierarchies or {}).items():
        if attr not in table:
            raise InputError(
                f"A hierarchy is given for {attr!r}, which is not a column of {p} (columns: {', '.join(table.names)})."
            )
        table = table.replace(h.generalize(table.column(attr), level))
    return table


def _missing_keep(
    encoders: dict[str, _Encoder], n: int, policy: MissingPolicy, source: str
) -> npt.NDArray[np.bool_] | None:
    if policy is MissingPolicy.VALUE:
        return None
    keep: npt.NDArray[np.bool_] | None = None
    for name, enc in encoders.items():
        if not enc.missing_rows:
            continue
        rows = np.concatenate(enc.missing_rows)
        if policy is MissingPolicy.ERROR:
            raise missing_error(source, name, len(rows), (rows[:SHOWN_ROWS] + 1).tolist())
        if keep is None:
            keep = np.ones(n, dtype=bool)
        keep[rows] = False
    return keep
