"""``hierarchy check``: does a hierarchy fit a column, and how will it be published."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HierarchyFit:
    """A hierarchy checked against a column: every value a leaf, a tree without cycles, every
    row as high as the others; its nodes per level, its leaves the column does not hold, and
    the labels it will be published under when they name two things (``Other (level 1)``)."""

    attribute: str
    file: str
    values: int
    height: int
    nodes: tuple[int, ...]
    unused_leaves: int
    renamed: tuple[tuple[str, int, str], ...] = ()

    def describe(self, data: str) -> str:
        per_level = ", ".join(f"{n} node(s) at level {k}" for k, n in enumerate(self.nodes))
        extra = f"; {self.unused_leaves} leaf/leaves the column does not hold" if self.unused_leaves else ""
        renamed = "".join(
            f"; its level-{k} node {old!r} names other values too and is published as {new!r}"
            for old, k, new in self.renamed
        )
        return (
            f"{self.file} fits column {self.attribute!r} of {data}: every one of its {self.values} values is a "
            f"leaf; {self.height} levels with {per_level}{extra}{renamed}."
        )


def hierarchy_fit(
    data: str | Path, attribute: str, file: str | Path, delimiter: str | None = None, hierarchy_delimiter: str = ";"
) -> HierarchyFit:
    """Check the hierarchy in ``file`` against column ``attribute`` of ``data`` (a
    :class:`~versapub.errors.HierarchyError` names what does not fit)."""
    from versapub.anonymizers.generalizing.generalize import dimension
    from versapub.data.hierarchy import Hierarchy
    from versapub.io.read import read_table

    h = Hierarchy.read(Path(file), attribute, hierarchy_delimiter)
    table = read_table(Path(data), delimiter=delimiter, columns=[attribute], missing="value")
    col = table.column(attribute)
    h.require_covers(col)
    h.require_uniform()
    dim = dimension(table, attribute, h)
    return HierarchyFit(
        attribute=attribute,
        file=str(file),
        values=col.cardinality,
        height=h.height,
        nodes=tuple(len({row[k] for row in h.levels}) for k in range(h.height)),
        unused_leaves=len(h.levels) - col.cardinality,
        renamed=dim.renamed,
    )
