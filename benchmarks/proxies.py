"""The proxy screen on every real dataset in the repository: false positives, misses, cost.

For every ordered pair (protected S, unprotected C) of columns of each real table, the
screen's measure (``versapub.privacy.proxies``: Goodman-Kruskal lambda both ways, values
seen in fewer than ``MIN_SUPPORT`` records revealing nothing).  A pair is a **documented
derivation** when the datasets' own documentation says one column is computed from the
other (a code and its description, a county and its service area, ...; listed below with
the reason); every other pair is *not* a derivation.  Printed per dataset: pairs measured,
pairs at or above ``STRONG`` (refused) and ``LISTED`` (listed in the report), the false
positives (refused pairs that are no documented derivation), the misses (documented
derivations below ``STRONG``) and the time of one ``pair_counts`` pass over all pairs.

    python benchmarks/proxies.py [--json FILE]

The numbers are the ones ``docs/choices.md`` item 124 reports.
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
from versapub.privacy.proxies import LISTED, STRONG, measure

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="Also write the results as JSON.")
    args = ap.parse_args()
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
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
