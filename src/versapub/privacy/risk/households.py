"""Risk of persons in households (issue 68): what the rows of one household reveal together.

* **Household risk** (sdcMicro's ``measure_risk`` with ``hid``, after μ-Argus: Boole's
  formula on independent events): a household is re-identified when at least one of its
  members is, so each member's household risk is ``1 - Π_{j in h} (1 - r_j)`` over the
  household's individual risks ``r_j``; the expected number of re-identifications with the
  household structure is the sum of the members' household risks (sdcMicro's
  ``hier_risk_ER``), its share of the records ``hier_risk``.
* **The household structure key**: a household is identified by its composition far more
  easily than a person by her own row. Its key is its household-level key values (the key
  variables constant within every household: region, size, …) and the multiset of its
  members' person-level key combinations; households sharing a key form a class, and a
  household alone in its class is unique on its structure although each member may sit in a
  cell of many persons.

Everything is vectorized over records and households (a household's members sorted into a
padded row, never a loop over households).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows, unique_rows
from versapub.privacy.risk import reidentification as rid

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def household_risk(individual: npt.ArrayLike, household: npt.ArrayLike) -> Floats:
    """Each record's household risk ``1 - Π (1 - r_j)`` over its household's members
    (``individual``: each record's risk; ``household``: each record's household, 0-based)."""
    r = np.clip(np.asarray(individual, dtype=np.float64), 0.0, 1.0)
    h = np.asarray(household, dtype=np.int64)
    if not len(r):
        return r
    with np.errstate(divide="ignore"):
        log_keep = np.bincount(h, weights=np.log1p(-r), minlength=int(h.max()) + 1)
    return np.asarray(1.0 - np.exp(log_keep[h]), dtype=np.float64)


def household_level(columns: Mapping[str, Ints], household: Ints) -> list[str]:
    """The columns constant within every household (codes per record), in their order."""
    out = []
    order = np.argsort(household, kind="stable")
    h = household[order]
    same = h[1:] == h[:-1]
    for name, codes in columns.items():
        c = codes[order]
        if bool(np.all(c[1:][same] == c[:-1][same])):
            out.append(name)
    return out


def structure_classes(household: Ints, person_key: Ints, household_key: Ints) -> tuple[Ints, Ints]:
    """Per household (0-based ids), the size of its structure class: how many households share
    its household-level key (``household_key``, per record, constant within a household) and
    its multiset of members' person-level key combinations (``person_key``, per record); and
    each household's class id."""
    n_h = int(household.max()) + 1 if len(household) else 0
    order = np.lexsort((person_key, household))
    h, p = household[order], person_key[order]
    size = np.bincount(h, minlength=n_h)
    start = np.r_[0, np.cumsum(size)[:-1]]
    rank = np.arange(len(h)) - start[h]
    width = int(size.max(initial=0))
    sig = np.full((n_h, width + 2), -1, dtype=np.int64)
    sig[h, rank] = p
    first = np.full(n_h, -1, dtype=np.int64)
    first[household[::-1]] = np.arange(len(household))[::-1]  # each household's first record
    sig[:, width] = household_key[first]
    sig[:, width + 1] = size
    _, inverse, mult = unique_rows(sig)
    return mult[inverse], inverse


@dataclass(frozen=True)
class HouseholdRisk:
    """The household-level figures of a table (module docstring)."""

    column: str
    households: int
    records: int
    household_level: tuple[str, ...]
    person_keys: tuple[str, ...]
    household_keys: tuple[str, ...]
    unique_households: int
    smallest_class: int
    expected_reidentifications: float
    highest: float
    households_at_risk: int
    threshold: float

    @property
    def unique_share(self) -> float:
        return self.unique_households / self.households if self.households else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "households": self.households,
            "records": self.records,
            "household_level_columns": list(self.household_level),
            "structure_key": {"household_level": list(self.household_keys), "members": list(self.person_keys)},
            "unique_on_structure": self.unique_households,
            "unique_on_structure_share": self.unique_share,
            "smallest_structure_class": self.smallest_class,
            "household_risk": {
                "expected_reidentifications": self.expected_reidentifications,
                "average": self.expected_reidentifications / self.records if self.records else 0.0,
                "highest": self.highest,
                "households_at_risk": self.households_at_risk,
                "threshold": self.threshold,
            },
        }

    def text(self) -> str:
        """The figures in two sentences."""
        return (
            f"{self.households:,} households ({self.column}): {self.unique_households:,} "
            f"({self.unique_share:.1%}) are unique on their structure (household-level keys "
            f"{', '.join(self.household_keys) or 'none'} and the members' {', '.join(self.person_keys) or 'nothing'}), "
            f"the smallest structure class holds {self.smallest_class:,}. Household risk (sdcMicro, 1 - Π(1 - r) over "
            f"the members): expected re-identifications {self.expected_reidentifications:,.1f} "
            f"({self.expected_reidentifications / max(self.records, 1):.2%} of the records), highest "
            f"{self.highest:.4f}, {self.households_at_risk:,} households above {self.threshold:g}."
        )


def measure_households(
    column: str,
    household: Ints,
    keys: Mapping[str, tuple[Ints, int]],
    individual: Floats,
    threshold: float,
    declared: Sequence[str] | None = None,
    level: Sequence[str] | None = None,
) -> HouseholdRisk:
    """The household figures of one table: ``household`` (each record's household, 0-based),
    the key variables' codes and cardinalities per record, each record's individual risk;
    ``declared``: the household-level columns the steward names (else those found constant
    within every household among ``level``, the columns offered)."""
    found = list(declared) if declared is not None else list(level or [])
    hh_keys = [a for a in keys if a in found]
    person = [a for a in keys if a not in found]

    def combo(names: Sequence[str]) -> Ints:
        if not names:
            return np.zeros(len(household), dtype=np.int64)
        g = group_rows([keys[a][0] for a in names], [keys[a][1] for a in names], with_inverse=True)
        assert g.inverse is not None
        return g.inverse.astype(np.int64)

    sizes, _ = structure_classes(household, combo(person), combo(hh_keys))
    hr = household_risk(individual, household)
    n_h = len(sizes)
    per_household = np.zeros(n_h)
    per_household[household] = hr
    return HouseholdRisk(
        column=column,
        households=n_h,
        records=len(household),
        household_level=tuple(found),
        person_keys=tuple(person),
        household_keys=tuple(hh_keys),
        unique_households=int((sizes == 1).sum()),
        smallest_class=int(sizes.min()) if len(sizes) else 0,
        expected_reidentifications=float(hr.sum()),
        highest=float(hr.max(initial=0.0)),
        households_at_risk=int((per_household > threshold).sum()),
        threshold=threshold,
    )


def households_of_codes(
    column: str,
    household: Ints,
    keys: Mapping[str, tuple[Ints, int]],
    declared: Sequence[str] | None,
    sampling_fraction: float,
    threshold: float,
    weights: Floats | None = None,
) -> HouseholdRisk:
    """:func:`households_of` on codes: each record's household and key values (codes, cardinality)."""
    if not keys:
        individual = np.full(len(household), 1.0 / max(len(household), 1))
        return measure_households(column, household, keys, individual, threshold, declared, [])
    g = group_rows([c for c, _ in keys.values()], [k for _, k in keys.values()], with_inverse=True)
    assert g.inverse is not None
    cls = g.inverse.astype(np.int64)
    f = g.counts.astype(np.float64)
    if weights is not None:
        big_f = rid.population_sizes(f, weights=np.bincount(cls, weights=weights, minlength=len(f)))
    else:
        big_f = rid.population_sizes(f, sampling_fraction=sampling_fraction) if sampling_fraction < 1 else f
    individual = rid.individual_risk(f, big_f)[cls]
    level = None if declared is not None else household_level({a: c for a, (c, _) in keys.items()}, household)
    return measure_households(column, household, keys, individual, threshold, declared, level)
