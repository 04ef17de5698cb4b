"""Compare decompositions on Adult as in §6.2 of Jin et al. (Figures 1–3).

10,000 records sampled without replacement from the embedded Adult data (Table 5a
domains), l = 2, lhs = 3, c = 1..9 random irreducible rule sets (rules whose RHS is
infeasible are excluded), ``--runs`` rule sets per c.  For UAD, GD and single-attribute
publishing: KL-divergence, relative error (1,000 queries, qd = 3, p = 0.4) and run time.
Multi-SA publishing, the paper's fourth method, reports its suppressed records too.

``--texas`` instead times GD on ``texas_like`` (177,148 records, 18 attributes, c = 5
random rules, lhs = 3, l = 10) with one thread and with one per CPU, next to UAD.

    python benchmarks/decomposition_compare.py [--runs 5] [--c 1 3 5 7 9]
    python benchmarks/decomposition_compare.py --texas
    python benchmarks/decomposition_compare.py --bip

``--bip`` times multi-SA's integer program on the Adult sample in versapub's form (one
integer variable per distinct SA combination) and in the paper's literal form (one binary
variable per tuple), which reach the same optimum.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import versapub
from versapub.data.table import EncodedTable
from versapub.kinds.build import model_from_release
from versapub.model import kl_divergence, make_workload, relative_error
from versapub.privacy import LDiversity
from versapub.privacy.random_rules import random_rules


def ALL_ALLOWED(table: versapub.EncodedTable) -> versapub.ColumnRoles:
    """Every column may be near-unique, and those no rule names are insensitive: the benchmark measures speed."""
    return versapub.ColumnRoles(allow_unique=table.names, others="insensitive")


METHODS = ("uad", "gd", "single-attribute", "multi-sa")


def sample(table: EncodedTable, n: int, seed: int) -> EncodedTable:
    return table.sample(n, np.random.default_rng(seed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--c", type=int, nargs="*", default=list(range(1, 10)))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--texas", action="store_true", help="time GD on texas_like instead")
    ap.add_argument("--bip", action="store_true", help="time multi-SA's program: aggregated vs per tuple")
    ap.add_argument("--json", help="with --bip: also write the rows to this JSON file (experiments/adult/bip.json)")
    args = ap.parse_args()
    if args.texas:
        texas(args.seed)
        return
    if args.bip:
        bip(args.seed, args.c, args.runs, args.json)
        return
    table = sample(versapub.datasets.adult(), 10_000, args.seed)
    g = LDiversity(2)
    feasible = {a: g.single_attribute_violation(table.column(a).counts()) is None for a in table.names}
    workload = make_workload(table, 1000, 3, 0.4, seed=args.seed)
    print(
        f"{'c':>2} {'method':>17} {'KL':>8} {'rel.err':>8} {'seconds':>8} {'suppressed':>10}"
        f"   (means over {args.runs} rule sets)"
    )
    for c in args.c:
        res: dict[str, list[tuple[float, float, float, float]]] = {m: [] for m in METHODS}
        for run in range(args.runs):
            rules = random_rules(table.names, c, 3, np.random.default_rng([args.seed, c, run]), feasible.__getitem__)
            for m in METHODS:
                t0 = time.perf_counter()
                rel = versapub.publish(table, rules, l=2, seed=run, decomposition=m, columns=ALL_ALLOWED(table))
                seconds = time.perf_counter() - t0
                model = model_from_release(rel)
                kl = kl_divergence(model, table).value
                re_ = relative_error(model, table, workload).mean
                sup = sum(t.table.stats.get("suppressed_records", 0) for t in rel.tables)
                res[m].append((kl, re_, seconds, sup))
        for m in METHODS:
            kl, re_, sec, sup = np.mean(np.array(res[m]), axis=0)
            print(f"{c:>2} {m:>17} {kl:>8.4f} {re_:>8.4f} {sec:>8.3f} {sup:>10.0f}", flush=True)


def texas(seed: int) -> None:
    """GD on texas_like at the paper's size, c = 5: wall time with 1 and with all threads."""
    import os

    from versapub.datasets import texas_like

    table = texas_like(177_148, seed=seed)
    g = LDiversity(10)
    feasible = {a: g.single_attribute_violation(table.column(a).counts()) is None for a in table.names}
    rules = random_rules(table.names, 5, 3, np.random.default_rng([seed, 5]), feasible.__getitem__)
    print("texas_like 177,148 x 18, l = 10, rules:", "; ".join(str(r) for r in rules))
    t0 = time.perf_counter()
    uad = versapub.publish(table, rules, l=10, seed=seed, columns=ALL_ALLOWED(table))
    print(f"UAD: {time.perf_counter() - t0:.1f} s, KL {kl_divergence(model_from_release(uad), table).value:.4f}")
    for jobs in sorted({1, os.cpu_count() or 1}):
        t0 = time.perf_counter()
        rel = versapub.publish(
            table,
            rules,
            l=10,
            seed=seed,
            method=versapub.Method(decomposition="gd", decomposition_params={"jobs": jobs}),
            columns=ALL_ALLOWED(table),
        )
        sec = time.perf_counter() - t0
        steps = len(rel.decomposition_trace) - 1
        kl = kl_divergence(model_from_release(rel), table).value
        print(f"GD, {jobs} thread(s): {sec:.1f} s, {steps} add-back steps, KL {kl:.4f}", flush=True)


def bip(seed: int, cs: list[int], runs: int, out: str | None = None) -> None:
    """Multi-SA's selection program on the Adult sample: per SA combination vs per tuple."""
    from versapub.anonymizers.bucketizing.multi_sa import select, select_per_tuple
    from versapub.data.groupby import group_rows

    table = sample(versapub.datasets.adult(), 10_000, seed)
    g = LDiversity(2)
    feasible = {a: g.single_attribute_violation(table.column(a).counts()) is None for a in table.names}
    head = ("c", "SAs", "vars agg", "s agg", "vars tuple", "s tuple", "selected", "same")
    print(" ".join(f"{h:>10}" for h in head))
    rows = []
    for c in cs:
        for run in range(runs):
            rules = random_rules(table.names, c, 3, np.random.default_rng([seed, c, run]), feasible.__getitem__)
            sens = sorted({r.rhs for r in rules})
            cols = [table.codes(a) for a in sens]
            cards = [table.cardinality(a) for a in sens]
            combos = group_rows(cols, cards)
            agg = select(combos.keys, cards, combos.counts, 2, time_limit_s=600, seed=run)
            lit = select_per_tuple(cols, cards, 2, time_limit_s=600, seed=run)
            same = int(agg.take.sum()) == int(lit.take.sum())
            vals = (
                c,
                len(sens),
                agg.variables,
                f"{agg.seconds:.3f}",
                lit.variables,
                f"{lit.seconds:.2f}",
                int(agg.take.sum()),
                same,
            )
            print(" ".join(f"{v!s:>10}" for v in vals), flush=True)
            rows.append(
                {
                    "c": c,
                    "sensitive": len(sens),
                    "vars_aggregated": agg.variables,
                    "seconds_aggregated": round(agg.seconds, 4),
                    "vars_per_tuple": lit.variables,
                    "seconds_per_tuple": round(lit.seconds, 3),
                    "selected": int(agg.take.sum()),
                    "same": same,
                }
            )
    if out:
        Path(out).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
