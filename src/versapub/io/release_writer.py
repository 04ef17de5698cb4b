"""Writing a release atomically, verified from its own files before it appears.

The tables and ``manifest.json`` are written to a hidden temporary directory beside the
destination; :func:`versapub.verify.verify_release` re-reads them (independent code) and
checks them against the input, then :func:`versapub.verify.check.run_check` attacks them
(intersection attacks, maximum-entropy posterior, row-order hygiene); only if every check
passes are ``verification.json``, ``check.json``, ``report.md`` and ``report.html`` added and
the directory renamed into place.  A failure at any point removes the temporary
directory, so no partial or unverified release is ever left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.data.counts import CountTable
from versapub.errors import ReleaseError, VerificationError
from versapub.io.safety import check_destination
from versapub.kinds import entry_of, get_kind
from versapub.kinds.build import model_from_release
from versapub.release.model import Release
from versapub.reports.html import html_report
from versapub.reports.summary import markdown_report
from versapub.verify.check import run_check
from versapub.verify.release_check import VerificationReport

_BATCH = 1 << 17  # rows per written batch: text is materialized one batch at a time


def _batches(ct: CountTable) -> Iterator[pa.RecordBatch]:
    dicts = [None if v is None else pa.array(v.astype(str), type=pa.string()) for v in ct.dictionaries]
    names = [*ct.names, "count"]
    for lo in range(0, max(ct.n_rows, 1), _BATCH):
        hi = min(lo + _BATCH, ct.n_rows)
        arrays = []
        for codes, values in zip(ct.codes, dicts, strict=True):
            chunk = pa.array(codes[lo:hi])
            arrays.append(chunk.cast(pa.int64()) if values is None else values.take(chunk))
        arrays.append(pa.array(ct.counts[lo:hi], type=pa.int64()))
        yield pa.RecordBatch.from_arrays(arrays, names=names)


def _write_part(ct: CountTable, path: Path, fmt: str) -> None:
    batches = _batches(ct)
    first = next(batches)
    if fmt == "parquet":
        with pq.ParquetWriter(path, first.schema) as pw:
            pw.write_batch(first)
            for b in batches:
                pw.write_batch(b)
    else:
        opts = pacsv.WriteOptions(quoting_style="needed")
        with pacsv.CSVWriter(path, first.schema, write_options=opts) as cw:
            cw.write_batch(first)
            for b in batches:
                cw.write_batch(b)


def _files(release: Release, fmt: str) -> dict[str, dict[str, str]]:
    ext = "parquet" if fmt == "parquet" else "csv"
    return {t.name: get_kind(t.kind).file_names(t.name, ext) for t in release.tables}


def write_release(
    release: Release,
    out: str | Path,
    *,
    format: str = "csv",
    overwrite: bool = False,
    protect: Iterable[str | Path | None] = (),
) -> VerificationReport:
    """Write ``release`` to directory ``out`` (CSV or Parquet tables), verified first.

    Raises :class:`ReleaseError` if ``out`` exists (unless ``overwrite``, and even then
    unless it is an earlier versapub release holding only its own files) or is or contains
    the input, a hierarchy file or a path in ``protect``; :class:`VerificationError` if any
    check fails.  In every such case nothing is written and nothing is deleted.
    """
    if format not in ("csv", "parquet"):
        raise ReleaseError(f"Unknown release format {format!r}; use csv or parquet.")
    dest = Path(out)
    inputs = [release.input.path, *(h.get("file") for h in release.input.hierarchies.values()), *protect]
    check_destination(dest, overwrite, inputs)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        t0 = time.perf_counter()
        files = _files(release, format)
        for t in release.tables:
            for role, ct in t.table.parts.items():
                _write_part(ct, tmp / files[t.name][role], format)
        timings = dict(release.timings)
        timings["write"] = time.perf_counter() - t0
        manifest = release.manifest({t.name: entry_of(t.name, t.table, files[t.name]).raw for t in release.tables})
        manifest["timings_s"] = {k: round(v, 4) for k, v in timings.items()}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")

        t1 = time.perf_counter()
        check = run_check(tmp, model=lambda: model_from_release(release), original=release.source)
        report = check.verification
        if not report.ok:
            raise VerificationError(
                f"The release failed verification, so nothing was written to {dest}: {report.explain()}"
            )
        if not check.ok:
            raise VerificationError(
                f"The release failed its privacy checks, so nothing was written to {dest}: "
                + "; ".join(check.failures()[:10])
            )
        timings["verify"] = check.seconds.get("verify", 0.0)
        timings["check"] = time.perf_counter() - t1 - timings["verify"]
        (tmp / "verification.json").write_text(
            json.dumps({**report.to_json(), "seconds": round(timings["verify"], 4)}, indent=2) + "\n",
            encoding="utf-8",
        )
        (tmp / "check.json").write_text(json.dumps(check.to_json(), indent=2) + "\n", encoding="utf-8")
        (tmp / "report.html").write_text(html_report(tmp, check, release.utility, title=dest.name), encoding="utf-8")
        shown = Release(**{**release.__dict__, "timings": timings})
        (tmp / "report.md").write_text(markdown_report(shown, report, files), encoding="utf-8")
        if dest.exists():
            check_destination(dest, overwrite, inputs)  # nothing foreign appeared meanwhile
            old = dest.parent / f".{dest.name}.old-{uuid.uuid4().hex[:12]}"
            os.rename(dest, old)
            os.rename(tmp, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, dest)
        return report
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
