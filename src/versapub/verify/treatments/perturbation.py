"""The verifier's checks of treatments that change values at random or by groups (the
manifest's ``treatments``, ``docs/release-format.md``), from the files and, with the
original, against it — written from the format, sharing nothing with
:mod:`versapub.treatments`:

* **microaggregation**: every combination a file publishes of each microaggregated set of
  columns (``sets``) is held by at least ``k`` records (the file's counts, summed);
* **PRAM**: every published matrix is stochastic (entries in [0, 1], rows summing to 1); one
  claimed invariant leaves its stationary distribution (the frequencies it was built on)
  unchanged, and the column's published counts lie within ``PRAM_SIGMAS`` standard
  deviations of what that distribution expects;
* **noise and swapping**: named, with whether the draws were secret;
* **targeted swapping**: the units swapped are at least the declared rate of the units;
* **with the original**: each declared count of changed values (records) is at least what
  the files show — the records a published count lacks against the input's,
  ``sum over cells of max(0, input - published)`` — and a PRAM column's changed count lies
  within ``PRAM_SIGMAS`` standard deviations of the matrix's expectation on the input.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from versapub.data.source import Source
from versapub.data.sql import duckdb_source
from versapub.verify.treatments.treatments import PRAM_SIGMAS, VALUE_RULES

#: (passed, sentence) or (passed, sentence, needs attention).
Finding = tuple[bool, str] | tuple[bool, str, bool]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def published_counts(
    directory: Path,
    manifest: dict[str, Any],
    columns: list[str],
    con: duckdb.DuckDBPyConnection,
    exact: bool = False,
    whole_values: bool = False,
) -> dict[tuple[str, ...], int] | None:
    """The published count of every combination of ``columns`` in the first file that
    publishes them all beside a ``count`` (None: no file does); ``exact``: only a table
    that publishes values as they are (a plain or Anatomy table, no column recoded);
    ``whole_values``: only a table whose published values of ``columns`` are each a function
    of the value alone (recoded values are; a generalized table's ranges, cut per class, are
    not, where it generalizes one of ``columns``)."""
    recoded = manifest.get("recoded") if isinstance(manifest.get("recoded"), dict) else {}
    if exact and (set(columns) & set(recoded or {}) or manifest.get("removed")):
        return None
    for t in manifest.get("tables", []):
        if not isinstance(t, dict) or not set(columns) <= set(t.get("attributes") or []):
            continue
        if exact and t.get("kind") not in ("plain", "anatomy"):
            continue
        if whole_values and set(columns) & set(map(str, t.get("generalized") or [])):
            continue
        for name in (t.get("files") or {}).values():
            src = duckdb_source(directory / str(name))
            have = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()]
            if not set(columns) <= set(have) or "count" not in have:
                continue
            keys = ", ".join(f"CAST({_q(c)} AS VARCHAR)" for c in columns)
            rows = con.execute(f"SELECT {keys}, sum(CAST({_q('count')} AS BIGINT)) FROM {src} GROUP BY ALL").fetchall()
            return {tuple(str(v) for v in r[:-1]): int(r[-1]) for r in rows}
    return None


def _permutes(record: dict[str, Any], cols: list[str]) -> bool:
    """Whether a treatment leaves every combination of ``cols`` held by as many records as
    before: it treats none of them, or only exchanges their values between records — rank
    swapping of one column, targeted swapping of whole rows of its columns."""
    treated = {str(c) for c in record.get("columns") or []}
    touched = treated & set(cols)
    if not touched:
        return True
    if record.get("name") == "rank-swapping":
        return touched == set(cols) and len(cols) == 1
    return record.get("name") == "targeted-swapping" and set(cols) <= treated


def _microaggregation(
    directory: Path, manifest: dict[str, Any], record: dict[str, Any], con: Any, later: list[dict[str, Any]]
) -> list[Finding]:
    """Every published combination of each microaggregated set holds ``k`` records — or the
    fewer the record declares (``published_k``: suppression removed records of its groups
    afterwards, said plainly and flagged for attention); a set a later treatment (``later``)
    changed again other than by exchanging values between records is that treatment's to check."""
    k, sets, declared = record.get("k"), record.get("sets"), record.get("published_k", record.get("k"))
    if not isinstance(k, int) or isinstance(k, bool) or not isinstance(sets, list):
        return [(False, "microaggregation: its k and sets cannot be read")]
    if not isinstance(declared, int) or isinstance(declared, bool) or not 1 <= declared <= k:
        return [(False, f"microaggregation: published_k must be a whole number from 1 to k = {k}, got {declared!r}")]
    why = (
        f" (k = {k}; suppression removed records of its groups afterwards, as the manifest says)"
        if declared < k
        else ""
    )
    out: list[Finding] = []
    for cols in sets:
        named = [str(c) for c in cols]
        if not all(_permutes(r, named) for r in later):
            out.append((True, f"microaggregation of {named}: changed again by a later treatment, whose check reads it"))
            continue
        counts = published_counts(directory, manifest, named, con, whole_values=True)
        if counts is None:
            out.append((True, f"microaggregation of {named}: no file publishes their values together as they are"))
            continue
        small = sorted(v for v, n in counts.items() if n < declared)
        out.append(
            (
                not small,
                f"microaggregation: every published combination of {named} is held by at least {declared} records{why}"
                if not small
                else f"microaggregation: {len(small)} published combination(s) of {named} held by fewer than "
                f"{declared} records{why}, e.g. {small[0]}",
                *((True,) if declared < k and not small else ()),
            )
        )
    return out


def _matrix(entry: Any) -> tuple[list[str], np.ndarray] | None:
    try:
        values = [str(v) for v in entry["values"]]
        m = np.array(entry["matrix"], dtype=float)
    except (KeyError, TypeError, ValueError):
        return None
    return (values, m) if m.shape == (len(values), len(values)) else None


def stationary(m: np.ndarray) -> np.ndarray:
    """The distribution ``pi`` with ``pi m = pi`` (the left eigenvector of eigenvalue 1)."""
    w, v = np.linalg.eig(m.T)
    pi = np.real(v[:, int(np.argmin(np.abs(w - 1)))])
    return pi / pi.sum()


def _pram(
    directory: Path, manifest: dict[str, Any], record: dict[str, Any], con: Any, later: frozenset[str]
) -> list[Finding]:
    """Each matrix stochastic; an invariant one's stationary distribution against the
    published counts, unless a later treatment (``later``) changed the column again."""
    out: list[Finding] = []
    entries = record.get("matrices")
    if not isinstance(entries, list) or not entries:
        return [(False, "pram: the manifest publishes no transition matrix")]
    for entry in entries:
        got = _matrix(entry) if isinstance(entry, dict) else None
        column = str(entry.get("column")) if isinstance(entry, dict) else "?"
        if got is None:
            out.append((False, f"pram of {column!r}: a matrix cannot be read"))
            continue
        values, m = got
        stochastic = bool((m >= -1e-12).all() and (m <= 1 + 1e-12).all() and np.abs(m.sum(axis=1) - 1).max() < 1e-6)
        where = f" (stratum {entry.get('stratum')})" if entry.get("stratum") else ""
        out.append(
            (
                stochastic,
                f"pram of {column!r}{where}: the matrix is " + ("stochastic" if stochastic else "not stochastic"),
            )
        )
        if stochastic and record.get("invariant") is True and not entry.get("stratum") and column not in later:
            out.append(_invariant(directory, manifest, column, values, m, con))
    return out


def _invariant(
    directory: Path, manifest: dict[str, Any], column: str, values: list[str], m: np.ndarray, con: Any
) -> Finding:
    """An invariant matrix's stationary distribution against the published counts."""
    pi = stationary(m)
    if np.abs(pi @ m - pi).max() > 1e-6 or (pi < -1e-9).any():
        return (False, f"pram of {column!r}: the matrix claimed invariant has no stationary distribution")
    counts = published_counts(directory, manifest, [column], con)
    if counts is None:
        return (True, f"pram of {column!r}: invariant; no file publishes the column beside a count")
    n = sum(counts.values())
    got = np.array([counts.get((v,), 0) for v in values], dtype=float)
    if got.sum() != n:
        return (True, f"pram of {column!r}: invariant; the column is published generalized (not compared)")
    far = np.abs(got - n * pi) > PRAM_SIGMAS * np.sqrt(np.maximum(n * pi, 1.0))
    return (
        not far.any(),
        f"pram of {column!r}: invariant, and the published frequencies agree with it"
        if not far.any()
        else f"pram of {column!r}: the published counts of {[values[i] for i in np.flatnonzero(far)][:3]} lie "
        f"more than {PRAM_SIGMAS:g} standard deviations from what the invariant matrix keeps",
    )


def perturbation_findings(directory: Path, manifest: dict[str, Any], con: Any) -> list[Finding]:
    """From the files: each treatment that is not a value rule, checked as the module says."""
    out: list[Finding] = []
    records = [r for r in manifest.get("treatments") or [] if isinstance(r, dict)]
    for i, record in enumerate(records):
        if record.get("name") in VALUE_RULES:
            continue
        name = record.get("name")
        if name == "microaggregation":
            out += _microaggregation(directory, manifest, record, con, records[i + 1 :])
        elif name == "pram":
            later = frozenset(str(c) for r in records[i + 1 :] for c in r.get("columns") or [])
            out += _pram(directory, manifest, record, con, later)
        elif name in ("noise", "rank-swapping"):
            out.append(
                (True, f"{name} of {record.get('columns')}: applied before anonymizing (values drawn at random)")
            )
        elif name == "targeted-swapping":
            units, swapped, rate = record.get("units"), record.get("swapped_units"), record.get("rate")
            try:
                left = int(record.get("unmatched_units", 0))
                ok = int(swapped) + 2 * left >= math.floor(float(rate) * int(units))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                ok = False
            out.append((ok, f"targeted swapping: {swapped} of {units} units swapped, rate {rate} declared"))
        draws = record.get("draws")
        if draws is not None:
            out.append(
                (
                    draws in ("secret", "seeded"),
                    f"{name}: its random draws are secret (not recorded)"
                    if draws == "secret"
                    else f"{name}: WARNING: its draws came from the seed the manifest records (a test release)",
                )
            )
    return out


def changed_findings(directory: Path, manifest: dict[str, Any], original: Source, con: Any) -> list[Finding]:
    """With the original: each declared count of changed values is at least what the files
    show, and a PRAM column's lies near the matrix's expectation (module docstring)."""
    out: list[Finding] = []
    if not hasattr(original, "column"):
        return out
    records = [r for r in manifest.get("treatments") or [] if isinstance(r, dict) and r.get("name") not in VALUE_RULES]
    last = {str(c): i for i, r in enumerate(records) for c in r.get("columns") or []}
    times = {c: sum(str(c) in map(str, r.get("columns") or []) for r in records) for c in last}
    for i, record in enumerate(records):
        for column in record.get("columns") or []:
            if column not in getattr(original, "names", ()) or last[column] != i:
                continue
            # every treatment of the column moved records: together at most the sum of what each declares
            each = [
                (r.get("changed") or {}).get(column) if isinstance(r.get("changed"), dict) else None
                for r in records
                if column in (r.get("columns") or [])
            ]
            declared = sum(d for d in each if isinstance(d, int) and not isinstance(d, bool))
            if len(each) != sum(isinstance(d, int) and not isinstance(d, bool) for d in each):
                continue
            # local suppression (issue 65) emptied some of the column's values after the treatments
            block = manifest.get("suppressed")
            emptied = (block.get("cells") or {}).get(str(column), 0) if isinstance(block, dict) else 0
            declared += emptied if isinstance(emptied, int) and not isinstance(emptied, bool) else 0
            counts = published_counts(directory, manifest, [str(column)], con, exact=True)
            col = original.column(column)
            mine = dict(zip((str(v) for v in col.values), (int(c) for c in col.counts()), strict=True))
            if counts is None or any(k[0] not in mine and n for k, n in counts.items() if record["name"] == "pram"):
                continue
            shown = sum(max(0, c - counts.get((v,), 0)) for v, c in mine.items())
            out.append(
                (
                    shown <= declared,
                    f"{record['name']} of {column!r}: {declared:,} value(s) declared changed, at least {shown:,} shown"
                    if shown <= declared
                    else f"{record['name']} of {column!r}: {declared:,} value(s) declared changed, but the files show "
                    f"{shown:,} records moved from their input values",
                )
            )
            if record["name"] == "pram" and times[column] == 1:  # the matrix's expectation on the input it read
                clusters = _households(manifest, original, str(column)) if record.get("unit") == "household" else None
                out += _pram_expected(record, str(column), mine, declared, clusters)
    return out


def _households(manifest: dict[str, Any], original: Source, column: str) -> tuple[list[str], np.ndarray] | None:
    """Each household's value of ``column`` (its first member's) and size, read from the
    original by the manifest's household id (``None`` when the original does not hold it)."""
    block = manifest.get("household")
    hh = block.get("column") if isinstance(block, dict) else None
    if not isinstance(hh, str) or hh not in getattr(original, "names", ()):
        return None
    ids = np.asarray(original.codes(hh), dtype=np.int64)  # type: ignore[attr-defined]
    _, first, size = np.unique(ids, return_index=True, return_counts=True)
    col = original.column(column)
    texts = np.asarray(col.values, dtype=object).astype(str)[np.asarray(original.codes(column))[first]]  # type: ignore[attr-defined]
    return [str(v) for v in texts], size.astype(float)


def _pram_expected(
    record: dict[str, Any],
    column: str,
    counts: dict[str, int],
    declared: int,
    households: tuple[list[str], np.ndarray] | None = None,
) -> list[Finding]:
    """The changed count against ``sum_i n_i (1 - P[i, i])`` (one matrix for all strata);
    drawn once per household (``households``: each one's value and size), its variance is
    ``sum_h size_h^2 P(1 - P)``, the members changing together."""
    entries = [e for e in record.get("matrices") or [] if isinstance(e, dict) and e.get("column") == column]
    if len(entries) != 1 or (got := _matrix(entries[0])) is None:
        return []  # a matrix per stratum: the strata's counts are not in the manifest
    values, m = got
    stay = np.diag(m)
    n = np.array([counts.get(v, 0) for v in values], dtype=float)
    mean, var = float((n * (1 - stay)).sum()), float((n * stay * (1 - stay)).sum())
    if households is not None:
        at = {v: i for i, v in enumerate(values)}
        known = [i for i, v in enumerate(households[0]) if v in at]
        p = stay[[at[households[0][i]] for i in known]]
        sizes = households[1][known]
        var = float((sizes * sizes * p * (1 - p)).sum())
    ok = abs(declared - mean) <= PRAM_SIGMAS * math.sqrt(max(var, 1.0))
    return [
        (
            ok,
            f"pram of {column!r}: {declared:,} changed, the matrix expects {mean:,.0f} on the input"
            + ("" if ok else f" (more than {PRAM_SIGMAS:g} standard deviations away)"),
        )
    ]
