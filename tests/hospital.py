"""The hospital scenario of issue 27: a wide real discharge file as a steward gets it.

Built from New York SPARCS 2020 musculoskeletal discharges (36,631 records × 28 real
columns, ``fixtures/hospital/PROVENANCE.md``), with what such files also carry: two direct
identifiers (``encounter_id``: every value unique; ``patient_nbr``: about half of the
records the only one of their patient), coded ``*_id`` columns with few values
(``discharge_disposition_id``, ``payer_id`` — integer codes of two real columns) and a
coarsening of the diagnosis (``diag_chapter``: the CCSR body system, the code's three-letter
prefix).  ``CCSR.Diagnosis.Description`` is the file's own recoding of the diagnosis code.
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).parent / "fixtures" / "hospital" / "sparcs2020_musculoskeletal.csv.gz"
#: The protected diagnosis, its recoding and its coarsening.
DIAGNOSIS, RECODING, CHAPTER = "CCSR.Diagnosis.Code", "CCSR.Diagnosis.Description", "diag_chapter"
RULES = (f"age, Gender, Race -> {DIAGNOSIS}", "discharge_disposition_id, age -> illseveritydesc")
IDENTIFIERS = ("encounter_id", "patient_nbr")
CODED = ("discharge_disposition_id", "payer_id", "Permanent.Facility.Id")


def write_hospital(path: Path, seed: int = 27) -> Path:
    """Write the scenario's CSV (33 columns: the 28 real ones and five added) to ``path``."""
    with gzip.open(SOURCE, "rt", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    n = len(body)
    rng = np.random.default_rng(seed)
    col = {name: i for i, name in enumerate(header)}
    encounter = rng.permutation(n) + 10_000_000
    # patients: half the records alone, the others two to four records per patient
    singles = n // 2
    repeat = rng.integers(2, 5, size=n)
    owners = np.concatenate([np.arange(singles), singles + np.repeat(np.arange(n), repeat)[: n - singles]])
    patient = rng.permutation(owners) + 500_000
    codes = {}
    for name, source in (("discharge_disposition_id", "Patient.Disposition"), ("payer_id", "Payment.Typology.1")):
        values = sorted({r[col[source]] for r in body})
        codes[name] = {v: str(i + 1) for i, v in enumerate(values)}
    out_header = ["encounter_id", "patient_nbr", *header, "discharge_disposition_id", "payer_id", CHAPTER]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(out_header)
        for i, r in enumerate(body):
            w.writerow(
                [
                    encounter[i],
                    patient[i],
                    *r,
                    codes["discharge_disposition_id"][r[col["Patient.Disposition"]]],
                    codes["payer_id"][r[col["Payment.Typology.1"]]],
                    r[col[DIAGNOSIS]][:3],
                ]
            )
    return path
