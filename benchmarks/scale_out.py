"""Publish, verify and evaluate ``texas_like`` at 10^6 .. 10^8 records on a Dask LocalCluster.

For each n the data is generated as a Parquet dataset of 10^6-record parts (streamed: one
part in memory at a time; not timed). Then, in a fresh process, the whole job runs on a
LocalCluster of 2 single-threaded workers with ``--worker-memory`` each (default 4 GiB,
the issue's limit, which Dask enforces: a worker above 95 % of it is restarted and the run
fails): read into global dictionaries -> publish -> write the tables as Parquet parts -> KL
and COUNT workload out of core -> verify from the files.  Two jobs (``--jobs``):

* ``anatomy``: UAD + Anatomy under the 9 rules of ``texas_like``, l = 10, every column;
* ``mondrian``: the classic job, k-anonymity k = 10 of six quasi-identifiers (thcic, gender,
  pat_zip, county, pat_age, race; the other columns not read) with Mondrian — rounds of
  cuts on the cluster, partitions closed in memory per bucket (issue 33).

Measured: wall time per stage (from the progress labels), records/s, peak RSS of each
worker process and of the client, and peak disk use (scratch + release).

At 10^6 the in-memory backend runs the same job on the same records (one Parquet file) in
the same minute as the reference (Dask within 3x). Targets: 10^8 within 45 min (anatomy)
and 60 min (mondrian), 4 GB per worker; time per record at 10^8 within 1.5x of 10^7.

    python benchmarks/scale_out.py                 # 10^6 and 10^7, both jobs
    python benchmarks/scale_out.py --large         # also 10^8 (about 25 GB of disk)
    python benchmarks/scale_out.py --sizes 1000000 --jobs mondrian --json out.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, os, sys, threading, time
from pathlib import Path
import psutil
from versapub.datasets import TEXAS_LIKE_RULES, TEXAS_LIKE_DOMAINS
from versapub.io.config import PublishConfig
from versapub.privacy.screens.roles import ColumnRoles
from versapub import workflow

data, out, backend, memory, result, job = sys.argv[1], Path(sys.argv[2]), *sys.argv[3:7]
me = psutil.Process()
peaks = {"client": 0}
client_by_stage = {}
current = ["start"]
disk = [0]
stop = threading.Event()

def du(p):
    total = 0
    for root, _, files in os.walk(p):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total

def sample():
    last_du = 0.0
    while not stop.is_set():
        rss = me.memory_info().rss
        peaks["client"] = max(peaks["client"], rss)
        client_by_stage[current[0]] = max(client_by_stage.get(current[0], 0), rss)
        for child in me.children(recursive=True):
            try:
                rss = child.memory_info().rss
            except psutil.Error:
                continue
            key = f"pid{child.pid}"
            peaks[key] = max(peaks.get(key, 0), rss)
        now = time.monotonic()
        if now - last_du > 1.0:
            used = sum(du(p) for p in out.parent.iterdir() if p.name.startswith((out.name, "." + out.name)))
            disk[0] = max(disk[0], used)
            last_du = now
        time.sleep(0.05)

threading.Thread(target=sample, daemon=True).start()
stages = []
def progress(label, done, total):
    if not stages or stages[-1][0] != label:
        stages.append((label, time.perf_counter()))
        if not label.startswith(("on the cluster", "writing T", "Dask dashboard")):
            current[0] = label.split(":")[0].split("(")[0].strip()[:50]
        print(f"[{time.strftime('%H:%M:%S')}] {label}", file=sys.stderr, flush=True)

kw = {"workers": 2, "worker_memory": memory} if backend == "dask" else {}
if job == "mondrian":  # the classic job: k = 10 over the demographic and provider columns
    QI = ("thcic", "gender", "pat_zip", "county", "pat_age", "race")
    cfg = PublishConfig(input=Path(data), rules=(), guarantee="k-anonymity", guarantee_params={"k": 10}, seed=0,
                        format="parquet", backend=backend, columns=QI, anonymizer="mondrian",
                        roles=ColumnRoles(quasi_identifying=QI, allow_unique=QI), **kw)
else:
    roles = ColumnRoles(allow_unique=tuple(TEXAS_LIKE_DOMAINS), others="insensitive")
    cfg = PublishConfig(input=Path(data), rules=tuple(TEXAS_LIKE_RULES), l=10, seed=0, format="parquet",
                        backend=backend, roles=roles, **kw)
t0 = time.perf_counter()
rel = workflow.run(cfg, out, progress=progress)
t1 = time.perf_counter()
stop.set()
time.sleep(0.1)
workers = sorted((v for k, v in peaks.items() if k.startswith("pid")), reverse=True)
marks = stages + [("end", t1)]
spans, parent = {}, "start"
for (label, t), (_, t_next) in zip(marks, marks[1:]):
    if not label.startswith(("on the cluster", "writing T", "Dask dashboard")):
        parent = label.split(":")[0].split("(")[0].strip()[:50]
    spans[parent] = spans.get(parent, 0.0) + (t_next - t)
Path(result).write_text(json.dumps({
    "backend": backend, "job": job, "total_s": t1 - t0,
    "client_peak_mb": peaks["client"] / 2**20, "worker_peak_mb": [w / 2**20 for w in workers[:2]],
    "disk_peak_mb": disk[0] / 2**20,
    "client_stage_peak_mb": {k: v / 2**20 for k, v in client_by_stage.items()},
    "tables": len(rel.tables), "stages_s": spans,
    "timings": {k: v for k, v in rel.timings.items() if isinstance(v, (int, float))},
}))
"""


def generate(root: Path, n: int, *, single: bool = False) -> Path:
    """The Parquet dataset of ``n`` records (reused when present); ``single``: also one file."""
    from versapub.datasets import write_texas_like_parquet

    d = root / f"texas-{n}"
    if not d.exists():
        tmp = root / f".texas-{n}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        write_texas_like_parquet(tmp, n, part_rows=1_000_000, seed=0)
        tmp.rename(d)
    if not single:
        return d
    one = root / f"texas-{n}.parquet"
    if not one.exists():
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        pq.write_table(ds.dataset(d).to_table(), one)
    return one


def run(data: Path, backend: str, memory: str, work: Path, job: str = "anatomy") -> dict:
    out = work / f"release-{job}-{backend}-{data.stem}"
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    result = work / f"result-{job}-{backend}-{data.stem}.json"
    result.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(data), str(out), backend, memory, str(result), job])
    if proc.returncode != 0 or not result.exists():
        return {
            "backend": backend,
            "job": job,
            "error": f"exit status {proc.returncode}",
            "wall_s": time.perf_counter() - t,
        }
    shutil.rmtree(out, ignore_errors=True)
    return json.loads(result.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="also 10^8 records (about 25 GB of disk)")
    ap.add_argument("--sizes", type=int, nargs="*", help="explicit sizes")
    ap.add_argument("--worker-memory", default="4GiB", help="memory limit per worker (default 4GiB)")
    ap.add_argument("--dir", type=Path, help="where data and releases go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated data for a later run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--jobs", nargs="*", default=["anatomy", "mondrian"], choices=["anatomy", "mondrian"])
    args = ap.parse_args()
    sizes = args.sizes or [10**6, 10**7] + ([10**8] if args.large else [])
    work = args.dir or Path(tempfile.mkdtemp(prefix="versapub-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for n in sizes:
            g = time.perf_counter()
            data = generate(work, n)
            print(f"n={n:,}: data written in {time.perf_counter() - g:.0f} s", flush=True)
            for job in args.jobs:
                r = run(data, "dask", args.worker_memory, work, job)
                r["n"] = n
                results.append(r)
                _show(r)
                if n <= 10**6:
                    m = run(generate(work, n, single=True), "memory", args.worker_memory, work, job)
                    m["n"] = n
                    results.append(m)
                    _show(m)
                    if "total_s" in r and "total_s" in m:
                        ratio = r["total_s"] / m["total_s"]
                        print(f"  {job}: dask / memory at n={n:,}: {ratio:.2f}x (target <= 3x)")
        for job in args.jobs:
            per = {
                r["n"]: r["total_s"] / r["n"]
                for r in results
                if r.get("backend") == "dask" and r.get("job") == job and "total_s" in r
            }
            if 10**7 in per and 10**8 in per:
                print(f"{job}: time per record 10^8 / 10^7: {per[10**8] / per[10**7]:.2f} (target <= 1.5)")
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def _show(r: dict) -> None:
    if "error" in r:
        print(
            f"  {r.get('job')} {r['backend']}: FAILED after {r['wall_s']:.0f} s ({r['error']}; its messages are above)"
        )
        return
    n = r["n"]
    print(
        f"  {r.get('job', '')} {r['backend']:6s} n={n:>11,}: {r['total_s']:8.1f} s  "
        f"{n / r['total_s']:>9,.0f} records/s  "
        f"client {r['client_peak_mb']:6.0f} MB  workers {', '.join(f'{w:.0f}' for w in r['worker_peak_mb'])} MB  "
        f"disk {r['disk_peak_mb']:7.0f} MB"
    )
    for k, v in r["stages_s"].items():
        mb = r.get("client_stage_peak_mb", {}).get(k)
        print(f"      {v:8.1f} s  {k}" + (f"  (client peak {mb:.0f} MB)" if mb else ""))


if __name__ == "__main__":
    main()
