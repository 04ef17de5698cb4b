"""Differential privacy on the Dask backend (issue 67, item 5): the whole command at 10^7 and
10^8 records beside DuckDB's count of the same file's distinct combinations in the same run.

    python benchmarks/dp_dask.py --records 10000000             # ~2 minutes here
    python benchmarks/dp_dask.py --records 100000000 --keep /big  # ~20 minutes, ~3 GB of Parquet

The input: a seeded Parquet dataset (parts of 10^6 records) of eight categorical columns
shaped like a census extract — age (91 values), sex (2), race (6), region (50), marital status
(5), education (16), income band (20), tenure (4), 8.7 x 10^8 cells in all, every value
drawn with a skewed probability so that the distinct combinations stay far fewer than the
cells. The job: MST at epsilon 1, delta 1e-9, every domain declared, a LocalCluster of two
workers. The reference: DuckDB reading the dataset and counting it by all eight columns (the
count the cluster makes), in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import VERSAPUB, run  # noqa: E402

#: Each column's declared values.
DOMAINS = {
    "age": [str(a) for a in range(91)],
    "sex": ["F", "M"],
    "race": ["asian", "black", "native", "other", "pacific", "white"],
    "region": [f"r{i:02d}" for i in range(50)],
    "marital": ["divorced", "married", "never", "separated", "widowed"],
    "education": [f"e{i:02d}" for i in range(16)],
    "income": [f"i{i:02d}" for i in range(20)],
    "tenure": ["free", "mortgage", "owned", "rented"],
}
PART = 1_000_000

REFERENCE = """
import sys, time, duckdb
t = time.perf_counter()
con = duckdb.connect()
con.execute('SET enable_progress_bar = false')
source = f"read_parquet('{sys.argv[1]}/*.parquet')"
n = con.execute(f"SELECT count(*) FROM (SELECT {sys.argv[2]}, count(*) FROM {source} GROUP BY ALL)").fetchone()[0]
print(time.perf_counter() - t, n)
"""


def write_dataset(folder: Path, records: int, seed: int = 0) -> None:
    """``records`` records in Parquet parts of :data:`PART` (skewed, seeded draws)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    probs = {}
    for c, values in DOMAINS.items():
        w = 1.0 / np.arange(1, len(values) + 1) ** 1.1
        probs[c] = w / w.sum()
    for i, start in enumerate(range(0, records, PART)):
        n = min(PART, records - start)
        cols = {c: pa.array(np.asarray(v)[rng.choice(len(v), n, p=probs[c])]) for c, v in DOMAINS.items()}
        pq.write_table(pa.table(cols), folder / f"part-{i:05d}.parquet")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--keep", type=Path, help="a folder for the input and the release (kept between runs)")
    ap.add_argument("--json", type=Path, help="also write the row as JSON")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = a.keep or Path(scratch)
        data = tmp / f"census_{a.records}"
        if not data.exists():
            write_dataset(data, a.records)
        domains = []
        for c, values in DOMAINS.items():
            (tmp / f"{c}.txt").write_text("\n".join(values) + "\n")
            domains += ["--domain", f"{c}={tmp / f'{c}.txt'}"]
        ref = subprocess.run(
            [sys.executable, "-c", REFERENCE, str(data), ", ".join(DOMAINS)], capture_output=True, text=True, check=True
        ).stdout.split()
        ref_s, distinct = float(ref[0]), int(ref[1])
        out = tmp / f"dp_{a.records}"
        job = [*VERSAPUB, "publish", "--input", str(data), "--mechanism", "dp:epsilon=1,delta=1e-9,select=mst"]
        job += [*domains, "--backend", "dask", "--workers", "2", "--out", str(out), "--overwrite"]
        pub = run(job)
        row = {
            "records": a.records,
            "distinct": distinct,
            "seconds": round(pub.seconds, 1),
            "peak_mb": round(pub.peak_mb),
            "reference_s": round(ref_s, 2),
            "times_reference": round(pub.seconds / ref_s, 1),
            "exit": pub.returncode,
        }
    cells = [f"{row['records']:,}", f"{row['distinct']:,}", row["seconds"], f"{row['peak_mb']:,}"]
    cells += [f"{row['reference_s']} s", row["times_reference"]]
    header = ["records", "distinct combinations", "seconds", "peak MB (all processes)", "DuckDB count", "× DuckDB"]
    for line in (header, ["---"] * len(header), cells):
        print("| " + " | ".join(map(str, line)) + " |")
    if a.json:
        a.json.write_text(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
