"""What the treatments changed (the manifest's ``perturbation``, measured by
:mod:`versapub.treatments.measures`), in sentences for the summary, the report and the web
page."""

from __future__ import annotations

from typing import Any


def _pct(x: Any) -> str:
    return f"{float(x):.1%}" if isinstance(x, int | float) else "?"


def perturbation_text(p: dict[str, Any]) -> list[str]:
    """One sentence for risk, one for utility, one per treated column."""
    out: list[str] = []
    link, interval = p.get("record_linkage"), p.get("interval_disclosure")
    if isinstance(link, dict):
        ci = link.get("ci") or [0, 0]
        out.append(
            f"After the treatments, distance-based record linkage finds a record's own input record as its nearest "
            f"for {_pct(link.get('share'))} of {link.get('records', 0):,} records (95 % interval "
            f"{_pct(ci[0])}-{_pct(ci[1])})"
            + (
                f"; {_pct(interval.get('share'))} of the records lie within {interval.get('width_sd')} standard "
                "deviations of their input values in every treated numeric column (interval disclosure)"
                if isinstance(interval, dict)
                else ""
            )
            + "."
        )
    parts = []
    if isinstance(p.get("il1s"), int | float):
        parts.append(f"information loss IL1s {p['il1s']:.4f}")
    corr = p.get("correlation")
    if isinstance(corr, dict):
        pair = " and ".join(str(c) for c in corr.get("pair") or [])
        parts.append(
            f"the largest change of a correlation {corr.get('largest_change')} ({pair}: {corr.get('before')} -> "
            f"{corr.get('after')})"
        )
    if parts:
        out.append("Utility after the treatments: " + "; ".join(parts) + ".")
    for c, d in (p.get("columns") or {}).items():
        if not isinstance(d, dict):
            continue
        if d.get("kind") == "numeric" and len(d.get("mean") or []) == 2 and len(d.get("variance") or []) == 2:
            (m0, m1), (v0, v1) = d["mean"], d["variance"]
            out.append(
                f"{c}: {_pct(d.get('changed_share'))} of records published with another value than the input's "
                f"(after every treatment; each treatment's own count is in its note); mean {m0:g} -> {m1:g}, "
                f"variance {v0:g} -> {v1:g}."
            )
        else:
            out.append(
                f"{c}: {_pct(d.get('changed_share'))} of records published with another value than the input's "
                "(after every treatment; each treatment's own count is in its note)."
            )
    return out
