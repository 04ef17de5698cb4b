"""The release model of an in-memory release (before or after it is written): every
published table becomes its kind's :class:`~versapub.model.factors.Factor`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.kinds.base import TablePart, entry_of, get_kind
from versapub.model.factors import Factor
from versapub.model.induced import release_model
from versapub.model.maxent import ReleaseModel
from versapub.model.sparse import Codes
from versapub.release.value import Release


def factor_of(table: AnonymizedTable, n: int, cards: Mapping[str, int], name: str = "T") -> Factor:
    """The factor of one anonymized sub-table (its count tables share the source's
    dictionaries, so codes are the model's codes; a declared domain is the whole domain)."""
    parts = {
        role: TablePart(
            {col: np.asarray(codes, dtype=np.int64) for col, codes in zip(ct.names, ct.codes, strict=True)},
            ct.counts.astype(np.float64),
        )
        for role, ct in table.parts.items()
    }

    dictionaries = {
        col: d for ct in table.parts.values() for col, d in zip(ct.names, ct.dictionaries, strict=True) if d is not None
    }

    def codes_of(attr: str, values: Sequence[str] | None) -> Codes:
        if values is None:
            return np.arange(cards[attr], dtype=np.int64)
        index = {str(v): i for i, v in enumerate(dictionaries[attr][: cards[attr]])}
        return np.asarray([index.get(str(v), -1) for v in values], dtype=np.int64)  # in the given order

    return get_kind(table.kind).factor(entry_of(name, table), parts, n, cards, codes_of)


def model_from_release(release: Release) -> ReleaseModel:
    """The model of an in-memory release."""
    src = release.source
    domains = {c.name: c.values for c in src.columns}
    cards = {a: len(v) for a, v in domains.items()}
    factors = [factor_of(t.table, release.n_records, cards, t.name) for t in release.tables]
    return release_model(factors, domains, release.n_records, [t.name for t in release.tables])
