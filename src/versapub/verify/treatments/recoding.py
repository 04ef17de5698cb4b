"""Columns recoded to meet ``--k`` (the manifest's optional ``recoded``), read by the
verifier itself: per attribute, each published value and the leaves it covers.  The
original is recoded through it before any check compares with it, so every check reads the
release as one over the recoded values; the block must be a function of the leaves (no leaf
covered twice, no published value also a leaf)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from versapub.data.source import Source
from versapub.data.table import Column, EncodedTable, encode_values


def _number(text: object) -> float | None:
    try:
        x = float(str(text))
    except ValueError:
        return None
    return x if x == x and abs(x) != float("inf") else None


def _problems_of(a: str, covers: object) -> list[str]:
    """Why one attribute's ``covers`` is not one published value per input value."""
    if not isinstance(covers, dict):
        return [f"recoded[{a!r}].covers must map published values to what they cover"]
    out: list[str] = []
    seen: dict[str, str] = {}
    spans: list[tuple[float, float, str]] = []
    rest = [v for v, c in covers.items() if c == {"rest": True}]
    for value, c in covers.items():
        if c == {"rest": True}:
            continue
        if isinstance(c, dict) and set(c) == {"from", "to"}:
            lo, hi = _number(c["from"]), _number(c["to"])
            if lo is None or hi is None or lo > hi:
                out.append(f"recoded {a!r}: {value!r} must cover numbers from a lowest to a highest, got {c!r}")
            else:
                spans.append((lo, hi, value))
            continue
        if not isinstance(c, list) or not all(isinstance(x, str) for x in c):
            out.append(f"recoded {a!r}: {value!r} must cover a list of leaves, a range of numbers or the rest")
            continue
        for leaf in c:
            if leaf in seen and seen[leaf] != value:
                out.append(f"recoded {a!r}: leaf {leaf!r} is covered by both {seen[leaf]!r} and {value!r}")
            seen[leaf] = value
    if len(rest) > 1:
        out.append(f"recoded {a!r}: {rest} all claim the rest of the values")
    spans.sort()
    out += [
        f"recoded {a!r}: {x[2]!r} and {y[2]!r} cover overlapping ranges of numbers"
        for x, y in itertools.pairwise(spans)
        if x[1] >= y[0]
    ]
    listed_inside = sorted(
        leaf for leaf in seen if (n := _number(leaf)) is not None and any(lo <= n <= hi for lo, hi, _ in spans)
    )
    if listed_inside:
        out.append(f"recoded {a!r}: leaf(s) {listed_inside[:3]} are listed and inside a range of numbers too")
    clash = sorted(v for v in covers if v in seen and seen[v] != v)
    if clash:
        out.append(f"recoded {a!r}: value(s) {clash[:3]} are both published values and leaves of others")
    return out


def recoding_problems(raw: object) -> list[str]:
    """Why the ``recoded`` block cannot be read as one published value per input value
    (empty: it can).  A published value covers a list of leaves, ``{"from", "to"}`` (the
    numbers between, inclusive) or ``{"rest": true}`` (every value nothing else covers)."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        return [f"recoded must map attributes to their recoding, got {raw!r}"]
    return [
        p for a, spec in raw.items() for p in _problems_of(a, spec.get("covers") if isinstance(spec, dict) else None)
    ]


def _published(value: str, covers: dict[str, Any]) -> str:
    """The published value covering one input value (itself when nothing covers it)."""
    for v, c in covers.items():
        if isinstance(c, list) and value in c:
            return v
    n = _number(value)
    if n is not None:
        for v, c in covers.items():
            if isinstance(c, dict) and "from" in c and float(c["from"]) <= n <= float(c["to"]):
                return v
    return next((v for v, c in covers.items() if c == {"rest": True}), value)


def recoded_original(original: Source | None, manifest: Any) -> Source | None:
    """``original`` with every recoded attribute's values replaced by the published value
    covering them (values no published value covers stay); unchanged without a readable
    ``recoded`` block or for a table not in memory."""
    raw = manifest.get("recoded") if isinstance(manifest, dict) else None
    if original is None or not raw or recoding_problems(raw) or not isinstance(original, EncodedTable):
        return original
    table = original
    for a, spec in raw.items():
        if a not in table.names:
            continue
        col = table.column(a)
        mapped = encode_values(a, np.array([_published(str(v), spec["covers"]) for v in col.values], dtype=object))
        table = table.replace(Column(a, mapped.codes[col.codes], mapped.values))
    return table
