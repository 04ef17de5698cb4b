"""Data model: encoded tables, missing-value policy, hierarchies, group-by."""

from versapub.data.groupby import Grouping, group_rows
from versapub.data.hierarchy import Hierarchy
from versapub.data.missing import MissingPolicy
from versapub.data.table import Column, EncodedTable, encode_values

__all__ = [
    "Column",
    "EncodedTable",
    "Grouping",
    "Hierarchy",
    "MissingPolicy",
    "encode_values",
    "group_rows",
]
