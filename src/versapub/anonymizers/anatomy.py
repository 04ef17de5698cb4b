"""Anatomy (Xiao & Tao, VLDB 2006): bucketization into l-diverse groups.

The sub-table is split into a quasi-identifier table (QIT: the non-sensitive
attributes and a group id) and a sensitive table (ST: group id and the sensitive
value); within a group the link between a QIT row and an ST value is hidden.

Anatomy's group creation hashes records into buckets by sensitive value, repeatedly
forms a group from one record of each of the l largest buckets, and finally gives each
residual record to a group that does not yet hold its value.  For an eligible table
(every value count ``<= n/l``) this yields ``floor(n/l)`` groups, each of ``l`` or
``l + 1`` records with pairwise distinct sensitive values (Xiao & Tao's Lemma 2), so
every group satisfies ``l * max_count <= |group|``.

Vectorized implementation (choice recorded in ``docs/choices.md``): records are
shuffled (seeded), laid out bucket after bucket, and the record at position ``p`` joins
group ``p mod G`` with ``G = floor(n/l)`` (the wrap-around assignment).  A bucket of
``c <= G`` records occupies ``c`` consecutive positions and so lands in ``c`` distinct
groups; group sizes are ``floor(n/G)`` or ``ceil(n/G)``, i.e. ``l`` or ``l + 1``.  The
groups have exactly the structure of the greedy's output (same number, same sizes,
distinct values) without a Python loop over records or groups; which values share a
group may differ from one particular greedy run, as it already does between runs with
different tie-breaking.  No record is ever dropped.  Group ids are a seeded random
permutation, not creation order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.counts import CountTable
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.privacy.guarantee import Guarantee
from versapub.privacy.rules import Rule


def anatomy_groups(s_codes: np.ndarray, width: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Group index of every record (wrap-around assignment) and the number of groups."""
    n = len(s_codes)
    g = n // width
    if g == 0:
        raise InfeasibleError(f"Anatomy needs at least l = {width} records; the table has {n}.")
    counts = np.bincount(s_codes)
    if int(counts.max()) > g:
        raise InfeasibleError(
            f"Anatomy cannot form l-diverse groups: a sensitive value occurs {int(counts.max())} "
            f"times but only floor(n/l) = {g} groups exist (n = {n}, l = {width})."
        )
    shuffled = rng.permutation(n)
    order = shuffled[np.argsort(s_codes[shuffled], kind="stable")]
    group = np.empty(n, dtype=np.int64)
    group[order] = np.arange(n, dtype=np.int64) % g
    ids = rng.permutation(g).astype(np.int64)
    return ids[group], g


class Anatomy:
    """Anatomy bucketization (see the module docstring).  No parameters: the group
    width comes from the guarantee (``l`` for l-diversity)."""

    name = "anatomy"

    def params(self) -> dict[str, Any]:
        return {}

    def publish(
        self, table: EncodedTable, rule: Rule, guarantee: Guarantee, rng: np.random.Generator
    ) -> AnonymizedTable:
        s_col = table.column(rule.rhs)
        qi = [a for a in table.names if a != rule.rhs]
        group, n_groups = anatomy_groups(s_col.codes, guarantee.group_width(), rng)
        qit_cols = [table.codes(a) for a in qi] + [group]
        qit_g = group_rows(qit_cols, [table.cardinality(a) for a in qi] + [n_groups])
        qit = CountTable(
            (*qi, "group_id"),
            qit_g.keys,
            (*(table.column(a).values for a in qi), None),
            qit_g.counts,
        )
        st_g = group_rows([group, s_col.codes], [n_groups, s_col.cardinality])
        st = CountTable(("group_id", rule.rhs), st_g.keys, (None, s_col.values), st_g.counts)
        gi = st_g.keys[0].astype(np.int64)
        ok = guarantee.groups_satisfied(gi, st_g.counts, n_groups)
        if not ok.all():  # cannot happen for an eligible table; never publish if it does
            raise InfeasibleError(
                f"Anatomy produced {int((~ok).sum())} group(s) violating {guarantee.describe()} for rule '{rule}'."
            )
        sizes = np.bincount(gi, weights=st_g.counts, minlength=n_groups).astype(np.int64)
        size_values, size_counts = np.unique(sizes, return_counts=True)
        stats = {
            "rows_qit": qit.n_rows,
            "rows_st": st.n_rows,
            "groups": n_groups,
            "group_sizes": {int(k): int(v) for k, v in zip(size_values, size_counts, strict=True)},
            "achieved": guarantee.achieved(gi, st_g.counts, n_groups),
        }
        return AnonymizedTable(table.names, "anatomy", rule, {"qit": qit, "st": st}, stats)
