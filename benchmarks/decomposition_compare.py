"""Compare decompositions on Adult as in §6.2 of Jin et al. (Figures 1–3).

10,000 records sampled without replacement from the embedded Adult data (Table 5a
domains), l = 2, lhs = 3, c = 1..9 random irreducible rule sets (rules whose RHS is
infeasible are excluded), ``--runs`` rule sets per c.  For UAD, GD and single-attribute
publishing: KL-divergence, relative error (1,000 queries, qd = 3, p = 0.4) and run time.
(Multi-SA publishing, the fourth method of the paper, is not implemented yet.)

    python benchmarks/decomposition_compare.py [--runs 5] [--c 1 3 5 7 9]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import versapub
from versapub.data.table import Column, EncodedTable
from versapub.model import kl_divergence, make_workload, model_from_release, relative_error
from versapub.privacy import LDiversity
from versapub.privacy.random_rules import random_rules

METHODS = ("uad", "gd", "single-attribute")


def sample(table: EncodedTable, n: int, seed: int) -> EncodedTable:
    rows = np.sort(np.random.default_rng(seed).choice(table.n_rows, size=n, replace=False))
    cols = []
    for c in table.columns:
        codes = c.codes[rows]
        present = np.flatnonzero(np.bincount(codes, minlength=c.cardinality))
        rank = np.zeros(c.cardinality, dtype=np.int32)
        rank[present] = np.arange(len(present), dtype=np.int32)
        cols.append(Column(c.name, rank[codes], c.values[present]))
    return EncodedTable(tuple(cols), source=f"adult sample n={n}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--c", type=int, nargs="*", default=list(range(1, 10)))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    table = sample(versapub.datasets.adult(), 10_000, args.seed)
    g = LDiversity(2)
    feasible = {a: g.single_attribute_violation(table.column(a).counts()) is None for a in table.names}
    workload = make_workload(table, 1000, 3, 0.4, seed=args.seed)
    print(f"{'c':>2} {'method':>17} {'KL':>8} {'rel.err':>8} {'seconds':>8}   (means over {args.runs} rule sets)")
    for c in args.c:
        res: dict[str, list[tuple[float, float, float]]] = {m: [] for m in METHODS}
        for run in range(args.runs):
            rules = random_rules(table.names, c, 3, np.random.default_rng([args.seed, c, run]), feasible.__getitem__)
            for m in METHODS:
                t0 = time.perf_counter()
                rel = versapub.publish(table, rules, l=2, seed=run, decomposition=m)
                seconds = time.perf_counter() - t0
                model = model_from_release(rel)
                kl = kl_divergence(model, table).value
                re_ = relative_error(model, table, workload).mean
                res[m].append((kl, re_, seconds))
        for m in METHODS:
            kl, re_, sec = np.mean(np.array(res[m]), axis=0)
            print(f"{c:>2} {m:>17} {kl:>8.4f} {re_:>8.4f} {sec:>8.3f}", flush=True)


if __name__ == "__main__":
    main()
