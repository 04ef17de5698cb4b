"""Issue 34's measurements: ARX's further privacy models and local suppression on ARX's
Adult (30,162 records), each run as the whole command a user types (``versapub publish``
in a fresh process: reading, rules, anonymizing, utility, writing, verifying, report),
with k-anonymity and distinct l-diversity run in the same minute as the peers.

Job: quasi-identifiers age, sex, race, marital-status (ARX's hierarchy), native-country
(ARX's hierarchy) and, for the models protecting a value, the rule ``QI -> occupation``;
the other columns declared identifying.  For each anonymizer (mondrian, incognito with
ARX's age hierarchy too) and model: wall time, classes, suppressed records, the achieved
value, the KL-divergence of the release model and the verification verdict.

The models checked against a population (delta-presence, k-map without a fraction) run on a
research subset of every fifth Adult record with ``--population`` all of Adult, beside
k-anonymity on the same subset (their peer, same minute); suppression is not combined with
them (refused: ``docs/choices.md``).

    python benchmarks/arx_models.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "src/versapub/datasets/data/adult"
QI = "age,sex,race,marital-status,native-country"
RULE = "age, sex, race, marital-status, native-country -> occupation"
MODELS = [  # (label, --guarantee, rule job?)
    ("k-anonymity k=10 (peer)", "k-anonymity:k=10", False),
    ("k-map k=50, f=0.2", "k-map:k=50,fraction=0.2", False),
    ("distinct 3-diversity (peer)", "distinct-l-diversity:l=3", True),
    ("basic beta-likeness beta=1", "beta-likeness:beta=1", True),
    ("enhanced beta-likeness beta=1", "beta-likeness:beta=1,enhanced=true", True),
    ("delta-disclosure delta=1.2", "delta-disclosure:delta=1.2", True),
]
#: On the research subset, (label, --guarantee, rule job?, with --population?).
POPULATION_MODELS = [
    ("subset: k-anonymity k=10 (peer)", "k-anonymity:k=10", False, False),
    ("subset: k-map k=10 vs population", "k-map:k=10", False, True),
    ("subset: delta-presence (0, 0.5)", "delta-presence:delta_max=0.5", False, True),
    ("subset: delta-presence (0.05, 0.5)", "delta-presence:delta_min=0.05,delta_max=0.5", False, True),
    ("subset: delta-presence, rule job", "delta-presence:delta_min=0.05,delta_max=0.5", True, True),
]


def research_subset(path: Path) -> Path:
    """Every fifth record of Adult (the header kept), as an uncompressed CSV."""
    import gzip

    lines = gzip.decompress((ADULT / "adult.csv.gz").read_bytes()).decode("utf-8").splitlines()
    path.write_text("\n".join([lines[0], *lines[1::5]]) + "\n", encoding="utf-8")
    return path


def run(
    out: Path, anonymizer: str, guarantee: str, rule: bool, data: Path | None = None, population: bool = False
) -> dict[str, object]:
    hier = ["marital-status", "native-country"] + (["age"] if anonymizer.startswith("incognito") else [])
    cmd = [
        sys.executable, "-m", "versapub.cli.main", "publish", "--input", str(data or ADULT / "adult.csv.gz"),
        "--delimiter", ";", "--others", "identifying", "--anonymizer", anonymizer, "--out", str(out),
    ]  # fmt: skip
    cmd += ["--population", str(ADULT / "adult.csv.gz")] if population else []
    cmd += ["--rule", f"{RULE} | {guarantee}"] if rule else ["--qi", QI, "--guarantee", guarantee]
    for a in hier:
        cmd += ["--hierarchy", f"{a}={ADULT / 'hierarchies' / f'adult_hierarchy_{a}.csv'}"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return {"wall": wall, "error": p.stderr.strip().splitlines()[-1][:160]}
    m = json.loads((out / "manifest.json").read_text())
    st = m["tables"][0]["stats"]
    v = json.loads((out / "verification.json").read_text())
    return {
        "wall": wall,
        "classes": st["groups"],
        "suppressed": st.get("suppressed_records", 0),
        "achieved": st["achieved"],
        "kl": m["utility"]["kl_divergence"],
        "verified": v["ok"],
    }


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        subset = research_subset(Path(tmp) / "research.csv")
        jobs = [
            (a, label, g, rule, None, False)
            for a in ("mondrian", "mondrian:suppression=0.02", "incognito", "incognito:suppression=0.02")
            for label, g, rule in MODELS
        ]
        jobs += [
            (a, label, g, rule, subset, pop)
            for a in ("mondrian", "incognito")
            for label, g, rule, pop in POPULATION_MODELS
        ]
        for anonymizer, label, g, rule, data, pop in jobs:
            out = Path(tmp) / "r"
            shutil.rmtree(out, ignore_errors=True)
            r = run(out, anonymizer, g, rule, data, pop)
            rows.append((anonymizer, label, r))
            if "error" in r:
                print(f"{anonymizer:28} {label:32} {r['wall']:6.2f} s  refused: {r['error']}", flush=True)
                continue
            print(
                f"{anonymizer:28} {label:32} {r['wall']:6.2f} s  classes {r['classes']:>5}  suppressed "
                f"{r['suppressed']:>4}  achieved {r['achieved']:.3g}  KL {r['kl']:.3f}  verified {r['verified']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
