"""Identity protection a steward can ask for (issue 47, first part): ``--k`` and ``--max-risk``
as a floor on published cells that Mondrian and Incognito meet while they generalize —
brute-force oracles on small tables (no release violates the floor, no feasible cut or
lattice node is refused), the floor's arithmetic, and the command line end to end."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import versapub
from versapub.anonymizers.base import PublishRequest
from versapub.anonymizers.generalizing.floor import cells_ok, floored, largest_k
from versapub.anonymizers.generalizing.generalize import dimensions
from versapub.anonymizers.generalizing.incognito import Incognito
from versapub.anonymizers.generalizing.mondrian_cuts import partition, segment_starts
from versapub.cli.main import cli
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import InfeasibleError, InputError
from versapub.privacy.guarantees.context import bind
from versapub.privacy.guarantees.guarantee import make_guarantee
from versapub.privacy.rules import Rule
from versapub.publishing.steps import cell_floor

from .test_generalization import AGE_HIERARCHY_ROWS, ZIP_HIERARCHY, _table

ROOT = Path(__file__).resolve().parents[1]
DISCHARGES = ROOT / "examples" / "discharges.csv"


def _satisfies(g: object, s: np.ndarray, card: int) -> bool:
    from versapub.privacy.guarantees.base import Histograms

    counts = np.bincount(s, minlength=card)
    v = np.flatnonzero(counts)
    h = Histograms(np.zeros(len(v), np.int64), counts[v].astype(np.int64), 1, v.astype(np.int64))
    return bool(g.groups_satisfied(h).all())  # type: ignore[attr-defined]


def _cut(values: np.ndarray) -> np.ndarray | None:
    """Mondrian's cut of one ordered dimension, written from its rule: left of the lower
    median, or strictly below it when nothing is above (None: one value, no cut)."""
    if len(np.unique(values)) < 2:
        return None
    med = np.sort(values)[(len(values) - 1) // 2]
    left = values <= med
    return values < med if left.all() else left


@pytest.mark.parametrize("seed", range(12))
def test_mondrian_meets_the_floor_and_refuses_no_feasible_cut(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 90))
    a, b = rng.integers(0, 12, n), rng.integers(0, 8, n)
    s = rng.integers(0, 4, n)
    kept = rng.integers(0, 2, n) if seed % 2 else np.zeros(n, dtype=np.int64)  # kept columns' cells, or none
    table = EncodedTable.from_columns({"a": [str(v) for v in a], "b": [str(v) for v in b], "s": [str(v) for v in s]})
    k = int(rng.integers(2, 6))
    if k > largest_k(kept):
        return
    g = bind(make_guarantee({"name": "l-diversity", "l": 2}), table, "s")
    if not _satisfies(g, table.codes("s").astype(np.int64), table.cardinality("s")):
        return
    dims = dimensions(table, ["a", "b"], None)
    codes = [table.codes(c).astype(np.int64) for c in ("a", "b")]
    sc = table.codes("s").astype(np.int64)
    search = floored(g, k) if not kept.any() else g
    floor = (kept.astype(np.int64), k) if kept.any() else None
    perm, seg_start, _, sup = partition(dims, codes, sc, table.cardinality("s"), search, floor=floor)
    assert not sup.any()
    seg, _ = segment_starts(seg_start, n)
    values = {"a": a, "b": b}

    def feasible(rows: np.ndarray) -> bool:
        cells = np.bincount(kept[rows])
        return (
            _satisfies(g, sc[rows], table.cardinality("s")) and len(rows) >= k and cells[cells > 0].min(initial=k) >= k
        )

    for p in range(len(seg_start)):
        rows = perm[seg == p]
        assert feasible(rows), f"partition {p} violates the floor or the guarantee"
        for attr in ("a", "b"):  # every cut Mondrian could make leaves a failing part
            left = _cut(values[attr][rows])
            if left is not None:
                assert not (feasible(rows[left]) and feasible(rows[~left])), f"a feasible cut of {attr} was refused"
    part = np.repeat(np.arange(len(seg_start)), np.diff(np.r_[seg_start, n]))
    if floor is not None:
        assert cells_ok(part, perm, kept.astype(np.int64), k).all()


@pytest.mark.parametrize(("seed", "k"), [(s, k) for s in range(6) for k in (3, 6)])
def test_incognito_meets_the_floor_at_a_minimal_node(seed: int, k: int) -> None:
    """Brute force over the lattice: the node Incognito publishes is minimal among the nodes
    whose every class satisfies the guarantee and holds at least k records."""
    rng = np.random.default_rng(100 + seed)
    table = _table(rng, int(rng.integers(40, 120)))
    hierarchies = {"zip": ZIP_HIERARCHY, "age": Hierarchy.from_rows("age", AGE_HIERARCHY_ROWS)}
    g = bind(make_guarantee({"name": "l-diversity", "l": 2}), table, "s")
    frame = pd.DataFrame({c: table.column(c).decode() for c in ("age", "zip", "s")})
    levels = {a: hierarchies[a] for a in ("age", "zip")}

    def good(node: tuple[int, int]) -> bool:
        gen = pd.DataFrame({a: frame[a].map(levels[a].mapping(lv)) for a, lv in zip(("age", "zip"), node, strict=True)})
        for _, rows in frame.groupby([gen["age"], gen["zip"]]).groups.items():
            sub = frame.loc[rows, "s"]
            if len(sub) < k or 2 * sub.value_counts().max() > len(sub):
                return False
        return True

    request = PublishRequest.of(table, Rule(("age", "zip"), "s"), g, rng, hierarchies=hierarchies, k=k)
    _publishes_a_minimal_node(request, levels, good, ["age", "zip"], k)


def test_the_floor_from_k_and_max_risk() -> None:
    assert cell_floor(None, None) == 1
    assert cell_floor(5, None) == 5
    assert cell_floor(None, 0.2) == 5  # the highest prosecutor risk 1/5
    assert cell_floor(3, 0.2) == 5 and cell_floor(7, 0.2) == 7
    assert cell_floor(None, 0.3) == 4  # 1/0.3 = 3.33: cells of 4 keep the risk below 0.3
    assert cell_floor(None, 0.2, "average") == 1  # cells / records is no floor: checked at write
    for bad in (0, -1, 1.5):
        with pytest.raises(InputError):
            cell_floor(None, bad)
    with pytest.raises(InputError):
        cell_floor(0, None)


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.output


def test_publish_k_with_mondrian_writes_a_release_check_k_passes(tmp_path: Path) -> None:
    """Before issue 47 this job was refused after the fact (its smallest cell held 2 records)."""
    out = tmp_path / "rel"
    common = ["--input", str(DISCHARGES), "--rule", "age, sex, race -> diagnosis", "--anonymizer", "mondrian"]
    roles = ["--identifying", "encounter_id", "--identifying", "patient_nbr", "--others", "insensitive"]
    code, text = _cli("publish", *common, *roles, "--allow-proxy", "diagnosis_chapter", "--k", "5", "--out", str(out))
    assert code in (0, 6), text
    code, text = _cli("check", str(out), "--k", "5", "--json")
    rep = json.loads(text)
    assert all(t["ok"] for t in rep["identity"]) and min(t["k"] for t in rep["identity"]) >= 5


def test_max_risk_is_met_by_the_classic_job_with_kept_columns(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    cols = [a for c in ("age", "sex", "race", "readmitted") for a in ("--column", c)]
    code, text = _cli(
        "publish", "--input", str(DISCHARGES), "--qi", "age,sex,race", "--guarantee", "k-anonymity:k=2",
        *cols, "--others", "insensitive", "--max-risk", "0.2", "--out", str(out),
    )  # fmt: skip
    assert code in (0, 6), text
    code, text = _cli("check", str(out), "--max-risk", "0.2", "--json")
    rep = json.loads(text)
    assert all(t["ok"] for t in rep["identity"]), rep["identity"]


def test_an_unreachable_floor_names_the_largest_k(tmp_path: Path) -> None:
    table = versapub.read_table(ROOT / "examples" / "data.csv")
    kept = ("race", "education", "hours", "disease")
    roles = versapub.ColumnRoles(
        identifying=("patient_id",), quasi_identifying=("age", "sex", "zip"), others="insensitive"
    )
    with pytest.raises(InfeasibleError, match=r"the largest k without removing records is (\d+)") as exc:
        versapub.publish(
            table, [], guarantee={"name": "k-anonymity", "k": 2}, columns=roles, anonymizer="mondrian", k=50
        )
    assert all(repr(c) in str(exc.value) for c in kept)
    smallest = pd.DataFrame({a: table.column(a).decode() for a in kept}).value_counts().min()
    assert f"the largest k without removing records is {smallest}" in str(exc.value)
    assert "mondrian:suppression=" in str(exc.value)


@pytest.mark.parametrize(("seed", "k"), [(s, k) for s in range(5) for k in (2, 4)])
def test_incognito_meets_the_floor_on_cells_of_kept_columns(seed: int, k: int) -> None:
    """The classic job's kept column is published exactly beside the classes: Incognito's node
    is minimal among those whose every (class, kept value) cell holds k records."""
    rng = np.random.default_rng(200 + seed)
    base = _table(rng, int(rng.integers(60, 160)))
    kept = [f"w{v}" for v in rng.choice(3, base.n_rows, p=[0.6, 0.3, 0.1])]
    table = EncodedTable.from_columns(
        {"age": list(base.column("age").decode()), "zip": list(base.column("zip").decode()), "w": kept}
    )
    hierarchies = {"zip": ZIP_HIERARCHY, "age": Hierarchy.from_rows("age", AGE_HIERARCHY_ROWS)}
    g = make_guarantee({"name": "k-anonymity", "k": 2})
    frame = pd.DataFrame({c: table.column(c).decode() for c in ("age", "zip", "w")})

    def good(node: tuple[int, int]) -> bool:
        gen = [frame[a].map(hierarchies[a].mapping(lv)) for a, lv in zip(("age", "zip"), node, strict=True)]
        classes = frame.groupby(gen).size()
        cells = frame.groupby([*gen, frame["w"]]).size()
        return bool(classes.min() >= 2 and cells.min() >= k)

    request = PublishRequest.of(table, (), g, rng, hierarchies=hierarchies, keep=("w",), k=k)
    _publishes_a_minimal_node(request, hierarchies, good, ["age", "zip", "w"], k)


def _publishes_a_minimal_node(
    request: PublishRequest, levels: dict[str, Hierarchy], good: Callable[[tuple[int, int]], bool],
    cell: list[str], k: int,
) -> None:  # fmt: skip
    """The brute-force minimal nodes over the lattice of age and zip; Incognito publishes one
    of them (or refuses when there is none), and every published ``cell`` holds k records."""
    heights = [levels[a].height for a in ("age", "zip")]
    every = [v for v in itertools.product(*(range(h) for h in heights)) if good(v)]
    minimal = {v for v in every if not any(u != v and all(x <= y for x, y in zip(u, v, strict=True)) for u in every)}
    if not minimal:
        with pytest.raises(InfeasibleError):
            Incognito().publish(request)
        return
    out = Incognito().publish(request)
    assert tuple(out.stats["node"].values()) in minimal
    ct = out.parts["data"]
    frame = pd.DataFrame({a: ct.decoded(a) for a in ct.names}).assign(n=np.asarray(ct.counts))
    assert frame.groupby(cell)["n"].sum().min() >= k
