"""Issue 32's targets: re-identification risk of 10^6 records with 5 quasi-identifiers
(<= 2 s) and SUDA on Adult's 8 quasi-identifiers (<= 30 s), each measured as the command
line runs it (a fresh process, read to printed result, peak memory) and as the measures alone
on a table in memory; beside a DuckDB read + GROUP BY of the same columns in the same run,
and the ``suda`` package from PyPI (pandas; it finds sample uniques per attribute subset
without the minimality test, so only each record's smallest MSU is comparable) as a peer.

    python benchmarks/risk.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import VERSAPUB, _texas_csv, run

QI5 = ["gender", "pat_age", "race", "county", "hcfa_mdc"]
ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]

GROUP_BY = r"""
import sys, time, duckdb
path, cols, delim = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
t0 = time.perf_counter()
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
sel = ", ".join(f'"{c}"' for c in cols)
src = f"read_csv('{path}', all_varchar = true, delim = '{delim}')"
con.execute(f"SELECT {sel}, count(*) FROM {src} GROUP BY {sel}").fetchall()
print(time.perf_counter() - t0)
"""


def reference(path: Path, cols: list[str], delim: str = ",") -> float:
    out = subprocess.run(
        [sys.executable, "-c", GROUP_BY, str(path), ",".join(cols), delim], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def in_memory(path: Path, qi: list[str], delim: str | None, **kw: object) -> tuple[float, dict[str, object]]:
    import versapub
    from versapub.inspect import risk

    table = versapub.read_table(path, delimiter=delim, columns=qi)
    t = time.perf_counter()
    rep = risk(table, qi=qi, **kw)  # type: ignore[arg-type]
    return time.perf_counter() - t, rep.to_json()


def peer_suda(path: Path, qi: list[str], max_msu: int) -> tuple[float, list[int]] | None:
    try:
        import pandas as pd
        import suda
    except ImportError:
        return None
    df = pd.read_csv(path, sep=";", dtype=str)[qi]
    t = time.perf_counter()
    out = suda.suda(df.copy(), max_msu=max_msu)
    return time.perf_counter() - t, [int(x) for x in out.sort_index()["msu"].fillna(0)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = _texas_csv(Path(tmp), 10**6)
        ref = reference(csv_path, QI5)
        for suda_flag in (["--no-suda"], []):
            r = run(
                [
                    *VERSAPUB,
                    "risk",
                    str(csv_path),
                    "--qi",
                    ",".join(QI5),
                    "--sampling-fraction",
                    "0.1",
                    "--json",
                    *suda_flag,
                ]
            )
            alone, _ = in_memory(csv_path, QI5, None, sampling_fraction=0.1, with_suda=not suda_flag)
            rows.append(
                {
                    "job": f"risk, texas_like 10^6, 5 QI{'' if suda_flag else ', with SUDA (MSUs up to 5)'}",
                    "command_s": round(r.seconds, 2),
                    "peak_mb": round(r.peak_mb),
                    "measures_s": round(alone, 2),
                    "reference_s": round(ref, 2),
                    "target": "<= 2 s",
                }
            )
        from versapub.datasets import data_path

        adult = data_path("adult", "adult.csv.gz")
        plain = Path(tmp) / "adult.csv"
        import gzip

        plain.write_bytes(gzip.decompress(adult.read_bytes()))
        ref = reference(plain, ADULT_QI, ";")
        for size in (5, 8):
            r = run(
                [
                    *VERSAPUB,
                    "risk",
                    str(plain),
                    "--delimiter",
                    ";",
                    "--qi",
                    ",".join(ADULT_QI),
                    "--suda-max-size",
                    str(size),
                    "--json",
                ]
            )
            alone, rep = in_memory(plain, ADULT_QI, ";", suda_max_size=size)
            row: dict[str, object] = {
                "job": f"SUDA, Adult 30,162, 8 QI, MSUs up to {size}",
                "command_s": round(r.seconds, 2),
                "peak_mb": round(r.peak_mb),
                "measures_s": round(alone, 2),
                "reference_s": round(ref, 2),
                "target": "<= 30 s",
                "msus_by_size": rep["suda"]["msus_by_size"],  # type: ignore[index]
            }
            peer = peer_suda(plain, ADULT_QI, size)
            if peer is not None:
                import numpy as np

                import versapub
                from versapub.privacy.risk.suda import suda as ours

                t = versapub.read_table(plain, delimiter=";", columns=ADULT_QI)
                mine = ours(
                    [t.codes(a) for a in ADULT_QI], [t.cardinality(a) for a in ADULT_QI], ADULT_QI, max_size=size
                )
                row["peer_suda_s"] = round(peer[0], 2)
                row["smallest_msu_agrees"] = bool(np.array_equal(mine.smallest, np.array(peer[1])))
            rows.append(row)
    width = max(len(str(r["job"])) for r in rows)
    for r in rows:
        extra = ", ".join(f"{k} {v}" for k, v in r.items() if k not in ("job",))
        print(f"{r['job']!s:<{width}} | {extra}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
