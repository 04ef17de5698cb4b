"""How an input is read, as one value for both backends (``versapub.io.read.read_table``
in memory, ``versapub.scale.read.read_dask`` on a cluster)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from versapub.data.hierarchy import Hierarchy
from versapub.data.missing import MissingPolicy


@dataclass(frozen=True)
class ReadOptions:
    """``delimiter`` (any string for CSV; default ``,``, a tab for ``.tsv``), the
    ``missing``-cell policy (``error`` | ``value`` | ``drop``), the selected ``columns``
    (default: all), ``hierarchies`` (attribute -> ``(hierarchy, level)``: published
    generalized to that level), the file ``format`` (``csv`` | ``parquet``; default: by its
    name), ``header`` (``False``: the file has no header line), ``names`` (the columns'
    names: a header-less file's, or renaming the header's), ``na_values`` (markers that make
    a cell missing, compared without surrounding whitespace), ``strip`` (remove surrounding
    whitespace from every cell) and ``date_formats`` (column -> the format its dates are
    written in: read in it, published in ISO 8601)."""

    delimiter: str | None = None
    missing: MissingPolicy = MissingPolicy.ERROR
    columns: tuple[str, ...] | None = None
    hierarchies: Mapping[str, tuple[Hierarchy, int]] = field(default_factory=dict)
    format: str | None = None
    header: bool = True
    names: tuple[str, ...] | None = None
    na_values: tuple[str, ...] = ()
    strip: bool = False
    date_formats: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "missing", MissingPolicy.parse(self.missing))
        for name in ("columns", "names"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(str(x) for x in value))
        object.__setattr__(self, "na_values", tuple(self.na_values))
        object.__setattr__(self, "hierarchies", dict(self.hierarchies or {}))
        object.__setattr__(self, "date_formats", dict(self.date_formats or {}))

    @classmethod
    def of(cls, options: ReadOptions | None = None, **overrides: Any) -> ReadOptions:
        """``options`` (default: every default) with ``overrides`` by field name (``None``
        leaves a field as it is); an unknown name is a :class:`TypeError` naming the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"unknown read option(s) {unknown}; the options are {sorted(known)}")
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(options or cls(), **given)

    @property
    def markers(self) -> frozenset[str]:
        """The missing-cell markers, without surrounding whitespace."""
        return frozenset(v.strip() for v in self.na_values)

    def selected(self, header: Sequence[str]) -> list[str]:
        """The columns read: the selection, else every column of ``header``."""
        return list(self.columns) if self.columns is not None else list(header)
