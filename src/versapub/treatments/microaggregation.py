"""Microaggregation (Defays & Anwar 1998; Domingo-Ferrer & Mateo-Sanz, "Practical
data-oriented microaggregation for statistical disclosure control", IEEE TKDE 14(1), 2002;
Hundepool et al., *Statistical Disclosure Control*, 2012, §3.4.4; sdcMicro's
``microaggregation``): records are put in groups of at least ``k`` and each value of the
treated columns is replaced by its group's mean (or median), so every published combination
of those columns is shared by at least ``k`` records.

* ``mdav`` — *Maximum Distance to Average Vector*, the columns together, on z-scores (each
  column centred and divided by its standard deviation, as sdcMicro does): while at least
  ``3k`` records remain, take the record ``r`` farthest from the remaining records' centroid
  and group it with its ``k - 1`` nearest, then the record ``s`` farthest from ``r`` with its
  ``k - 1`` nearest; with ``2k`` to ``3k - 1`` left, one more group around the record farthest
  from the centroid; the rest form the last group (``k`` to ``2k - 1`` records).  MDAV's cost is
  quadratic, so above ``block`` records the records are cut, along their first principal axis,
  into blocks of at most ``block`` and MDAV runs in every block at once (choice 201: every
  group still holds ``k`` to ``2k - 1`` records; groups never straddle two blocks).
* ``individual-ranking`` — each column on its own: sorted, cut into groups of ``k``
  consecutive values (the last one takes the ``n mod k`` left over).
* ``optimal`` — each column on its own, the partition into groups of ``k`` to ``2k - 1``
  consecutive sorted values with the least within-group sum of squares (Hansen & Mukherjee,
  "A polynomial algorithm for optimal univariate microaggregation", IEEE TKDE 15(4), 2003:
  a shortest path over the sorted values).

Every treated column must hold a number in every record; a column of text is refused,
naming a value.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.data.table import EncodedTable
from versapub.errors import ConfigError
from versapub.plugins import Param, validated
from versapub.treatments.base import Floats, Treated, changed_records, no_missing, record_numbers, with_numbers

Groups = npt.NDArray[np.int64]
#: Run costs the optimal univariate partition holds at once (ends x sizes).
CHUNK = 1 << 20


def mdav(z: Floats, k: int, block: int = 2000) -> Groups:
    """Each row's MDAV group (module docstring) over the rows of ``z`` (already scaled);
    above ``block`` rows, in blocks cut along the first principal axis."""
    n = len(z)
    if n <= block:
        order = np.arange(n)
        blocks = [order]
    else:
        centred = z - z.mean(axis=0)
        _, _, vt = np.linalg.svd(centred[:: max(1, n // 100_000)], full_matrices=False)
        order = np.argsort(centred @ vt[0], kind="stable")
        blocks = np.array_split(order, -(-n // block))
    width = max(len(b) for b in blocks)
    index = np.full((len(blocks), width), -1, dtype=np.int64)
    for i, b in enumerate(blocks):  # a handful of blocks: n / block of them
        index[i, : len(b)] = b
    return _mdav_blocks(z, index, k)


def _distances(x: Floats, centre: Floats) -> Floats:
    """Per block, every row's squared distance to the block's ``centre`` (x: d x blocks x
    rows, one column at a time so no d-fold temporary is made)."""
    d = (x[0] - centre[:, 0, None]) ** 2
    for j in range(1, len(x)):
        d += (x[j] - centre[:, j, None]) ** 2
    return d


def _mdav_blocks(z: Floats, index: Groups, k: int) -> Groups:
    """MDAV in every row of ``index`` (a block of row numbers, -1 for padding) at once; the
    remaining records' sums are kept up to date, so a centroid costs nothing."""
    x = np.ascontiguousarray(np.moveaxis(z[np.maximum(index, 0)], 2, 0))  # d x blocks x rows
    alive = index >= 0
    group = np.full(index.shape, -1, dtype=np.int64)
    rows = np.arange(len(index))
    sums = np.einsum("jbr,br->bj", x, alive.astype(np.float64))
    count = alive.sum(axis=1)
    next_id = 0

    def take(centre: Floats, active: npt.NDArray[np.bool_]) -> Floats:
        """The ``k`` alive rows nearest ``centre`` in every active block become a group;
        returns every row's distance to the centre (for the next farthest row)."""
        nonlocal next_id
        d = _distances(x, centre)
        members = np.argpartition(np.where(alive, d, np.inf), k - 1, axis=1)[:, :k]
        sel, mem = rows[active], members[active]
        group[sel[:, None], mem] = (next_id + np.arange(len(sel)))[:, None]
        alive[sel[:, None], mem] = False
        sums[sel] -= x[:, sel[:, None], mem].sum(axis=2).T
        count[sel] -= k
        next_id += len(sel)
        return d

    def farthest(d: Floats) -> Groups:
        return np.argmax(np.where(alive, d, -np.inf), axis=1)

    def far_from_centroid() -> Floats:
        r = farthest(_distances(x, sums / np.maximum(count, 1)[:, None]))
        return x[:, rows, r].T

    while True:
        active = count >= 3 * k
        if not active.any():
            break
        dr = take(far_from_centroid(), active)
        take(x[:, rows, farthest(dr)].T, active)
    active = count >= 2 * k
    if active.any():
        take(far_from_centroid(), active)
    rest = alive.any(axis=1)
    ids = next_id + np.cumsum(rest) - 1
    group = np.where(alive, ids[:, None], group)
    out = np.empty(len(z), dtype=np.int64)
    out[index[index >= 0]] = group[index >= 0]
    return out


def individual_ranking(x: Floats, k: int) -> Groups:
    """Each value's group: ``k`` consecutive sorted values, the last group with the rest."""
    order = np.argsort(x, kind="stable")
    n_groups = max(1, len(x) // k)
    out = np.empty(len(x), dtype=np.int64)
    out[order] = np.minimum(np.arange(len(x)) // k, n_groups - 1)
    return out


def optimal_univariate(x: Floats, k: int) -> Groups:
    """Each value's group in the partition of the sorted values into runs of ``k`` to
    ``2k - 1`` with the least within-group sum of squares (Hansen & Mukherjee's shortest
    path: ``best[j] = min over s in [k, 2k-1] of best[j - s] + SSE(j - s, j)``).  The
    ``k`` positions ``t .. t+k-1`` depend only on positions before ``t``, so each step
    computes ``k`` of them at once (n / k steps of a k x k array)."""
    n = len(x)
    order = np.argsort(x, kind="stable")
    v = x[order] - x.mean()
    s1 = np.concatenate([[0.0], np.cumsum(v)])
    s2 = np.concatenate([[0.0], np.cumsum(v * v)])
    sizes = np.arange(k, 2 * k)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(n + 1, dtype=np.int64)
    span = k * max(1, CHUNK // (k * k))  # ends per chunk, a multiple of k: chunk x k floats at a time
    for lo in range(k, n + 1, span):  # the runs' costs for a chunk of ends, then its steps
        ends = np.arange(lo, min(lo + span, n + 1))[:, None]
        st = np.maximum(ends - sizes[None, :], 0)
        sse = np.where(ends >= sizes, s2[ends] - s2[st] - (s1[ends] - s1[st]) ** 2 / sizes[None, :], np.inf)
        for t in range(0, len(ends), k):  # n / k steps in all, each k ends at once
            j = slice(t, t + k)
            cost = best[st[j]] + sse[j]
            pick = np.argmin(cost, axis=1)
            best[lo + t : lo + t + len(pick)] = cost[np.arange(len(pick)), pick]
            back[lo + t : lo + t + len(pick)] = sizes[pick]
    cuts = [n]
    while cuts[-1] > 0:  # one step per group: n / k of them
        cuts.append(cuts[-1] - int(back[cuts[-1]]))
    starts = np.array(cuts[::-1][:-1])
    ranks = np.searchsorted(starts, np.arange(n), side="right") - 1
    out = np.empty(n, dtype=np.int64)
    out[order] = ranks
    return out


def aggregate(x: Floats, group: Groups, how: str) -> Floats:
    """Every record's value replaced by its group's mean or median."""
    size = np.bincount(group).astype(np.float64)
    if how == "mean":
        return (np.bincount(group, weights=x) / size)[group]
    order = np.lexsort((x, group))
    start = np.concatenate([[0], np.cumsum(size.astype(np.int64))[:-1]])
    lo = x[order][start + (size.astype(np.int64) - 1) // 2]
    hi = x[order][start + size.astype(np.int64) // 2]
    return ((lo + hi) / 2)[group]


def _scaled(columns: list[Floats]) -> Floats:
    z = np.column_stack(columns)
    sd = z.std(axis=0)
    return (z - z.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


class Microaggregation:
    """Microaggregation of ``columns`` into groups of at least ``k`` (module docstring)."""

    name = "microaggregation"
    draws = False
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True),
        "k": Param("whole", low=2, why="records per group, at least"),
        "method": Param("choice", choices=("mdav", "individual-ranking", "optimal")),
        "aggregate": Param("choice", choices=("mean", "median")),
        "block": Param("whole", low=100, why="MDAV runs in blocks of at most this many records"),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "income;wealth", "k": 3}
    glossary: ClassVar[str] = (
        "Microaggregation: records grouped by k or more (MDAV, individual ranking or the optimal univariate "
        "partition), each value replaced by its group's mean or median."
    )

    def __init__(
        self,
        columns: tuple[str, ...] | str,
        k: int = 3,
        method: str = "mdav",
        aggregate: str = "mean",
        block: int = 2000,
    ) -> None:
        got = validated(
            self.name,
            self.parameter_constraints,
            {"columns": columns, "k": k, "method": method, "aggregate": aggregate, "block": block},
        )
        self.columns: tuple[str, ...] = got["columns"]
        self.k: int = got["k"]
        self.method: str = got["method"]
        self.aggregate: str = got["aggregate"]
        self.block: int = got["block"]
        if self.block < 2 * self.k:
            raise ConfigError(f"microaggregation's block ({self.block}) must hold at least 2k = {2 * self.k} records.")

    def params(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "k": self.k,
            "method": self.method,
            "aggregate": self.aggregate,
            "block": self.block,
        }

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        del rng  # deterministic: ties are broken by record order
        if table.n_rows < self.k:
            raise ConfigError(
                f"microaggregation needs at least k = {self.k} records to form one group; the input has {table.n_rows}."
            )
        values: list[Floats] = []
        for c in self.columns:
            x, missing = record_numbers(table, c, self.name)
            no_missing(table, c, missing, self.name)
            values.append(x)
        if self.method == "mdav":
            groups = [mdav(_scaled(values), self.k, self.block)] * len(values)
            sets = [list(self.columns)]
        else:
            part = individual_ranking if self.method == "individual-ranking" else optimal_univariate
            groups = [part(x, self.k) for x in values]
            sets = [[c] for c in self.columns]
        out = table
        for c, x, g in zip(self.columns, values, groups, strict=True):
            out = with_numbers(out, c, aggregate(x, g, self.aggregate))
        changed = {c: changed_records(table, out, c) for c in self.columns}
        n_groups = int(groups[0].max()) + 1
        record = {**self.params(), "name": self.name, "sets": sets, "groups": n_groups, "changed": changed}
        note = (
            f"microaggregation ({self.method}, k = {self.k}, group {self.aggregate}s) of {', '.join(self.columns)}: "
            + (f"{n_groups:,} groups; " if self.method == "mdav" else "")
            + "; ".join(f"{changed[c]:,} value(s) of {c} changed" for c in self.columns)
        )
        return Treated(out, record, note)
