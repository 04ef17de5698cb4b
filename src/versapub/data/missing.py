"""The missing-value policy: what to do with empty (or whitespace-only) cells."""

from __future__ import annotations

import enum
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from versapub.errors import InputError

#: How many offending row numbers an error message lists.
SHOWN_ROWS = 5


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


def missing_error(source: str, column: str, count: int, first_rows: list[int]) -> InputError:
    rows = ", ".join(str(r) for r in first_rows[:SHOWN_ROWS])
    return InputError(
        f"{source}: column {column!r} has {count} missing (empty) cell(s), first at data "
        f"row(s) {rows} (row 1 is the first record after the header). Fill them in, or "
        "choose a missing-value policy: 'value' keeps an empty cell as an ordinary value, "
        "'drop' drops those rows and counts them in the report."
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
        for name, m in masks.items():
            if m.any():
                rows = (np.flatnonzero(m)[:SHOWN_ROWS] + 1).tolist()
                raise missing_error(source, name, int(m.sum()), rows)
        return None
    any_missing = np.zeros(len(next(iter(masks.values()))), dtype=bool)
    for m in masks.values():
        any_missing |= m
    if not any_missing.any():
        return None
    return ~any_missing
