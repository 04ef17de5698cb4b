"""``risk --household COLUMN`` on a data file (issue 68): each record's individual risk on the
key variables, then the household figures of :mod:`versapub.privacy.risk.households`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.privacy.risk import reidentification as rid
from versapub.privacy.risk.households import HouseholdRisk, household_level, measure_households


def households_of(
    table: EncodedTable,
    qi: Sequence[str],
    column: str,
    declared: Sequence[str] | None,
    sampling_fraction: float,
    threshold: float,
    weights: np.ndarray | None = None,
) -> HouseholdRisk:
    """The household figures of ``table`` with ``column`` its household id: individual risk
    (Benedetti–Franconi, as ``risk`` reports it) per record on ``qi``, the household-level key
    variables ``declared`` or found (constant within every household)."""
    if column not in table.names:
        raise InputError(
            f"--household names {column!r}, not a column of the data (its columns: {', '.join(table.names)})."
        )
    if column in qi:
        raise InputError(
            f"--household {column} is the household id: an identifier, never a key variable an adversary matches on; "
            "leave it out of --qi."
        )
    unknown = [a for a in declared or [] if a not in qi]
    if unknown:
        raise InputError(f"--household-level names {unknown}, not among the key variables (--qi {','.join(qi)}).")
    household = table.codes(column).astype(np.int64)
    keys = {a: (table.codes(a).astype(np.int64), table.cardinality(a)) for a in qi}
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
