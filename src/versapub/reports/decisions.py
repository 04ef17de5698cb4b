"""The report's verdict and the steward's decisions, read from a release's manifest and its
checks: how every column was declared (by name, by a rule, or by ``--others``), which
proxies of a protected attribute were allowed, which unprotected columns are associated
with protected ones, and which warnings still need attention."""

from __future__ import annotations

import html
from typing import Any

from versapub.privacy.proxies import LISTED, STRONG
from versapub.verify.check import CheckReport

#: The report's badge per verdict: (CSS class, text).
BADGES = {
    "passed": ("pass", "ALL CHECKS PASSED"),
    "attention": ("attn", "PASSED — NEEDS ATTENTION"),
    "failed": ("fail", "CHECKS FAILED"),
    None: ("skip", "NOT CHECKED"),
}


def _e(x: object) -> str:
    return html.escape(str(x))


def _cols(names: list[str]) -> str:
    return ", ".join(f"<code>{_e(c)}</code>" for c in names) or '<span class="muted">none</span>'


def verdict_badge(check: CheckReport | None) -> str:
    cls, text = BADGES[check.verdict if check else None]
    return f'<span class="badge {cls}">{_e(text)}</span>'


def _roles(m: dict[str, Any]) -> list[tuple[str, list[str], str]]:
    """(role, columns, how) rows: each column once, with how it got its role."""
    raw = m.get("columns")
    cols: dict[str, Any] = raw if isinstance(raw, dict) else {}
    rules = [r for r in m.get("rules") or [] if isinstance(r, dict)]
    by_others = set(cols.get("by_others") or [])
    lhs = list(dict.fromkeys(str(a) for r in rules for a in r.get("lhs") or []))
    rhs = list(dict.fromkeys(str(r.get("rhs")) for r in rules))

    def named(role: str) -> list[str]:
        return [c for c in cols.get(role) or [] if c not in by_others]

    def others(role: str) -> list[str]:
        return [c for c in cols.get(role) or [] if c in by_others]

    rows = [
        ("identifying (removed)", named("identifying"), "declared by name"),
        ("identifying (removed)", others("identifying"), "by --others identifying"),
        ("quasi-identifying", lhs, "on a rule's left-hand side"),
        ("quasi-identifying", [c for c in named("quasi-identifying") if c not in lhs], "declared by name"),
        ("quasi-identifying", others("quasi-identifying"), "by --others quasi-identifying"),
        ("sensitive", rhs, "protected by a rule"),
        ("sensitive", [c for c in named("sensitive") if c not in rhs], "declared by name"),
        ("insensitive", named("insensitive"), "declared by name"),
        ("insensitive", others("insensitive"), "by --others insensitive (no decision of their own)"),
        ("published near-unique", list(cols.get("allowed_unique") or []), "--allow-unique"),
    ]
    return [r for r in rows if r[1]]


def decisions_html(m: dict[str, Any], check: CheckReport | None) -> str:
    """The "Verdict and your decisions" section."""
    out = ['<section id="decisions"><h2>Verdict and your decisions</h2>']
    verdict = check.verdict if check else None
    if verdict == "passed":
        out.append(
            "<p>Every check passed, and no table leaves records alone in their cell of columns that got no "
            "decision of their own.</p>"
        )
    elif verdict == "attention":
        out.append(
            "<p>Every check passed, but these warnings need your attention before the release goes out:</p>"
            "<ul>" + "".join(f'<li class="warn">{_e(w)}.</li>' for w in check.attention) + "</ul>"
            if check
            else ""
        )
    elif verdict == "failed":
        out.append("<p>Some checks failed (below): this release does not meet its requirement.</p>")
    out.append("<table><tr><th>role</th><th>columns</th><th>how</th></tr>")
    out += [f"<tr><td>{_e(role)}</td><td>{_cols(cols)}</td><td>{_e(how)}</td></tr>" for role, cols, how in _roles(m)]
    out.append("</table>")
    assoc = [a for a in m.get("associations") or [] if isinstance(a, dict)]
    allowed = [a for a in assoc if a.get("allowed")]
    if allowed:
        out.append(
            "<p><b>Proxies you allowed</b> (<code>--allow-proxy</code>): "
            + "; ".join(f"<code>{_e(a['column'])}</code> reveals <code>{_e(a['sensitive'])}</code>" for a in allowed)
            + ". They are published as they are; whoever reads them learns about the protected attribute what "
            "they reveal, beyond the rules' guarantee.</p>"
        )
    out.append(
        f"<h3>Unprotected columns associated with protected ones</h3><p>Measured on the input for every "
        f"column no rule protects that the release publishes exactly within reach of a rule's left-hand "
        f"side: Goodman-Kruskal lambda, the share of the errors in guessing one column that knowing the "
        f"other removes (values seen in fewer than 3 records reveal nothing). Listed from {LISTED:.0%}; from "
        f"{STRONG:.0%} a column is a proxy and is refused unless allowed.</p>"
    )
    if assoc:
        out.append(
            "<table><tr><th>column</th><th>protected attribute</th><th>rule</th><th>knowing the protected "
            "attribute predicts the column</th><th>knowing the column predicts the protected attribute</th>"
            "<th>published in</th><th></th></tr>"
        )
        for a in assoc:
            rule = a.get("rule") or {}
            shown = f"{', '.join(rule.get('lhs') or [])} -> {rule.get('rhs', '')}"
            status = "allowed proxy" if a.get("allowed") else ("proxy" if a.get("strong") else "")
            out.append(
                f"<tr><td><code>{_e(a['column'])}</code></td><td><code>{_e(a['sensitive'])}</code></td>"
                f"<td><code>{_e(shown)}</code></td><td>{float(a['derived']):.0%}</td>"
                f"<td>{float(a['determines']):.0%}</td><td>{_e(', '.join(a.get('tables') or []))}</td>"
                f"<td>{_e(status)}</td></tr>"
            )
        out.append("</table>")
    else:
        out.append('<p class="muted">None.</p>')
    notes = [str(n) for n in m.get("notes") or []]
    if notes:
        out.append("<h3>Notes</h3><ul>" + "".join(f"<li>{_e(n)}.</li>" for n in notes) + "</ul>")
    out.append("</section>")
    return "".join(out)
