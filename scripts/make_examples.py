"""Write the README's example files under ``examples/`` (synthetic, seeded: the same bytes on
every run). ``python scripts/make_examples.py`` rewrites them."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "examples"
AGES = ["17-24", "25-34", "35-44", "45-54", "55-64", "65+"]
DISEASES = ["flu", "asthma", "diabetes", "hypertension", "migraine", "ulcer", "bronchitis", "gastritis"]
EDUCATION = ["none", "primary", "secondary", "bachelor", "master", "doctorate", "vocational", "other"]
RACES = ["White", "Black", "Asian", "Hispanic", "Other"]


def patients(rng: np.random.Generator, n: int = 1000) -> list[list[object]]:
    rows = []
    for i in range(n):
        age = int(rng.integers(len(AGES)))
        rows.append(
            [
                f"P{100000 + i}",
                AGES[age],
                str(rng.choice(["Female", "Male"])),
                str(rng.choice(RACES, p=[0.55, 0.2, 0.1, 0.1, 0.05])),
                str(71000 + 100 * int(rng.integers(0, 12))),
                str(rng.choice(EDUCATION)),
                int(rng.integers(10, 61)),
                DISEASES[int(rng.integers(len(DISEASES)))] if age < 4 else str(rng.choice(DISEASES[1:])),
            ]
        )
    return rows


def discharges(rng: np.random.Generator, n: int = 2000) -> list[list[object]]:
    codes = [f"{c}{k:02d}" for c in "EIJK" for k in range(1, 9)]  # 32 diagnosis codes in 4 chapters
    chapter = {"E": "endocrine", "I": "circulatory", "J": "respiratory", "K": "digestive"}
    rows = []
    for i in range(n):
        dx = str(rng.choice(codes))
        decade = 10 * int(rng.integers(2, 9))
        rows.append(
            [
                100000 + i,
                5000 + int(rng.integers(0, n // 2)),
                f"[{decade}-{decade + 10})",
                str(rng.choice(["Female", "Male"])),
                str(rng.choice(RACES, p=[0.55, 0.2, 0.1, 0.1, 0.05])),
                int(rng.integers(1, 9)),
                dx,
                chapter[dx[0]],
                str(rng.choice(["NO", "<30", ">30"], p=[0.45, 0.15, 0.4])),
            ]
        )
    return rows


def write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(2026)
    write(OUT / "data.csv", ["patient_id", "age", "sex", "race", "zip", "education", "hours", "disease"], patients(rng))
    write(
        OUT / "discharges.csv",
        [
            "encounter_id",
            "patient_nbr",
            "age",
            "sex",
            "race",
            "admission_type_id",
            "diagnosis",
            "diagnosis_chapter",
            "readmitted",
        ],
        discharges(rng),
    )


if __name__ == "__main__":
    main()
