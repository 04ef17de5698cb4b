"""The attacks on everything published against anonymeter (issue 45): inference, singling out
and linkability figures of ``versapub.verify.adversary.adversary`` beside anonymeter's on the same
records and targets, and the attacks' cost.

anonymeter (1.1) pins ``numpy<1.27`` and ``pyarrow<22``, which the project's own environment
cannot hold beside its dependencies: it is installed in a separate virtual environment
(``.venv-anonymeter``, created on first use) and run there on the same files — records drawn
from each release (``versapub.verify.adversary.adversary_records``, seeded), the original's records and
the targets.  Per release: Adult (the demo's Anatomy release; a Mondrian release; a collection
of anonymized marginals) and the SPARCS survivor set (Anatomy), each attack's success rate
with anonymeter's 95 % interval and ours, and whether each lies inside the other's interval.

    python benchmarks/attacks.py [--attacks 500] [--json FILE] [--cost]

``--cost`` also times ``versapub check --original`` on a 10^5-record release (the issue's
budget: 60 s).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
#: Records drawn from each release (anonymeter's nearest-neighbour search is brute force).
DRAWN = 10_000
#: Attempts at multivariate singling-out predicates (both tools).
MAX_ATTEMPTS = 20_000
#: Runs of each tool (another seed, and for anonymeter the drawn records in another order).
REPEATS = 5
ATTACKS = ("inference", "singling_out_univariate", "singling_out_multivariate", "linkability")
VENV = ROOT / ".venv-anonymeter"

DRIVER = r"""
import json, sys, warnings
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
warnings.filterwarnings("ignore")
d = sys.argv[1]
p = json.load(open(f"{d}/params.json"))
read = lambda f: pd.read_csv(f"{d}/{f}", keep_default_na=False, na_values=[""])
syn0, ori, tgt = read("syn.csv"), read("ori.csv"), read("targets.csv")
out = {k: [] for k in ("inference", "singling_out_univariate", "singling_out_multivariate", "linkability")}
def rate(ev):
    r = ev.results()
    return {"rate": r.attack_rate.value, "error": r.attack_rate.error, "baseline": r.baseline_rate.value}
for k in range(p["repeats"]):
    syn = syn0.sample(frac=1.0, random_state=k).reset_index(drop=True)  # ties met in another order
    ev = InferenceEvaluator(ori=tgt, syn=syn, aux_cols=p["aux"], secret=p["secret"], n_attacks=len(tgt),
                            regression=p["regression"])
    out["inference"].append(rate(ev.evaluate(n_jobs=1)))
    for mode in ("univariate", "multivariate"):
        ev = SinglingOutEvaluator(ori=ori, syn=syn, n_attacks=p["n"], n_cols=p["n_cols"], seed=k,
                                  max_attempts=p["max_attempts"])
        out["singling_out_" + mode].append(rate(ev.evaluate(mode=mode)))
    ev = LinkabilityEvaluator(ori=tgt, syn=syn, aux_cols=(p["link_a"], p["link_b"]), n_attacks=len(tgt),
                              n_neighbors=1)
    out["linkability"].append(rate(ev.evaluate(n_jobs=1)))
json.dump(out, open(f"{d}/anonymeter.json", "w"))
"""


def ensure_venv() -> Path:
    """The anonymeter environment (created with ``python -m venv`` and ``pip install``)."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "anonymeter>=1.0"], check=True)
    return python


def releases(tmp: Path, only: str | None = None) -> list[tuple[str, Path, Any, str]]:
    """(name, release, the original as the release read it, protected attribute)."""
    from versapub import PublishConfig, datasets, workflow
    from versapub.privacy.screens.roles import ColumnRoles

    adult = datasets.data_path("adult", "adult.csv.gz")
    qi = ["age", "sex", "race", "native-country"]
    out = []
    demo = datasets.adult_config()
    workflow.run(demo, tmp / "adult-anatomy", utility=False)
    out.append(("adult, Anatomy (the demo)", tmp / "adult-anatomy", demo.read(), "occupation"))
    cfg = PublishConfig(
        input=adult,
        delimiter=";",
        rules=(f"{', '.join(qi)} -> occupation",),
        guarantee="distinct-l-diversity",
        guarantee_params={"l": 3},
        anonymizer="mondrian",
        roles=ColumnRoles(others="insensitive"),
    )
    workflow.run(cfg, tmp / "adult-mondrian", utility=False)
    out.append(("adult, Mondrian", tmp / "adult-mondrian", cfg.read(), "occupation"))
    subprocess.run(
        [sys.executable, "-m", "versapub.cli.main", "marginals", "publish", "--input", str(adult), "--delimiter", ";",
         "--hierarchies", str(datasets.data_path("adult", "hierarchies")), "--column", "race", "--column", "sex",
         "--column", "age", "--column", "marital-status", "--column", "occupation", "--sensitive", "occupation",
         "--k", "10", "--l", "3", "--base", "incognito", "--marginal", "race, occupation", "--out",
         str(tmp / "adult-marginals")],
        check=True, capture_output=True,
    )  # fmt: skip
    from versapub.io.read import read_table

    out.append(("adult, marginals", tmp / "adult-marginals", read_table(adult, delimiter=";"), "occupation"))
    sparcs = datasets.data_path("sparcs", "sparcs2020_survivorset.csv.gz")
    cfg = PublishConfig(
        input=sparcs,
        rules=("age, Gender, Race -> CCSR.Diagnosis.Code",),
        l=2,
        roles=ColumnRoles(others="insensitive"),
    )
    workflow.run(cfg, tmp / "sparcs-anatomy", utility=False)
    sparcs_table = cfg.read()
    out.append(("sparcs, Anatomy", tmp / "sparcs-anatomy", sparcs_table, "CCSR.Diagnosis.Code"))
    cfg = PublishConfig(
        input=sparcs,
        rules=("age, Gender, Race, Ethnicity -> CCSR.Diagnosis.Code",),
        guarantee="distinct-l-diversity",
        guarantee_params={"l": 3},
        anonymizer="mondrian",
        roles=ColumnRoles(others="insensitive"),
    )
    workflow.run(cfg, tmp / "sparcs-mondrian", utility=False)
    out.append(("sparcs, Mondrian", tmp / "sparcs-mondrian", sparcs_table, "CCSR.Diagnosis.Code"))
    subprocess.run(
        [sys.executable, "-m", "versapub.cli.main", "marginals", "publish", "--input", str(sparcs),
         "--hierarchy", f"age={datasets.data_path('sparcs', 'age_taxonomy.csv')}", "--column", "age",
         "--column", "Gender", "--column", "Race", "--column", "Ethnicity", "--column", "CCSR.Diagnosis.Code",
         "--sensitive", "CCSR.Diagnosis.Code", "--k", "10", "--l", "3", "--base", "incognito",
         "--marginal", "Race, CCSR.Diagnosis.Code", "--out", str(tmp / "sparcs-marginals")],
        check=True, capture_output=True,
    )  # fmt: skip
    out.append(("sparcs, marginals", tmp / "sparcs-marginals", read_table(sparcs), "CCSR.Diagnosis.Code"))
    return [r for r in out if only is None or only in r[0]]


def ours_and_files(release: Path, table: Any, secret: str, n: int, work: Path) -> dict[str, Any]:
    """Our figures, and the files anonymeter reads (the same drawn records and targets);
    the adversary knows up to four of the table's other columns."""
    from versapub.verify.adversary.adversary import inference, linkability, sample_targets
    from versapub.verify.adversary.adversary_check import original_records
    from versapub.verify.adversary.adversary_singling import singling_out
    from versapub.verify.reading.kind_checks import drawers
    from versapub.verify.reading.manifest import manifest_of

    m = manifest_of(release)
    entry = next(t for t in m["tables"] if secret in t["attributes"])
    rng = np.random.default_rng(45)
    syn = drawers()[entry["kind"]](release, entry, rng, DRAWN, 0).records
    cols = [c for c in entry["attributes"] if c in table.names]
    ori = original_records(table, cols)
    syn = {c: syn[c] for c in cols}
    aux = [c for c in cols if c != secret][:4]
    targets = sample_targets(ori, n, rng)
    link_cols = [c for c in cols if c != secret]
    link_a, link_b = link_cols[0::2], link_cols[1::2]
    ours: dict[str, list[dict[str, Any]]] = {k: [] for k in ATTACKS}
    for k in range(REPEATS):
        r = np.random.default_rng(1000 + k)
        ours["inference"].append(inference(ori, syn, aux, secret, targets, r).to_json())
        ours["singling_out_univariate"].append(singling_out(ori, syn, cols, n, r, "univariate").to_json())
        ours["singling_out_multivariate"].append(
            singling_out(ori, syn, cols, n, r, "multivariate", n_cols=3, max_attempts=MAX_ATTEMPTS).to_json()
        )
        ours["linkability"].append(linkability(ori, syn, link_a, link_b, targets, r).to_json())
    import csv

    def write(name: str, t: dict[str, np.ndarray], rows: np.ndarray | None = None) -> None:
        with (work / name).open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(cols)
            idx = rows if rows is not None else np.arange(len(next(iter(t.values()))))
            for i in idx:
                w.writerow([t[c][i] for c in cols])

    write("syn.csv", syn)
    write("ori.csv", ori)
    write("targets.csv", ori, targets)
    regression = secret not in {"occupation", "CCSR.Diagnosis.Code"}
    params = {"aux": aux, "secret": secret, "regression": regression, "n": n, "n_cols": 3,
              "link_a": link_a, "link_b": link_b, "max_attempts": MAX_ATTEMPTS, "repeats": REPEATS}  # fmt: skip
    (work / "params.json").write_text(json.dumps(params))
    return ours


def compare(name: str, ours: dict[str, Any], theirs: dict[str, Any]) -> list[dict[str, Any]]:
    """Per attack, the mean success over the repeats of each tool and the difference of the
    means in standard errors of the repeats (both tools' spread, which holds what their
    single-run intervals miss: equally near records shared by many targets)."""
    rows = []
    for attack, mine in ours.items():
        a = np.array([m["risk"]["rate"] for m in mine])
        b = np.array([t["rate"] for t in theirs[attack]])
        se = float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))) if len(a) > 1 else 0.0
        same = abs(a.mean() - b.mean()) < 1e-9
        z = 0.0 if same else float((a.mean() - b.mean()) / se) if se > 0 else float("inf")
        # the criterion: within anonymeter's own confidence interval (its single-run
        # error); beside it the z of the repeats (an infinite z: both deterministic, unequal
        # in a late decimal: the Wilson centre of a different number of attacks)
        error = float(np.mean([t["error"] for t in theirs[attack]]))
        rows.append(
            {
                "release": name,
                "attack": attack,
                "versapub": round(float(a.mean()), 4),
                "versapub_sd": round(float(a.std(ddof=1)), 4),
                "anonymeter": round(float(b.mean()), 4),
                "anonymeter_sd": round(float(b.std(ddof=1)), 4),
                "anonymeter_single_run_error": round(error, 4),
                "z": round(z, 2),
                "agree": bool(abs(a.mean() - b.mean()) <= error or abs(z) < 1.96),
                "baseline_versapub": round(float(np.mean([m["baseline"]["rate"] for m in mine])), 4),
                "baseline_anonymeter": round(float(np.mean([t["baseline"] for t in theirs[attack]])), 4),
            }
        )
    return rows


def cost(tmp: Path) -> dict[str, float]:
    """``versapub check --original`` on a 10^5-record release (the budget: 60 s)."""
    from versapub import PublishConfig, workflow
    from versapub.datasets.synthetic import loans, write_csv
    from versapub.privacy.screens.roles import ColumnRoles

    data = tmp / "loans100k.csv"
    write_csv(loans(100_000, 9), str(data))
    q = "state, emp_title, emp_length, homeownership, annual_income"
    cfg = PublishConfig(
        input=data,
        rules=(f"{q} -> grade",),
        l=2,
        roles=ColumnRoles(others="insensitive", identifying=("sub_grade", "interest_rate", "installment")),
    )
    workflow.run(cfg, tmp / "loans100k", utility=False)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "versapub.cli.main", "check", str(tmp / "loans100k"), "--original", str(data)],
        capture_output=True,
    )
    return {"records": 100_000, "check_original_seconds": round(time.perf_counter() - start, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attacks", type=int, default=500)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cost", action="store_true")
    ap.add_argument("--only", help="Only the releases whose name holds this text (e.g. 'sparcs').")
    args = ap.parse_args()
    python = ensure_venv()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        for name, release, table, secret in releases(tmp, args.only):
            work = tmp / f"work-{len(results)}"
            work.mkdir()
            ours = ours_and_files(release, table, secret, args.attacks, work)
            driver = work / "driver.py"
            driver.write_text(DRIVER)
            subprocess.run([str(python), str(driver), str(work)], check=True)
            results += compare(name, ours, json.loads((work / "anonymeter.json").read_text()))
        extra = cost(tmp) if args.cost else {}
    print(
        f"mean success over {REPEATS} repeats (sd); CI: anonymeter's own interval; z: the difference of the "
        "means in standard errors of the repeats; agree: within anonymeter's interval"
    )
    print(f"{'release':<28}{'attack':<28}{'versapub':>16}{'anonymeter':>16}{'CI':>8}{'z':>7}{'agree':>7}")
    for r in results:
        mine = f"{r['versapub']:.3f} ({r['versapub_sd']:.3f})"
        theirs = f"{r['anonymeter']:.3f} ({r['anonymeter_sd']:.3f})"
        z = f"{r['z']:>7.2f}" if abs(r["z"]) < 1000 else f"{'>999':>7}"  # deterministic: both sds 0
        print(
            f"{r['release']:<28}{r['attack']:<28}{mine:>16}{theirs:>16}{r['anonymeter_single_run_error']:>8.3f}"
            f"{z}{'yes' if r['agree'] else 'NO':>7}"
        )
    if extra:
        print(f"check --original on 10^5 records: {extra['check_original_seconds']} s")
    if args.json:
        args.json.write_text(json.dumps({"comparison": results, "cost": extra}, indent=2) + "\n")


if __name__ == "__main__":
    main()
