"""Decompositions of a table into sub-tables (UAD; GD and the baselines plug in here)."""

from versapub.decompositions.base import Decomposition
from versapub.decompositions.uad import uad, uad_schema
from versapub.errors import ConfigError

DECOMPOSITIONS: dict[str, Decomposition] = {"uad": uad}


def get_decomposition(name: str) -> Decomposition:
    try:
        return DECOMPOSITIONS[name.lower()]
    except KeyError:
        raise ConfigError(f"Unknown decomposition {name!r}; available: {', '.join(sorted(DECOMPOSITIONS))}.") from None


__all__ = ["DECOMPOSITIONS", "Decomposition", "get_decomposition", "uad", "uad_schema"]
