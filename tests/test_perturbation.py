"""Perturbative treatments (issue 48): microaggregation, noise, PRAM, rank swapping and
targeted record swapping — each against an independent expectation (hand-computed cases, a
plain transcription of MDAV from Domingo-Ferrer & Mateo-Sanz, brute force over every
partition for the optimal univariate one, moments over many seeds with tolerances from the
methods' own variances), the secret draws, and the verifier's checks from the files and
against the original."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import versapub
from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InputError
from versapub.privacy.screens.roles import ColumnRoles
from versapub.treatments import parse_treatment
from versapub.treatments.microaggregation import individual_ranking, mdav, optimal_univariate
from versapub.treatments.pram import corrected, invariant, retention_matrix
from versapub.treatments.swapping import rank_pairs
from versapub.verify.files.release_check import verify_release

OTHERS = ColumnRoles(others="insensitive", allow_unique=("income",))


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.stdout, res.stderr


def _sse(z: np.ndarray, g: np.ndarray) -> float:
    return float(sum(((z[g == i] - z[g == i].mean(axis=0)) ** 2).sum() for i in np.unique(g)))


def _paper_mdav(z: np.ndarray, k: int) -> np.ndarray:
    """MDAV as Domingo-Ferrer & Mateo-Sanz (2002) state it, record list by record list."""
    rest = list(range(len(z)))
    group = np.full(len(z), -1)
    gid = 0

    def grab(p: int) -> None:
        nonlocal rest, gid
        d = ((z[rest] - z[p]) ** 2).sum(axis=1)
        near = set(np.argsort(d, kind="stable")[:k].tolist())
        for i in near:
            group[rest[i]] = gid
        gid += 1
        rest = [r for j, r in enumerate(rest) if j not in near]

    def farthest(c: np.ndarray) -> int:
        return rest[int(np.argmax(((z[rest] - c) ** 2).sum(axis=1)))]

    while len(rest) >= 3 * k:
        r = farthest(z[rest].mean(axis=0))
        grab(r)
        grab(farthest(z[r]))
    if len(rest) >= 2 * k:
        grab(farthest(z[rest].mean(axis=0)))
    group[rest] = gid
    return group


def _partition(g: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(g == i).tolist()) for i in np.unique(g)}


@pytest.mark.parametrize("seed", range(6))
def test_mdav_forms_the_groups_of_the_papers_algorithm(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(20, 200)), int(rng.integers(2, 6))
    z = rng.normal(size=(n, 3)) * [1, 3, 0.5] + rng.integers(0, 3, (n, 3)) * [4, 0, 2]
    assert _partition(mdav(z, k)) == _partition(_paper_mdav(z, k))


def test_mdav_by_hand_and_in_blocks() -> None:
    # three tight clusters of three on a line: MDAV with k = 3 finds them
    z = np.array([[0.0], [1], [2], [10], [11], [12], [20], [21], [22]])
    assert _partition(mdav(z, 3)) == {frozenset({0, 1, 2}), frozenset({3, 4, 5}), frozenset({6, 7, 8})}
    rng = np.random.default_rng(7)
    z = rng.normal(size=(5000, 2))
    whole, blocks = mdav(z, 3, block=5000), mdav(z, 3, block=500)
    for g in (whole, blocks):
        sizes = np.bincount(g)
        assert sizes.min() >= 3 and sizes.max() <= 5
    assert _sse(z, blocks) <= 1.15 * _sse(z, whole)  # blocks cost little of MDAV's quality


def test_individual_ranking_and_the_optimal_univariate_partition() -> None:
    x = np.array([5.0, 1, 9, 3, 7, 2, 8])
    assert individual_ranking(x, 3).tolist() == [1, 0, 1, 0, 1, 0, 1]  # sorted 1 2 3 | 5 7 8 9
    x = np.array([1.0, 2, 3, 50, 51, 52, 53])  # the optimal split is 1 2 3 | 50 51 52 53
    assert _partition(optimal_univariate(x, 3)) == {frozenset({0, 1, 2}), frozenset({3, 4, 5, 6})}


@pytest.mark.parametrize("seed", range(8))
def test_the_optimal_univariate_partition_is_the_best_of_all(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Brute force: every cut of the sorted values into runs of k to 2k - 1 (the run costs
    computed a few ends at a time, so the chunks' seams are crossed)."""
    from versapub.treatments import microaggregation

    monkeypatch.setattr(microaggregation, "CHUNK", 8)
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 4))
    x = np.round(rng.lognormal(0, 1, int(rng.integers(2 * k, 13))), 2)
    v = np.sort(x)
    best = math.inf
    for cuts in itertools.product([0, 1], repeat=len(v) - 1):
        sizes = np.diff([0, *[i + 1 for i, c in enumerate(cuts) if c], len(v)])
        if sizes.min() >= k and sizes.max() <= 2 * k - 1:
            bounds = np.cumsum(sizes)[:-1]
            best = min(best, sum(((p - p.mean()) ** 2).sum() for p in np.split(v, bounds)))
    got = optimal_univariate(x, k)
    assert np.bincount(got).min() >= k and np.bincount(got).max() <= 2 * k - 1
    assert _sse(x[:, None], got) == pytest.approx(best, rel=1e-9, abs=1e-12)


def test_microaggregation_replaces_values_by_group_means_and_medians() -> None:
    t = EncodedTable.from_columns({"x": ["1", "2", "6", "10", "11", "30"]})
    out = parse_treatment("microaggregation:columns=x,k=3,method=individual-ranking").apply(t, np.random.default_rng())
    assert list(out.table.column("x").decode()) == ["3", "3", "3", "17", "17", "17"]
    assert out.record["sets"] == [["x"]] and out.record["changed"] == {"x": 6}
    med = parse_treatment("microaggregation:columns=x,k=3,method=individual-ranking,aggregate=median")
    assert list(med.apply(t, np.random.default_rng()).table.column("x").decode()) == ["2", "2", "2", "11", "11", "11"]


def test_microaggregation_refuses_text_missing_values_and_too_few_records() -> None:
    rng = np.random.default_rng()
    with pytest.raises(InputError, match="'x' holds 'abc'"):
        parse_treatment("microaggregation:columns=x,k=2").apply(EncodedTable.from_columns({"x": ["1", "abc"]}), rng)
    with pytest.raises(InputError, match="missing in 1 record"):
        t = EncodedTable.from_columns({"x": ["1", "", "3"]}, missing="value")
        parse_treatment("microaggregation:columns=x,k=2").apply(t, rng)
    with pytest.raises(ConfigError, match="at least k = 5 records"):
        parse_treatment("microaggregation:columns=x,k=5").apply(EncodedTable.from_columns({"x": ["1", "2"]}), rng)
    with pytest.raises(ConfigError, match="method"):
        parse_treatment("microaggregation:columns=x,method=kmeans")


def _column(n: int, seed: int) -> EncodedTable:
    rng = np.random.default_rng(seed)
    a = rng.normal(100, 20, n)
    b = 0.8 * a + rng.normal(0, 10, n)
    return EncodedTable.from_columns({"a": [f"{v:.2f}" for v in a], "b": [f"{v:.2f}" for v in b]})


def _nums(t: EncodedTable, c: str) -> np.ndarray:
    return t.column(c).decode().astype(float)


def test_uncorrelated_noise_keeps_means_and_grows_variances_by_its_magnitude() -> None:
    """Over 40 seeds: the mean moves by noise of sd a * sd / sqrt(n) per draw; the variance
    grows by 1 + a^2 (tolerances: 4 standard errors of the average over the seeds)."""
    t = _column(2000, 1)
    x = _nums(t, "a")
    spec = parse_treatment("noise:columns=a,magnitude=50")
    means, ratios = [], []
    for seed in range(40):
        y = _nums(spec.apply(t, np.random.default_rng(seed)).table, "a")
        means.append(y.mean() - x.mean())
        ratios.append(y.var(ddof=1) / x.var(ddof=1))
    se_mean = 0.5 * x.std(ddof=1) / math.sqrt(2000) / math.sqrt(40)
    assert abs(np.mean(means)) < 4 * se_mean
    assert np.mean(ratios) == pytest.approx(1.25, abs=4 * 0.25 * math.sqrt(2 / 2000))
    written = spec.apply(t, np.random.default_rng(0)).table.column("a").values
    assert all(len(v.partition(".")[2]) <= 2 for v in written)  # in cents, as the input


def test_correlated_noise_keeps_the_covariance_and_the_correlation() -> None:
    """Kim's method: means and the covariance matrix kept in expectation (over 40 seeds)."""
    t = _column(3000, 2)
    x = np.column_stack([_nums(t, "a"), _nums(t, "b")])
    spec = parse_treatment("noise:columns=a;b,magnitude=60,method=correlated")
    covs, corrs = [], []
    for seed in range(40):
        out = spec.apply(t, np.random.default_rng(seed)).table
        y = np.column_stack([_nums(out, "a"), _nums(out, "b")])
        covs.append(np.cov(y, rowvar=False) / np.cov(x, rowvar=False))
        corrs.append(np.corrcoef(y, rowvar=False)[0, 1])
    assert np.allclose(np.mean(covs, axis=0), 1.0, atol=0.02)
    assert np.mean(corrs) == pytest.approx(np.corrcoef(x, rowvar=False)[0, 1], abs=0.01)
    plain = parse_treatment("noise:columns=a;b,magnitude=60").apply(t, np.random.default_rng(0)).table
    y = np.column_stack([_nums(plain, "a"), _nums(plain, "b")])
    assert np.corrcoef(y, rowvar=False)[0, 1] < np.corrcoef(x, rowvar=False)[0, 1] - 0.05  # uncorrelated shrinks it


def test_pram_matrices_by_hand() -> None:
    p = retention_matrix(3, 0.8)
    assert np.allclose(p, [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    pi = np.array([0.6, 0.3, 0.1])
    r = invariant(p, pi)
    assert np.allclose(r.sum(axis=1), 1) and np.allclose(pi @ r, pi)
    # two values: P = [[.8, .2], [.2, .8]], pi = (.75, .25): lambda = pi P = (.65, .35);
    # Q = [[.8*.75/.65, .2*.25/.65], [.2*.75/.35, .8*.25/.35]]; R = P Q, by hand:
    q = np.array([[0.6 / 0.65, 0.05 / 0.65], [0.15 / 0.35, 0.2 / 0.35]])
    assert np.allclose(
        invariant(np.array([[0.8, 0.2], [0.2, 0.8]]), np.array([0.75, 0.25])), np.array([[0.8, 0.2], [0.2, 0.8]]) @ q
    )
    published = np.array([0.6, 0.3, 0.1]) @ p * 1000
    assert np.allclose(corrected(published, p), [600, 300, 100])


def test_invariant_pram_keeps_the_expected_frequencies_over_many_seeds() -> None:
    """The mean published count of each value over 200 seeds lies within 5 standard errors
    of the original count (each record's draw independent)."""
    rng = np.random.default_rng(3)
    sex = rng.choice(["F", "M", "X"], 1500, p=[0.55, 0.4, 0.05])
    region = rng.choice(["n", "s"], 1500, p=[0.7, 0.3])
    t = EncodedTable.from_columns({"sex": list(sex), "region": list(region)})
    spec = parse_treatment("pram:columns=sex,retention=0.6,invariant=true,strata=region")
    counts = []
    for seed in range(200):
        out = spec.apply(t, np.random.default_rng(seed)).table
        cells = np.char.add(out.column("region").decode().astype(str), out.column("sex").decode().astype(str))
        counts.append([int((cells == f"{r}{s}").sum()) for r in "ns" for s in "FMX"])
    mean, sd = np.mean(counts, axis=0), np.std(counts, axis=0, ddof=1)
    want = [int(((region == r) & (sex == s)).sum()) for r in "ns" for s in "FMX"]
    assert np.all(np.abs(mean - want) <= 5 * sd / math.sqrt(200) + 0.5)
    plain = parse_treatment("pram:columns=sex,retention=0.6")  # not invariant: X grows towards 1/3
    xs = np.mean(
        [(plain.apply(t, np.random.default_rng(s)).table.column("sex").decode() == "X").sum() for s in range(50)]
    )
    assert xs > want[2] + want[5] + 100


def test_pram_reads_a_matrix_file_and_refuses_a_bad_one(tmp_path: Path) -> None:
    t = EncodedTable.from_columns({"x": ["a", "b"] * 50})
    good = tmp_path / "m.csv"
    good.write_text("from,a,b\na,1,0\nb,0.5,0.5\n")
    out = parse_treatment(f"pram:columns=x,matrix={good}").apply(t, np.random.default_rng(0))
    assert out.record["matrices"][0]["matrix"] == [[1.0, 0.0], [0.5, 0.5]]
    assert (out.table.column("x").decode() == "a").sum() > 50  # every a stays, about half the b move
    bad = tmp_path / "bad.csv"
    bad.write_text("from,a,b\na,0.7,0.7\nb,0.5,0.5\n")
    with pytest.raises(ConfigError, match="every row must sum to 1"):
        parse_treatment(f"pram:columns=x,matrix={bad}").apply(t, np.random.default_rng(0))


def test_rank_swapping_permutes_values_within_p_percent_of_ranks() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=1000)
    a, b = rank_pairs(x, 5, rng)
    rank = np.argsort(np.argsort(x))
    assert len(a) > 450 and np.abs(rank[a] - rank[b]).max() <= 50
    assert len(set(a.tolist()) | set(b.tolist())) == 2 * len(a)  # each record in one pair at most
    t = EncodedTable.from_columns({"x": [f"{v:.3f}" for v in x]})
    out = parse_treatment("rank-swapping:columns=x,p=5").apply(t, rng).table
    assert sorted(out.column("x").decode()) == sorted(t.column("x").decode())  # the distribution, exactly


def _households(seed: int = 5) -> EncodedTable:
    """300 households of 1 to 4 people in 2 regions x 3 districts; age and sex as keys."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, 300)
    hid = np.repeat(np.arange(300), sizes)
    district = rng.integers(0, 6, 300)[hid]
    n = len(hid)
    return EncodedTable.from_columns(
        {
            "hid": [f"h{v}" for v in hid],
            "region": [f"r{v // 3}" for v in district],
            "district": [f"d{v}" for v in district],
            "age": [str(v) for v in rng.integers(0, 90, n) // 10 * 10],
            "sex": list(rng.choice(["F", "M"], n)),
        }
    )


def test_targeted_swapping_swaps_every_risky_household_and_only_as_many_as_the_rate() -> None:
    t = _households()
    spec = parse_treatment("targeted-swapping:columns=region;district,keys=age;sex,unit=hid,rate=0,threshold=2")
    out = spec.apply(t, np.random.default_rng(1))
    rec = out.record
    hid = t.column("hid").decode()
    before = dict(zip(hid, t.column("district").decode(), strict=True))
    after_rows = list(zip(hid, out.table.column("district").decode(), strict=True))
    after = dict(after_rows)
    assert len(set(after_rows)) == len(after)  # a household moves whole
    moved = {h for h in before if before[h] != after[h]}
    # the risky households: a member alone in its (area, age, sex) cell at some level
    cells = {}
    for lvl in ("region", "district"):
        geo = t.column(lvl).decode()
        keys = list(zip(geo, t.column("age").decode(), t.column("sex").decode(), strict=True))
        cnt = {c: keys.count(c) for c in set(keys)}
        for h, c in zip(hid, keys, strict=True):
            cells[h] = min(cells.get(h, 10**9), cnt[c])
    risky = {h for h, c in cells.items() if c <= 2}
    assert rec["risky_units"] == len(risky) and 0 < len(risky) < 300
    assert len(moved) == rec["swapped_units"]  # partners always lie in another district
    assert len(risky - moved) == rec["unmatched_units"]  # every risky household moved but those counted
    assert len(moved - risky) <= len(moved & risky)  # with rate 0, only a risky household's partner is not risky
    sizes = {h: list(hid).count(h) for h in set(hid)}
    by_size_before = sorted((sizes[h], before[h]) for h in before)
    by_size_after = sorted((sizes[h], after[h]) for h in after)
    assert by_size_before == by_size_after  # partners share the household size: each district keeps its sizes
    more = parse_treatment("targeted-swapping:columns=region;district,keys=age;sex,unit=hid,rate=0.4,threshold=1")
    rec2 = more.apply(t, np.random.default_rng(1)).record
    assert rec2["swapped_units"] + 2 * rec2["unmatched_units"] >= math.floor(0.4 * 300)


def test_targeted_swapping_refuses_a_household_in_two_areas() -> None:
    t = EncodedTable.from_columns({"hid": ["a", "a", "b"], "district": ["1", "2", "1"], "age": ["1", "1", "2"]})
    with pytest.raises(InputError, match="unit 'a' of column 'hid' has records in more than one area"):
        parse_treatment("targeted-swapping:columns=district,keys=age,unit=hid").apply(t, np.random.default_rng())


def _table(n: int = 600, seed: int = 9) -> EncodedTable:
    rng = np.random.default_rng(seed)
    return EncodedTable.from_columns(
        {
            "age": [str(v) for v in rng.integers(20, 70, n) // 10 * 10],
            "zip": [f"z{v}" for v in rng.integers(0, 4, n)],
            "income": [str(v) for v in rng.integers(10, 200, n) * 100],
            "sex": list(rng.choice(["F", "M"], n)),
            "dx": [f"d{v}" for v in rng.integers(0, 6, n)],
        }
    )


def _release(tmp_path: Path, treatments: list[str], seed: int | None = None, name: str = "r") -> Path:
    rel = versapub.publish(_table(), ["age, zip -> dx"], l=2, columns=OTHERS, treatments=treatments, seed=seed)
    out = tmp_path / name
    versapub.write_release(rel, out, format="csv")
    return out


def test_secret_draws_differ_and_a_given_seed_is_named_loudly(tmp_path: Path) -> None:
    spec = ["noise:columns=income,magnitude=20"]
    a, b = _release(tmp_path, spec, name="a"), _release(tmp_path, spec, name="b")
    qa, qb = (sorted((p / "T1_qit.csv").read_text().splitlines()) for p in (a, b))
    assert qa != qb  # fresh entropy each time
    m = json.loads((a / "manifest.json").read_text())
    assert m["treatments"][0]["draws"] == "secret"
    c, d = _release(tmp_path, spec, seed=5, name="c"), _release(tmp_path, spec, seed=5, name="d")
    assert (c / "T1_qit.csv").read_text() == (d / "T1_qit.csv").read_text()
    m = json.loads((c / "manifest.json").read_text())
    assert m["treatments"][0]["draws"] == "seeded"
    assert "WARNING: noise drew its random numbers from the given seed 5" in (c / "report.md").read_text()


def test_perturbed_releases_verify_from_their_files_and_against_the_original(tmp_path: Path) -> None:
    t = _table()
    specs = [
        "microaggregation:columns=income,k=4",
        "pram:columns=sex,retention=0.7,invariant=true",
        "rank-swapping:columns=income,p=10",
    ]
    out = _release(tmp_path, specs, seed=3)
    rep = verify_release(out, original=t)
    assert rep.ok, rep.explain()
    said = " ".join(f.message for f in rep.findings if f.check == "treatment")
    assert "held by at least 4 records" in said and "the matrix is stochastic" in said
    assert "invariant, and the published frequencies agree" in said and "declared changed" in said


def _tamper(out: Path, edit: object) -> None:
    path = out / "manifest.json"
    m = json.loads(path.read_text())
    edit(m)  # type: ignore[operator]
    path.write_text(json.dumps(m))


def test_the_verifier_fails_a_microaggregation_below_k_and_a_bad_matrix(tmp_path: Path) -> None:
    out = _release(tmp_path, ["microaggregation:columns=income,k=4", "pram:columns=sex,retention=0.7"], seed=3)
    _tamper(out, lambda m: m["treatments"][0].update(k=500))
    _tamper(out, lambda m: m["treatments"][1]["matrices"][0].update(matrix=[[0.9, 0.3], [0.3, 0.7]]))
    rep = verify_release(out)
    bad = [f.message for f in rep.findings if f.check == "treatment" and not f.ok]
    assert any("held by fewer than 500 records" in b for b in bad), bad
    assert any("not stochastic" in b for b in bad), bad


def test_the_verifier_fails_a_declared_change_the_files_contradict(tmp_path: Path) -> None:
    out = _release(tmp_path, ["pram:columns=sex,retention=0.5"], seed=1)  # 18 records more M than F shown
    _tamper(out, lambda m: m["treatments"][0]["changed"].update(sex=1))
    rep = verify_release(out, original=_table())
    bad = [f.message for f in rep.findings if f.check == "treatment" and not f.ok]
    assert any("declared changed, but the files show" in b for b in bad), bad
    assert any("more than 6 standard deviations away" in b for b in bad), bad


def test_record_linkage_il1s_and_interval_disclosure_by_hand() -> None:
    from versapub.treatments.measures import perturbation_measures, record_linkage

    x = np.array([[0.0], [1.0], [2.0], [10.0]])
    assert record_linkage(x, x)["share"] == 1.0  # unchanged: every record's nearest is its own
    swapped = np.array([[1.0], [0.0], [2.0], [10.0]])
    assert record_linkage(x, swapped)["share"] == 0.5  # two of four moved onto another record
    tie = np.array([[0.0], [0.0], [5.0]])
    assert record_linkage(tie, tie)["share"] == pytest.approx((0.5 + 0.5 + 1) / 3, abs=1e-4)  # a tie shared by two
    before = EncodedTable.from_columns({"a": ["0", "2", "4", "6"], "s": ["x", "y", "x", "y"]})
    after = EncodedTable.from_columns({"a": ["1", "2", "4", "9"], "s": ["x", "x", "x", "y"]})
    m = perturbation_measures(before, after, ["a", "s"])
    sd = np.std([0, 2, 4, 6], ddof=1)
    assert m["il1s"] == pytest.approx((1 + 0 + 0 + 3) / 4 / (math.sqrt(2) * sd), abs=1e-6)
    assert m["interval_disclosure"]["share"] == 0.5  # the two unchanged records lie within 0.1 sd
    assert m["columns"]["a"]["mean"] == [3.0, 4.0] and m["columns"]["s"]["changed_share"] == 0.25
    assert m["columns"]["s"]["values"] == ["x", "y"] and m["columns"]["s"]["after"] == [3, 1]


def test_the_verifier_measures_what_the_treatments_changed_as_the_publisher_did(tmp_path: Path) -> None:
    """The publisher's means (record by record) and the verifier's (the files' counts against
    the original) agree; check --original, evaluate and the report show them."""
    from versapub.data.sql import connect
    from versapub.inspect import evaluate, treatment_effect
    from versapub.verify.treatments.perturbation_effect import perturbation_effect

    out = _release(tmp_path, ["noise:columns=income,magnitude=30"], seed=2)
    m = json.loads((out / "manifest.json").read_text())
    claimed = m["perturbation"]["columns"]["income"]
    with connect() as con:
        seen = perturbation_effect(out, m, _table(), con)
    assert seen is not None
    assert seen["columns"]["income"]["mean"] == pytest.approx(claimed["mean"], rel=1e-6)
    assert seen["columns"]["income"]["variance"] == pytest.approx(claimed["variance"], rel=1e-6)
    assert seen["publisher"]["record_linkage"] == m["perturbation"]["record_linkage"]
    data = tmp_path / "t.csv"
    data.write_text(
        "\n".join([",".join(_table().names), *(",".join(r) for r in zip(*_table().to_pydict().values(), strict=True))])
    )
    ev = evaluate(out, data)
    assert (
        ev.perturbation is not None
        and ev.perturbation["columns"]["income"]["mean"] == seen["columns"]["income"]["mean"]
    )
    assert treatment_effect(out)["publisher"]["il1s"] == m["perturbation"]["il1s"]  # type: ignore[index]
    html = (out / "report.html").read_text()
    assert 'id="perturbation"' in html and "income: the input (grey) and the treated" in html


def test_the_loans_after_the_computed_noise_pass_the_screen_and_the_inference_attack(tmp_path: Path) -> None:
    """Issue 48's demonstration, as issue 64 corrects it: without treatment the multi-column
    screen refuses the loans (amount and installment recover the grade); 20 % noise did not
    stop the adversary who computes (it picks the nearer of its group's two rates); the
    refusal computes a treatment that does, and with it check --original's attacks agree that
    the rates stay within their bound."""
    from versapub.datasets.synthetic import loans, write_csv

    data = tmp_path / "loans.csv"
    write_csv(loans(3000, 5), str(data))
    q = "state, emp_title, emp_length, homeownership, annual_income"
    rules = [a for s in ("grade", "sub_grade", "interest_rate") for a in ("--rule", f"{q} -> {s}")]
    base = ["publish", "--input", str(data), *rules, "--l", "2", "--others", "insensitive"]
    base += ["--allow-unique", "installment,loan_amount", "--seed", "4"]
    code, stdout, err = run(*base, "--out", str(tmp_path / "plain"))
    assert code != 0 and "together recover 'grade'" in stdout + err
    import re

    remedies = re.findall(r"--treat '(noise:[^']+)'", " ".join(err.split()))
    assert remedies, err
    treat = ["--treat", max(remedies, key=lambda r: float(r.rsplit("=", 1)[1]))]  # one for every rule
    code, stdout, err = run(*base, *treat, "--out", str(tmp_path / "noisy"))
    assert code in (0, 6), stdout + err
    code, stdout, err = run("check", str(tmp_path / "noisy"), "--original", str(data), "--json")
    rep = json.loads(stdout)
    grade = next(r for r in rep["adversary"]["rules"] if r["rule"]["rhs"] == "grade")
    assert grade["ok"] and grade["learned"]["ci"][1] < 0.5, grade["message"]
    assert rep["perturbation"]["columns"]["loan_amount"]["changed_at_least"] > 2000


def test_query_and_evaluate_correct_for_pram_with_the_published_matrix(tmp_path: Path) -> None:
    """T = T* P^-1: the corrected count of a PRAM'd value lies far closer to the original's
    than the published (perturbed) one; evaluate reports both marginal errors."""
    from versapub.inspect import evaluate, query
    from versapub.kinds.load import load_release
    from versapub.model.query import count, parse_query

    rng = np.random.default_rng(3)
    n = 4000
    t = EncodedTable.from_columns(
        {
            "age": [str(v) for v in rng.integers(20, 70, n) // 10 * 10],
            "sex": list(rng.choice(["F", "M", "X"], n, p=[0.6, 0.35, 0.05])),
            "dx": [f"d{v}" for v in rng.integers(0, 5, n)],
        }
    )
    roles = ColumnRoles(others="insensitive")
    rel = versapub.publish(t, ["age -> dx"], l=2, columns=roles, treatments=["pram:columns=sex,retention=0.6"], seed=2)
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    data = tmp_path / "t.csv"
    data.write_text("\n".join([",".join(t.names), *(",".join(r) for r in zip(*t.to_pydict().values(), strict=True))]))
    actual = int((t.column("sex").decode() == "X").sum())
    raw = count(load_release(out), parse_query("sex = 'X'"))  # the perturbed table's own count
    got = query(out, "sex = 'X'", data)
    assert got.actual == actual and "corrected for PRAM of sex" in got.notes[0]
    assert abs(got.estimate - actual) < abs(raw - actual) / 4
    both = query(out, "sex = 'X' AND age = '30'", data)  # a joint count, corrected along sex only
    assert both.actual is not None and abs(both.estimate - both.actual) < 0.5 * both.actual
    e = evaluate(out, data).pram["sex"]
    assert e["corrected"] < e["published"] / 4


def test_pram_leaves_missing_values_where_they_are() -> None:
    values = ["a", "b", "", "c"] * 50
    t = EncodedTable.from_columns({"x": values}, missing="value")
    out = parse_treatment("pram:columns=x,retention=0.2").apply(t, np.random.default_rng(0))
    got = out.table.column("x").decode()
    assert [v for v, w in zip(got, values, strict=True) if w == ""] == [""] * 50  # never drawn
    assert "" not in [v for v, w in zip(got, values, strict=True) if w != ""]  # nor drawn into
    assert out.record["matrices"][0]["values"] == ["a", "b", "c"]
