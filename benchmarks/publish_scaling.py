"""Publish ``texas_like`` end to end at growing sizes, with the default options.

For each n: the table is generated and written as CSV (not timed); then, in a fresh
process, ``read -> publish (9 rules, l = 10, UAD + Anatomy) -> utility -> write + verify``
is timed stage by stage, with peak memory per stage (peak RSS minus the RSS after
imports) and, as the reference measured in the same process right after, a DuckDB read
of the CSV and one ``GROUP BY`` per column (issue 12's target: wall <= 4x the reference,
peak <= 600 MB at 10^6; 10^7 within 8 GB).

    python benchmarks/publish_scaling.py            # 10^4, 10^5, 10^6
    python benchmarks/publish_scaling.py --large    # also 10^7
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, threading, time, shutil
import psutil
import duckdb, numpy as np, pyarrow as pa
import versapub
from versapub.datasets import TEXAS_LIKE_RULES
proc = psutil.Process()
stage = ["imports"]
peaks = {}
def sample():
    while True:
        rss = proc.memory_info().rss
        peaks[stage[0]] = max(peaks.get(stage[0], 0), rss)
        time.sleep(0.005)
threading.Thread(target=sample, daemon=True).start()
time.sleep(0.05)
base = proc.memory_info().rss
path, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
stage[0] = "read"
table = versapub.read_table(path)
t1 = time.perf_counter()
stage[0] = "publish"
roles = versapub.ColumnRoles(allow_unique=table.names, others="insensitive")
rel = versapub.publish(table, TEXAS_LIKE_RULES, l=10, seed=0, columns=roles)
t2 = time.perf_counter()
stage[0] = "utility"
from versapub.workflow import with_utility
rel = with_utility(rel)
t25 = time.perf_counter()
stage[0] = "write+verify"
versapub.write_release(rel, out)
t3 = time.perf_counter()
time.sleep(0.02)
stage[0] = "reference"
g0 = time.perf_counter()
con = duckdb.connect()
con.execute(f"CREATE TABLE t AS SELECT * FROM read_csv('{path}', all_varchar = true)")
for c in table.names:
    con.execute(f'SELECT "{c}", count(*) FROM t GROUP BY 1').fetchall()
g1 = time.perf_counter()
mb = {k: (v - base) / 2**20 for k, v in peaks.items() if k != "imports"}
print(json.dumps({
    "n": table.n_rows, "read_s": t1 - t0, "publish_s": t2 - t1, "utility_s": t25 - t2, "write_verify_s": t3 - t25,
    "total_s": t3 - t0, "groupby_ref_s": g1 - g0,
    "peak_mb": max(v for k, v in mb.items() if k != "reference"), "stage_peak_mb": mb,
    "encoded_mb": table.nbytes / 2**20, "tables": len(rel.tables), "timings": rel.timings,
}))
shutil.rmtree(out)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="also run 10^7 records")
    ap.add_argument("--sizes", type=int, nargs="*", help="explicit sizes")
    args = ap.parse_args()
    sizes = args.sizes or [10**4, 10**5, 10**6] + ([10**7] if args.large else [])
    from versapub.datasets import write_texas_like

    print(
        f"{'n':>10} {'total s':>8} {'read':>6} {'publish':>8} {'utility':>8} {'write+verify':>13} {'rec/s':>10} "
        f"{'reference s':>11} {'x ref':>6} {'peak MB':>8} {'encoded MB':>10} {'peak/enc':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            csv = Path(tmp) / f"texas_{n}.csv"
            write_texas_like(csv, n, seed=0)
            res = subprocess.run(
                [sys.executable, "-c", CHILD, str(csv), str(Path(tmp) / f"rel_{n}")],
                capture_output=True,
                text=True,
                check=False,
            )
            if res.returncode != 0:
                print(res.stderr, file=sys.stderr)
                sys.exit(1)
            r = json.loads(next(ln for ln in reversed(res.stdout.splitlines()) if ln.startswith("{")))
            print(
                f"{r['n']:>10} {r['total_s']:>8.2f} {r['read_s']:>6.2f} {r['publish_s']:>8.2f} {r['utility_s']:>8.2f} "
                f"{r['write_verify_s']:>13.2f} {r['n'] / r['total_s']:>10.0f} {r['groupby_ref_s']:>11.2f} "
                f"{r['total_s'] / r['groupby_ref_s']:>6.1f} "
                f"{r['peak_mb']:>8.0f} {r['encoded_mb']:>10.1f} {r['peak_mb'] / r['encoded_mb']:>8.2f}",
                flush=True,
            )
            steps = {k: round(v, 2) for k, v in r["timings"].items()}
            stage_mb = {k: round(v) for k, v in r["stage_peak_mb"].items()}
            print(f"{'':>10} seconds per step {steps}; peak MB above imports per stage {stage_mb}", flush=True)
            csv.unlink()


if __name__ == "__main__":
    main()
