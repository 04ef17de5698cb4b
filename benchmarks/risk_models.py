"""Issue 69: which population-uniqueness model to trust. Populations of known shape, sampled
at 1-30 %; each model's estimate of the sample uniques unique in the population against the
truth (the sampled records whose key cell holds one person in the population).

Shapes: ``exchangeable`` (Pitman–Yor class sizes — ARX's models' home — each class a random
cell of five key variables), ``main`` (independent key variables with realistic skew: a
Zipf-like area of 300, a gamma-shaped age, sex, race and marital status; 400,000 people),
``interactions`` (the same with marital status depending on age and race on area),
``copula`` (a Gaussian copula over five keys) and ``adult`` (Adult's 30,162 records as the
population over six of its keys, the samples drawn from it).

    python benchmarks/risk_models.py [--draws 3] [--json FILE]

Prints one markdown row per shape and fraction: the truth and each model's estimate (mean
over the draws) and each model's mean relative error.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from versapub.data.groupby import group_rows
from versapub.privacy.risk.population import estimate

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("auto", "loglinear", "copula", "pitman", "zayatz", "snb", "arx")
Population = list[np.ndarray]


def main_effects(rng: np.random.Generator, n: int = 400_000) -> Population:
    """Independent keys: Zipf-like area (300), gamma age (0-99), sex, race (6), marital (5)."""
    area_p = 1 / np.arange(1, 301) ** 1.1
    return [
        rng.choice(300, n, p=area_p / area_p.sum()),
        np.minimum(rng.gamma(4.0, 9.0, n).astype(np.int64), 99),
        rng.integers(0, 2, n),
        rng.choice(6, n, p=[0.7, 0.12, 0.08, 0.05, 0.03, 0.02]),
        rng.choice(5, n, p=[0.45, 0.35, 0.1, 0.07, 0.03]),
    ]


def interactions(rng: np.random.Generator, n: int = 400_000) -> Population:
    """As :func:`main_effects`, marital status depending on age and race on area."""
    area, age, sex, race, _ = main_effects(rng, n)
    young = rng.choice(5, n, p=[0.9, 0.06, 0.02, 0.01, 0.01])
    older = rng.choice(5, n, p=[0.2, 0.5, 0.15, 0.1, 0.05])
    marital = np.where(age < 25, young, older)
    race = (race + (area % 7 == 0) * rng.integers(1, 6, n)) % 6
    return [area, age, sex, race, marital]


def copula(rng: np.random.Generator, n: int = 400_000) -> Population:
    """A Gaussian copula (correlations 0.1-0.6) with skewed discrete margins of 60, 40, 12,
    8 and 6 values."""
    from scipy.special import ndtr

    corr = np.array(
        [
            [1.0, 0.5, 0.2, 0.3, 0.1],
            [0.5, 1.0, 0.4, 0.2, 0.3],
            [0.2, 0.4, 1.0, 0.6, 0.2],
            [0.3, 0.2, 0.6, 1.0, 0.4],
            [0.1, 0.3, 0.2, 0.4, 1.0],
        ]
    )
    z = rng.standard_normal((n, 5)) @ np.linalg.cholesky(corr).T
    out = []
    for i, k in enumerate((60, 40, 12, 8, 6)):
        w = rng.gamma(0.7, 1.0, k)
        out.append(np.minimum(np.searchsorted(np.cumsum(w / w.sum()), ndtr(z[:, i])), k - 1))
    return out


def crp(rng: np.random.Generator, n: int, theta: float, alpha: float) -> np.ndarray:
    """Class labels of ``n`` people from the two-parameter Chinese restaurant (Pitman–Yor)."""
    labels = np.empty(n, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    k = 0
    new = rng.random(n)
    for i in range(n):
        if i == 0 or new[i] < (theta + k * alpha) / (theta + i):
            labels[i], sizes[k] = k, 1
            k += 1
            continue
        while True:  # a previous person's class, accepted with (size - alpha) / size
            t = labels[rng.integers(i)]
            if rng.random() * sizes[t] < sizes[t] - alpha:
                break
        labels[i] = t
        sizes[t] += 1
    return labels


def exchangeable(rng: np.random.Generator, n: int = 200_000) -> Population:
    """Pitman–Yor classes (theta 2000, alpha 0.5), each a distinct random cell of five keys."""
    labels = crp(rng, n, 2000.0, 0.5)
    cards = (300, 100, 2, 6, 5)
    cells = rng.choice(int(np.prod(cards)), int(labels.max()) + 1, replace=False)
    return [c[labels] for c in np.unravel_index(cells, cards)]


def adult(rng: np.random.Generator) -> Population:
    """Adult's 30,162 records as the population over six of its key variables (sex, age,
    race, marital status, education, workclass); the samples are drawn from it."""
    import versapub

    cols = ["sex", "age", "race", "marital-status", "education", "workclass"]
    from versapub.inspect.risks import value_order

    t = versapub.read_table(ROOT / "src/versapub/datasets/data/adult/adult.csv.gz", delimiter=";", columns=cols)
    out = []
    for c in cols:  # codes in numeric order where the values are numbers (age), as `risk` reads them
        rank, numeric = value_order(t.column(c).values)
        codes = t.codes(c).astype(np.int64)
        out.append(rank[codes] if numeric else codes)
    return out


SHAPES: dict[str, Callable[[np.random.Generator], Population]] = {
    "exchangeable": exchangeable,
    "main": main_effects,
    "interactions": interactions,
    "copula": copula,
    "adult": adult,
}


#: Which key variables of a shape are numbers (the copula orders the others by frequency, as
#: ``risk`` does for text values); every generated shape's keys are numbers in code order.
TEXT = {"adult": (True, False, True, True, True, True)}


def one_draw(pop: Population, pi: float, rng: np.random.Generator, shape: str = "") -> dict[str, float]:
    """Sample ``pop`` at ``pi``; the truth and every model's estimate."""
    cards = [int(c.max()) + 1 for c in pop]
    g = group_rows(pop, cards, with_inverse=True)
    assert g.inverse is not None
    take = rng.random(len(pop[0])) < pi
    truth = int((g.counts[g.inverse][take] == 1).sum())
    s = group_rows([c[take] for c in pop], cards)
    t = time.perf_counter()
    text = TEXT.get(shape, (False,) * len(pop))
    orders = [(np.arange(k), not t) for k, t in zip(cards, text, strict=True)]
    u = estimate([k.astype(np.int64) for k in s.keys], cards, s.counts, float(take.sum()) / len(take), orders=orders)
    seconds = time.perf_counter() - t
    got = {"loglinear": u.loglinear, "copula": u.copula, "pitman": u.pitman, "zayatz": u.zayatz, "snb": u.snb}
    arx = getattr(u, u.arx_model, float("nan"))
    return {
        "truth": truth,
        "auto": u.estimate,
        **got,
        "arx": arx,
        "z": u.loglinear_z,
        "misfit": u.loglinear_misfit,
        "seconds": seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=3, help="populations drawn per shape (default 3)")
    ap.add_argument("--fractions", default="0.01,0.05,0.1,0.3")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    print("| shape | pi | truth | " + " | ".join(MODELS) + " | seconds | log-linear z | misfit |")
    print("|---|---|---|" + "---|" * (len(MODELS) + 3))
    for shape in args.shapes.split(","):
        for pi in (float(x) for x in args.fractions.split(",")):
            draws = []
            for seed in range(args.draws):
                rng = np.random.default_rng(1000 * seed + 69)
                draws.append(one_draw(SHAPES[shape](rng), pi, rng, shape))
            mean = {k: float(np.nanmean([d[k] for d in draws])) for k in draws[0]}
            err = {m: float(np.nanmean([abs(d[m] - d["truth"]) / max(d["truth"], 1) for d in draws])) for m in MODELS}
            rows.append({"shape": shape, "pi": pi, "draws": draws, "mean": mean, "error": err})
            cells = " | ".join(f"{mean[m]:,.0f} ({100 * err[m]:.0f} %)" for m in MODELS)
            fit = f"{mean['z']:.1f} | {100 * mean['misfit']:.1f} %"
            print(
                f"| {shape} | {100 * pi:g} % | {mean['truth']:,.0f} | {cells} | {mean['seconds']:.2f} | {fit} |",
                flush=True,
            )
    summary = {m: float(np.mean([r["error"][m] for r in rows if r["shape"] != "exchangeable"])) for m in MODELS}
    print(
        "mean relative error over the structured shapes: "
        + ", ".join(f"{m} {100 * e:.1f} %" for m, e in summary.items())
    )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "structured_error": summary}, indent=1))


if __name__ == "__main__":
    main()
