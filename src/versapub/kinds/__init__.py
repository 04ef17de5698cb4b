"""Table kinds as registered plug-ins (see :mod:`versapub.kinds.base`).

Adding a kind: a module here that implements :class:`~versapub.kinds.base.TableKind` and
calls :func:`~versapub.kinds.base.register`, imported below; its check in the independent
verifier (``verify/release_check.py``); its section of ``docs/release-format.md``; tests.
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
    "register",
    "sa_groups",
]
