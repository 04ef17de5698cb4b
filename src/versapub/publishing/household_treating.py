"""Treatments of household-level columns drawn once per household (issue 68, item 3).

A household's region, dwelling or income is one value shared by its members; a treatment that
draws for each record (noise, microaggregation, PRAM) would give the members of one
household different regions — an inconsistency that both damages the data and tells an
adversary which values were perturbed. When the job names a household id (``--household``)
and every column a treatment names is constant within every household, the treatment is
applied to one row per household (its first member's) and the outcome copied to every
member: microaggregation groups at least ``k`` households (so at least ``k`` records),
noise and PRAM draw once per household. The value rules (top- and bottom-coding, rounding)
are functions of the value and keep members alike anyway; swapping keeps its own ``unit``.

The manifest's record of such a treatment says ``unit = "household"`` and how many
households it drew for; its ``changed`` counts records, as every treatment's does. Invariant
PRAM (and PRAM by strata, whose matrices are invariant) keeps the *households'* frequencies,
which no published file counts, so it is refused on a household-level column."""

from __future__ import annotations

from typing import Any

import numpy as np

from versapub.data.table import Column, EncodedTable
from versapub.errors import ConfigError
from versapub.privacy.risk.households import household_level
from versapub.treatments.base import Treated, changed_records

#: The treatments that draw per record, drawn per household on household-level columns.
PER_HOUSEHOLD = ("microaggregation", "noise", "pram")


def per_household(t: Any, table: EncodedTable, household: str | None, rng: np.random.Generator) -> Treated | None:
    """``t`` applied once per household when the job has a ``household`` id and every
    column ``t`` names is household-level (module docstring); ``None``: applied per record."""
    if household is None or household not in table.names or t.name not in PER_HOUSEHOLD:
        return None
    hh = np.asarray(table.codes(household), dtype=np.int64)
    level = household_level({c: np.asarray(table.codes(c), dtype=np.int64) for c in t.columns}, hh)
    if set(level) != set(t.columns):
        return None
    params = t.params()
    if t.name == "pram" and (params.get("invariant") or params.get("strata")):
        raise ConfigError(
            f"PRAM of the household-level column(s) {', '.join(map(repr, t.columns))} draws once per household, "
            "and an invariant matrix (invariant=true, or strata=...) would keep the households' frequencies, which "
            "no published file counts. Use pram:columns=...,invariant=false, or leave --household out (each "
            "member then drawn alone)."
        )
    _, first, inverse = np.unique(hh, return_index=True, return_inverse=True)
    out = t.apply(table.take(first), rng)
    after = table
    for c in t.columns:
        col = out.table.column(c)
        after = after.replace(Column(c, np.ascontiguousarray(col.codes[np.asarray(inverse).ravel()]), col.values))
    record = {**out.record, "unit": "household", "households": len(first)}
    if isinstance(record.get("changed"), dict):
        record["changed"] = {c: changed_records(table, after, c) for c in t.columns}
    changed = record.get("changed") if isinstance(record.get("changed"), dict) else {}
    note = (
        f"{out.note} — drawn once per household ({len(first):,} households, counted above; every member keeps "
        "its household's value"
        + (f": {', '.join(f'{n:,} records of {c}' for c, n in changed.items())} changed)" if changed else ")")
    )
    return Treated(after, record, note)
