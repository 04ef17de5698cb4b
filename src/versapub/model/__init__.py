"""Release model and utility: the maximum-entropy estimate of the original table from a
release, COUNT queries, sampling, KL-divergence and workload relative error."""

from versapub.model.maxent import ReleaseModel, junction_tree
from versapub.model.query import Query, count, parse_query
from versapub.model.utility import (
    kl_divergence,
    make_workload,
    original_mismatch,
    projected,
    relative_error,
    utility_summary,
)

__all__ = [
    "Query",
    "ReleaseModel",
    "count",
    "junction_tree",
    "kl_divergence",
    "make_workload",
    "original_mismatch",
    "parse_query",
    "projected",
    "relative_error",
    "utility_summary",
]
