"""Rendering a release, a check, an evaluation and the rules on the console."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from versapub.cli.app import (
    VERDICT_MARKUP,
    err,
    out,
)

if TYPE_CHECKING:
    from rich.table import Table as RichTable

    from versapub.inspect import Evaluation, RulesReport
    from versapub.release.value import Release
    from versapub.verify.check import CheckReport


_SUMMARY_COLS = ("table", "kind", "attributes", "enforces", "rows", "groups", "achieved", "alone")


def _summary_table(rows: list[dict[str, Any]]) -> RichTable | None:
    """The tables as a terminal table, or None when it would not fit (words never split)."""
    from rich.table import Table as RichTable

    t = RichTable(title_justify="left", expand=False)
    longest = {c: max((len(w) for r in rows for w in str(r[c]).split()), default=4) for c in _SUMMARY_COLS}
    need = sum(max(longest[c], len(c)) + 3 for c in _SUMMARY_COLS)
    if not out.is_terminal or need > out.width:
        return None
    for c in _SUMMARY_COLS:
        t.add_column(c, min_width=max(longest[c], len(c)), overflow="fold")
    for r in rows:
        enf = str(r["enforces"]) + (
            f" (covers your {r['covers']})" if r["covers"] and r["covers"] != r["enforces"] else ""
        )
        t.add_row(*(enf if c == "enforces" else str(r[c]) for c in _SUMMARY_COLS))
    return t


def _guarantee_text(release: Release) -> str:
    """The release's guarantee, or each rule's own when no rule has the release's."""
    release_g = release.guarantee.to_manifest()
    own = {r: g.to_manifest() for r, g in release.rule_guarantees.items()}
    if not own or release_g in own.values():
        return release.guarantee.describe()
    shown = [
        f"{r.rhs} {spec['name']}(" + ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name") + ")"
        for r, spec in own.items()
    ]
    return "each rule its own guarantee: " + "; ".join(shown)


def _written_verdict(out_dir: Path) -> dict[str, Any]:
    """The verdict of a release just written, as its ``check.json`` records it."""
    got = json.loads((out_dir / "check.json").read_text(encoding="utf-8"))
    return {
        "verdict": got.get("verdict", "passed" if got.get("ok") else "failed"),
        "attention": list(got.get("attention") or []),
    }


def _print_computed(release: Release) -> None:
    """The summary's figures computed on the input while publishing: what ``--k 3``/``--k 5``
    would cost, the household figures, what the treatments changed."""
    from versapub.release.perturbed import perturbation_text
    from versapub.release.value import household_text, k_preview_text

    for line in k_preview_text(release.k_preview or {}):
        out.print(f"[dim]  {escape(line)}[/]", soft_wrap=True)
    for line in household_text(release.household) if release.household else []:
        out.print(f"  {escape(line)}", soft_wrap=True)
    for line in perturbation_text(release.perturbation or {}):
        out.print(f"  {escape(line)}", soft_wrap=True)


def _print_summary(release: Release, out_dir: Path, seconds: float) -> None:
    from versapub.reports.summary import COLUMN_NOTES, show, summary_rows

    rows = summary_rows(release)
    out.print(f"[bold]Release {escape(str(out_dir))}[/]")
    table = _summary_table(rows)
    if table is not None:
        out.print(table)
    else:  # one block per table: readable at any width and in a log
        for r in rows:
            out.print(f"  {r['table']} ({r['kind']}): {escape(r['attributes'])}", soft_wrap=True)
            if r["enforces"] != "-":
                covers = f"  (covers your rule {r['covers']})" if r["covers"] and r["covers"] != r["enforces"] else ""
                out.print(f"      enforces {escape(r['enforces'])}{escape(covers)}", soft_wrap=True)
            out.print(
                f"      rows {r['rows']}, groups {r['groups']}, achieved {r['achieved']}, alone {r['alone']}",
                soft_wrap=True,
            )
    for note in COLUMN_NOTES.values():
        out.print(f"[dim]  {escape(note)}[/]", soft_wrap=True)
    for t in release.tables:  # what an anonymizer reports about its table (msa-decomposition: l_per, noise)
        for line in t.table.stats.get("notes", []):
            out.print(f"  {t.name}: {escape(line)}", soft_wrap=True)
    dropped = release.input.rows_dropped_missing
    out.print(
        f"{release.n_records} records, {len(release.attributes)} attributes, "
        f"{len(release.reduction.rules)} rule(s) enforced"
        + (f" ({len(release.reduction.dropped)} implied rule(s) dropped)" if release.reduction.dropped else "")
        + (f", {dropped} row(s) with missing cells dropped" if dropped else "")
        + f"; {_guarantee_text(release)}.",
        soft_wrap=True,
    )
    _print_computed(release)
    if release.removed is not None:
        from versapub.release.value import removal_text

        out.print(escape(removal_text(release.removed, release.n_records)), soft_wrap=True)
    removed = release.columns.get("removed") or []
    if removed:
        out.print(f"Removed as identifying: {', '.join(show(c) for c in removed)}.", soft_wrap=True)
    by_others = release.columns.get("by_others") or []
    if by_others:
        out.print(
            f"Declared {release.columns.get('others')} by --others: {len(by_others)} column(s) "
            f"({', '.join(show(c) for c in by_others[:6])}{', ...' if len(by_others) > 6 else ''}).",
            soft_wrap=True,
        )
    allowed = [a for a in release.associations if a.allowed]
    for a in allowed:
        out.print(f"Allowed proxy (--allow-proxy): {escape(a.describe())}.", soft_wrap=True)
    listed = [a for a in release.associations if not a.allowed]
    if listed:
        out.print(
            "Unprotected columns associated with protected ones (lambda: knowing the protected attribute "
            "predicts the column / the column predicts it; see the report): "
            + "; ".join(f"{show(a.column)} ~ {show(a.sensitive)} {a.derived:.0%} / {a.determines:.0%}" for a in listed)
            + ".",
            soft_wrap=True,
        )
    for p in release.proxy_sets:
        label = "Allowed set of columns (--allow-proxy)" if p.allowed else "Columns that together predict"
        out.print(f"{label}: {escape(p.describe())}.", soft_wrap=True)
    for note in release.notes:
        out.print(f"[dim]  note: {escape(note)}.[/]", soft_wrap=True)
    verdict = _written_verdict(out_dir)
    out.print(
        f"Schema in GNF: {'yes' if release.gnf.ok else 'NO'}; verification passed: "
        f"{VERDICT_MARKUP[verdict['verdict']]}; {seconds:.2f} s."
    )
    for line in verdict["attention"]:
        err.print(f"[bold yellow]needs attention:[/] {escape(line)}.", soft_wrap=True)
    if release.decomposition_trace:
        steps = ", ".join(
            f"{s['kl']:.4f}" + (f" (+{s['added'][0]} to {s['added'][1]})" if s["added"] else " (initial)")
            for s in release.decomposition_trace
        )
        out.print(f"GD add-back KL trace: {steps}", soft_wrap=True)
    if release.utility:
        from versapub.reports.summary import kl_text, ranges_text, workload_text

        u = release.utility
        out.print(
            f"Utility: {escape(kl_text(u))}; {escape(workload_text(u['relative_error'], u['workload']))}.",
            soft_wrap=True,
        )
        if u.get("ranges"):
            out.print(escape(ranges_text(u["ranges"])) + ".", soft_wrap=True)
    for w in release.warnings:
        err.print(f"[bold yellow]warning:[/] {escape(w)}.", soft_wrap=True)
    out.print(f"Release:  {out_dir}/ (manifest.json, tables)")
    out.print(f"Report:   {out_dir / 'report.html'} (open in a browser; text version: report.md)")


def _print_collection(release: Release, out_dir: Path | None, seconds: float) -> None:
    section = release.marginals or {}
    out.print(f"[bold]Collection of anonymized marginals{' ' + escape(str(out_dir)) if out_dir else ''}[/]")
    levels = {t["name"]: t for t in section.get("tables", [])}
    for t in release.tables:
        info = levels.get(t.name, {})
        written = ", ".join(f"{a}@{lv}" for a, lv in (info.get("levels") or {}).items())
        st = t.table.stats
        out.print(
            f"  {t.name} ({info.get('role', 'given')}): {escape(written)} — {st.get('rows')} rows, "
            f"{st.get('groups')} cells of non-sensitive values, smallest {st.get('achieved')}",
            soft_wrap=True,
        )
    for c in (section.get("checks") or {}).get("checks", []):
        out.print(f"  {'ok  ' if c['ok'] else 'FAIL'} {escape(c['message'])}", soft_wrap=True)
    for st in section.get("search") or []:
        what = f"+ {st['added']}" if st["added"] else "start"
        out.print(f"  KL {st['kl']:.4f}  {escape(what)}", soft_wrap=True)
    kl = section.get("kl_closed_form")
    if kl is not None:
        out.print(f"KL-divergence of the maximum-entropy estimate: {kl:.4f} (closed form).")
    if release.utility:
        u = release.utility
        r = u["relative_error"]
        out.print(
            f"Utility: KL-divergence {u['kl_divergence']:.4f} ({escape(str(u.get('model_path')))}); relative "
            f"error of {r['n_queries']} COUNT queries: mean {r['mean']:.3f}, median {r['median']:.3f}.",
            soft_wrap=True,
        )
    out.print(f"{release.n_records} records; verification passed; {seconds:.2f} s.")
    if out_dir is not None:
        out.print(f"Release:  {out_dir}/ (manifest.json, tables)")
        out.print(f"Report:   {out_dir / 'report.html'} (open in a browser; text version: report.md)")


def render_check(release_dir: Path, rep: CheckReport) -> None:
    """``versapub check``'s text: the verdict, what it was checked against, every check."""
    v = rep.verification
    out.print(f"Release {release_dir}: {VERDICT_MARKUP[rep.verdict]}")
    out.print(f"  {escape(rep.checked_against)}", soft_wrap=True)
    if rep.rules_required is not None:
        out.print(f"  rules checked: the {rep.rules_required} rule(s) of your requirement (not the manifest's)")
    out.print(f"  file checks: {len(v.findings) - len(v.failures)} of {len(v.findings)} passed")
    for f in v.findings:
        if f.ok and f.attention:
            out.print(f"  WARN {escape(f'[{f.check}] {f.message}')}", soft_wrap=True)
    for f in rep.findings_of("schema"):
        out.print(f"  {'ok  ' if f.ok else 'FAIL'} {escape(f.message)}")
    if rep.attacks:
        out.print(f"  attacks: {escape(rep.attacks[0].to_json()['target'])}", soft_wrap=True)
    for a in rep.attacks:
        out.print(f"  {'ok  ' if a.ok else 'FAIL'} {a.method} attack: {escape(a.summary())} ({a.seconds:.2f} s)")
        for d in a.disclosures[:20]:
            out.print(f"         {escape(d.describe())}")
        if a.disclosed > 20:
            out.print(f"         ... {a.disclosed - 20:,} more disclosed target(s) (check.json lists the first 1,000)")
    for p in rep.posterior:
        mark = "FAIL" if not p["ok"] else ("ok  " if p.get("bounded", True) else "info")
        out.print(f"  {mark} posterior {escape(p['message'])}", soft_wrap=True)
    for ka in rep.kind_attacks:  # e.g. sa-groups: the adversary with background knowledge
        below = any(r["below"] for r in ka["rows"])  # targets narrowed below l: a finding to read
        mark = "FAIL" if not ka["ok"] else ("NOTE" if below else "ok  ")
        out.print(
            f"  {mark} {ka['kind']} attack ({escape(ka['targets'])}): {escape(ka['message'])}",
            soft_wrap=True,
        )
        for r in ka["rows"]:
            out.print(
                f"         knowing {r['known']} other sensitive value(s): {r['below']:,} target(s) "
                f"({r['share']:.1%}) below l = {r['l']} for {escape(r['attribute'])}; fewest candidates "
                f"{r['min_candidates']}",
                soft_wrap=True,
            )
    said: dict[tuple[str, str], list[str]] = {}  # one line per verdict and message (many noisy tables say one)
    for i in rep.identity:
        mark = "FAIL" if not i["ok"] else ("WARN" if i.get("attention") else ("ok  " if rep.k is not None else "info"))
        said.setdefault((mark, str(i["message"])), []).append(str(i["table"]))
    for (mark, message), tables in said.items():
        out.print(f"  {mark} identity risk of {escape(', '.join(tables))}: {escape(message)}", soft_wrap=True)
    for c in rep.collection:  # --k: the tables as a collection of marginals (k-link, k-combinatorial)
        where = f" {escape(c['file'])}" if c["file"] else ""
        out.print(
            f"  {'ok  ' if c['ok'] else 'FAIL'} {escape(c['check'])}{where}: {escape(c['message'])}", soft_wrap=True
        )
    for f in rep.findings_of(*rep.COLLECTION_CHECKS):  # a collection of marginals: its own checks
        where = f" {escape(f.file)}" if f.file else ""
        out.print(f"  {'ok  ' if f.ok else 'FAIL'} {escape(f.check)}{where}: {escape(f.message)}", soft_wrap=True)
    adv = rep.adversary
    if adv and adv.get("withheld"):  # a differentially private release: nothing computed without noise
        out.print(f"  {attack_mark(adv)} attacks: {escape(str(adv['withheld']))}", soft_wrap=True)
    elif adv:
        sample = adv.get("sample")
        of = f" of a seeded sample of {sample['records']:,} input records" if isinstance(sample, dict) else ""
        out.print(
            f"  attacks on everything published ({adv['n_attacks']} original records{of} as targets, records drawn "
            "from the release as an adversary reads it; 95 % intervals"
            + (
                f", each share within ±{100 * adv['half_width']:.1f} points"
                if isinstance(adv.get("half_width"), float)
                else ""
            )
            + "):",
            soft_wrap=True,
        )
        if isinstance(sample, dict):
            out.print(f"    on the Dask backend {escape(str(sample['note']))}", soft_wrap=True)
        for r in adv["rules"]:
            out.print(f"  {attack_mark(r)} inference {escape(r['message'])}", soft_wrap=True)
        for t in adv["tables"]:
            out.print(f"  {attack_mark(t)} {escape(str(t['table']))}: {escape(t['message'])}", soft_wrap=True)
    if rep.perturbation:
        from versapub.verify.treatments.perturbation_effect import effect_lines

        out.print("  what the treatments changed (the files against the original):")
        for line in effect_lines(rep.perturbation):
            out.print(f"  info {escape(line)}", soft_wrap=True)
    bad_h = [f for f in rep.hygiene if not f.ok]
    out.print(f"  row-order hygiene: {'ok' if not bad_h else f'{len(bad_h)} file(s) out of order'}")
    for f in [*v.failures, *bad_h]:
        if f.check != "schema":
            out.print(f"  FAIL [{f.check}] {escape(f.file or '')} {escape(f.message)}")


def attack_mark(found: dict[str, Any]) -> str:
    """An attack's mark: ``FAIL``, ``WARN`` (passed, needs attention: an allowed proxy, a
    figure far above its baseline) or ``ok``."""
    return "FAIL" if not found["ok"] else ("WARN" if found.get("attention") else "ok  ")


def render_evaluation(ev: Evaluation) -> None:
    """``versapub evaluate``'s text."""
    kl, re_, w = ev.kl, ev.relative_error, ev.workload
    kl_text = (
        f"infinite ({kl.n_zero_probability} of {kl.n_distinct} distinct records get probability 0)"
        if math.isinf(kl.value)
        else f"{kl.value:.6f} over {kl.n_distinct} distinct records"
    )
    out.print(f"Release {ev.release}: {ev.n_records} records, model: {ev.model_path}")
    out.print(f"KL-divergence: {kl_text}")
    from versapub.reports.summary import workload_text

    text = workload_text(re_.to_json(), w)
    out.print(
        f"{text[:1].upper()}{text[1:]} (seed = {w['seed']})"
        + (f"; {re_.redrawn} empty queries were redrawn" if re_.redrawn else ""),
        soft_wrap=True,
    )
    if ev.ranges:
        from versapub.reports.summary import ranges_text

        out.print(escape(ranges_text(ev.ranges)), soft_wrap=True)
    worst = max(ev.marginal_error.values()) if ev.marginal_error else 0.0
    out.print(f"Largest per-attribute marginal error: {worst:.2e} (0 = every published marginal is exact)")
    for name, mt in ev.metrics.items():
        norm = mt["normalized_average_class_size"]
        out.print(
            f"{name}: {mt['classes']} classes/groups, discernibility {mt['discernibility']:,}, average class size "
            f"{mt['average_class_size']:.2f}"
            + (f" ({norm:.2f} x k)" if norm is not None else "")
            + f", generalization loss {mt['generalization_loss']:.3f}, information um {mt['information']:.3f}, "
            f"suppressed records {mt['suppressed_records']}",
            soft_wrap=True,
        )
    from versapub.reports.summary import functional_text

    for name, fm in ev.functional.items():
        out.print(escape(functional_text(name, fm)), soft_wrap=True)
    for a, e in ev.pram.items():
        out.print(
            f"PRAM of {escape(a)}: largest marginal error {e['published']:.4f} as published, {e['corrected']:.4f} "
            "corrected by the published matrix (T* P^-1; the workload above is not corrected, query corrects "
            "each count)",
            soft_wrap=True,
        )
    if ev.perturbation:
        from versapub.verify.treatments.perturbation_effect import effect_lines

        out.print("What the treatments changed (the files against the original):")
        for line in effect_lines(ev.perturbation):
            out.print(f"  {escape(line)}", soft_wrap=True)
    t = ev.timings_s
    out.print(f"Timings: load {t['load']:.2f} s, KL {t['kl']:.2f} s, queries {t['queries']:.2f} s")


def render_rules(rep: RulesReport) -> None:
    """``versapub rules``' text, up to the feasibility (and the schema when every rule is feasible)."""
    from versapub.reports.summary import show

    out.print(
        f"[bold]Table[/]: {escape(rep.input)} — {rep.n_records} records, attributes: "
        f"{escape(', '.join(show(a) for a in rep.attributes))}",
        soft_wrap=True,
    )
    out.print(f"[bold]Guarantee[/]: {escape(rep.guarantee.describe())}", soft_wrap=True)
    classic = rep.classic_text()
    if classic is not None:  # no rule: nothing about rules to say
        out.print(escape(classic), soft_wrap=True)
        return
    red = rep.reduction
    out.print(f"\n[bold]Irreducible rules[/] ({len(red.rules)} of {len(red.given)} given):")
    for r in red.rules:
        mine = rep.own_guarantee(r)
        note = "" if mine is None else f"  [dim](its guarantee: {mine.describe()})[/]"
        out.print(f"  {escape(str(r))}{note}", soft_wrap=True)
    if red.dropped:
        out.print("[bold]Dropped rules[/]:")
        for d in red.dropped:
            out.print(f"  {escape(str(d.rule))}  — {escape(d.reason)}", soft_wrap=True)
    out.print(
        "\n[bold]Feasibility[/] (sensitive attribute published alone, or as far as the anonymizer may generalize it):"
    )
    for f in rep.feasibility:
        top = rep.largest.get(f.rule)
        most = f"; l up to {top} is feasible" if top is not None else ""
        out.print(
            f"  [{'green' if f.feasible else 'red'}]{'ok ' if f.feasible else 'NO '}[/] {escape(f.message() + most)}",
            soft_wrap=True,
        )
    release = rep.release
    schema, gnf = (release.schema, release.gnf) if release is not None else (rep.schema, rep.gnf)
    if schema is None or gnf is None:
        return
    out.print("\n[bold]Rule graph[/] (edges LHS attribute -> RHS attribute):")
    for a, b in rep.edges:
        out.print(f"  {escape(show(a))} -> {escape(show(b))}")
    name = release.decomposition if release is not None else rep.decomposition
    before = "" if release is not None else " (before anything is anonymized: publishing is refused, below)"
    out.print(f"\n[bold]{escape(name.upper())} schema[/]{before}:")
    for t in schema.tables:
        out.print(f"  {escape(t.describe())}", soft_wrap=True)
    out.print("\nWhy every rule holds:")
    for v in gnf.verdicts:
        out.print(f"  - '{escape(str(v.rule))}' {escape(v.plain(rep.promise(v.rule)))}", soft_wrap=True)
    out.print(f"[dim]{escape(gnf.explain())}[/]", soft_wrap=True)
