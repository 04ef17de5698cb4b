"""Wrapper: run §6's experiments (``versapub experiment versatile``) and time them.

    python benchmarks/experiments_versatile.py [--dataset adult texas-like sparcs] [--quick] [--runs N]
                                               [--out experiments]

Prints the wall time and peak memory of each dataset's sweep and its PASS/DIFFERS lines
(the full Adult sweep, 4 methods x 9 values of c x 50 runs, has a 30-minute target on two
cores; ``--quick`` a 3-minute one).  Completed runs are not recomputed, so time a sweep
into a fresh ``--out``.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from versapub.experiments import DATASETS, Settings, findings, read_runs, run_experiment


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", nargs="*", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--out", type=Path, default=Path("experiments"))
    args = ap.parse_args()
    for name in args.dataset:
        runs = args.runs or ((2 if args.quick else 50) if name == "adult" else (1 if args.quick else 5))
        settings = Settings(name, runs, quick=args.quick, gd_runs=0 if args.quick else 1)
        t0 = time.perf_counter()
        path = run_experiment(settings, args.out / name)
        seconds = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{name}: {seconds:.1f} s, peak RSS so far {peak:.0f} MB, {path}")
        for f in findings(name, read_runs(path)):
            print("  " + f.line())


if __name__ == "__main__":
    main()
