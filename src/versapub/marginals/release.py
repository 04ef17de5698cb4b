"""A collection of anonymized marginals as a release (format ``versapub-release/1``).

Every marginal is a ``generalized`` table (``docs/release-format.md``): its attributes at
their levels, values generalized to hierarchy nodes with their leaves listed; a marginal
holding the sensitive attribute names it with ``sensitive`` (no rule: the collection's
checks protect it).  The release's guarantee is k-anonymity with the collection's ``k``
(k-link anonymity, table by table) and the manifest's ``marginals`` section states the
collection's requirement — the sensitive attribute, ``k`` and the diversity form — which
the independent verifier re-checks from the files (:mod:`versapub.verify.collection.collection_check`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.anonymizers.generalizing.generalize import Target, cells_table
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.marginals.collection import Collection, Verdict
from versapub.marginals.spec import Marginal, Requirement
from versapub.privacy.guarantees.kanonymity import KAnonymity
from versapub.privacy.rules import Reduction
from versapub.release.value import InputInfo, PublishedTable, Release
from versapub.schema.gnf import check_gnf
from versapub.schema.model import Schema, SubTable


def marginal_table(table: EncodedTable, coll: Collection, m: Marginal) -> AnonymizedTable:
    """One marginal as a generalized count table of ``table`` (its cells from the
    collection's distinct rows; the sensitive attribute exact)."""
    space = coll.space
    s = space.sensitive
    attrs = [a for a in table.names if a in m.attributes]
    ns = [a for a in attrs if a != s]
    cols = [space.column((a, m.level(a))) for a in ns]
    cards = [space.card((a, m.level(a))) for a in ns]
    holds = s in attrs
    if holds:
        cols.append(space.rows[s])
        cards.append(table.cardinality(s))
    if cols:
        g = group_rows(cols, cards, with_inverse=True)
        assert g.inverse is not None
        counts = np.bincount(g.inverse, weights=space.weight, minlength=len(g.counts)).astype(np.int64)
        keys = [k.astype(np.int64) for k in g.keys]
    else:
        counts, keys = np.array([table.n_rows], dtype=np.int64), []
    n_cells = len(counts)
    cover = [(np.full(n_cells, m.level(a), dtype=np.int64), keys[j]) for j, a in enumerate(ns)]
    dims = [space.dims[a] for a in ns]
    s_codes = keys[-1] if holds else None
    goal = Target(
        None,
        tuple(ns),
        np.zeros(0, dtype=np.int64),
        table.cardinality(s) if holds else 1,
        sensitive=s if holds else None,
    )
    if ns:
        cls = group_rows(keys[: len(ns)], [int(k.max()) + 1 for k in keys[: len(ns)]], with_inverse=True)
        assert cls.inverse is not None
        sizes = np.bincount(cls.inverse, weights=counts).astype(np.int64)
    else:
        sizes = np.array([int(counts.sum())], dtype=np.int64)
    values, freq = np.unique(sizes, return_counts=True)
    stats: dict[str, object] = {
        "groups": len(sizes),
        "group_sizes": {int(v): int(c) for v, c in zip(values, freq, strict=True)},
        "achieved": int(sizes.min()) if len(sizes) else None,
        "levels": m.to_json(),
    }
    return cells_table(table.select(attrs), goal, dims, cover, counts, stats, s_codes=s_codes)


def collection_release(
    table: EncodedTable,
    coll: Collection,
    req: Requirement,
    verdict: Verdict,
    info: InputInfo,
    *,
    roles: Mapping[str, str] | None = None,
    hierarchies: Mapping[str, str] | None = None,
    hierarchy_sha256: Mapping[str, str] | None = None,
    search: list[dict[str, Any]] | None = None,
    timings: dict[str, float] | None = None,
) -> Release:
    """The release of the collection (``verdict``: its checks, which must hold);
    ``roles``: a role per marginal (``base``, ``given``, ``injected``), ``hierarchies``:
    each attribute's hierarchy file (provenance, and what ``marginals inject`` reads; by
    name, found again by ``hierarchy_sha256``), ``search``: the steps of the search that chose the marginals."""
    if not verdict.ok:
        raise ValueError("a collection that fails its checks is never released")
    tables = tuple(
        PublishedTable(name, marginal_table(table, coll, m)) for name, m in zip(coll.names, coll.marginals, strict=True)
    )
    schema = Schema(tuple(SubTable(t.name, t.attributes, None) for t in tables))
    section: dict[str, Any] = {
        **req.to_json(),
        "tables": [
            {"name": n, "levels": m.to_json(), "role": (roles or {}).get(n, "given")}
            for n, m in zip(coll.names, coll.marginals, strict=True)
        ],
        "checks": verdict.to_json(),
        "decomposable": coll.decomposable(),
        "hierarchies": dict(hierarchies or {}),
        "hierarchy_sha256": dict(hierarchy_sha256 or {}),
    }
    if coll.decomposable():
        section["kl_closed_form"] = coll.kl()
    if search is not None:
        section["search"] = search
    return Release(
        tables=tables,
        source=table,
        guarantee=KAnonymity(req.k),
        reduction=Reduction((), (), ()),
        feasibility=(),
        schema=schema,
        gnf=check_gnf(schema, []),
        decomposition="none",
        anonymizer="marginals",
        anonymizer_params={"k": req.k, "diversity": req.diversity.to_manifest()},
        seed=0,
        input=info,
        timings=dict(timings or {}),
        marginals=section,
    )
