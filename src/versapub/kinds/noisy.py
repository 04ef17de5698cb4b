"""The ``noisy`` kind: one marginal measured under differential privacy (issue 52).

Its one file lists **every cell** of the marginal's declared domain (``domains`` in the
entry) with its noisy count: the exact count plus discrete Gaussian noise of scale ``sigma``
(OpenDP's sampler, :mod:`versapub.mechanisms.noise`), so a count may be zero or negative and
the counts need not sum to the record count.  The entry records ``sigma`` and ``rho`` (the
measurement's share of the zCDP budget; the manifest's ``mechanism.ledger`` composes them).
A noisy table is evidence, not a factor: the release model is the ``fitted`` tables fitted to
all noisy tables together (:mod:`versapub.kinds.fitted`); a query answered inside one noisy
table gets its 95 % interval from this table's noise (``docs/release-format.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.counts import CountTable
from versapub.errors import ReleaseError
from versapub.kinds.base import CodesOf, CountRows, Entry, LeavesOnly, TablePart, View, register
from versapub.model.factors import Factor
from versapub.privacy.guarantees.guarantee import Guarantee


def noise_of(entry: Entry) -> tuple[float, float]:
    """The entry's ``(sigma, rho)``; a missing or non-positive one is a :class:`ReleaseError`."""
    out = []
    for key in ("sigma", "rho"):
        v = entry.raw.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ReleaseError(f"Noisy table {entry.name!r} needs a positive {key!r}, got {v!r}.")
        out.append(float(v))
    return out[0], out[1]


class Noisy(LeavesOnly):
    """A marginal measured with calibrated noise (module docstring)."""

    name = "noisy"
    glossary = (
        "A marginal measured under differential privacy: every cell of its domain with a noisy count "
        "(exact count plus Gaussian noise of the stated scale; counts may be negative)."
    )
    counts = "noisy"
    in_model = False

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
        raise ValueError("noisy tables are written by a mechanism (versapub.mechanisms), not an anonymizer")

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        return None

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        return "data", list(entry.attributes)

    def unguarded(self, entry: Entry) -> list[str]:
        return []  # noise, not a row of anyone's values, stands in each cell

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        return {}

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        raise ReleaseError(f"Noisy table {entry.name!r} is evidence for the fitted model, not a factor of it.")

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        t = parts["data"]  # the adversary reads the noisy counts; a negative one says "none"
        keep = [i for i, c in enumerate(t.counts) if c > 0]
        return View((CountRows(t.source, t.columns, tuple(t.rows[i] for i in keep), tuple(t.counts[i] for i in keep)),))

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        sigma, rho = noise_of(entry)
        return {"sigma": sigma, "rho": rho}


NOISY = register(Noisy())
