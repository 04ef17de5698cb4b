"""Issue 52's benchmark: versapub's differentially private release against Private-PGM's MST on
Adult as Private-PGM encodes it (``jobs/adult_pgm``: 48,842 × 14, integer codes; see
``jobs/PROVENANCE.md``), epsilon = 1, delta = 1e-9, workload every 3-way marginal (364).

Per seed (five by default, each tool in turn, in the same minute):

* **versapub** — the whole command a steward runs: ``versapub publish --input adult.csv
  --mechanism dp:epsilon=1,delta=1e-9,select=mst --domain ...`` (read, measure, fit, write,
  verify), then ``versapub sample`` of as many records as the release estimates;
* **reference** — ``benchmarks/dp_reference.py``: Private-PGM's ``mechanisms/mst.py``
  ported to ``mbi`` 2.0 (JAX, float64), synthetic data by mbi's randomized rounding; and the
  same in JAX's default float32 (faster; mbi warns it may stall above 100,000 records);
* optionally ``--aim``: versapub's AIM (``select=aim``) the same way.

Error of an output on a workload marginal: the L1 distance between the true and the output's
normalized marginals (``|| x / |x| - y / |y| ||_1``, in [0, 2]); the workload error is its
mean over the 364 marginals. Each tool is measured twice: its synthetic records, and its model
(versapub: the release model read back from the files, exact inference; the reference: its
fitted model's marginals). Time and peak memory are the whole command's: versapub's two
processes as a user runs them (start-up included); the reference's process until its
synthetic records are written (its model's marginals for the comparison come after).
Medians over the seeds; targets: versapub's error <= 1.1 x the reference's, time <= 2 x.

mbi and JAX are not versapub dependencies: install them beside it, e.g.
``pip install --target /tmp/mbilib mbi 'jax[cpu]'`` and ``MBI_PATH=/tmp/mbilib python
benchmarks/dp.py`` (the reference runs with that directory on its path).

    python benchmarks/dp.py [--seeds 5] [--aim] [--json experiments/dp/benchmark.json]
    python benchmarks/dp.py --seeds 1 --aim-only --json experiments/dp/benchmark.json  # AIM beside them
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from suite import VERSAPUB, run

HERE = Path(__file__).resolve().parent
DATA = HERE / "jobs" / "adult_pgm"


def _inputs(tmp: Path) -> tuple[Path, Path, dict[str, int], list[str]]:
    csv = tmp / "adult.csv"
    csv.write_bytes(gzip.decompress((DATA / "adult.csv.gz").read_bytes()))
    dom = json.loads((DATA / "adult-domain.json").read_text())
    flags = []
    for a, n in dom.items():  # the declared domains: Private-PGM's codes 0 .. n-1, public knowledge
        f = tmp / f"domain-{a}.txt"
        f.write_text("".join(f"{i}\n" for i in range(n)))
        flags += ["--domain", f"{a}={f}"]
    return csv, DATA / "adult-domain.json", dom, flags


def _read(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    t = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types={a: pa.int64() for a in names}))
    return {a: t.column(a).to_numpy() for a in names}


def _marginal(records: dict[str, np.ndarray], w: tuple[str, ...], dom: dict[str, int]) -> np.ndarray:
    shape = [dom[a] for a in w]
    key = np.ravel_multi_index([records[a] for a in w], shape)
    return np.bincount(key, minlength=int(np.prod(shape))).reshape(shape).astype(np.float64)


def _error(truth: dict[tuple[str, ...], np.ndarray], answer: dict[tuple[str, ...], np.ndarray]) -> float:
    return float(np.mean([np.abs(x / x.sum() - answer[w] / answer[w].sum()).sum() for w, x in truth.items()]))


def _versapub_model(release: Path, workload: list[tuple[str, ...]], dom: dict[str, int]) -> dict:
    """The release model's 3-way marginals over the codes 0 .. n-1, from the fitted tables the
    release publishes: ``P = prod p_C / prod p_S`` over a junction tree of its cliques (the
    release model's closed form), summed out by ``numpy.einsum`` (variable elimination)."""
    import pyarrow.csv as pacsv
    from scipy.sparse.csgraph import minimum_spanning_tree

    manifest = json.loads((release / "manifest.json").read_text())
    fitted = [t for t in manifest["tables"] if t["kind"] == "fitted"]
    names = list(dom)
    letter = {a: chr(ord("a") + i) for i, a in enumerate(names)}
    tables = []
    for t in fitted:
        attrs = t["attributes"]
        rows = pacsv.read_csv(release / t["files"]["data"]).to_pydict()
        dense = np.zeros([dom[a] for a in attrs])
        dense[tuple(np.asarray(rows[a], dtype=np.int64) for a in attrs)] = rows["count"]
        tables.append((attrs, dense / dense.sum()))
    k = len(tables)
    weights = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            weights[i, j] = -(len(set(tables[i][0]) & set(tables[j][0])) + 1e-9)  # maximum spanning tree
    tree = minimum_spanning_tree(weights).tocoo()
    operands: list = []
    for attrs, p in tables:
        operands += [p, [names.index(a) for a in attrs]]
    for i, j in zip(tree.row.tolist(), tree.col.tolist(), strict=True):
        sep = [a for a in tables[i][0] if a in tables[j][0]]
        if sep:
            attrs, p = tables[i]
            s = p.sum(axis=tuple(x for x, a in enumerate(attrs) if a not in sep))
            operands += [np.divide(1.0, s, out=np.zeros_like(s), where=s > 0), [names.index(a) for a in sep]]
    del letter
    return {w: np.einsum(*operands, [names.index(a) for a in w], optimize="greedy") for w in workload}


def _versapub(tmp: Path, csv: Path, flags: list[str], seed: int, select: str, names: list[str], dom, workload):
    rel, synth = tmp / f"{select}-{seed}", tmp / f"{select}-{seed}.csv"
    spec = f"dp:epsilon=1,delta=1e-9,select={select}"
    if select == "aim":  # AIM's workload: the benchmark's, every 3-way marginal
        spec += ",marginals=" + ";".join("+".join(w) for w in workload)
    pub = run([*VERSAPUB, "publish", "--input", str(csv), "--mechanism", spec, *flags, "--out", str(rel), "--quiet"])
    n = json.loads((rel / "manifest.json").read_text())["n_records"]
    sam = run([*VERSAPUB, "sample", str(rel), "-n", str(n), "-o", str(synth), "--seed", str(seed)])
    records = _read(synth, names)
    return {
        "seconds": pub.seconds + sam.seconds,
        "publish_seconds": pub.seconds,
        "peak_mb": max(pub.peak_mb, sam.peak_mb),
        "synthetic": {w: _marginal(records, w, dom) for w in workload},
        "model": _versapub_model(rel, workload, dom),
    }


def _reference(tmp: Path, csv: Path, domain: Path, seed: int, names: list[str], dom, workload, f32: bool = False):
    out = tmp / f"ref-{seed}-{f32}"
    env_path = os.environ.get("MBI_PATH")
    cmd = [sys.executable, str(HERE / "dp_reference.py"), str(csv), str(domain), str(out), "--seed", str(seed)]
    cmd += ["--float32"] if f32 else []
    if env_path:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (env_path, os.environ.get("PYTHONPATH")) if p)
    r = run(cmd)
    if r.returncode:
        raise SystemExit(f"the reference MST failed: {r.stderr[-1500:]}")
    records = _read(out / "synthetic.csv", names)
    model = np.load(out / "model.npz")
    timing = json.loads((out / "timing.json").read_text())  # until the synthetic records are written
    return {
        "seconds": timing["seconds"],
        "peak_mb": timing["peak_mb"],
        "synthetic": {w: _marginal(records, w, dom) for w in workload},
        "model": {w: model["|".join(w)] for w in workload},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--aim", action="store_true", help="also versapub's AIM (select=aim)")
    ap.add_argument("--aim-only", action="store_true", help="only versapub's AIM, added to the runs already in --json")
    ap.add_argument("--json", type=Path, help="write the measurements here (the results page reads them)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="versapub-dp-bench-"))
    try:
        csv, domain, dom, flags = _inputs(tmp)
        names = list(dom)
        workload = list(itertools.combinations(names, 3))
        truth_records = _read(csv, names)
        truth = {w: _marginal(truth_records, w, dom) for w in workload}
        tools = ["versapub MST", "reference MST", "reference MST (float32)"] + (["versapub AIM"] if args.aim else [])
        tools = ["versapub AIM"] if args.aim_only else tools
        runs: dict[str, list[dict]] = {t: [] for t in tools}
        for seed in range(args.seeds):
            for tool in tools:
                if tool.startswith("reference MST"):
                    r = _reference(tmp, csv, domain, seed, names, dom, workload, "float32" in tool)
                else:
                    select = "aim" if "AIM" in tool else "mst"
                    r = _versapub(tmp, csv, flags, seed, select, names, dom, workload)
                row = {
                    "seed": seed,
                    "seconds": round(r["seconds"], 2),
                    "peak_mb": round(r["peak_mb"], 1),
                    "error_synthetic": round(_error(truth, r["synthetic"]), 5),
                    "error_model": round(_error(truth, r["model"]), 5),
                }
                runs[tool].append(row)
                print(f"{tool} seed {seed}: {row}", flush=True)
        if args.aim_only and args.json:  # beside the runs already recorded
            runs = {**json.loads(args.json.read_text())["runs"], **runs}
        med = {t: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "seed"} for t, rs in runs.items()}
        v, ref = med["versapub MST"], med["reference MST"]
        summary = {
            "error_ratio_model": v["error_model"] / ref["error_model"],
            "error_ratio_synthetic": v["error_synthetic"] / ref["error_synthetic"],
            "error_ratio_output": v["error_model"] / ref["error_synthetic"],
            "time_ratio": v["seconds"] / ref["seconds"],
        }
        print("\ntool | seconds | peak MB | error (synthetic) | error (model)")
        for t, m in med.items():
            print(
                f"{t} | {m['seconds']:.1f} | {m['peak_mb']:.0f} | {m['error_synthetic']:.4f} | {m['error_model']:.4f}"
            )
        print(
            f"\nversapub / reference: error (models) {summary['error_ratio_model']:.3f} (target <= 1.1), error "
            f"(synthetic records) {summary['error_ratio_synthetic']:.3f}, "
            f"time {summary['time_ratio']:.2f} (target <= 2)"
        )
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            import platform

            meta = {"machine": platform.platform(), "cpus": os.cpu_count(), "seeds": len(runs["versapub MST"])}
            args.json.write_text(json.dumps({"runs": runs, "medians": med, "summary": summary, **meta}, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
