"""A seeded file of persons in households (issue 68), the shape of a census or household
survey's public-use file: one row per person, the household id on every row, household-level
columns constant within a household (region, dwelling type, tenure, household income, size),
and person-level columns consistent within it (the reference person and a spouse of adult
ages close to each other, children younger than both by 18 to 45 years, other relatives of
any adult age).

Sizes follow a census-like distribution (one person 28 %, two 34 %, three 16 %, four 14 %,
five 6 %, six or more 2 %); regions are skewed (a large region holds a quarter of the
households); household income is log-normal, rounded to thousands, higher with more adults.
Written as text columns, as a data file is read. No real public-use hierarchical file ships
with a package on the registries this project uses, so this generator is the only household
data in the repository (docs/risk.md)."""

from __future__ import annotations

import numpy as np

#: Household sizes 1..7 and their shares.
SIZES = (1, 2, 3, 4, 5, 6, 7)
SIZE_SHARES = (0.28, 0.34, 0.16, 0.14, 0.06, 0.015, 0.005)
REGIONS = ("North", "South", "East", "West", "Central", "Coast", "Hills", "Islands")
DWELLINGS = ("house", "apartment", "mobile home", "other")
TENURES = ("owned", "mortgaged", "rented", "free")
#: The columns constant within every household.
HOUSEHOLD_LEVEL = ("region", "dwelling", "tenure", "hh_income", "hh_size")


def households(n_households: int = 40_000, seed: int = 0) -> dict[str, list[str]]:
    """``n_households`` households and their members (module docstring): columns ``hh_id``,
    ``region``, ``dwelling``, ``tenure``, ``hh_income``, ``hh_size`` (household level) and
    ``relationship``, ``sex``, ``age``, ``marital``, ``employment`` (person level)."""
    if n_households <= 0:
        raise ValueError("n_households must be positive")
    rng = np.random.default_rng(seed)
    size = rng.choice(SIZES, size=n_households, p=SIZE_SHARES)
    hh = np.repeat(np.arange(n_households), size)
    pos = np.arange(len(hh)) - np.repeat(np.cumsum(size) - size, size)  # member number in its household
    n = len(hh)
    rw = 1.0 / np.arange(1, len(REGIONS) + 1) ** 0.9
    region = rng.choice(len(REGIONS), size=n_households, p=rw / rw.sum())
    dwelling = rng.choice(len(DWELLINGS), size=n_households, p=(0.55, 0.35, 0.06, 0.04))
    tenure = rng.choice(len(TENURES), size=n_households, p=(0.3, 0.35, 0.3, 0.05))
    couple = (size >= 2) & (rng.random(n_households) < 0.75)
    head_age = np.clip(rng.normal(50, 15, n_households), 18, 95).astype(int)
    # members: 0 the reference person; 1 the spouse in a couple; then children, else other relatives
    spouse = (pos == 1) & couple[hh]
    child = (pos >= 1) & ~spouse & (rng.random(n) < 0.85)
    relationship = np.where(pos == 0, 0, np.where(spouse, 1, np.where(child, 2, 3)))
    age = head_age[hh].copy()
    age = np.where(spouse, np.clip(age + rng.integers(-6, 7, n), 18, 95), age)
    child_age = age - rng.integers(18, 46, n)
    age = np.where(child, np.maximum(child_age, 0), age)
    age = np.where(relationship == 3, rng.integers(18, 90, n), age)
    head_sex = rng.integers(0, 2, n_households)
    sex = np.where(spouse, 1 - head_sex[hh], np.where(pos == 0, head_sex[hh], rng.integers(0, 2, n)))
    marital = np.where(
        (pos == 0) & couple[hh] | spouse,
        0,
        np.where(age < 18, 1, rng.choice(4, size=n, p=(0.1, 0.5, 0.25, 0.15))),
    )
    employment = np.where(age < 16, 3, np.where(age >= 67, 2, rng.choice(3, size=n, p=(0.7, 0.1, 0.2))))
    adults = np.bincount(hh, weights=(age >= 18).astype(float), minlength=n_households)
    income = (np.exp(rng.normal(10.4, 0.6, n_households)) * (0.6 + 0.4 * adults) // 1000 * 1000).astype(int)
    return {
        "hh_id": [f"H{i:07d}" for i in hh],
        "region": [REGIONS[i] for i in region[hh]],
        "dwelling": [DWELLINGS[i] for i in dwelling[hh]],
        "tenure": [TENURES[i] for i in tenure[hh]],
        "hh_income": [str(v) for v in income[hh]],
        "hh_size": [str(v) for v in size[hh]],
        "relationship": [("reference", "spouse", "child", "other relative")[i] for i in relationship],
        "sex": [("male", "female")[i] for i in sex],
        "age": [str(v) for v in age],
        "marital": [("married", "never married", "divorced", "widowed")[i] for i in marital],
        "employment": [("employed", "unemployed", "retired", "not in labour force")[i] for i in employment],
    }
