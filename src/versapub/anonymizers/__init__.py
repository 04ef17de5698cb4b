"""Anonymizers: publishing one sub-table under its rule(s) (Anatomy, multi-SA, Mondrian, Incognito,
the MSA decomposition, Sequential Sweep, 1-D l-diversity; more plug in here).

Registered by name; :func:`make_anonymizer` builds one with its parameters
(``make_anonymizer("anatomy", grouping="wrap-around")``).  Each anonymizer's module is imported
when it is first named (:class:`~versapub.plugins.LazyRegistry`), so reading a release never
loads them.
"""

from collections.abc import Callable, Mapping
from typing import Any

from versapub.anonymizers.base import AnonymizedTable, Anonymizer, publish_plain
from versapub.plugins import LazyRegistry, build

ANONYMIZERS: Mapping[str, Callable[..., Anonymizer]] = LazyRegistry(
    {
        "anatomy": "versapub.anonymizers.bucketizing.anatomy:Anatomy",
        "multi-sa": "versapub.anonymizers.bucketizing.multi_sa:MultiSAAnatomy",
        "mondrian": "versapub.anonymizers.generalizing.mondrian:Mondrian",
        "incognito": "versapub.anonymizers.generalizing.incognito:Incognito",
        "msa-decomposition": "versapub.anonymizers.bucketizing.msa_decomposition:MSADecomposition",
        "sequential-sweep": "versapub.anonymizers.generalizing.sequential_sweep:SequentialSweep",
        "one-d-l-diversity": "versapub.anonymizers.generalizing.one_d:OneDLDiversity",
    }
)
#: Other names: a registered anonymizer with fixed parameters.
ALIASES: dict[str, tuple[str, Mapping[str, Any]]] = {"anatomy-wraparound": ("anatomy", {"grouping": "wrap-around"})}
#: The classes by their Python names (``from versapub.anonymizers import Mondrian``).
_CLASSES = {
    "Anatomy": "anatomy",
    "MultiSAAnatomy": "multi-sa",
    "Mondrian": "mondrian",
    "Incognito": "incognito",
    "MSADecomposition": "msa-decomposition",
    "SequentialSweep": "sequential-sweep",
    "OneDLDiversity": "one-d-l-diversity",
}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return ANONYMIZERS[_CLASSES[name]]
    raise AttributeError(f"module 'versapub.anonymizers' has no attribute {name!r}")


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
