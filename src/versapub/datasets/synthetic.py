"""Seeded tables that reproduce situations real files showed (issues 44 and 45), for tests and
benchmarks; each function's docstring describes the real file it stands for.  Written as
text columns (as a data file is read), numbers in their usual spelling."""

from __future__ import annotations

import numpy as np

#: Lending-club-style sub-grades and their interest rates (percent), A1 .. G5.
SUB_GRADES = tuple(f"{g}{i}" for g in "ABCDEFG" for i in range(1, 6))
RATES = tuple(round(5.3 + 0.73 * k, 2) for k in range(len(SUB_GRADES)))
STATES = ("CA", "TX", "NY", "FL", "IL", "OH", "GA", "NC", "MI", "NJ", "VA", "WA", "AZ", "MA", "TN")
TITLES = (
    "teacher",
    "registered nurse",
    "manager",
    "driver",
    "owner",
    "sales",
    "supervisor",
    "project manager",
    "office manager",
    "engineer",
    "accountant",
    "police officer",
)


def installment(amount: np.ndarray, rate_percent: np.ndarray, term: np.ndarray) -> np.ndarray:
    """The monthly payment that amortises ``amount`` over ``term`` months at the annual rate."""
    r = rate_percent / 1200.0
    return amount * r / (1.0 - (1.0 + r) ** (-term))


def loans(n: int = 10_000, seed: int = 0) -> dict[str, list[str]]:
    """A loan file like the 10,000 x 56 public lending data of issue 45: the applicant's state,
    job title, years employed, home ownership and income (what an adversary may know), the
    loan's grade, sub-grade and interest rate (protected), and its amount, term and monthly
    installment — the amortisation of (amount, rate, term), rounded to cents — plus a purpose
    that has nothing to do with the rate."""
    rng = np.random.default_rng(seed)
    k = rng.integers(0, len(SUB_GRADES), size=n)
    rate = np.asarray(RATES)[k]
    amount = rng.integers(40, 1601, size=n) * 25
    term = rng.choice([36, 60], size=n, p=[0.7, 0.3])
    pay = installment(amount.astype(float), rate, term.astype(float))
    income = (rng.lognormal(11, 0.5, size=n) // 1000 * 1000).astype(int)
    return {
        "state": [STATES[i] for i in rng.integers(0, len(STATES), size=n)],
        "emp_title": [TITLES[i] for i in rng.integers(0, len(TITLES), size=n)],
        "emp_length": [f"{i} years" for i in rng.integers(0, 11, size=n)],
        "homeownership": [["RENT", "MORTGAGE", "OWN"][i] for i in rng.integers(0, 3, size=n)],
        "annual_income": [str(v) for v in income],
        "grade": [SUB_GRADES[i][0] for i in k],
        "sub_grade": [SUB_GRADES[i] for i in k],
        "interest_rate": [f"{v:.2f}" for v in rate],
        "loan_amount": [str(v) for v in amount],
        "term": [str(v) for v in term],
        "installment": [f"{v:.2f}" for v in pay],
        "purpose": [["debt", "card", "home", "car", "other"][i] for i in rng.integers(0, 5, size=n)],
    }


def panel(n: int = 20_000, seed: int = 0) -> dict[str, list[str]]:
    """A health-insurance panel like the 20,190 x 46 file of issue 45: a site, an age with
    decimals, sex and income (what an adversary may know), inpatient spending ``inpdol``
    (protected) and the spending it is the difference of — ``inpdol = meddol - outpdol -
    drugdol - suppdol - mentdol`` for about 97 % of records (the others were edited), all
    published beside the rule's left-hand side — plus a visit count unrelated to it."""
    rng = np.random.default_rng(seed)
    parts = {
        name: np.round(rng.gamma(shape, scale, size=n) * (rng.random(n) < share), 2)
        for name, shape, scale, share in (
            ("inpdol", 0.6, 4000.0, 0.7),
            ("outpdol", 1.0, 600.0, 0.8),
            ("drugdol", 0.8, 300.0, 0.7),
            ("suppdol", 0.5, 100.0, 0.3),
            ("mentdol", 0.5, 400.0, 0.15),
        )
    }
    meddol = sum(parts.values())
    edited = rng.random(n) < 0.034
    meddol = np.where(edited, meddol * rng.uniform(0.5, 1.5, size=n), meddol)
    return {
        "site": [str(v) for v in rng.integers(1, 7, size=n)],
        "xage": [f"{v:.2f}" for v in rng.uniform(0, 65, size=n)],
        "female": [str(v) for v in rng.integers(0, 2, size=n)],
        "income": [str(v) for v in (rng.lognormal(9.5, 0.8, size=n) // 100 * 100).astype(int)],
        "inpdol": [f"{v:.2f}" for v in parts["inpdol"]],
        "meddol": [f"{v:.2f}" for v in meddol],
        "outpdol": [f"{v:.2f}" for v in parts["outpdol"]],
        "drugdol": [f"{v:.2f}" for v in parts["drugdol"]],
        "suppdol": [f"{v:.2f}" for v in parts["suppdol"]],
        "mentdol": [f"{v:.2f}" for v in parts["mentdol"]],
        "visits": [str(v) for v in rng.poisson(3, size=n)],
    }


#: US states and DC with weights like their populations (millions), for :func:`survey`.
_STATES = {
    "California": 39.0, "Texas": 30.0, "Florida": 22.2, "New York": 19.6, "Pennsylvania": 13.0,
    "Illinois": 12.5, "Ohio": 11.8, "Georgia": 10.9, "North Carolina": 10.7, "Michigan": 10.0,
    "New Jersey": 9.3, "Virginia": 8.7, "Washington": 7.8, "Arizona": 7.4, "Tennessee": 7.1,
    "Massachusetts": 7.0, "Indiana": 6.8, "Missouri": 6.2, "Maryland": 6.2, "Wisconsin": 5.9,
    "Colorado": 5.8, "Minnesota": 5.7, "South Carolina": 5.3, "Alabama": 5.1, "Louisiana": 4.6,
    "Kentucky": 4.5, "Oregon": 4.2, "Oklahoma": 4.0, "Connecticut": 3.6, "Utah": 3.4,
    "Iowa": 3.2, "Nevada": 3.2, "Arkansas": 3.0, "Mississippi": 2.9, "Kansas": 2.9,
    "New Mexico": 2.1, "Nebraska": 2.0, "Idaho": 1.9, "West Virginia": 1.8, "Hawaii": 1.4,
    "New Hampshire": 1.4, "Maine": 1.4, "Montana": 1.1, "Rhode Island": 1.1, "Delaware": 1.0,
    "South Dakota": 0.9, "North Dakota": 0.8, "Alaska": 0.7, "District of Columbia": 0.7,
    "Vermont": 0.6, "Wyoming": 0.6,
}  # fmt: skip


def survey(n: int = 64_600, seed: int = 0) -> dict[str, list[str]]:
    """An election survey like the 64,600 x 22 file of issues 49-51 (a CCES-style common
    content): state (51 values weighted by population), sex (``female`` 0/1), race, age,
    education, income and 16 more attitudes and facts, the vote (``votetrump`` ``'1.0'`` /
    ``'0.0'``) depending on race, education and state; 15 of the 22 columns hold missing
    cells (empty), as survey items skipped or refused do."""
    rng = np.random.default_rng(seed)
    names = list(_STATES)
    w = np.array([_STATES[k] for k in names])
    state = rng.choice(len(names), size=n, p=w / w.sum())
    race = rng.choice(6, size=n, p=[0.68, 0.12, 0.1, 0.05, 0.03, 0.02])
    educ = rng.choice(6, size=n, p=[0.05, 0.28, 0.22, 0.1, 0.22, 0.13])
    lean = 0.55 - 0.35 * (race == 1) - 0.15 * (race == 2) - 0.05 * educ + 0.1 * (state % 3 == 0)
    vote = rng.random(n) < np.clip(lean, 0.02, 0.98)

    def cat(k: int, missing: float) -> list[str]:
        v = rng.integers(0, k, size=n)
        gone = rng.random(n) < missing
        return ["" if g else str(x + 1) for x, g in zip(v.tolist(), gone.tolist(), strict=True)]

    skipped = rng.random(n) < 0.18
    return {
        "state": [names[i] for i in state],
        "female": [str(v) for v in rng.integers(0, 2, size=n)],
        "racef": [("White", "Black", "Hispanic", "Asian", "Other", "Mixed")[i] for i in race],
        "age": [str(v) for v in rng.integers(18, 91, size=n)],
        "educ": [str(v + 1) for v in educ],
        "faminc": cat(12, 0.11),
        "pid7": cat(7, 0.03),
        "ideo5": cat(5, 0.05),
        "votetrump": [
            "" if s_ else ("1.0" if v else "0.0") for v, s_ in zip(vote.tolist(), skipped.tolist(), strict=True)
        ],
        "religpew": cat(12, 0.02),
        "marstat": cat(6, 0.01),
        "employ": cat(9, 0.01),
        "urbancity": cat(5, 0.04),
        "union": cat(3, 0.02),
        "child18": cat(2, 0.0),
        "milstat": cat(4, 0.03),
        "newsint": cat(5, 0.02),
        "trust": cat(4, 0.2),
        "healthins": cat(3, 0.06),
        "ownhome": cat(3, 0.01),
        "region": [("Northeast", "Midwest", "South", "West")[i % 4] for i in state],
        "interest": cat(4, 0.01),
    }


def events(n: int = 51_920, seed: int = 0) -> dict[str, list[str]]:
    """A case file like the 51,920 x 15 one of issue 50 (a classic Mondrian job): a report
    date and a birth date (ISO), latitude and longitude with four decimals around five
    cities, age, sex, a zip-like code, an ethnicity, a hospital, days in care, a count of
    contacts, an outcome and a diagnosis (the sensitive attribute, 40 values skewed by age)."""
    rng = np.random.default_rng(seed)
    city = rng.integers(0, 5, size=n)
    lat = np.array([40.71, 34.05, 41.88, 29.76, 33.45])[city] + rng.normal(0, 0.15, size=n)
    lon = np.array([-74.0, -118.24, -87.63, -95.37, -112.07])[city] + rng.normal(0, 0.15, size=n)
    age = np.clip(rng.gamma(4.0, 10.0, size=n), 0, 100).astype(int)
    report = np.datetime64("2020-03-01") + rng.integers(0, 700, size=n).astype("timedelta64[D]")
    birth = report - (age * 365.25 + rng.integers(0, 365, size=n)).astype("timedelta64[D]")
    diag = np.clip((age / 100 * 30 + rng.normal(0, 6, size=n)).astype(int), 0, 39)
    return {
        "report_date": [str(d) for d in report],
        "birth_date": [str(d) for d in birth],
        "lat": [f"{v:.4f}" for v in lat],
        "lon": [f"{v:.4f}" for v in lon],
        "age": [str(v) for v in age],
        "sex": [("F", "M")[i] for i in rng.integers(0, 2, size=n)],
        "zip": [f"{z:05d}" for z in (city * 1000 + 10000 + rng.integers(0, 120, size=n))],
        "ethnicity": [("A", "B", "C", "D", "E")[i] for i in rng.choice(5, size=n, p=[0.5, 0.2, 0.15, 0.1, 0.05])],
        "hospital": [f"H{v:02d}" for v in rng.integers(0, 30, size=n)],
        "days": [str(v) for v in rng.poisson(5, size=n)],
        "contacts": [str(v) for v in rng.poisson(8, size=n)],
        "outcome": [("recovered", "hospitalized", "died")[i] for i in rng.choice(3, size=n, p=[0.85, 0.12, 0.03])],
        "city": [("NYC", "LA", "CHI", "HOU", "PHX")[i] for i in city],
        "tested": [("pcr", "antigen")[i] for i in rng.integers(0, 2, size=n)],
        "diagnosis": [f"D{v:02d}" for v in diag],
    }


def stops(n: int = 51_920, seed: int = 0) -> dict[str, list[str]]:
    """A police-stop file like the 51,920 x 15 one of issues 63 and 65 (Minneapolis-style
        open data, never in this repository): the stop's date and time (one year, ISO 8601 to the
    second, UTC), a problem
        type, whether the person and the vehicle were searched (``personSearch``, ``vehicleSearch``:
        ``YES`` / ``NO``, about 9 % and 6 %), a precinct and neighborhood, the subject's race,
        gender and age band, a call disposition, the reason, a citation flag, the lat/lon rounded
        to three decimals and the day of the week. Searches depend on the problem type and race,
        so t-closeness on them binds."""
    rng = np.random.default_rng(seed)
    day = rng.integers(0, 365, size=n)
    second = rng.integers(0, 86_400, size=n)
    date = np.datetime64("2017-01-01T00:00:00") + (day * 86_400 + second).astype("timedelta64[s]")
    problem = rng.choice(4, size=n, p=[0.55, 0.3, 0.1, 0.05])
    race = rng.choice(7, size=n, p=[0.35, 0.3, 0.12, 0.08, 0.06, 0.05, 0.04])
    precinct = rng.integers(1, 6, size=n)
    hood = precinct * 20 + rng.integers(0, 18, size=n)
    searched = rng.random(n) < np.clip(0.04 + 0.08 * (problem == 1) + 0.05 * (race == 1) + 0.02 * (problem == 2), 0, 1)
    vehicle = rng.random(n) < np.where(searched, 0.35, 0.03)
    lat = 44.95 + 0.01 * precinct + rng.normal(0, 0.02, size=n)
    lon = -93.27 + 0.01 * (hood % 7) + rng.normal(0, 0.02, size=n)
    weekdays = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    return {
        "date": [f"{d}Z" for d in date],
        "problem": [("traffic", "suspicious", "equipment", "other")[i] for i in problem],
        "personSearch": ["YES" if v else "NO" for v in searched],
        "vehicleSearch": ["YES" if v else "NO" for v in vehicle],
        "preRace": [("White", "Black", "Unknown", "East African", "Latino", "Native", "Asian")[i] for i in race],
        "gender": [("Male", "Female", "Unknown")[i] for i in rng.choice(3, size=n, p=[0.68, 0.3, 0.02])],
        "ageBand": [("<18", "18-24", "25-34", "35-44", "45-54", "55+")[i] for i in rng.integers(0, 6, size=n)],
        "policePrecinct": [str(v) for v in precinct],
        "neighborhood": [f"N{v:03d}" for v in hood],
        "callDisposition": [("TAG", "ADV", "BKG", "RFD")[i] for i in rng.choice(4, size=n, p=[0.5, 0.3, 0.1, 0.1])],
        "reason": [("moving", "equipment", "investigative", "other")[i] for i in rng.integers(0, 4, size=n)],
        "citationIssued": [("YES", "NO", "")[i] for i in rng.choice(3, size=n, p=[0.3, 0.6, 0.1])],
        "lat": [f"{v:.3f}" for v in lat],
        "long": [f"{v:.3f}" for v in lon],
        "dayOfWeek": [weekdays[int(d) % 7] for d in (day + 6)],
    }


def wide_panel(n: int = 20_190, seed: int = 0) -> dict[str, list[str]]:
    """A numeric-heavy panel like the 20,190 x 46 file of issue 50: :func:`panel`'s 11
    columns and 35 more yearly figures (spending with two decimals, counts of visits and
    days), each correlated with the person's total spending."""
    base = panel(n, seed)
    rng = np.random.default_rng(seed + 1)
    total = np.array([float(v) for v in base["meddol"]])
    more: dict[str, list[str]] = {}
    for j in range(35):
        if j % 3 == 2:
            v = rng.poisson(1 + total / 2000)
            more[f"cnt{j:02d}"] = [str(x) for x in v]
        else:
            v = np.round(total * rng.uniform(0.0, 0.2, size=n) * (rng.random(n) < 0.6), 2)
            more[f"dol{j:02d}"] = [f"{x:.2f}" for x in v]
    return {**base, **more}


def write_csv(columns: dict[str, list[str]], path: str) -> None:
    """The table as a CSV file (no value here needs quoting)."""
    names = list(columns)
    rows = zip(*(columns[c] for c in names), strict=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(",".join(names) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")
