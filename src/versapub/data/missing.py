"""The missing-value policy: what to do with empty (or whitespace-only) cells."""

from __future__ import annotations

import enum
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from versapub.errors import InputError, MissingCellsError

#: How many offending row numbers an error message lists.
SHOWN_ROWS = 5
#: How a missing (empty) value is written where it is a node or part of a published label:
#: a generalized set or range that holds it, a hierarchy node above it.
EMPTY_LABEL = "(empty)"


class MissingPolicy(enum.Enum):
    """``error``: refuse the input (default); ``value``: an empty cell is an ordinary
    value; ``drop``: drop rows holding an empty cell and count them in the report."""

    ERROR = "error"
    VALUE = "value"
    DROP = "drop"

    @classmethod
    def parse(cls, value: str | MissingPolicy) -> MissingPolicy:
        if isinstance(value, MissingPolicy):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            raise InputError(f"Unknown missing-value policy {value!r}; use one of: error, value, drop.") from None


def missing_error(source: str, found: Mapping[str, tuple[int, list[int]]]) -> MissingCellsError:
    """The error for missing cells under the ``error`` policy: every column named, with its
    count and first rows (``found``: column -> (count, first row numbers))."""
    parts = [
        f"{column!r} ({count} cell(s), first at row(s) {', '.join(str(r) for r in rows[:SHOWN_ROWS])})"
        for column, (count, rows) in found.items()
    ]
    return MissingCellsError(
        f"{source}: {len(parts)} column(s) have missing (empty) cells: {'; '.join(parts)} (row 1 is the first "
        "record). Fill them in, or choose a missing-value policy: 'value' keeps an empty cell as an ordinary "
        "value, 'drop' drops those rows and counts them in the report (--missing); --na-values names markers "
        "such as '?' that also mean missing."
    )


def apply_missing_policy(
    policy: MissingPolicy,
    masks: Mapping[str, npt.NDArray[np.bool_]],
    source: str,
) -> npt.NDArray[np.bool_] | None:
    """Apply ``policy`` to per-column missing masks.

    Returns the mask of rows to keep under ``drop`` (``None`` when every row is kept);
    raises :class:`InputError` naming the first column with missing cells under ``error``.
    """
    if policy is MissingPolicy.VALUE:
        return None
    if policy is MissingPolicy.ERROR:
        found = {
            name: (int(m.sum()), (np.flatnonzero(m)[:SHOWN_ROWS] + 1).tolist()) for name, m in masks.items() if m.any()
        }
        if found:
            raise missing_error(source, found)
        return None
    any_missing = np.zeros(len(next(iter(masks.values()))), dtype=bool)
    for m in masks.values():
        any_missing |= m
    if not any_missing.any():
        return None
    return ~any_missing
