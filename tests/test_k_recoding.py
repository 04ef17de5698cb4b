"""``--k`` for the jobs that publish columns exactly (issue 47, first part): Anatomy's QIT,
the MSA decomposition's and plain sub-tables have their exactly published non-sensitive
columns generalized the same way in every table (global recoding: one level of a hierarchy
per column, given or built) until every cell holds k records; the manifest's ``recoded``
says which leaves each published value covers and the verifier recodes the original
itself.  Brute force over the recoding lattice on small tables; the default job end to end."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import versapub
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.privacy.screens.roles import ColumnRoles
from versapub.publishing.recoding import choose, hierarchy_for
from versapub.verify.check import run_check
from versapub.verify.files.release_check import verify_release

from .conftest import random_table, seal

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data.csv"


def _cells(table: EncodedTable, cols: list[str]) -> int:
    return int(pd.DataFrame({a: table.column(a).decode() for a in cols}).value_counts().min())


@pytest.mark.parametrize("seed", range(10))
def test_the_recoding_is_the_minimal_node_that_loses_least(seed: int) -> None:
    """Brute force over every node of the lattice: the chosen recoding brings every table's
    smallest cell to k, no node below it does, and no other such minimal node loses less
    (the mean normalized level); a table already at k leaves its columns alone."""
    rng = np.random.default_rng(seed)
    table = random_table(rng, int(rng.integers(40, 160)), {"a": 9, "b": 5, "c": 4, "s": 3}, skew=1.2)
    tables = [("T1", ["a", "b"]), ("T2", ["b", "c"])]
    k = int(rng.integers(2, 6))
    got = choose(table, tables, k, {}, frozenset({"s"}))
    need = [(n, c) for n, c in tables if _cells(table, c) < k]
    if not need:
        assert got is None
        return
    assert got is not None
    assert all(_cells(got.apply(table), c) >= k for _, c in tables)
    cols = sorted({a for _, c in need for a in c})
    hier = {a: hierarchy_for(table, a, {})[0] for a in cols}

    def meets(levels: tuple[int, ...]) -> bool:
        t = table
        for a, lv in zip(cols, levels, strict=True):
            t = t.replace(hier[a].generalize(t.column(a), lv))
        return all(_cells(t, c) >= k for _, c in need)

    def loss(levels: tuple[int, ...]) -> float:
        return sum(lv / (hier[a].height - 1) for a, lv in zip(cols, levels, strict=True))

    every = list(itertools.product(*(range(hier[a].height) for a in cols)))
    good = [v for v in every if meets(v)]
    minimal = [v for v in good if not any(u != v and all(x <= y for x, y in zip(u, v, strict=True)) for u in good)]
    chosen = tuple(got.levels.get(a, 0) for a in cols)
    assert chosen in minimal
    assert loss(chosen) == pytest.approx(min(loss(v) for v in minimal))


def test_a_table_the_roots_cannot_help_is_refused_naming_the_largest_k() -> None:
    """A cell of protected columns (kept exact) holds 2 records: k = 3 is refused, saying 2."""
    t = EncodedTable.from_columns({"q": ["x", "y", "z", "w"] * 3, "p": ["p1"] * 10 + ["p2"] * 2})
    with pytest.raises(InfeasibleError, match="largest k this table can meet is 2"):
        choose(t, [("T1", ["q", "p"])], 3, {}, frozenset({"p"}))
    assert choose(t, [("T1", ["q", "p"])], 3, {}, frozenset({"p"}), fallback=frozenset({"T1"})) is None
    # a budget too small: the refusal names the share that would do (floor(0.167 x 12) = 2)
    with pytest.raises(InfeasibleError, match=r"allow --suppression 0.167 or more \(at the roots 2 of 12 records"):
        choose(t, [("T1", ["q", "p"])], 3, {}, frozenset({"p"}), budget=1)
    assert choose(t, [("T1", ["q", "p"])], 3, {}, frozenset({"p"}), budget=2) is not None


def test_the_default_job_meets_k_5_and_check_k_5_passes(tmp_path: Path) -> None:
    """The hospital example's default job (Anatomy) with --k 5: the exactly published
    columns are recoded, the release is written, ``check --k 5`` passes on the files and
    against the original as read (the verifier recodes it), and the report says what was
    generalized."""
    table = versapub.read_table(DATA)
    roles = ColumnRoles(identifying=("patient_id",), insensitive=("race", "hours"))
    plain = versapub.publish(table, ["age, sex -> disease", "zip -> education"], l=2, columns=roles)
    assert min(int(v["k"]) for v in plain.identity.values()) < 5  # records alone without --k
    rel = versapub.publish(table, ["age, sex -> disease", "zip -> education"], l=2, columns=roles, k=5)
    assert rel.recoded and rel.n_records == table.n_rows
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv", k=5)
    m = json.loads((out / "manifest.json").read_text())
    assert set(m["recoded"]) == set(rel.recoded)
    for spec in m["recoded"].values():  # every leaf under exactly one published value
        leaves = [x for ls in spec["covers"].values() for x in ls]
        assert len(leaves) == len(set(leaves))
    rep = run_check(out, original=table.select(rel.attributes), k=5)
    assert rep.ok, rep.failures()
    found = [f for f in rep.verification.findings if f.check == "recoding"]
    assert found and found[0].ok and "input recoded likewise" in found[0].message
    assert "the k you asked for" in (out / "report.md").read_text()
    assert "k counted on every exactly published non-sensitive column (no --keys)" in (out / "report.md").read_text()
    original = versapub.inspect.original_table(out, DATA)
    assert not original.mismatch


def test_a_forged_recoding_fails(tmp_path: Path) -> None:
    """Two published values claiming the rest, or overlapping ranges, fail from the files
    alone; a recoding that does not describe the published values fails against the
    original."""
    table = versapub.read_table(DATA)
    roles = ColumnRoles(identifying=("patient_id",), insensitive=("race", "hours"))
    rel = versapub.publish(table, ["age, sex -> disease", "zip -> education"], l=2, columns=roles, k=5)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    m = json.loads((out / "manifest.json").read_text())
    a = next(iter(m["recoded"]))

    def forged(covers: dict) -> dict:
        twice = json.loads(json.dumps(m))
        twice["recoded"][a]["covers"] = covers
        (out / "manifest.json").write_text(json.dumps(twice))
        seal(out)
        return twice

    forged({"*": {"rest": True}, "extra": {"rest": True}})
    bad = [f for f in verify_release(out).failures if f.check == "recoding"]
    assert bad and "all claim the rest" in bad[0].message
    forged({"[1, 5]": {"from": "1", "to": "5"}, "[5, 9]": {"from": "5", "to": "9"}})
    bad = [f for f in verify_release(out).failures if f.check == "recoding"]
    assert bad and "overlapping ranges" in bad[0].message
    forged({"not what was published": {"rest": True}})
    assert not verify_release(out, original=table.select(rel.attributes)).ok


def test_the_manifest_names_no_value_the_recoding_hides(tmp_path: Path) -> None:
    """Generalized to their root, hours and race are written as the rest, none of their
    values listed; a built group of numbers as the bounds its label shows; text is never
    grouped alphabetically.  The verifier, ``as_published`` and the recoding itself map
    every value alike."""
    from versapub.publishing.recoding import Recoding, hierarchy_for
    from versapub.release.recoded import as_published
    from versapub.verify.treatments.recoding import recoded_original, recoding_problems

    table = versapub.read_table(DATA)
    roles = ColumnRoles(identifying=("patient_id",), insensitive=("race", "hours"))
    rel = versapub.publish(table, ["age, sex -> disease", "zip -> education"], l=2, columns=roles, k=5)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    text = (out / "manifest.json").read_text()
    recoded = json.loads(text)["recoded"]
    assert recoded["hours"]["covers"] == {"*": {"rest": True}}
    for value in table.column("hours").values:  # no hours value appears in the recoded block
        assert f'"{value}"' not in json.dumps(recoded)
    race, built = hierarchy_for(table, "race", {})
    assert built and race.height == 2  # text: its values, then *
    hours, _ = hierarchy_for(table, "hours", {})
    rec = Recoding({"hours": hours}, {"hours": 2}, frozenset({"hours"}))
    spec = rec.to_manifest()
    assert not recoding_problems(spec)
    covers = spec["hours"]["covers"]
    assert covers and all(set(c) == {"from", "to"} and f"[{c['from']}, {c['to']}]" == v for v, c in covers.items())
    want = rec.apply(table).column("hours").decode()
    verifier = recoded_original(table, {"recoded": spec})
    assert verifier is not None
    assert list(verifier.column("hours").decode()) == list(want)
    assert list(as_published(table, spec).column("hours").decode()) == list(want)


def test_msa_decomposition_meets_k(tmp_path: Path) -> None:
    """The MSA decomposition's tables publish their quasi-identifiers exactly too."""
    rng = np.random.default_rng(5)
    t = random_table(rng, 600, {"q1": 12, "q2": 9, "s1": 4, "s2": 4}, skew=0.8)
    rules = ["q1, q2 -> s1", "q1, q2 -> s2"]
    rel = versapub.publish(t, rules, anonymizer="msa-decomposition", seed=1, k=4)
    assert rel.recoded and min(int(v["k"]) for v in rel.identity.values()) >= 4
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv", k=4)
    assert run_check(out, original=t, k=4).ok


def test_without_k_the_release_says_what_k_3_and_k_5_would_cost(tmp_path: Path) -> None:
    """The preview (computed on the input while publishing): the share of records in cells
    below k is the one the published tables show, and the recoding it names for k = 5 is the
    one ``--k 5`` applies; the summary, the report and the manifest carry it."""
    table = versapub.read_table(DATA)
    roles = ColumnRoles(identifying=("patient_id",), insensitive=("race", "hours"))
    rules = ["age, sex -> disease", "zip -> education"]
    rel = versapub.publish(table, rules, l=2, columns=roles)
    assert rel.k_preview is not None and set(rel.k_preview["k"]) == {"3", "5"}
    t1 = next(p.table for p in rel.tables if p.table.kind == "anatomy")
    qit = pd.DataFrame({a: t1.parts["qit"].decoded(a) for a in ("age", "sex", "race", "education", "hours")})
    qit["n"] = t1.parts["qit"].counts
    cell = qit.groupby(["age", "sex", "race", "education", "hours"])["n"].sum()
    for k in (3, 5):
        assert rel.k_preview["k"][str(k)]["records_below"] == int(cell[cell < k].sum())
    with_k = versapub.publish(table, rules, l=2, columns=roles, k=5)
    assert with_k.k_preview is None
    assert set(rel.k_preview["k"]["5"]["recoded"]) == set(with_k.recoded or {})
    assert rel.k_preview["k"]["5"]["kl_recoded_columns"] > 0
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    assert json.loads((out / "manifest.json").read_text())["k_preview"] == rel.k_preview
    assert "Without --k:" in (out / "report.md").read_text() and "Without --k:" in (out / "report.html").read_text()


def test_the_preview_kl_by_hand() -> None:
    """a x 3, b x 1 recoded to *: p = (3/4, 1/4) against the spread (1/2, 1/2):
    KL = 3/4 ln(3/2) + 1/4 ln(1/2)."""
    from versapub.data.hierarchy import Hierarchy
    from versapub.publishing.preview import _kl
    from versapub.publishing.recoding import Recoding

    t = EncodedTable.from_columns({"x": ["a", "a", "a", "b"]})
    h = Hierarchy.from_rows("x", [["a", "*"], ["b", "*"]])
    got = _kl(t, Recoding({"x": h}, {"x": 1}))
    assert got == pytest.approx(0.75 * np.log(1.5) + 0.25 * np.log(0.5))


def _outlier_job() -> tuple[EncodedTable, list[str]]:
    """ARX's outlier case under Anatomy: a1 x 9, a2 x 9, a3 x 2 beside a sensitive s."""
    a = ["a1"] * 9 + ["a2"] * 9 + ["a3"] * 2
    s = [f"s{i % 4}" for i in range(20)]
    return EncodedTable.from_columns({"a": a, "s": s}), ["a -> s"]


def test_suppression_with_k_removes_the_outliers_instead_of_generalizing(tmp_path: Path) -> None:
    """--k 3 alone generalizes a (its two a3 records sit in a cell of 2); with --suppression
    0.25 (5 records) the two are removed, a stays exact, and the release verifies against
    the whole input; the manifest counts them, with no table (every table lost them)."""
    t, rules = _outlier_job()
    plain = versapub.publish(t, rules, l=2, k=3)
    assert plain.recoded and "a" in plain.recoded and plain.removed is None
    rel = versapub.publish(t, rules, l=2, k=3, suppression=0.25)
    assert rel.removed is not None and rel.removed.records == 2 and rel.removed.table is None
    assert not rel.recoded and rel.n_records == 18
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv", k=3)
    qit = pd.read_csv(out / "T1_qit.csv", dtype=str)
    assert sorted(qit["a"].unique()) == ["a1", "a2"]
    m = json.loads((out / "manifest.json").read_text())
    assert m["removed"]["records"] == 2 and m["removed"]["table"] is None and m["removed"]["budget"] == 5
    rep = run_check(out, original=t, k=3)
    assert rep.ok, rep.failures()
    assert any(f.check == "removal" and f.ok for f in rep.verification.findings)
    with pytest.raises(Exception, match="suppression"):
        versapub.publish(t, rules, l=2, k=3, suppression=1.5)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 6), share=st.sampled_from([0.0, 0.02, 0.1, 0.3]))
def test_the_floor_budget_is_never_exceeded(seed: int, k: int, share: float) -> None:
    """Over random tables: the records the floor removes are at most floor(share x n), and
    after the recoding and the removal every table's cells hold k records (pandas, not the
    search's own counting)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 150))
    table = random_table(rng, n, {"a": 8, "b": 5, "c": 3, "s": 3}, skew=1.4)
    tables = [("T1", ["a", "b"]), ("T2", ["b", "c"])]
    budget = int(share * n)
    try:
        got = choose(table, tables, k, {}, frozenset({"s"}), budget=budget)
    except InfeasibleError:
        return
    if got is None:
        assert all(_cells(table, c) >= k for _, c in tables)
        return
    gone = got.removed if got.removed is not None else np.zeros(0, dtype=np.int64)
    assert len(gone) <= budget
    kept = got.apply(table).take(np.setdiff1d(np.arange(n), gone))
    assert all(_cells(kept, c) >= k for _, c in tables)


@pytest.mark.parametrize("seed", range(8))
def test_the_descent_of_a_large_lattice_ends_at_a_minimal_node(seed: int) -> None:
    """Searched as a lattice too large to search whole: the node found meets the floor and
    no node one level lower in any column does (so, by monotony, none below it does)."""
    rng = np.random.default_rng(100 + seed)
    table = random_table(rng, int(rng.integers(40, 160)), {"a": 9, "b": 5, "c": 4, "s": 3}, skew=1.2)
    tables = [("T1", ["a", "b"]), ("T2", ["b", "c"])]
    k = int(rng.integers(2, 6))
    got = choose(table, tables, k, {}, frozenset({"s"}), lattice_max=0)
    if got is None:
        return
    assert all(_cells(got.apply(table), c) >= k for _, c in tables)
    cols = sorted({a for _, c in tables for a in c})
    hier = {a: hierarchy_for(table, a, {})[0] for a in cols}
    levels = {a: got.levels.get(a, 0) for a in cols}
    for a in [a for a in cols if levels[a]]:
        t = table
        for b in cols:
            t = t.replace(hier[b].generalize(t.column(b), levels[b] - (b == a)))
        assert any(_cells(t, c) < k for _, c in tables), a
