"""Embedded data: running example, Adult at Table 5a's domains, texas_like."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

import versapub
from versapub.datasets import (
    TEXAS_LIKE_DOMAINS,
    TEXAS_LIKE_RULES,
    adult,
    running_example,
    texas_like,
    texas_like_parts,
    write_texas_like_parquet,
)
from versapub.privacy import LDiversity, parse_rules
from versapub.privacy.feasibility import feasibility


def test_running_example_is_table1() -> None:
    t = running_example()
    assert t.names == ("hospital", "age", "gender", "zipcode", "race", "ICD-9-CM")
    assert t.to_pydict()["zipcode"] == ["71000", "72000", "73000", "74000", "71000", "72000"]


def test_adult_has_table5a_domains() -> None:
    t = adult()
    assert t.n_rows == 30162
    sizes = {n: t.cardinality(n) for n in t.names}
    assert sizes == {
        "age": 6,
        "native-country": 2,
        "education": 7,
        "marital-status": 7,
        "occupation": 3,
        "salary-class": 2,
        "sex": 2,
    }
    assert set(t.column("native-country").values) == {"US", "non_US"}


def test_texas_like_shape_and_dependencies() -> None:
    t = texas_like(20_000, seed=5)
    assert t.names == tuple(TEXAS_LIKE_DOMAINS)
    for name, card in TEXAS_LIKE_DOMAINS.items():
        assert 1 < t.cardinality(name) <= card
    # every zip code lies in exactly one county (functional dependency zip -> county)
    pairs = np.unique(np.stack([t.codes("pat_zip"), t.codes("county")]), axis=1)
    assert len(np.unique(pairs[0])) == pairs.shape[1]
    # drg nested in mdc
    pairs = np.unique(np.stack([t.codes("hcfa_drg"), t.codes("hcfa_mdc")]), axis=1)
    assert len(np.unique(pairs[0])) == pairs.shape[1]
    # deterministic for a seed
    assert np.array_equal(texas_like(1000, seed=1).codes("surgeon"), texas_like(1000, seed=1).codes("surgeon"))


def test_texas_like_parts_share_one_population(tmp_path: Path) -> None:
    """The streamed generator (scale-out benchmark): parts of the asked sizes whose union
    keeps the nesting (zip -> county, drg -> mdc, surgeon -> hospital) across parts, with
    different records per part; written as a Parquet dataset, one file per part."""
    parts = list(texas_like_parts(25_000, 10_000, seed=3))
    assert [len(p["county"]) for p in parts] == [10_000, 10_000, 5_000]
    whole = {name: np.concatenate([p[name] for p in parts]) for name in TEXAS_LIKE_DOMAINS}
    for child, parent in (("pat_zip", "county"), ("hcfa_drg", "hcfa_mdc"), ("surgeon", "thcic")):
        pairs = np.unique(np.stack([whole[child], whole[parent]]), axis=1)
        assert len(np.unique(pairs[0])) == pairs.shape[1], child
    assert not np.array_equal(parts[0]["county"][:5_000], parts[2]["county"])
    out = write_texas_like_parquet(tmp_path / "ds", 25_000, part_rows=10_000, seed=3)
    files = sorted(out.glob("*.parquet"))
    assert [pq.ParquetFile(f).metadata.num_rows for f in files] == [10_000, 10_000, 5_000]
    assert pq.read_table(files[0]).column_names == list(TEXAS_LIKE_DOMAINS)


def test_texas_like_rules_are_feasible_at_l10_and_publish() -> None:
    t = texas_like(20_000, seed=0)
    assert all(f.feasible for f in feasibility(t, parse_rules(TEXAS_LIKE_RULES), LDiversity(10)))
    # the hospital (thcic) locates the county and the ZIP code it serves: allowed, as in
    # benchmarks/whole.py (the set screen refuses it otherwise: tests/test_proxy_sets.py)
    roles = versapub.ColumnRoles(others="insensitive", allow_proxy=("thcic",))
    rel = versapub.publish(t, TEXAS_LIKE_RULES, l=10, seed=0, columns=roles)
    assert rel.gnf.ok
    assert sum(len(p.attributes) for p in rel.tables) == 18
