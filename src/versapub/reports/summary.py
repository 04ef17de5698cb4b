"""A Markdown report of a release (``report.md``) and the CLI's summary rows."""

from __future__ import annotations

import re
from typing import Any

from versapub.release.perturbed import perturbation_text
from versapub.release.value import Release, household_text, k_preview_text, removal_text
from versapub.verify.files.release_check import VerificationReport

#: What each summary column means, for a reader who has not read the papers.
COLUMN_NOTES = {
    "rows": "rows: distinct value combinations the table publishes (each with its count of records)",
    "groups": "groups: an Anatomy table's buckets of records that share one list of sensitive values (the release "
    "says which group a record is in, never which of its group's values is the record's); a generalized table's "
    "equivalence classes (records sharing every published non-sensitive value)",
    "achieved": "achieved: the guarantee's own measure of the weakest group (l-diversity: its size divided by its "
    "most frequent sensitive value, at least l; k-anonymity: the smallest class; t-closeness: the largest distance; "
    "functional (tau, lambda)-diversity: the smallest slack min_k (phi(k) - F(k)), at least 0; beta-likeness: the "
    "largest relative gain (q - p) / p, at most beta; delta-disclosure: the largest |ln(q / p)|, below delta; k-map: "
    "the smallest class, at least the k' its sampling fraction implies, or against a population the fewest people "
    "of it a class matches, at least k; delta-presence: the largest share of a class's population in the data, at "
    "most delta_max)",
    "alone": "alone: share of records that are the only one with their non-sensitive values in the table (anyone who "
    "knows those values can single the record out)",
}


def share_text(share: float) -> str:
    """A share as a percentage that never rounds a non-zero share to 0 %."""
    return "<0.1%" if 0 < share < 0.001 else f"{share:.1%}"


def show(name: str) -> str:
    """An attribute or value quoted when it holds a separator, so lists read unambiguously."""
    if any(ch in name for ch in ",;|'\"") or "->" in name or name != name.strip() or not name:
        return "'" + name.replace("'", "''") + "'"
    return name


def covered_rules(release: Release) -> dict[str, list[str]]:
    """Per table: the user's rules (as typed, before reduction) it is the guardian of."""
    guardian = {v.rule: v.guardian for v in release.gnf.verdicts if v.guardian}
    implied = {d.rule: d.implied_by for d in release.reduction.dropped}
    out: dict[str, list[str]] = {}
    for r in release.reduction.given:
        g = guardian.get(implied.get(r, r))
        if g is not None:
            out.setdefault(g, []).append(str(r))
    return out


def summary_rows(release: Release) -> list[dict[str, Any]]:
    """One row per published table: name, kind, attributes, enforced rules and the user's
    rules they cover, rows, groups, achieved guarantee, identity risk."""
    from versapub.privacy.per_rule import for_rules

    rows = []
    covers = covered_rules(release)
    for t in release.tables:
        st = t.table.stats
        enforced = t.table.enforced_rules
        g = for_rules(enforced, release.rule_guarantees) if enforced and release.rule_guarantees else release.guarantee
        groups = st.get("groups", "-")
        if st.get("suppressed_records"):
            groups = f"{groups} + suppressed ({st['suppressed_records']} records)"
        rows.append(
            {
                "table": t.name,
                "kind": t.kind,
                "attributes": ", ".join(show(a) for a in t.attributes),
                "enforces": "; ".join(str(e) for e in enforced) if enforced else "-",
                "covers": "; ".join(covers.get(t.name, [])),
                "alone": share_text(release.identity[t.name]["unique_share"]) if t.name in release.identity else "-",
                "rows": st.get("rows", st.get("rows_qit", 0)),
                "groups": groups,
                "achieved": g.achieved_text(float(st["achieved"])) if st.get("achieved") is not None else "-",
            }
        )
    return rows


def functional_text(name: str, fm: dict[str, Any]) -> str:
    """One line of the functional-diversity paper's measures of a table (excessive
    protection, ID3's ratio of classification accuracies and rules, count-query error)."""
    parts = []
    ep = fm.get("excessive_protection") or {}
    if ep.get("min") is not None:
        parts.append(f"excessive protection min {ep['min']:.3f}, mean {ep['mean']:.3f} over {ep['classes']} classes")
    cl = fm.get("classification")
    if cl:
        parts.append(
            f"ID3 predicting {cl['target']}: accuracy {cl['accuracy_anonymized']:.3f} (original "
            f"{cl['accuracy_original']:.3f}), rca {cl['rca']:.3f}, classification rules "
            f"{cl['rules_anonymized']} (original {cl['rules_original']})"
        )
    for dims, q in (fm.get("count_queries") or {}).items():
        if q.get("mean") is not None:
            parts.append(
                f"{dims}-D count queries on published values: relative error mean {q['mean']:.3f}, "
                f"median {q['median']:.3f}"
            )
    if fm.get("not_computed"):
        parts.append(
            "ID3 classification and count queries on published values not computed at publish "
            "(versapub evaluate RELEASE computes them; or publish with --utility full)"
        )
    return f"{name}: " + ("; ".join(parts) if parts else "no measure applies")


def collection_text(section: dict[str, Any]) -> list[str]:
    """A collection of anonymized marginals: its requirement, marginals, checks, search."""
    div = section.get("diversity") or {}
    req = ", ".join(f"{k} = {v}" for k, v in div.items() if k != "name")
    out = [
        "",
        "## Collection of anonymized marginals (Kifer & Gehrke)",
        "",
        f"- Sensitive attribute: {section.get('sensitive')}; k-link and k-combinatorial anonymity with k = "
        f"{section.get('k')}; maxent {div.get('name')} ({req})",
        f"- Decomposable: {'yes' if section.get('decomposable') else 'no'}"
        + (
            f"; KL-divergence of the maximum-entropy estimate (closed form): {section['kl_closed_form']:.6f}"
            if section.get("kl_closed_form") is not None
            else ""
        ),
        "",
        "| marginal | role | levels |",
        "|---|---|---|",
    ]
    for t in section.get("tables", []):
        levels = ", ".join(f"{a}@{lv}" for a, lv in (t.get("levels") or {}).items())
        out.append(f"| {t.get('name')} | {t.get('role')} | {levels} |")
    out += ["", "Checks of the collection as produced (the verifier re-checks them below):", ""]
    out += [f"- {'ok' if c['ok'] else 'FAIL'}: {c['message']}" for c in (section.get("checks") or {}).get("checks", [])]
    steps = section.get("search") or []
    if steps:
        out += ["", "Utility injection (KL-divergence after each addition):", ""]
        out += [
            f"- {st['kl']:.6f}" + (f" after adding {st['added']}" if st["added"] else " at the start") for st in steps
        ]
    return out


def backend_text(backend: dict[str, Any] | None) -> str:
    """Where the release was computed (the manifest's ``backend``), for a reader."""
    b = backend or {"name": "memory"}
    if b.get("name") != "dask":
        return "in memory (one process)"
    return (
        f"Dask, {b.get('workers', '?')} worker(s) on {b.get('scheduler', '?')}, the input in "
        f"{b.get('partitions', '?')} partition(s); large tables are directories of Parquet parts"
    )


def decisions_text(release: Release) -> list[str]:
    """The steward's decisions, as report.md lists them."""
    cols = release.columns
    out = []
    if cols.get("removed"):
        out.append(f"- Removed as identifying: {', '.join(show(c) for c in cols['removed'])}")
    if cols.get("by_others"):
        out.append(
            f"- Declared {cols.get('others')} by --others (no decision of their own): "
            f"{', '.join(show(c) for c in cols['by_others'])}"
        )
    for a in release.associations:
        label = "Allowed proxy (--allow-proxy)" if a.allowed else "Associated with a protected attribute"
        out.append(f"- {label}: {a.describe()}")
    for p in release.proxy_sets:
        label = "Allowed set of columns (--allow-proxy)" if p.allowed else "Columns that together predict"
        out.append(f"- {label}: {p.describe()}")
    out += [f"- Note: {n}" for n in release.notes]
    return out


#: What starts raw HTML in Markdown: ``<`` before a letter, ``/``, ``!`` or ``?``.
_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def no_html(markdown: str) -> str:
    """``markdown`` with every ``<`` that would open raw HTML written ``&lt;``: a column or
    value named ``<img onerror=…>`` reads as text in any Markdown viewer (in a code span too,
    where it shows as ``&lt;``: a name holding a backtick could otherwise end the span), while
    ``a <= 3`` stays as it is."""
    return _TAG.sub("&lt;", markdown)


def markdown_report(
    release: Release,
    verification: VerificationReport | None,
    files: dict[str, dict[str, str]],
    verdict: tuple[str, list[str]] | None = None,
) -> str:
    """The release described for a data steward (``verdict``: the checks' verdict and the
    warnings that need attention)."""
    out = [
        "# versapub release report",
        "",
        f"- Records published: **{release.n_records}**"
        + (
            f" ({release.input.rows_dropped_missing} input row(s) with missing cells dropped)"
            if release.input.rows_dropped_missing
            else ""
        ),
        *[f"- {line}" for line in release_facts(release)],
        f"- Attributes: {', '.join(release.attributes)}",
        f"- Guarantee: {guarantees_text(release)}",
        f"- Decomposition: {release.decomposition}; anonymizer: {release.anonymizer}; seed: {release.seed}",
        f"- Computed: {backend_text(release.backend)}",
    ]
    if release.input.path:
        out.append(f"- Input: `{release.input.path}` (sha256 `{release.input.sha256}`)")
    for attr, h in release.input.hierarchies.items():
        out.append(f"- Hierarchy: {attr} generalized to level {h['level']} using `{h['file']}`")
    if verdict is not None:
        words = {"passed": "ALL CHECKS PASSED", "attention": "PASSED — NEEDS ATTENTION", "failed": "CHECKS FAILED"}
        out.append(f"- Verdict: **{words.get(verdict[0], verdict[0])}**")
        out += [f"  - needs attention: {w}" for w in verdict[1]]
    out += decisions_text(release)
    if release.marginals is not None:
        out += collection_text(release.marginals)
    else:
        out += ["", "## Rules", "", "| rule | status | reason |", "|---|---|---|"]
        for v in release.gnf.verdicts:
            out.append(f"| `{v.rule}` | {'PASS' if v.holds else 'FAIL'} | {v.explain()} |")
        for d in release.reduction.dropped:
            out.append(f"| `{d.rule}` | dropped | {d.reason} |")
        out += ["", "### Feasibility (each sensitive attribute published alone)", ""]
        for f in release.feasibility:
            out.append(f"- {f.message()}")
    out += [
        "",
        "## Published tables",
        "",
        "| table | kind | attributes | enforces | rows | groups | achieved l | files |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in summary_rows(release):
        fl = ", ".join(f"`{v}`" for v in files.get(row["table"], {}).values())
        out.append(
            f"| {row['table']} | {row['kind']} | {row['attributes']} | `{row['enforces']}` | "
            f"{row['rows']} | {row['groups']} | {row['achieved']} | {fl} |"
        )
    for t in release.tables:
        sizes = t.table.stats.get("group_sizes")
        if sizes:
            dist = ", ".join(f"{k} records: {v} groups" for k, v in sizes.items())
            out.append(f"\nGroup sizes of {t.name}: {dist}.")
        for line in t.table.stats.get("notes", []):
            out.append(f"\n{t.name}: {line}.")
    if release.utility:
        u = release.utility
        out += _utility_head(u)
        for name, mt in (u.get("metrics") or {}).items():
            out.append(
                f"- {name}: {mt['classes']} classes/groups, discernibility {mt['discernibility']:,}, average class "
                f"size {mt['average_class_size']:.2f}, generalization loss {mt['generalization_loss']:.3f}, "
                f"information um {mt['information']:.3f}, "
                f"suppressed records {mt['suppressed_records']}"
            )
        for name, fm in (u.get("functional") or {}).items():
            out.append(f"- {functional_text(name, fm)}")
    if verification is not None:
        out += [
            "",
            "## Verification",
            "",
            f"{'PASSED' if verification.ok else 'FAILED'}: {len(verification.findings)} checks "
            "re-read from the written files by code independent of the publisher.",
            "",
        ]
        for finding in verification.findings:
            mark = "ok" if finding.ok else "FAIL"
            out.append(f"- {mark} [{finding.check}] {finding.file or ''} {finding.message}")
    out += ["", "## Timings (seconds)", ""]
    for step, seconds in release.timings.items():
        out.append(f"- {step}: {seconds:.3f}")
    return no_html("\n".join(out) + "\n")


def guarantees_text(release: Release) -> str:
    """The release's guarantee, or each rule's own when rules have theirs (a header that
    said l = 2 beside rules of l = 5, 2, 2 would mislead)."""
    own = {r: g for r, g in release.rule_guarantees.items()} if release.rule_guarantees else {}
    base = release.guarantee.to_manifest()
    if not own or all(g.to_manifest() == base for g in own.values()):
        return release.guarantee.describe()
    return "per rule: " + "; ".join(f"'{r}': {g.describe()}" for r, g in own.items())


def workload_text(r: dict[str, Any], w: dict[str, Any]) -> str:
    """The COUNT workload's relative error for a reader: the median first, how far most
    queries go, then the mean with what pulls it (queries whose true count is tiny)."""
    head = f"relative error of {r['n_queries']} COUNT queries (qd = {w['qd']}, p = {w['p']}): median {r['median']:.3f}"
    if r.get("p90") is not None:
        head += f", 90% of queries below {r['p90']:.3f}"
    small = r.get("share_small_counts")
    tail = f"; mean {r['mean']:.3f}"
    if small and r["mean"] > 1.5 * r["median"]:
        tail += (
            f" (pulled up by the {share_text(small)} of queries that count fewer than "
            f"{r.get('small_count', 10)} records, where a small miss is a large relative error"
            + (
                f"; median of the others {r['median_large_counts']:.3f}"
                if r.get("median_large_counts") is not None
                else ""
            )
            + ")"
        )
    return head + tail


def _utility_head(u: dict[str, Any]) -> list[str]:
    """The utility section's first lines: KL, the workload, its ranges, marginals, model."""
    r, w = u["relative_error"], u["workload"]
    return [
        "",
        "## Utility (maximum-entropy estimate vs the input)",
        "",
        f"- {kl_text(u)}; over {u['distinct_records']} distinct records",
        f"- {workload_text(r, w)[:1].upper()}{workload_text(r, w)[1:]} (seed = {w['seed']})",
        *([f"- {ranges_text(u['ranges'])}"] if u.get("ranges") else []),
        f"- Largest per-attribute marginal error: {max(u['marginal_error'].values()):.2e} (0 = exact)",
        f"- Model: {u['model_path']}",
    ]


def ranges_text(g: dict[str, Any]) -> str:
    """The workload's ranges over the tables consistent with the release, for a reader."""
    if g.get("basis") == "dp-noise" and not g.get("share_with_interval"):
        return (
            "95 % intervals from the noise: no query of the workload lies inside one measured marginal "
            "(the model's estimates alone)"
        )
    if g.get("basis") == "dp-noise":
        return (
            f"95 % intervals from the noise: {share_text(g['share_inside'])} of true answers inside (about 95 % "
            f"expected), for the {share_text(g.get('share_with_interval', 1.0))} of queries that lie inside a "
            f"measured marginal (the others have the model's estimate alone); median width "
            f"{g['median_relative_width']:.2f} x the true count"
        )
    out = (
        f"Ranges the release allows: {share_text(g['share_inside'])} of true answers inside "
        f"(any table consistent with the release), {share_text(g['share_sharp'])} of ranges sharp; "
        f"median width {g['median_relative_width']:.2f} x the true count"
    )
    widest = g.get("widest") or []
    if widest:
        w = widest[0]
        out += (
            f"; widest: {w['query']} — estimate {w['estimate']:,.0f}, range {w['lower']:,.0f} to "
            f"{w['upper']:,.0f}, true {w['actual']:,.0f}"
        )
    if g.get("outside"):
        out += f"; OUTSIDE the range (a defect, please report): {'; '.join(g['outside'])}"
    return out


def kl_text(u: dict[str, Any]) -> str:
    """The KL-divergence with what it means, and a remark when publishing every attribute
    alone would have kept more."""
    if u.get("kl_infinite"):
        n0 = u.get("records_with_zero_model_probability", "some")
        shared, lost = u.get("kl_shared_support"), u.get("lost_mass")
        finite = (
            f"; on the shared support {shared:.4f}, with {100 * lost:.1f} % of the input's records outside it"
            if isinstance(shared, (int, float)) and isinstance(lost, (int, float))
            else ""
        )
        return f"KL-divergence infinite ({n0} original record(s) get probability 0 under the estimate{finite})"
    kl, e, ref = u["kl_divergence"], u.get("exp_minus_kl"), u.get("kl_all_attributes_alone")
    out = f"KL-divergence {kl:.4f} (0 = perfect"
    if e is not None:
        out += (
            f"; exp(-KL) = {e:.3f}: on average a record is {e:.0%} as likely under the estimate as in the original"
            if e >= 0.001
            else f"; exp(-KL) = {e:.1e}: the estimate spreads the records over many more combinations than the "
            "original holds, so a typical record gets a small fraction of its probability: compare it with "
            "publishing every attribute alone rather than with 0"
        )
    if ref is not None:
        out += f"; publishing every attribute alone would give {ref:.4f}"
    out += ")"
    if ref is not None and kl > ref + 1e-9:
        out += (
            f". Worse than publishing every attribute alone ({kl:.4f} > {ref:.4f}): the release loses more than its "
            "attributes' relationships; consider fewer or coarser rules, or another decomposition"
        )
    return out


def release_facts(release: Release) -> list[str]:
    """Records removed by suppression, the cost of a floor and what the treatments changed,
    as the report's lines."""
    gone = [removal_text(release.removed, release.n_records)] if release.removed is not None else []
    homes = household_text(release.household) if release.household else []
    return gone + k_preview_text(release.k_preview or {}) + homes + perturbation_text(release.perturbation or {})
