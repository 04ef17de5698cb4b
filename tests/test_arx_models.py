"""ARX's remaining privacy models (issue 34): beta-likeness (basic and enhanced),
delta-disclosure privacy and k-map estimated from a sampling fraction — hand-computed cases,
brute force against the definitions, pycanon as an oracle, corrupted releases, and the CLI."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from pycanon import anonymity

import versapub
from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.privacy.guarantees.base import GuaranteeContext
from versapub.privacy.guarantees.context import bind
from versapub.privacy.guarantees.guarantee import Histograms, make_guarantee
from versapub.privacy.guarantees.kmap import derived_k
from versapub.verify.files.release_check import verify_release
from versapub.verify.guarantees.group_checks import group_test, sample_k

from .conftest import random_table, seal


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def one(counts: list[int], p: list[float], spec: dict[str, object]) -> tuple[bool, bool]:
    """Producer's and verifier's verdict on one group with ``counts`` in a table of shares ``p``."""
    g = make_guarantee(spec).bind(GuaranteeContext(sensitive_distribution=np.asarray(p) * 1000))
    c = np.asarray(counts)
    nz = np.flatnonzero(c)
    h = Histograms(np.zeros(len(nz), np.int64), c[nz], 1, nz.astype(np.int64))
    verifier = group_test(spec, None).test(c[None, :].astype(float), np.asarray(p, dtype=float)[None, :])
    return bool(g.groups_satisfied(h)[0]), bool(verifier[0])


# ---- hand-computed cases ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "spec", "want"),
    [
        # p = (0.5, 0.3, 0.2), q = (0.2, 0.4, 0.4): gains 1/3 and (0.4 - 0.2)/0.2 = 1
        ([2, 4, 4], {"name": "beta-likeness", "beta": 1}, True),
        ([2, 4, 4], {"name": "beta-likeness", "beta": 0.99}, False),
        # q = (0.9, 0.05, 0.05): gain 0.8 on p = 0.5; enhanced allows min(1, -ln 0.5 = 0.693)
        ([18, 1, 1], {"name": "beta-likeness", "beta": 1}, True),
        ([18, 1, 1], {"name": "beta-likeness", "beta": 1, "enhanced": True}, False),
        ([13, 4, 3], {"name": "beta-likeness", "beta": 1, "enhanced": True}, True),  # gain 0.3, 0.33, 0.25
    ],
)
def test_beta_likeness_by_hand(counts: list[int], spec: dict[str, object], want: bool) -> None:
    assert one(counts, [0.5, 0.3, 0.2], spec) == (want, want)


@pytest.mark.parametrize(
    ("counts", "delta", "want"),
    [
        ([8, 2], 0.92, True),  # |ln 1.6| = 0.47, |ln 0.4| = 0.916
        ([8, 2], 0.91, False),
        ([10, 0], 5.0, False),  # a value the class lacks: ln 0 — never private
        ([5, 5], 0.01, True),  # the table's own distribution: every ratio 1
    ],
)
def test_delta_disclosure_by_hand(counts: list[int], delta: float, want: bool) -> None:
    assert one(counts, [0.5, 0.5], {"name": "delta-disclosure", "delta": delta}) == (want, want)


def test_delta_disclosure_is_strict() -> None:
    """``|ln(q/p)| < delta``: a group exactly at delta fails (q = 0.8 of p = 0.5 -> ln 1.6)."""
    d = math.log(1.6)
    assert one([8, 2], [0.5, 0.5], {"name": "delta-disclosure", "delta": max(d, math.log(2.5))}) == (False, False)


def test_k_map_sample_size_by_hand() -> None:
    """f = 0.1, k = 10: lambda = 1, P(X >= 4) = 0.019 > 0.01 >= P(X >= 5) = 0.0037, so k' = 5;
    the whole population (f = 1) is k-anonymity."""
    assert derived_k(10, 0.1, 0.01) == 5
    assert derived_k(10, 0.1, 0.05) == 4  # P(X >= 4) = 0.019 <= 0.05 < P(X >= 3) = 0.080
    assert derived_k(7, 1.0, 0.01) == 7
    for k in (2, 5, 10, 20, 50, 200):
        for f in (0.001, 0.01, 0.1, 0.3, 0.5, 0.9, 1.0):
            for a in (0.01, 0.05, 0.2):
                assert derived_k(k, f, a) == sample_k({"name": "k-map", "k": k, "fraction": f, "significance": a})


# ---- brute force against the definitions -----------------------------------------------------------------


def _by_definition(spec: dict[str, object], counts: np.ndarray, p: np.ndarray) -> bool:
    """The definitions written out value by value (module docstrings' citations)."""
    q = counts / counts.sum()
    if spec["name"] == "beta-likeness":
        beta = float(spec["beta"])  # type: ignore[arg-type]
        for qi, pi in zip(q, p, strict=True):
            if qi > pi:
                allowed = min(beta, -math.log(pi)) if spec.get("enhanced") else beta
                if (qi - pi) / pi > allowed * (1 + 1e-10):
                    return False
        return True
    delta = float(spec["delta"])  # type: ignore[arg-type]
    return all(qi > 0 and abs(math.log(qi / pi)) < delta * (1 - 1e-10) for qi, pi in zip(q, p, strict=True))


@pytest.mark.parametrize(
    "spec",
    [
        {"name": "beta-likeness", "beta": 0.5},
        {"name": "beta-likeness", "beta": 2.0},
        {"name": "beta-likeness", "beta": 1.0, "enhanced": True},
        {"name": "delta-disclosure", "delta": 0.7},
        {"name": "delta-disclosure", "delta": 2.0},
    ],
    ids=str,
)
def test_producer_and_verifier_equal_the_definition_on_random_groups(spec: dict[str, object]) -> None:
    rng = np.random.default_rng(34)
    for _ in range(40):
        m = int(rng.integers(2, 6))
        n_groups = int(rng.integers(1, 12))
        table = rng.integers(0, 4, size=(n_groups, m)) * rng.integers(0, 2, size=(n_groups, m))
        table[table.sum(axis=1) == 0, 0] = 1
        total = table.sum(axis=0)
        table[:, total == 0] += 1  # every value present in the table
        p = table.sum(axis=0) / table.sum()
        g = make_guarantee(spec).bind(GuaranteeContext(sensitive_distribution=table.sum(axis=0)))
        gi, vi = np.nonzero(table)
        h = Histograms(gi.astype(np.int64), table[gi, vi], n_groups, vi.astype(np.int64))
        want = [_by_definition(spec, table[i].astype(float), p) for i in range(n_groups)]
        assert g.groups_satisfied(h).tolist() == want, (spec, table.tolist())
        got = group_test(spec, None).test(table.astype(float), p[None, :])
        assert got.tolist() == want, (spec, table.tolist())


# ---- whole releases: Mondrian and Incognito, pycanon as the oracle --------------------------------------


def _expanded(out: Path, qi: list[str], s: str) -> pd.DataFrame:
    """A generalized release's data file, one row per record (pycanon counts rows)."""
    d = pd.read_csv(out / "T1.csv", dtype=str)
    d = d.loc[d.index.repeat(d["count"].astype(int))]
    return d[[*qi, s]].reset_index(drop=True)


@pytest.fixture(scope="module")
def skewed() -> EncodedTable:
    return random_table(np.random.default_rng(11), 600, {"q1": 6, "q2": 5, "q3": 4, "s": 5}, skew=0.8)


@pytest.mark.parametrize("anonymizer", ["mondrian", "incognito"])
@pytest.mark.parametrize(
    ("spec", "oracle"),
    [
        ({"name": "beta-likeness", "beta": 0.8}, anonymity.basic_beta_likeness),
        ({"name": "delta-disclosure", "delta": 0.9}, anonymity.delta_disclosure),
    ],
    ids=["beta-likeness", "delta-disclosure"],
)
def test_releases_meet_the_model_by_pycanon(
    tmp_path: Path, skewed: EncodedTable, anonymizer: str, spec: dict[str, object], oracle: object
) -> None:
    """pycanon's beta of basic beta-likeness and its delta (it reads only the values a class
    holds; every class here holds every value, as the definition demands) on the written
    release equal versapub's achieved value, and are within the parameter."""
    rel = versapub.publish(skewed, ["q1, q2, q3 -> s"], guarantee=make_guarantee(spec), anonymizer=anonymizer, seed=1)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    assert verify_release(out, original=skewed).ok
    got = oracle(_expanded(out, ["q1", "q2", "q3"], "s"), ["q1", "q2", "q3"], ["s"])  # type: ignore[operator]
    (table,) = rel.tables
    assert got == pytest.approx(table.table.stats["achieved"], rel=1e-9)
    bound = float(spec.get("beta", spec.get("delta")))  # type: ignore[arg-type]
    assert got <= bound
    assert table.table.stats["groups"] > 1  # it generalized, not merely suppressed everything


def test_enhanced_beta_likeness_release_by_definition(tmp_path: Path, skewed: EncodedTable) -> None:
    """pycanon's enhanced beta is not the definition (it caps one beta by the rarest value's
    -ln p): the release is checked class by class against the definition instead."""
    spec = {"name": "beta-likeness", "beta": 3.0, "enhanced": True}
    rel = versapub.publish(skewed, ["q1, q2, q3 -> s"], guarantee=make_guarantee(spec), anonymizer="mondrian")
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    d = _expanded(out, ["q1", "q2", "q3"], "s")
    p = d["s"].value_counts(normalize=True)
    classes = d.groupby(["q1", "q2", "q3"])["s"].value_counts(normalize=True)
    assert len(d.groupby(["q1", "q2", "q3"])) > 1
    for (*_, value), q in classes.items():
        if q > p[value]:
            assert (q - p[value]) / p[value] <= min(3.0, -math.log(p[value])) + 1e-12


def test_k_map_classic_job_by_the_cli(tmp_path: Path, skewed: EncodedTable) -> None:
    """Quasi-identifiers without a rule under k-map: every class holds the derived k' records,
    the manifest records what the model was checked against; a lowered claim is refused."""
    data = tmp_path / "in.csv"
    pd.DataFrame(skewed.to_pydict()).to_csv(data, index=False)
    out = tmp_path / "r"
    code, stdout, stderr = run(
        "publish", "--input", str(data), "--qi", "q1,q2,q3", "--others", "insensitive",
        "--guarantee", "k-map:k=20,fraction=0.25", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    m = json.loads((out / "manifest.json").read_text())
    g = m["guarantee"]
    assert g["checked_against"] == "estimate from the sampling fraction" and g["derived_k"] == derived_k(20, 0.25, 0.01)
    sizes = {int(k) for k in m["tables"][0]["stats"]["group_sizes"]}
    assert min(sizes) >= g["derived_k"] and "k-map" in stdout
    g["derived_k"] = 2  # a forged, weaker sample size
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    code, stdout, _ = run("check", str(out))
    assert code != 0 and "derived_k" in stdout


def test_a_class_made_too_alike_fails_the_check(tmp_path: Path, skewed: EncodedTable) -> None:
    """A Mondrian release under beta-likeness with one class's records all moved to the rarest
    value (digests re-sealed): the verifier's own test fails it; the steward's stronger
    requirement fails the honest release."""
    rel = versapub.publish(
        skewed, ["q1, q2, q3 -> s | beta-likeness:beta=1"], anonymizer="mondrian", columns=versapub.ColumnRoles()
    )
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    code, _, _ = run("check", str(out), "--guarantee", "beta-likeness:beta=0.05")
    assert code == 1
    with (out / "T1.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    s_at = header.index("s")
    rare = min(skewed.column("s").values.astype(str), key=lambda v: (skewed.column("s").values == v).sum())
    first = tuple(body[0][:s_at])
    merged: dict[tuple[str, ...], int] = {}
    for r in body:
        key = tuple(r[:s_at]) + ((rare,) if tuple(r[:s_at]) == first else (r[s_at],))
        merged[key] = merged.get(key, 0) + int(r[-1])
    with (out / "T1.csv").open("w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(header)
        w.writerows([[*k, c] for k, c in sorted(merged.items())])
    seal(out)
    code, stdout, _ = run("check", str(out))
    assert code == 1 and "beta-likeness" in stdout


def test_per_rule_specs_and_config(tmp_path: Path, skewed: EncodedTable) -> None:
    """Each model from a rule's own spec on the command line and from a TOML configuration."""
    data = tmp_path / "in.csv"
    pd.DataFrame(skewed.to_pydict()).to_csv(data, index=False)
    for i, rule in enumerate(
        ["q1, q2 -> s | beta-likeness:beta=1,enhanced=true", "q1, q2 -> s | delta-disclosure:delta=1.5"]
    ):
        out = tmp_path / f"r{i}"
        code, _, stderr = run(
            "publish", "--input", str(data), "--rule", rule, "--anonymizer", "incognito", "--others", "identifying",
            "--out", str(out),
        )  # fmt: skip
        assert code == 0, stderr
        assert json.loads((out / "verification.json").read_text())["ok"]
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[input]\npath = "{data}"\n[columns]\nothers = "identifying"\n[privacy]\n'
        'rules = [{rule = "q1, q2, q3 -> s", guarantee = "delta-disclosure", delta = 1.2}]\n'
        '[publish]\nanonymizer = "mondrian"\n',
        encoding="utf-8",
    )
    code, _, stderr = run("publish", str(cfg), "--out", str(tmp_path / "rc"))
    assert code == 0, stderr
    assert json.loads((tmp_path / "rc" / "verification.json").read_text())["ok"]


def test_parameters_are_validated_in_one_paragraph() -> None:
    from versapub.errors import RuleError

    for spec, words in (
        ({"name": "beta-likeness", "beta": 0}, "beta"),
        ({"name": "beta-likeness", "beta": 1, "enhanced": "yes"}, "enhanced"),
        ({"name": "delta-disclosure", "delta": -1}, "delta"),
        ({"name": "k-map", "k": 5, "fraction": 1.5}, "fraction"),
        ({"name": "delta-presence", "delta_max": 0}, "delta_max"),
        ({"name": "delta-presence", "delta_max": 0.3, "delta_min": 0.5}, "delta_min"),
        ({"name": "delta-presence", "delta_min": 0.1}, "delta_max"),
        ({"name": "k-map", "k": 5, "fraction": 0.1, "significance": 1}, "significance"),
    ):
        with pytest.raises(RuleError) as exc:
            make_guarantee(spec)
        assert words in str(exc.value) and "\n" not in str(exc.value)


def test_anatomy_publishes_beta_likeness_with_its_group_width(skewed: EncodedTable) -> None:
    """Groups of w distinct values give each value 1/w: w = ceil(1 / min p (1 + beta))."""
    g = bind(make_guarantee({"name": "beta-likeness", "beta": 5}), skewed, "s")
    p = skewed.column("s").counts() / skewed.n_rows
    assert g.group_width() == max(2, math.ceil(1 / (p.min() * 6)))
    rel = versapub.publish(skewed, ["q1, q2, q3 -> s"], guarantee=g, anonymizer="anatomy")
    assert rel.tables[0].table.kind == "anatomy"


def test_k_map_infeasible_names_the_largest_k() -> None:
    g = make_guarantee({"name": "k-map", "k": 50, "fraction": 1.0})
    v = g.single_attribute_violation(np.array([10, 20]))
    assert v is not None and v.largest_feasible == {"k": 30} and "largest feasible k is 30" in v.explanation
