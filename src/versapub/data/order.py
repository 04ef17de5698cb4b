"""Value order: how versapub orders the values of an attribute wherever order matters
(range queries, Mondrian's median splits, intervals of generalized values): numbers inside
a value compare as numbers, other text as text, and a date compares in time — ISO
``2021-03-14`` (already in time order as text), US ``03/14/2021`` (month first) and
``14.03.2021`` (day first, the dotted form), and ISO 8601 date-times (``2017-01-01T06:00:42Z``,
with an offset, fractional seconds or a space for ``T``: compared in UTC) — so dates are
ordered in time everywhere while published in the input's own form."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_NUM = re.compile(r"(\d+(?:\.\d+)?)")
#: Dates whose written order is not time order: (pattern, the groups' order as year, month, day).
_DATES = (
    (re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})$"), (1, 2, 3)),  # ISO: year-month-day
    (re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$"), (3, 1, 2)),  # US: month/day/year
    (re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$"), (3, 2, 1)),  # dotted: day.month.year
)
#: ISO 8601 date-times: ``2017-01-01T06:00:42Z``, with an offset (``+01:00``, ``+0100``),
#: fractional seconds, a space instead of ``T``, or no seconds.
_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$"
)


def date_key(value: str) -> tuple[int, int, int] | None:
    """``(year, month, day)`` of an ISO (``2021-03-14``), US (``03/14/2021``) or dotted
    (``14.03.2021``) date, else None."""
    for pattern, (y, m, d) in _DATES:
        hit = pattern.match(value.strip())
        if hit:
            month, day = int(hit[m]), int(hit[d])
            if 1 <= month <= 12 and 1 <= day <= 31:
                return int(hit[y]), month, day
    return None


def datetime_of(value: str) -> _dt.datetime | None:
    """An ISO 8601 date-time (``_DATETIME``) as a :class:`datetime.datetime` — aware when the
    value gives ``Z`` or an offset, naive otherwise — else None."""
    hit = _DATETIME.match(value.strip())
    if hit is None:
        return None
    year, month, day, hour, minute = (int(hit[i]) for i in range(1, 6))
    second = int(hit[6] or 0)
    micro = round(float(hit[7]) * 1e6) if hit[7] else 0
    tz: _dt.tzinfo | None = None
    if hit[8] == "Z":
        tz = _dt.UTC
    elif hit[8]:
        sign = -1 if hit[8][0] == "-" else 1
        digits = hit[8][1:].replace(":", "")
        tz = _dt.timezone(sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0)))
    try:
        return _dt.datetime(year, month, day, hour, minute, second, min(micro, 999_999), tzinfo=tz)
    except ValueError:
        return None


def datetime_key(value: str) -> tuple[int, int, int, int, int, float] | None:
    """``(year, month, day, hour, minute, second)`` of an ISO 8601 date-time, in UTC when it
    gives an offset (so that ``06:00+01:00`` comes before ``05:30Z``), else None."""
    moment = datetime_of(value)
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(_dt.UTC)
    return (
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second + moment.microsecond / 1e6,
    )


def order_key(value: str) -> tuple[tuple[int, float | str], ...]:
    """Value order: numbers inside a value compare as numbers, other text as text (a
    leading minus sign makes the first number negative); dates and ISO 8601 date-times in
    time (a date before every time of its day)."""
    text = value.strip()
    date: tuple[float, ...] | None = date_key(text) or datetime_key(text)
    if date is not None:  # in time: year, month, day (hour, minute, second)
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
