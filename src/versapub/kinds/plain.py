"""The ``plain`` kind: a table published exactly, as one count table ``attrs..., count``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.counts import CountTable
from versapub.kinds.base import CodesOf, CountRows, Entry, LeavesOnly, TablePart, View, register
from versapub.model.factors import Factor, PlainFactor
from versapub.privacy.guarantees.guarantee import Guarantee


class Plain(LeavesOnly):
    """The exact projection of the input on the table's attributes (``docs/release-format.md``)."""

    name = "plain"
    counts = "exact"
    in_model = True
    glossary = "A table published as it is: its values exactly, one count per combination."

    def sensitive_of(self, entry: Entry) -> tuple[str, ...]:
        return ()

    def roles(self, entry: Entry) -> dict[str, list[str]]:
        return {"data": [*entry.attributes, "count"]}

    def file_names(self, table: str, ext: str) -> dict[str, str]:
        return {"data": f"{table}.{ext}"}

    def product_parts(self, table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
        return table.parts["data"], None, None

    def manifest_fields(self, table: AnonymizedTable) -> dict[str, Any]:
        return {}

    def validate(self, table: AnonymizedTable) -> None:
        if set(table.parts) != {"data"} or table.enforces is not None:
            raise ValueError("a plain table has one part 'data' and enforces no rule")

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        return None

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        return "data", list(entry.attributes)

    def unguarded(self, entry: Entry) -> list[str]:
        return list(entry.attributes)

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        return {}

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        part = parts["data"]
        attrs = entry.attributes
        return PlainFactor(tuple(attrs), {a: part.columns[a] for a in attrs}, part.counts / n, dict(cards))

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        return View((parts["data"],))

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        return {}


PLAIN = register(Plain())
