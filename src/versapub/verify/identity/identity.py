"""``check``'s readings of what a release shows beside its guarantees: each table's identity
risk (the cells of its exactly published non-sensitive values, against ``--k`` and
``--max-risk``) and the row-order hygiene of its files (no order could carry information)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.data.arrow import numpy_of
from versapub.data.parsed import arrow_of
from versapub.data.sql import connect, duckdb_source, fresh_alias
from versapub.data.sql import ident as _ident
from versapub.verify.finding import Finding
from versapub.verify.identity.key_cells import compatible_sizes, excluded_of, keys_of, matches_any
from versapub.verify.reading.kind_checks import reading
from versapub.verify.reading.manifest import Manifest, manifest_of
from versapub.verify.reading.reading import parse_entry


def _read_for_order(path: Path) -> pa.Table:
    if path.suffix.lower() == ".parquet":
        return pq.read_table(path)
    t = arrow_of(path, ("group_id", "count"))  # parsed once for every check (data.parsed)
    if t is not None:
        return t
    with path.open(encoding="utf-8", newline="") as f:  # the header only; the file is parsed once below
        names = next(csv.reader(f), [])
    types = {c: (pa.int64() if c == "group_id" else pa.string()) for c in names}  # counts need not be integers
    return pacsv.read_csv(
        path,
        convert_options=pacsv.ConvertOptions(
            column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]
        ),
    )


def identity_check(
    directory: Path,
    k: int | None = None,
    manifest: Manifest | None = None,
    max_risk: float | None = None,
    risk_measure: str = "highest",
    keys: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Per table, from its file: the cells of its non-sensitive attributes (a plain table's
    rows; an Anatomy QIT's rows summed over groups), the share of records alone in their
    cell, the smallest cell and the prosecutor risk (highest: 1 / the smallest cell;
    average: cells / records, El Emam); with ``k``, a table whose smallest cell is below
    ``k`` fails (k-anonymity of the published cells); with ``max_risk``, a table whose
    ``risk_measure`` prosecutor risk is above it fails.  The cells are those of the key
    variables (``keys``, else the manifest's ``job.keys``, else every cell column:
    :mod:`versapub.verify.identity.key_cells`), an empty value matching any value when the release
    suppressed key values locally."""
    m = manifest_of(directory, manifest)
    named = keys_of(m, keys)  # the key variables (issue 65): the cells count these columns only
    left_out = excluded_of(m, keys)  # without keys named: the perturbed columns the floor left out
    wildcard = matches_any(m)  # local suppression: an empty value matches any value
    n = int(m["n_records"])
    decided = m.get("columns") if isinstance(m.get("columns"), dict) else None
    # columns no decision of their own put there (--others); unknown without the manifest's record
    loose_cols = None if decided is None else {str(c) for c in decided.get("by_others") or []}
    out = []
    with connect() as con:
        for e in m["tables"]:
            entry = parse_entry(e)
            kind = reading(entry.kind)
            role, cell_cols = kind.cells(entry)
            keys = (
                [a for a in cell_cols if a not in left_out] if named is None else [a for a in cell_cols if a in named]
            )
            path = directory / entry.files.get(role, "")
            if not path.is_file():
                continue
            if not kind.records:  # differential privacy: no cell is a record one can find
                out.append(_not_records(e, keys))
                continue
            if wildcard and keys:
                sizes, unique, smallest, cells, records = _compatible(con, path, keys)
            else:
                cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {duckdb_source(path)}").fetchall()]
                c = _ident(fresh_alias("c", cols))
                sizes = _class_sizes(con, path, c, keys) if keys else {n: 1}
                unique = sizes.get(1, 0)
                smallest = min(sizes, default=0)
                cells = sum(sizes.values())
                records = sum(size * cnt for size, cnt in sizes.items())
            share = unique / max(n, 1)
            prosecutor = {"highest": 1 / smallest if smallest else 0.0, "average": cells / records if records else 0.0}
            risky = max_risk is not None and prosecutor[risk_measure] > max_risk
            ok = (k is None or smallest >= k) and not risky
            loose = list(keys) if loose_cols is None else [a for a in keys if a in loose_cols]
            attention = ok and unique > 0 and bool(loose)
            message = _message(
                _Cells(keys, named, wildcard, share, smallest, cells, prosecutor),
                (k, max_risk, risk_measure),
                (ok, attention, risky, loose, loose_cols),
            )
            out.append(
                {
                    "table": e.get("name"),
                    "attributes": keys,
                    "unique_share": share,
                    "k": smallest,
                    "cells": cells,
                    "prosecutor": prosecutor,
                    "class_sizes": {str(size): cnt for size, cnt in sizes.items()},
                    "ok": ok,
                    "attention": attention,
                    "message": message,
                }
            )
    return out


@dataclass(frozen=True)
class _Cells:
    """What one table's cells measured, for its message."""

    keys: list[str]
    named: list[str] | None
    wildcard: bool
    share: float
    smallest: int
    cells: int
    prosecutor: dict[str, float]


def _message(c: _Cells, asked: tuple[int | None, float | None, str], verdict: tuple[Any, ...]) -> str:
    """The identity finding's sentence: the cells, the floor and ceiling asked for, and why
    records alone in their cell need attention or are there by design."""
    k, max_risk, risk_measure = asked
    ok, attention, risky, loose, loose_cols = verdict
    shown = (", ".join(c.keys) or "(none)") + (
        ("; key variables " + ", ".join(c.named) if c.named is not None else "")
        + ("; an empty value matching any value" if c.wildcard else "")
    )
    message = (
        f"{c.share:.1%} of the records are alone in their cell of ({shown}); smallest cell {c.smallest} "
        f"record(s) over {c.cells} cell(s)"
        + ("" if k is None else (f" >= k = {k}" if c.smallest >= k else f" < k = {k}: some records can be singled out"))
        + f"; prosecutor risk highest {c.prosecutor['highest']:.4f}, average {c.prosecutor['average']:.4f}"
        + ("" if max_risk is None else f" ({risk_measure} {'above' if risky else 'at most'} --max-risk {max_risk:g})")
    )
    if attention:
        why = (
            "the manifest does not record how its columns were declared"
            if loose_cols is None
            else f"{_listed(loose)} got no decision of their own (--others)"
        )
        message += (
            f" — needs attention: {why}, and anyone who knows a person's values of these columns finds the "
            "person's record there. Generalize a column with a hierarchy, drop or protect columns, or "
            "require a smallest cell with --k"
        )
    elif c.share > 0 and ok:
        message += (
            " — by design: every one of these columns is a declared quasi-identifier or insensitive, "
            "published exactly; the guarantee bounds what a found record reveals of a protected attribute, "
            "not whether it can be found (require a smallest cell with --k)"
        )
    return message


def _class_sizes(con: Any, path: Path, c: str, keys: list[str]) -> dict[int, int]:
    """``{records: cells}`` of a table's cells over ``keys`` (alias ``c`` for the sum)."""
    rows = con.execute(
        f"SELECT {c}, count(*) FROM (SELECT "
        f'sum(CAST(round(CAST("count" AS DOUBLE)) AS BIGINT)) {c} FROM {duckdb_source(path)} GROUP BY '
        + ", ".join(_ident(a) for a in keys)
        + f") WHERE {c} > 0 GROUP BY {c} ORDER BY {c}"
    ).fetchall()
    return {int(size): int(cnt) for size, cnt in rows}


def _compatible(con: Any, path: Path, keys: list[str]) -> tuple[dict[int, int], int, int, int, int]:
    """A table's cells read with an empty value matching any value: ``{size: rows}``, the
    records alone (size 1), the smallest size, the distinct rows and the records."""
    sizes, counts = compatible_sizes(con, path, keys)
    out: dict[int, int] = {}
    for size in sizes.tolist():
        out[int(size)] = out.get(int(size), 0) + 1
    alone = int(counts[sizes == 1].sum())
    return out, alone, int(sizes.min()) if len(sizes) else 0, len(sizes), int(counts.sum())


def _not_records(e: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """The identity finding of a table whose counts are not records (noisy or expected)."""
    return {
        "table": e.get("name"),
        "attributes": keys,
        "unique_share": 0.0,
        "k": None,
        "cells": None,
        "prosecutor": {"highest": None, "average": None},
        "class_sizes": {},
        "ok": True,
        "attention": False,
        "message": "its counts are noisy measurements or a fitted model's expectations (differential privacy): a "
        "cell of one is noise or an expectation, not a person one can find; what one record can change is bounded "
        "by the budget (the ledger)",
    }


def _listed(cols: list[str]) -> str:
    shown = ", ".join(repr(c) for c in cols[:8]) + (f" and {len(cols) - 8} more" if len(cols) > 8 else "")
    return f"column(s) {shown}"


def hygiene_check(directory: Path, manifest: Manifest | None = None) -> list[Finding]:
    """Rows of every table strictly increasing in value order (text order column by
    column, ``group_id`` numerically), so no row order can link tables or follow the input."""
    m = manifest_of(directory, manifest)
    out = []
    for e in m["tables"]:
        for f in (e.get("files") or {}).values():
            path = directory / f
            if path.is_dir():  # Parquet parts: a row's part is a hash of its values; each part in value order
                parts = sorted(path.glob("*.parquet"))
                bad = sum(_out_of_order(_read_for_order(p)) for p in parts)
                good = f"rows in value order in each of {len(parts)} part(s)"
            elif path.is_file():
                bad = _out_of_order(_read_for_order(path))
                good = "rows in value order"
            else:
                continue
            wrong = f"{bad} row(s) out of value order: row order could carry information"
            out.append(Finding("hygiene", bad == 0, good if bad == 0 else wrong, f))
    return out


def _out_of_order(t: pa.Table) -> int:
    """Rows not strictly after the row before them (text order column by column,
    ``group_id`` numerically; an equal row is a duplicate)."""
    keys = [c for c in t.column_names if c != "count"]
    n = t.num_rows
    if n < 2:
        return 0
    decided = np.zeros(n - 1, dtype=bool)
    ok = np.ones(n - 1, dtype=bool)
    for c in keys:
        col = t.column(c).combine_chunks() if isinstance(t.column(c), pa.ChunkedArray) else t.column(c)
        a, b = col.slice(0, n - 1), col.slice(1)
        less = numpy_of(pc.less(a, b)).astype(bool)
        greater = numpy_of(pc.greater(a, b)).astype(bool)
        ok &= ~(~decided & greater)
        decided |= less | greater
    ok &= decided  # equal rows: a duplicate
    return int((~ok).sum())
