"""Building a :class:`ReleaseModel` from published count tables (in memory or read back)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable
from versapub.model.factors import AnatomyFactor, Factor, PlainFactor
from versapub.model.maxent import ReleaseModel
from versapub.model.sparse import Codes
from versapub.release.model import Release


@dataclass(frozen=True)
class TablePart:
    """One count table with its columns already encoded into the model's domains."""

    columns: dict[str, Codes]
    counts: npt.NDArray[np.float64]


def plain_factor(attrs: Sequence[str], part: TablePart, n: int, cards: Mapping[str, int]) -> PlainFactor:
    return PlainFactor(tuple(attrs), {a: part.columns[a] for a in attrs}, part.counts / n, dict(cards))


def anatomy_factor(
    qi: Sequence[str], s: str, qit: TablePart, st: TablePart, n: int, cards: Mapping[str, int]
) -> AnatomyFactor:
    """Latent-group factor; group ids are renumbered densely (any integers are accepted)."""
    ids, inv = np.unique(np.concatenate([qit.columns["group_id"], st.columns["group_id"]]), return_inverse=True)
    inv = inv.astype(np.int64).ravel()
    g_q, g_s = inv[: len(qit.counts)], inv[len(qit.counts) :]
    size = np.bincount(g_s, weights=st.counts, minlength=len(ids)).astype(np.float64)
    cols = {a: qit.columns[a] for a in qi}
    cols["__g"] = g_q
    return AnatomyFactor(tuple(qi), s, cols, qit.counts, g_s, st.columns[s], st.counts, size, float(n), dict(cards))


def factor_of(table: AnonymizedTable, n: int, cards: Mapping[str, int]) -> Factor:
    """The factor of one anonymized sub-table (its count tables share the source's dictionaries)."""
    parts = {
        role: TablePart(
            {name: np.asarray(codes, dtype=np.int64) for name, codes in zip(ct.names, ct.codes, strict=True)},
            ct.counts.astype(np.float64),
        )
        for role, ct in table.parts.items()
    }
    if table.kind == "plain":
        return plain_factor(table.attributes, parts["data"], n, cards)
    assert table.enforces is not None
    s = table.enforces.rhs
    return anatomy_factor([a for a in table.attributes if a != s], s, parts["qit"], parts["st"], n, cards)


def model_from_release(release: Release) -> ReleaseModel:
    """The model of an in-memory release (before or after it is written)."""
    src = release.source
    domains = {c.name: c.values for c in src.columns}
    cards = {a: len(v) for a, v in domains.items()}
    factors = [factor_of(t.table, release.n_records, cards) for t in release.tables]
    return ReleaseModel(factors, domains, release.n_records, [t.name for t in release.tables])
