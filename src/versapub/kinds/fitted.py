"""The ``fitted`` kind: one clique marginal of a model fitted to noisy marginals (issue 52).

A differentially private release publishes, beside its ``noisy`` measurements, the model
Private-PGM's estimator fitted to them (:mod:`versapub.mechanisms.fit`): a graphical model
on a junction tree whose clique marginals are these tables.  Each lists every cell of its
clique with its **expected count** (a non-negative real; the table sums to ``n_records``,
itself the model's estimate of the record count), and the cliques agree on what they share,
so the release model's closed form (:mod:`versapub.model.maxent`) is exactly the fitted
model.  Post-processing of the noisy tables: it costs no budget."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.counts import CountTable
from versapub.kinds.base import CodesOf, CountRows, Entry, LeavesOnly, TablePart, View, register
from versapub.model.factors import Factor, PlainFactor
from versapub.privacy.guarantees.guarantee import Guarantee


class Fitted(LeavesOnly):
    """A clique marginal of the fitted model (module docstring)."""

    name = "fitted"
    glossary = (
        "A marginal of the model fitted to the noisy measurements: every cell with its expected count "
        "(post-processing of the noisy tables, no further privacy cost)."
    )
    counts = "expected"
    in_model = True

    def sensitive_of(self, entry: Entry) -> tuple[str, ...]:
        return ()

    def roles(self, entry: Entry) -> dict[str, list[str]]:
        return {"data": [*entry.attributes, "count"]}

    def file_names(self, table: str, ext: str) -> dict[str, str]:
        return {"data": f"{table}.{ext}"}

    def product_parts(self, table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
        return None

    def manifest_fields(self, table: AnonymizedTable) -> dict[str, Any]:
        return {}

    def validate(self, table: AnonymizedTable) -> None:
        raise ValueError("fitted tables are written by a mechanism (versapub.mechanisms), not an anonymizer")

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        return None

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        return "data", list(entry.attributes)

    def unguarded(self, entry: Entry) -> list[str]:
        return []  # a model's expectation, not a row of anyone's values

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        return {}

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        part = parts["data"]
        attrs = entry.attributes
        total = float(part.counts.sum())
        p = part.counts / total if total > 0 else part.counts
        return PlainFactor(tuple(attrs), {a: part.columns[a] for a in attrs}, p, dict(cards))

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        return View((parts["data"],))

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        return {}


FITTED = register(Fitted())
