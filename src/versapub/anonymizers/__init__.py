"""Anonymizers: publishing one sub-table under its rule(s) (Anatomy, multi-SA, Mondrian, Incognito,
the MSA decomposition, Sequential Sweep, 1-D l-diversity; more plug in here).

Registered by name; :func:`make_anonymizer` builds one with its parameters
(``make_anonymizer("anatomy", grouping="wrap-around")``).
"""

from collections.abc import Callable, Mapping
from typing import Any

from versapub.anonymizers.base import AnonymizedTable, Anonymizer, publish_plain
from versapub.anonymizers.bucketizing.anatomy import Anatomy
from versapub.anonymizers.bucketizing.msa_decomposition import MSADecomposition
from versapub.anonymizers.bucketizing.multi_sa import MultiSAAnatomy
from versapub.anonymizers.generalizing.incognito import Incognito
from versapub.anonymizers.generalizing.mondrian import Mondrian
from versapub.anonymizers.generalizing.one_d import OneDLDiversity
from versapub.anonymizers.generalizing.sequential_sweep import SequentialSweep
from versapub.plugins import build

ANONYMIZERS: dict[str, Callable[..., Anonymizer]] = {
    "anatomy": Anatomy,
    "multi-sa": MultiSAAnatomy,
    "mondrian": Mondrian,
    "incognito": Incognito,
    "msa-decomposition": MSADecomposition,
    "sequential-sweep": SequentialSweep,
    "one-d-l-diversity": OneDLDiversity,
}
#: Other names: a registered anonymizer with fixed parameters.
ALIASES: dict[str, tuple[str, Mapping[str, Any]]] = {"anatomy-wraparound": ("anatomy", {"grouping": "wrap-around"})}


def make_anonymizer(name: str, **params: Any) -> Anonymizer:
    """The registered anonymizer ``name`` built with ``params`` (a clear error lists the
    valid names or parameters)."""
    return build("anonymizer", ANONYMIZERS, name, params, ALIASES)


def get_anonymizer(name: str) -> Anonymizer:
    """``make_anonymizer(name)`` with default parameters."""
    return make_anonymizer(name)


__all__ = [
    "ALIASES",
    "ANONYMIZERS",
    "Anatomy",
    "AnonymizedTable",
    "Anonymizer",
    "Incognito",
    "MSADecomposition",
    "Mondrian",
    "MultiSAAnatomy",
    "OneDLDiversity",
    "SequentialSweep",
    "get_anonymizer",
    "make_anonymizer",
    "publish_plain",
]
