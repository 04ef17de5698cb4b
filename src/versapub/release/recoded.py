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
        to = {str(leaf): str(v) for v, leaves in (spec.get("covers") or {}).items() for leaf in leaves}
        col = table.column(a)
        mapped = encode_values(a, np.array([to.get(str(v), str(v)) for v in col.values], dtype=object))
        table = table.replace(Column(a, mapped.codes[col.codes], mapped.values))
    return table
