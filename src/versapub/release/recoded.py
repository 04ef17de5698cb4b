"""A table read as a release publishes it when the release recoded columns to meet ``--k``
(the manifest's ``recoded``, written by :mod:`versapub.publishing.recoding`): each value
replaced by the published value covering it, so that the original compares with the
release (``evaluate``, ``query --original``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from versapub.data.table import Column, EncodedTable, encode_values


def as_published(table: EncodedTable, recoded: Mapping[str, Any] | None) -> EncodedTable:
    """``table`` with every recoded attribute's values replaced by the published value that
    covers them (values no published value covers stay as they are)."""
    for a, spec in (recoded or {}).items():
        if a not in table.names or not isinstance(spec, Mapping):
            continue
        col = table.column(a)
        mapped = encode_values(a, np.array(_covering(spec.get("covers") or {}, col.values), dtype=object))
        table = table.replace(Column(a, mapped.codes[col.codes], mapped.values))
    return table


def _covering(covers: Mapping[str, Any], values: Any) -> list[str]:
    """Per input value the published value covering it (the manifest's three forms: a list
    of leaves, ``{"from", "to"}`` numbers inclusive, ``{"rest": true}``)."""
    listed = {str(leaf): str(v) for v, c in covers.items() if isinstance(c, list) for leaf in c}
    ranges = [
        (float(c["from"]), float(c["to"]), str(v)) for v, c in covers.items() if isinstance(c, Mapping) and "from" in c
    ]
    rest = next((str(v) for v, c in covers.items() if isinstance(c, Mapping) and c.get("rest")), None)
    out = []
    for raw in values:
        v = str(raw)
        if v in listed:
            out.append(listed[v])
            continue
        try:
            x = float(v)
        except ValueError:
            x = None
        hit = next((p for lo, hi, p in ranges if x is not None and lo <= x <= hi), None)
        out.append(hit if hit is not None else rest if rest is not None else v)
    return out
