"""Issue 48: what the treatments cost (first part: top and bottom coding, rounding).

1. In process, on 10^6 records of an income-like column (log-normal, two decimals: about
   920,000 distinct values): encoding the column (the reference, in the same minute) and
   each treatment applied to it.
2. The whole command on Adult (the default job, ``age, sex, race, marital-status ->
   occupation``, l = 2, with its hierarchies), without treatments and with ``age``
   top-coded at its 0.99 quantile and rounded to multiples of 5, back to back: time and
   peak memory.

    python benchmarks/perturbation.py            # about a minute
"""

from __future__ import annotations

import gzip
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import VERSAPUB, run  # noqa: E402
from versapub.data.table import EncodedTable  # noqa: E402
from versapub.datasets import data_path  # noqa: E402
from versapub.treatments import parse_treatment  # noqa: E402

SPECS = ["top-coding:columns=x,quantile=0.99", "bottom-coding:columns=x,threshold=1000", "rounding:columns=x,base=1000"]


def in_process(n: int = 10**6) -> None:
    rng = np.random.default_rng(48)
    x = np.round(rng.lognormal(10, 1, n), 2).astype(str)
    t0 = time.perf_counter()
    table = EncodedTable.from_columns({"x": list(x)})
    ref = time.perf_counter() - t0
    print(f"{n:,} records, {len(table.column('x').values):,} distinct values; encoding the column: {ref:.2f} s")
    for spec in SPECS:
        t0 = time.perf_counter()
        out = parse_treatment(spec).apply(table, rng)
        s = time.perf_counter() - t0
        print(f"  {spec}: {s:.2f} s ({s / ref:.2f}x the encoding), {out.record['changed']['x']:,} records changed")


def whole_command() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "adult.csv"
        csv.write_bytes(gzip.decompress(data_path("adult", "adult.csv.gz").read_bytes()))
        args = [*VERSAPUB, "publish", "--input", str(csv), "--delimiter", ";"]
        args += ["--rule", "age, sex, race, marital-status -> occupation", "--l", "2", "--others", "insensitive"]
        args += ["--hierarchies", str(data_path("adult", "hierarchies")), "--quiet"]
        treat = ["--treat", "top-coding:columns=age,quantile=0.99", "--treat", "rounding:columns=age,base=5"]
        for label, extra in (("without treatments", []), ("with top coding and rounding of age", treat)):
            r = run([*args, *extra, "--out", str(Path(tmp) / label.replace(" ", "_"))])
            print(f"Adult, default job, {label}: {r.seconds:.1f} s, {r.peak_mb:,.0f} MB (exit {r.returncode})")


if __name__ == "__main__":
    in_process()
    whole_command()
