"""``risk --household COLUMN`` on a data file (issue 68): each record's individual risk on the
key variables, then the household figures of :mod:`versapub.privacy.risk.households`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.privacy.risk.households import HouseholdRisk, households_of_codes


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
    return households_of_codes(column, household, keys, declared, sampling_fraction, threshold, weights)
