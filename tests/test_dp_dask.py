"""Differential privacy on the Dask backend (issue 67, item 5): a file too large for memory
is measured from its distinct combinations counted on the cluster; every marginal is the
same count as over the records (a brute-force oracle over random tables), the release is
checked from its files and then, with the input in memory, against its exact counts; a
file whose combinations would not fit is refused in one paragraph, nothing written."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from versapub.cli.main import cli
from versapub.data.table import CountedTable, EncodedTable
from versapub.mechanisms.measure import exact_counts

pytest.importorskip("opendp")


def _counted(t: EncodedTable) -> CountedTable:
    """The table's distinct records with their counts, by ``numpy.unique`` over the rows."""
    rows = np.column_stack([t.codes(a) for a in t.names])
    distinct, counts = np.unique(rows, axis=0, return_counts=True)
    cols = tuple(
        type(t.column(a))(a, distinct[:, i].astype(np.int32).copy(), t.column(a).values) for i, a in enumerate(t.names)
    )
    return CountedTable(cols, weights=counts.astype(np.int64))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("xyz"), st.sampled_from(["0", "1"])), min_size=1, max_size=60
    )
)
def test_every_marginal_of_the_counted_table_is_the_records_count(rows: list[tuple[str, str, str]]) -> None:
    """Over random tables: every one-, two- and three-way marginal of the distinct records
    weighed by their counts equals the records' own count, cell by cell, over declared
    domains wider than the data (a value no record holds counts 0)."""
    t = EncodedTable.from_columns({"p": [r[0] for r in rows], "q": [r[1] for r in rows], "s": [r[2] for r in rows]})
    c = _counted(t)
    assert c.n_records == len(rows) and c.n_rows <= len(rows)
    domains = {"p": ["a", "b", "c", "d"], "q": ["x", "y", "z"], "s": ["0", "1"]}
    for k in (1, 2, 3):
        for attrs in itertools.combinations(t.names, k):
            got = exact_counts(c, attrs, domains)
            brute = np.zeros([len(domains[a]) for a in attrs], dtype=np.int64)
            for r in rows:
                values = dict(zip(("p", "q", "s"), r, strict=True))
                brute[tuple(domains[a].index(values[a]) for a in attrs)] += 1
            assert got.tolist() == brute.ravel().tolist()


def test_a_counted_table_needs_a_positive_count_per_row() -> None:
    t = EncodedTable.from_columns({"a": ["x", "y"]})
    with pytest.raises(Exception, match="one positive count per row"):
        CountedTable(t.columns, weights=np.array([1, 0]))
    with pytest.raises(Exception, match="one positive count per row"):
        CountedTable(t.columns, weights=np.array([1]))


def _job(tmp_path: Path) -> list[str]:
    rng = np.random.default_rng(7)
    n = 4_000
    age = rng.integers(20, 60, n)
    sex = rng.choice(["F", "M"], n)
    disease = np.where(rng.random(n) < 0.3, "flu", np.where(age > 45, "diabetes", "asthma"))
    ident = np.arange(n)
    lines = ["id,age,sex,disease", *(f"{i},{a},{s},{d}" for i, a, s, d in zip(ident, age, sex, disease, strict=True))]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "disease.txt").write_text("asthma\ndiabetes\nflu\ncancer\n")
    (tmp_path / "sex.txt").write_text("F\nM\n")
    return [
        "publish",
        "--input",
        str(tmp_path / "t.csv"),
        "--identifying",
        "id",
        "--mechanism",
        "dp:epsilon=2,delta=1e-9,select=mst",
        "--domain",
        "age=18..70",
        "--domain",
        f"sex={tmp_path / 'sex.txt'}",
        "--domain",
        f"disease={tmp_path / 'disease.txt'}",
    ]


def test_a_dp_release_measured_on_the_dask_backend(tmp_path: Path) -> None:
    """``--mechanism dp:... --backend dask`` on a LocalCluster: published, the manifest says
    the records were counted on the cluster and what the check read; ``check`` from the files
    passes, and ``check --original`` then tests each noisy table's deviations from the input's
    exact counts against the ledger's scale: the counts measured from the distinct
    combinations are the records' own (a wrong count would fail that test)."""
    job = _job(tmp_path)
    out = tmp_path / "rel"
    r = CliRunner().invoke(
        cli, [*job, "--backend", "dask", "--workers", "1", "--worker-memory", "1GiB", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert m["backend"]["name"] == "dask" and m["backend"]["workers"] == 1
    assert "counted on the cluster" in m["backend"]["measured_on"] and "--original" in m["backend"]["checked"]
    assert m["input"]["removed_identifying"] == ["id"] and "id" not in m["attributes"]
    assert CliRunner().invoke(cli, ["check", str(out)]).exit_code in (0, 6)
    checked = CliRunner().invoke(cli, ["check", str(out), "--original", str(tmp_path / "t.csv"), "--json"])
    assert checked.exit_code in (0, 6), checked.output
    findings = json.loads(checked.output)["verification"]["findings"]
    noise = [f for f in findings if f["check"] == "dp noise" and f["file"]]  # per table, then pooled
    assert len(noise) == sum(1 for t in m["tables"] if t["kind"] == "noisy") > 0
    assert all(f["ok"] for f in findings), [f for f in findings if not f["ok"]]
    assert not list(tmp_path.glob(".rel.versapub-scratch-*"))


def test_too_many_distinct_combinations_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The distinct combinations come into this process: above the bound, one paragraph that
    names the way out, nothing written, no scratch left behind."""
    import versapub.publishing.dp_dask as dp_dask

    monkeypatch.setattr(dp_dask, "MAX_DISTINCT", 5)
    out = tmp_path / "rel"
    r = CliRunner().invoke(cli, [*_job(tmp_path), "--backend", "dask", "--workers", "1", "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "distinct combinations, more than the 5" in r.output and "identifying" in r.output
    assert "Traceback" not in r.output and not out.exists()
    assert not list(tmp_path.glob(".rel.versapub-scratch-*"))
