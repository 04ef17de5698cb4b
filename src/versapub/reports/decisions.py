"""The report's verdict and the steward's decisions, read from a release's manifest and its
checks: how every column was declared (by name, by a rule, or by ``--others``), which
proxies of a protected attribute were allowed, which unprotected columns are associated
with protected ones, and which warnings still need attention."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from versapub.privacy.screens.proxies import LISTED, STRONG
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


def verdict_badge(check: CheckReport | None) -> str:
    cls, text = BADGES[check.verdict if check else None]
    return f'<span class="badge {cls}">{_e(text)}</span>'


def _roles(m: Mapping[str, Any]) -> list[tuple[str, list[str], str]]:
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


def _set_row(p: dict[str, Any]) -> dict[str, Any]:
    """A set of columns that together predict a protected attribute, for the report."""
    return {
        "columns": list(p.get("columns") or []),
        "sensitive": p.get("sensitive", ""),
        "share": f"{float(p.get('share', 0)):.1%}",
        "low": f"{float(p.get('low', 0)):.1%}",
        "bound": f"{float(p.get('bound', 1)):.1%}",
        "baseline": f"{float(p.get('baseline', 0)):.1%}",
        "learner": p.get("learner", ""),
        "status": "allowed breach" if p.get("allowed") else ("breach" if p.get("breach") else ""),
    }


def decisions_html(m: Mapping[str, Any], check: CheckReport | None) -> str:
    """The "Verdict and your decisions" section (``templates/decisions.html.j2``)."""
    from versapub.reports.templating import render

    assoc = [a for a in m.get("associations") or [] if isinstance(a, dict)]

    def row(a: dict[str, Any]) -> dict[str, Any]:
        rule = a.get("rule") or {}
        return {
            "column": a["column"],
            "sensitive": a["sensitive"],
            "rule": f"{', '.join(rule.get('lhs') or [])} -> {rule.get('rhs', '')}",
            "derived": f"{float(a['derived']):.0%}",
            "determines": f"{float(a['determines']):.0%}",
            "tables": list(a.get("tables") or []),
            "status": "allowed proxy" if a.get("allowed") else ("proxy" if a.get("strong") else ""),
        }

    return render(
        "decisions.html.j2",
        verdict=check.verdict if check else None,
        attention=check.attention if check else [],
        roles=_roles(m),
        allowed=[a for a in assoc if a.get("allowed")],
        listed=f"{LISTED:.0%}",
        strong=f"{STRONG:.0%}",
        associations=[row(a) for a in assoc],
        sets=[_set_row(p) for p in m.get("proxy_sets") or [] if isinstance(p, dict)],
        notes=[str(n) for n in m.get("notes") or []],
    )
