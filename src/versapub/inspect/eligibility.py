"""``eligible``: which l, (c, l) and (tau, lambda) requirements a sensitive column admits at
all (functional diversity's eligible ranges, Definitions 14-16 of the functional paper),
as values for every front end (``versapub eligible --json``; the web interface's plot)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


def eligible(
    data: str | Path,
    sensitive: str,
    taxonomy: str | Path | None = None,
    max_level: int | None = None,
    delimiter: str | None = None,
) -> list[dict[str, Any]]:
    """Per level of the sensitive values (0: as they are; k: generalized to level k of
    ``taxonomy``): the number of values ``m``, the largest simple ``l``, and per lambda the
    smallest ``c`` of recursive (c, lambda)-diversity (None: none) and smallest ``tau`` of
    functional (tau, lambda)-diversity that some partition could meet."""
    from versapub.data.hierarchy import Hierarchy
    from versapub.errors import ConfigError
    from versapub.io.read import read_table
    from versapub.privacy.guarantees.eligible import ranges

    if max_level is not None and max_level < 0:
        raise ConfigError(f"The largest sensitive level must be 0 or more, got {max_level}.")
    col = read_table(Path(data), delimiter=delimiter, columns=[sensitive], missing="value").column(sensitive)
    h = Hierarchy.read(Path(taxonomy), sensitive) if taxonomy is not None else None
    return [
        {
            "level": r.level,
            "m": r.m,
            "max_l": r.max_l,
            "min_c": {str(k): (None if math.isinf(c) else c) for k, c in r.min_c.items()},
            "min_tau": {str(k): t for k, t in r.min_tau.items()},
        }
        for r in ranges(col, h, max_level)
    ]
