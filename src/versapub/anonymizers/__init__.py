"""Anonymizers: single-rule publishing of one sub-table (Anatomy; more plug in here)."""

from collections.abc import Callable

from versapub.anonymizers.anatomy import Anatomy
from versapub.anonymizers.base import AnonymizedTable, Anonymizer, publish_plain
from versapub.errors import ConfigError

ANONYMIZERS: dict[str, Callable[[], Anonymizer]] = {
    "anatomy": Anatomy,
    "anatomy-wraparound": lambda: Anatomy("wrap-around"),
}


def get_anonymizer(name: str) -> Anonymizer:
    try:
        return ANONYMIZERS[name.lower()]()
    except KeyError:
        raise ConfigError(f"Unknown anonymizer {name!r}; available: {', '.join(sorted(ANONYMIZERS))}.") from None


__all__ = ["ANONYMIZERS", "Anatomy", "AnonymizedTable", "Anonymizer", "get_anonymizer", "publish_plain"]
