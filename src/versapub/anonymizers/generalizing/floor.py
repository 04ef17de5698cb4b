"""The job's floor on published cells (``--k``; ``--max-risk`` with the highest prosecutor
risk, as ``k = ceil(1/R)``), met while a generalizing anonymizer generalizes (issue 47).

A published cell is a record's exactly published non-sensitive values: in a generalized
table its class's labels, and the kept columns' values beside them (the classic job's
insensitive columns).  Without kept columns the floor is k-anonymity of the classes, folded
into the guarantee the search tests (:func:`floored`); with them it is tested on the
(class, kept values) cells (:func:`cells_ok`).  Both are monotone in generalization — a
coarser class holds every cell of the finer ones — so Mondrian's cuts and Incognito's
lattice pruning stay sound.  ``versapub check --k`` tests the same cells (one definition:
``docs/risk.md``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable, PublishRequest
from versapub.anonymizers.generalizing.suppression import with_removed
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.privacy.guarantees.base import Guarantee, Histograms
from versapub.privacy.guarantees.combined import AllOf
from versapub.privacy.guarantees.kanonymity import KAnonymity

IntArray = npt.NDArray[np.int64]


def floored(guarantee: Guarantee, k: int) -> Guarantee:
    """``guarantee`` and every class holding at least ``k`` records (the search's test)."""
    if k <= 1:
        return guarantee
    if isinstance(guarantee, KAnonymity) and guarantee.k >= k:
        return guarantee
    return AllOf((guarantee, KAnonymity(k)))


@dataclass(frozen=True)
class CellFloor:
    """A guarantee read on histograms whose values are ``s * cells + cell`` (the sensitive
    value and the record's kept-values cell, as Incognito's search groups them): a group
    satisfies it when ``guarantee`` holds on its sensitive values and every (group, cell)
    holds at least ``k`` records.  Everything else is the inner guarantee's."""

    guarantee: Guarantee
    cells: int
    k: int

    def __getattr__(self, name: str) -> Any:
        return getattr(self.guarantee, name)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        value = h.value if h.value is not None else np.zeros(len(h.group), dtype=np.int64)
        s, cell = value // self.cells, value % self.cells
        on_s = group_rows([h.group, s], [h.n_groups, int(s.max()) + 1 if len(s) else 1], with_inverse=True)
        assert on_s.inverse is not None
        count = np.bincount(on_s.inverse, weights=h.count, minlength=len(on_s.counts)).astype(np.int64)
        inner = Histograms(
            on_s.keys[0].astype(np.int64), count, h.n_groups, on_s.keys[1].astype(np.int64), h.population
        )
        ok = np.asarray(self.guarantee.groups_satisfied(inner))
        key = h.group.astype(np.int64) * self.cells + cell
        uniq, inv = np.unique(key, return_inverse=True)
        per_cell = np.bincount(inv.ravel(), weights=h.count).astype(np.int64)
        low = np.full(h.n_groups, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(low, uniq // self.cells, per_cell)
        return ok & (low >= self.k)


def kept_cells(table: EncodedTable, kept: Sequence[str]) -> IntArray:
    """Each record's combination of the kept columns' values, as one code (all 0: none)."""
    if not kept:
        return np.zeros(table.n_rows, dtype=np.int64)
    g = group_rows([table.codes(a) for a in kept], [table.cardinality(a) for a in kept], with_inverse=True)
    assert g.inverse is not None
    return g.inverse.astype(np.int64)


def largest_k(cells: IntArray) -> int:
    """The largest floor any generalization meets: the smallest cell of the whole table as
    one class (every record when nothing is kept)."""
    return int(np.bincount(cells).min(initial=len(cells))) if len(cells) else 0


def require_floor(k: int, cells: IntArray, name: str, kept: Sequence[str]) -> None:
    """The whole table as one class must meet the floor, else no release can: the error
    names the largest floor that can be met."""
    most = largest_k(cells)
    if k > most:
        why = (
            f"the kept columns {', '.join(map(repr, kept))} are published exactly, and even with every other "
            f"column generalized to one class their rarest combination holds {most} record(s)"
            if kept
            else f"the table holds {most} record(s)"
        )
        raise InfeasibleError(
            f"{name} cannot meet a floor of k = {k} on published cells (--k, or --max-risk as 1/k): {why}. The "
            f"largest k any release of this table meets is {most}; lower --k (or raise --max-risk), or publish "
            "the kept columns apart (--detach-others) or generalized."
        )


def short_kept(cells: IntArray, k: int, budget: int, name: str, kept: Sequence[str], removing: bool) -> IntArray:
    """The records of kept-values cells holding fewer than ``k`` records, removed before
    generalizing (issue 65: no generalization of the other columns can grow such a cell, so
    they are removed — ARX's suppression — within the anonymizer's ``budget``; empty: none
    is short).  More than the budget, or a mode that publishes the suppressed records (their
    kept values then still stand alone), is refused naming the largest k and the share
    that would do."""
    sizes = np.bincount(cells)
    short = np.flatnonzero(sizes[cells] < k).astype(np.int64)
    if not len(short) or (len(short) <= budget and removing):
        return short
    n = len(cells)
    need = math.ceil(1000 * len(short) / n) / 1000
    most = largest_k(cells)
    raise InfeasibleError(
        f"{name} cannot meet a floor of k = {k} on published cells (--k, or --max-risk as 1/k): the kept columns "
        f"{', '.join(map(repr, kept))} are published exactly, and {len(short):,} of {n:,} records "
        f"({len(short) / n:.2%}) sit in combinations of them holding fewer than {k} record(s) — no generalization "
        f"of the other columns grows those. "
        + (
            f"The anonymizer's suppression removes at most {budget:,}; allow {name}:suppression={need:g} or more "
            f"(the records are removed, in no table), "
            if removing
            else f"suppression_mode=class publishes suppressed records with their kept values; use "
            f"{name}:suppression={need:g} (suppression_mode=remove), "
        )
        + f"lower --k (the largest k without removing records is {most}), name the key variables (--keys) or "
        "publish the kept columns apart (--detach-others) or generalized."
    )


def pre_removed(
    inner: AnonymizedTable, gone: IntArray, keep: IntArray, k: int, share: float, n: int
) -> AnonymizedTable:
    """``inner`` (published from the records ``keep``) with the records ``gone`` (removed
    before generalizing: :func:`short_kept`) counted among its removed ones, in the input's
    record numbers, against the anonymizer's budget ``floor(share x n)``."""
    prior = keep[inner.removed] if inner.removed is not None else np.zeros(0, dtype=np.int64)
    removed = np.sort(np.concatenate([gone, prior])).astype(np.int64)
    why = {f"in a cell of fewer than {k} records of the kept columns' values (the k you asked for)": len(gone)}
    for reason, count in inner.removed_by_reason.items():
        why[reason] = why.get(reason, 0) + count
    return with_removed(inner, removed, why, share, n)


def cells_ok(part: IntArray, rec: IntArray, cells: IntArray, k: int) -> npt.NDArray[np.bool_]:
    """Per part (``part``: each open record's part, records ``rec``): does every (part, kept
    values) cell hold at least ``k`` records?"""
    n_parts = int(part[-1]) + 1 if len(part) else 0
    m = int(cells.max()) + 1 if len(cells) else 1
    key = part.astype(np.int64) * m + cells[rec]
    uniq, count = np.unique(key, return_counts=True)
    low = np.full(n_parts, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(low, uniq // m, count)
    return np.asarray(low >= k)


def kept_floor_first(
    request: PublishRequest,
    counted: Sequence[str],
    anonymizer: tuple[str, float, str],
    budget: int,
    run: Callable[[PublishRequest, int], AnonymizedTable],
) -> AnonymizedTable:
    """Issue 65: the records of the kept columns' cells below the floor (``counted``) removed
    within the anonymizer's ``budget`` before ``run`` builds the classes of the rest with what
    is left of it; ``anonymizer``: its name, suppression share and suppression mode."""
    name, share, mode = anonymizer
    table = request.table
    gone = short_kept(kept_cells(table, counted), request.k, budget, name, counted, mode == "remove")
    if not len(gone):
        return run(request, budget)
    keep = np.setdiff1d(np.arange(table.n_rows, dtype=np.int64), gone, assume_unique=True)
    inner = run(replace(request, table=table.take(keep)), budget - len(gone))
    return pre_removed(inner, gone, keep, request.k, share, table.n_rows)
