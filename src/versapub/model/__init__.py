"""Release model and utility: the maximum-entropy estimate of the original table from a
release, COUNT queries, sampling, KL-divergence and workload relative error."""

from versapub.model.build import model_from_release
from versapub.model.maxent import ReleaseModel, junction_tree
from versapub.model.predicate import parse_predicate
from versapub.model.utility import kl_divergence, make_workload, relative_error, utility_summary

__all__ = [
    "ReleaseModel",
    "junction_tree",
    "kl_divergence",
    "make_workload",
    "model_from_release",
    "parse_predicate",
    "relative_error",
    "utility_summary",
]
