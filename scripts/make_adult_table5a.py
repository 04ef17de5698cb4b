"""Regenerate the Table 5a hierarchies for the embedded Adult data.

The KDD 2010 paper (§6.1, Table 5a) generalizes Adult to: age 6 values, native country
2 (US / non_US), education 7, occupation 3 (white / blue collar / others).  ARX's
hierarchies do not have these levels, so these files (ARX format: leaf;level-1;root)
are derived from ARX's leaf lists with the paper's groupings.  Run from the repo root:
``python scripts/make_adult_table5a.py``.
"""

from pathlib import Path

OUT = Path("src/versapub/datasets/data/adult/table5a")
ARX = Path("src/versapub/datasets/data/adult/hierarchies")


def age_bin(a: int) -> str:
    for lo, hi in ((17, 24), (25, 34), (35, 44), (45, 54), (55, 64)):
        if lo <= a <= hi:
            return f"{lo}-{hi}"
    return "65-90" if a >= 65 else "0-16"


EDUCATION = {
    "Preschool": "preschool",
    "1st-4th": "elementary",
    "5th-6th": "elementary",
    "7th-8th": "elementary",
    "9th": "secondary",
    "10th": "secondary",
    "11th": "secondary",
    "12th": "secondary",
    "HS-grad": "secondary",
    "Some-college": "some_college",
    "Assoc-acdm": "associate_degree",
    "Assoc-voc": "associate_degree",
    "Bachelors": "university",
    "Masters": "post_graduate",
    "Doctorate": "post_graduate",
    "Prof-school": "post_graduate",
}
OCCUPATION = {
    "Prof-specialty": "white_collar",
    "Exec-managerial": "white_collar",
    "Adm-clerical": "white_collar",
    "Sales": "white_collar",
    "Tech-support": "white_collar",
    "Craft-repair": "blue_collar",
    "Machine-op-inspct": "blue_collar",
    "Transport-moving": "blue_collar",
    "Handlers-cleaners": "blue_collar",
    "Farming-fishing": "blue_collar",
    "Other-service": "others",
    "Protective-serv": "others",
    "Priv-house-serv": "others",
    "Armed-Forces": "others",
}


def leaves(attr: str) -> list[str]:
    return [line.split(";")[0] for line in (ARX / f"adult_hierarchy_{attr}.csv").read_text().splitlines() if line]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "age.csv").write_text("".join(f"{a};{age_bin(a)};*\n" for a in range(1, 101)))
    (OUT / "native-country.csv").write_text(
        "".join(f"{c};{'US' if c == 'United-States' else 'non_US'};*\n" for c in leaves("native-country"))
    )
    (OUT / "education.csv").write_text("".join(f"{e};{EDUCATION[e]};*\n" for e in leaves("education")))
    (OUT / "occupation.csv").write_text("".join(f"{o};{OCCUPATION[o]};*\n" for o in leaves("occupation")))


if __name__ == "__main__":
    main()
