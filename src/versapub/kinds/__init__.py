"""Table kinds as registered plug-ins (see :mod:`versapub.kinds.base`).

Adding a kind: a module here that implements :class:`~versapub.kinds.base.TableKind` and
calls :func:`~versapub.kinds.base.register`, imported below; its entry in the independent
verifier's own kind table (``verify/kind_checks.py``: ``KIND_CHECKS``); its section of
``docs/release-format.md``; a table of the kind in the conformance catalog (tests).
"""

from versapub.kinds import anatomy, generalized, plain, sa_groups
from versapub.kinds.base import (
    KINDS,
    CountRows,
    Entry,
    TableKind,
    TablePart,
    View,
    entry_of,
    get_kind,
    parse_entry,
    product_parts,
    register,
)

__all__ = [
    "KINDS",
    "CountRows",
    "Entry",
    "TableKind",
    "TablePart",
    "View",
    "anatomy",
    "entry_of",
    "generalized",
    "get_kind",
    "parse_entry",
    "plain",
    "product_parts",
    "register",
    "sa_groups",
]
