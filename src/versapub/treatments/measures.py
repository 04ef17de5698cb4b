"""What the treatments changed, measured on the input and the treated table record by record
(the publisher holds both; the release does not), as sdcMicro's users read it (Templ,
*Statistical Disclosure Control for Microdata*, 2017, ch. 4 and 5; Hundepool et al., 2012,
§3.5 and §5.3):

* **risk** — *distance-based record linkage* (Domingo-Ferrer & Torra 2001; sdcMicro's
  ``dRisk`` family): the share of treated records whose nearest input record, on the treated
  numeric columns scaled by the input's standard deviations, is their own (a tie shared
  among the records at that distance), with its 95 % Wilson interval, over a sample of at
  most ``SAMPLE`` records; *interval disclosure* (sdcMicro's ``dRisk``): the share of
  records whose input value lies, for every treated numeric column, within ``WIDTH`` of the
  column's standard deviation around its treated value;
* **utility** — *IL1s* (Yancey, Winkler & Creecy 2002): the mean of
  ``|x - x'| / (sqrt(2) sd)`` over the records and treated numeric columns; each column's
  mean and variance before and after; the largest change of a correlation between numeric
  columns; the least-squares coefficients of the first treated numeric column on the other
  numeric columns (at most ``MAX_PREDICTORS``), before and after; a categorical column's
  share of changed records; and per treated column the histogram before and after (the
  report's plots).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.table import EncodedTable
from versapub.privacy.screens.proxy_sets import wilson_low

#: Records whose nearest input record is looked for (a seeded sample above it).
SAMPLE = 5000
#: Interval disclosure's half-width, as a share of the column's standard deviation.
WIDTH = 0.1
#: Other numeric columns the regression uses, at most.
MAX_PREDICTORS = 5
#: Bins of the before/after histograms.
BINS = 20


def _numeric(table: EncodedTable, column: str) -> npt.NDArray[np.float64] | None:
    """Every record's number, or None when a value of the column is not a finite number
    (missing values included: the measures need numbers in every record)."""
    try:
        nums = np.asarray(table.column(column).values, dtype=str).astype(np.float64)
    except ValueError:
        return None
    return nums[table.column(column).codes] if np.isfinite(nums).all() else None


def _interval(hits: float, n: int) -> list[float]:
    low = wilson_low(hits, n, 1.96)
    high = 1 - wilson_low(n - hits, n, 1.96)
    return [round(low, 4), round(high, 4)]


def record_linkage(before: npt.NDArray[np.float64], after: npt.NDArray[np.float64]) -> dict[str, Any]:
    """Distance-based record linkage of ``after``'s records (rows) to ``before``'s: the k-d
    tree holds the input's distinct rows with their multiplicities, so a column of few values
    costs no more than one of many."""
    sd = before.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    b, a = before / scale, after / scale
    n = len(b)
    rows = np.random.default_rng(0).choice(n, SAMPLE, replace=False) if n > SAMPLE else np.arange(n)
    if b.shape[1] == 1:  # one column: the flat unique is far faster than the row-wise one
        flat, weight_of = np.unique(b[:, 0], return_counts=True)
        points = flat[:, None]
    else:
        points, weight_of = np.unique(b, axis=0, return_counts=True)
    from scipy.spatial import cKDTree  # on first use: 0.45 s of every publish's start-up

    tree = cKDTree(points)
    nearest, _ = tree.query(a[rows], k=1)
    own = np.sqrt(((a[rows] - b[rows]) ** 2).sum(axis=1))
    hit = own <= nearest * (1 + 1e-9) + 1e-12
    weight = np.zeros(len(rows))
    if hit.any():
        balls = tree.query_ball_point(a[rows][hit], own[hit] * (1 + 1e-9) + 1e-12)
        ties = np.array([weight_of[ball].sum() for ball in balls], dtype=float)  # records, not distinct rows
        weight[hit] = 1.0 / np.maximum(ties, 1.0)
    share = float(weight.mean()) if len(rows) else 0.0
    return {"share": round(share, 4), "ci": _interval(float(weight.sum()), len(rows)), "records": len(rows)}


def _regression(before: dict[str, np.ndarray], after: dict[str, np.ndarray], y: str) -> dict[str, Any] | None:
    xs = [c for c in before if c != y][:MAX_PREDICTORS]
    if not xs:
        return None

    def fit(d: dict[str, np.ndarray]) -> list[float]:
        design = np.column_stack([np.ones(len(d[y])), *(d[c] for c in xs)])
        return [round(float(v), 6) for v in np.linalg.lstsq(design, d[y], rcond=None)[0]]

    return {"response": y, "predictors": ["(intercept)", *xs], "before": fit(before), "after": fit(after)}


def _histogram(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    lo, hi = float(min(x.min(), y.min())), float(max(x.max(), y.max()))
    edges = np.linspace(lo, hi if hi > lo else lo + 1, BINS + 1)
    return {
        "edges": [float(f"{e:.6g}") for e in edges],
        "before": np.histogram(x, edges)[0].tolist(),
        "after": np.histogram(y, edges)[0].tolist(),
    }


def _categorical(before: EncodedTable, after: EncodedTable, column: str) -> dict[str, Any]:
    ca, cb = before.column(column), after.column(column)
    values = np.union1d(ca.values.astype(str), cb.values.astype(str))
    a = np.searchsorted(values, ca.values.astype(str))[ca.codes]  # every record's value, on one dictionary
    b = np.searchsorted(values, cb.values.astype(str))[cb.codes]
    counts_a = np.bincount(a, minlength=len(values))
    counts_b = np.bincount(b, minlength=len(values))
    top = np.argsort(-counts_a, kind="stable")[:BINS]
    return {
        "kind": "categorical",
        "changed_share": round(float((a != b).mean()), 4),
        "values": [str(values[i]) for i in top],
        "before": counts_a[top].tolist(),
        "after": counts_b[top].tolist(),
    }


def perturbation_measures(before: EncodedTable, after: EncodedTable, columns: list[str]) -> dict[str, Any]:
    """The module's measures of the treated ``columns`` (the manifest's ``perturbation``)."""
    numeric_before: dict[str, np.ndarray] = {}
    numeric_after: dict[str, np.ndarray] = {}
    for c in before.names:
        x, y = _numeric(before, c), _numeric(after, c)
        if x is not None and y is not None:
            numeric_before[c], numeric_after[c] = x, y
    treated = [c for c in columns if c in numeric_before]
    out: dict[str, Any] = {"columns": {}}
    for c in columns:
        if c not in treated:
            out["columns"][c] = _categorical(before, after, c)
            continue
        x, y = numeric_before[c], numeric_after[c]
        out["columns"][c] = {
            "kind": "numeric",
            "changed_share": round(float((x != y).mean()), 4),
            "mean": [float(f"{x.mean():.8g}"), float(f"{y.mean():.8g}")],
            "variance": [float(f"{x.var(ddof=1):.8g}"), float(f"{y.var(ddof=1):.8g}")] if len(x) > 1 else [0.0, 0.0],
            "histogram": _histogram(x, y),
        }
    if not treated:
        return out
    x = np.column_stack([numeric_before[c] for c in treated])
    y = np.column_stack([numeric_after[c] for c in treated])
    sd = x.std(axis=0, ddof=1) if len(x) > 1 else np.ones(len(treated))
    out["il1s"] = round(float((np.abs(x - y) / (math.sqrt(2) * np.where(sd > 0, sd, 1.0))).mean()), 6)
    out["record_linkage"] = record_linkage(x, y)
    inside = (np.abs(x - y) <= WIDTH * np.where(sd > 0, sd, 0.0)).all(axis=1)
    out["interval_disclosure"] = {"share": round(float(inside.mean()), 4), "width_sd": WIDTH}
    names = list(numeric_before)
    if len(names) > 1 and len(x) > 2:
        with np.errstate(invalid="ignore", divide="ignore"):
            cb = np.corrcoef(np.column_stack([numeric_before[c] for c in names]), rowvar=False)
            ca = np.corrcoef(np.column_stack([numeric_after[c] for c in names]), rowvar=False)
        diff = np.nan_to_num(np.abs(cb - ca))
        i, j = np.unravel_index(int(np.argmax(diff)), diff.shape)
        out["correlation"] = {
            "largest_change": round(float(diff[i, j]), 4),
            "pair": [names[i], names[j]],
            "before": round(float(np.nan_to_num(cb[i, j])), 4),
            "after": round(float(np.nan_to_num(ca[i, j])), 4),
        }
    reg = _regression(numeric_before, numeric_after, treated[0])
    if reg is not None:
        out["regression"] = reg
    return out
