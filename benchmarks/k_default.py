"""Issue 47, item 3: should the default job itself carry a floor ``k``?  The evidence, on the
real tables in the repository: each default job (no ``--k``) published through the command
line, then with ``--k 2``, ``--k 3`` and ``--k 5``; per run the records alone in their cell of
exactly published values, the columns recoded, the release's KL-divergence (over the
published values: a recoded release is measured over its recoded values) and the whole
command's time.

    python benchmarks/k_default.py            # about 5 minutes
    python benchmarks/k_default.py --json k.json

Jobs: the demo (UCI Adult, Table 5a domains, four rules, l = 2), the hospital stand-in of
``whole.py`` (101,766 SPARCS 2020 discharges, GD's five rules), the README's hospital example
(synthetic, 1,000 patients) and a wide table (``test_real_files_2``'s 4,000 records with a
near-unique column).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import VERSAPUB, run  # noqa: E402
from whole import HOSPITAL_DROP, HOSPITAL_GD_RULES, _rule_args, hospital_csv  # noqa: E402

ROOT = HERE.parent
FLOORS = (None, 2, 3, 5)


def jobs(tmp: Path) -> dict[str, list[str]]:
    from versapub.datasets import data_path

    demo = [str(data_path("adult", "adult.toml"))]  # the job `versapub demo` runs
    hospital = ["--input", str(hospital_csv(tmp)), *_rule_args(HOSPITAL_GD_RULES), "--l", "2", "--decomposition", "gd"]
    example = ["--input", str(ROOT / "examples" / "data.csv"), "--rule", "age, sex -> disease"]
    example += ["--rule", "zip -> education", "--identifying", "patient_id", "--insensitive", "race,hours", "--l", "2"]
    wide = tmp / "wide.csv"
    rng = np.random.default_rng(7)
    n = 4000
    a, b, s = rng.integers(0, n, size=n), rng.integers(0, 3, size=n), rng.integers(0, 10, size=n)
    wide.write_text("a,b,s\n" + "".join(f"a{x},b{y},s{z}\n" for x, y, z in zip(a, b, s, strict=True)))
    return {
        "demo (Adult, 4 rules)": demo,
        "hospital stand-in (GD, 5 rules)": [*hospital, *HOSPITAL_DROP],
        "README hospital example": example,
        "wide table (near-unique column)": ["--input", str(wide), "--rule", "b -> s", "--others", "insensitive"],
    }


def one(args: list[str], out: Path, k: int | None) -> dict[str, object]:
    r = run([*VERSAPUB, "publish", *args, *(["--k", str(k)] if k else []), "--out", str(out), "--overwrite"])
    if r.returncode:
        return {"k": k, "failed": r.returncode}
    m = json.loads((out / "manifest.json").read_text())
    alone = max((t.get("identity_risk", {}).get("unique_share", 0.0) for t in m["tables"]), default=0.0)
    return {
        "k": k,
        "seconds": round(r.seconds, 1),
        "alone": alone,
        "kl": (m.get("utility") or {}).get("kl_divergence"),
        "recoded": {a: spec["level"] for a, spec in (m.get("recoded") or {}).items()},
        "preview": (m.get("k_preview") or {}).get("k"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, job in jobs(Path(tmp)).items():
            for k in FLOORS:
                got = one(job, Path(tmp) / f"r{len(rows)}", k)
                rows.append({"job": name, **got})
                kl = got.get("kl")
                shown = kl if kl is None else round(float(kl), 4)  # type: ignore[arg-type]
                said = (
                    f"FAILED (exit {got['failed']})"
                    if "failed" in got
                    else f"{got['seconds']:6.1f} s  alone {got['alone']:.1%}  KL {shown}  recoded {got['recoded']}"
                )
                print(f"{name:34} k={k or '-':>2}  {said}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
