"""A table read as a release publishes it when the release treated columns before
anonymizing (the manifest's ``treatments``, written by :mod:`versapub.publishing.treating`):
each value rule applied again, in order, so that the original compares with the release
(``evaluate``, ``query --original``).  A treatment that drew at random cannot be applied
again (its draws are secret): the table is returned as far as the rules go, and the
treatment named."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from versapub.data.table import EncodedTable
from versapub.treatments import make_treatment

#: The treatments that act value by value, and how a record's parameters rebuild them.
_AGAIN = {
    "top-coding": lambda r, c: {"threshold": r["threshold"][c], "value": r["replacement"][c]},
    "bottom-coding": lambda r, c: {"threshold": r["threshold"][c], "value": r["replacement"][c]},
    "rounding": lambda r, c: {"base": r["base"]},
}


def as_treated(table: EncodedTable, records: Sequence[Any] | None) -> tuple[EncodedTable, list[str]]:
    """``table`` with the manifest's value treatments applied in order, and the names of
    the treatments that could not be (random draws, or columns it does not hold)."""
    skipped: list[str] = []
    for r in records or []:
        if not isinstance(r, dict) or r.get("name") not in _AGAIN:
            skipped.append(str(r.get("name") if isinstance(r, dict) else r))
            continue
        for c in r.get("columns") or []:
            if c not in table.names:
                continue
            params = _AGAIN[str(r["name"])](r, c)
            table = make_treatment(str(r["name"]), columns=[c], **params).apply(table, np.random.default_rng(0)).table
    return table, skipped
