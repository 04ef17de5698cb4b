"""The verifier is independent when it runs (issue 46): importing ``versapub.verify`` and
running ``check`` on a release loads no module of the anonymizers, the decompositions, the
schema, the release model or the guarantee classes; the posterior check reads its own
estimate from the written files, never the model the publisher built — and that estimate
agrees with the model (an independent computation of the same maximum-entropy quantity)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import versapub
from versapub.model.posterior import posterior_check
from versapub.privacy import make_guarantee
from versapub.privacy.rules import Rule, parse_rule
from versapub.verify.attacks.posterior import own_posterior

from .conftest import random_table

ROOT = Path(__file__).resolve().parents[1]
TABLE2 = ROOT / "tests" / "fixtures" / "table2"
FORBIDDEN = (
    "versapub.anonymizers",
    "versapub.decompositions",
    "versapub.schema",
    "versapub.model",
    "versapub.kinds",
    "versapub.privacy.guarantees.guarantee",
    "versapub.privacy.guarantees.diversity",
    "versapub.privacy.guarantees.closeness",
    "versapub.privacy.guarantees.kanonymity",
)


def _loaded_by_check(release: Path, original: Path | None = None) -> list[str]:
    """The forbidden modules a fresh interpreter holds after importing the verifier and
    checking ``release`` (the read-side original reader aside: it is given the table)."""
    code = f"""
import sys, json
import versapub.verify
from versapub.verify.check import run_check
from pathlib import Path
original = None
if {str(original)!r} != "None":
    from versapub.io.read import read_table
    original = read_table(Path({str(original)!r}))
rep = run_check(Path({str(release)!r}), original=original)
print(json.dumps({{"ok": rep.ok, "modules": sorted(sys.modules)}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return [m for m in got["modules"] if m.startswith(FORBIDDEN)]


def test_check_of_a_release_loads_nothing_of_the_publisher(tmp_path: Path) -> None:
    """Anatomy (the demo's kind) with the original, and the paper's non-GNF Table 2 whose
    posterior needs the dense estimate: no anonymizer, model, kind class or guarantee class."""
    table = random_table(np.random.default_rng(4), 300, {"a": 4, "b": 3, "s": 6})
    rel = versapub.publish(table, ["a, b -> s"], l=2, seed=1)
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    data = tmp_path / "data.csv"
    cols = {c: table.column(c).values[table.codes(c)] for c in table.names}
    data.write_text(
        ",".join(table.names)
        + "\n"
        + "".join(",".join(str(cols[c][i]) for c in table.names) + "\n" for i in range(300))
    )
    assert _loaded_by_check(out, data) == []
    assert _loaded_by_check(TABLE2) == []


def _compare(out: Path, rules: list[Rule], g: object) -> None:
    model = versapub.load_release(out)
    manifest = json.loads((out / "manifest.json").read_text())
    own = own_posterior(out, manifest, rules, g)  # type: ignore[arg-type]
    theirs = posterior_check(model, rules, g)  # type: ignore[arg-type]
    for r, t in zip(rules, theirs, strict=True):
        mine = own[r]
        assert "skipped" not in mine, mine
        if mine["method"] == t["method"]:
            assert mine["max_posterior"] == pytest.approx(t["max_posterior"], abs=1e-6), (str(r), mine, t)
        else:  # the model bounds by groups where the verifier computes the exact maximum
            assert (mine["method"], t["method"]) == ("exact", "group bound"), (r, mine, t)
            assert mine["max_posterior"] <= t["max_posterior"] + 1e-6, (str(r), mine, t)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_own_estimate_equals_the_model_on_msa_releases(tmp_path: Path, seed: int) -> None:
    """sa-groups with two sensitive attributes (the model's group bound under its fitted
    counts): the verifier's own flow, support and IPF give the same bound."""
    table = random_table(np.random.default_rng(seed), 240, {"a": 4, "b": 5, "s1": 8, "s2": 6}, skew=0.4)
    rules = ["a, b -> s1", "a, b -> s2"]
    rel = versapub.publish(
        table, rules, anonymizer="msa-decomposition", seed=3, columns=versapub.ColumnRoles(others="insensitive")
    )
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    _compare(out, [parse_rule(r) for r in rules], make_guarantee({"name": "l-diversity", "l": 2}))


def test_own_estimate_equals_the_model_on_the_non_gnf_table2() -> None:
    """The paper's Table 2 (three Anatomy tables, a sensitive attribute in two of them): the
    dense joint fitted by the verifier's IPF gives the model's exact maxima."""
    manifest = json.loads((TABLE2 / "manifest.json").read_text())
    rules = [Rule.from_json(r) for r in manifest["rules"]]
    _compare(TABLE2, rules, make_guarantee({"name": "l-diversity", "l": 2}))


def test_own_estimate_equals_the_model_with_a_suppressed_group(tmp_path: Path) -> None:
    """Multi-SA Anatomy of the running example: every record in the suppressed group (its
    sensitive values withheld): the dense estimate reads them uniform over the declared
    domains, as the model does."""
    from versapub import PublishConfig, workflow
    from versapub.datasets import data_path

    rules = ("age -> race", "age -> zipcode")
    cfg = PublishConfig(
        input=data_path("running_example.csv"),
        rules=rules,
        l=2,
        decomposition="multi-sa",
        roles=versapub.ColumnRoles(others="insensitive"),
    )
    workflow.run(cfg, tmp_path / "r")
    _compare(tmp_path / "r", [parse_rule(r) for r in rules], make_guarantee({"name": "l-diversity", "l": 2}))
