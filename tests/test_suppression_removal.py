"""Suppression as ARX does it (issue 47, item 2): the records of classes that fail the
requirement are removed — in no table — up to ``floor(suppression x n)`` of them; the rest
meet the guarantee; the manifest and the report count them by reason; the verifier checks
the count against the budget from the files alone and, with the original, that the removed
records lie in no published class.  The class alternative is ``tests/test_suppression.py``."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import versapub
from versapub.anonymizers import make_anonymizer
from versapub.anonymizers.base import PublishRequest
from versapub.api import require_out_of_core
from versapub.data.table import EncodedTable
from versapub.decompositions import make_decomposition
from versapub.errors import ConfigError, InputError
from versapub.privacy.guarantees.guarantee import make_guarantee
from versapub.privacy.screens.roles import ColumnRoles
from versapub.verify.files.release_check import verify_release

from .conftest import random_table, seal

K3 = {"name": "k-anonymity", "k": 3}


def _outliers() -> EncodedTable:
    """ARX's outlier case: a1 x 9, a2 x 9, a3 x 2."""
    return EncodedTable.from_columns({"a": ["a1"] * 9 + ["a2"] * 9 + ["a3"] * 2, "b": [f"x{i % 3}" for i in range(20)]})


@pytest.mark.parametrize("anonymizer", ["incognito", "mondrian"])
def test_the_arx_outlier_case_removes_the_two(tmp_path: Path, anonymizer: str) -> None:
    """k = 3, suppression 0.25 (5 records): a1 and a2 published exactly, the two a3 records
    removed (in no table), counted in the manifest by reason; the release verifies against
    the whole input, the removed records in no published class."""
    t = _outliers()
    roles = ColumnRoles(quasi_identifying=("a",), insensitive=("b",))
    rel = versapub.publish(
        t, [], guarantee=K3, columns=roles, anonymizer=anonymizer, anonymizer_params={"suppression": 0.25}
    )
    assert rel.n_records == 18 and rel.removed is not None and rel.removed.records == 2
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    data = pd.read_csv(out / "T1.csv", dtype=str)
    assert sorted(data["a"].unique()) == ["a1", "a2"] and data["count"].astype(int).sum() == 18
    m = json.loads((out / "manifest.json").read_text())
    assert m["n_records"] == 18
    assert m["removed"] == {
        "records": 2,
        "by_reason": {"in a class failing k-anonymity (k = 3)": 2},
        "suppression": 0.25,
        "budget": 5,
        "table": "T1",
        "input_records": 20,
    }
    rep = verify_release(out, original=t)
    assert rep.ok, rep.explain()
    said = {f.message for f in rep.findings if f.check == "removal"}
    assert any("2 record(s) removed by suppression (at most floor(0.25 x 20) = 5)" in s for s in said)
    assert any("lie in no published class" in s for s in said)
    assert "Suppression removed 2 of 20 input records" in (out / "report.md").read_text()


def test_the_class_alternative_publishes_everything_at_the_root() -> None:
    """``suppression_mode=class``: the two outliers together fail k = 3, so nothing is
    suppressed and a is generalized to its root for all 20 records (today's behaviour)."""
    t = _outliers()
    out = make_anonymizer("incognito", suppression=0.25, suppression_mode="class").publish(
        PublishRequest.of(t.select(["a"]), [], make_guarantee(K3), np.random.default_rng(0))
    )
    assert out.removed is None and list(out.parts["data"].decoded("a")) == ["*"]


def _flat_classes(table: EncodedTable, qi: list[str], node: dict[str, int]) -> list[tuple[str, ...]]:
    """Each record's class at a node of two-level hierarchies (level 0: the value, 1: *)."""
    cols = [table.column(a).decode() if node[a] == 0 else np.full(table.n_rows, "*", dtype=object) for a in qi]
    return list(zip(*cols, strict=True))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(20, 200),
    k=st.integers(2, 6),
    share=st.sampled_from([0.02, 0.05, 0.1, 0.3]),
    anonymizer=st.sampled_from(["incognito", "mondrian"]),
)
def test_the_budget_is_never_exceeded_and_the_rest_meets_k(
    seed: int, n: int, k: int, share: float, anonymizer: str
) -> None:
    """Over random skewed tables: at most floor(share x n) records removed, every published
    class holds k records, published + removed = n; for Incognito (brute force at the node
    it chose) the removed records are exactly those whose class holds fewer than k."""
    table = random_table(np.random.default_rng(seed), n, {"q1": 6, "q2": 4}, skew=1.5)
    anon = make_anonymizer(anonymizer, suppression=share)
    out = anon.publish(
        PublishRequest.of(table, [], make_guarantee({"name": "k-anonymity", "k": k}), np.random.default_rng(0))
    )
    gone = np.asarray(out.removed if out.removed is not None else [], dtype=np.int64)
    ct = out.parts["data"]
    assert len(gone) <= math.floor(share * n) and int(ct.counts.sum()) + len(gone) == n
    sizes = Counter()
    for row, c in zip(zip(*(ct.decoded(a) for a in ct.names), strict=True), ct.counts, strict=True):
        sizes[row] += int(c)
    assert min(sizes.values()) >= k
    if anonymizer == "incognito":
        classes = _flat_classes(table, ["q1", "q2"], out.stats["node"])
        size = Counter(classes)
        small = {i for i, c in enumerate(classes) if size[c] < k}
        assert set(gone.tolist()) == small


def test_the_verifier_counts_removed_records_from_the_files(tmp_path: Path) -> None:
    """A budget, a count or a table that disagree fail the check without the original; with
    it, records missing from a published class fail too (digests re-sealed)."""
    t = _outliers()
    roles = ColumnRoles(quasi_identifying=("a",), insensitive=("b",))
    rel = versapub.publish(
        t, [], guarantee=K3, columns=roles, anonymizer="incognito", anonymizer_params={"suppression": 0.25}
    )
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    m = json.loads((out / "manifest.json").read_text())

    def failures(manifest: dict, original: EncodedTable | None = None) -> list[str]:
        (out / "manifest.json").write_text(json.dumps(manifest))
        seal(out)
        return [f.message for f in verify_release(out, original=original).failures if f.check == "removal"]

    assert any("more than the budget 1" in s for s in failures({**m, "removed": {**m["removed"], "budget": 1}}))
    assert any("not floor(0.25 x 20)" in s for s in failures({**m, "removed": {**m["removed"], "budget": 6}}))
    fewer = {**m["removed"], "input_records": 19}
    assert any("not n_records + records" in s for s in failures({**m, "removed": fewer}))
    hidden = {k: v for k, v in m.items() if k != "removed"}
    assert any("no removed" in s for s in failures(hidden))
    # three a1 records taken out of a published class and claimed removed: the original shows it
    rows = (out / "T1.csv").read_text().splitlines()
    (out / "T1.csv").write_text("\n".join(r for r in rows if not r.startswith('"a1","x0"')) + "\n")
    more = {**m["removed"], "records": 5, "by_reason": {"x": 5}}
    forged = {**m, "n_records": 15, "removed": more}
    forged["tables"] = [{**m["tables"][0], "stats": {**m["tables"][0]["stats"], "removed_records": 5}}]
    assert not failures(forged)  # consistent numbers: the files alone cannot tell
    assert any("records were removed from classes that are published" in s for s in failures(forged, t))


def test_other_plain_tables_lose_the_removed_records_too(tmp_path: Path) -> None:
    """The classic job with --detach-others: the plain table of the other columns is
    published again from the records kept (a removed record is in no table)."""
    t = _outliers()
    roles = ColumnRoles(quasi_identifying=("a",), insensitive=("b",))
    rel = versapub.publish(
        t, [], guarantee=K3, columns=roles, anonymizer="mondrian", anonymizer_params={"suppression": 0.25},
        detach_others=True,
    )  # fmt: skip
    assert [int(p.table.parts["data"].counts.sum()) for p in rel.tables] == [18, 18]
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    assert verify_release(out, original=t).ok


def test_removal_with_another_anonymized_table_is_refused() -> None:
    """Two tables anonymized on every record: records removed from one cannot be in no
    table; the refusal says what to do instead."""
    rng = np.random.default_rng(4)
    t = random_table(rng, 300, {"q1": 8, "q2": 6, "s1": 4, "s2": 4}, skew=1.5)
    with pytest.raises(InputError, match="suppression_mode=class"):
        versapub.publish(
            t, ["q1 -> s1", "q2 -> s2"], guarantee={"name": "distinct-l-diversity", "l": 2},
            decomposition="gd", anonymizer="mondrian", anonymizer_params={"suppression": 0.3},
        )  # fmt: skip


def test_dask_refuses_removal_and_takes_the_class_alternative() -> None:
    anon = make_anonymizer("incognito", suppression=0.05)
    with pytest.raises(ConfigError, match="suppression_mode = class"):
        require_out_of_core(make_decomposition("uad"), anon, [], ColumnRoles(quasi_identifying=("q1",)), anon)
    require_out_of_core(
        make_decomposition("uad"),
        make_anonymizer("incognito", suppression=0.05, suppression_mode="class"),
        [],
        ColumnRoles(quasi_identifying=("q1",)),
        "incognito",
    )


@pytest.mark.parametrize("anonymizer", ["sequential-sweep", "one-d-l-diversity"])
def test_anonymizers_with_overlapping_classes_decline_suppression_and_say_why(anonymizer: str) -> None:
    """A removed record would still lie in a published class: the refusal says so and names
    the anonymizers that take it (docs/choices.md item 197)."""
    with pytest.raises(ConfigError, match=r"overlap.*mondrian or incognito with suppression=S"):
        make_anonymizer(anonymizer, suppression=0.1)
