"""Reading the input on a Dask cluster: every column as text, as the in-memory reader does.

Two passes over the text, each partition on its own worker:

1. **scan**: per partition and column, the value counts (text after the optional
   ``strip``) and the first missing cells (empty, whitespace only, or a ``na_values``
   marker) — the global dictionaries are the sorted values (Unicode code point order, the
   in-memory order) and the missing-value policy is applied to the counts: ``error``
   names every column with missing cells and their first rows, ``drop`` drops the rows,
   ``value`` keeps the cells as values;
2. **encode**: each partition's values become ``int32`` codes of the global dictionaries,
   written as one Parquet part of the scratch dataset; the parts' per-code counts give the
   value counts.  A dictionary value left without records (``drop``), or a hierarchy level
   applied when reading (``ATTR=FILE:LEVEL``), is folded in by a third pass over the codes.

Inputs: a Parquet dataset (a directory of ``*.parquet``) or a Parquet file, or CSV files
(one path or a glob; uncompressed, so that Dask can split them; a one-character delimiter).
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.dates import dated_hierarchy, iso_values
from versapub.data.missing import SHOWN_ROWS, MissingPolicy, missing_error
from versapub.data.reading import ReadOptions
from versapub.data.table import check_names
from versapub.errors import InputError
from versapub.scale.cluster import Runner
from versapub.scale.hold import hold
from versapub.scale.table import ColumnStats, DaskTable, part_file


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".parquet", ".pq", ".csv"))
        if not found:
            raise InputError(f"{path} holds no .parquet or .csv file.")
        return found
    matched = sorted(Path(p) for p in glob.glob(str(path)))
    if not matched:
        raise InputError(f"Input {path} does not exist.")
    return matched


def dataset_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes; of a directory or glob: of every file's relative path and
    SHA-256, in path order (the manifest's fingerprint of a dataset)."""
    from versapub.formats import file_sha256

    files = _files(path)
    if len(files) == 1 and files[0] == path:
        return file_sha256(path)
    base = path if path.is_dir() else path.parent
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.relative_to(base) if f.is_relative_to(base) else f}\0{file_sha256(f)}\n".encode())
    return h.hexdigest()


def _is_parquet(files: Sequence[Path], fmt: str | None) -> bool:
    if fmt:
        if fmt.lower() not in ("csv", "parquet"):
            raise InputError(f"Unknown input format {fmt!r}; use csv or parquet.")
        return fmt.lower() == "parquet"
    return all(f.suffix.lower() in (".parquet", ".pq") for f in files)


# -- work done inside the workers ---------------------------------------------------------------
def _text(df: Any, name: str, strip: bool) -> Any:
    """A column as Arrow text (nulls as empty text), stripped when asked."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(df[name], from_pandas=True)
    try:
        arr = pc.fill_null(pc.cast(arr, pa.string()), "")
    except pa.ArrowException as exc:
        raise InputError(f"Column {name!r} cannot be read as text: {exc}.") from None
    return pc.utf8_trim_whitespace(arr) if strip else arr


def _missing_mask(values: Any, markers: frozenset[str]) -> npt.NDArray[np.bool_]:
    import pyarrow.compute as pc

    trimmed = pc.utf8_trim_whitespace(values)
    miss = pc.equal(trimmed, "")
    if markers:
        miss = pc.or_(miss, pc.is_in(trimmed, value_set=__import__("pyarrow").array(sorted(markers))))
    return np.asarray(miss.to_numpy(zero_copy_only=False), dtype=bool)


def _scan(df: Any, names: Sequence[str], strip: bool, markers: frozenset[str]) -> dict[str, Any]:
    """Per column: value counts and the first rows (inside the partition) of missing cells."""
    import pyarrow.compute as pc

    out: dict[str, Any] = {"rows": len(df), "values": {}, "missing": {}}
    for n in names:
        arr = _text(df, n, strip)
        vc = pc.value_counts(arr)
        out["values"][n] = (vc.field("values").to_pylist(), vc.field("counts").to_numpy().astype(np.int64))
        miss = _missing_mask(arr, markers)
        if miss.any():
            out["missing"][n] = (int(miss.sum()), np.flatnonzero(miss)[:SHOWN_ROWS].astype(np.int64))
    return out


def _encode(
    df: Any,
    names: Sequence[str],
    dictionaries: Mapping[str, Any],
    strip: bool,
    markers: frozenset[str],
    drop: bool,
    path: str,
) -> dict[str, Any]:
    """The partition as codes of the global dictionaries (rows with a missing cell dropped
    under ``drop``), written as one Parquet part; its per-code counts."""
    hold("encode")  # a test's seam (versapub.scale.hold); nothing otherwise
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    cols: dict[str, Any] = {}
    keep = np.ones(len(df), dtype=bool)
    texts = {n: _text(df, n, strip) for n in names}
    if drop:
        for n in names:
            keep &= ~_missing_mask(texts[n], markers)
    for n in names:
        idx = pc.index_in(texts[n], value_set=dictionaries[n]).to_numpy(zero_copy_only=False)
        cols[n] = (
            np.asarray(idx, dtype=np.float64)[keep].astype(np.int32)
            if not keep.all()
            else np.asarray(idx, dtype=np.int32)
        )
    pq.write_table(pa.table(cols), path)
    return {
        "rows": int(keep.sum()),
        "counts": {n: np.bincount(cols[n], minlength=len(dictionaries[n])).astype(np.int64) for n in names},
    }


def _remap(path: str, maps: Mapping[str, npt.NDArray[np.int32]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    cols = {n: (maps[n][t.column(n).to_numpy()] if n in maps else t.column(n).to_numpy()) for n in t.column_names}
    pq.write_table(pa.table(cols), path)


# -- the reader ---------------------------------------------------------------------------------
def read_dask(
    path: str | Path,
    runner: Runner,
    scratch: Path,
    options: ReadOptions | None = None,
    *,
    blocksize: str = "64MiB",
    **overrides: Any,
) -> DaskTable:
    """The input as a :class:`DaskTable` (module docstring), read as ``options`` say
    (:class:`~versapub.data.reading.ReadOptions`, or its fields by name); ``scratch`` is
    created and holds the codes (it must be visible to every worker)."""
    from dask import delayed

    opts = ReadOptions.of(options, **overrides)
    p = Path(path)
    frame = _frame(p, opts, blocksize)
    selected = list(frame.columns)
    parts = frame.to_delayed()
    scans = runner.run(
        [delayed(_scan)(d, selected, opts.strip, opts.markers) for d in parts], "reading: value counts of every column"
    )
    n_total, drop = _missing(p, scans, selected, opts.missing)
    dictionaries = _dictionaries(scans, selected)
    codes_path = scratch / "codes"
    codes_path.mkdir(parents=True, exist_ok=False)
    done = runner.run(
        [
            delayed(_encode)(
                d, selected, _shared(runner, dictionaries), opts.strip, opts.markers, drop, part_file(codes_path, i)
            )
            for i, d in enumerate(parts)
        ],
        "reading: encoding the records",
    )
    n = sum(d["rows"] for d in done)
    if n == 0:
        raise InputError(f"{p}: every record has a missing cell; the 'drop' policy left no records.")
    counts = {c: np.sum([d["counts"][c] for d in done], axis=0) for c in selected}
    maps = _fold(p, selected, dictionaries, counts, opts)
    if maps:
        runner.run(
            [delayed(_remap)(str(f), maps) for f in sorted(codes_path.glob("*.parquet"))],
            "reading: folding in hierarchy levels and unused values",
        )
    stats = {c: ColumnStats(c, np.asarray(dictionaries[c], dtype=object), counts[c]) for c in selected}
    return DaskTable(
        stats,
        n,
        codes_path,
        scratch,
        runner,
        n_dropped=n_total - n,
        source=str(p),
        sha256=dataset_sha256(p),
        _order=tuple(selected),
    )


def _frame(p: Path, opts: ReadOptions, blocksize: str) -> Any:
    """The input as a Dask data frame of text, its columns named and selected."""
    import dask.dataframe as dd

    files = _files(p)
    names = opts.names
    if _is_parquet(files, opts.format):
        frame = dd.read_parquet([str(f) for f in files], dtype_backend="pyarrow")
        stored = list(frame.columns)
        if names is not None:
            if len(names) != len(stored):
                raise InputError(f"{p}: --names gives {len(names)} name(s) but the data has {len(stored)} column(s).")
            frame = frame.rename(columns=dict(zip(stored, names, strict=True)))
    else:
        delim = opts.delimiter or ("\t" if str(files[0]).lower().endswith((".tsv", ".tab")) else ",")
        if len(delim) != 1:
            raise InputError(
                f"The Dask backend reads CSV with a one-character delimiter, got {delim!r}; convert the "
                "file to Parquet, or use the in-memory backend."
            )
        if any(str(f).lower().endswith(".gz") for f in files):
            raise InputError(
                f"{p}: a compressed CSV cannot be split between workers; give it uncompressed or as Parquet."
            )
        frame = dd.read_csv(
            [str(f) for f in files],
            sep=delim,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            header=0 if opts.header else None,
            names=list(names) if names is not None else None,
            blocksize=blocksize,
        )
        if not opts.header and names is None:
            frame = frame.rename(columns={c: f"column{i + 1}" for i, c in enumerate(frame.columns)})
    header_names = [str(c) for c in frame.columns]
    dups = sorted({h for h in header_names if header_names.count(h) > 1})
    if dups:
        raise InputError(f"{p}: duplicate column name(s): {', '.join(map(repr, dups))}.")
    if opts.columns is not None:
        unknown = [c for c in opts.columns if c not in header_names]
        if unknown:
            raise InputError(
                f"{p}: selected column(s) {', '.join(map(repr, unknown))} are not in the data; its "
                f"columns are: {', '.join(map(repr, header_names))}."
            )
        frame = frame[list(opts.columns)]
    selected = opts.selected(header_names)
    check_names(selected, str(p))
    unknown = [c for c in opts.date_formats if c not in selected]
    if unknown:
        raise InputError(
            f"A date format is given for {', '.join(map(repr, unknown))}, which is not a column of {p} "
            f"(columns: {', '.join(selected)})."
        )
    return frame


def _missing(p: Path, scans: list[dict[str, Any]], selected: list[str], policy: MissingPolicy) -> tuple[int, bool]:
    """The records read and whether records with a missing cell are dropped; the ``error``
    policy refuses missing cells, every column named with its first rows."""
    n_total = sum(s["rows"] for s in scans)
    if n_total == 0:
        raise InputError(f"{p} has no records; there is nothing to publish.")
    found: dict[str, tuple[int, list[int]]] = {}
    offset = 0
    for s in scans:
        for n, (k, rows) in s["missing"].items():
            old = found.get(n, (0, []))
            found[n] = (old[0] + k, (old[1] + (rows + offset + 1).tolist())[:SHOWN_ROWS])
        offset += s["rows"]
    if found and policy is MissingPolicy.ERROR:
        raise missing_error(str(p), {n: found[n] for n in selected if n in found})
    return n_total, bool(found) and policy is MissingPolicy.DROP


def _dictionaries(scans: list[dict[str, Any]], selected: list[str]) -> dict[str, Any]:
    """Each column's global dictionary: its values over every part, sorted."""
    dictionaries: dict[str, Any] = {}
    for n in selected:
        seen: set[str] = set()
        for s in scans:
            seen.update(s["values"][n][0])
        dictionaries[n] = np.array(sorted(seen), dtype=object) if seen else np.zeros(0, dtype=object)
    return dictionaries


def _shared(runner: Runner, dictionaries: Mapping[str, Any]) -> Any:
    import pyarrow as pa

    return runner.share({n: pa.array(list(v), type=pa.string()) for n, v in dictionaries.items()})


def _fold(
    p: Path, selected: list[str], dictionaries: dict[str, Any], counts: dict[str, Any], opts: ReadOptions
) -> dict[str, npt.NDArray[np.int32]]:
    """Each column's code map folding in dates (to ISO 8601), unused values (``drop``) and
    hierarchy levels applied when reading; ``dictionaries`` and ``counts`` updated."""
    maps: dict[str, npt.NDArray[np.int32]] = {}
    for c in selected:
        values, cnt = dictionaries[c], counts[c]
        target = values.astype(str)
        fmt = opts.date_formats.get(c)
        if fmt:
            iso = iso_values(c, values, cnt, fmt)
            target = np.array([iso.get(v, v) for v in target], dtype=object).astype(str)
        if c in opts.hierarchies:
            h, level = opts.hierarchies[c]
            if fmt:
                h = dated_hierarchy(h, fmt)
            values = target.astype(object)
            from versapub.data.table import Column

            col = Column(c, np.zeros(0, np.int32), values)
            h.require_covers(col) if level > 0 else None
            mapping = h.mapping(level) if level > 0 else None
            if mapping is not None:
                target = np.array([mapping[v] for v in target], dtype=object).astype(str)
        keep = cnt > 0
        new_values, inv = np.unique(target[keep], return_inverse=True)
        remap = np.full(len(values), -1, dtype=np.int32)
        remap[np.flatnonzero(keep)] = inv.astype(np.int32).ravel()
        if len(new_values) != len(values) or not np.array_equal(remap, np.arange(len(values))):
            maps[c] = remap
            counts[c] = np.bincount(remap[keep], weights=cnt[keep], minlength=len(new_values)).astype(np.int64)
            dictionaries[c] = new_values.astype(object)
    for a in opts.hierarchies:
        if a not in selected:
            raise InputError(
                f"A hierarchy is given for {a!r}, which is not a column of {p} (columns: {', '.join(selected)})."
            )
    return maps
