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

import duckdb

from versapub.privacy.rules import Rule
from versapub.verify.check import CheckReport
from versapub.verify.sources import duckdb_source

_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22"]  # fmt: skip

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.45;padding:0 1em}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;width:100%}th,td{border:1px solid #ccc;padding:.35em .6em;
text-align:left;vertical-align:top;font-size:.93em}th{background:#f3f3f3}
.badge{display:inline-block;padding:.1em .6em;border-radius:.8em;font-weight:600;font-size:.85em;color:#fff}
.pass{background:#2e7d32}.fail{background:#c62828}.dropped{background:#757575}.skip{background:#f9a825}
.summary{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:.5em;padding:.6em 1em;
min-width:10em}.card b{display:block;font-size:1.4em}.muted{color:#666}code{background:#f5f5f5;padding:0 .25em}
svg text{font-family:inherit}
"""


def _e(x: object) -> str:
    return html.escape(str(x))


def _badge(ok: bool | None, text: str | None = None) -> str:
    cls = "skip" if ok is None else ("pass" if ok else "fail")
    return f'<span class="badge {cls}">{_e(text or ("PASS" if ok else "FAIL"))}</span>'


def _group_sizes(directory: Path, entry: dict[str, Any]) -> tuple[dict[int, int], float]:
    """Group-size distribution of an Anatomy table and its achieved guarantee
    ``min_g |g| / max_count(g)``, from its ST file."""
    st = directory / entry["files"]["st"]
    con = duckdb.connect(":memory:")
    try:
        con.execute(
            f"CREATE TABLE g AS SELECT group_id, sum(CAST(count AS BIGINT)) n, max(CAST(count AS BIGINT)) mx "
            f"FROM {duckdb_source(st)} GROUP BY group_id"
        )
        rows = con.execute("SELECT n, count(*) FROM g GROUP BY n ORDER BY n").fetchall()
        ach = con.execute("SELECT min(n / mx) FROM g").fetchone()
    finally:
        con.close()
    return {int(n): int(c) for n, c in rows}, float(ach[0]) if ach and ach[0] is not None else float("nan")


def _bars(data: list[tuple[str, float]], width: int = 420, height: int = 140, label: str = "") -> str:
    if not data:
        return ""
    top = max(v for _, v in data) or 1.0
    bw = min(width / len(data), 60.0)
    parts = [f'<svg role="img" aria-label="{_e(label)}" width="{width}" height="{height + 30}" '
             f'viewBox="0 0 {width} {height + 30}">']  # fmt: skip
    for i, (k, v) in enumerate(data):
        h = height * v / top
        parts.append(f'<rect x="{i * bw + 1:.1f}" y="{height - h:.1f}" width="{max(bw - 2, 1):.1f}" height="{h:.1f}" '
                     f'fill="#1f77b4"><title>{_e(k)}: {v:g}</title></rect>')  # fmt: skip
        if len(data) <= 12 or i % max(1, len(data) // 8) == 0:
            parts.append(f'<text x="{i * bw + bw / 2:.1f}" y="{height + 14}" font-size="10" '
                         f'text-anchor="middle">{_e(k)}</text>')  # fmt: skip
    parts.append(f'<text x="0" y="{height + 28}" font-size="10" fill="#666">{_e(label)}</text></svg>')
    return "".join(parts)


def _graph(attrs: list[str], rules: list[Rule], tables: list[dict[str, Any]], guardians: set[str]) -> str:
    """Attributes on a circle; rule edges as grey arrows (LHS -> RHS); every table as a
    coloured polygon through its attributes; guardian tables drawn with a thicker outline."""
    w, h = 760, 520
    cx, cy, rad = w / 2, h / 2 - 10, min(w, h) / 2 - 90
    pos = {a: (cx + rad * math.cos(2 * math.pi * i / len(attrs) - math.pi / 2),
               cy + rad * math.sin(2 * math.pi * i / len(attrs) - math.pi / 2)) for i, a in enumerate(attrs)}  # fmt: skip
    out = [f'<svg id="attribute-graph" role="img" aria-label="attribute graph" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
           'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
           'fill="#888"/></marker></defs>']  # fmt: skip
    for i, t in enumerate(tables):
        col = _COLOURS[i % len(_COLOURS)]
        pts = [pos[a] for a in t["attributes"] if a in pos]
        thick = 5 if t["name"] in guardians else 2.5
        if len(pts) == 1:
            x, y = pts[0]
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{24 + 4 * i}" fill="none" stroke="{col}" '
                       f'stroke-width="{thick}" opacity=".8"/>')  # fmt: skip
        else:
            p = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            out.append(f'<polygon points="{p}" fill="{col}" fill-opacity=".08" stroke="{col}" '
                       f'stroke-width="{thick}" stroke-linejoin="round" opacity=".85"/>')  # fmt: skip
    for r in rules:
        for q in r.lhs:
            if q in pos and r.rhs in pos:
                (x1, y1), (x2, y2) = pos[q], pos[r.rhs]
                dx, dy = x2 - x1, y2 - y1
                d = math.hypot(dx, dy) or 1
                out.append(f'<line x1="{x1 + dx / d * 16:.1f}" y1="{y1 + dy / d * 16:.1f}" x2="{x2 - dx / d * 18:.1f}" '
                           f'y2="{y2 - dy / d * 18:.1f}" stroke="#888" stroke-dasharray="5,4" '
                           f'marker-end="url(#arrow)"><title>{_e(str(r))}</title></line>')  # fmt: skip
    for a, (x, y) in pos.items():
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="15" fill="#fff" stroke="#333" stroke-width="1.5"/>'
                   f'<text x="{x:.1f}" y="{y - 22:.1f}" font-size="13" text-anchor="middle">{_e(a)}</text>')  # fmt: skip
    ly = h - 18
    lx = 10.0
    for i, t in enumerate(tables):
        col = _COLOURS[i % len(_COLOURS)]
        mark = " ★ guardian" if t["name"] in guardians else ""
        label = f"{t['name']} ({t['kind']}){mark}"
        out.append(f'<rect x="{lx}" y="{ly - 10}" width="14" height="10" fill="{col}"/>'
                   f'<text x="{lx + 18}" y="{ly}" font-size="12">{_e(label)}</text>')  # fmt: skip
        lx += 30 + 7 * len(label)
    out.append(f'<text x="{w - 10}" y="{ly}" font-size="12" text-anchor="end" fill="#666">'
               "dashed arrows: rules (LHS → RHS)</text></svg>")  # fmt: skip
    return "".join(out)


def html_report(
    directory: str | Path,
    check: CheckReport | None = None,
    utility: dict[str, Any] | None = None,
    title: str | None = None,
) -> str:
    """The report of the release in ``directory`` (``title``: the release's name)."""
    d = Path(directory)
    m = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    rules = [Rule.from_json(r) for r in m["rules"]]
    attrs = list(m["attributes"])
    tables = list(m["tables"])
    util = utility if utility is not None else m.get("utility")
    g = m.get("guarantee", {})
    ell = g.get("l", "?")
    gnf = (m.get("gnf") or {}).get("rules", [])
    verdicts = {json.dumps(v["rule"], sort_keys=True): v for v in gnf}
    schema_findings = [f for f in (check.verification.findings if check else []) if f.check == "schema"]
    guardians = {v.get("guardian") for v in gnf if v.get("guardian")}
    ok = check.ok if check else None

    body = [f"<h1>Release report {_badge(ok, 'ALL CHECKS PASSED' if ok else ('CHECKS FAILED' if ok is False else 'NOT CHECKED'))}</h1>",
            f'<p class="muted">{_e(title or d.name)} · format {_e(m.get("format"))} · '
            f'{_e((m.get("tool") or {}).get("name", "?"))} {_e((m.get("tool") or {}).get("version", ""))}</p>',
            '<div class="summary">',
            f'<div class="card">records<b>{m["n_records"]}</b></div>',
            f'<div class="card">attributes<b>{len(attrs)}</b></div>',
            f'<div class="card">rules enforced<b>{len(rules)}</b></div>',
            f'<div class="card">published tables<b>{len(tables)}</b></div>',
            f'<div class="card">guarantee<b>l = {_e(ell)}</b>{_e(g.get("name", ""))}</div>',
            "</div>"]  # fmt: skip
    body.append(
        "<p>Every rule <code>Q → S</code> says: someone who knows a person's values of <code>Q</code> and "
        f"reads every published table cannot guess the person's <code>S</code> with probability above 1/{_e(ell)}.</p>"
    )
    # Rules
    body.append('<section id="rules"><h2>Rules</h2><table><tr><th>rule</th><th>status</th><th>why</th></tr>')
    for i, r in enumerate(rules):
        v = verdicts.get(json.dumps(r.to_json(), sort_keys=True))
        finding = schema_findings[i] if i < len(schema_findings) else None
        holds = finding.ok if finding else (v["holds"] if v else None)
        reason = finding.message if finding else (v["explanation"] if v else "not checked")
        disclosed = [dd for a in (check.attacks if check else []) for dd in a.disclosures if dd.rule == r]
        if disclosed:
            holds = False
            reason += f" — attack: {len(disclosed)} record(s) disclosed"
        body.append(f"<tr><td><code>{_e(str(r))}</code></td><td>{_badge(holds)}</td><td>{_e(reason)}</td></tr>")
    for dr in m.get("rules_dropped", []):
        rr, by = Rule.from_json(dr["rule"]), Rule.from_json(dr["implied_by"])
        body.append(f"<tr><td><code>{_e(str(rr))}</code></td><td>{_badge(None, 'DROPPED')}</td>"
                    f"<td>{_e(dr.get('reason', ''))} (kept: <code>{_e(str(by))}</code>)</td></tr>")  # fmt: skip
    body.append("</table></section>")
    # Graph
    body.append('<section id="graph"><h2>Attribute graph</h2><p>Each published table is drawn as a coloured '
                "shape through the attributes it contains; tables sharing no attribute cannot be joined. "
                "Guardian tables (Definition 4) have a thick outline and a ★.</p>")  # fmt: skip
    body.append(_graph(attrs, rules, tables, {x for x in guardians if x}))
    body.append("</section>")
    # Tables
    body.append('<section id="tables"><h2>Published tables</h2><table><tr><th>table</th><th>attributes</th>'
                "<th>enforces</th><th>rows</th><th>groups</th><th>achieved guarantee</th><th>files</th></tr>")  # fmt: skip
    sizes_html = []
    for t in tables:
        st = t.get("stats") or {}
        enf = [Rule.from_json(r) for r in [t["enforces"], *(t.get("also_enforces") or [])]] if t.get("enforces") else []
        groups, achieved = "–", "–"
        if t["kind"] == "anatomy":
            sizes, ach = _group_sizes(d, t)
            groups = str(sum(sizes.values()))
            achieved = f"{ach:.2f} (min |g| / max count)"
            if len(enf) > 1:  # several sensitive attributes: the weakest line, from the stats
                ach_m = st.get("achieved")
                achieved = f"{ach_m:.2f} (per line)" if isinstance(ach_m, int | float) else "–"
                if st.get("suppressed_records"):
                    groups += f" + suppressed group ({st['suppressed_records']} records)"
            sizes_html.append(f"<h3>Group sizes of {_e(t['name'])}</h3>" +
                              _bars([(str(k), float(v)) for k, v in sizes.items()], label="records per group → groups"))  # fmt: skip
        rows = st.get("rows", st.get("rows_qit", "–"))
        body.append(f"<tr><td>{_e(t['name'])} <span class='muted'>({_e(t['kind'])})</span></td>"
                    f"<td>{_e(', '.join(t['attributes']))}</td><td>{'<br>'.join('<code>' + _e(str(r)) + '</code>' for r in enf) if enf else '–'}</td>"
                    f"<td>{_e(rows)}</td><td>{groups}</td><td>{achieved}</td>"
                    f"<td>{_e(', '.join(t['files'].values()))}</td></tr>")  # fmt: skip
    body.append("</table>" + "".join(sizes_html) + "</section>")
    # Utility
    body.append('<section id="utility"><h2>Utility</h2>')
    if util:
        kl = "infinite" if util.get("kl_infinite") else f"{util['kl_divergence']:.6f}"
        r = util["relative_error"]
        body.append(f"<p>KL-divergence of the maximum-entropy estimate from the original: <b>{kl}</b> "
                    f"({util.get('distinct_records', '?')} distinct records). Relative error of "
                    f"{r['n_queries']} random COUNT queries (qd = {util['workload']['qd']}, p = {util['workload']['p']}): "
                    f"mean <b>{r['mean']:.4f}</b>, median <b>{r['median']:.4f}</b>.</p>")  # fmt: skip
        hist = r.get("histogram")
        if hist:
            body.append(_bars([(f"{a:.2g}", float(c)) for a, c in zip(hist["edges"][:-1], hist["counts"], strict=False)],
                              label="relative error → queries"))  # fmt: skip
        body.append("<table><tr><th>attribute</th><th>largest marginal error</th><th></th></tr>")
        for a, err in (util.get("marginal_error") or {}).items():
            body.append(f"<tr><td>{_e(a)}</td><td>{err:.2e}</td><td>{_badge(err < 1e-9, 'exact' if err < 1e-9 else 'differs')}</td></tr>")  # fmt: skip
        body.append("</table>")
    else:
        body.append("<p class='muted'>Not measured (the original table was not available).</p>")
    body.append("</section>")
    # Attacks
    body.append('<section id="attacks"><h2>Attacks and checks</h2>')
    if check:
        for a in check.attacks:
            body.append(f"<p>{_badge(a.ok)} {_e(a.method)} intersection attack: {a.targets} target(s) examined, "
                        f"<b>{len(a.disclosures)}</b> record(s) at risk ({a.seconds:.2f} s).</p>")  # fmt: skip
            if a.disclosures:
                body.append("<table><tr><th>rule</th><th>known values</th><th>possible sensitive values</th></tr>")
                for dd in a.disclosures[:200]:
                    body.append(f"<tr><td><code>{_e(str(dd.rule))}</code></td><td>{_e(', '.join(dd.q))}</td>"
                                f"<td>{_e(', '.join(dd.possible))}</td></tr>")  # fmt: skip
                body.append("</table>")
        for p in check.posterior:
            body.append(f"<p>{_badge(p['ok'] if 'skipped' not in p else None)} maximum-entropy posterior: "
                        f"{_e(p['message'])}</p>")  # fmt: skip
        failed = [f for f in check.verification.findings + check.hygiene if not f.ok]
        body.append(f"<p>{_badge(not failed)} {len(check.verification.findings) + len(check.hygiene)} file checks "
                    f"(structure, counts, guarantee per group, marginals, row order){': ' if failed else '.'}</p>")  # fmt: skip
        if failed:
            body.append("<ul>" + "".join(f"<li>{_e(f.file or '')} {_e(f.message)}</li>" for f in failed) + "</ul>")
    else:
        body.append("<p class='muted'>Not checked.</p>")
    body.append("</section>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>versapub release report</title>"
            f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>")  # fmt: skip
