"""The 1-D l-diversity algorithm of Ghinita, Karras, Kalnis, Mamoulis (VLDB 2007), "1DLD"
in the functional-diversity paper's §5.1.2.

* **Mapping to one dimension**: every quasi-identifier becomes its rank in its leaf order
  (value order, or a hierarchy's order in which every node's leaves are contiguous), and
  the records are sorted by the Hilbert index of those ranks (``numpy-hilbert-curve``;
  ranks are cut to the most significant bits when the attributes need more than 64 bits
  together).
* **l-eligibility** (their Definition: a set is *l-eligible* when at most ``|S|/l`` of its
  records share a sensitive value, i.e. simple, frequency l-diversity): groups are cut
  from the sorted order so that every group is l-eligible and what remains stays
  l-eligible.  Records sit in one bucket per sensitive value, each in 1-D order.  A group
  takes the first remaining record (smallest 1-D key), one record of every bucket that
  must shrink now for the remainder to stay eligible (``l·b_v > n_R − |group|``), and
  fills up to ``l`` records from the other buckets whose first records lie closest in the
  order;
  when fewer than ``2l`` records would remain, the last group takes them all (eligible by
  the invariant).  Groups hold distinct values, so each is l-eligible.
* **Output**: each group generalized to the smallest hierarchy node (or range of values)
  covering its records per attribute — a ``generalized`` table.

The guarantee must be simple l-diversity or a bound on cumulative frequencies that an
l-eligible group meets (functional diversity with ``l = max_k ceil(k/phi(k))``, its
``group_width``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest
from versapub.anonymizers.generalizing.generalize import class_cover, class_stats, classes_table, dimensions, target
from versapub.errors import ConfigError, InfeasibleError
from versapub.plugins import Param

IntArray = npt.NDArray[np.int64]


def hilbert_keys(ranks: Sequence[IntArray], sizes: Sequence[int]) -> npt.NDArray[np.uint64]:
    """The Hilbert index of each record's rank vector (``ranks[i]`` in ``0 .. sizes[i]-1``)."""
    import hilbert  # numpy-hilbert-curve

    d = len(ranks)
    n = len(ranks[0]) if d else 0
    if d == 0:
        return np.zeros(n, dtype=np.uint64)
    need = [max(1, int(s - 1).bit_length()) for s in sizes]
    bits = min(max(need), 64 // d)
    locs = np.stack(
        [np.asarray(r, dtype=np.int64) >> max(0, b - bits) for r, b in zip(ranks, need, strict=True)], axis=1
    )
    if d == 1:
        return locs[:, 0].astype(np.uint64)
    return np.asarray(hilbert.encode(locs, d, bits), dtype=np.uint64)


def eligible_groups(s: IntArray, l: int) -> IntArray:
    """Group ids (in 1-D order) for records already sorted in 1-D order with sensitive codes
    ``s``: l-eligible groups cut as the module docstring says.  The whole set must be
    l-eligible."""
    n = len(s)
    m = int(s.max()) + 1 if n else 1
    counts = np.bincount(s, minlength=m).astype(np.int64)
    if n and l * int(counts.max()) > n:
        raise ValueError("not l-eligible")
    order = np.argsort(s, kind="stable")  # each bucket in 1-D order
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    head = starts.copy()  # next record of each bucket (index into order)
    end = starts + counts
    group = np.full(n, -1, dtype=np.int64)
    taken = np.zeros(n, dtype=bool)
    first = 0  # the smallest remaining position
    remaining = n
    g = 0
    big = np.iinfo(np.int64).max
    while remaining >= 2 * l:
        while taken[first]:
            first += 1
        head_pos = np.where(head < end, order[np.minimum(head, n - 1)], big)
        chosen = np.zeros(m, dtype=bool)
        chosen[s[first]] = True
        while True:  # buckets that must shrink now for the rest to stay eligible (the group may grow)
            must = chosen | (l * counts > remaining - max(l, int(chosen.sum())))
            if (must == chosen).all():
                break
            chosen = must
        short = l - int(chosen.sum())
        if short > 0:
            cand = np.where(chosen | (counts == 0), big, head_pos)
            chosen[np.argpartition(cand, short - 1)[:short]] = True
        size = int(chosen.sum())
        if remaining - size < l:  # too few would remain: the last group takes everything
            break
        picked = order[head[chosen]]
        group[picked] = g
        taken[picked] = True
        head[chosen] += 1
        counts[chosen] -= 1
        remaining -= size
        g += 1
    group[~taken] = g
    return group


class OneDLDiversity:
    """1-D l-diversity (see the module docstring); no parameters."""

    name = "one-d-l-diversity"
    #: Why it does not run on the Dask backend (the refusal's reason).
    in_memory_only = "its groups follow the records' order along one attribute"
    max_rules = 1
    #: Parameters other generalizing anonymizers take that this one declines, and why.
    not_offered: ClassVar[dict[str, str]] = {
        "suppression": (
            "Suppression as ARX does it removes whole classes that fail, so a removed record lies in no published "
            "class and the verifier can check it against the input; "
            "1-D l-diversity's groups are cut along the Hilbert order and their ranges overlap, "
            "so a removed record would still lie "
            "in a published class (docs/choices.md). Its own remedy for a skewed table is "
            "a lower l or a generalized sensitive attribute; or use mondrian or "
            "incognito with suppression=S."
        )
    }
    parameter_constraints: ClassVar[dict[str, Param]] = {}
    glossary: ClassVar[str] = (
        "1-D l-diversity (Ghinita et al., VLDB J. 2009): records are ordered along one dimension and cut into "
        "consecutive l-diverse classes."
    )

    def params(self) -> dict[str, Any]:
        return {}

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        table, guarantee, hierarchies = request.table, request.guarantee, request.hierarchies
        goal = target(table, request.rules, self.name)
        if goal.rule is None:
            raise ValueError("one-d-l-diversity protects a sensitive attribute")
        if guarantee.cumulative_bound() is None:
            raise ConfigError(
                f"The one-d-l-diversity anonymizer forms l-eligible groups (simple l-diversity); {guarantee.name} is "
                "not implied by them. Use it with l-diversity or functional diversity, or use mondrian or incognito."
            )
        width = guarantee.group_width()
        l = int(width) if width is not None else 2
        say = request.say
        qi = list(goal.qi)
        dims = dimensions(table, qi, hierarchies)
        codes = [table.codes(a).astype(np.int64) for a in qi]
        s = goal.codes
        n = table.n_rows
        top = int(np.bincount(s).max()) if n else 0
        if l * top > n:
            raise InfeasibleError(
                f"1-D l-diversity needs l = {l} for {guarantee.describe()}, but the most frequent value of "
                f"{goal.rule.rhs!r} holds {top} of {n} records (more than 1/l): no partition is l-eligible."
            )
        say(f"1-D l-diversity: Hilbert order of {len(qi)} quasi-identifier(s), l = {l}")
        key = hilbert_keys([dim.rank[c] for dim, c in zip(dims, codes, strict=True)], [len(d.values) for d in dims])
        order = np.lexsort((np.arange(n), key))
        grp_sorted = eligible_groups(s[order], l)
        cls = np.empty(n, dtype=np.int64)
        cls[order] = grp_sorted
        n_cls = int(cls.max()) + 1 if n else 0
        cover = class_cover(dims, codes, cls, n_cls)
        stats = class_stats(guarantee, cls, s, n_cls, goal.cardinality)
        stats["l"] = l
        say(f"1-D l-diversity: {n_cls:,} groups")
        out = classes_table(table, goal, dims, cls, cover, stats)
        return out
