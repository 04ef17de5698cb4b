"""Issue 68's benchmark: 10^5 persons in 4 x 10^4 households (``versapub.datasets.households``),
each whole command in a fresh process, with and without ``--household``, beside a DuckDB read
of the same file and one ``GROUP BY`` per column from the same run.

    python benchmarks/households.py            # publish and risk, with and without --household
    python benchmarks/households.py --json out.json

The publish job: ``region, hh_size, sex, age -> tenure`` at l = 2 with household income and
dwelling dropped (they fingerprint a household: with them the set screen refuses the job,
tests/test_households.py), the other columns insensitive.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import VERSAPUB, run  # noqa: E402
from whole import reference  # noqa: E402

HOUSEHOLDS = 40_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    a = ap.parse_args()
    from versapub.datasets.households import households
    from versapub.datasets.synthetic import write_csv

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        csv = tmp / "households.csv"
        write_csv(households(HOUSEHOLDS, seed=0), str(csv))
        n = sum(1 for _ in csv.open()) - 1
        ref = reference(csv)
        job = ["publish", "--input", str(csv), "--rule", "region, hh_size, sex, age -> tenure", "--l", "2"]
        job += ["--identifying", "hh_income,dwelling", "--others", "insensitive"]
        risk = ["risk", str(csv), "--qi", "region,hh_size,sex,age,marital", "--no-suda"]
        for name, args, expect in (
            ("publish, the id dropped (--identifying hh_id)", [*job, "--identifying", "hh_id"], (0,)),
            ("publish --household hh_id", [*job, "--household", "hh_id"], (0,)),
            ("publish --k 3 (records)", [*job, "--household", "hh_id", "--k", "3", "--suppression", "0.5"], (0,)),
            (
                "publish --k 3 --unit household",
                [*job, "--household", "hh_id", "--k", "3", "--unit", "household", "--suppression", "0.5"],
                (0,),
            ),
            ("risk", risk, (0,)),
            ("risk --household hh_id", [*risk, "--household", "hh_id"], (0,)),
        ):
            out = ["--out", str(tmp / f"rel{len(rows)}")] if args[0] == "publish" else []
            r = run([*VERSAPUB, *args, *out], expect=(*expect, 6))
            rows.append({"job": name, "seconds": round(r.seconds, 2), "peak_mb": round(r.peak_mb)})
    print(f"{n:,} persons in {HOUSEHOLDS:,} households; DuckDB reference {ref:.2f} s")
    print("| job | seconds | peak MB |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r['job']} | {r['seconds']} | {r['peak_mb']:,} |")
    if a.json:
        a.json.write_text(json.dumps({"persons": n, "reference_s": ref, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
