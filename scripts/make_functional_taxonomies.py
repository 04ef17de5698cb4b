"""Write the taxonomies of the functional-diversity experiment (``versapub experiment
functional``) into ``src/versapub/datasets/data``; run from the repository root.

* ``adult/occupation_census.csv`` — Adult's 14 occupations under the major occupation groups
  of the U.S. Census Bureau's 2000 occupation classification (Management, professional and
  related; Service; Sales and office; Natural resources, construction and maintenance;
  Production, transportation and material moving; plus Armed Forces, which the Census
  keeps apart), then white-collar / blue-collar / service and military, then ``*``: a
  4-level taxonomy from the occupations' meaning (the ARX file has 3 levels with groups
  "Technical / Nontechnical / Other" that put Sales with Handlers-cleaners).
* ``sparcs/ccsr_taxonomy.csv`` — every CCSR diagnosis code of the SPARCS extract under its
  body system, the code's three-letter prefix in AHRQ's Clinical Classifications Software
  Refined (CCSR) for ICD-10-CM (e.g. ``CIR`` "Diseases of the circulatory system"), then
  ``*``.
* ``sparcs/county_taxonomy.csv`` — every hospital county under the Health Service Area the
  records give it (each county lies in exactly one; checked), then ``*``.
* ``sparcs/age_taxonomy.csv`` — SPARCS's four age groups under "18 to 49" / "50 or older".

Race, gender and ethnicity of SPARCS have two levels (values, ``*``), the default for an
attribute without a hierarchy.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

DATA = Path("src/versapub/datasets/data")

CENSUS = {
    "Exec-managerial": "Management, professional and related",
    "Prof-specialty": "Management, professional and related",
    "Tech-support": "Management, professional and related",
    "Sales": "Sales and office",
    "Adm-clerical": "Sales and office",
    "Other-service": "Service",
    "Priv-house-serv": "Service",
    "Protective-serv": "Service",
    "Farming-fishing": "Natural resources, construction and maintenance",
    "Craft-repair": "Natural resources, construction and maintenance",
    "Machine-op-inspct": "Production, transportation and material moving",
    "Transport-moving": "Production, transportation and material moving",
    "Handlers-cleaners": "Production, transportation and material moving",
    "Armed-Forces": "Armed Forces",
}
COLLAR = {
    "Management, professional and related": "White-collar",
    "Sales and office": "White-collar",
    "Natural resources, construction and maintenance": "Blue-collar",
    "Production, transportation and material moving": "Blue-collar",
    "Service": "Service and military",
    "Armed Forces": "Service and military",
}
#: AHRQ CCSR body systems (the first three letters of a CCSR category).
BODY_SYSTEMS = {
    "BLD": "Diseases of the blood and immune system",
    "CIR": "Diseases of the circulatory system",
    "DEN": "Dental diseases",
    "DIG": "Diseases of the digestive system",
    "EAR": "Diseases of the ear and mastoid process",
    "END": "Endocrine, nutritional and metabolic diseases",
    "EXT": "External causes of morbidity",
    "EYE": "Diseases of the eye and adnexa",
    "FAC": "Factors influencing health status and contact with health services",
    "GEN": "Diseases of the genitourinary system",
    "INF": "Certain infectious and parasitic diseases",
    "INJ": "Injury, poisoning and other consequences of external causes",
    "MAL": "Congenital malformations and chromosomal abnormalities",
    "MBD": "Mental, behavioral and neurodevelopmental disorders",
    "MUS": "Diseases of the musculoskeletal system and connective tissue",
    "NEO": "Neoplasms",
    "NVS": "Diseases of the nervous system",
    "PNL": "Certain conditions originating in the perinatal period",
    "PRG": "Pregnancy, childbirth and the puerperium",
    "RSP": "Diseases of the respiratory system",
    "SKN": "Diseases of the skin and subcutaneous tissue",
    "SYM": "Symptoms, signs and abnormal clinical and laboratory findings",
}
AGE = {"18 to 29": "18 to 49", "30 to 49": "18 to 49", "50 to 69": "50 or older", "70 or Older": "50 or older"}


def _write(path: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, delimiter=";", lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    print(f"wrote {path} ({len(rows)} leaves)")


def main() -> None:
    _write(DATA / "adult" / "occupation_census.csv", [[o, g, COLLAR[g], "*"] for o, g in CENSUS.items()])
    with gzip.open(DATA / "sparcs" / "sparcs2020_survivorset.csv.gz", "rt", encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    codes = sorted({r["CCSR.Diagnosis.Code"] for r in records})
    unknown = sorted({c[:3] for c in codes} - set(BODY_SYSTEMS))
    if unknown:
        raise SystemExit(f"CCSR prefixes without a body system: {unknown}")
    _write(DATA / "sparcs" / "ccsr_taxonomy.csv", [[c, f"{c[:3]}: {BODY_SYSTEMS[c[:3]]}", "*"] for c in codes])
    area: dict[str, set[str]] = {}
    for r in records:
        area.setdefault(r["Hospital.County"], set()).add(r["Hospital.Service.Area"])
    split = {c: a for c, a in area.items() if len(a) != 1}
    if split:
        raise SystemExit(f"counties in several service areas: {split}")
    _write(DATA / "sparcs" / "county_taxonomy.csv", [[c, next(iter(a)), "*"] for c, a in sorted(area.items())])
    _write(DATA / "sparcs" / "age_taxonomy.csv", [[a, g, "*"] for a, g in AGE.items()])


if __name__ == "__main__":
    main()
