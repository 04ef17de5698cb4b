"""Dates in a format the user names (``--date-format COL=FORMAT``): a column's dates read
with ``FORMAT`` (``strftime`` codes, e.g. ``%d/%m/%Y`` for day-first slashes, which no
reader can tell from US dates by their form) and published in ISO 8601 (``2021-03-14``),
whose text order is time order everywhere (docs/choices.md, choice 147).  Only the
dictionary is converted: one parse per distinct value, never per record."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from versapub.data.hierarchy import Hierarchy
from versapub.data.table import CODE_DTYPE, Column, is_missing_value
from versapub.errors import InputError

#: Shown examples of values that do not read in the format.
_SHOWN = 5


def require_format(column: str, fmt: str) -> str:
    """``fmt`` when it is a date format (it names a year, a month and a day), else an
    :class:`InputError` naming the column."""
    if not isinstance(fmt, str) or not all(code in fmt for code in ("%d", "%m")) or not ("%Y" in fmt or "%y" in fmt):
        raise InputError(
            f"The date format {fmt!r} given for column {column!r} must name the day, the month and the year "
            "with strftime codes, e.g. %d/%m/%Y (14/03/2021), %m/%d/%Y (03/14/2021) or %d.%m.%y (14.03.21)."
        )
    return fmt


def parse_date(value: str, fmt: str) -> str | None:
    """``value`` read with ``fmt`` as an ISO date (``YYYY-MM-DD``), or None."""
    try:
        return _dt.datetime.strptime(value.strip(), fmt).date().isoformat()
    except ValueError:
        return None


def iso_values(name: str, values: npt.NDArray[np.object_], counts: npt.NDArray[np.int64], fmt: str) -> dict[str, str]:
    """Each distinct value of column ``name`` (``values``, with their record ``counts``) ->
    its ISO date (missing cells are kept as they are); an :class:`InputError` names the
    values that do not read in ``fmt``."""
    require_format(name, fmt)
    out: dict[str, str] = {}
    bad: list[str] = []
    for v in values:
        text = str(v)
        if is_missing_value(text):
            continue
        iso = parse_date(text, fmt)
        if iso is None:
            bad.append(text)
        else:
            out[text] = iso
    if bad:
        index = {str(v): i for i, v in enumerate(values)}
        shown = ", ".join(f"{v!r} ({int(counts[index[v]])} records)" for v in bad[:_SHOWN])
        raise InputError(
            f"Column {name!r} was given the date format {fmt!r}, but {len(bad)} of its values do not read "
            f"as dates in it, e.g. {shown}. Correct the format (strftime codes: %d day, %m month, %Y year) or the "
            "values, or give --na-values for markers of missing dates."
        )
    return out


def to_iso(column: Column, fmt: str) -> Column:
    """The column with its dates (read in ``fmt``) written in ISO 8601; spellings of the
    same date (``3/4/2021`` and ``03/04/2021``) become one value."""
    mapping = iso_values(column.name, column.values, column.counts(), fmt)
    target = np.array([mapping.get(str(v), str(v)) for v in column.values], dtype=object)
    values, inverse = np.unique(target, return_inverse=True) if len(target) else (target, np.zeros(0, np.int64))
    remap: npt.NDArray[np.int32] = np.asarray(inverse, dtype=CODE_DTYPE).ravel()
    return Column(column.name, remap[column.codes], values.astype(object))


def require_formats(formats: Mapping[str, str]) -> dict[str, str]:
    """The formats checked (each names a day, a month and a year)."""
    return {c: require_format(c, f) for c, f in formats.items()}


def dated_hierarchy(hierarchy: Hierarchy, fmt: str) -> Hierarchy:
    """``hierarchy`` with its cells that read as dates in ``fmt`` written in ISO 8601, so
    that it matches a column read with ``--date-format`` (other labels, ``2021`` or
    ``*``, stay as they are)."""
    rows = tuple(tuple(parse_date(cell, fmt) or cell for cell in row) for row in hierarchy.levels)
    return Hierarchy(hierarchy.attribute, rows, hierarchy.source, hierarchy.padded)
