"""Table kinds as registered plug-ins (see :mod:`versapub.kinds.base`).

Adding a kind: a module here that implements :class:`~versapub.kinds.base.TableKind` and
calls :func:`~versapub.kinds.base.register`, named in ``KIND_MODULES`` (the module is imported
when a release first names the kind); its entry in the independent
verifier's own kind table (``verify/reading/kind_checks.py``: ``KIND_CHECKS``); its section of
``docs/release-format.md``; a table of the kind in the conformance catalog (tests).
"""

from typing import Any

from versapub.kinds.base import (
    KIND_MODULES,
    CountRows,
    Entry,
    TableKind,
    TablePart,
    View,
    all_kinds,
    entry_of,
    get_kind,
    parse_entry,
    product_parts,
    register,
)


def __getattr__(name: str) -> Any:
    if name == "KINDS":  # every kind, loaded
        return all_kinds()
    raise AttributeError(f"module 'versapub.kinds' has no attribute {name!r}")


__all__ = [
    "KINDS",
    "KIND_MODULES",
    "CountRows",
    "Entry",
    "TableKind",
    "TablePart",
    "View",
    "all_kinds",
    "entry_of",
    "get_kind",
    "parse_entry",
    "product_parts",
    "register",
]
