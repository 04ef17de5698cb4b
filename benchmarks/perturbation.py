"""Issue 48: what the treatments cost.

1. In process, on 10^6 loan-like records (``versapub.datasets.synthetic.loans``, households of
   three in 10 regions x 100 districts added): encoding the table (the reference, in the same
   minute), then each treatment applied, and the record-by-record measures of what it
   changed (``treatments/measures.py``), each timed.
2. MDAV's growth: exact MDAV (one block) on two normal columns at doubling sizes until a run
   takes more than 60 s (the largest size it finishes in 60 s is the one before), then MDAV in
   blocks of 2,000 at 10^5 and 10^6 records.
3. Whole commands: the default job on Adult without treatments and with ``age`` top-coded
   and rounded; the loans (``--loans N`` records, default 10^6) published without treatments
   and with noise on amount and installment, PRAM of home ownership and MDAV of income —
   back to back, time and peak memory.

    python benchmarks/perturbation.py                    # about 15 minutes
    python benchmarks/perturbation.py --quick            # 10^5 records, no growth sweep
"""

from __future__ import annotations

import argparse
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
from versapub.datasets.synthetic import loans, write_csv  # noqa: E402
from versapub.treatments import parse_treatment  # noqa: E402
from versapub.treatments.measures import perturbation_measures  # noqa: E402
from versapub.treatments.microaggregation import mdav  # noqa: E402

SPECS = [
    "top-coding:columns=annual_income,quantile=0.99",
    "rounding:columns=annual_income,base=1000",
    "microaggregation:columns=loan_amount;installment,k=3",
    "microaggregation:columns=installment,k=3,method=individual-ranking",
    "microaggregation:columns=installment,k=3,method=optimal",
    "noise:columns=loan_amount;installment,magnitude=10",
    "noise:columns=loan_amount;installment,magnitude=10,method=correlated",
    "pram:columns=homeownership;purpose,retention=0.8",
    "pram:columns=homeownership,retention=0.8,invariant=true,strata=state",
    "rank-swapping:columns=installment,p=5",
    "targeted-swapping:columns=region;district,keys=emp_length;homeownership,unit=hid,rate=0.05",
]
LOAN_Q = "state, emp_title, emp_length, homeownership, annual_income"


def _loans(n: int) -> dict[str, list[str]]:
    d = loans(n, 1)
    d["hid"] = [str(i // 3) for i in range(n)]
    d["region"] = [f"r{(i // 3) % 10}" for i in range(n)]
    d["district"] = [f"d{(i // 3) % 100}" for i in range(n)]
    return d


def in_process(n: int) -> None:
    d = _loans(n)
    t0 = time.perf_counter()
    table = EncodedTable.from_columns(d)
    ref = time.perf_counter() - t0
    print(f"{n:,} loan records, {len(d)} columns; encoding the table (the reference): {ref:.2f} s")
    rng = np.random.default_rng(48)
    for spec in SPECS:
        treatment = parse_treatment(spec)
        t0 = time.perf_counter()
        out = treatment.apply(table, rng)
        s = time.perf_counter() - t0
        t0 = time.perf_counter()
        perturbation_measures(table, out.table, list(treatment.columns))
        m = time.perf_counter() - t0
        print(f"  {spec}: {s:.2f} s ({s / ref:.2f}x the encoding); its measures {m:.2f} s", flush=True)


def mdav_growth(limit: float = 60.0) -> None:
    rng = np.random.default_rng(1)
    n, last = 12_500, None
    while True:
        z = rng.normal(size=(n, 2))
        t0 = time.perf_counter()
        mdav(z, 3, block=n)
        s = time.perf_counter() - t0
        grew = f" ({s / last[1]:.1f}x the time of {last[0]:,})" if last else ""
        print(f"  exact MDAV, k = 3, {n:,} records: {s:.1f} s{grew}", flush=True)
        if s > limit:
            print(f"  the largest size exact MDAV finishes in {limit:.0f} s: {last[0] if last else 0:,} records")
            break
        last, n = (n, s), n * 2
    for n in (10**5, 10**6):
        z = rng.normal(size=(n, 2))
        t0 = time.perf_counter()
        mdav(z, 3)
        print(f"  MDAV in blocks of 2,000, k = 3, {n:,} records: {time.perf_counter() - t0:.1f} s", flush=True)


def whole_commands(n: int) -> None:
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
        data = Path(tmp) / "loans.csv"
        write_csv(_loans(n), str(data))
        rules = [a for s in ("grade", "sub_grade", "interest_rate") for a in ("--rule", f"{LOAN_Q} -> {s}")]
        args = [*VERSAPUB, "publish", "--input", str(data), *rules, "--l", "2", "--others", "insensitive"]
        args += ["--identifying", "hid", "--allow-unique", "installment,loan_amount,annual_income", "--quiet"]
        plain = ["--allow-proxy", "installment,loan_amount,term"]  # untreated, the pair recovers the grade
        treat = ["--treat", "noise:columns=loan_amount;installment,magnitude=20"]
        treat += ["--treat", "pram:columns=homeownership,retention=0.9"]
        treat += ["--treat", "microaggregation:columns=annual_income"]
        for label, extra in (("without treatments (--allow-proxy)", plain), ("with noise, PRAM and MDAV", treat)):
            r = run([*args, *extra, "--out", str(Path(tmp) / f"loans {label}".replace(" ", "_"))])
            print(f"Loans, {n:,} records, {label}: {r.seconds:.1f} s, {r.peak_mb:,.0f} MB (exit {r.returncode})")
            if r.returncode not in (0, 6):
                print("   ", r.stderr.strip().splitlines()[-1][:400] if r.stderr.strip() else "")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10^5 records and no growth sweep")
    ap.add_argument("--loans", type=int, default=None, help="records of the loans whole command")
    a = ap.parse_args()
    size = 10**5 if a.quick else 10**6
    in_process(size)
    if not a.quick:
        mdav_growth()
    whole_commands(a.loans or size)
