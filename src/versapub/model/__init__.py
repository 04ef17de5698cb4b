"""Release model and utility: the maximum-entropy estimate of the original table from a
release, COUNT queries with the range the release allows, sampling, KL-divergence and
workload relative error."""

from versapub.model.bounds import count_bounds, query_formula, workload_bounds
from versapub.model.interval import Bound
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
    "Bound",
    "Query",
    "ReleaseModel",
    "count",
    "count_bounds",
    "junction_tree",
    "kl_divergence",
    "make_workload",
    "original_mismatch",
    "parse_query",
    "projected",
    "query_formula",
    "relative_error",
    "utility_summary",
    "workload_bounds",
]
