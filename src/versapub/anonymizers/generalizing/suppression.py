"""Suppression as ARX does it (issue 47): the records of classes that fail the requirement
are *removed* — published in no table — up to ``floor(suppression x n)`` of them, and the
rest must meet it; or, as the named alternative ``suppression_mode="class"``, published as
one more class with every quasi-identifier at its root, which must meet the requirement too
(``docs/choices.md``).  Both are sound for the same reason: a removed record's values are in
no table, a root-class record's quasi-identifiers say nothing."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable
from versapub.privacy.guarantees.guarantee import Guarantee

#: ``remove``: ARX's semantics (the failing classes' records are published nowhere);
#: ``class``: they are published as one class at the roots, which must meet the guarantee.
MODES = ("remove", "class")

IntArray = npt.NDArray[np.int64]


def reasons(sizes: IntArray, k: int, guarantee: Guarantee) -> dict[str, int]:
    """The removed records by reason: those of classes smaller than the job's ``k`` (the
    floor on published cells), and those of classes that fail the guarantee otherwise."""
    small = int(sizes[sizes < k].sum()) if k > 1 else 0
    other = int(sizes.sum()) - small
    out = {f"in a class of fewer than {k} records (the k you asked for)": small} if small else {}
    if other:
        out[f"in a class failing {short(guarantee)}"] = other
    return out


def short(guarantee: Guarantee) -> str:
    """A guarantee in a few words: its name and plain parameters (``k-anonymity (k = 3)``)."""
    m = guarantee.to_manifest()
    plain = [f"{k} = {v}" for k, v in m.items() if k != "name" and isinstance(v, int | float | str)]
    return f"{m.get('name', guarantee.name)}" + (f" ({', '.join(plain)})" if plain else "")


def kept_rows(removed: npt.NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
    """The rows kept and the rows removed, each in input order."""
    return np.flatnonzero(~removed).astype(np.int64), np.flatnonzero(removed).astype(np.int64)


def with_removed(
    out: AnonymizedTable, removed: IntArray, by_reason: dict[str, int], share: float, n: int
) -> AnonymizedTable:
    """``out`` (the table of the kept records) with the removed records' rows and reasons;
    its stats say how many, why, and the budget (``floor(share x n)`` of the ``n`` input
    records)."""
    stats = {
        **out.stats,
        "removed_records": len(removed),
        "removed_by_reason": dict(by_reason),
        "removal_budget": math.floor(share * n),
        "suppression": share,
    }
    return replace(out, stats=stats, removed=removed, removed_by_reason=dict(by_reason))
