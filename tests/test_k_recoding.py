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

import versapub
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError
from versapub.privacy.screens.roles import ColumnRoles
from versapub.publishing.recoding import choose, hierarchy_for
from versapub.verify.check import run_check
from versapub.verify.release_check import verify_release

from .conftest import random_table, seal

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data.csv"


def _cells(table: EncodedTable, cols: list[str]) -> int:
    return int(pd.DataFrame({a: table.column(a).decode() for a in cols}).value_counts().min())


@pytest.mark.parametrize("seed", range(10))
def test_the_recoding_meets_the_floor_at_the_lowest_total_level(seed: int) -> None:
    """Brute force over every node of the lattice: the chosen recoding brings every table's
    smallest cell to k, and no node of a smaller total level does; a table already at k
    leaves its columns alone."""
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
    out = got.apply(table)
    assert all(_cells(out, c) >= k for _, c in tables)
    cols = sorted({a for _, c in need for a in c})
    hier = {a: hierarchy_for(table, a, {})[0] for a in cols}
    best = sum(got.levels.values())
    for levels in itertools.product(*(range(hier[a].height) for a in cols)):
        if sum(levels) >= best:
            continue
        t = table
        for a, lv in zip(cols, levels, strict=True):
            t = t.replace(hier[a].generalize(t.column(a), lv))
        assert any(_cells(t, c) < k for _, c in need), levels


def test_a_table_the_roots_cannot_help_is_refused_naming_the_largest_k() -> None:
    """A cell of protected columns (kept exact) holds 2 records: k = 3 is refused, saying 2."""
    t = EncodedTable.from_columns({"q": ["x", "y", "z", "w"] * 3, "p": ["p1"] * 10 + ["p2"] * 2})
    with pytest.raises(InfeasibleError, match="largest k this table can meet is 2"):
        choose(t, [("T1", ["q", "p"])], 3, {}, frozenset({"p"}))
    assert choose(t, [("T1", ["q", "p"])], 3, {}, frozenset({"p"}), fallback=frozenset({"T1"})) is None


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
    assert "every cell of exactly published values holds the k you asked for" in (out / "report.md").read_text()
    original = versapub.inspect.original_table(out, DATA)
    assert not original.mismatch


def test_a_forged_recoding_fails(tmp_path: Path) -> None:
    """A leaf under two published values fails from the files alone; a recoding that does
    not describe the published values fails against the original."""
    table = versapub.read_table(DATA)
    roles = ColumnRoles(identifying=("patient_id",), insensitive=("race", "hours"))
    rel = versapub.publish(table, ["age, sex -> disease", "zip -> education"], l=2, columns=roles, k=5)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    m = json.loads((out / "manifest.json").read_text())
    a = next(iter(m["recoded"]))
    values = list(m["recoded"][a]["covers"])
    twice = json.loads(json.dumps(m))
    first = twice["recoded"][a]["covers"][values[0]]
    twice["recoded"][a]["covers"]["extra"] = first[:1]
    (out / "manifest.json").write_text(json.dumps(twice))
    seal(out)
    bad = [f for f in verify_release(out).failures if f.check == "recoding"]
    assert bad and "covered by both" in bad[0].message
    lying = json.loads(json.dumps(m))
    every = sorted(x for ls in m["recoded"][a]["covers"].values() for x in ls)
    lying["recoded"][a]["covers"] = {"not what was published": every}
    (out / "manifest.json").write_text(json.dumps(lying))
    seal(out)
    assert not verify_release(out, original=table.select(rel.attributes)).ok


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
