"""The functional-diversity paper's privacy and utility measures (§5.2–5.3) on a
generalized table (:class:`~versapub.release.cells.Cells`), sensitive values generalized
or not:

* **excessive protection** (Definition 35, as the reading notes reconstruct it): per
  equivalence class ``e(E) = min_k (phi(k) - F_E(k))`` over the ``k`` where ``phi(k) < 1``,
  with ``F_E`` the cumulative *induced* frequencies; its distribution over the classes
  (:func:`excessive_protection`, :func:`protection_summary`);
* **count queries** (§5.3.3): ``COUNT(*) WHERE A_1 = b_1 AND ... AND A_s = b_s`` with each
  ``b_i`` a node of ``A_i``'s taxonomy; a published row contributes its count times, per
  attribute, the fraction ``c_i`` of the leaves its value covers that lie under ``b_i``; the
  relative error is ``|ACT - EST| / ACT`` (:func:`count_workload`, :func:`count_errors`).

Information ``um`` (Definition 14) is in :mod:`versapub.release.metrics`; the ratio of
classification accuracies in :mod:`versapub.release.id3`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.privacy.guarantees.base import Histograms
from versapub.privacy.guarantees.functional import slack
from versapub.privacy.guarantees.induced import induced_histograms
from versapub.release.cells import Cells

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def class_histograms(cells: Cells) -> tuple[Histograms, IntArray]:
    """The induced sensitive histograms of the table's classes (values: leaf positions),
    and each row's class."""
    cls, n_cls = cells.classes()
    s = cells.sensitive
    if s is None:
        return Histograms(cls, cells.counts, n_cls, np.zeros(len(cls), dtype=np.int64)), cls
    return induced_histograms(cls, cells.first[s], cells.last[s], cells.counts, n_cls), cls


def excessive_protection(cells: Cells, bound: Sequence[float]) -> tuple[Floats, IntArray]:
    """Per class: ``e(E)`` for the bound ``phi`` (negative where the class violates it), and
    its number of records."""
    h, _ = class_histograms(cells)
    return slack(h, tuple(bound)), h.sizes()


def protection_summary(e: Floats, sizes: IntArray, bins: int = 10) -> dict[str, Any]:
    """The distribution of excessive protection over classes: its minimum (Definition 35's
    value for the table), mean over classes and over records, and a histogram."""
    finite = np.isfinite(e)
    if not finite.any():
        return {"min": None, "mean": None, "mean_per_record": None, "classes": len(e)}
    ev, sv = e[finite], sizes[finite]
    ev = np.where((ev < 0) & (ev > -1e-9), 0.0, ev)  # rounding: a class meeting phi exactly
    counts, edges = np.histogram(ev, bins=bins)
    return {
        "min": float(ev.min()),
        "mean": float(ev.mean()),
        "mean_per_record": float((ev * sv).sum() / max(sv.sum(), 1)),
        "classes": len(e),
        "histogram": {"edges": [float(x) for x in edges], "counts": [int(x) for x in counts]},
    }


@dataclass(frozen=True)
class CountQuery:
    """``COUNT(*)`` over records whose value of each attribute lies under a taxonomy node:
    ``nodes[a]`` is the node's set of leaves (as text)."""

    nodes: dict[str, frozenset[str]]


def count_workload(
    table: EncodedTable,
    hierarchies: Mapping[str, Hierarchy],
    attributes: Sequence[str],
    n_queries: int,
    dims: int,
    rng: np.random.Generator,
) -> list[CountQuery]:
    """Random count queries over ``dims`` of ``attributes`` (§5.3.3): each predicate is the
    ancestor, at a random level below the root, of a random record's value (so every query
    holds at least that record); an attribute without a hierarchy takes the value itself."""
    out = []
    names = list(attributes)
    rows = {a: {r[0]: r for r in h.levels} for a, h in hierarchies.items()}
    under: dict[str, dict[tuple[int, str], frozenset[str]]] = {}
    for a, h in hierarchies.items():
        groups: dict[tuple[int, str], set[str]] = {}
        for r in h.levels:
            for k, node in enumerate(r):
                groups.setdefault((k, node), set()).add(r[0])
        under[a] = {key: frozenset(v) for key, v in groups.items()}
    for _ in range(n_queries):
        rec = int(rng.integers(table.n_rows))
        chosen = rng.choice(len(names), size=min(dims, len(names)), replace=False)
        nodes = {}
        for i in sorted(int(x) for x in chosen):
            a = names[i]
            v = str(table.column(a).values[table.codes(a)[rec]])
            if a in hierarchies and v in rows[a]:
                k = int(rng.integers(0, hierarchies[a].height - 1))
                nodes[a] = under[a][(k, rows[a][v][k])]
            else:
                nodes[a] = frozenset((v,))
        out.append(CountQuery(nodes))
    return out


def count_estimates(cells: Cells, queries: Sequence[CountQuery]) -> Floats:
    """Each query's estimate from the published rows: a row contributes its count times,
    per queried attribute, the fraction of the leaves its value covers that the node holds."""
    est = np.zeros(len(queries))
    for i, q in enumerate(queries):
        share = cells.counts.astype(np.float64)
        for a, leaves in q.nodes.items():
            mask = np.array([leaf in leaves for leaf in cells.order[a]], dtype=np.float64)
            cum = np.r_[0.0, np.cumsum(mask)]
            share = share * (cum[cells.last[a] + 1] - cum[cells.first[a]]) / cells.width(a)
        est[i] = share.sum()
    return est


def count_actuals(table: EncodedTable, queries: Sequence[CountQuery]) -> Floats:
    """Each query's answer on the original table."""
    out = np.zeros(len(queries))
    for i, q in enumerate(queries):
        keep = np.ones(table.n_rows, dtype=bool)
        for a, leaves in q.nodes.items():
            col = table.column(a)
            keep &= np.array([str(v) in leaves for v in col.values], dtype=bool)[col.codes]
        out[i] = keep.sum()
    return out


def count_errors(cells: Cells, table: EncodedTable, queries: Sequence[CountQuery]) -> Floats:
    """``|ACT - EST| / ACT`` per query (queries with ``ACT = 0`` left out)."""
    act = count_actuals(table, queries)
    est = count_estimates(cells, queries)
    keep = act > 0
    return np.asarray(np.abs(act[keep] - est[keep]) / act[keep])


def label_workload(
    cells: Cells, table: EncodedTable, n_queries: int, dims: int, rng: np.random.Generator
) -> list[CountQuery]:
    """Count queries whose predicates are values the table itself publishes (§5.3.3 without
    the taxonomies: a published generalized value is a taxonomy node): per query a random
    record and ``dims`` random attributes; per attribute, the record's own value or one of
    the published values covering it, chosen uniformly."""
    names = list(cells.attributes)
    pos = {a: cells.positions(table, a) for a in names}
    runs = {a: np.unique(np.stack([cells.first[a], cells.last[a]], axis=1), axis=0) for a in names}
    out = []
    for _ in range(n_queries):
        rec = int(rng.integers(table.n_rows))
        nodes = {}
        for i in sorted(int(x) for x in rng.choice(len(names), size=min(dims, len(names)), replace=False)):
            a = names[i]
            p = int(pos[a][rec])
            r = runs[a]
            cover = r[(r[:, 0] <= p) & (r[:, 1] >= p) & (r[:, 0] < r[:, 1])]
            choice = int(rng.integers(len(cover) + 1)) if p >= 0 else 0
            lo, hi = (p, p) if choice == len(cover) or p < 0 else (int(cover[choice, 0]), int(cover[choice, 1]))
            nodes[a] = (
                frozenset(cells.order[a][lo : hi + 1])
                if p >= 0
                else frozenset((str(table.column(a).values[table.codes(a)[rec]]),))
            )
        out.append(CountQuery(nodes))
    return out


def table_measures(
    cells: Cells, original: EncodedTable | None, bound: Sequence[float] | None, seed: int = 1, n_queries: int = 500
) -> dict[str, Any]:
    """The paper's measures of one generalized table: excessive protection (when its
    guarantee is a bound on cumulative frequencies), and with the original the ratio of
    classification accuracies of ID3 trees predicting the sensitive attribute and the
    relative error of 1-D and 2-D count queries on published values."""
    from versapub.release.id3 import classification

    out: dict[str, Any] = {}
    if bound is not None and cells.sensitive is not None:
        out["excessive_protection"] = protection_summary(*excessive_protection(cells, bound))
    if original is None:
        return out
    if cells.sensitive is not None and len(cells.attributes) > 1:
        out["classification"] = classification(cells, original, cells.sensitive)
    rng = np.random.default_rng(seed)
    queries: dict[str, Any] = {}
    for dims in (1, 2):
        if dims > len(cells.attributes):
            continue
        err = count_errors(cells, original, label_workload(cells, original, n_queries, dims, rng))
        queries[str(dims)] = {
            "n_queries": len(err),
            "mean": float(err.mean()) if len(err) else None,
            "median": float(np.median(err)) if len(err) else None,
        }
    out["count_queries"] = queries
    return out
