"""Experiments: the versatile-publishing paper's §6 re-run with versapub (top layer, like
the CLI and reports: it drives the API and the release model)."""

from versapub.experiments.findings import Finding, findings
from versapub.experiments.page import write_page
from versapub.experiments.runs import read_runs
from versapub.experiments.versatile import DATASETS, Settings, load_dataset, plan, run_experiment

__all__ = [
    "DATASETS",
    "Finding",
    "Settings",
    "findings",
    "load_dataset",
    "plan",
    "read_runs",
    "run_experiment",
    "write_page",
]
