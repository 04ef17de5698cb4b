"""Syntactic and differentially private releases of one file (issue 52):
``versapub experiment dp``.

The file: the embedded UCI Adult (ARX version, 30,162 records) over race, sex, age, marital
status and occupation, with ARX's hierarchies (the setting of the marginals experiment), and
one rule, ``race, sex, age, marital-status -> occupation``. Its releases, each written and
verified by the tool's own commands' code paths:

* **Anatomy** and **Mondrian** under frequency l-diversity (``L``);
* a **collection of anonymized marginals** (Kifer & Gehrke) with k-link anonymity ``K`` and
  the same l-diversity of the maximum-entropy estimate (base: Incognito's best table, then
  marginals injected by the greedy search);
* **differentially private** releases (``dp``): the rule's marginal ``Q ∪ {S}`` measured
  (``select=rules``) at each epsilon of ``EPSILONS``, and MST and AIM at epsilon 1 — every
  domain declared from the hierarchies' leaves (public knowledge), delta 1e-9.

Then every release goes through :func:`versapub.inspect.comparison.compare` (``versapub
compare``): KL-divergence, the same seeded workload of 1,000 COUNT queries (median relative
error and the share of true answers inside each release's range or interval), risk on the
rule's quasi-identifiers and the strongest attack its check recorded. Everything goes to
``OUT/results.json``; the page is drawn by :mod:`versapub.experiments.dp_page`, with the
benchmark against Private-PGM's MST (``benchmarks/dp.py``'s ``OUT/benchmark.json``) beside it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from versapub.experiments.marginals import ATTRIBUTES, SENSITIVE, adult

Progress = Callable[[str, int, int], None]
RULE = "race, sex, age, marital-status -> occupation"
L = 4
K = 10
EPSILONS = (0.25, 1.0, 4.0)


def _quiet(description: str, done: int, total: int) -> None:
    del description, done, total


def _write_input(out: Path) -> tuple[Path, dict[str, Any]]:
    """The file every release is published from, and its hierarchies (for Mondrian's cuts
    and the marginals' levels; their leaves are the declared domains)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from versapub.datasets import data_path

    table, hier = adult()
    path = out / "adult5.csv"
    pacsv.write_csv(pa.table({a: [str(v) for v in table.column(a).values[table.codes(a)]] for a in ATTRIBUTES}), path)
    files = {a: data_path("adult", "hierarchies", f"adult_hierarchy_{a}.csv") for a in ATTRIBUTES}
    return path, {"hierarchies": hier, "files": files}


def _syntactic(path: Path, files: dict[str, Path], releases: Path, progress: Progress) -> list[dict[str, Any]]:
    from versapub import workflow
    from versapub.io.config import HierarchySpec, PublishConfig
    from versapub.marginals.spec import MarginalsSpec

    hier = tuple(HierarchySpec(a, files[a]) for a in ATTRIBUTES if a != SENSITIVE)
    base = PublishConfig(input=path, rules=(RULE,), l=L, hierarchies=hier, seed=1)
    out: list[dict[str, Any]] = []
    jobs: list[tuple[str, str, Callable[[Path], Any]]] = [
        ("anatomy", f"Anatomy, l-diversity l = {L}", lambda d: workflow.run(base, d, utility=False)),
        (
            "mondrian",
            f"Mondrian, l-diversity l = {L}",
            lambda d: workflow.run(base.with_overrides(anonymizer="mondrian"), d, utility=False),
        ),
    ]
    spec = MarginalsSpec(SENSITIVE, K, {"name": "l-diversity", "l": L}, base="incognito", inject=3)
    jobs.append(
        (
            "marginals",
            f"anonymized marginals, k = {K}, l-diversity l = {L}",
            lambda d: workflow.run_marginals(base.with_overrides(marginals=spec), d, utility=False),
        )
    )
    for name, what, job in jobs:
        progress(f"publishing {what}", len(out), len(jobs))
        t = time.perf_counter()
        job(releases / name)
        out.append({"release": name, "what": what, "seconds": time.perf_counter() - t})
    return out


def _private(path: Path, files: dict[str, Path], releases: Path, progress: Progress) -> list[dict[str, Any]]:
    from versapub.data.hierarchy import Hierarchy
    from versapub.io.read import read_table
    from versapub.mechanisms import make_mechanism
    from versapub.publishing.dp_release import write_dp_release

    table = read_table(path)
    # declared, never read from the data: each attribute's hierarchy leaves (ARX's files)
    domains = {a: tuple(dict.fromkeys(str(r[0]) for r in Hierarchy.read(files[a], a).levels)) for a in ATTRIBUTES}
    rule = ((tuple(a.strip() for a in RULE.split("->")[0].split(",")), RULE.split("->")[1].strip()),)
    jobs = [(f"dp-rules-eps{e:g}", f"DP, the rule's marginal, epsilon {e:g}", e, "rules") for e in EPSILONS]
    jobs += [("dp-mst-eps1", "DP, MST, epsilon 1", 1.0, "mst"), ("dp-aim-eps1", "DP, AIM, epsilon 1", 1.0, "aim")]
    out: list[dict[str, Any]] = []
    for name, what, eps, select in jobs:
        progress(f"publishing {what}", len(out), len(jobs))
        t = time.perf_counter()
        mech = make_mechanism("dp", epsilon=eps, select=select)
        synth = mech.run(table, domains, rule)
        write_dp_release(
            synth,
            table,
            domains,
            releases / name,
            mechanism={"name": "dp", "parameters": mech.params()},
            source={"path": path.name},
            rules=rule,
        )
        out.append({"release": name, "what": what, "seconds": time.perf_counter() - t, "epsilon": eps})
    return out


def run_experiment(out_dir: Path, progress: Progress = _quiet) -> Path:
    """Publish every release of the file, compare them, write ``OUT/results.json``."""
    from versapub.inspect.comparison import compare

    out_dir.mkdir(parents=True, exist_ok=True)
    releases = out_dir / "releases"
    shutil.rmtree(releases, ignore_errors=True)
    releases.mkdir()
    path, extra = _write_input(out_dir)
    runs = _syntactic(path, extra["files"], releases, progress) + _private(path, extra["files"], releases, progress)
    progress("comparing every release on the same workload and attacks", 0, 0)
    cmp = compare([releases / r["release"] for r in runs], path)
    by_name = {Path(str(row["release"])).name: row for row in cmp.rows}
    for r in runs:
        r["measures"] = by_name.get(r["release"], {})
    results = {
        "file": "UCI Adult (embedded ARX version), 30,162 records, race, sex, age, marital-status, occupation",
        "rule": RULE,
        "l": L,
        "k": K,
        "quasi_identifiers": list(cmp.qi),
        "input_row": by_name.get("(the input itself)", {}),
        "notes": list(cmp.notes),
        "runs": runs,
    }
    target = out_dir / "results.json"
    target.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    shutil.rmtree(releases, ignore_errors=True)  # rebuilt by every run; the results keep what they say
    path.unlink()
    return target
