"""``docs/results.md``'s "Summary and discussion of the differences", written from the runs:
every number is computed here from each dataset's ``runs.csv`` (and, for multi-SA's
integer program, from ``bip.json`` that ``benchmarks/decomposition_compare.py --bip --json``
writes), so no sentence can contradict the runs it explains."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from versapub.experiments.runs import read_runs

Rows = list[dict[str, str]]


def _f(r: dict[str, str], key: str) -> float:
    v = r.get(key)
    return math.nan if v in (None, "") else float(v)


def _sel(rows: Rows, **want: object) -> Rows:
    return [r for r in rows if not r.get("error") and all(r[k] == str(v) for k, v in want.items())]


def _mean(rows: Rows, key: str, **want: object) -> float:
    vals = [_f(r, key) for r in _sel(rows, **want)]
    vals = [v for v in vals if math.isfinite(v)]
    return float(np.mean(vals)) if vals else math.nan


def _xs(rows: Rows, sweep: str, method: str = "uad") -> list[int | float]:
    out = sorted({float(r["x"]) for r in _sel(rows, sweep=sweep, method=method)})
    return [int(x) if x.is_integer() else x for x in out]


def _span(vals: Sequence[float], fmt: str = "{:.2f}", unit: str = "") -> str:
    a, b = min(vals), max(vals)
    return fmt.format(a) + unit if fmt.format(a) == fmt.format(b) else f"{fmt.format(a)}–{fmt.format(b)}{unit}"


def _paired(rows: Rows, key: str, a: str, b: str, **want: object) -> list[tuple[float, float]]:
    """Per run, (method a's value, method b's value) at one point."""
    by = {(r["run"], r["method"]): _f(r, key) for r in _sel(rows, **want)}
    return [(by[(run, a)], by[(run, b)]) for run in sorted({k[0] for k in by}) if (run, a) in by and (run, b) in by]


def _beats(rows: Rows, better: str, worse: str, sweeps: Sequence[str]) -> bool:
    """``better`` has the lower mean KL and relative error at every point of the sweeps."""
    for sweep in sweeps:
        for x in _xs(rows, sweep, better):
            for key in ("kl", "rel_error"):
                if not _mean(rows, key, sweep=sweep, x=_x(x), method=better) < _mean(
                    rows, key, sweep=sweep, x=_x(x), method=worse
                ):
                    return False
    return True


def _x(x: int | float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def _adult_stats(rows: Rows) -> dict[str, Any]:
    """The figures the Adult note quotes, from the runs."""
    cs = [int(c) for c in _xs(rows, "c")]
    runs = len(_sel(rows, sweep="c", x=cs[0], method="uad"))
    methods = sorted({r["method"] for r in rows})
    m = {
        (c, meth): {
            k: _mean(rows, k, sweep="c", x=c, method=meth)
            for k in ("kl", "rel_error", "seconds", "n_tables", "groups", "suppressed", "n_sensitive")
        }
        for c in cs
        for meth in methods
    }
    later = [c for c in cs if c > 1]
    same1 = all(
        len(
            {
                round(_f(r, "kl"), 12)
                for r in _sel(rows, sweep="c", x=1, run=run)
                if r["method"] in ("uad", "gd", "multi-sa")
            }
        )
        == 1
        for run in {r["run"] for r in _sel(rows, sweep="c", x=1)}
    )
    beat_single = all(
        m[(c, a)][k] < m[(c, "single-attribute")][k] for c in cs for a in ("uad", "gd") for k in ("kl", "rel_error")
    )
    beat_multi = all(m[(c, a)]["kl"] < m[(c, "multi-sa")]["kl"] for c in later for a in ("uad", "gd"))
    mono = all(m[(a, "multi-sa")]["kl"] < m[(b, "multi-sa")]["kl"] for a, b in itertools.pairwise(cs))
    speed = [m[(c, "gd")]["seconds"] / m[(c, "uad")]["seconds"] for c in later]
    kl_gain = np.mean([1 - m[(c, "gd")]["kl"] / m[(c, "uad")]["kl"] for c in later])
    re_gain = np.mean([1 - m[(c, "gd")]["rel_error"] / m[(c, "uad")]["rel_error"] for c in later])
    below = {c: sum(g < u - 1e-12 for g, u in _paired(rows, "kl", "gd", "uad", sweep="c", x=c)) for c in cs}
    equal2 = sum(abs(g - u) <= 1e-12 for g, u in _paired(rows, "kl", "gd", "uad", sweep="c", x=2))
    four = [below[c] for c in cs if c >= 4]
    rhs = sorted({part.split("->")[-1].strip() for r in _sel(rows, sweep="c") for part in r["rules"].split(";")})
    n = 10_000  # the sample (§6.1)
    sup = {c: m[(c, "multi-sa")]["suppressed"] / n for c in cs}
    lower_re = [c for c in later if m[(c, "multi-sa")]["rel_error"] < m[(c, "uad")]["rel_error"]]
    ms_uad = [m[(c, "multi-sa")]["seconds"] / m[(c, "uad")]["seconds"] for c in later]
    gd_ms = [m[(c, "gd")]["seconds"] / m[(c, "multi-sa")]["seconds"] for c in later]
    worse_from = next(
        (
            c
            for c in later
            if all(m[(d, "multi-sa")]["rel_error"] > m[(d, "uad")]["rel_error"] for d in later if d >= c)
        ),
        None,
    )
    return {
        "cs": cs,
        "runs": runs,
        "methods": methods,
        "m": m,
        "later": later,
        "same1": same1,
        "beat_single": beat_single,
        "beat_multi": beat_multi,
        "mono": mono,
        "speed": speed,
        "kl_gain": kl_gain,
        "re_gain": re_gain,
        "below": below,
        "equal2": equal2,
        "four": four,
        "rhs": rhs,
        "n": n,
        "sup": sup,
        "lower_re": lower_re,
        "ms_uad": ms_uad,
        "gd_ms": gd_ms,
        "worse_from": worse_from,
    }


def adult(rows: Rows, bip: list[dict[str, object]] | None) -> str:
    st = _adult_stats(rows)
    cs = st["cs"]
    runs = st["runs"]
    methods = st["methods"]
    m = st["m"]
    later = st["later"]
    same1 = st["same1"]
    beat_single = st["beat_single"]
    beat_multi = st["beat_multi"]
    mono = st["mono"]
    speed = st["speed"]
    kl_gain = st["kl_gain"]
    re_gain = st["re_gain"]
    below = st["below"]
    equal2 = st["equal2"]
    four = st["four"]
    rhs = st["rhs"]
    sup = st["sup"]
    lower_re = st["lower_re"]
    ms_uad = st["ms_uad"]
    gd_ms = st["gd_ms"]
    worse_from = st["worse_from"]
    text = [
        f"**Adult (Figures 1–3).** {len(methods)} methods × c = {cs[0]}..{cs[-1]} × {runs} random rule sets, "
        f"{len(_sel(rows, sweep='c')):,} publications and evaluations. "
        + (
            "Reproduced: for c = 1 multi-SA, GD and UAD publish the same single Anatomy table (identical KL in all "
            f"{runs} runs); "
            if same1
            else "For c = 1 the three methods do not always publish the same table; "
        )
        + ("GD and UAD beat single-attribute publishing everywhere " if beat_single else "")
        + ("and multi-SA on KL for every c > 1; " if beat_multi else "")
        + ("multi-SA degrades monotonically with c; " if mono else "")
        + f"UAD is {_span(speed, '{:.1f}', '×')} faster than GD (ratio of the mean times at each c > 1). "
        "Three differences:",
        "",
        f'1. *GD is better than UAD, not "nearly identical"* (KL {kl_gain:.0%} lower on average over c > 1, '
        f"relative error {re_gain:.0%} lower). Per run, GD's KL is below UAD's in {below[2]} of {runs} rule sets at "
        f"c = 2 (equal in {equal2}) and in {_span(four, '{:.0f}')} of {runs} for c ≥ 4. The data show why: GD "
        f"publishes more, overlapping tables (mean {m[(2, 'gd')]['n_tables']:.1f} tables at c = 2 rising to "
        f"{m[(cs[-1], 'gd')]['n_tables']:.1f} at c = {cs[-1]}, against UAD's "
        f"{_span([m[(c, 'uad')]['n_tables'] for c in later], '{:.1f}')} disjoint tables), so it keeps correlations "
        "*across* UAD's colour classes that UAD's disjoint tables lose entirely. The paper's Figure 1 shows the two "
        "curves close; we cannot tell from the text whether its GD ran the add-back to the end as Algorithm 1 says "
        "(ours does, and stops only when no GNF-preserving pair is left).",
    ]
    if lower_re:
        shown = " and ".join(
            f"{m[(c, 'multi-sa')]['rel_error']:.3f} vs {m[(c, 'uad')]['rel_error']:.3f}" for c in lower_re
        )
        text.append(
            f"2. *Multi-SA has a lower relative error than UAD at c = {', '.join(map(str, lower_re))}* ({shown}; KL "
            f"is still worse). On the Adult sample only {len(rhs)} attributes ({', '.join(rhs)}) are ever a rule's "
            "RHS at l = 2 (the others have a value above half of the records), so multi-SA has on average "
            + " and ".join(f"{m[(c, 'multi-sa')]['n_sensitive']:.1f} sensitive attributes at c = {c}" for c in lower_re)
            + ". With few sensitive attributes its groups stay small ("
            + ", ".join(f"{m[(c, 'multi-sa')]['groups']:,.0f} groups at c = {c}" for c in lower_re)
            + f") and it suppresses {_span([100 * sup[c] for c in lower_re], '{:.0f}', ' %')} of the records, while "
            "keeping all QI–QI correlations in one table; UAD splits the attributes into disjoint tables."
            + (
                f" From c = {worse_from} on ({_span([m[(c, 'multi-sa')]['n_sensitive'] for c in later if c >= worse_from], '{:.1f}')} "  # noqa: E501
                f"sensitive attributes) its groups grow ({m[(worse_from, 'multi-sa')]['groups']:,.0f} groups at "
                f"c = {worse_from}, {_span([m[(c, 'multi-sa')]['groups'] for c in later if c > worse_from], '{:.0f}')} "
                "afterwards), it suppresses "
                f"{_span([100 * sup[c] for c in later if c >= worse_from], '{:.0f}', ' %')} of the records, and it is "
                "worse than UAD on both measures, as in the paper."
                if worse_from
                else ""
            )
        )
    text.append(
        f"3. *Multi-SA is not orders of magnitude slower* ({_span(ms_uad, '{:.1f}', '×')} UAD's time, "
        f"{_span(gd_ms, '{:.1f}', '×')} faster than GD). versapub solves Algorithm 3's integer program over distinct "
        "sensitive-value combinations instead of one binary variable per tuple; both reach the same optimum "
        "(tested)" + _bip(bip) + ". The difference is our formulation, not the method."
    )
    return "\n".join(text)


def _bip(bip: list[dict[str, object]] | None) -> str:
    if not bip:
        return ""
    var = [int(str(b["vars_aggregated"])) for b in bip]
    agg = [float(str(b["seconds_aggregated"])) for b in bip]
    per = [float(str(b["seconds_per_tuple"])) for b in bip]
    ratio = [p / a for p, a in zip(per, agg, strict=True) if a > 0]
    return (
        f"; on {len(bip)} rule sets of the Adult sample (`benchmarks/decomposition_compare.py --bip`) ours has "
        f"{_span(var, '{:.0f}')} integer variables and takes {_span(agg, '{:.3f}', ' s')}, the paper's per-tuple "
        f"form ({int(str(bip[0]['vars_per_tuple'])):,} binary variables) {_span(per, '{:.1f}', ' s')} with the "
        f"same solver: {_span(ratio, '{:.0f}', '×')} slower"
    )


def _l_sweep(rows: Rows, name: str) -> tuple[str, list[int | float], list[float], float]:
    ls = _xs(rows, "l")
    means = [_mean(rows, "rel_error", sweep="l", x=_x(x), method="uad") for x in ls]
    spread = float(np.ptp(means) / np.mean(means)) if means else math.nan
    return name, ls, means, spread


def _gd_vs_uad(rows: Rows) -> tuple[list[float], dict[int, tuple[float, float]]]:
    gd = _sel(rows, sweep="c", method="gd")
    secs = [_f(r, "seconds") for r in gd]
    pairs = {}
    for r in gd:
        u = _sel(rows, sweep="c", method="uad", x=r["x"], run=r["run"])
        if u:
            pairs[int(r["x"])] = (_f(r, "kl"), _f(u[0], "kl"))
    return secs, pairs


def texas(rows: Rows) -> str:
    cs = [int(c) for c in _xs(rows, "c")]
    runs = len(_sel(rows, sweep="c", x=cs[0], method="uad"))
    l_value = _sel(rows, sweep="c")[0]["l"]
    beats = _beats(rows, "uad", "single-attribute", ("c", "qd", "p"))
    _, ls, means, spread = _l_sweep(rows, "texas")
    per_run_re, per_run_kl = [], []
    for run in sorted({r["run"] for r in _sel(rows, sweep="l")}):
        vals = [_sel(rows, sweep="l", method="uad", run=run, x=_x(x)) for x in ls]
        if all(vals):
            re_ = [_f(v[0], "rel_error") for v in vals]
            kl_ = [_f(v[0], "kl") for v in vals]
            per_run_re.append(max(re_) - min(re_))
            per_run_kl.append((kl_[-1] - kl_[0], kl_[0], kl_[-1]))
    uad_c = [_mean(rows, "seconds", sweep="c", x=c, method="uad") for c in cs]
    single = [_f(r, "seconds") for r in _sel(rows, sweep="c", method="uad")]
    gd_secs, pairs = _gd_vs_uad(rows)
    lhs = [x for x in _xs(rows, "lhs") if x >= 3]  # the paper's claim: lhs >= 3 barely matters
    kl_lhs = {x: _mean(rows, "kl", sweep="lhs", x=_x(x), method="uad") for x in lhs}
    re_lhs = {x: _mean(rows, "rel_error", sweep="lhs", x=_x(x), method="uad") for x in lhs}
    tables = {x: _mean(rows, "n_tables", sweep="lhs", x=_x(x), method="uad") for x in lhs}
    groups = {x: _mean(rows, "groups", sweep="lhs", x=_x(x), method="uad") for x in lhs}
    kl_run = per_run_kl[0] if per_run_kl else (math.nan, math.nan, math.nan)
    out = [
        f"**texas_like (Figures 4–10, synthetic stand-in for Texas).** {runs} runs per point, l = {l_value}. "
        + (
            "Reproduced: UAD beats single-attribute publishing on KL and relative error at every c, qd and p "
            "(Figures 5–8), and "
            if beats
            else ""
        )
        + f"l = {ls[0]}..{ls[-1]} barely moves UAD's relative error: with the *same* rule set at every l (each run "
        f"draws one rule set whose right-hand sides are feasible at l = {ls[-1]}), the mean is "
        + ", ".join(f"{v:.4f}" for v in means)
        + f" at l = {', '.join(map(str, ls))} (range {spread:.1%} of the "
        f"mean; per run the change is at most {max(per_run_re):.4f}), while KL rises slowly (per run by "
        f"{_span([k[0] for k in per_run_kl], '{:.1f}')} from l = {ls[0]} to {ls[-1]}, e.g. {kl_run[1]:.2f} → "
        f"{kl_run[2]:.2f}). UAD publishes a rule set in {_span(uad_c, '{:.2f}', ' s')} on average over the runs of "
        f"a c (single runs {_span(single, '{:.2f}', ' s')}) (Figure 4).",
    ]
    if pairs:
        later = {c: p for c, p in pairs.items() if c > 1}
        out[0] += (
            f" GD, which the paper could not run on Texas, publishes in {_span(gd_secs, '{:.1f}', ' s')} per "
            f"rule set up to c = {max(pairs)}"
            + (
                " and gives a lower KL than UAD on the same rule sets for c ≥ 2 ("
                if all(g < u for g, u in later.values())
                else " ("
            )
            + "; ".join(f"c = {c}: {g:.1f} vs {u:.1f}" for c, (g, u) in sorted(later.items()))
            + " — GD ran on run 0 only, so these compare with UAD's run 0, not with UAD's means)"
            + (
                "; at c = 1 both publish the same table."
                if 1 in pairs and abs(pairs[1][0] - pairs[1][1]) < 1e-9
                else "."
            )
        )
    if lhs:
        a, b = lhs[0], lhs[-2] if len(lhs) > 1 else lhs[-1]
        out.append(
            f"\n6. *lhs ≥ 3 does move UAD* (mean KL {kl_lhs[a]:.1f} at lhs = {a}, {kl_lhs[b]:.1f} at lhs = {b}, "
            f"{kl_lhs[lhs[-1]]:.1f} at lhs = {lhs[-1]}; relative error {re_lhs[a]:.3f} to {max(re_lhs.values()):.3f}). "
            "The paper's argument is that UAD rarely puts a rule's S on the LHS of a table; here most attributes "
            "are feasible right-hand sides, so with 5 rules of many LHS attributes almost every attribute is some "
            "rule's LHS and another rule's RHS. The releases show the consequence: UAD needs more colour classes "
            f"({tables[a]:.1f} tables at lhs = {a}, {_span([tables[x] for x in lhs if x >= b], '{:.1f}')} at "
            f"lhs ≥ {b}) and anonymizes more of them ({groups[a]:,.0f} Anatomy groups at lhs = {a}, "
            f"{_span([groups[x] for x in lhs if x >= b], '{:,.0f}')} at lhs ≥ {b})."
        )
    return "\n".join(out)


def sparcs(rows: Rows) -> str:
    cs = [int(c) for c in _xs(rows, "c")]
    runs = len(_sel(rows, sweep="c", x=cs[0], method="uad"))
    l_value = _sel(rows, sweep="c")[0]["l"]
    beats = _beats(rows, "uad", "single-attribute", ("c", "qd", "p"))
    gd_secs, pairs = _gd_vs_uad(rows)
    lhs = [x for x in _xs(rows, "lhs") if x >= 3]  # the paper's claim: lhs >= 3 barely matters
    kl_lhs = {x: _mean(rows, "kl", sweep="lhs", x=_x(x), method="uad") for x in lhs}
    lhs_spread = float(np.ptp(list(kl_lhs.values())) / np.mean(list(kl_lhs.values()))) if lhs else math.nan
    widest = max(lhs, key=lambda x: np.ptp([_f(r, "kl") for r in _sel(rows, sweep="lhs", method="uad", x=_x(x))]))
    spread_runs = sorted(_f(r, "kl") for r in _sel(rows, sweep="lhs", method="uad", x=_x(widest)))
    _, ls, means, spread = _l_sweep(rows, "sparcs")
    kls = [_mean(rows, "kl", sweep="l", x=_x(x), method="uad") for x in ls]
    later = {c: p for c, p in pairs.items() if c > 1}
    out = (
        f"**SPARCS (Figures 4–10, real New York discharges).** {runs} runs per point, l = {l_value} (see the "
        "dataset's section for why not 10). "
        + (
            "Reproduced: UAD beats single-attribute publishing on KL and relative error at every c, every qd and "
            "every p (Figures 5–8), and "
            if beats
            else ""
        )
        + (
            f"GD — which the paper could not run on Texas — finishes in {_span(gd_secs, '{:.1f}', ' s')} per rule set "
            f"(one run per c) and, on the same rule sets, gives a lower KL than UAD for every c ≥ 2 "
            f"({_span([g for g, _ in later.values()], '{:.1f}')} against "
            f"{_span([u for _, u in later.values()], '{:.1f}')})"
            if later and all(g < u for g, u in later.values())
            else "GD's KL against UAD's: "
            + "; ".join(f"c = {c}: {g:.2f} vs {u:.2f}" for c, (g, u) in sorted(later.items()))
        )
        + (
            f"; at c = 1 both publish the same Anatomy table (KL {pairs[1][0]:.2f} each)"
            if 1 in pairs and abs(pairs[1][0] - pairs[1][1]) < 1e-9
            else ""
        )
        + ". Two differences:\n\n"
        f"4. *lhs does not look flat* (UAD's mean KL over lhs = {lhs[0]}..{lhs[-1]} ranges over {lhs_spread:.0%} of "
        f"its mean). The runs show no trend but noise: at lhs = {widest} the {len(spread_runs)} rule sets already "
        f"spread from {spread_runs[0]:.2f} to {spread_runs[-1]:.2f}, as widely as the means across lhs "
        f"({_span(list(kl_lhs.values()))}). {runs} runs per point are too few to resolve a 10 % effect here.\n"
        f"5. *l changes UAD's relative error* (mean {', '.join(f'{v:.3f}' for v in means)} at l = "
        f"{ls[0]}..{ls[-1]}; range {spread:.0%} of the mean). The l sweep keeps one rule set per run at every l, "
        f"drawn with right-hand sides feasible at the largest l ({ls[-1]}) — on SPARCS only the diagnosis code "
        "qualifies, so every rule protects it and UAD publishes one Anatomy table. With the decomposition fixed, "
        f"l alone moves the error and KL from {kls[0]:.2f} to {kls[-1]:.2f}: the diagnosis code has hundreds of "
        "values, and larger groups spread each record's code over more of them."
    )
    return out


def summary(root: Path) -> str:
    """The whole section (Markdown) from the runs under ``root`` (missing datasets skipped)."""
    parts = [
        "## Summary and discussion of the differences",
        "",
        "Every number here is computed from the runs below (`runs.csv` of each dataset) and from "
        "`benchmarks/decomposition_compare.py --bip --json experiments/adult/bip.json`; the PASS/DIFFERS "
        "verdicts are computed by `versapub experiment` itself.",
        "",
    ]
    makers: dict[str, Callable[[Rows], str]] = {"texas-like": texas, "sparcs": sparcs}
    if (root / "adult" / "runs.csv").is_file():
        bip_path = root / "adult" / "bip.json"
        bip = json.loads(bip_path.read_text(encoding="utf-8")) if bip_path.is_file() else None
        parts += [adult(read_runs(root / "adult" / "runs.csv"), bip), ""]
    for name, make in makers.items():
        if (root / name / "runs.csv").is_file():
            parts += [make(read_runs(root / name / "runs.csv")), ""]
    return "\n".join(parts)
