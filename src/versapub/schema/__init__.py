"""Schema layer: sub-tables, reachability (Def. 3), guardian tables (Def. 4), GNF (Def. 5)."""

from versapub.schema.gnf import GNFVerdict, RuleVerdict, check_gnf, require_gnf
from versapub.schema.model import Schema, SubTable
from versapub.schema.reachability import components, reachable_from, shortest_path

__all__ = [
    "GNFVerdict",
    "RuleVerdict",
    "Schema",
    "SubTable",
    "check_gnf",
    "components",
    "reachable_from",
    "require_gnf",
    "shortest_path",
]
