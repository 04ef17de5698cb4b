"""Value order: how versapub orders the values of an attribute wherever order matters
(range queries, Mondrian's median splits, intervals of generalized values): numbers inside
a value compare as numbers, other text as text, and a date compares in time — ISO
``2021-03-14`` (already in time order as text), US ``03/14/2021`` (month first) and
``14.03.2021`` (day first, the dotted form) — so dates are ordered in time everywhere
while published in the input's own form."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_NUM = re.compile(r"(\d+(?:\.\d+)?)")
#: Dates whose written order is not time order: (pattern, the groups' order as year, month, day).
_DATES = (
    (re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$"), (3, 1, 2)),  # US: month/day/year
    (re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$"), (3, 2, 1)),  # dotted: day.month.year
)


def date_key(value: str) -> tuple[int, int, int] | None:
    """``(year, month, day)`` of a US (``03/14/2021``) or dotted (``14.03.2021``) date, else
    None (ISO dates need none: their text is in time order)."""
    for pattern, (y, m, d) in _DATES:
        hit = pattern.match(value.strip())
        if hit:
            month, day = int(hit[m]), int(hit[d])
            if 1 <= month <= 12 and 1 <= day <= 31:
                return int(hit[y]), month, day
    return None


def order_key(value: str) -> tuple[tuple[int, float | str], ...]:
    """Value order: numbers inside a value compare as numbers, other text as text (a
    leading minus sign makes the first number negative)."""
    text = value.strip()
    date = date_key(text)
    if date is not None:  # in time: year, month, day
        return tuple((0, float(part)) for part in date)
    sign = -1.0 if text.startswith("-") and len(text) > 1 and text[1].isdigit() else 1.0
    if sign < 0:
        text = text[1:]
    parts: list[tuple[int, float | str]] = []
    for i, piece in enumerate(_NUM.split(text)):
        if not piece:
            continue
        if i % 2:
            parts.append((0, float(piece) * (sign if not parts else 1.0)))
        else:
            parts.append((1, piece))
    return tuple(parts)


def ranks(values: Sequence[str] | npt.NDArray[np.object_]) -> npt.NDArray[np.int64]:
    """The rank of each value in value order (ties: equal keys share no rank; the text
    breaks them)."""
    keys = [(order_key(str(v)), str(v)) for v in values]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    out = np.empty(len(keys), dtype=np.int64)
    out[np.asarray(order, dtype=np.int64)] = np.arange(len(keys), dtype=np.int64)
    return out


def numeric(values: Sequence[str] | npt.NDArray[np.object_]) -> npt.NDArray[np.float64] | None:
    """The values as numbers when every one reads as a number, else ``None``."""
    try:
        return np.asarray([float(str(v)) for v in values], dtype=np.float64)
    except ValueError:
        return None


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a number."""
    try:
        float(text)
    except ValueError:
        return False
    return True
