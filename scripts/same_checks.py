"""Issue 70: the verifier's rooms change no behaviour. Publishes sixteen jobs that exercise
every room (Anatomy by UAD, GD, single-attribute and multi-sa; Mondrian and Incognito with
several guarantees; the MSA decomposition; Sequential Sweep; anonymized marginals;
differential privacy; treatments; key variables with local suppression; record suppression;
households; an allowed proxy), then runs ``versapub check --json --original`` on each with
the code on ``PYTHONPATH`` and writes the results with their timings removed, one JSON file
per job, for a diff between two checkouts:

    python scripts/same_checks.py --publish /tmp/jobs            # once, with either checkout
    PYTHONPATH=/old/src python scripts/same_checks.py --check /tmp/jobs --out /tmp/old
    PYTHONPATH=src python scripts/same_checks.py --check /tmp/jobs --out /tmp/new
    diff -r /tmp/old /tmp/new && echo identical
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples/data.csv"
ADULT = ROOT / "src/versapub/datasets/data/adult/adult.csv.gz"
HIER = ROOT / "src/versapub/datasets/data/adult/hierarchies"
ROLES = ["--identifying", "patient_id", "--others", "insensitive"]
ADULT_IN = ["--input", str(ADULT), "--delimiter", ";"]
JOBS: dict[str, tuple[list[str], Path]] = {
    "uad": (["--input", str(DATA), "--rule", "age, sex -> disease", "--rule", "zip -> education", *ROLES], DATA),
    "gd": (["--input", str(DATA), "--rule", "age, sex -> disease", "--decomposition", "gd", *ROLES], DATA),
    "single": (
        ["--input", str(DATA), "--rule", "age, sex -> disease", "--decomposition", "single-attribute", *ROLES],
        DATA,
    ),
    "multi-sa": (
        [
            "--input",
            str(DATA),
            "--rule",
            "age -> disease",
            "--rule",
            "sex -> education",
            "--decomposition",
            "multi-sa",
            *ROLES,
        ],
        DATA,
    ),
    "mondrian-t": (
        [
            "--input",
            str(DATA),
            "--qi",
            "age,sex,zip",
            "--sensitive",
            "disease",
            "--guarantee",
            "t-closeness:t=0.3",
            "--anonymizer",
            "mondrian",
            "--identifying",
            "patient_id",
            "--others",
            "identifying",
        ],
        DATA,
    ),
    "incognito-k": (
        [
            "--input",
            str(DATA),
            "--qi",
            "age,sex",
            "--guarantee",
            "k-anonymity:k=5",
            "--anonymizer",
            "incognito",
            "--identifying",
            "patient_id",
            "--others",
            "identifying",
        ],
        DATA,
    ),
    "mondrian-beta": (
        [
            "--input",
            str(DATA),
            "--rule",
            "zip, sex -> disease | beta-likeness:beta=1,enhanced=true",
            "--anonymizer",
            "mondrian:suppression=0.02",
            "--identifying",
            "patient_id",
            "--others",
            "identifying",
        ],
        DATA,
    ),
    "msa": (
        [
            *ADULT_IN,
            "--qi",
            "age,sex,race",
            "--sensitive",
            "occupation:3,education",
            "--anonymizer",
            "msa-decomposition",
            "--others",
            "identifying",
        ],
        ADULT,
    ),
    "sweep": (
        [
            *ADULT_IN,
            "--qi",
            "age,sex,race",
            "--sensitive",
            "occupation",
            "--guarantee",
            "functional:tau=0.6,lambda=2",
            "--anonymizer",
            "sequential-sweep",
            "--others",
            "identifying",
        ],
        ADULT,
    ),
    "dp": (
        [
            *ADULT_IN,
            "--hierarchies",
            str(HIER),
            "--column",
            "race",
            "--column",
            "sex",
            "--column",
            "marital-status",
            "--mechanism",
            "dp:epsilon=1,delta=1e-9,select=mst",
            "--seed",
            "1",
        ],
        ADULT,
    ),
    "treated": (
        [
            "--input",
            str(DATA),
            "--rule",
            "age, sex -> disease",
            "--treat",
            "top-coding:columns=hours,quantile=0.95",
            "--treat",
            "rounding:columns=hours,base=5",
            *ROLES,
        ],
        DATA,
    ),
    "keys-cells": (
        [
            "--input",
            str(DATA),
            "--rule",
            "age, sex -> disease",
            "--keys",
            "age,sex,zip",
            "--k",
            "5",
            "--suppression-mode",
            "cells",
            *ROLES,
        ],
        DATA,
    ),
    "k-records": (
        ["--input", str(DATA), "--rule", "age, sex -> disease", "--k", "3", "--suppression", "0.1", *ROLES],
        DATA,
    ),
    "k5-general": (
        [
            "--input",
            str(DATA),
            "--rule",
            "age, sex -> disease",
            "--rule",
            "zip -> education",
            "--k",
            "5",
            "--identifying",
            "patient_id",
            "--insensitive",
            "race,hours",
        ],
        DATA,
    ),
    "pram": (
        [
            "--input",
            str(DATA),
            "--rule",
            "age, sex -> disease",
            "--treat",
            "pram:columns=education,retention=0.8",
            "--seed",
            "3",
            *ROLES,
        ],
        DATA,
    ),
    "proxy": (
        [
            "--input",
            str(ROOT / "examples/discharges.csv"),
            "--rule",
            "age, sex, race -> diagnosis",
            "--identifying",
            "encounter_id",
            "--identifying",
            "patient_nbr",
            "--others",
            "insensitive",
            "--allow-proxy",
            "diagnosis_chapter",
        ],
        ROOT / "examples/discharges.csv",
    ),
}
TIMINGS = {"seconds", "timings_s", "checks_s", "elapsed", "time_s"}


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMINGS and not k.endswith("_seconds")}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--publish", type=Path, help="publish every job into this folder")
    ap.add_argument("--check", type=Path, help="check every release of this folder")
    ap.add_argument("--out", type=Path, help="with --check: write each job's check (timings removed) here")
    args = ap.parse_args()
    cli = [sys.executable, "-m", "versapub.cli.main"]
    if args.publish:
        args.publish.mkdir(parents=True, exist_ok=True)
        for name, (argv, _) in JOBS.items():
            r = subprocess.run(
                [*cli, "publish", *argv, "--out", str(args.publish / name), "--quiet"], capture_output=True, text=True
            )
            print(
                f"{name}: publish exit {r.returncode}",
                r.stderr.strip().splitlines()[-1:] if r.returncode not in (0, 6) else "",
            )
    if args.check:
        assert args.out is not None
        args.out.mkdir(parents=True, exist_ok=True)
        for name, (_, original) in JOBS.items():
            d = args.check / name
            if not (d / "manifest.json").is_file():
                continue
            r = subprocess.run(
                [*cli, "check", str(d), "--json", "--original", str(original)], capture_output=True, text=True
            )
            got = (
                _strip(json.loads(r.stdout))
                if r.stdout.strip().startswith("{")
                else {"stdout": r.stdout, "stderr": r.stderr}
            )
            (args.out / f"{name}.json").write_text(
                json.dumps({"exit": r.returncode, "check": got}, indent=1, sort_keys=True)
            )
            print(f"{name}: check exit {r.returncode}")


if __name__ == "__main__":
    main()
