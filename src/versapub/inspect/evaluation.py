"""``evaluate``: the utility of a release against its original."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from versapub.formats import read_manifest

if TYPE_CHECKING:
    from versapub.model.utility import KLResult, RelativeError

#: ``progress(description, completed, total)``; ``total`` 0 means the size is unknown.
Progress = Callable[[str, int, int], None]


def _silent(description: str, completed: int, total: int) -> None:
    del description, completed, total


@dataclass(frozen=True)
class Evaluation:
    """What ``versapub evaluate`` prints: :meth:`to_dict` is its ``--json``."""

    release: str
    n_records: int
    kl: KLResult
    relative_error: RelativeError
    workload: dict[str, Any]
    #: Per attribute, the largest |P_published(v) - P_original(v)| (0: a faithful release).
    marginal_error: dict[str, float]
    #: The classic metrics per table with groups (discernibility, average class size, ...).
    metrics: dict[str, dict[str, Any]]
    #: The functional-diversity paper's measures per generalized table.
    functional: dict[str, dict[str, Any]]
    model_path: str
    original_mismatch: tuple[str, ...] = ()
    timings_s: dict[str, float] = field(default_factory=dict)
    #: A treated release: what the treatments changed, from the files and the original
    #: (:func:`versapub.verify.treatments.perturbation_effect.perturbation_effect`).
    perturbation: dict[str, Any] | None = None
    #: Per PRAM'd column: the largest marginal error as published and once corrected by the
    #: published matrix (``T* P^-1``; the workload above is not corrected).
    pram: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The workload's ranges over the tables consistent with the release
    #: (:func:`versapub.model.utility.range_summary`).
    ranges: dict[str, Any] = field(default_factory=dict)
    #: Per attribute, its most frequent values' shares in the original and in the release's
    #: model (:func:`versapub.model.utility.marginal_shares`).
    distributions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def kl_divergence(self) -> float:
        return self.kl.value

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.kl.to_json(),
            "relative_error": self.relative_error.to_json(),
            "ranges": self.ranges,
            "workload": self.workload,
            "marginal_error": self.marginal_error,
            "metrics": self.metrics,
            "functional": self.functional,
            "model_path": self.model_path,
            "original_mismatch": list(self.original_mismatch),
            "perturbation": self.perturbation,
            "pram": self.pram,
            "distributions": self.distributions,
            "timings_s": self.timings_s,
        }


def evaluate(
    release: str | Path,
    original: str | Path | None = None,
    *,
    missing: str | None = None,
    n_queries: int = 1000,
    qd: int | None = None,
    p: float = 0.4,
    seed: int = 1,
    progress: Progress = _silent,
    within: Path | None = None,
) -> Evaluation:
    """Utility of a release: KL-divergence to the original (Equation 3), relative error of a
    seeded random COUNT workload (``n_queries`` queries over ``qd`` attributes, default 3 or
    all if fewer, each predicate a fraction ``p`` of a domain), per-attribute marginal error,
    the classic metrics, and for generalized tables the functional-diversity paper's
    measures. ``original``: a data file or TOML config (default: the input the manifest
    records, if unchanged; ``within``: looked for only inside that folder)."""
    d = Path(release)
    read_manifest(d)  # not a release: one paragraph, before the engines load
    from versapub.inspect.original import original_table
    from versapub.kinds.load import load_release
    from versapub.model import kl_divergence, make_workload, relative_error
    from versapub.model.utility import marginal_errors, marginal_shares, range_summary, workload_masks
    from versapub.reports.file_metrics import file_functional_measures, file_metrics

    progress("loading the release", 0, 0)
    t0 = time.perf_counter()
    model = load_release(d)
    orig = original_table(d, original, missing, model, within=within)
    table = orig.table
    load_s = time.perf_counter() - t0
    progress("KL-divergence", 0, 0)
    kl = kl_divergence(model, table)
    progress(f"{n_queries} COUNT queries", 0, 0)
    qd = qd if qd is not None else min(3, len(table.names))
    w = make_workload(table, n_queries, qd, p, seed)
    re_ = relative_error(model, table, w)
    progress(f"the range each of the {n_queries} queries can take", 0, 0)
    t_ranges = time.perf_counter()
    ranges = range_summary(model, workload_masks(model, table, w), w.actual, re_.estimates)
    ranges_s = time.perf_counter() - t_ranges
    marg = marginal_errors(model, table)
    metrics = file_metrics(d)
    progress("the functional-diversity paper's measures", 0, 0)
    functional = file_functional_measures(d, table, seed)
    return Evaluation(
        release=str(d),
        n_records=model.n,
        kl=kl,
        relative_error=re_,
        workload={"n_queries": n_queries, "qd": qd, "p": p, "seed": seed},
        marginal_error=marg,
        metrics=metrics,
        functional=functional,
        model_path=model.path,
        original_mismatch=orig.mismatch,
        perturbation=_effect(d, table),
        pram=_pram_errors(d, model, table),
        ranges=ranges,
        distributions=marginal_shares(model, table),
        timings_s={
            "load": round(load_s, 4),
            "kl": round(kl.seconds, 4),
            "queries": round(re_.seconds, 4),
            "ranges": round(ranges_s, 4),
        },
    )


def _effect(d: Path, table: Any) -> dict[str, Any] | None:
    """What a treated release's treatments changed (None without treatments)."""
    import json

    from versapub.data.sql import connect
    from versapub.verify.treatments.perturbation_effect import perturbation_effect

    raw = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    if not raw.get("treatments"):
        return None
    with connect() as con:
        return perturbation_effect(d, raw, table, con)


def _pram_errors(d: Path, model: Any, table: Any) -> dict[str, dict[str, float]]:
    """Per PRAM'd column the model publishes: the largest |P(v) - P_original(v)| as
    published and corrected by the manifest's matrix."""
    import json

    import numpy as np

    from versapub.inspect.querying import pram_corrections

    out: dict[str, dict[str, float]] = {}
    raw = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    for a, (names, p) in pram_corrections(raw).items():
        if a not in model.domains or a not in table.names:
            continue
        index = {v: i for i, v in enumerate(names)}
        m = model.marginal((a,))
        published = np.zeros(len(names))
        for code, prob in zip(m.codes[0], m.values, strict=True):
            value = str(model.domains[a][code])
            if value not in index:
                break
            published[index[value]] += prob
        else:
            original = np.zeros(len(names))
            col = table.column(a)
            for v, c in zip(col.values, col.counts(), strict=True):
                if str(v) in index:
                    original[index[str(v)]] += c / table.n_rows
            fixed = published @ np.linalg.pinv(p)
            out[a] = {
                "published": round(float(np.abs(published - original).max()), 6),
                "corrected": round(float(np.abs(fixed - original).max()), 6),
            }
    return out
