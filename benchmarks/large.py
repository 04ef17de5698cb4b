"""Issue 67's table: a steward's biggest files, each whole command in a fresh process beside its
DuckDB reference (a read of the same file and one ``GROUP BY`` per column) from the same run.

    python benchmarks/large.py                  # the personnel stand-in and texas_like 10^6 (~10 minutes)
    python benchmarks/large.py --only personnel # the rows whose job names this
    python benchmarks/large.py --json out.json  # also the measurements as JSON

Rows: the 1.4M-record personnel stand-in (:mod:`personnel`; the issue's real file is not in
this repository), its default publish and its ``evaluate``; the default publish of texas_like
10^6 x 18 (9 rules, l = 10) and its ``check --original``. Each publish also runs without its
utility step, so that the utility's share is measured, not guessed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from personnel import PERSONNEL_RULE, write_personnel_like  # noqa: E402
from suite import VERSAPUB, _rule_args, _texas_csv, run  # noqa: E402
from whole import reference  # noqa: E402


def _row(job: str, seconds: float, peak: float, ref: float, target: float | None) -> dict[str, object]:
    ratio = seconds / ref if ref else float("nan")
    return {
        "job": job,
        "seconds": round(seconds, 1),
        "peak_mb": round(peak),
        "reference_s": round(ref, 2),
        "times_reference": round(ratio, 1),
        "target": target,
        "verdict": None if target is None else ("PASS" if ratio <= target else "MISS"),
    }


def personnel(tmp: Path) -> list[dict[str, object]]:
    csv = tmp / "personnel.csv"
    if not csv.exists():
        write_personnel_like(csv)
    ref = reference(csv)
    args = ["publish", "--input", str(csv), "--rule", PERSONNEL_RULE, "--l", "2", "--others", "insensitive"]
    pub = run([*VERSAPUB, *args, "--out", str(tmp / "pers")])
    bare = run([*VERSAPUB, *args, "--no-utility", "--out", str(tmp / "pers_bare")])
    ev = run([*VERSAPUB, "evaluate", str(tmp / "pers"), "--original", str(csv)])
    return [
        _row("personnel stand-in 1,414,593 x 7, default publish (l = 2)", pub.seconds, pub.peak_mb, ref, 10),
        _row("- the same without utility", bare.seconds, bare.peak_mb, ref, None),
        _row("- evaluate of its release (target <= 15 s)", ev.seconds, ev.peak_mb, ref, None),
    ]


def texas(tmp: Path) -> list[dict[str, object]]:
    from versapub.datasets import TEXAS_LIKE_RULES

    csv = _texas_csv(tmp, 10**6)
    ref = reference(csv)
    args = ["publish", "--input", str(csv), *_rule_args(TEXAS_LIKE_RULES), "--l", "10"]
    args += ["--allow-unique", "surgeon,and_md", "--others", "insensitive", "--allow-proxy", "thcic"]
    pub = run([*VERSAPUB, *args, "--out", str(tmp / "tx")])
    bare = run([*VERSAPUB, *args, "--no-utility", "--out", str(tmp / "tx_bare")])
    chk = run([*VERSAPUB, "check", str(tmp / "tx"), "--original", str(csv)], expect=(0, 6))
    return [
        _row("texas_like 10^6 x 18, default publish (9 rules, l = 10)", pub.seconds, pub.peak_mb, ref, 8),
        _row("- the same without utility", bare.seconds, bare.peak_mb, ref, None),
        _row("- check --original of its release", chk.seconds, chk.peak_mb, ref, None),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only the jobs whose name contains this text")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--keep", type=Path, help="a folder for the inputs and releases (kept between runs)")
    a = ap.parse_args()
    jobs = {"personnel": personnel, "texas": texas}
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = a.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        for name, job in jobs.items():
            if a.only and a.only not in name:
                continue
            rows += job(tmp)
    print("| job | seconds | peak MB | reference | × reference | target | verdict |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        target = "" if r["target"] is None else f"≤ {r['target']}×"
        print(
            f"| {r['job']} | {r['seconds']} | {r['peak_mb']:,} | {r['reference_s']} s | {r['times_reference']} | "
            f"{target} | {r['verdict'] or ''} |"
        )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
