"""Generalization hierarchies in ARX's CSV format, and generalizing a column to a level.

Format (ARX): no header; one line per leaf value; ``;``-separated; column 0 is the
original value, each further column a more general value, the last column the root
(usually ``*``).  Level 0 is the leaf itself, level ``height - 1`` the root.

Choice (documented in ``docs/choices.md``): rows shorter than the longest row (ARX
files with non-uniform heights) are padded by repeating the row's last value before
its root, so such a leaf stays itself at the extra levels.
"""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from versapub.data.source import ColumnInfo
from versapub.data.table import CODE_DTYPE, Column, encode_values
from versapub.errors import HierarchyError

_SHOWN = 5


def _require_acyclic(levels: tuple[tuple[str, ...], ...], where: str) -> None:
    """Refuse a value that generalizes, through other values, back to itself (``47601`` to
    ``47602`` on one row and ``47602`` to ``47601`` on another): read as one graph of labels
    (an edge from each cell to the next more general one on its row; a value that is its
    own generalization is no edge), a hierarchy must have no cycle.  A label may stand at
    several levels (ARX's ``Other;Other;*`` beside ``Asian;Other;*``)."""
    up: dict[str, set[str]] = {}
    first: dict[tuple[str, str], int] = {}
    for i, row in enumerate(levels, start=1):
        for a, b in itertools.pairwise(row):
            if a != b:
                up.setdefault(a, set()).add(b)
                first.setdefault((a, b), i)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in up:
        if start in state:
            continue
        path: list[str] = []
        stack: list[tuple[str, list[str]]] = [(start, sorted(up.get(start, ())))]
        state[start] = 1
        path.append(start)
        while stack:
            node, todo = stack[-1]
            if not todo:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            nxt = todo.pop()
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                rows = sorted({first[(a, b)] for a, b in itertools.pairwise(cycle)})
                shown = " -> ".join(repr(v) for v in cycle)
                raise HierarchyError(
                    f"{where} has a cycle: {shown} (rows {', '.join(map(str, rows))}); a value cannot generalize, "
                    "through other values, back to itself. Give each group a label that is not one of its members' "
                    "generalizations."
                )
            if nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, sorted(up.get(nxt, ()))))


@dataclass(frozen=True)
class Hierarchy:
    """A value generalization hierarchy for one attribute.

    ``levels[i][k]`` is leaf *i*'s generalization at level *k* (``levels[i][0]`` is the
    leaf; the missing value — an empty cell — may be a leaf like any other, as in ARX).
    Validated on construction: non-blank nodes, unique leaves, every value at
    level *k* has one parent at level *k + 1* (the rows form a tree), and no value
    generalizes through others back to itself (no cycle).
    """

    attribute: str
    levels: tuple[tuple[str, ...], ...]
    source: str = "<memory>"
    #: Rows (1-based) that were shorter than the longest and padded by :meth:`from_rows`.
    padded: tuple[int, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        where = f"Hierarchy {self.source} (attribute {self.attribute!r})"
        if not self.levels:
            raise HierarchyError(f"{where} has no rows.")
        height = len(self.levels[0])
        if height < 1:
            raise HierarchyError(f"{where}: row 1 is empty.")
        leaves: dict[str, int] = {}
        for i, row in enumerate(self.levels, start=1):
            if len(row) != height:
                raise HierarchyError(f"{where}: row {i} has {len(row)} levels, row 1 has {height}.")
            for k, cell in enumerate(row):
                if not isinstance(cell, str) or (k > 0 and not cell.strip()):  # the leaf may be the missing value
                    raise HierarchyError(
                        f"{where}: row {i}, column {k + 1} is empty; only a leaf (column 1) may be the missing "
                        "value, and every node above it needs a label (e.g. '(empty)')."
                    )
            if row[0] in leaves:
                j = leaves[row[0]]
                if self.levels[j - 1] != row:
                    raise HierarchyError(
                        f"{where}: leaf {row[0]!r} appears on rows {j} and {i} with different generalizations."
                    )
            else:
                leaves[row[0]] = i
        _require_acyclic(self.levels, where)
        for k in range(1, height - 1):
            parent: dict[str, str] = {}
            for i, row in enumerate(self.levels, start=1):
                p = parent.setdefault(row[k], row[k + 1])
                if p != row[k + 1]:
                    raise HierarchyError(
                        f"{where} is not a tree: value {row[k]!r} at level {k} has two "
                        f"parents at level {k + 1}, {p!r} and {row[k + 1]!r} (row {i})."
                    )

    @property
    def height(self) -> int:
        """Number of levels including the leaf level (a leaf-and-root file has height 2)."""
        return len(self.levels[0])

    def mapping(self, level: int) -> dict[str, str]:
        """Leaf value -> its generalization at ``level``."""
        self._check_level(level)
        return {row[0]: row[level] for row in self.levels}

    def _check_level(self, level: int) -> None:
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level < self.height:
            raise HierarchyError(
                f"Hierarchy {self.source} for {self.attribute!r} has levels 0 (the original "
                f"values) to {self.height - 1} (the root); level {level!r} does not exist."
            )

    def uncovered(self, column: ColumnInfo) -> list[str]:
        """The column's values that are not leaves of the hierarchy."""
        leaves = {row[0] for row in self.levels}
        return [str(v) for v in column.values if str(v) not in leaves]

    def require_covers(self, column: ColumnInfo) -> None:
        """Raise a :class:`HierarchyError` naming the column's values (with their row counts)
        that are not leaves of the hierarchy."""
        uncovered = self.uncovered(column)
        if uncovered:
            counts = column.counts()
            index = {str(v): i for i, v in enumerate(column.values)}
            shown = ", ".join(f"{v!r} ({int(counts[index[v]])} rows)" for v in uncovered[:_SHOWN])
            raise HierarchyError(
                f"Hierarchy {self.source} does not cover column {column.name!r}: "
                f"{len(uncovered)} value(s) of the data are not leaves of the hierarchy, "
                f"e.g. {shown}. Add them as rows (leaf first, root last)."
            )

    def node_codes(self, column: ColumnInfo) -> tuple[npt.NDArray[np.int64], ...]:
        """Per level (0: the leaves, last: the root), the node of each of the column's codes
        as an integer id unique at that level (node labels in sorted order)."""
        self.require_covers(column)
        self.require_uniform()
        row = {r[0]: r for r in self.levels}
        out = []
        for k in range(self.height):
            labels = np.array([row[str(v)][k] for v in column.values], dtype=object)
            _, ids = np.unique(labels, return_inverse=True) if len(labels) else (None, np.zeros(0, np.int64))
            out.append(np.asarray(ids, dtype=np.int64).ravel())
        return tuple(out)

    def generalize(self, column: Column, level: int) -> Column:
        """The column with every value replaced by its generalization at ``level``.

        Every value of the column must be a leaf of the hierarchy; the error names
        the values that are not.
        """
        self._check_level(level)
        self.require_covers(column)
        mapping = self.mapping(level)
        if level == 0:
            return column
        target = np.array([mapping[v] for v in column.values], dtype=object)
        gen = encode_values(column.name, target)  # sorted dictionary of generalized values
        remap: npt.NDArray[np.int32] = gen.codes.astype(CODE_DTYPE)
        return Column(column.name, remap[column.codes], gen.values)

    @classmethod
    def from_rows(cls, attribute: str, rows: list[list[str]], source: str = "<memory>") -> Hierarchy:
        """Build from raw rows; pads non-uniform rows (see module docstring)."""
        rows = [r for r in rows if any(c.strip() for c in r)]
        if not rows:
            raise HierarchyError(f"Hierarchy {source} (attribute {attribute!r}) has no rows.")
        height = max(len(r) for r in rows)
        padded: list[tuple[str, ...]] = []
        for i, r in enumerate(rows, start=1):
            if len(r) < 2 and height >= 2:
                raise HierarchyError(
                    f"Hierarchy {source} (attribute {attribute!r}): row {i} has only one "
                    "value; every row needs the leaf and at least its root."
                )
            if len(r) < height:
                r = r[:-1] + [r[-2]] * (height - len(r)) + r[-1:]
            padded.append(tuple(r))
        short = tuple(i for i, r in enumerate(rows, start=1) if len(r) < height)
        return cls(attribute, tuple(padded), source, short)

    def require_uniform(self) -> None:
        """Raise a :class:`HierarchyError` when rows had different heights (padded when
        read): an anonymizer's levels would not mean the same for every value."""
        if self.padded:
            shown = ", ".join(str(i) for i in self.padded[:10])
            raise HierarchyError(
                f"Hierarchy {self.source} for {self.attribute!r} has rows of different heights (row(s) {shown} "
                f"are shorter than the longest, {self.height} levels); an anonymizer needs every value to have "
                "the same levels. Give every row the same number of columns."
            )

    @classmethod
    def read(cls, path: str | Path, attribute: str, delimiter: str = ";") -> Hierarchy:
        """Read an ARX hierarchy CSV file."""
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise HierarchyError(f"Cannot read the hierarchy file for {attribute!r}: {p} ({exc.strerror}).") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise HierarchyError(
                f"Hierarchy file {p} (attribute {attribute!r}) is not UTF-8 text "
                f"(invalid byte on line {line}); save it as UTF-8."
            ) from None
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
        return cls.from_rows(attribute, rows, source=str(p))
