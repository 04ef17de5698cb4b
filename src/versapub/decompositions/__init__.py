"""Decompositions of a table into sub-tables (UAD; GD and the baselines plug in here)."""

from versapub.decompositions.base import Decomposition
from versapub.decompositions.gd import AddBackStep, add_back, gd_initial, guardian_decomposition
from versapub.decompositions.multi_sa import multi_sa
from versapub.decompositions.single import single_attribute
from versapub.decompositions.uad import uad, uad_schema
from versapub.errors import ConfigError

DECOMPOSITIONS: dict[str, Decomposition] = {
    "uad": uad,
    "gd": gd_initial,
    "single-attribute": single_attribute,
    "multi-sa": multi_sa,
}


def get_decomposition(name: str) -> Decomposition:
    try:
        return DECOMPOSITIONS[name.lower()]
    except KeyError:
        raise ConfigError(f"Unknown decomposition {name!r}; available: {', '.join(sorted(DECOMPOSITIONS))}.") from None


__all__ = [
    "DECOMPOSITIONS",
    "AddBackStep",
    "Decomposition",
    "add_back",
    "get_decomposition",
    "guardian_decomposition",
    "multi_sa",
    "single_attribute",
    "uad",
    "uad_schema",
]
