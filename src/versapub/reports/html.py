"""``report.html``: a self-contained, offline HTML report of a release for a data steward.

Everything (CSS, SVG drawings) is inline; no scripts, fonts or files are fetched.  The
report is built from the release's own files (manifest, tables) plus, when available,
the check result and the utility measured against the original.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

from versapub.errors import VersapubError
from versapub.formats import read_manifest
from versapub.kinds import get_kind, parse_entry
from versapub.privacy.guarantee import Guarantee, make_guarantee
from versapub.privacy.rules import Rule
from versapub.reports.decisions import decisions_html, verdict_badge
from versapub.reports.summary import backend_text, functional_text, share_text
from versapub.verify.check import CheckReport

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

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.45;padding:0 1em}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;width:100%}th,td{border:1px solid #ccc;padding:.35em .6em;
text-align:left;vertical-align:top;font-size:.93em}th{background:#f3f3f3}
.badge{display:inline-block;padding:.1em .6em;border-radius:.8em;font-weight:600;font-size:.85em;color:#fff}
.pass{background:#2e7d32}.fail{background:#c62828}.attn{background:#ef6c00}.dropped{background:#757575}.skip{background:#f9a825}
.summary{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:.5em;padding:.6em 1em;
min-width:10em}.card b{display:block;font-size:1.4em}.muted{color:#666}code{background:#f5f5f5;padding:0 .25em}
svg text{font-family:inherit}
.term{border-bottom:1px dotted #555;cursor:help}.legend{list-style:none;padding:0;columns:2;font-size:.9em}
.legend li{margin:.15em 0}.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.4em;vertical-align:-.1em}
.warn{background:#fff8e1;border-left:4px solid #f9a825;padding:.5em 1em}dl.glossary dt{font-weight:600;margin-top:.6em}
dl.glossary dd{margin-left:1.2em}
"""


def _e(x: object) -> str:
    return html.escape(str(x))


#: The report's own terms, in plain words; the plug-ins (guarantees, anonymizers,
#: decompositions, table kinds) describe themselves (:func:`glossary`).
TERMS = {
    "rule": "A requirement 'Q -> S': someone who knows a person's values of the attributes Q and reads every published table must not be able to tell the person's value of S (beyond the guarantee).",
    "sensitive attribute": "The attribute on the right of a rule (S): the value to be kept uncertain.",
    "left-hand side": "The attributes on the left of a rule (Q): what an adversary may already know about a person.",
    "published table": "One of the tables the release consists of; each holds some of the attributes.",
    "group": "A bucket of records that share one list of sensitive values (an Anatomy table).",
    "achieved": "The guarantee the weakest group reaches (its size divided by its most frequent sensitive value); at least l when the table satisfies l-diversity.",
    "reachable": "S is reachable from Q when published tables sharing attributes form a chain from Q to S, so that joining them could link what an adversary knows to S.",
    "guardian table": "The one published table through which every chain from a rule's left-hand side reaches its sensitive attribute, and which publishes S only in diverse groups: it guards the rule.",
    "GNF": "Guardian Normal Form: every rule either cannot reach its sensitive attribute or has a guardian table. A release in GNF satisfies every rule (Jin et al., KDD 2010).",
    "enforced rule": "The rule a table's anonymization checks itself: the part of a user's rule the table can see (its attributes), which is enough to make the user's rule hold.",
    "KL-divergence": "How far the best estimate of the original table that the release allows (the maximum-entropy estimate) is from the original, in nats: 0 means the release loses nothing.",
    "exp(-KL)": "The geometric mean, over the original's records, of how likely the estimate makes a record relative to the original (1 = as likely as in the original).",
    "maximum-entropy estimate": "The table that agrees with everything published and assumes nothing else; queries and utility are answered from it.",
    "relative error": "|estimate - true count| / true count of a COUNT query, over a random workload.",
    "identity risk": "The share of records that are the only one with their non-sensitive values in a table: anyone who knows those values of a person can find the person's row.",
    "equivalence class": "The records of a generalized table that share every published non-sensitive value; the guarantee holds inside each class.",
    "discernibility": "The sum over classes (or groups) of their size squared: each record is charged the number of records it cannot be told apart from. Lower is more precise.",
    "excessive protection": "Per equivalence class, min over k of phi(k) - F(k): how far its k most frequent sensitive values stay below what functional (tau, lambda)-diversity allows (0: exactly at the bound; larger: more protection, and less utility, than asked for).",
    "information": "um: per record and attribute, 1 - log(leaves covered) / log(domain size), averaged: 1 when values are published exactly, 0 when fully generalized (the functional-diversity paper's measure).",
    "background knowledge": "An adversary who also knows some of a person's other sensitive values intersects the person's group set with the values that occur with them in the sensitive table.",
    "generalization loss": "Per record and non-sensitive attribute, (values covered - 1) / (domain size - 1), averaged: 0 when values are published exactly, 1 when fully generalized.",
}


def glossary() -> dict[str, str]:
    """Every term the report uses, in plain words (shown in the glossary and as tooltips):
    its own :data:`TERMS` and each registered plug-in's own description."""
    from versapub.anonymizers import ANONYMIZERS
    from versapub.decompositions import DECOMPOSITIONS
    from versapub.kinds import KINDS
    from versapub.privacy.guarantee import GUARANTEES

    out = dict(TERMS)
    for registry in (KINDS, GUARANTEES, ANONYMIZERS, DECOMPOSITIONS):
        for name, plugin in registry.items():
            text = getattr(plugin, "glossary", "")
            if text:
                out.setdefault(name, text)
    return out


def _term(word: str, shown: str | None = None) -> str:
    """``word`` with its glossary meaning as a tooltip."""
    terms = glossary()
    tip = terms.get(word) or terms.get(word.lower(), "")
    return f'<span class="term" title="{_e(tip)}">{_e(shown or word)}</span>' if tip else _e(shown or word)


def _badge(ok: bool | None, text: str | None = None) -> str:
    cls = "skip" if ok is None else ("pass" if ok else "fail")
    return f'<span class="badge {cls}">{_e(text or ("PASS" if ok else "FAIL"))}</span>'


def _bars(data: list[tuple[str, float]], xlabel: str, ylabel: str, width: int = 520, height: int = 160) -> str:
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


def _collection(section: dict[str, Any], check: CheckReport | None) -> str:
    """A collection of anonymized marginals: what it must satisfy, its marginals, the
    verifier's collection checks and the KL-divergence along the utility injection."""
    div = section.get("diversity") or {}
    params = ", ".join(f"{k} = {v}" for k, v in div.items() if k != "name")
    out = [
        '<section id="collection"><h2>Collection of anonymized marginals</h2>',
        f"<p>Published together, these marginals must keep every person's cell of non-sensitive values shared "
        f"with at least <b>k = {_e(section.get('k'))}</b> records in every table (k-link); no cell may be pinned "
        f"to between 1 and k &minus; 1 records by every table consistent with all of them, the sensitive "
        f"attribute included (k-combinatorial); and the maximum-entropy estimate built from all of them "
        f"must satisfy <b>{_e(div.get('name'))} ({_e(params)})</b> for the sensitive attribute "
        f"<b>{_e(section.get('sensitive'))}</b> in every combination of the other values (maxent diversity, "
        "Kifer &amp; Gehrke).</p>",
        "<table><tr><th>marginal</th><th>role</th><th>attributes at their levels</th></tr>",
    ]
    for t in section.get("tables", []):
        levels = ", ".join(f"{a}@{lv}" for a, lv in (t.get("levels") or {}).items())
        out.append(f"<tr><td>{_e(t.get('name'))}</td><td>{_e(t.get('role'))}</td><td>{_e(levels)}</td></tr>")
    out.append("</table><ul>")
    names = ("k-link", "k-combinatorial", "maxent-diversity", "collection")
    for f in check.verification.findings if check else []:
        if f.check in names:
            out.append(f"<li>{_badge(f.ok)} {_e(f.check)} {_e(f.file or '')}: {_e(f.message)}</li>")
    out.append("</ul>")
    steps = section.get("search") or []
    if len(steps) > 1:
        data = [(st["added"] or "start", float(st["kl"])) for st in steps]
        out.append("<p>Utility injection: the KL-divergence of the estimate after each added marginal.</p>")
        out.append(_bars(data, "marginal added", "KL-divergence"))
    out.append("</section>")
    return "".join(out)


def _kl_scale(kl: float, reference: float | None) -> str:
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


def _graph(attrs: list[str], rules: list[Rule], tables: list[dict[str, Any]], guardians: set[str]) -> str:
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


def html_report(
    directory: str | Path,
    check: CheckReport | None = None,
    utility: dict[str, Any] | None = None,
    title: str | None = None,
) -> str:
    """The report of the release in ``directory`` (``title``: the release's name)."""
    d = Path(directory)
    m = read_manifest(d)
    rules = [Rule.from_json(r) for r in m["rules"]]
    attrs = list(m["attributes"])
    tables = list(m["tables"])
    util = utility if utility is not None else m.get("utility")
    g = m.get("guarantee", {})
    try:
        guarantee: Guarantee | None = make_guarantee(g)
    except VersapubError:
        guarantee = None
    g_params = ", ".join(f"{k} = {v}" for k, v in g.items() if k != "name")
    gnf = (m.get("gnf") or {}).get("rules", [])
    verdicts = {json.dumps(v["rule"], sort_keys=True): v for v in gnf}
    schema_findings = [f for f in (check.verification.findings if check else []) if f.check == "schema"]
    guardians = {v.get("guardian") for v in gnf if v.get("guardian")}

    body = [
        f"<h1>Release report {verdict_badge(check)}</h1>",
        f'<p class="muted">{_e(title or d.name)} · format {_e(m.get("format"))} · '
        f"{_e((m.get('tool') or {}).get('name', '?'))} {_e((m.get('tool') or {}).get('version', ''))} · "
        f"computed {_e(backend_text(m.get('backend')))}</p>",
        *(
            [f'<p class="muted">{_e(check.checked_against[:1].upper() + check.checked_against[1:])}.</p>']
            if check and check.checked_against
            else []
        ),
        '<div class="summary">',
        f'<div class="card">records<b>{m["n_records"]}</b></div>',
        f'<div class="card">attributes<b>{len(attrs)}</b></div>',
        f'<div class="card">rules enforced<b>{len(rules)}</b></div>',
        f'<div class="card">published tables<b>{len(tables)}</b></div>',
        f'<div class="card">guarantee<b>{_e(g_params or "?")}</b>{_e(g.get("name", ""))}</div>',
        "</div>",
    ]
    body.append(
        f"<p>Every {_term('rule')} <code>Q → S</code> says: someone who knows a person's values of <code>Q</code> "
        f"and reads every published table learns about the person's <code>S</code> no more than the guarantee "
        f"allows — {_e(guarantee.describe() if guarantee else g)}. Underlined words are explained when you point "
        'at them, and in the <a href="#glossary">glossary</a> at the end.</p>'
    )
    cols = m.get("columns") or {}
    if cols.get("removed"):
        body.append(f"<p>Removed before publishing as direct identifiers: <b>{_e(', '.join(cols['removed']))}</b>.</p>")
    for w in m.get("warnings") or []:
        body.append(f'<p class="warn"><b>Warning:</b> {_e(w)}.</p>')
    body.append(decisions_html(m, check))
    if isinstance(m.get("marginals"), dict):
        body.append(_collection(m["marginals"], check))
    # Rules: the user's rules first, in plain words; the enforced forms second
    reduced = {json.dumps(r.to_json(), sort_keys=True): i for i, r in enumerate(rules)}
    implied = {json.dumps(d["rule"], sort_keys=True): d for d in m.get("rules_dropped", [])}
    given = [Rule.from_json(r) for r in m.get("rules_given") or m["rules"]]
    own = {
        json.dumps(Rule.from_json(r).to_json(), sort_keys=True): r["guarantee"]
        for r in m["rules"]
        if isinstance(r, dict) and isinstance(r.get("guarantee"), dict)
    }
    body.append(
        '<section id="rules"><h2>Your rules</h2><table><tr><th>rule</th><th>status</th><th>why</th>'
        + ("<th>guarantee</th>" if own else "")
        + "</tr>"
    )
    for r in given:
        key = json.dumps(r.to_json(), sort_keys=True)
        via = ""
        if key not in reduced and key in implied:
            by = Rule.from_json(implied[key]["implied_by"])
            via = f" (it follows from the stronger rule <code>{_e(str(by))}</code>)"
            key = json.dumps(by.to_json(), sort_keys=True)
        i = reduced.get(key)
        v = verdicts.get(key)
        finding = schema_findings[i] if i is not None and i < len(schema_findings) else None
        holds = finding.ok if finding else (v["holds"] if v else None)
        plain = (v.get("plain") or v.get("explanation")) if v else "not checked"
        technical = finding.message if finding else (v["explanation"] if v else "")
        disclosed = (
            [dd for a in (check.attacks if check else []) for dd in a.disclosures if dd.rule == rules[i]]
            if i is not None
            else []
        )
        if disclosed:
            holds = False
            plain += f" — but an attack disclosed {len(disclosed)} record(s)"
        g_cell = ""
        if own:
            spec = own.get(key, g)
            try:
                g_cell = f"<td>{_e(make_guarantee(spec).describe())}</td>"
            except VersapubError:
                g_cell = f"<td>{_e(json.dumps(spec))}</td>"
        body.append(
            f"<tr><td><code>{_e(str(r))}</code></td><td>{_badge(holds)}</td><td>{_e(plain)}{via}"
            f'<details><summary class="muted">in the paper\'s terms</summary>{_e(technical)}</details></td>'
            f"{g_cell}</tr>"
        )
    body.append("</table>")
    body.append(
        f"<h3>Enforced forms</h3><p class='muted'>What each anonymized table checks itself "
        f"({_term('enforced rule', 'enforced rules')}); together they make every rule above hold.</p><ul>"
    )
    for t in tables:
        for r in [t.get("enforces"), *(t.get("also_enforces") or [])]:
            if r:
                body.append(f"<li>{_e(t['name'])} enforces <code>{_e(str(Rule.from_json(r)))}</code></li>")
    body.append("</ul></section>")
    # Graph
    body.append(
        f'<section id="graph"><h2>Attribute graph</h2><p>Each published table is drawn as a coloured '
        "shape through the attributes it contains; tables sharing no attribute cannot be joined. "
        f"{_term('guardian table', 'Guardian tables')} have a thick outline and a ★.</p>"
    )
    body.append(_graph(attrs, rules, tables, {x for x in guardians if x}))
    body.append("</section>")
    # Tables
    body.append(
        '<section id="tables"><h2>Published tables</h2><table><tr><th>table</th><th>attributes</th>'
        f"<th>enforces</th><th>rows</th><th>{_term('group', 'groups')}</th><th>{_term('achieved')}</th>"
        f"<th>{_term('identity risk')}</th><th>files</th></tr>"
    )
    sizes_html = []
    identity = {i["table"]: i for i in (check.identity if check else [])}
    for t in tables:
        st = t.get("stats") or {}
        enf = [Rule.from_json(r) for r in [t["enforces"], *(t.get("also_enforces") or [])]] if t.get("enforces") else []
        groups, achieved = "–", "–"
        summary = get_kind(t["kind"]).summary(d, parse_entry(t), guarantee)
        if summary:
            sizes = summary.get("group_sizes") or {}
            groups = str(summary.get("groups", "–"))
            ach = summary.get("achieved")
            achieved = f"{ach:.2f}" if isinstance(ach, int | float) else "–"
            if summary.get("achieved_note") and achieved != "–":
                achieved += f" ({summary['achieved_note']})"
            if summary.get("suppressed_records"):
                groups += f" + suppressed group ({summary['suppressed_records']} records)"
            if sizes:
                sizes_html.append(
                    f"<h3>Group sizes of {_e(t['name'])}</h3>"
                    + _bars(
                        [(str(k), float(v)) for k, v in sizes.items()],
                        xlabel="records in a group",
                        ylabel="number of groups",
                    )
                )
        for line in st.get("notes") or []:
            sizes_html.append(f"<p>{_e(t['name'])}: {_e(str(line))}.</p>")
        risk = identity.get(t["name"]) or t.get("identity_risk")
        risk_txt = f"{share_text(risk['unique_share'])} alone; smallest cell {risk['k']}" if risk else "–"
        rows = st.get("rows", st.get("rows_qit", "–"))
        body.append(
            f"<tr><td>{_e(t['name'])} <span class='muted'>({_term(t['kind'])})</span></td>"
            f"<td>{_e(', '.join(t['attributes']))}</td><td>{'<br>'.join('<code>' + _e(str(r)) + '</code>' for r in enf) if enf else '–'}</td>"
            f"<td>{_e(rows)}</td><td>{groups}</td><td>{achieved}</td><td>{_e(risk_txt)}</td>"
            f"<td>{_e(', '.join(t['files'].values()))}</td></tr>"
        )
    body.append("</table>" + "".join(sizes_html) + "</section>")
    # Utility
    body.append('<section id="utility"><h2>Utility</h2>')
    if util:
        r = util["relative_error"]
        if util.get("kl_infinite"):
            body.append(
                f"<p>{_term('KL-divergence')}: <b>infinite</b> — the estimate gives some original records "
                "probability 0.</p>"
            )
        else:
            kl = float(util["kl_divergence"])
            ref = util.get("kl_all_attributes_alone")
            body.append(
                f"<p>{_term('KL-divergence')} of the {_term('maximum-entropy estimate')} from the original: "
                f"<b>{kl:.4f}</b> nats over {util.get('distinct_records', '?')} distinct records; "
                f"{_term('exp(-KL)')} = <b>{math.exp(-kl):.3f}</b>: on average (geometric mean) a record of the "
                f"original is {math.exp(-kl):.0%} as likely under the estimate as in the original."
                + (f" Publishing every attribute alone would give {ref:.4f}." if ref is not None else "")
                + "</p>"
            )
            body.append(_kl_scale(kl, ref))
        body.append(
            f"<p>{_term('relative error', 'Relative error')} of {r['n_queries']} random COUNT queries "
            f"(qd = {util['workload']['qd']} attributes, p = {util['workload']['p']} of each domain): "
            f"mean <b>{r['mean']:.4f}</b>, median <b>{r['median']:.4f}</b>.</p>"
        )
        hist = r.get("histogram")
        if hist:
            body.append(
                _bars(
                    [(f"{a:.2g}", float(c)) for a, c in zip(hist["edges"][:-1], hist["counts"], strict=False)],
                    xlabel="relative error of a query (bin start)",
                    ylabel="number of queries",
                )
            )
        metrics = util.get("metrics") or {}
        if metrics:
            body.append(
                f"<table><tr><th>table</th><th>classes / groups</th><th>{_term('discernibility')}</th>"
                "<th>average class size</th><th>" + _term("generalization loss") + "</th>"
                "<th>" + _term("information") + "</th><th>suppressed records</th></tr>"
            )
            for name, mt in metrics.items():
                norm = mt.get("normalized_average_class_size")
                body.append(
                    f"<tr><td>{_e(name)}</td><td>{mt['classes']}</td><td>{mt['discernibility']:,}</td>"
                    f"<td>{mt['average_class_size']:.2f}{f' ({norm:.2f} × k)' if norm else ''}</td>"
                    f"<td>{mt['generalization_loss']:.3f}</td><td>{mt.get('information', 1.0):.3f}</td>"
                    f"<td>{mt['suppressed_records']}</td></tr>"
                )
            body.append("</table>")
        for name, fm in (util.get("functional") or {}).items():
            body.append(f"<p>{_e(functional_text(name, fm))}.</p>")
            hist = (fm.get("excessive_protection") or {}).get("histogram")
            if hist:
                body.append(
                    _bars(
                        [(f"{a:.2g}", float(c)) for a, c in zip(hist["edges"][:-1], hist["counts"], strict=False)],
                        xlabel=f"{_term('excessive protection')} of a class in {name} (bin start)",
                        ylabel="number of classes",
                    )
                )
        body.append("<table><tr><th>attribute</th><th>largest marginal error</th><th></th></tr>")
        for a, err in (util.get("marginal_error") or {}).items():
            body.append(
                f"<tr><td>{_e(a)}</td><td>{err:.2e}</td><td>{_badge(err < 1e-9, 'exact' if err < 1e-9 else 'differs')}</td></tr>"
            )
        body.append("</table>")
    else:
        body.append("<p class='muted'>Not measured (the original table was not available).</p>")
    body.append("</section>")
    # Attacks
    body.append('<section id="attacks"><h2>Attacks and checks</h2>')
    if check:
        for a in check.attacks:
            body.append(
                f"<p>{_badge(a.ok)} {_e(a.method)} intersection attack: {a.targets} target(s) examined, "
                f"<b>{len(a.disclosures)}</b> record(s) at risk ({a.seconds:.2f} s).</p>"
            )
            if a.disclosures:
                body.append("<table><tr><th>rule</th><th>known values</th><th>possible sensitive values</th></tr>")
                for dd in a.disclosures[:200]:
                    body.append(
                        f"<tr><td><code>{_e(str(dd.rule))}</code></td><td>{_e(', '.join(dd.q))}</td>"
                        f"<td>{_e(', '.join(dd.possible))}</td></tr>"
                    )
                body.append("</table>")
        for ka in check.kind_attacks:  # a kind's own attack (sa-groups: background knowledge)
            body.append(
                f"<p>{_badge(ka['ok'])} {_term('background knowledge')} attack on {_e(ka['table'])} "
                f"({_e(ka['targets'])}): {_e(ka['message'])}.</p><table><tr><th>known other sensitive "
                "values</th><th>attribute</th><th>l</th><th>targets below l</th><th>share</th>"
                "<th>fewest candidates</th></tr>"
            )
            body += [
                f"<tr><td>{r['known']}</td><td>{_e(r['attribute'])}</td><td>{r['l']}</td><td>{r['below']:,}</td>"
                f"<td>{r['share']:.1%}</td><td>{r['min_candidates']}</td></tr>"
                for r in ka["rows"]
            ]
            body.append("</table>")
        for p in check.posterior:
            body.append(
                f"<p>{_badge(p['ok'] if 'skipped' not in p else None)} maximum-entropy posterior: "
                f"{_e(p['message'])}</p>"
            )
        failed = [f for f in check.verification.findings + check.hygiene if not f.ok]
        body.append(
            f"<p>{_badge(not failed)} {len(check.verification.findings) + len(check.hygiene)} file checks "
            f"(structure, counts, guarantee per group, marginals, row order){': ' if failed else '.'}</p>"
        )
        if failed:
            body.append("<ul>" + "".join(f"<li>{_e(f.file or '')} {_e(f.message)}</li>" for f in failed) + "</ul>")
    else:
        body.append("<p class='muted'>Not checked.</p>")
    body.append("</section>")
    body.append(
        '<section id="glossary"><h2>Glossary</h2><dl class="glossary">'
        + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in glossary().items())
        + "</dl></section>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>versapub release report</title>"
        f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>"
    )
