"""Treatments applied before anonymization (the manifest's optional ``treatments``,
``docs/release-format.md``), read by the verifier itself: top and bottom coding and
rounding change each value by a rule the manifest states, so from the files alone every
published number of a treated column must obey it (a generalized range by both of its
bounds), and with the original the verifier applies the rules to it before any
comparison.  Written from the format, sharing nothing with :mod:`versapub.treatments`."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from versapub.data.source import Source
from versapub.data.sql import duckdb_source
from versapub.data.table import Column, EncodedTable, encode_values

#: The treatments whose rule the verifier applies (value by value).
VALUE_RULES = ("top-coding", "bottom-coding", "rounding")
#: Standard deviations a published count may lie from a PRAM matrix's expectation.
PRAM_SIGMAS = 6.0
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
TOL = 1e-9


def _finite(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _written(x: float) -> str:
    """A number as the format writes a treated value: whole numbers without a decimal point,
    others with at most 12 significant digits."""
    short = float(f"{x:.12g}")
    return str(int(short)) if short == int(short) and abs(short) < 1e15 else f"{short:.12g}"


def _rule(record: dict[str, Any], column: str) -> tuple[str, float, float] | None:
    """(kind, parameter, replacement) of one treated column, or None when unreadable."""
    name = record.get("name")
    try:
        if name in ("top-coding", "bottom-coding"):
            return str(name), float(record["threshold"][column]), float(record["replacement"][column])
        if name == "rounding":
            base = float(record["base"])
            return ("rounding", base, base) if base > 0 else None
    except (KeyError, TypeError, ValueError):
        return None
    return None


def _apply(kind: str, p: float, v: float, x: float) -> float:
    if kind == "top-coding":
        return v if x > p else x
    if kind == "bottom-coding":
        return v if x < p else x
    return math.floor(x / p + 0.5) * p


def _records(manifest: Any) -> list[dict[str, Any]]:
    raw = manifest.get("treatments") if isinstance(manifest, dict) else None
    return [r for r in raw if isinstance(r, dict)] if isinstance(raw, list) else []


def perturbed_columns(manifest: Any) -> frozenset[str]:
    """The columns a treatment changed at random or by groups (every treatment but the value
    rules): their published values are not the input's, so the comparisons with the input
    leave them out and the treatment's own checks stand for them."""
    return frozenset(
        str(c) for r in _records(manifest) if r.get("name") not in VALUE_RULES for c in r.get("columns") or []
    )


def treated_original(original: Source | None, manifest: Any) -> Source | None:
    """``original`` with every value rule of the manifest's ``treatments`` applied, in
    order (values that are not finite numbers stay); unchanged without treatments or for a
    table not in memory."""
    records = _records(manifest)
    if original is None or not records or not isinstance(original, EncodedTable):
        return original
    table = original
    for record in records:
        for column in record.get("columns") or []:
            rule = _rule(record, str(column))
            if rule is None or column not in table.names:
                continue
            col = table.column(column)
            new = []
            for raw in col.values:
                x = _finite(str(raw))
                y = None if x is None else _apply(*rule, x)
                new.append(str(raw) if y is None or y == x else _written(y))
            mapped = encode_values(column, np.array(new, dtype=object))
            table = table.replace(Column(column, mapped.codes[col.codes], mapped.values))
    return table


def _published_texts(
    directory: Path, manifest: dict[str, Any], column: str, con: duckdb.DuckDBPyConnection
) -> set[str]:
    """Every text any file of the release publishes in ``column`` (a generalized table's
    leaves too)."""
    out: set[str] = set()
    for t in manifest.get("tables", []):
        if not isinstance(t, dict) or column not in (t.get("attributes") or []):
            continue
        files = t.get("files") or {}
        labels: set[str] = set()  # a generalized value's name is its hierarchy's, not a number published
        if "labels" in files:
            src = duckdb_source(directory / str(files["labels"]))
            rows = con.execute(f"SELECT DISTINCT CAST(value AS VARCHAR) FROM {src} WHERE attribute = ?", [column])
            labels = {str(r[0]) for r in rows.fetchall()}
        for role, name in files.items():
            src = duckdb_source(directory / str(name))
            cols = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
            q = '"' + column.replace('"', '""') + '"'
            if column in cols and role not in ("labels", "order", "sets"):  # a listing's own columns are not it
                got = con.execute(f"SELECT DISTINCT CAST({q} AS VARCHAR) FROM {src}").fetchall()
                out |= {str(r[0]) for r in got} - labels
            elif role == "order" and {"attribute", "leaf"} <= set(cols):
                rows = con.execute(f"SELECT DISTINCT CAST(leaf AS VARCHAR) FROM {src} WHERE attribute = ?", [column])
                out |= {str(r[0]) for r in rows.fetchall()}
    return out


def _obeys(kind: str, p: float, v: float, number: float) -> bool:
    if kind == "top-coding":
        return number <= max(p, v) + TOL * (abs(p) + 1)
    if kind == "bottom-coding":
        return number >= min(p, v) - TOL * (abs(p) + 1)
    q = number / p
    return abs(q - round(q)) <= 1e-6


def _recoded_covers(manifest: dict[str, Any], column: str) -> dict[str, list[str]]:
    """The manifest's ``recoded`` labels of ``column`` with the leaves each covers (the
    labels the recoding that met ``--k`` publishes in place of the treated values)."""
    block = manifest.get("recoded")
    spec = block.get(column) if isinstance(block, dict) else None
    covers = spec.get("covers") if isinstance(spec, dict) else None
    if not isinstance(covers, dict):
        return {}
    return {str(k): [str(x) for x in v] for k, v in covers.items() if isinstance(v, list)}


def _text_obeys(text: str, rule: tuple[str, float, float], leaves: list[str] | None) -> bool:
    """A published value obeys a value rule when each of its numbers does; a recoded label
    (a set of leaves) when some leaf it covers does — the records under it hold treated
    values, which the label's other leaves may exceed (recounted with the original)."""
    if leaves is not None:
        return any(all(_obeys(*rule, float(n)) for n in _NUMBER.findall(x)) for x in leaves) or not leaves
    return all(_obeys(*rule, float(n)) for n in _NUMBER.findall(text))


def treatment_findings(
    directory: Path, manifest: dict[str, Any], con: duckdb.DuckDBPyConnection
) -> list[tuple[bool, str]]:
    """Per treatment of the manifest: does every published number of its columns obey its
    rule (the other treatments are checked by :mod:`versapub.verify.treatments.perturbation`; a column
    that a later treatment changes again is checked by the last one only)?"""
    out: list[tuple[bool, str]] = []
    raw = manifest.get("treatments")
    if not isinstance(raw, list):
        return [(False, f"treatments must be a list of the treatments applied, got {raw!r}")]
    last = {str(c): i for i, r in enumerate(raw) if isinstance(r, dict) for c in r.get("columns") or []}
    for i, record in enumerate(raw):
        if not isinstance(record, dict) or not isinstance(record.get("columns"), list):
            out.append((False, f"a treatment must name itself and its columns, got {record!r}"))
            continue
        name = record.get("name")
        if name not in VALUE_RULES:  # verify/treatments/perturbation.py checks what the files show of it
            continue
        for column in record["columns"]:
            rule = _rule(record, str(column))
            if rule is None:
                out.append((False, f"{name} of {column!r}: its parameters cannot be read"))
                continue
            if last[str(column)] != i:  # a later treatment changes the column: only the last one shows
                out.append((True, f"{name} of {column!r}: a later treatment changes it (checked with the original)"))
                continue
            texts = _published_texts(directory, manifest, str(column), con)
            covers = _recoded_covers(manifest, str(column))
            bad = sorted(t for t in texts if not _text_obeys(t, rule, covers.get(t)))
            what = {
                "top-coding": f"at most {_written(max(rule[1], rule[2]))}",
                "bottom-coding": f"at least {_written(min(rule[1], rule[2]))}",
                "rounding": f"multiples of {_written(rule[1])}",
            }[rule[0]]
            out.append(
                (
                    not bad,
                    f"{name}: every published value of {column!r} is {what}"
                    if not bad
                    else f"{name}: {column!r} publishes {bad[:3]}, not {what}",
                )
            )
    return out


def recounted(original: Source | None, manifest: Any) -> list[tuple[bool, str]]:
    """With the original: each value rule's declared count of changed records, recounted
    (issue 71). A value rule is a function of the value alone, so the records it changed are
    known exactly wherever every earlier treatment of the column was a value rule too: top or
    bottom coding changes the records beyond its threshold, rounding those whose written value
    differs. After a treatment that draws or groups, the column's input is not known here."""
    if not isinstance(original, EncodedTable):
        return []
    out: list[tuple[bool, str]] = []
    current: dict[str, list[str] | None] = {}
    for record in _records(manifest):
        for column in map(str, record.get("columns") or []):
            if column not in original.names:
                continue
            if record.get("name") not in VALUE_RULES:
                current[column] = None  # drawn or grouped: what follows reads values not known here
                continue
            if column not in current:
                col = original.column(column)
                current[column] = [str(v) for v in np.asarray(col.values, dtype=object)[col.codes]]
            texts, rule = current[column], _rule(record, column)
            declared = (record.get("changed") or {}).get(column) if isinstance(record.get("changed"), dict) else None
            if texts is None or rule is None:
                continue
            new, moved = [], 0
            for raw in texts:
                x = _finite(raw)
                y = None if x is None else _apply(*rule, x)
                beyond = x is not None and (x > rule[1] if rule[0] == "top-coding" else x < rule[1])
                written = raw if y is None or y == x else _written(y)
                moved += int(beyond if rule[0] != "rounding" else written != raw)
                new.append(written)
            current[column] = new
            if isinstance(declared, int) and not isinstance(declared, bool):
                out.append(
                    (
                        declared == moved,
                        f"{record.get('name')} of {column!r}: {declared:,} record(s) declared changed, as the input "
                        "shows"
                        if declared == moved
                        else f"{record.get('name')} of {column!r}: {declared:,} record(s) declared changed, but the "
                        f"rule changes {moved:,} of the input's",
                    )
                )
    return out
