"""The verifier shares no logic with the publisher (issue 26): what it imports, and its own
reading of Guardian Normal Form and of each guarantee's thresholds against the publisher's,
over many random schemas and every guarantee."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from versapub.privacy.guarantees.guarantee import make_guarantee
from versapub.privacy.rules import Rule
from versapub.schema import Schema, SubTable, check_gnf
from versapub.verify.guarantees.gnf import PublishedTable, gnf_verdicts
from versapub.verify.guarantees.thresholds import threshold

VERIFY = Path(__file__).resolve().parents[1] / "src" / "versapub" / "verify"
FORBIDDEN = ("versapub.schema", "versapub.anonymizers", "versapub.decompositions", "versapub.privacy")
ALLOWED = ("versapub.privacy.rules",)


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
    return out


def test_nothing_under_verify_imports_the_publisher() -> None:
    files = sorted(VERIFY.rglob("*.py"))
    assert len(files) >= 10
    bad = {f.name: m for f in files for m in _imports(f) if m.startswith(FORBIDDEN) and not m.startswith(ALLOWED)}
    assert not bad, bad


def test_loading_the_verifier_loads_no_schema_decomposition_or_rule_reduction() -> None:
    """Transitively too: the GNF reading, the thresholds and the checks never load the
    publisher's schema or decompositions (the table kinds are read through versapub.kinds)."""
    code = (
        "import importlib, pkgutil, sys, versapub.verify as v\n"
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(v.__path__, 'versapub.verify.')]\n"
        "print(sorted(m for m in sys.modules if m.startswith(('versapub.schema', 'versapub.decompositions'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def random_schema(rng: np.random.Generator) -> tuple[list[SubTable], list[Rule]]:
    """A random schema over a handful of attributes: tables (overlapping attribute sets),
    some enforcing rules inside them; and random rules to judge (GNF or not)."""
    m = int(rng.integers(2, 8))
    names = [f"a{i}" for i in range(m)]
    tables = []
    for j in range(int(rng.integers(1, 5))):
        attrs = [a for a in names if rng.random() < 0.45] or [str(rng.choice(names))]
        enforced: list[Rule] = []
        for s in attrs:
            if len(attrs) > 1 and rng.random() < 0.4:
                lhs = [a for a in attrs if a != s and rng.random() < 0.7] or [next(a for a in attrs if a != s)]
                enforced.append(Rule(tuple(lhs), s))
        tables.append(SubTable(f"T{j + 1}", tuple(attrs), enforced[0] if enforced else None, tuple(enforced[1:])))
    rules = []
    for _ in range(int(rng.integers(1, 5))):
        s = str(rng.choice(names))
        lhs = [a for a in names if a != s and rng.random() < 0.4] or [next(a for a in names if a != s)]
        rules.append(Rule(tuple(lhs), s))
    return tables, rules


def _agree(seed: int) -> tuple[int, int]:
    tables, rules = random_schema(np.random.default_rng(seed))
    mine = check_gnf(Schema(tuple(tables)), rules)
    entries = [PublishedTable(t.name, t.attributes, t.enforced_rules) for t in tables]
    theirs = gnf_verdicts([(r.lhs, r.rhs) for r in rules], entries)
    for a, b in zip(mine.verdicts, theirs, strict=True):
        assert (a.holds, a.kind, a.guardian) == (b.holds, b.kind, b.guardian), (seed, a.explain(), b.explain())
    return sum(v.holds for v in theirs), sum(not v.holds for v in theirs)


def test_the_two_gnf_readings_agree_on_random_schemas() -> None:
    """A few hundred random schemas in make test (derandomized seeds); thousands in the slow suite."""
    held = failed = 0
    for seed in range(400):
        h, f = _agree(seed)
        held, failed = held + h, failed + f
    assert held > 100 and failed > 100  # both verdicts well represented


@pytest.mark.slow
def test_the_two_gnf_readings_agree_on_thousands_of_random_schemas() -> None:
    for seed in range(400, 5400):
        _agree(seed)


GRID = [
    {"name": "l-diversity", "l": 2},
    {"name": "l-diversity", "l": 7},
    {"name": "distinct-l-diversity", "l": 4},
    {"name": "entropy-l-diversity", "l": 2.5},
    {"name": "entropy-l-diversity", "l": 3},
    {"name": "recursive-cl-diversity", "c": 3, "l": 2},
    {"name": "recursive-cl-diversity", "c": 0.5, "l": 4},
    {"name": "k-anonymity", "k": 5},
    {"name": "t-closeness", "t": 0.2},
    {"name": "functional-diversity", "tau": 0.5, "lambda": 3},
    {"name": "functional-diversity", "tau": 0.2, "lambda": 8},
    {"name": "functional-diversity", "tau": 0.4, "lambda": 4, "phi": [0.4, 0.7, 1.0]},
    {"name": "all-of", "guarantees": [{"name": "l-diversity", "l": 3}, {"name": "distinct-l-diversity", "l": 5}]},
    {"name": "beta-likeness", "beta": 1.0},
    {"name": "beta-likeness", "beta": 2.0, "enhanced": True},
    {"name": "delta-disclosure", "delta": 1.2},
    {"name": "k-map", "k": 10, "fraction": 0.2},
    {"name": "k-map", "k": 10},
    {"name": "delta-presence", "delta_min": 0.1, "delta_max": 0.5},
]


@pytest.mark.parametrize("spec", GRID, ids=lambda s: str(s["name"]))
def test_the_verifiers_thresholds_equal_the_publishers(spec: dict[str, object]) -> None:
    """Written independently from the definitions (verify/guarantees/thresholds.py), the attacks'
    disclosure test and the posterior limit equal the guarantee classes' (unbound: no
    table-wide distribution, as the check builds them)."""
    g, t = make_guarantee(dict(spec)), threshold(dict(spec))
    assert t.min_possible_values() == g.min_possible_values()
    assert t.posterior_limit() == pytest.approx(g.posterior_limit(), rel=1e-12)


def test_every_registered_guarantee_has_thresholds_in_the_verifier() -> None:
    from versapub.privacy.guarantees.guarantee import GUARANTEES

    assert {str(s["name"]) for s in GRID} == set(GUARANTEES)
