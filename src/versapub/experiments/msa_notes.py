"""``docs/results-msa.md``'s "Why the DIFFERS differ", written from the runs (``runs.csv``,
``table7.json``) and the embedded UCI Adult file: every number is computed here, so no
sentence can contradict the runs it explains."""

from __future__ import annotations

import csv
import gzip
import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from versapub.experiments.msa import lookup, means


def _axes(rows: Sequence[dict[str, str]], sweep: str, key: str) -> list[int]:
    return sorted({int(r[key]) for r in rows if r["sweep"] == sweep})


def _uci() -> tuple[list[list[str]], list[list[str]]]:
    """UCI Adult's training file as read: every record, and those without a missing value."""
    from versapub.datasets import data_path

    with gzip.open(data_path("adult_uci", "adult.data.gz"), "rt", encoding="utf-8") as f:
        rows = [[c.strip() for c in r] for r in csv.reader(f) if r]
    return rows, [r for r in rows if "?" not in r]


def _table7(table7: Sequence[dict[str, Any]]) -> str:
    whole, clean = _uci()
    by = {str(t["column"]): t for t in table7}
    ages = (len({r[0] for r in whole}), len({r[0] for r in clean}))
    hours = (len({r[12] for r in whole}), len({r[12] for r in clean}))
    top_w, top_c = Counter(r[7] for r in whole).most_common(1)[0], Counter(r[7] for r in clean).most_common(1)[0]
    paper = by.get("relationship", {}).get("paper_l_per") or 3
    occ, wc = by.get("occupation", {}), by.get("workclass", {})
    return (
        f"- **Table 7.** The paper's {by['age']['paper_distinct']} ages are the *whole* training file's ({ages[0]} "
        f"before the records with a missing value are removed, {ages[1]} after); its "
        f"{by['hours-per-week']['paper_distinct']} hours-per-week values are not the training file's ({hours[0]} with "
        f"or without them). Relationship's `l_per` is `floor({len(clean):,} / {top_c[1]:,} {top_c[0].lower()}s) = "
        f"{len(clean) // top_c[1]}` here (and {len(whole) // top_w[1]} in the whole file, {len(whole):,} / "
        f"{top_w[1]:,}); the paper's {paper} would need at most {len(clean) // int(paper):,} of them. The paper's "
        f'"Work-class" row ({occ.get("paper_distinct")} values, `l_per` {occ.get("paper_l_per")}) matches the '
        f"file's `occupation` ({occ.get('distinct')} values, `l_per` {occ.get('l_per')}) and not its `workclass` "
        f"({wc.get('distinct')} values, `l_per` {wc.get('l_per')}), so the experiments use `occupation` (see the "
        "introduction)."
    )


def _ssa(rows: Sequence[dict[str, str]]) -> list[str]:
    qs, ls = _axes(rows, "ssa", "q"), _axes(rows, "ssa", "l")
    if not qs or not ls:
        return []
    kl = means(rows, "ssa", ("q", "l", "method"), "kl")
    dec = {x: [lookup(kl, q, x, "msa-decomposition") for q in qs] for x in ls}
    growth = {x: v[-1] / v[0] - 1 for x, v in dec.items()}
    mon = {x: lookup(kl, qs[-1], x, "mondrian") / lookup(kl, qs[0], x, "mondrian") for x in ls}
    top = ls[-1]
    out = [
        f"- **Figures 2–5, decomposition's KL grows with q.** With {qs[0]} quasi-identifiers many records share their "
        "QI values, and the estimate pools the groups of such records; adding Education, Hours per Week and "
        f"Relationship (q = {qs[1]}..{qs[-1]}) makes almost every record alone with its QI values, and the KL "
        f"approaches `log l` (at l = {top}: {dec[top][0]:.2f} at q = {qs[0]}, {dec[top][-1]:.2f} at q = {qs[-1]}, "
        f"`log {top}` = {math.log(top):.2f}). From q = {qs[0]} to {qs[-1]} it grows by "
        f"{min(growth.values()):.0%} to {max(growth.values()):.0%} (by l), against Mondrian's factor "
        f"{min(mon.values()):.1f} to {max(mon.values()):.1f}, so the paper's comparison holds; \"almost does not "
        'grow" does not.'
    ]
    sec = means(rows, "ssa", ("q", "l", "method"), "seconds")
    q = qs[-1]
    d_s = [lookup(sec, q, x, "msa-decomposition") for x in ls]
    m_s = [lookup(sec, q, x, "mondrian") for x in ls]
    speed = [m / d for d, m in zip(d_s, m_s, strict=True)]
    out.append(
        "- **Figure 6, time.** versapub's Algorithm 1 runs one iteration per SA-group (with one sensitive attribute, "
        f"on bucket counts alone), so its time falls with `l` (fewer groups: {d_s[0]:.2f} s at l = {ls[0]}, "
        f"{d_s[-1]:.2f} s at l = {ls[-1]}) instead of staying flat at the paper's `O(n^2)`; and versapub's Mondrian "
        f"is vectorized ({min(m_s):.2f}–{max(m_s):.2f} s, not the paper's 75–90 s). The decomposition is "
        + (
            f'faster at every `l`, but by {min(speed):.2f}–{max(speed):.2f}×, not "greatly".'
            if min(speed) > 1
            else f"{min(speed):.2f}–{max(speed):.2f}× as fast."
        )
    )
    return out


def _msa(rows: Sequence[dict[str, str]]) -> list[str]:
    ds, lps = _axes(rows, "msa", "d"), _axes(rows, "msa", "l")
    if not ds or not lps:
        return []
    kl = means(rows, "msa", ("d", "l"), "kl")
    paper = means(rows, "msa", ("d", "l"), "kl_paper")
    bound = means(rows, "msa", ("d", "l"), "log_prod_l")
    dev = max(abs(lookup(kl, d, x) - lookup(bound, d, x)) / lookup(bound, d, x) for d in ds for x in lps)
    d, x = ds[-1], lps[-1]
    sec = means(rows, "msa", ("d", "l"), "seconds")
    one = [lookup(sec, 1, y) for y in lps] if 1 in ds else []
    out = [
        "- **Figure 7, the paper's own measure.** Reading each record's values as uniform over its group's sets, "
        "attribute by attribute, charges `log |G.S^i|`, and the sets of Hours per Week and Relationship hold more "
        f"than their `l_i = 2` values (a group of {x} records holds up to {x} distinct hours): at d = {d}, "
        f"l_pri = {x} it is {lookup(paper, d, x):.2f} against `log(prod l_i)` = {lookup(bound, d, x):.2f}. The "
        f"maximum-entropy estimate, which also knows `T^S`, stays within {dev:.1%} of it."
    ]
    if one:
        out.append(
            f"- **Figure 8, d = 1.** The same per-group loop: {min(one):.2f}–{max(one):.2f} s, "
            + ("falling with `l`." if one[-1] < one[0] else "not falling with `l`.")
        )
    return out


def _attack(rows: Sequence[dict[str, str]]) -> list[str]:
    attack = [r for r in rows if r["sweep"] == "attack" and r.get("attack")]
    if not attack:
        return []
    res = [r for r in json.loads(attack[0]["attack"]) if r["known"] >= 1]
    if not res:
        return []
    first = res[0]
    by_known = {r["known"]: r for r in res if r["attribute"] == first["attribute"]}
    k_max = max(by_known)
    return [
        "- **§5.2, background knowledge.** Noise drawn from linkable values guarantees that every value of a set "
        "co-occurs in `T^S` with *some* primary value of the group — not with the target's own values of the "
        "attributes the adversary knows. Knowing one other sensitive value of a target already leaves "
        f"{by_known[1]['share']:.1%} of the records with fewer than {first['l']} candidate {first['attribute']} "
        f"values (fewest {by_known[1]['min_candidates']}); knowing {k_max}, {by_known[k_max]['share']:.1%}. The "
        "`(l_1, ..., l_d)` guarantee holds for an adversary who knows only QI values (the verifier checks it; the "
        "attack's first row is always zero); the paper's stronger claim does not hold on Adult."
    ]


def _noise(rows: Sequence[dict[str, str]]) -> list[str]:
    all_noise = means(rows, "noise", ("method", "l", "l2"), "noise")
    ours = {k[1:]: v for k, v in all_noise.items() if k[0] == "msa-decomposition"}
    forced = {k[1:]: v for k, v in all_noise.items() if k[0] == "work-class-primary"}
    if not ours or not forced:
        return []
    small = {k: v for k, v in forced.items() if int(k[0]) <= 5 and int(k[1]) <= 5}
    (fa, fb), ftop = max(small.items(), key=lambda kv: kv[1])
    top55 = ours.get(("5", "5"), math.nan)
    near = abs(top55 - 4733) / 4733
    permissible = max((v for k, v in ours.items() if int(k[1]) <= 3), default=math.nan)
    return [
        "- **Figure 9 needs §5.1's primary.** The paper's text keeps Work-class primary in §6.2, but then a smaller "
        "`l_Work-class` than `l_Education` puts noise into nearly every group (at "
        f"`l_Work-class = {fa}, l_Education = {fb}`: {ftop:,.0f} values); the primary chosen by §5.1's suggestion "
        f"(the attribute with the larger `l`) puts its peak where the figure does: {top55:,.0f} at (5, 5) against "
        f"the figure's 4,733 ({(top55 - 4733) / 4733:+.1%}{', within' if near <= 0.25 else ', beyond'} the 25% "
        f"tolerance), though within the permissible range it needs at most {permissible:,.0f} values, "
        f"{(permissible - 675) / 675:+.1%} from the figure's 675. Both grids are drawn."
    ]


def why_differs(rows: Sequence[dict[str, str]], table7: Sequence[dict[str, Any]]) -> list[str]:
    """The section's bullets (Markdown), from the runs."""
    bullets = ([_table7(table7)] if table7 else []) + _ssa(rows) + _msa(rows) + _attack(rows) + _noise(rows)
    return ["### Why the DIFFERS differ", "", *bullets, ""] if bullets else []


__all__ = ["why_differs"]
