"""Building generalization hierarchies without writing CSV files by hand (the builders
ARX offers a data steward): numeric intervals, masking codes from the right, groups of
consecutive ordered values, and explicit groupings.  Each returns a
:class:`~versapub.data.hierarchy.Hierarchy` over the given leaves, written in ARX's format
by :func:`to_arx`."""

from __future__ import annotations

import datetime
import itertools
import math
from collections.abc import Mapping, Sequence

from versapub.data.hierarchy import Hierarchy
from versapub.data.missing import EMPTY_LABEL
from versapub.data.order import date_key, datetime_of, is_number, order_key
from versapub.data.table import is_missing_value
from versapub.errors import HierarchyError

ROOT = "*"


def _leaves(values: Sequence[str]) -> list[str]:
    """The values a builder groups, in value order: every value but the missing one (which
    :func:`_with_missing` adds as a leaf of its own)."""
    return sorted({str(v) for v in values if not is_missing_value(str(v))}, key=lambda v: (order_key(v), v))


def _with_missing(h: Hierarchy, values: Sequence[str]) -> Hierarchy:
    """``h`` with the missing value, when ``values`` hold it, as a leaf of its own: a row
    ``;(empty);...;*`` (the node above it at every level is :data:`EMPTY_LABEL`; ARX lets the
    missing value be a hierarchy row the same way)."""
    empty = sorted({str(v) for v in values if is_missing_value(str(v))})
    if not empty:
        return h
    rows = [list(r) for r in h.levels] + [[e, *([EMPTY_LABEL] * (h.height - 2)), ROOT] for e in empty]
    return Hierarchy.from_rows(h.attribute, rows, source=h.source)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


#: How an interval ``lo`` to ``hi`` (``hi`` excluded) is written: ARX's ``[0, 5[``, the
#: mathematical ``[0, 5)``, or the ``[0-5)`` many data files use (``[70-80)``).
LABEL_STYLES = {
    "arx": "[{lo}, {hi}[",
    "math": "[{lo}, {hi})",
    "dash": "[{lo}-{hi})",
}


def intervals(
    attribute: str, values: Sequence[str], widths: Sequence[float], start: float = 0.0, style: str = "arx"
) -> Hierarchy:
    """Numeric intervals ``[lo, lo + w[`` per level for each width in ``widths`` (each a
    multiple of the one before, so intervals nest), then the root ``*``; ``style`` writes
    them as ARX does (``[0, 5[``, the default), ``math`` (``[0, 5)``) or ``dash``
    (``[0-5)``, as in files whose own values read ``[70-80)``)."""
    if style not in LABEL_STYLES:
        raise HierarchyError(f"Interval label style {style!r}: choose {', '.join(LABEL_STYLES)}.")
    leaves = _leaves(values)
    try:
        nums = [float(v) for v in leaves]
    except ValueError:
        bad = next(v for v in leaves if not is_number(v))
        raise HierarchyError(
            f"Column {attribute!r} has a value that is not a number, {bad!r}; intervals need numbers."
        ) from None
    ws = [float(w) for w in widths]
    if not ws or any(w <= 0 for w in ws):
        raise HierarchyError(f"Interval widths for {attribute!r} must be positive numbers, got {list(widths)}.")
    for a, b in itertools.pairwise(ws):
        if b <= a or not math.isclose(b / a, round(b / a)):
            raise HierarchyError(
                f"Interval widths for {attribute!r} must each be a multiple of the one before (so that intervals "
                f"nest), got {a:g} then {b:g}."
            )
    rows = []
    for v, x in zip(leaves, nums, strict=True):
        row = [v]
        for w in ws:
            lo = start + math.floor((x - start) / w) * w
            row.append(LABEL_STYLES[style].format(lo=_fmt(lo), hi=_fmt(lo + w)))
        rows.append([*row, ROOT])
    return _with_missing(
        Hierarchy.from_rows(attribute, rows, source=f"<intervals {','.join(_fmt(w) for w in ws)}>"), values
    )


def masking(attribute: str, values: Sequence[str], char: str = "*") -> Hierarchy:
    """Codes masked from the right one character per level (``71000 -> 7100* -> 710** ->
    7**** -> *``): the longest code's last level before the root keeps one character."""
    leaves = _leaves(values)
    height = max((len(v) for v in leaves), default=0)
    rows = []
    for v in leaves:
        row = [v]
        for k in range(1, height):
            keep = max(len(v) - k, 0)
            row.append(v[:keep] + char * (len(v) - keep))
        rows.append([*row, ROOT])
    return _with_missing(Hierarchy.from_rows(attribute, rows, source="<masking>"), values)


#: The levels of a date hierarchy (ARX's), finest first; ``hour`` only for date-times.
DATE_LEVELS = ("hour", "day", "week", "month", "quarter", "year")


def _date(attribute: str, value: str, fmt: str | None = None) -> datetime.datetime | datetime.date:
    """The value as a date, or as a date-time when it is an ISO 8601 date-time (read as
    written: its own clock, whatever its offset)."""
    text = value.strip()
    moment = datetime_of(text) if fmt is None else None
    if moment is not None:
        return moment
    parts = date_key(text) if fmt is None else None
    try:
        if fmt is not None:
            read = datetime.datetime.strptime(text, fmt)
            return read if any(c in fmt for c in ("%H", "%I", "%M")) else read.date()
        if parts is not None:
            return datetime.date(*parts)
        return datetime.date.fromisoformat(text)
    except ValueError:
        written = f"written {fmt}" if fmt else "(ISO 2021-03-14 or 2021-03-14T06:00:42Z, US 03/14/2021 or 14.03.2021)"
        raise HierarchyError(
            f"Value {value!r} of {attribute!r} is not a date {written}; a date hierarchy needs every value to be one"
            + ("." if fmt else " (give --date-format for another form, e.g. %d/%m/%Y).")
        ) from None


def dates(attribute: str, values: Sequence[str], levels: Sequence[str], fmt: str | None = None) -> Hierarchy:
    """ARX's date hierarchy: each date or ISO 8601 date-time (ISO, US or dotted, or written in
    ``fmt``, kept in its own form as the leaf) generalized to the ``levels`` asked for, finest
    first — ``hour`` (``2017-01-01T06``, date-times only), ``day`` (``2017-01-01``: for
    date-times a level of its own, for dates the leaf itself), ``week`` (ISO week,
    ``2021-W10``; with a coarser level, ``2021-W10 (2021-03)``: a week across two months is a
    node in each, so that the levels form a tree), ``month`` (``2021-03``), ``quarter``
    (``2021-Q1``), ``year`` — then the root.  A date-time's levels are those of its clock as
    written (its offset is not applied)."""
    unknown = [lv for lv in levels if lv not in DATE_LEVELS]
    if unknown or not levels:
        raise HierarchyError(f"Date levels {list(levels)!r}: choose among {', '.join(DATE_LEVELS)} (finest first).")
    order = [DATE_LEVELS.index(lv) for lv in levels]
    if order != sorted(set(order)):
        raise HierarchyError(
            f"Date levels {list(levels)!r} must be distinct and finest first ({', '.join(DATE_LEVELS)})."
        )
    coarser = any(lv in levels for lv in ("month", "quarter", "year"))

    def week(d: datetime.date) -> str:  # a week across two months is one node per month (a tree)
        year, number, _ = d.isocalendar()
        return f"{year}-W{number:02d}" + (f" ({d.year}-{d.month:02d})" if coarser else "")

    label = {
        "hour": lambda d: f"{d.date().isoformat()}T{d.hour:02d}",
        "day": lambda d: d.isoformat(),
        "week": week,
        "month": lambda d: f"{d.year}-{d.month:02d}",
        "quarter": lambda d: f"{d.year}-Q{(d.month - 1) // 3 + 1}",
        "year": lambda d: f"{d.year}",
    }
    leaves = _leaves(values)
    moments = [_date(attribute, v, fmt) for v in leaves]
    timed = [isinstance(m, datetime.datetime) for m in moments]
    if "hour" in levels and not all(timed):
        plain = next(v for v, t in zip(leaves, timed, strict=True) if not t)
        raise HierarchyError(
            f"Date level 'hour' needs date-times (2017-01-01T06:00:42Z), but {attribute!r} holds the date {plain!r}; "
            "leave out 'hour'."
        )
    rows = []
    for v, m in zip(leaves, moments, strict=True):
        day = m.date() if isinstance(m, datetime.datetime) else m
        cells = []
        for lv in levels:
            if lv == "hour":
                cells.append(label["hour"](m))
            elif lv == "day":
                if isinstance(m, datetime.datetime):  # a date-time's day is a level of its own
                    cells.append(day.isoformat())
            else:
                cells.append(label[lv](day))
        rows.append([v, *cells, ROOT])
    return _with_missing(Hierarchy.from_rows(attribute, rows, source="<dates>"), values)


def grouped(attribute: str, values: Sequence[str], size: int) -> Hierarchy:
    """Ordered values grouped ``size`` at a time per level (groups of values, then groups
    of groups, ...) until one group is left, then the root ``*``; a group is labelled
    ``[first, last]``."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 2:
        raise HierarchyError(f"Group size for {attribute!r} must be a whole number >= 2, got {size!r}.")
    leaves = _leaves(values)
    rows = [[v] for v in leaves]
    spans = [(i, i) for i in range(len(leaves))]
    while len(spans) > 1:
        merged = [(spans[i][0], spans[min(i + size, len(spans)) - 1][1]) for i in range(0, len(spans), size)]
        if len(merged) == 1:
            break
        label = {j: f"[{leaves[a]}, {leaves[b]}]" for a, b in merged for j in range(a, b + 1)}
        for j, row in enumerate(rows):
            row.append(label[j])
        spans = merged
    for row in rows:
        row.append(ROOT)
    return _with_missing(Hierarchy.from_rows(attribute, rows, source=f"<groups of {size}>"), values)


def explicit(attribute: str, values: Sequence[str], levels: Sequence[Mapping[str, Sequence[str]]]) -> Hierarchy:
    """Explicit groupings, one mapping per level: ``{group: members}`` where members are
    the values (first level) or the groups of the level below; every value (or group) of
    the level below must be placed in exactly one group."""
    leaves = _leaves(values)
    current = {v: v for v in leaves}  # leaf -> its node at the level below
    rows = {v: [v] for v in leaves}
    for k, level in enumerate(levels, start=1):
        parent: dict[str, str] = {}
        for group, members in level.items():
            for m in members:
                if m in parent and parent[m] != group:
                    raise HierarchyError(
                        f"Level {k} of the hierarchy of {attribute!r} puts {m!r} in two groups, {parent[m]!r} and "
                        f"{group!r}."
                    )
                parent[m] = group
        below = sorted(set(current.values()))
        missing = [b for b in below if b not in parent]
        if missing:
            raise HierarchyError(
                f"Level {k} of the hierarchy of {attribute!r} does not place {len(missing)} value(s) of the level "
                f"below, e.g. {missing[:5]}; every one needs a group."
            )
        unknown = sorted(set(parent) - set(below))
        if unknown:
            raise HierarchyError(
                f"Level {k} of the hierarchy of {attribute!r} groups {unknown[:5]}, which are not values of the level "
                "below."
            )
        for v in leaves:
            current[v] = parent[current[v]]
            rows[v].append(current[v])
    return _with_missing(
        Hierarchy.from_rows(attribute, [[*rows[v], ROOT] for v in leaves], source="<explicit groups>"), values
    )


def to_arx(h: Hierarchy) -> str:
    """The hierarchy as ARX CSV text (``;``-separated, leaf first, root last)."""
    return "".join(";".join(row) + "\n" for row in h.levels)
