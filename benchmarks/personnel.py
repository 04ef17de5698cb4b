"""A seeded stand-in for issue 67's real personnel file (1,414,593 records × 7 categorical
columns, never in this repository): ``branch, gender, race, hisp -> rank`` at l = 2, whose
Anatomy QIT held 1,367,155 rows for 880 distinct quasi-identifier combinations and whose
model had 1,646 distinct combinations.

    python benchmarks/personnel.py OUT.csv [--n 1414593] [--seed 0]

The columns and their shapes: ``branch`` (5 values, skewed), ``gender`` (2, 85/15), ``race``
(6, skewed), ``hisp`` (2), ``component`` (2), ``region`` (6, skewed) and ``rank`` (24: each
branch and gender its own run of 8, skewed towards the junior ones). Written by DuckDB-free numpy and pyarrow's CSV
writer (seconds, no Python loop over records)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

PERSONNEL_N = 1_414_593
PERSONNEL_RULE = "branch, gender, race, hisp -> rank"


def _skewed(rng: np.random.Generator, k: int, a: float, n: int) -> np.ndarray:
    w = 1.0 / np.arange(1, k + 1) ** a
    return rng.choice(k, size=n, p=w / w.sum())


def personnel_like(n: int = PERSONNEL_N, seed: int = 0) -> pa.Table:
    """``n`` records of the stand-in (see the module docstring), as an Arrow table of strings."""
    rng = np.random.default_rng(seed)
    branch = _skewed(rng, 5, 2.2, n)
    gender = (rng.random(n) < 0.15).astype(np.int64)
    race = _skewed(rng, 6, 4.5, n)
    hisp = (rng.random(n) < 0.17).astype(np.int64)
    component = (rng.random(n) < 0.12).astype(np.int64)
    region = _skewed(rng, 6, 1.5, n)
    # rank: 24 grades, each branch and gender its own run of 8 (mostly the junior ones)
    rank = (5 * branch + 3 * gender + _skewed(rng, 8, 0.9, n)) % 24
    cols = {
        "branch": np.array(["Army", "Navy", "AirForce", "Marines", "CoastGuard"])[branch],
        "gender": np.array(["M", "F"])[gender],
        "race": np.array(["White", "Black", "Asian", "AIAN", "NHPI", "Multi"])[race],
        "hisp": np.array(["N", "Y"])[hisp],
        "component": np.array(["Active", "Reserve"])[component],
        "region": np.array(["NE", "MW", "S", "W", "PAC", "OCONUS"])[region],
        "rank": np.array([f"R{i:02d}" for i in range(24)])[rank],
    }
    return pa.table(cols)


def write_personnel_like(path: Path, n: int = PERSONNEL_N, seed: int = 0) -> Path:
    pacsv.write_csv(personnel_like(n, seed), path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=PERSONNEL_N)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    write_personnel_like(a.out, a.n, a.seed)


if __name__ == "__main__":
    main()
