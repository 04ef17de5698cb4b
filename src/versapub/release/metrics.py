"""The classic utility metrics of anonymized tables, beside KL and query error, per table
with groups (equivalence classes of a generalized table, Anatomy groups):

* **discernibility** (Bayardo & Agrawal, ICDE 2005): ``Σ_E |E|²`` — each record is charged
  the size of its class;
* **average class size** ``n / #classes``, and normalized by ``k`` for k-anonymity
  (LeFevre et al. 2006, ``C_AVG``);
* **generalization loss** (the normalized certainty penalty, Xu et al. KDD 2006, equal
  weights): per record and non-sensitive attribute, ``(leaves covered − 1) / (domain − 1)``,
  averaged (0: published exactly, 1: fully generalized; Anatomy publishes its QI exactly);
* **information** ``um`` (the functional-diversity paper, Definition 14 as the reading notes
  reconstruct it): a published value ``v`` of an attribute with ``m`` leaves keeps
  ``I(v) = 1 − log|leaves(v)| / log m`` (1 exact, 0 the root), averaged over records and
  every attribute of the table, the sensitive one included (its values may be generalized
  too: Sequential Sweep); 1 for a table that publishes values exactly;
* **suppressed records** (Incognito's suppressed class, multi-SA's suppressed group).

From an in-memory release (:func:`release_metrics`) or from a release's files
(:func:`versapub.reports.file_metrics.file_metrics`), with the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def class_metrics(sizes: Mapping[int, int], n: int, k: int | None) -> dict[str, Any]:
    """Metrics from ``{class size: number of classes}``."""
    classes = sum(sizes.values())
    avg = n / classes if classes else 0.0
    return {
        "classes": classes,
        "discernibility": int(sum(int(s) ** 2 * c for s, c in sizes.items())),
        "average_class_size": avg,
        "normalized_average_class_size": avg / k if k else None,
    }


def k_of(guarantee: Mapping[str, Any]) -> int | None:
    return int(guarantee["k"]) if guarantee.get("name") == "k-anonymity" and "k" in guarantee else None


def release_metrics(release: Any) -> dict[str, dict[str, Any]]:
    """Per table with groups, from an in-memory :class:`~versapub.release.value.Release`."""
    n = release.n_records
    k = k_of(release.guarantee.to_manifest())
    out = {}
    for t in release.tables:
        st = t.table.stats
        sizes = st.get("group_sizes")
        if not sizes:
            continue
        m = class_metrics({int(a): int(b) for a, b in sizes.items()}, n, k)
        loss, info = loss_in_memory(t.table, release.source) if t.table.leaves else (0.0, 1.0)
        m["generalization_loss"], m["information"] = loss, info
        m["suppressed_records"] = int(st.get("suppressed_records") or 0)
        out[t.name] = m
    return out


def loss_in_memory(table: Any, source: Any) -> tuple[float, float]:
    """(generalization loss over the non-sensitive attributes, information over all — a
    generalized sensitive value loses information like any other)."""
    ct = table.parts["data"]
    s = set(table.sensitive_attributes)
    qi = [a for a in ct.names if a not in s]
    total = 0.0
    info = 0.0
    n = max(int(ct.counts.sum()), 1)
    for a in ct.names:
        spans = table.leaves[a].spans if a in table.leaves else {}
        dom = source.column(a).cardinality
        j = ct.names.index(a)
        dictionary = ct.dictionaries[j]
        assert dictionary is not None
        size = np.array([(spans[str(v)][1] - spans[str(v)][0] + 1) if str(v) in spans else 1 for v in dictionary])
        covered = size[ct.codes[j]]  # per published row (a loop over the dictionary, not the rows)
        if a in qi:
            total += float(((covered - 1) / max(dom - 1, 1) * ct.counts).sum())
        info += float(((1 - np.log(covered) / np.log(dom)) * ct.counts).sum()) if dom > 1 else float(n)
    attrs = len(ct.names)
    return (total / (len(qi) * n) if qi else 0.0), (info / (attrs * n) if attrs else 1.0)
