"""The report's drawings, as inline SVG (no scripts, nothing fetched): bar charts, the
KL-divergence on a scale, the attribute graph with each table drawn through its attributes."""

from __future__ import annotations

import html
import math
from typing import Any

from versapub.privacy.rules import Rule

_COLOURS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
]


def _e(x: object) -> str:
    return html.escape(str(x))


def bars(data: list[tuple[str, float]], xlabel: str, ylabel: str, width: int = 520, height: int = 160) -> str:
    """A bar chart with both axes drawn and labelled (ticks on the y-axis, categories on x)."""
    if not data:
        return ""
    left, bottom, top_pad = 56, 44, 12
    top = max(v for _, v in data) or 1.0
    plot_w = width - left - 10
    bw = min(plot_w / len(data), 60.0)
    total_h = height + bottom + top_pad
    parts = [
        f'<svg class="chart" role="img" aria-label="{_e(ylabel)} by {_e(xlabel)}" width="{width}" '
        f'height="{total_h}" viewBox="0 0 {width} {total_h}">'
    ]
    y0 = top_pad + height
    parts.append(f'<line class="axis y-axis" x1="{left}" y1="{top_pad}" x2="{left}" y2="{y0}" stroke="#333"/>')
    parts.append(f'<line class="axis x-axis" x1="{left}" y1="{y0}" x2="{left + plot_w}" y2="{y0}" stroke="#333"/>')
    for frac in (0.0, 0.5, 1.0):
        y = y0 - height * frac
        parts.append(
            f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#333"/>'
            f'<text x="{left - 7}" y="{y + 3:.1f}" font-size="10" text-anchor="end">{top * frac:.3g}</text>'
        )
    for i, (k, v) in enumerate(data):
        h = height * v / top
        x = left + i * bw
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{y0 - h:.1f}" width="{max(bw - 2, 1):.1f}" height="{h:.1f}" '
            f'fill="#1f77b4"><title>{_e(xlabel)} {_e(k)}: {v:g} {_e(ylabel)}</title></rect>'
        )
        if len(data) <= 12 or i % max(1, len(data) // 8) == 0:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{y0 + 13}" font-size="10" text-anchor="middle">{_e(k)}</text>')
    parts.append(
        f'<text class="x-label" x="{left + plot_w / 2:.1f}" y="{y0 + 32}" font-size="11" '
        f'text-anchor="middle">{_e(xlabel)}</text>'
    )
    parts.append(
        f'<text class="y-label" x="12" y="{top_pad + height / 2:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {top_pad + height / 2:.1f})">{_e(ylabel)}</text></svg>'
    )
    return "".join(parts)


def kl_scale(kl: float, reference: float | None) -> str:
    """The release's KL-divergence on a scale from 0 (the original itself) to the KL of
    publishing every attribute alone, both labelled, with the axis in nats."""
    ref = reference if reference is not None and reference > 0 else max(kl, 1e-9)
    top = max(kl, ref) * 1.1
    w, left, plot_w = 560, 10, 520

    def x(v: float) -> float:
        return left + plot_w * v / top

    out = [
        f'<svg class="chart" id="kl-scale" role="img" aria-label="KL-divergence scale" width="{w}" height="86" '
        f'viewBox="0 0 {w} 86">',
        f'<line class="axis x-axis" x1="{left}" y1="40" x2="{left + plot_w}" y2="40" stroke="#333"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        v = top * frac
        out.append(
            f'<line x1="{x(v):.1f}" y1="40" x2="{x(v):.1f}" y2="45" stroke="#333"/>'
            f'<text x="{x(v):.1f}" y="56" font-size="10" text-anchor="middle">{v:.3g}</text>'
        )
    out.append(
        f'<rect x="{left}" y="26" width="{x(kl) - left:.1f}" height="14" fill="#1f77b4">'
        f"<title>this release: {kl:.4f}</title></rect>"
        f'<text x="{x(kl):.1f}" y="20" font-size="11" text-anchor="middle">this release {kl:.3f}</text>'
    )
    if reference is not None:
        out.append(
            f'<line x1="{x(reference):.1f}" y1="22" x2="{x(reference):.1f}" y2="44" stroke="#c62828" '
            f'stroke-width="2"/><text x="{x(reference):.1f}" y="12" font-size="11" fill="#c62828" '
            f'text-anchor="middle">every attribute alone {reference:.3f}</text>'
        )
    out.append(
        f'<text class="x-label" x="{left + plot_w / 2}" y="76" font-size="11" text-anchor="middle">'
        "KL-divergence from the original (nats; 0 = the original itself, lower is better)</text></svg>"
    )
    return "".join(out)


def graph(attrs: list[str], rules: list[Rule], tables: list[dict[str, Any]], guardians: set[str]) -> str:
    """Attributes on a circle; rule edges as grey arrows (LHS -> RHS); every table as a
    coloured polygon through its attributes; guardian tables drawn with a thicker outline."""
    w, h = 760, 520
    cx, cy, rad = w / 2, h / 2 - 10, min(w, h) / 2 - 90
    pos = {
        a: (
            cx + rad * math.cos(2 * math.pi * i / len(attrs) - math.pi / 2),
            cy + rad * math.sin(2 * math.pi * i / len(attrs) - math.pi / 2),
        )
        for i, a in enumerate(attrs)
    }
    out = [
        f'<svg id="attribute-graph" role="img" aria-label="attribute graph" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
        'fill="#888"/></marker></defs>'
    ]
    for i, t in enumerate(tables):
        col = _COLOURS[i % len(_COLOURS)]
        pts = [pos[a] for a in t["attributes"] if a in pos]
        thick = 5 if t["name"] in guardians else 2.5
        if len(pts) == 1:
            x, y = pts[0]
            out.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{24 + 4 * i}" fill="none" stroke="{col}" '
                f'stroke-width="{thick}" opacity=".8"/>'
            )
        else:
            p = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            out.append(
                f'<polygon points="{p}" fill="{col}" fill-opacity=".08" stroke="{col}" '
                f'stroke-width="{thick}" stroke-linejoin="round" opacity=".85"/>'
            )
    for r in rules:
        for q in r.lhs:
            if q in pos and r.rhs in pos:
                (x1, y1), (x2, y2) = pos[q], pos[r.rhs]
                dx, dy = x2 - x1, y2 - y1
                d = math.hypot(dx, dy) or 1
                out.append(
                    f'<line x1="{x1 + dx / d * 16:.1f}" y1="{y1 + dy / d * 16:.1f}" x2="{x2 - dx / d * 18:.1f}" '
                    f'y2="{y2 - dy / d * 18:.1f}" stroke="#888" stroke-dasharray="5,4" '
                    f'marker-end="url(#arrow)"><title>{_e(str(r))}</title></line>'
                )
    for a, (x, y) in pos.items():
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="15" fill="#fff" stroke="#333" stroke-width="1.5"/>'
            f'<text x="{x:.1f}" y="{y - 22:.1f}" font-size="13" text-anchor="middle">{_e(a)}</text>'
        )
    out.append(
        f'<text x="{w - 10}" y="{h - 8}" font-size="12" text-anchor="end" fill="#666">'
        "dashed arrows: rules (left-hand side → sensitive attribute)</text></svg>"
    )
    legend = ['<ul class="legend">']
    for i, t in enumerate(tables):
        col = _COLOURS[i % len(_COLOURS)]
        mark = " ★ guardian" if t["name"] in guardians else ""
        legend.append(
            f'<li><span class="swatch" style="background:{col}"></span>{_e(t["name"])} '
            f"({_e(t['kind'])}){mark}: {_e(', '.join(t['attributes']))}</li>"
        )
    out.append("".join(legend) + "</ul>")
    return "".join(out)


def attack_bars(rows: list[tuple[str, float, float, tuple[float, float], float | None]], width: int = 620) -> str:
    """Each attack's success rate (a bar with its 95 % interval as a whisker) beside its
    baseline (a grey bar), and the guarantee's bound where there is one (a red tick): rows of
    (label, rate, baseline, (low, high), bound)."""
    if not rows:
        return ""
    left, row_h, pad = 230, 22, 26
    plot_w = width - left - 20
    height = pad + row_h * len(rows) + 46
    parts = [
        f'<svg class="chart" role="img" aria-label="attack success against the baseline" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">',
        f'<line class="axis x-axis" x1="{left}" y1="{pad - 4}" x2="{left + plot_w}" y2="{pad - 4}" stroke="#333"/>',
        f'<text class="x-label" x="{left + plot_w / 2:.1f}" y="{height - 24}" font-size="11" '
        'text-anchor="middle">share of targets (inference, linkability) or attacks (singling out) that succeed</text>',
        f'<line class="axis y-axis" x1="{left}" y1="{pad - 4}" x2="{left}" y2="{height - 40}" stroke="#333"/>',
        f'<text class="y-label" x="12" y="{pad - 8}" font-size="11">attack</text>',
    ]
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot_w * frac
        parts.append(
            f'<line x1="{x:.1f}" y1="{pad - 4}" x2="{x:.1f}" y2="{height - 40}" stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{pad - 8}" font-size="10" text-anchor="middle">{frac:.0%}</text>'
        )
    for i, (label, rate, base, (lo, hi), bound) in enumerate(rows):
        y = pad + i * row_h
        parts.append(f'<text x="{left - 6}" y="{y + 14}" font-size="11" text-anchor="end">{_e(label)}</text>')
        parts.append(
            f'<rect x="{left}" y="{y + 2}" width="{plot_w * base:.1f}" height="7" fill="#bbb">'
            f"<title>baseline {base:.1%}</title></rect>"
            f'<rect x="{left}" y="{y + 10}" width="{plot_w * rate:.1f}" height="9" fill="#1f77b4">'
            f"<title>{_e(label)}: {rate:.1%} [{lo:.1%}, {hi:.1%}]</title></rect>"
            f'<line x1="{left + plot_w * lo:.1f}" y1="{y + 14.5}" x2="{left + plot_w * hi:.1f}" y2="{y + 14.5}" '
            'stroke="#000"/>'
        )
        if bound is not None and bound < 1:
            bx = left + plot_w * bound
            parts.append(
                f'<line x1="{bx:.1f}" y1="{y}" x2="{bx:.1f}" y2="{y + 21}" stroke="#c00" stroke-width="2">'
                f"<title>the guarantee allows {bound:.1%}</title></line>"
            )
    parts.append(
        f'<text x="{left}" y="{height - 8}" font-size="10">blue: attack (95 % interval), grey: baseline, '
        "red: what the rule's guarantee allows</text></svg>"
    )
    return "".join(parts)


def before_after(
    labels: list[str],
    before: list[float],
    after: list[float],
    xlabel: str,
    width: int = 620,
    names: tuple[str, str] = ("input", "treated"),
    unit: str = "records",
) -> str:
    """Paired bars per label — the input's (grey) and the treated table's (blue; ``names``
    say what the two are) — with both axes drawn and a legend: a treated column's histogram
    or its values' counts, or an attribute's shares in the input and the release's model."""
    if not labels:
        return ""
    left, bottom, top_pad, height = 56, 44, 22, 150
    top = max([*before, *after]) or 1.0
    plot_w = width - left - 10
    slot = plot_w / len(labels)
    bw = min(slot / 2 - 1, 24.0)
    total_h = height + bottom + top_pad
    y0 = top_pad + height
    parts = [
        f'<svg class="chart" role="img" aria-label="{_e(unit)} by {_e(xlabel)}: {_e(names[0])} and {_e(names[1])}" '
        f'width="{width}" height="{total_h}" viewBox="0 0 {width} {total_h}">',
        f'<line class="axis y-axis" x1="{left}" y1="{top_pad}" x2="{left}" y2="{y0}" stroke="#333"/>',
        f'<line class="axis x-axis" x1="{left}" y1="{y0}" x2="{left + plot_w}" y2="{y0}" stroke="#333"/>',
        f'<rect x="{left + 8}" y="4" width="10" height="10" fill="#aaa"/><text x="{left + 22}" y="13" '
        f'font-size="10">{_e(names[0])}</text>',
        f'<rect x="{left + 22 + 7 * len(names[0]) + 12}" y="4" width="10" height="10" fill="#1f77b4"/>'
        f'<text x="{left + 22 + 7 * len(names[0]) + 26}" y="13" font-size="10">{_e(names[1])}</text>',
    ]
    for frac in (0.0, 0.5, 1.0):
        y = y0 - height * frac
        parts.append(
            f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#333"/>'
            f'<text x="{left - 7}" y="{y + 3:.1f}" font-size="10" text-anchor="end">{top * frac:.3g}</text>'
        )
    for i, (k, b, a) in enumerate(zip(labels, before, after, strict=True)):
        x = left + i * slot + (slot - 2 * bw) / 2
        for j, (v, colour, what) in enumerate(((b, "#aaa", names[0]), (a, "#1f77b4", names[1]))):
            h = height * v / top
            parts.append(
                f'<rect x="{x + j * bw:.1f}" y="{y0 - h:.1f}" width="{max(bw - 1, 1):.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>{_e(xlabel)} {_e(k)}: {v:g} {_e(unit)} ({_e(what)})</title></rect>'
            )
        if len(labels) <= 10 or i % max(1, len(labels) // 6) == 0:
            parts.append(
                f'<text x="{left + i * slot + slot / 2:.1f}" y="{y0 + 13}" font-size="10" '
                f'text-anchor="middle">{_e(k)}</text>'
            )
    parts.append(
        f'<text class="x-label" x="{left + plot_w / 2:.1f}" y="{y0 + 32}" font-size="11" '
        f'text-anchor="middle">{_e(xlabel)}</text>'
        f'<text class="y-label" x="12" y="{top_pad + height / 2:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {top_pad + height / 2:.1f})">{_e(unit)}</text></svg>'
    )
    return "".join(parts)


def ranges(rows: list[tuple[str, float, float, float, float | None]], width: int = 620) -> str:
    """Each query's range over the tables consistent with the release (a grey bar), its
    estimate (a blue dot) and, with the original, its true count (a red tick): rows of
    (label, estimate, lower, upper, actual)."""
    if not rows:
        return ""
    left, row_h, pad = 60, 22, 26
    plot_w = width - left - 20
    height = pad + row_h * len(rows) + 40
    top = max(max(r[3] for r in rows), max((r[4] or 0.0) for r in rows), 1.0)
    parts = [
        f'<svg class="chart" role="img" aria-label="ranges of the widest queries" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">',
        f'<line class="axis x-axis" x1="{left}" y1="{pad - 4}" x2="{left + plot_w}" y2="{pad - 4}" stroke="#333"/>',
        f'<line class="axis y-axis" x1="{left}" y1="{pad - 4}" x2="{left}" y2="{height - 34}" stroke="#333"/>',
        f'<text class="y-label" x="4" y="{pad - 8}" font-size="11">query</text>',
        f'<text class="x-label" x="{left + plot_w / 2:.1f}" y="{height - 20}" font-size="11" '
        'text-anchor="middle">count of records</text>',
    ]
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot_w * frac
        parts.append(
            f'<line x1="{x:.1f}" y1="{pad - 4}" x2="{x:.1f}" y2="{height - 34}" stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{pad - 8}" font-size="10" text-anchor="middle">{top * frac:,.0f}</text>'
        )
    for i, (label, est, lo, hi, act) in enumerate(rows):
        y = pad + i * row_h
        x0, x1 = left + plot_w * lo / top, left + plot_w * hi / top
        parts.append(f'<text x="{left - 6}" y="{y + 14}" font-size="11" text-anchor="end">{_e(label)}</text>')
        parts.append(
            f'<rect x="{x0:.1f}" y="{y + 5}" width="{max(x1 - x0, 1.0):.1f}" height="10" fill="#ccc">'
            f"<title>{_e(label)}: any consistent table holds {lo:,.0f} to {hi:,.0f}</title></rect>"
            f'<circle cx="{left + plot_w * est / top:.1f}" cy="{y + 10}" r="4" fill="#1f77b4">'
            f"<title>estimate {est:,.1f}</title></circle>"
        )
        if act is not None:
            ax = left + plot_w * act / top
            parts.append(
                f'<line x1="{ax:.1f}" y1="{y + 1}" x2="{ax:.1f}" y2="{y + 19}" stroke="#c00" stroke-width="2">'
                f"<title>true count {act:,.0f}</title></line>"
            )
    parts.append(
        f'<text x="{left}" y="{height - 4}" font-size="10">grey: range over every table consistent with the '
        "release, blue: estimate, red: true count</text></svg>"
    )
    return "".join(parts)
