"""Columns recoded to meet ``--k`` (the manifest's optional ``recoded``), read by the
verifier itself: per attribute, each published value and the leaves it covers.  The
original is recoded through it before any check compares with it, so every check reads the
release as one over the recoded values; the block must be a function of the leaves (no leaf
covered twice, no published value also a leaf)."""

from __future__ import annotations

from typing import Any

import numpy as np

from versapub.data.source import Source
from versapub.data.table import Column, EncodedTable, encode_values


def recoding_problems(raw: object) -> list[str]:
    """Why the ``recoded`` block cannot be read as one value per leaf (empty: it can)."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        return [f"recoded must map attributes to their recoding, got {raw!r}"]
    out = []
    for a, spec in raw.items():
        covers = spec.get("covers") if isinstance(spec, dict) else None
        if not isinstance(covers, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in covers.values()
        ):
            out.append(f"recoded[{a!r}].covers must map published values to lists of leaves")
            continue
        seen: dict[str, str] = {}
        for value, leaves in covers.items():
            for leaf in leaves:
                if leaf in seen and seen[leaf] != value:
                    out.append(f"recoded {a!r}: leaf {leaf!r} is covered by both {seen[leaf]!r} and {value!r}")
                seen[leaf] = value
        clash = sorted(v for v in covers if v in seen and seen[v] != v)
        if clash:
            out.append(f"recoded {a!r}: value(s) {clash[:3]} are both published values and leaves of others")
    return out


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
        to = {leaf: value for value, leaves in spec["covers"].items() for leaf in leaves}
        col = table.column(a)
        mapped = encode_values(a, np.array([to.get(str(v), str(v)) for v in col.values], dtype=object))
        table = table.replace(Column(a, mapped.codes[col.codes], mapped.values))
    return table
