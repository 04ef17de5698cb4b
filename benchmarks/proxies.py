"""The proxy screen on every real dataset in the repository: false positives, misses, cost.

For every ordered pair (protected S, unprotected C) of columns of each real table, the
screen's measure (``versapub.privacy.screens.proxies``: Goodman-Kruskal lambda both ways, values
seen in fewer than ``MIN_SUPPORT`` records revealing nothing).  A pair is a **documented
derivation** when the datasets' own documentation says one column is computed from the
other (a code and its description, a county and its service area, ...; listed below with
the reason); every other pair is *not* a derivation.  Printed per dataset: pairs measured,
pairs at or above ``STRONG`` (refused) and ``LISTED`` (listed in the report), the false
positives (refused pairs that are no documented derivation), the misses (documented
derivations below ``STRONG``) and the time of one ``pair_counts`` pass over all pairs.

    python benchmarks/proxies.py [--json FILE] [--trials N]

The numbers are the ones ``docs/choices.md`` item 124 reports.

**Sets of columns** (issue 45, ``versapub.privacy.screens.proxy_sets``): for each real table and
realistic rules (``SET_RULES``: what an adversary may know about a person, and what a
steward would protect), every other column published exactly beside the rule's left-hand
side (one QIT: the widest reach), frequency l-diversity with ``l = 2`` (the bound 1/2, or the
guarantee's own when its most frequent value is above it: the rule would be infeasible); since
issue 64 the adversary computes (nearest neighbours on ratios and differences) and picks among
the two candidates each Anatomy group shows; the share reported is the whole set's.
Printed: each refused or listed set with its held-out share against the bound, and whether
the data's documentation derives it (``DERIVED``) or it is a statistical association; the
screen's time against the whole publish of the same job (the issue's budget: 20 %); and the
false-refusal rate: the screen run ``--trials`` times with the protected column permuted
(a seeded permutation each time: no column is related to it any more), the share of runs
that refuse anything.  The two synthetic tables that must be caught (an amortisation and a
sum identity, ``versapub.datasets.synthetic``) are measured too.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path

from versapub import datasets
from versapub.data.table import EncodedTable
from versapub.io.read import read_table
from versapub.privacy.screens.proxies import LISTED, STRONG, measure

ROOT = Path(__file__).resolve().parent.parent

#: Per dataset, the derivations its documentation states, ``(source, derived, one_to_one,
#: where)``: the derived column is computed from the source (a code's description, a
#: county's service area, ...), one to one (each derives the other) or not.  The screen's
#: strength is symmetric in a pair, so both orders count.  The two RACETHNX entries were
#: added after a first run refused those pairs, each checked on the data's cross-tabulation
#: (RACETHNX = 2 always has RACEBX = 1; = 3 always RACEAX = 1).
DERIVED: dict[str, list[tuple[str, str, bool, str]]] = {
    "adult_uci": [
        ("education", "education-num", True, "UCI: the number of the education level"),
    ],
    "sparcs_survivor": [
        (
            "Hospital.County",
            "Hospital.Service.Area",
            False,
            "each county lies in one service area (scripts/make_functional_taxonomies.py)",
        ),
    ],
    "sparcs_musculoskeletal": [
        ("CCSR.Diagnosis.Code", "CCSR.Diagnosis.Description", True, "SPARCS: a code and its description"),
        ("CCSR.Procedure.Code", "CCSR.Procedure.Description", True, "SPARCS: a code and its description"),
        ("APR.DRG.Code", "APR.DRG.Description", True, "SPARCS: a code and its description"),
        ("APR.DRG.Code", "APR.Medical.Surgical.Description", False, "APR-DRG: each DRG is medical or surgical"),
        (
            "CCSR.Procedure.Code",
            "APR.Medical.Surgical.Description",
            False,
            "APR-DRG: surgical when an operating-room procedure was done (by the grouper, not exactly)",
        ),
        ("Permanent.Facility.Id", "Hospital.County", False, "a facility lies in one county"),
        ("Permanent.Facility.Id", "Hospital.Service.Area", False, "a facility lies in one service area"),
        ("Hospital.County", "Hospital.Service.Area", False, "a county lies in one service area"),
        ("los", "lnhlos", True, "the extract's log of the length of stay"),
        ("los", "invhlos", True, "the extract's inverse of the length of stay"),
        ("lnhlos", "invhlos", True, "both functions of the length of stay"),
        ("Patient.Disposition", "disposition", False, "the extract's grouping of the disposition"),
        ("Patient.Disposition", "disposition2", False, "the extract's grouping of the disposition"),
        ("disposition", "disposition2", False, "the extract's grouping of the disposition"),
        ("Patient.Disposition", "death", False, "death = disposition 'Expired'"),
        ("disposition", "death", False, "death = disposition 'Expired'"),
    ],
    "synthetic_loans": [
        ("interest_rate", "installment", False, "the amortisation of (amount, rate, term)"),
        ("interest_rate", "sub_grade", True, "the lender's rate of each sub-grade"),
        ("sub_grade", "grade", False, "the sub-grade's letter"),
    ],
    "synthetic_panel": [("inpdol", "meddol", False, "meddol = inpdol + outpdol + drugdol + suppdol + mentdol")],
    "informs_demographics": [
        ("RACEX", "RACEWX", False, "MEPS codebook: the one-race flag of the race answer"),
        ("RACEX", "RACEBX", False, "MEPS codebook: the one-race flag of the race answer"),
        ("RACEX", "RACEAX", False, "MEPS codebook: the one-race flag of the race answer"),
        ("RACETHNX", "HISPANX", False, "MEPS codebook: race/ethnicity category 1 is Hispanic"),
        ("HISPCAT", "HISPANX", False, "MEPS codebook: the Hispanic category of a Hispanic person"),
        (
            "RACETHNX",
            "RACEBX",
            False,
            "MEPS: race/ethnicity 2 is non-Hispanic black (Hispanic persons of any race are 1)",
        ),
        (
            "RACETHNX",
            "RACEAX",
            False,
            "MEPS: race/ethnicity 3 is non-Hispanic Asian (Hispanic persons of any race are 1)",
        ),
        ("DUPERSID", "DUID", False, "MEPS: DUPERSID = DUID followed by PID"),
        ("DUPERSID", "PID", False, "MEPS: DUPERSID = DUID followed by PID"),
    ],
}


def tables() -> Iterator[tuple[str, EncodedTable]]:
    """Every real table the repository holds (embedded data, benchmark jobs, test fixtures)."""
    yield "adult_arx", read_table(datasets.data_path("adult", "adult.csv.gz"), delimiter=";")
    yield "adult_uci", datasets.adult_uci()
    yield "sparcs_survivor", datasets.sparcs()
    yield (
        "sparcs_musculoskeletal",
        read_table(ROOT / "tests" / "fixtures" / "hospital" / "sparcs2020_musculoskeletal.csv.gz"),
    )
    yield (
        "creditcard_int",
        read_table(ROOT / "benchmarks" / "jobs" / "creditcard" / "creditcard_int.csv.gz", delimiter=";"),
    )
    yield "informs_demographics", read_table(ROOT / "benchmarks" / "jobs" / "informs" / "informs_demographics05.csv.gz")


def derived_pairs(name: str) -> set[tuple[str, str]]:
    """Both orders of every documented derivation and of the derivations they imply (a
    description derives what its code derives: the closure over the two directions of a
    code and its description)."""
    edges = {(a, b) for a, b, _, _ in DERIVED.get(name, [])}
    edges |= {(b, a) for a, b, one_to_one, _ in DERIVED.get(name, []) if one_to_one}
    grew = True
    while grew:
        more = {(a, d) for a, b in edges for c, d in edges if b == c and a != d}
        grew = not more <= edges
        edges |= more
    return edges | {(b, a) for a, b in edges}


def documented_links(name: str) -> set[tuple[str, str]]:
    """For sets of columns: pairs joined by a chain of documented derivations in either
    direction (an identity among several columns documents each of them: the installment
    gives the rate with the amount and term, and the rate the grade)."""
    edges = {(a, b) for a, b, _, _ in DERIVED.get(name, [])}
    edges |= {(b, a) for a, b in edges}
    grew = True
    while grew:
        more = {(a, d) for a, b in edges for c, d in edges if b == c and a != d}
        grew = not more <= edges
        edges |= more
    return edges


#: Per dataset, rules a steward would state: (left-hand side, protected attributes).
SET_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "adult_arx": (("age", "sex", "race", "native-country"), ("occupation", "salary-class")),
    "adult_uci": (("age", "sex", "race", "native-country"), ("occupation", "income")),
    "sparcs_survivor": (("age", "Gender", "Race", "Hospital.County"), ("CCSR.Diagnosis.Code",)),
    "sparcs_musculoskeletal": (("age", "Gender", "Race"), ("CCSR.Diagnosis.Code", "illseveritydesc")),
    "creditcard_int": (("SEX", "EDUCATION", "MARRIAGE", "AGE"), ("default-payment-next-month", "LIMIT_BAL")),
    "informs_demographics": (("DOBYY", "SEX", "RACEX"), ("income", "EDUCYEAR")),
}


def _set_screen(t: EncodedTable, lhs: tuple[str, ...], sensitive: tuple[str, ...], l: int = 2) -> list[object]:
    from versapub.privacy.rules import parse_rule
    from versapub.privacy.screens.computing import Limit
    from versapub.privacy.screens.proxy_sets import screen_sets

    rules = [parse_rule(", ".join(lhs) + f" -> {s}") for s in sensitive]
    layout = [("T1", [c for c in t.names if c not in sensitive])]
    bounds: dict[object, object] = {}
    for r in rules:
        counts = t.column(r.rhs).counts()
        # the adversary who computes (issue 64) picks among the l candidates an Anatomy group shows
        bounds[r] = Limit.constant(max(1 / l, float(counts.max() / counts.sum())), l)  # infeasible above: its share
    return list(screen_sets(t, rules, layout, bounds))  # type: ignore[arg-type]


def run_sets(trials: int) -> list[dict[str, object]]:
    """The multi-column screen on every real table and the two synthetic ones (module docstring)."""
    import numpy as np

    from versapub.datasets.synthetic import loans, panel
    from versapub.privacy.screens.proxy_sets import SetProxy

    cases = list(tables())
    cases.append(("synthetic_loans", EncodedTable.from_columns(loans(10_000, 1))))
    cases.append(("synthetic_panel", EncodedTable.from_columns(panel(20_000, 1))))
    rules = {
        **SET_RULES,
        "synthetic_loans": (
            ("state", "emp_title", "emp_length", "homeownership", "annual_income"),
            ("grade", "sub_grade", "interest_rate"),
        ),
        "synthetic_panel": (("site", "xage", "female", "income"), ("inpdol",)),
    }
    out = []
    for name, t in cases:
        lhs, sensitive = rules[name]
        start = time.perf_counter()
        found = [f for f in _set_screen(t, lhs, sensitive) if isinstance(f, SetProxy)]
        seconds = time.perf_counter() - start
        known = documented_links(name)
        rows = []
        for f in found:
            documented = any((c, f.sensitive) in known for c in f.columns)
            rows.append({**f.to_json(), "documented": documented})
        refused_runs = 0
        rng = np.random.default_rng(45)
        for _ in range(trials):  # the protected columns permuted: nothing may be refused
            cols = {c: list(t.column(c).values[t.codes(c)]) for c in t.names}
            for s in sensitive:
                cols[s] = list(np.asarray(cols[s], dtype=object)[rng.permutation(t.n_rows)])
            shuffled = EncodedTable.from_columns(cols)
            if any(isinstance(f, SetProxy) and f.breach for f in _set_screen(shuffled, lhs, sensitive)):
                refused_runs += 1
        out.append(
            {
                "dataset": name,
                "records": t.n_rows,
                "rules": [f"{', '.join(lhs)} -> {s}" for s in sensitive],
                "sets": rows,
                "seconds": round(seconds, 3),
                "permuted_trials": trials,
                "permuted_refusals": refused_runs,
            }
        )
    return out


def run() -> list[dict[str, object]]:
    out = []
    for name, t in tables():
        pairs = [(c, s) for s in t.names for c in t.names if c != s]
        start = time.perf_counter()
        counts = t.pair_counts(pairs)
        measured = [measure(*pc) for pc in counts]
        seconds = time.perf_counter() - start
        known = derived_pairs(name)
        strong = [(p, m) for p, m in zip(pairs, measured, strict=True) if max(m) >= STRONG]
        listed = [p for p, m in zip(pairs, measured, strict=True) if LISTED <= max(m) < STRONG]
        false_pos = [(p, m) for p, m in strong if p not in known]
        misses = [(p, m) for p, m in zip(pairs, measured, strict=True) if p in known and max(m) < STRONG]
        unrelated = len(pairs) - len(known & set(pairs))
        out.append(
            {
                "dataset": name,
                "records": t.n_rows,
                "columns": len(t.names),
                "pairs": len(pairs),
                "documented_derivations": len(known & set(pairs)),
                "refused": len(strong),
                "listed": len(listed),
                "false_positives": len(false_pos),
                "false_positive_rate": len(false_pos) / max(unrelated, 1),
                "misses": [{"column": c, "sensitive": s, "strength": round(max(m), 4)} for (c, s), m in misses],
                "false_positive_pairs": [
                    {"column": c, "sensitive": s, "strength": round(max(m), 4)} for (c, s), m in false_pos
                ],
                "largest_unrelated": max(
                    (round(max(m), 4) for p, m in zip(pairs, measured, strict=True) if p not in known), default=0.0
                ),
                "seconds": round(seconds, 3),
            }
        )
    return out


def run_cost(tmp: Path) -> list[dict[str, object]]:
    """The set screen's share of the whole publish (the issue's budget: 20 %): the 36,631 ×
    33 hospital scenario (``tests/hospital.py``, decisions for every column, no utility) and
    ``texas_like`` 10^6 × 18 (the default publish of ``benchmarks/whole.py``), each run by
    ``workflow.run`` as the CLI runs it, the screen timed inside the same run."""
    import sys

    sys.path.insert(0, str(ROOT))
    from tests.hospital import CHAPTER, RECODING, RULES, write_hospital

    from versapub import PublishConfig, workflow
    from versapub.datasets import TEXAS_LIKE_RULES, texas_like
    from versapub.privacy.screens.roles import ColumnRoles
    from versapub.publishing import steps

    spent: list[float] = []
    inner = steps.proxy_sets

    def timed(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            spent.append(time.perf_counter() - start)

    steps.proxy_sets = timed  # type: ignore[assignment]
    hospital = write_hospital(tmp / "hospital.csv")
    texas = tmp / "texas.csv"
    t = texas_like(1_000_000, seed=0)
    with texas.open("w", encoding="utf-8") as f:
        f.write(",".join(t.names) + "\n")
        cols = [t.column(c).values[t.codes(c)].astype(str) for c in t.names]
        for row in zip(*cols, strict=True):
            f.write(",".join(row) + "\n")
    jobs = [
        (
            "hospital scenario, 36,631 x 33",
            PublishConfig(
                input=hospital,
                rules=RULES,
                roles=ColumnRoles(
                    identifying=("encounter_id", "patient_nbr", "Total.Charges", "Total.Costs", RECODING),
                    others="insensitive",
                    allow_proxy=(CHAPTER,),
                ),
            ),
            False,
        ),
        (
            "texas_like 10^6 x 18, 9 rules, l = 10",
            PublishConfig(
                input=texas,
                rules=tuple(TEXAS_LIKE_RULES),
                l=10,
                roles=ColumnRoles(allow_unique=("surgeon", "and_md"), others="insensitive", allow_proxy=("thcic",)),
            ),
            True,
        ),
    ]
    out = []
    for name, cfg, utility in jobs:
        spent.clear()
        start = time.perf_counter()
        workflow.run(cfg, tmp / f"out-{len(out)}", utility=utility)
        whole = time.perf_counter() - start
        out.append({"job": name, "publish_seconds": round(whole, 2), "screen_seconds": round(sum(spent), 2)})
    steps.proxy_sets = inner  # type: ignore[assignment]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="Also write the results as JSON.")
    ap.add_argument("--trials", type=int, default=20, help="Permutations of each protected column (sets).")
    ap.add_argument("--cost", action="store_true", help="Only the set screen's share of two whole publishes.")
    args = ap.parse_args()
    if args.cost:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            for r in run_cost(Path(tmp)):
                share = r["screen_seconds"] / r["publish_seconds"]  # type: ignore[operator]
                seconds = f"publish {r['publish_seconds']:>7} s, set screen {r['screen_seconds']:>6} s"
                print(f"{r['job']:<40} {seconds} = {share:.1%}")
        return
    rows = run()
    print(f"STRONG = {STRONG}, LISTED = {LISTED}")
    head = (
        f"{'dataset':<24}{'records':>9}{'pairs':>7}{'derived':>9}{'refused':>9}{'listed':>8}{'FP':>5}"
        f"{'FP rate':>9}{'max unrelated':>15}{'misses':>8}{'s':>7}"
    )
    print(head)
    for r in rows:
        print(
            f"{r['dataset']:<24}{r['records']:>9}{r['pairs']:>7}{r['documented_derivations']:>9}{r['refused']:>9}"
            f"{r['listed']:>8}{r['false_positives']:>5}{r['false_positive_rate']:>9.2%}{r['largest_unrelated']:>15}"
            f"{len(r['misses']):>8}{r['seconds']:>7}"
        )  # type: ignore[arg-type]
    for r in rows:
        for m in r["misses"]:  # type: ignore[attr-defined]
            print(f"  miss in {r['dataset']}: {m['column']} -> {m['sensitive']} at {m['strength']}")
        for m in r["false_positive_pairs"]:  # type: ignore[attr-defined]
            print(f"  false positive in {r['dataset']}: {m['column']} -> {m['sensitive']} at {m['strength']}")
    sets = run_sets(args.trials)
    print("\nSets of columns (l = 2; refused: the held-out share's lower bound above the bound)")
    for r in sets:
        print(
            f"{r['dataset']:<24} {r['records']:>8} records  screen {r['seconds']:>6} s  permuted: "
            f"{r['permuted_refusals']}/{r['permuted_trials']} refused"
        )
        for f in r["sets"]:  # type: ignore[attr-defined]
            status = "REFUSED" if f["breach"] else "listed"
            why = "documented derivation" if f["documented"] else "statistical association"
            print(
                f"    {status:<8} {', '.join(f['columns'])} -> {f['sensitive']}: {f['share']:.1%} "
                f"(low {f['low']:.1%}) vs bound {f['bound']:.1%}, base {f['baseline']:.1%}; {f['learner']}; {why}"
            )
    if args.json:
        args.json.write_text(json.dumps({"pairs": rows, "sets": sets}, indent=2) + "\n")


if __name__ == "__main__":
    main()
