"""`versapub check` on a texas_like release (issue: 10^6 records, 9 rules, <= 30 s on 2 cores).

Publishes texas_like(n) with the 9 default rules at l = 10, writes it, then times the
whole check from the files (verification, scalable attack, maximum-entropy posterior,
row-order hygiene), with and without the original table.

    python benchmarks/check_scaling.py [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import versapub
from versapub.datasets import TEXAS_LIKE_RULES, texas_like
from versapub.verify.check import run_check


def ALL_ALLOWED(table: versapub.EncodedTable) -> versapub.ColumnRoles:
    """Every column may be near-unique, and those no rule names are insensitive: the benchmark measures speed."""
    return versapub.ColumnRoles(allow_unique=table.names, others="insensitive")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10**5, 10**6])
    args = ap.parse_args()
    print(f"{'n':>9} {'with original':>13} {'total s':>8}  steps (s)")
    for n in args.sizes:
        table = texas_like(n, seed=0)
        rel = versapub.publish(table, TEXAS_LIKE_RULES, l=10, seed=0, columns=ALL_ALLOWED(table))
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp) / "r"
            versapub.write_release(rel, d)
            for original in (None, table):
                t0 = time.perf_counter()
                rep = run_check(d, original=original)
                total = time.perf_counter() - t0
                steps = {k: round(v, 2) for k, v in rep.seconds.items()}
                assert rep.ok, rep.failures()
                print(f"{n:>9} {original is not None!s:>13} {total:>8.2f}  {steps}", flush=True)


if __name__ == "__main__":
    main()
