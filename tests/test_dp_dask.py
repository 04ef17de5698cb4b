"""Differential privacy on the Dask backend (issue 67, item 5): a file too large for memory
is measured from the marginals the mechanism declares it reads, counted on the cluster in
one pass; every marginal is the same count as over the records (a brute-force oracle over
random tables, in any attribute order and over compressed domains), every mechanism reads
only what it declared, the release is checked from its files and then, with the input in
memory, against its exact counts; a value outside its declared domain and domains too wide
are refused in one paragraph, nothing written."""

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
from versapub.data.table import EncodedTable
from versapub.mechanisms.measure import exact_counts
from versapub.mechanisms.precounted import Precounted

pytest.importorskip("opendp")


def _precounted(t: EncodedTable, domains: dict[str, list[str]]) -> Precounted:
    """Every one-, two- and three-way marginal of ``t``, counted record by record in Python."""
    counts = {}
    for k in (1, 2, 3):
        for attrs in itertools.combinations(t.names, k):
            brute = np.zeros([len(domains[a]) for a in attrs], dtype=np.int64)
            for row in zip(*(t.column(a).decode() for a in attrs), strict=True):
                brute[tuple(domains[a].index(v) for a, v in zip(attrs, row, strict=True))] += 1
            counts[attrs] = brute.ravel()
    return Precounted(t.names, {a: tuple(v) for a, v in domains.items()}, counts)


ROWS = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from("xyz"), st.sampled_from(["0", "1"])), min_size=1, max_size=60
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(ROWS, st.permutations(["p", "q", "s"]), st.lists(st.integers(0, 1), min_size=4, max_size=4))
def test_every_marginal_read_from_the_counts_is_the_records_count(
    rows: list[tuple[str, str, str]], order: list[str], merge: list[int]
) -> None:
    """Over random tables: a marginal read from counts made elsewhere equals the records' own
    count (:func:`exact_counts` on the table), in any order of its attributes and over a
    compressed domain (a random merge of ``p``'s declared values, as MST's ``recode``),
    over declared domains wider than the data (a value no record holds counts 0)."""
    t = EncodedTable.from_columns({"p": [r[0] for r in rows], "q": [r[1] for r in rows], "s": [r[2] for r in rows]})
    domains = {"p": ["a", "b", "c", "d"], "q": ["x", "y", "z"], "s": ["0", "1"]}
    pre = _precounted(t, domains)
    recode = {"p": np.cumsum([0, *merge[:3]]).astype(np.int64)}
    for k in (1, 2, 3):
        for attrs in itertools.combinations(order, k):
            assert exact_counts(pre, attrs, domains).tolist() == exact_counts(t, attrs, domains).tolist()
            assert (
                exact_counts(pre, attrs, domains, recode).tolist() == exact_counts(t, attrs, domains, recode).tolist()
            )


@pytest.mark.parametrize("select", ["mst", "aim", "rules", "given"])
def test_each_mechanism_reads_only_the_marginals_it_declares(select: str) -> None:
    """``marginals_read`` is what ``run`` reads: run on counts holding exactly the declared
    marginals (no others), each mechanism measures and fits without asking for another."""
    from versapub.mechanisms import make_mechanism

    rng = np.random.default_rng(0)
    n = 300
    data = {"p": rng.choice(list("abc"), n), "q": rng.choice(list("xyz"), n), "s": rng.choice(["0", "1"], n)}
    t = EncodedTable.from_columns({a: [str(v) for v in vs] for a, vs in data.items()})
    domains = {"p": ["a", "b", "c", "d"], "q": ["x", "y", "z"], "s": ["0", "1"]}
    params: dict[str, object] = {"epsilon": 1.0, "select": select, "iterations": 50}
    params |= {"marginals": "p+q;s"} if select == "given" else {"rounds": 8} if select == "aim" else {}
    mech = make_mechanism("dp", **params)
    rules = [(("p", "q"), "s")] if select == "rules" else []
    declared = mech.marginals_read(list(t.names), domains, rules)
    full = _precounted(t, domains)
    only = Precounted(full.names, full.domains, {m: full.counts[m] for m in declared})
    synth = mech.run(only, domains, rules)
    assert synth.ledger.spent_rho <= synth.ledger.rho * (1 + 1e-9) and synth.measured


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
    assert (
        "counted on the cluster in one pass" in m["backend"]["measured_on"] and "--original" in m["backend"]["checked"]
    )
    assert m["input"]["removed_identifying"] == ["id"] and "id" not in m["attributes"]
    assert CliRunner().invoke(cli, ["check", str(out)]).exit_code in (0, 6)
    checked = CliRunner().invoke(cli, ["check", str(out), "--original", str(tmp_path / "t.csv"), "--json"])
    assert checked.exit_code in (0, 6), checked.output
    findings = json.loads(checked.output)["verification"]["findings"]
    noise = [f for f in findings if f["check"] == "dp noise" and f["file"]]  # per table, then pooled
    assert len(noise) == sum(1 for t in m["tables"] if t["kind"] == "noisy") > 0
    assert all(f["ok"] for f in findings), [f for f in findings if not f["ok"]]
    assert not list(tmp_path.glob(".rel.versapub-scratch-*"))


def test_a_value_outside_its_declared_domain_and_too_wide_domains_are_refused(tmp_path: Path) -> None:
    """On the cluster as in memory: a value no declared domain lists is refused naming it,
    and domains whose marginals would hold too many cells are refused before any counting;
    one paragraph each, nothing written, no scratch left behind."""
    job = _job(tmp_path)
    (tmp_path / "disease.txt").write_text("asthma\ndiabetes\n")  # flu is missing
    out = tmp_path / "rel"
    r = CliRunner().invoke(cli, [*job, "--backend", "dask", "--workers", "1", "--out", str(out)])
    assert r.exit_code == 2 and "Column 'disease' holds 'flu', which its declared domain does not list" in r.output
    assert "Traceback" not in r.output and not out.exists()
    (tmp_path / "disease.txt").write_text("\n".join(["asthma", "diabetes", "flu", *map(str, range(10**6))]) + "\n")
    (tmp_path / "sex.txt").write_text("\n".join(["F", "M", *map(str, range(100))]) + "\n")
    r = CliRunner().invoke(
        cli, [*job, "--domain", "age=0..1000", "--backend", "dask", "--workers", "1", "--out", str(out)]
    )
    assert r.exit_code == 2 and "cells in all (at most" in r.output, r.output
    assert not out.exists() and not list(tmp_path.glob(".rel.versapub-scratch-*"))
