"""What the treatments changed, as the verifier sees it from the files and the original
(``check --original``, ``evaluate``, ``risk --original``): each treated column's mean and
variance in the input and as published, the correlation of every pair of treated numeric
columns a file publishes together, and the fewest records the files show changed (a
published count short of the input's).  It needs no record-by-record link between the two,
which the release does not keep; the publisher's record-by-record measures (record linkage,
interval disclosure, IL1s: the manifest's ``perturbation``) are passed through beside them,
labelled as the publisher's.  Written from the format, sharing nothing with
:mod:`versapub.treatments`."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np

from versapub.data.source import Source
from versapub.verify.treatments.perturbation import published_counts

#: The publisher's record-by-record measures passed through (the manifest's ``perturbation``).
CLAIMED = ("record_linkage", "interval_disclosure", "il1s", "correlation", "regression")


def _moments(values: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    n = weights.sum()
    mean = float((values * weights).sum() / n)
    var = float((weights * (values - mean) ** 2).sum() / max(n - 1, 1))
    return mean, var


def _numbers(keys: list[str]) -> np.ndarray | None:
    try:
        x = np.asarray(keys, dtype=np.float64)
    except ValueError:
        return None
    return x if np.isfinite(x).all() else None


def _column(directory: Path, manifest: dict[str, Any], original: Any, c: str, con: Any) -> dict[str, Any] | None:
    counts = published_counts(directory, manifest, [c], con, exact=True)
    if counts is None or c not in original.names:
        return None
    col = original.column(c)
    mine = dict(zip((str(v) for v in col.values), (int(n) for n in col.counts()), strict=True))
    out: dict[str, Any] = {"changed_at_least": sum(max(0, n - counts.get((v,), 0)) for v, n in mine.items())}
    claimed = ((manifest.get("perturbation") or {}).get("columns") or {}).get(c)
    if isinstance(claimed, dict) and isinstance(claimed.get("changed_share"), int | float):
        out["publisher_changed_share"] = float(claimed["changed_share"])  # the same measure, record by record
    pub_x, orig_x = _numbers([k[0] for k in counts]), _numbers(list(mine))
    if pub_x is not None and orig_x is not None:
        m0, v0 = _moments(orig_x, np.array(list(mine.values()), dtype=float))
        m1, v1 = _moments(pub_x, np.array(list(counts.values()), dtype=float))
        out |= {"mean": [round(m0, 6), round(m1, 6)], "variance": [round(v0, 6), round(v1, 6)]}
    return out


def _correlation(directory: Path, manifest: dict[str, Any], original: Any, a: str, b: str, con: Any) -> Any:
    counts = published_counts(directory, manifest, [a, b], con, exact=True)
    if counts is None:
        return None
    pub = _numbers([x for k in counts for x in k])
    if pub is None:
        return None
    pw = np.array(list(counts.values()), dtype=float)
    xa = _numbers(list(original.column(a).values.astype(str)))
    xb = _numbers(list(original.column(b).values.astype(str)))
    if xa is None or xb is None:
        return None

    def corr(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        mx, my = (x * w).sum() / w.sum(), (y * w).sum() / w.sum()
        cov = (w * (x - mx) * (y - my)).sum()
        den = np.sqrt((w * (x - mx) ** 2).sum() * (w * (y - my) ** 2).sum())
        return float(cov / den) if den > 0 else 0.0

    before = corr(xa[original.column(a).codes], xb[original.column(b).codes], np.ones(original.n_rows))
    after = corr(pub[0::2], pub[1::2], pw)
    return {"pair": [a, b], "before": round(before, 4), "after": round(after, 4)}


def perturbation_effect(directory: Path, manifest: dict[str, Any], original: Source, con: Any) -> dict[str, Any] | None:
    """The module's measures of a treated release (None: no treatment, or an original not in
    memory)."""
    records = [r for r in manifest.get("treatments") or [] if isinstance(r, dict)]
    if not records or not hasattr(original, "column"):
        return None
    columns = list(dict.fromkeys(str(c) for r in records for c in r.get("columns") or []))
    out: dict[str, Any] = {"columns": {}, "correlations": []}
    for c in columns:
        got = _column(directory, manifest, original, c, con)
        if got is not None:
            out["columns"][c] = got
    numeric = [c for c in columns if "mean" in out["columns"].get(c, {})]
    for a, b in itertools.combinations(numeric, 2):
        got = _correlation(directory, manifest, original, a, b, con)
        if got is not None:
            out["correlations"].append(got)
    raw = manifest.get("perturbation")
    claimed: dict[str, Any] = raw if isinstance(raw, dict) else {}
    out["publisher"] = {k: claimed[k] for k in CLAIMED if k in claimed}
    return out


def effect_lines(effect: dict[str, Any]) -> list[str]:
    """The measures in sentences (the CLI's check, evaluate and risk)."""
    out = []
    for c, d in effect.get("columns", {}).items():
        text = (
            f"{c}: at least {d['changed_at_least']:,} record(s) published with another value than the input's, as "
            "its distribution in the files against the input's shows"
        )
        if isinstance(d.get("publisher_changed_share"), int | float):  # a swap keeps the distribution: 0 shown
            text += f" ({d['publisher_changed_share']:.1%} of the records, as the publisher counted record by record)"
        if "mean" in d:
            (m0, m1), (v0, v1) = d["mean"], d["variance"]
            text += f"; mean {m0:,.6g} (input) -> {m1:,.6g} (published), variance {v0:,.6g} -> {v1:,.6g}"
        out.append(text)
    for r in effect.get("correlations", []):
        out.append(
            f"correlation of {r['pair'][0]} and {r['pair'][1]}: {r['before']} (input) -> {r['after']} (published)"
        )
    pub = effect.get("publisher") or {}
    if isinstance(pub.get("record_linkage"), dict):
        link = pub["record_linkage"]
        out.append(
            f"as the publisher measured record by record: distance-based record linkage {link.get('share', 0):.1%} "
            f"of {link.get('records', 0):,} records"
            + (
                f", interval disclosure {pub['interval_disclosure'].get('share', 0):.1%}"
                if isinstance(pub.get("interval_disclosure"), dict)
                else ""
            )
            + (f", IL1s {pub['il1s']:.4f}" if isinstance(pub.get("il1s"), int | float) else "")
        )
    return out
