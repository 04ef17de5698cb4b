"""The HTML report from its templates: every value a release holds is escaped (a column name
or value that looks like markup is shown as text), the glossary comes from the plug-ins."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import versapub
from versapub.reports.templating import TERMS, glossary


def test_markup_in_names_and_values_is_shown_as_text(tmp_path: Path) -> None:
    values = ["<b>a</b>", "x&y", "<script>alert(1)</script>", "plain"]
    rng = np.random.default_rng(3)
    n = 200
    table = {
        "age<i>": [str(v) for v in rng.integers(20, 24, n)],
        "sex": [str(v) for v in rng.choice(["F", "M"], n)],
        "disease": [values[v] for v in rng.integers(0, 4, n)],
    }
    rel = versapub.publish(table, ["age<i>, sex -> disease"], l=2, seed=1)
    versapub.write_release(versapub.workflow.with_utility(rel), tmp_path / "r")
    page = (tmp_path / "r" / "report.html").read_text()
    assert "<script>" not in page and "<b>a</b>" not in page and "age<i>" not in page
    assert "age&lt;i&gt;" in page
    assert page.count("<section") == page.count("</section>") >= 6
    assert re.search(r"<h1>Release report <span class=\"badge (pass|attn)\">", page)


def test_the_glossary_holds_every_plugin_description() -> None:
    from versapub.anonymizers import ANONYMIZERS
    from versapub.kinds import KINDS
    from versapub.privacy.guarantees.guarantee import GUARANTEES

    words = glossary()
    assert set(TERMS) <= set(words)
    assert set(KINDS) | set(GUARANTEES) | set(ANONYMIZERS) <= set(words)
    assert "LeFevre" in words["mondrian"] and "Sweeney" in words["k-anonymity"] and "QIT" in words["anatomy"]


def test_suppressed_records_and_a_job_without_rules_are_explained(tmp_path: Path) -> None:
    from versapub.reports.html import _utility

    util = {
        "kl_infinite": False,
        "kl_divergence": 0.5,
        "exp_minus_kl": 0.6,
        "relative_error": {"n_queries": 10, "mean": 0.1, "median": 0.1},
        "workload": {"qd": 1, "p": 0.4},
        "metrics": {"T1": {"suppressed_records": 12}},
        "marginal_error": {"age": 0.01},
    }
    u = _utility(util)
    assert u is not None and u["suppressed"] == ["T1 suppressed 12 record(s)"]
    table = {"age": [str(20 + i % 5) for i in range(100)], "sex": ["F", "M"] * 50}
    rel = versapub.publish(
        table,
        [],
        guarantee={"name": "k-anonymity", "k": 5},
        columns=versapub.ColumnRoles(quasi_identifying=("age", "sex")),
    )
    versapub.write_release(rel, tmp_path / "k")
    page = (tmp_path / "k" / "report.html").read_text()
    assert "No rules: this job protects identities only" in page and "Enforced forms" not in page
