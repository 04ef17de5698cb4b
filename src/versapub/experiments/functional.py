"""Re-running §5 of the functional (tau, lambda)-diversity paper with versapub:
``versapub experiment functional``.

Datasets (``DATASETS``; taxonomies and choices in ``docs/choices.md``):

* ``adult``: the embedded UCI Adult (ARX version, 30,162 records); quasi-identifiers age,
  sex, race, marital status, education, native country, workclass, salary class with ARX's
  hierarchies; sensitive **occupation** under the Census Bureau's major occupation groups
  (4 levels, ``scripts/make_functional_taxonomies.py``) — the paper's "occupation-like"
  attribute with a taxonomy of meaning; salary (two values) cannot carry lambda >= 3.
* ``sparcs``: the embedded New York SPARCS 2020 discharges (339,006 records); quasi-
  identifiers age (groups under 18–49 / 50+), gender, race, ethnicity, hospital county
  (under its Health Service Area); sensitive **CCSR diagnosis** (440 codes) under its body
  system (AHRQ CCSR's three-letter prefix).

Methods, per requirement (tau, lambda) of the grid (``grid``):

* ``ss``: Sequential Sweep, sensitive values free to generalize;
* ``cld-theorem``: Incognito with recursive (c, l)-diversity, for every ``l`` the weakest
  ``c`` that implies (tau, lambda) (Theorem 23 / Corollary 24, :mod:`versapub.privacy.guarantees.strength`);
  the page takes, per requirement, the output of highest information;
* ``cld``: Incognito on a grid of (c, l) once — the brute-force search: per requirement,
  the output of highest information among those that satisfy it;
* ``1dld``: the 1-D l-diversity algorithm for l = 2 .. the largest eligible l once — per
  requirement, Theorem 20's l = lambda, and the paper's search: the smallest l whose
  output satisfies it.

Every output is measured the same way (:mod:`versapub.release.functional`, :mod:`versapub.
release.id3`): information ``um``; excessive protection (mean over classes and the minimum)
at every requirement of the grid; ID3's rca and classification rules predicting the
sensitive attribute from the quasi-identifiers (trees learned on the release and on the
original, both evaluated on the original); relative error of 1-, 2- and 3-D count queries
whose predicates are taxonomy nodes (one workload per dataset); time.  Rows are appended
to ``runs.csv`` task by task; a rerun resumes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, VersapubError
from versapub.experiments.runs import Runs, cell, record_settings

DATASETS = ("adult", "sparcs")
FIELDS = (
    "dataset",
    "method",
    "tau",
    "lam",
    "c",
    "l",
    "seconds",
    "error",
    "um",
    "groups",
    "sensitive_generalized",
    "rca",
    "accuracy",
    "accuracy_original",
    "rules",
    "rules_original",
    "q1",
    "q2",
    "q3",
    "ep",
)
#: progress(description, completed, total)
Progress = Callable[[str, int, int], None]
#: The brute-force grid of recursive (c, l) for CLD.
CLD_C = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


@dataclass(frozen=True)
class Dataset:
    name: str
    qi: tuple[str, ...]
    sensitive: str
    #: (attribute, embedded file) of each hierarchy; others get (values, *).
    files: tuple[tuple[str, tuple[str, ...]], ...]
    taus: tuple[float, ...]
    lams: tuple[int, ...]
    max_l: int


ADULT_QI = ("age", "sex", "race", "marital-status", "education", "native-country", "workclass", "salary-class")
ADULT = Dataset(
    "adult",
    ADULT_QI,
    "occupation",
    (
        *((a, ("adult", "hierarchies", f"adult_hierarchy_{a}.csv")) for a in ADULT_QI),
        ("occupation", ("adult", "occupation_census.csv")),
    ),
    (0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
    (3, 4, 5, 6, 7, 8, 9, 10),
    9,
)
SPARCS = Dataset(
    "sparcs",
    ("age", "Gender", "Race", "Ethnicity", "Hospital.County"),
    "CCSR.Diagnosis.Code",
    (
        ("age", ("sparcs", "age_taxonomy.csv")),
        ("Hospital.County", ("sparcs", "county_taxonomy.csv")),
        ("CCSR.Diagnosis.Code", ("sparcs", "ccsr_taxonomy.csv")),
    ),
    (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
    (3, 4, 6, 8, 10, 12),
    10,
)
BY_NAME = {"adult": ADULT, "sparcs": SPARCS}


@dataclass(frozen=True)
class Settings:
    """What determines the numbers (stored in ``settings.json``)."""

    dataset: str
    seed: int = 1
    quick: bool = False
    sample: int | None = None
    n_queries: int = 300

    def __post_init__(self) -> None:
        if self.dataset not in BY_NAME:
            raise ConfigError(f"--dataset must be one of {', '.join(DATASETS)}, got {self.dataset!r}.")
        if self.sample is not None and self.sample < 100:
            raise ConfigError(f"--sample must be at least 100 records, got {self.sample!r}.")
        if self.n_queries < 10:
            raise ConfigError(f"--queries must be at least 10, got {self.n_queries!r}.")


@dataclass(frozen=True)
class Task:
    method: str
    tau: float
    lam: int
    c: float
    l: int

    @property
    def key(self) -> tuple[str, ...]:
        return (self.method, cell(self.tau), str(self.lam), cell(self.c), str(self.l))


def row_key(r: dict[str, str]) -> tuple[str, ...]:
    """A result row's task (``cld-theorem`` rows record the (c, l) they chose; their task
    is the requirement alone)."""
    if r["method"] == "cld-theorem":
        return (r["method"], r["tau"], r["lam"], cell(0.0), "0")
    return (r["method"], r["tau"], r["lam"], r["c"], r["l"])


def load(settings: Settings) -> tuple[Dataset, EncodedTable, dict[str, Hierarchy]]:
    """The dataset's table (its quasi-identifiers and sensitive attribute) and hierarchies."""
    from versapub.datasets import data_path, sparcs
    from versapub.io.read import read_table

    ds = BY_NAME[settings.dataset]
    table = read_table(data_path("adult", "adult.csv.gz"), delimiter=";") if ds.name == "adult" else sparcs()
    table = table.select([*ds.qi, ds.sensitive])
    if settings.sample:
        table = table.sample(settings.sample, np.random.default_rng(settings.seed))
    hier = {a: Hierarchy.read(data_path(*parts), a) for a, parts in ds.files}
    return ds, table, hier


def grid(ds: Dataset, settings: Settings) -> list[tuple[float, int]]:
    """The requirements (tau, lambda) of the sweep: every valid pair of the dataset's taus
    and lambdas (tau >= 1/lambda, lambda <= the number of sensitive values)."""
    taus, lams = (ds.taus[1::2], ds.lams[::3]) if settings.quick else (ds.taus, ds.lams)
    return [(t, lam) for lam in lams for t in taus if t >= 1 / lam - 1e-12]


def plan(ds: Dataset, settings: Settings, m: int) -> list[Task]:
    points = [(t, lam) for t, lam in grid(ds, settings) if lam <= m]
    tasks = [Task("ss", t, lam, 0.0, 0) for t, lam in points]
    tasks += [Task("cld-theorem", t, lam, 0.0, 0) for t, lam in points]
    cs = CLD_C[1::3] if settings.quick else CLD_C
    ls = range(2, (4 if settings.quick else ds.max_l) + 1)
    tasks += [Task("cld", 0.0, 0, c, l) for l in ls for c in cs]
    tasks += [Task("1dld", 0.0, 0, 0.0, l) for l in range(2, ds.max_l + 1)]
    return tasks


def _guarantee(task: Task) -> dict[str, Any]:
    if task.method == "ss":
        return {"name": "functional-diversity", "tau": task.tau, "lambda": task.lam}
    if task.method == "cld":
        return {"name": "recursive-cl-diversity", "c": task.c, "l": task.l}
    return {"name": "l-diversity", "l": task.l}


def _publish(
    table: EncodedTable, ds: Dataset, hier: dict[str, Hierarchy], anonymizer: str, guarantee: dict[str, Any], seed: int
) -> tuple[Any, float]:
    from versapub.api import publish
    from versapub.privacy.screens.roles import ColumnRoles
    from versapub.publishing.request import Method

    t0 = time.perf_counter()
    rel = publish(
        table,
        [f"{', '.join(ds.qi)} -> {ds.sensitive}"],
        guarantee=guarantee,
        method=Method(anonymizer=anonymizer, hierarchies=hier),
        seed=seed,
        columns=ColumnRoles(allow_unique=table.names),
    )
    return rel, time.perf_counter() - t0


class Measurer:
    """Measures outputs against the original: the workloads are drawn once per dataset."""

    def __init__(
        self,
        table: EncodedTable,
        ds: Dataset,
        hier: dict[str, Hierarchy],
        points: Sequence[tuple[float, int]],
        seed: int,
        n_queries: int,
    ) -> None:
        from versapub.release.functional import count_actuals, count_workload

        self.table, self.ds, self.points = table, ds, list(points)
        self.reference: Any = None  # the original tree's evaluation, once
        attrs = [*ds.qi, ds.sensitive]
        self.workloads = {
            d: count_workload(table, hier, attrs, n_queries, d, np.random.default_rng([seed, d])) for d in (1, 2, 3)
        }
        self.actuals = {d: count_actuals(table, w) for d, w in self.workloads.items()}

    def measure(self, anon: Any) -> dict[str, Any]:
        from versapub.privacy.guarantees.functional import linear_phi
        from versapub.release.cells import Cells
        from versapub.release.functional import count_estimates, excessive_protection
        from versapub.release.id3 import classification, reference_evaluation
        from versapub.release.metrics import loss_in_memory

        cells = Cells.of_table(anon)
        _, um = loss_in_memory(anon, self.table)
        if self.reference is None:
            self.reference = reference_evaluation(cells, self.table, self.ds.sensitive)
        cl = classification(cells, self.table, self.ds.sensitive, reference=self.reference)
        out: dict[str, Any] = {
            "um": um,
            "groups": anon.stats.get("groups"),
            "sensitive_generalized": anon.stats.get("sensitive_generalized", 0),
            "rca": cl["rca"],
            "accuracy": cl["accuracy_anonymized"],
            "accuracy_original": cl["accuracy_original"],
            "rules": cl["rules_anonymized"],
            "rules_original": cl["rules_original"],
        }
        for d, w in self.workloads.items():
            act = self.actuals[d]
            est = count_estimates(cells, w)
            keep = act > 0
            out[f"q{d}"] = float(np.mean(np.abs(act[keep] - est[keep]) / act[keep]))
        ep = {}
        for t, lam in self.points:
            e, _ = excessive_protection(cells, linear_phi(t, lam))
            e = e[np.isfinite(e)]
            ep[f"{cell(t)},{lam}"] = [float(e.min()), float(e.mean())] if len(e) else None
        out["ep"] = json.dumps(ep)
        return out


def execute(
    task: Task, table: EncodedTable, ds: Dataset, hier: dict[str, Hierarchy], measurer: Measurer, seed: int
) -> dict[str, Any]:
    """Publish and measure one task (``cld-theorem``: every l's weakest c, the output of
    highest information kept); a method that cannot publish gives a row with ``error``."""
    from versapub.privacy.guarantees.functional import linear_phi
    from versapub.privacy.guarantees.strength import weakest_cl_pairs

    row: dict[str, Any] = {
        "dataset": ds.name,
        "method": task.method,
        "tau": task.tau,
        "lam": task.lam,
        "c": task.c,
        "l": task.l,
    }
    anonymizer = {
        "ss": "sequential-sweep",
        "cld": "incognito",
        "cld-theorem": "incognito",
        "1dld": "one-d-l-diversity",
    }[task.method]
    try:
        if task.method != "cld-theorem":
            rel, seconds = _publish(table, ds, hier, anonymizer, _guarantee(task), seed)
            return {**row, "seconds": seconds, **measurer.measure(rel.tables[0].table)}
        m = table.cardinality(ds.sensitive)
        best: tuple[float, Any, float, int] | None = None
        total = 0.0
        errors = []
        for c, l in weakest_cl_pairs(linear_phi(task.tau, task.lam), m, ds.max_l):
            try:
                rel, seconds = _publish(
                    table, ds, hier, anonymizer, {"name": "recursive-cl-diversity", "c": c, "l": l}, seed
                )
            except VersapubError as exc:
                errors.append(f"(c={c:.3g}, l={l}): {str(exc)[:80]}")
                continue
            total += seconds
            from versapub.release.metrics import loss_in_memory

            um = loss_in_memory(rel.tables[0].table, table)[1]
            if best is None or um > best[0]:
                best = (um, rel, c, l)
        if best is None:
            return {**row, "seconds": total, "error": "no weakest (c, l) was eligible: " + "; ".join(errors)[:300]}
        return {**row, "c": best[2], "l": best[3], "seconds": total, **measurer.measure(best[1].tables[0].table)}
    except VersapubError as exc:
        return {**row, "error": str(exc)[:300]}


def run_experiment(settings: Settings, out: Path, progress: Progress | None = None) -> Path:
    """Run (or resume) into ``out``; returns ``runs.csv``."""
    from versapub.privacy.guarantees.eligible import ranges

    hook = progress or (lambda d, i, n: None)
    record_settings(out, asdict(settings))
    hook(f"loading {settings.dataset}", 0, 1)
    ds, table, hier = load(settings)
    m = table.cardinality(ds.sensitive)
    found = ranges(table.column(ds.sensitive), hier[ds.sensitive], include_root=True)
    (out / "eligible.json").write_text(
        json.dumps(
            {
                "dataset": ds.name,
                "sensitive": ds.sensitive,
                "n": table.n_rows,
                "m": m,
                "levels": [{"level": r.level, "max_l": r.max_l, "min_c": r.min_c, "min_tau": r.min_tau} for r in found],
            },
            indent=1,
            default=str,
        )
        + "\n",
        encoding="utf-8",
    )
    tasks = plan(ds, settings, m)
    points = [(t.tau, t.lam) for t in tasks if t.method == "ss"]
    path = out / "runs.csv"
    runs = Runs(path, FIELDS)
    done = {row_key(r) for r in runs.rows}
    todo = [t for t in tasks if t.key not in done]
    if todo:
        hook("drawing the count-query workloads", len(tasks) - len(todo), len(tasks))
        measurer = Measurer(table, ds, hier, points, settings.seed, settings.n_queries)
    for i, task in enumerate(todo):
        what = f"(tau={task.tau:g}, lambda={task.lam})" if task.lam else f"(c={task.c:g}, l={task.l})"
        hook(f"{ds.name}: {task.method} {what}", len(tasks) - len(todo) + i, len(tasks))
        runs.append(execute(task, table, ds, hier, measurer, settings.seed))
    hook("done", len(tasks), len(tasks))
    return path


# -- aggregation ----------------------------------------------------------------------------
def _num(v: str | None) -> float:
    return math.nan if v in (None, "") else float(v)


@dataclass(frozen=True)
class Choice:
    """One method's output at one requirement: the row, and its excessive protection there."""

    row: dict[str, str]
    ep_min: float
    ep_mean: float


def choices(rows: Sequence[dict[str, str]]) -> dict[tuple[float, int], dict[str, Choice | None]]:
    """Per requirement, the output each method would publish: ``ss``; ``cld-t`` (Theorem 23's
    weakest (c, l), best information over l); ``cld-b`` (the brute-force search: the
    satisfying grid output of highest information); ``1dld-t`` (Theorem 20: l = lambda);
    ``1dld-b`` (the paper's search: the smallest l whose output satisfies)."""
    ok = [r for r in rows if not r.get("error")]
    out: dict[tuple[float, int], dict[str, Choice | None]] = {}
    reqs = sorted({(float(r["tau"]), int(r["lam"])) for r in rows if r["method"] == "ss"})

    def at(r: dict[str, str], t: float, lam: int) -> tuple[float, float] | None:
        got = json.loads(r["ep"] or "{}").get(f"{cell(t)},{lam}")
        return None if got is None else (float(got[0]), float(got[1]))

    for t, lam in reqs:
        here: dict[str, Choice | None] = {}
        for method in ("ss", "cld-theorem"):
            r = next((r for r in ok if r["method"] == method and float(r["tau"]) == t and int(r["lam"]) == lam), None)
            e = at(r, t, lam) if r else None
            here["ss" if method == "ss" else "cld-t"] = Choice(r, *e) if r and e else None
        sat = [(r, e) for r in ok if r["method"] == "cld" and (e := at(r, t, lam)) is not None and e[0] >= -1e-9]
        best = max(sat, key=lambda x: _num(x[0]["um"]), default=None)
        here["cld-b"] = Choice(best[0], *best[1]) if best else None
        one = sorted((r for r in ok if r["method"] == "1dld"), key=lambda r: int(r["l"]))
        r_t = next((r for r in one if int(r["l"]) == lam), None)
        e_t = at(r_t, t, lam) if r_t else None
        here["1dld-t"] = Choice(r_t, *e_t) if r_t and e_t else None
        first = next(((r, e) for r in one if (e := at(r, t, lam)) is not None and e[0] >= -1e-9), None)
        here["1dld-b"] = Choice(first[0], *first[1]) if first else None
        out[(t, lam)] = here
    return out


def search_seconds(rows: Sequence[dict[str, str]], method: str, upto_l: int | None = None) -> float:
    """Time of a brute-force search: every grid run of ``method`` (1DLD: up to ``upto_l``)."""
    return float(
        sum(
            _num(r["seconds"])
            for r in rows
            if r["method"] == method and r.get("seconds") and (upto_l is None or int(r["l"]) <= upto_l)
        )
    )
