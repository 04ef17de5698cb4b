"""Building a :class:`ReleaseModel` from published count tables (in memory or read back)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.table import GROUP_KEY
from versapub.errors import ReleaseError
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


#: Largest product of sensitive domains a suppressed group is spread over.
MAX_SUPPRESSED_CELLS = 2_000_000


def anatomy_factor(
    qi: Sequence[str],
    s: Sequence[str],
    qit: TablePart,
    st: TablePart,
    n: int,
    cards: Mapping[str, int],
    suppressed: tuple[int, Sequence[Codes]] | None = None,
) -> AnatomyFactor:
    """Latent-group factor; group ids are renumbered densely (any integers are accepted).

    ``suppressed`` = (group id, codes of each sensitive attribute's domain): that group's
    records have no ST rows; the maximum-entropy estimate spreads them uniformly over the
    product of the domains (the principle of generalized values, Kifer & Gehrke)."""
    st_g_raw, st_cols, st_counts = st.columns["group_id"], {a: st.columns[a] for a in s}, st.counts
    if suppressed is not None:
        gid, doms = suppressed
        size_sup = float(qit.counts[qit.columns["group_id"] == gid].sum())
        cells = int(np.prod([len(d) for d in doms], dtype=np.float64))
        if size_sup > 0 and cells > 0:
            if cells > MAX_SUPPRESSED_CELLS:
                raise ReleaseError(
                    f"The suppressed group would be spread over {cells:,} combinations of "
                    f"{list(s)} (limit {MAX_SUPPRESSED_CELLS:,}); the release model cannot hold it."
                )
            grids = np.meshgrid(*[np.asarray(d, dtype=np.int64) for d in doms], indexing="ij")
            st_g_raw = np.concatenate([st_g_raw, np.full(cells, gid, dtype=np.int64)])
            st_cols = {a: np.concatenate([st_cols[a], g.ravel()]) for a, g in zip(s, grids, strict=True)}
            st_counts = np.concatenate([st_counts, np.full(cells, size_sup / cells)])
    ids, inv = np.unique(np.concatenate([qit.columns["group_id"], st_g_raw]), return_inverse=True)
    inv = inv.astype(np.int64).ravel()
    g_q, g_s = inv[: len(qit.counts)], inv[len(qit.counts) :]
    size = np.bincount(g_s, weights=st_counts, minlength=len(ids)).astype(np.float64)
    cols = {a: qit.columns[a] for a in qi}
    cols[GROUP_KEY] = g_q
    return AnatomyFactor(tuple(qi), tuple(s), cols, qit.counts, g_s, st_cols, st_counts, size, float(n), dict(cards))


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
    s = table.sensitive_attributes
    suppressed = None
    if table.suppressed_group is not None:
        doms = [np.arange(cards[a], dtype=np.int64) for a in s]
        suppressed = (table.suppressed_group, doms)
    qi = [a for a in table.attributes if a not in s]
    return anatomy_factor(qi, s, parts["qit"], parts["st"], n, cards, suppressed)


def model_from_release(release: Release) -> ReleaseModel:
    """The model of an in-memory release (before or after it is written)."""
    src = release.source
    domains = {c.name: c.values for c in src.columns}
    cards = {a: len(v) for a, v in domains.items()}
    factors = [factor_of(t.table, release.n_records, cards) for t in release.tables]
    return ReleaseModel(factors, domains, release.n_records, [t.name for t in release.tables])
