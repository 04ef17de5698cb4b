"""Incognito on a Dask cluster: the ``incognito`` anonymizer's path for a table whose records
are not in memory (:class:`versapub.scale.table.DaskTable`).

Incognito (LeFevre, DeWitt & Ramakrishnan, SIGMOD 2005) never needs a record, only counts:
every node of the lattice is checked on the table's distinct rows of the quasi-identifiers
and the sensitive attribute with their records (in memory too: a node's classes are those
rows mapped to the node's levels and summed, a rollup from the lattice's bottom).  Here
those distinct rows come from a distributed group-by (counted in every partition, shuffled
on the values, counted again); the search, its pruning, suppression and the choice among
minimal nodes then run as in memory on them — the same nodes, the same choice.  The
chosen node is applied to the records on the cluster (each record's values mapped to the
node's, a failing class's records to the roots), and the cells counted and
hash-partitioned like every count table there.

Refused, with the reason, when the distinct rows exceed :data:`CLIENT_ROWS` (the lattice's
counts are then no longer small: a table whose quasi-identifiers nearly single out every
record, for which Mondrian on the cluster is the tool).
"""

from __future__ import annotations

import math
import shutil
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, Labels
from versapub.anonymizers.generalizing.generalize import IntArray, class_stats, leaf_order, published_values
from versapub.anonymizers.generalizing.incognito_search import Minimal
from versapub.data.groupby import group_rows
from versapub.errors import ConfigError

if TYPE_CHECKING:
    from versapub.data.counts import CountTable
    from versapub.privacy.guarantees.base import Guarantee
    from versapub.scale.table import DaskTable

#: Distinct rows of the quasi-identifiers and the sensitive attribute brought to the client
#: for the lattice search (16 bytes per row and attribute at most).
CLIENT_ROWS = 20_000_000


def distinct_rows(table: DaskTable, qi: Sequence[str], s: str | None) -> tuple[list[IntArray], IntArray]:
    """The codes of the distinct rows of ``qi`` and ``s`` (zeros without one) and their
    records, from a distributed group-by."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [*qi, *([s] if s else [])]
    if not names:
        return [np.zeros(1, dtype=np.int64)], np.array([table.n_rows], dtype=np.int64)
    ct = table.count_table(names)
    try:
        if ct.n_rows > CLIENT_ROWS:
            raise ConfigError(
                f"Incognito on the Dask backend searches its lattice over the distinct rows of the quasi-identifiers "
                f"and the sensitive attribute ({', '.join(names)}): there are {ct.n_rows:,}, more than "
                f"{CLIENT_ROWS:,} to hold in this process. Give fewer or coarser quasi-identifiers (hierarchy levels "
                "applied when reading), or use --anonymizer mondrian, which cuts the records on the cluster."
            )
        t = pa.concat_tables([pq.read_table(f) for f in sorted(ct.path.glob("*.parquet"))])
        keys = [t.column(n).to_numpy().astype(np.int64) for n in names]
        counts = t.column("count").to_numpy().astype(np.int64)
    finally:
        shutil.rmtree(ct.path, ignore_errors=True)
    if s is None:
        keys.append(np.zeros(len(counts), dtype=np.int64))
    return keys, counts


def _publish_part(df: Any, spec: dict[str, Any]) -> Any:
    """One partition's records with their published codes (a failing class's records at
    every quasi-identifier's root)."""
    import pandas as pd

    key = np.zeros(len(df), dtype=np.int64)
    node = {}
    for a, (gen, card) in spec["gen"].items():
        node[a] = gen[df[a].to_numpy()]
        key = key * card + node[a]
    failing = spec["failing"]
    sup = np.zeros(len(df), dtype=bool)
    if len(failing):
        i = np.minimum(np.searchsorted(failing, key), len(failing) - 1)
        sup = failing[i] == key
    out = {}
    for a in spec["order"]:
        if a in spec["gen"]:
            out[a] = np.where(sup, spec["root"][a], spec["code"][a][node[a]]).astype(np.int32)
        else:
            out[a] = df[a].to_numpy().astype(np.int32)
    return pd.DataFrame(out)


def publish_on_cluster(
    table: DaskTable,
    found: Minimal,
    best: tuple[int, ...],
    suppressed: npt.NDArray[np.bool_],
    guarantee: Guarantee,
    stats: dict[str, Any],
) -> AnonymizedTable:
    """The generalized table of Incognito's node ``best`` with the search's ``stats``: the
    distinct rows ``suppressed`` (their class fails the guarantee) at the roots, as in memory."""
    import pandas as pd

    from versapub.scale.table import materialize

    goal, lattice, keys, counts, dims = found.goal, found.lattice, found.keys, found.counts, found.dims
    qi = list(goal.qi)
    g = [lattice.gen[j][lv][keys[j]] for j, lv in enumerate(best)]
    cards = [len(lattice.under[j][lv]) for j, lv in enumerate(best)]
    if math.prod(cards) >= 2**62:
        raise ConfigError(
            f"Incognito's node {dict(zip(qi, best, strict=True))} has too many classes to key on the cluster; give "
            "coarser hierarchies."
        )
    s, sup = keys[-1], suppressed
    cls = group_rows(g, cards, with_inverse=True).inverse if g else np.zeros(len(counts), dtype=np.int64)
    assert cls is not None
    key = np.zeros(len(counts), dtype=np.int64)
    for col, card in zip(g, cards, strict=True):
        key = key * card + col
    failing = np.unique(key[sup])
    ids, cls_all = np.unique(np.where(sup, -1, cls), return_inverse=True)
    summary = class_stats(guarantee, cls_all.astype(np.int64).ravel(), s, len(ids), goal.cardinality, counts)
    summary.update(stats, suppressed_records=int(counts[sup].sum()))
    spec: dict[str, Any] = {"gen": {}, "code": {}, "root": {}, "failing": failing}
    dicts: dict[str, Any] = {}
    leaves: dict[str, Labels] = {}
    for j, (a, lv, dim) in enumerate(zip(qi, best, dims, strict=True)):
        used_nodes = np.unique(g[j][~sup])
        pairs = np.stack([np.full(len(used_nodes), lv, dtype=np.int64), used_nodes])
        if sup.any():
            pairs = np.unique(np.c_[pairs, [[dim.top], [0]]], axis=1)
        keys_j, codes_j, dictionary, (_, spans), width = published_values(dim, pairs)
        code = np.zeros(cards[j], dtype=np.int64)  # a node no kept class holds is never looked up
        code[used_nodes] = codes_j[np.searchsorted(keys_j, lv * width + used_nodes)]
        spec["gen"][a] = (lattice.gen[j][lv], cards[j])
        spec["code"][a] = code
        spec["root"][a] = int(codes_j[np.searchsorted(keys_j, dim.top * width)]) if sup.any() else -1
        dicts[a] = dictionary
        if spans:
            leaves[a] = Labels(leaf_order(dim), spans)
    for a in [*([goal.rule.rhs] if goal.rule else []), *goal.kept]:
        dicts[a] = table.column(a).values
    order = [a for a in table.names if a in dicts]
    spec["order"] = order
    shared = table.runner.share(spec)
    meta = pd.DataFrame({n: pd.Series([], dtype="int32") for n in order})
    need = list(dict.fromkeys([*qi, *order]))
    frame = table.frame(need).map_partitions(_publish_part, shared, meta=meta)
    ct = materialize(
        frame,
        order,
        order,
        [len(dicts[n]) for n in order],
        table.runner,
        table.scratch / f"generalized-{uuid.uuid4().hex[:10]}",
        [dicts[n] for n in order],
    )
    summary["rows"] = ct.n_rows
    data = cast("CountTable", ct)  # a count table on the cluster (the backend seam's Counts)
    return AnonymizedTable(
        table.names, "generalized", goal.rule, {"data": data}, summary, leaves=leaves, kept=goal.kept
    )
