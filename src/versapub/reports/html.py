"""``report.html``: a self-contained, offline HTML report of a release for a data steward.

Everything (CSS, SVG drawings) is inline; no scripts, fonts or files are fetched.  The
report is built from the release's own files (manifest, tables) plus, when available,
the check result and the utility measured against the original: this module gathers what
the report shows, the templates in ``reports/templates/`` lay it out (Jinja2, every value
escaped), ``reports/svg.py`` draws.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from versapub.errors import VersapubError
from versapub.formats import read_manifest
from versapub.kinds import get_kind, parse_entry
from versapub.privacy.guarantees.guarantee import Guarantee, make_guarantee
from versapub.privacy.rules import Rule
from versapub.release.perturbed import perturbation_text
from versapub.release.value import manifest_facts
from versapub.reports.decisions import decisions_html, verdict_badge
from versapub.reports.summary import backend_text, functional_text, kl_text, ranges_text, share_text, workload_text
from versapub.reports.svg import bars, before_after, graph, kl_scale
from versapub.reports.svg import ranges as range_chart
from versapub.reports.templating import TERMS, glossary, render
from versapub.verify.check import CheckReport

__all__ = ["TERMS", "glossary", "html_report"]


def _histogram(hist: dict[str, Any] | None, xlabel: str, ylabel: str) -> Markup:
    if not hist:
        return Markup("")
    data = [(f"{a:.2g}", float(c)) for a, c in zip(hist["edges"][:-1], hist["counts"], strict=False)]
    return Markup(bars(data, xlabel=xlabel, ylabel=ylabel))


def _risk_rows(check: CheckReport | None) -> list[dict[str, Any]]:
    """Per table, the prosecutor risk of its published cells (the identity check's class
    sizes, read from the files) and a histogram of record risks."""
    import numpy as np

    from versapub.privacy.risk.reidentification import prosecutor_of_sizes, risk_histogram

    edges = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 1 / 3, 0.5, 1.0)
    out = []
    for row in check.identity if check else []:
        sizes = {int(k): int(v) for k, v in (row.get("class_sizes") or {}).items()}
        if not sizes:
            continue
        p = prosecutor_of_sizes(sizes, 0.2)
        f = np.array(sorted(sizes), dtype=np.float64)
        records = f * np.array([sizes[int(x)] for x in f], dtype=np.float64)
        hist = risk_histogram(records, 1.0 / f, edges)
        labels = [f"≤{b:.2g}" for b in edges[1:]]
        out.append(
            {
                "table": row["table"],
                "attributes": ", ".join(row.get("attributes") or []) or "(none)",
                "records": int(records.sum()),
                "classes": sum(sizes.values()),
                "uniques": sizes.get(1, 0),
                "population": row.get("population_uniques"),
                "p": p,
                "chart": Markup(
                    bars(
                        list(zip(labels, hist.astype(float).tolist(), strict=True)),
                        xlabel="prosecutor risk of a record (1 / its cell)",
                        ylabel="records",
                    )
                ),
            }
        )
    return out


def _collection(section: dict[str, Any], check: CheckReport | None) -> Markup:
    """A collection of anonymized marginals: what it must satisfy, its marginals, the
    verifier's collection checks and the KL-divergence along the utility injection."""
    div = section.get("diversity") or {}
    steps = section.get("search") or []
    chart = bars([(st["added"] or "start", float(st["kl"])) for st in steps], "marginal added", "KL-divergence")
    return Markup(
        render(
            "collection.html.j2",
            k=section.get("k"),
            diversity=div.get("name"),
            diversity_params=", ".join(f"{k} = {v}" for k, v in div.items() if k != "name"),
            sensitive=section.get("sensitive"),
            marginals=[
                {
                    "name": t.get("name"),
                    "role": t.get("role"),
                    "levels": ", ".join(f"{a}@{lv}" for a, lv in (t.get("levels") or {}).items()),
                }
                for t in section.get("tables", [])
            ],
            findings=check.findings_of(*CheckReport.COLLECTION_CHECKS) if check else [],
            search_chart=Markup(chart) if len(steps) > 1 else None,
        )
    )


def _rule_rows(m: Mapping[str, Any], rules: list[Rule], check: CheckReport | None) -> list[dict[str, Any]]:
    """The user's rules first, in plain words (their enforced forms are listed apart)."""
    g = m.get("guarantee", {})
    gnf = (m.get("gnf") or {}).get("rules", [])
    verdicts = {json.dumps(v["rule"], sort_keys=True): v for v in gnf}
    schema_findings = check.findings_of("schema") if check else []
    reduced = {json.dumps(r.to_json(), sort_keys=True): i for i, r in enumerate(rules)}
    implied = {json.dumps(d["rule"], sort_keys=True): d for d in m.get("rules_dropped", [])}
    own = {
        json.dumps(Rule.from_json(r).to_json(), sort_keys=True): r["guarantee"]
        for r in m["rules"]
        if isinstance(r, dict) and isinstance(r.get("guarantee"), dict)
    }
    rows = []
    for r in [Rule.from_json(r) for r in m.get("rules_given") or m["rules"]]:
        key = json.dumps(r.to_json(), sort_keys=True)
        implied_by = None
        if key not in reduced and key in implied:
            by = Rule.from_json(implied[key]["implied_by"])
            implied_by, key = str(by), json.dumps(by.to_json(), sort_keys=True)
        i = reduced.get(key)
        v = verdicts.get(key)
        finding = schema_findings[i] if i is not None and i < len(schema_findings) else None
        holds = finding.ok if finding else (v["holds"] if v else None)
        plain = (v.get("plain") or v.get("explanation")) if v else "not checked"
        attacks = check.attacks if check and i is not None else []
        disclosed = [dd for a in attacks for dd in a.disclosures if i is not None and dd.rule == rules[i]]
        if disclosed:
            holds = False
            plain += f" — but an attack disclosed {len(disclosed)} record(s)"
        spec = own.get(key, g)
        try:
            shown = make_guarantee(spec).describe()
        except VersapubError:
            shown = json.dumps(spec)
        rows.append(
            {
                "rule": str(r),
                "holds": holds,
                "plain": plain,
                "implied_by": implied_by,
                "technical": finding.message if finding else (v["explanation"] if v else ""),
                "guarantee": shown,
            }
        )
    return rows


def _table_rows(
    d: Path, tables: list[dict[str, Any]], guarantee: Guarantee | None, check: CheckReport | None
) -> list[dict[str, Any]]:
    identity = {i["table"]: i for i in (check.identity if check else [])}
    rows = []
    for t in tables:
        st = t.get("stats") or {}
        enf = [Rule.from_json(r) for r in [t["enforces"], *(t.get("also_enforces") or [])]] if t.get("enforces") else []
        groups, achieved, sizes = "–", "–", Markup("")
        summary = get_kind(t["kind"]).summary(d, parse_entry(t), guarantee)
        if summary:
            groups = str(summary.get("groups", "–"))
            ach = summary.get("achieved")
            achieved = f"{ach:.2f}" if isinstance(ach, int | float) else "–"
            if summary.get("achieved_note") and achieved != "–":
                achieved += f" ({summary['achieved_note']})"
            if summary.get("suppressed_records"):
                groups += f" + suppressed group ({summary['suppressed_records']} records)"
            if summary.get("group_sizes"):
                data = [(str(k), float(v)) for k, v in summary["group_sizes"].items()]
                sizes = Markup(bars(data, xlabel="records in a group", ylabel="number of groups"))
        risk = identity.get(t["name"]) or t.get("identity_risk")
        rows.append(
            {
                "name": t["name"],
                "kind": t["kind"],
                "attributes": t["attributes"],
                "enforces": [str(r) for r in enf],
                "rows": st.get("rows", st.get("rows_qit", "–")),
                "groups": groups,
                "achieved": achieved,
                "risk": f"{share_text(risk['unique_share'])} alone; smallest cell {risk['k']}"
                if risk and risk.get("k") is not None
                else "–",
                "files": list(t["files"].values()),
                "sizes": sizes,
                "notes": [str(line) for line in st.get("notes") or []],
            }
        )
    return rows


def _ranges(g: dict[str, Any] | None) -> dict[str, Any] | None:
    """The workload's ranges: the sentence, the widest queries listed and plotted."""
    if not g:
        return None
    widest = g.get("widest") or []
    rows = [(f"Q{i + 1}", w["estimate"], w["lower"], w["upper"], w.get("actual")) for i, w in enumerate(widest)]
    return {"sentence": ranges_text({**g, "widest": []}), "widest": widest, "chart": Markup(range_chart(rows))}


def _utility(util: dict[str, Any] | None) -> dict[str, Any] | None:
    if not util:
        return None
    r = util["relative_error"]
    kl = None if util.get("kl_infinite") else float(util["kl_divergence"])
    ref = util.get("kl_all_attributes_alone")
    return {
        "kl": kl,
        "exp_kl": math.exp(-kl) if kl is not None else None,
        "reference": ref,
        "distinct": util.get("distinct_records", "?"),
        "scale": Markup(kl_scale(kl, ref)) if kl is not None else Markup(""),
        "kl_sentence": kl_text(util),
        "workload_sentence": workload_text(r, util["workload"]),
        "n_queries": r["n_queries"],
        "qd": util["workload"]["qd"],
        "p": util["workload"]["p"],
        "mean": r["mean"],
        "median": r["median"],
        "histogram": _histogram(r.get("histogram"), "relative error of a query (bin start)", "number of queries"),
        "ranges": _ranges(util.get("ranges")),
        "metrics": util.get("metrics") or {},
        "functional": [
            {
                "text": functional_text(name, fm),
                "histogram": _histogram(
                    (fm.get("excessive_protection") or {}).get("histogram"),
                    f"excessive protection of a class in {name} (bin start)",
                    "number of classes",
                ),
            }
            for name, fm in (util.get("functional") or {}).items()
        ],
        "marginal_error": util.get("marginal_error") or {},
        "suppressed": [
            f"{name} suppressed {mt['suppressed_records']:,} record(s)"
            for name, mt in (util.get("metrics") or {}).items()
            if mt.get("suppressed_records")
        ],
    }


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
    tables = list(m["tables"])
    g = m.get("guarantee", {})
    try:
        guarantee: Guarantee | None = make_guarantee(g)
    except VersapubError:
        guarantee = None
    gnf = (m.get("gnf") or {}).get("rules", [])
    guardians = {v.get("guardian") for v in gnf if v.get("guardian")}
    tool = m.get("tool") or {}
    own = [r for r in m["rules"] if isinstance(r, dict) and isinstance(r.get("guarantee"), dict)]
    per_rule = bool(own) and any(r["guarantee"] != g for r in own)
    failed = [f for f in check.verification.findings + check.hygiene if not f.ok] if check else []
    return render(
        "report.html.j2",
        m=m,
        title=title or d.name,
        verdict_badge=Markup(verdict_badge(check)),
        tool_name=tool.get("name", "?"),
        tool_version=tool.get("version", ""),
        backend=backend_text(m.get("backend")),
        checked_against=(check.checked_against[:1].upper() + check.checked_against[1:]) if check else "",
        attrs=list(m.attributes),
        rules=rules,
        tables=tables,
        g_params="per rule" if per_rule else ", ".join(f"{k} = {v}" for k, v in g.items() if k != "name"),
        g_name=f"{len(own)} rule(s) with their own" if per_rule else g.get("name", ""),
        g_description=(
            "each rule's own guarantee, shown with the rule below"
            if per_rule
            else guarantee.describe()
            if guarantee
            else json.dumps(g)
        ),
        removed=(m.get("columns") or {}).get("removed") or [],
        qis=list((m.get("columns") or {}).get("quasi-identifying") or []),
        warnings=m.get("warnings") or [],
        facts=manifest_facts(m.raw),
        decisions=Markup(decisions_html(m, check)),
        collection=_collection(m["marginals"], check) if isinstance(m.get("marginals"), dict) else "",
        rule_rows=_rule_rows(m, rules, check),
        own_guarantees=any(isinstance(r, dict) and isinstance(r.get("guarantee"), dict) for r in m["rules"]),
        enforced=[
            (t["name"], str(Rule.from_json(r)))
            for t in tables
            for r in [t.get("enforces"), *(t.get("also_enforces") or [])]
            if r
        ],
        graph=Markup(graph(list(m.attributes), rules, tables, {x for x in guardians if x})),
        table_rows=_table_rows(d, tables, guarantee, check),
        u=_utility(utility if utility is not None else m.get("utility")),
        check=check,
        risk_rows=_risk_rows(check),
        perturbation=_perturbation(m.raw),
        adversary_plot=Markup(_adversary_plot(check)),
        failed=failed,
        n_file_checks=len(check.verification.findings) + len(check.hygiene) if check else 0,
        glossary=glossary(),
    )


def _perturbation(m: Mapping[str, Any]) -> dict[str, Any] | None:
    """The treatments' section: their names, the sentences and a before/after plot per
    treated column (a numeric column's histogram, a categorical one's most frequent values)."""
    p, records = m.get("perturbation"), m.get("treatments")
    if not isinstance(p, dict) or not isinstance(records, list):
        return None
    plots = []
    for c, d in (p.get("columns") or {}).items():
        if not isinstance(d, dict):
            continue
        h = d.get("histogram")
        if isinstance(h, dict) and len(h.get("edges") or []) > 1:
            labels = [f"{e:g}" for e in h["edges"][:-1]]
            svg = before_after(labels, h.get("before") or [], h.get("after") or [], f"{c} (bin from)")
        else:
            svg = before_after(
                [str(v) for v in d.get("values") or []], d.get("before") or [], d.get("after") or [], str(c)
            )
        plots.append({"column": c, "svg": Markup(svg)})
    names = [str(r.get("name")) for r in records if isinstance(r, dict)]
    return {"names": names, "lines": perturbation_text(p), "plots": plots}


def _adversary_plot(check: CheckReport | None) -> str:
    """The attacks on everything published as bars against their baselines (and bounds)."""
    from versapub.reports.svg import attack_bars

    adv = check.adversary if check is not None else None
    if not adv:
        return ""
    rows = []
    for r in adv.get("rules", []):
        rule = r["rule"]["rhs"]
        for label, fig in (("nearest record", r["inference"]["risk"]), ("learned", r["learned"])):
            base = r["inference"]["baseline"]["rate"]
            rows.append((f"{rule}: {label}", fig["rate"], base, tuple(fig["ci"]), r["bound"]))
    for t in adv.get("tables", []):
        for so in t["singling_out"]:
            rows.append((f"{t['table']}: singling out, {so['mode']}", so["risk"]["rate"], so["baseline"]["rate"],
                         tuple(so["risk"]["ci"]), None))  # fmt: skip
        if t.get("linkability"):
            link = t["linkability"]
            rows.append((f"{t['table']}: linkability", link["risk"]["rate"], link["baseline"]["rate"],
                         tuple(link["risk"]["ci"]), None))  # fmt: skip
    sample = adv.get("sample")
    said = f"<p>On the Dask backend {escape(str(sample['note']))}.</p>" if isinstance(sample, dict) else ""
    return attack_bars(rows) + said
