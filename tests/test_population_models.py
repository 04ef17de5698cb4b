"""Issue 69: population uniqueness from a log-linear model and a Gaussian copula, against
brute force on tiny tables, known generating models, and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from versapub.cli.main import cli
from versapub.data.groupby import group_rows
from versapub.privacy.risk import copula as cop
from versapub.privacy.risk import loglinear as ll
from versapub.privacy.risk.population import MISFIT_MAX, estimate


def _classes(cols: list[np.ndarray]) -> tuple[list[np.ndarray], list[int], np.ndarray]:
    cards = [int(c.max()) + 1 for c in cols]
    g = group_rows(cols, cards)
    return [k.astype(np.int64) for k in g.keys], cards, g.counts.astype(np.int64)


def test_main_effects_model_by_hand() -> None:
    """Two keys, four records: mu(x) = n p_a(x_a) p_b(x_b); tau_1 sums exp(-mu (1-pi)/pi)
    over the sample uniques, tau_2 (1 - exp(-nu)) / nu; the expected uniques sum over the
    whole 2 x 2 product."""
    a, b = np.array([0, 0, 1, 0]), np.array([0, 1, 0, 0])
    codes, cards, f = _classes([a, b])  # cells (0,0): 2, (0,1): 1, (1,0): 1
    r = ll.loglinear(codes, cards, f, 0.25, ["a", "b"], interactions=False)
    pa, pb = np.array([3 / 4, 1 / 4]), np.array([3 / 4, 1 / 4])
    mu = {(i, j): 4 * pa[i] * pb[j] for i in range(2) for j in range(2)}
    nu = {c: m * 0.75 / 0.25 for c, m in mu.items()}
    assert r.tau1 == pytest.approx(math.exp(-nu[(0, 1)]) + math.exp(-nu[(1, 0)]))
    assert r.tau2 == pytest.approx(sum((1 - math.exp(-nu[c])) / nu[c] for c in ((0, 1), (1, 0))))
    expected = sum(m * math.exp(-m) for m in mu.values())
    assert r.expected_uniques == pytest.approx(expected)
    var = sum(m * math.exp(-m) * (1 - m * math.exp(-m)) for m in mu.values())
    assert r.z == pytest.approx((2 - expected) / math.sqrt(var))
    assert r.terms == ("a", "b") and r.z_exact


@pytest.mark.parametrize("f", [1, 2, 3, 7, 40])
@pytest.mark.parametrize("nu", [0.0, 0.3, 2.0, 15.0])
def test_per_record_risk_is_the_expected_inverse(f: int, nu: float) -> None:
    """E(1 / (f + X)), X ~ Poisson(nu), by summing the series."""
    x = np.arange(400)
    series = float((stats.poisson.pmf(x, nu) / (f + x)).sum())
    got = ll.per_record_risk(np.array([float(f)]), np.array([nu]))[0]
    assert got == pytest.approx(series, rel=1e-5)


def test_drawn_expected_uniques_agree_with_the_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's draws (for products too large to enumerate) estimate the same sums."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 12, 3000)
    b = (a + rng.integers(0, 3, 3000)) % 12
    c = rng.integers(0, 9, 3000)
    m = ll.Margins.of(*_classes([a, b, c])[:2], _classes([a, b, c])[2].astype(np.float64))
    edges = [(0, 1)]
    exact = ll.expected_uniques(m, edges, rng)
    monkeypatch.setattr(ll, "EXACT_CELLS", 10)
    drawn = ll.expected_uniques(m, edges, np.random.default_rng(6))
    assert exact[2] and not drawn[2]
    assert drawn[0] == pytest.approx(exact[0], rel=0.03)
    assert drawn[1] == pytest.approx(exact[1], rel=0.03)


def _known_model(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    """A population from a known log-linear model: a and b dependent (b = a shifted by a
    small random step), c independent; and its cell probabilities."""
    pa = rng.dirichlet(np.ones(40) * 0.6)
    step = np.array([0.6, 0.3, 0.1])
    pc = rng.dirichlet(np.ones(300) * 0.3)
    joint = np.zeros((40, 40, 300))
    for s, w in enumerate(step):
        joint[np.arange(40), (np.arange(40) + s) % 40, :] += pa[:, None] * w * pc[None, :]
    cells = rng.choice(joint.size, n, p=joint.ravel())
    return [x.astype(np.int64) for x in np.unravel_index(cells, joint.shape)], joint


def test_recovers_a_known_log_linear_model_and_its_tau1() -> None:
    """On a population from a known model (a:b interaction, c independent), the search
    finds the interaction, the fitted sample cell means are the true ones within sampling
    error, and tau_1 is the true model's within a few sds and near the population's truth."""
    rng = np.random.default_rng(69)
    pop, joint = _known_model(rng, 100_000)
    pi = 0.1
    take = rng.random(len(pop[0])) < pi
    codes, cards, f = _classes([p[take] for p in pop])
    r = ll.loglinear(codes, cards, f, pi, ["a", "b", "c"])
    assert "a:b" in r.terms and "a:c" not in r.terms and "b:c" not in r.terms
    n = float(f.sum())
    true_mu = n * joint[codes[0], codes[1], codes[2]]
    m = ll.Margins.of(codes, cards, f.astype(np.float64))
    fitted = np.exp(m.log_mu(codes, [(0, 1)]))
    big = f >= 20
    assert np.median(np.abs(fitted[big] / true_mu[big] - 1)) < 0.1
    ones = f == 1
    true_tau1 = float(np.exp(-true_mu[ones] * (1 - pi) / pi).sum())
    assert abs(r.tau1 - true_tau1) < 4 * r.tau1_sd + 0.05 * true_tau1
    g = group_rows(pop, cards, with_inverse=True)
    assert g.inverse is not None
    truth = int((g.counts[g.inverse][take] == 1).sum())
    assert truth > 300 and abs(r.tau1 - truth) <= 0.1 * truth


def test_ghk_is_the_rectangle_probability() -> None:
    """GHK against inclusion-exclusion over scipy's multivariate normal CDF (2 and 3 dims)."""
    rng = np.random.default_rng(1)
    for corr in (np.array([[1, 0.6], [0.6, 1.0]]), np.array([[1, 0.3, -0.2], [0.3, 1, 0.5], [-0.2, 0.5, 1.0]])):
        d = len(corr)
        a = np.array([[-0.5] * d, [0.2] * d, [-2.0] * d])
        b = np.array([[0.4] * d, [1.5] * d, [-1.0] * d])
        got = cop.ghk(a, b, np.linalg.cholesky(corr), rng, draws=4000)
        mvn = stats.multivariate_normal(mean=np.zeros(d), cov=corr)
        for row in range(len(a)):
            want = 0.0
            for corner in range(1 << d):
                pick = [(b if (corner >> i) & 1 == 0 else a)[row, i] for i in range(d)]
                sign = (-1) ** bin(corner).count("1")
                want += sign * float(mvn.cdf(np.array(pick)))
            assert got[row] == pytest.approx(want, rel=0.03, abs=2e-4)


def test_copula_of_independent_keys_by_hand() -> None:
    """Independent keys give a near-identity correlation, each cell the product of its
    margins, and the estimate sum (1 - p)^(N - n) over the sample uniques."""
    rng = np.random.default_rng(2)
    n = 20_000
    cols = [rng.integers(0, 30, n), rng.integers(0, 20, n)]
    codes, cards, f = _classes(cols)
    r = cop.copula(codes, cards, f, 10 * n)
    assert abs(r.correlation[0][1]) < 0.03
    pa = np.bincount(codes[0], weights=f) / n
    pb = np.bincount(codes[1], weights=f) / n
    ones = f == 1
    p = pa[codes[0][ones]] * pb[codes[1][ones]]
    want = float(((1 - p) ** (9 * n)).sum())
    assert r.estimate == pytest.approx(want, rel=0.05)


def test_copula_recovers_a_copula_population() -> None:
    """On a population drawn from a Gaussian copula, sampled at 10 %, the copula model's
    estimate is within 12 % of the true sample uniques unique in the population."""
    rng = np.random.default_rng(11)
    corr = np.array([[1, 0.5, 0.3], [0.5, 1, 0.4], [0.3, 0.4, 1.0]])
    z = rng.standard_normal((200_000, 3)) @ np.linalg.cholesky(corr).T
    pop = [np.minimum((stats.norm.cdf(z[:, i]) * k).astype(np.int64), k - 1) for i, k in enumerate((80, 50, 20))]
    take = rng.random(len(z)) < 0.1
    codes, cards, f = _classes([p[take] for p in pop])
    r = cop.copula(codes, cards, f, len(z), orders=[(np.arange(k), True) for k in cards])
    assert r.correlation[0][1] == pytest.approx(0.5, abs=0.05)
    g = group_rows(pop, [80, 50, 20], with_inverse=True)
    assert g.inverse is not None
    truth = int((g.counts[g.inverse][take] == 1).sum())
    assert abs(r.estimate - truth) <= 0.12 * truth


def test_weights_of_one_fraction_are_that_fraction() -> None:
    """Weights of 1/pi on every record give the single fraction's figures."""
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 25, 4000), rng.integers(0, 10, 4000), rng.integers(0, 4, 4000)]
    codes, cards, f = _classes(cols)
    plain = estimate(codes, cards, f, 0.2)
    weighted = estimate(codes, cards, f, 0.2, weights=f * 5.0)
    assert weighted.loglinear == pytest.approx(plain.loglinear)
    assert weighted.copula == pytest.approx(plain.copula)


def test_auto_falls_back_on_exchangeable_cells() -> None:
    """Cells unrelated to the key values (ARX's models' assumption) make the log-linear
    model miss the sample uniques by far more than MISFIT_MAX: auto reports ARX's rule;
    independent keys keep the log-linear model."""
    rng = np.random.default_rng(4)
    sizes = rng.zipf(1.6, 3000).clip(max=2000)
    cells = rng.choice(200 * 100 * 6, len(sizes), replace=False)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    pop = [c[labels] for c in np.unravel_index(cells, (200, 100, 6))]
    take = rng.random(len(labels)) < 0.1
    codes, cards, f = _classes([p[take] for p in pop])
    u = estimate(codes, cards, f, 0.1)
    assert abs(u.loglinear_misfit) > MISFIT_MAX and u.model == u.arx_model
    assert "ARX's rule" in u.chosen_by
    ind = [rng.integers(0, 60, 30_000), rng.integers(0, 30, 30_000), rng.integers(0, 5, 30_000)]
    codes, cards, f = _classes(ind)
    u = estimate(codes, cards, f, 0.1)
    assert u.model == "loglinear" and abs(u.loglinear_misfit) <= MISFIT_MAX


def _csv(path: Path, rows: list[tuple[object, ...]], header: str) -> Path:
    path.write_text(header + "\n" + "\n".join(",".join(str(x) for x in r) for r in rows) + "\n")
    return path


def test_cli_reports_the_chosen_model_with_the_others(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    rows = [
        (int(a), int(b), int(c))
        for a, b, c in zip(
            rng.integers(0, 40, 3000), rng.gamma(3, 8, 3000).astype(int), rng.integers(0, 3, 3000), strict=True
        )
    ]
    data = _csv(tmp_path / "s.csv", rows, "area,age,sex")
    run = CliRunner().invoke(
        cli, ["risk", str(data), "--qi", "area,age,sex", "--sampling-fraction", "0.1", "--no-suda", "--json"]
    )
    assert run.exit_code == 0, run.output
    pu = json.loads(run.output)["tables"][0]["population_uniques"]
    assert pu["model"] == "loglinear" and set(pu["models"]) == {"loglinear", "copula", "zayatz", "pitman", "snb"}
    lo, hi = pu["interval"]
    assert lo <= pu["estimate"] <= hi and pu["loglinear"]["terms"][:3] == ["area", "age", "sex"]
    run = CliRunner().invoke(
        cli, ["risk", str(data), "--qi", "area,age,sex", "--sampling-fraction", "0.1", "--no-suda", "--model", "pitman"]
    )
    assert run.exit_code == 0, run.output
    assert "by pitman (as --model asked)" in " ".join(run.output.split())
    assert "loglinear" in run.output and "copula" in run.output
    out = tmp_path / "r.csv"
    run = CliRunner().invoke(
        cli,
        ["risk", str(data), "--qi", "area,age,sex", "--sampling-fraction", "0.1", "--no-suda", "--records", str(out)],
    )
    assert run.exit_code == 0, run.output
    head = out.read_text().splitlines()[0].replace('"', "").split(",")
    assert "loglinear_risk" in head and "population_unique" in head
    run = CliRunner().invoke(cli, ["risk", str(data), "--qi", "area", "--model", "bogus"])
    assert run.exit_code == 2 and "Traceback" not in run.output


def test_check_and_the_report_add_the_estimate_of_each_table(tmp_path: Path) -> None:
    """``check --sampling-fraction`` adds each table's population-uniqueness figure to its
    identity finding (the verifier reads the cells from the file): the same as ``risk`` of
    the release gives; the report shows it; a fraction outside (0, 1] is one paragraph."""
    from versapub.inspect import report, risk
    from versapub.web.views import risk_view

    rng = np.random.default_rng(12)
    n = 2500
    rows = list(
        zip(
            rng.integers(0, 30, n).tolist(),
            rng.gamma(3, 8, n).astype(int).tolist(),
            rng.integers(0, 2, n).tolist(),
            rng.choice(["flu", "cold", "asthma"], n).tolist(),
            strict=True,
        )
    )
    data = _csv(tmp_path / "s.csv", rows, "area,age,sex,disease")
    rel = tmp_path / "rel"
    run = CliRunner().invoke(
        cli, ["publish", "--input", str(data), "--rule", "area,age,sex -> disease", "--out", str(rel)]
    )
    assert run.exit_code in (0, 6), run.output
    run = CliRunner().invoke(cli, ["check", str(rel), "--sampling-fraction", "0.1", "--json"])
    assert run.exit_code in (0, 6), run.output
    found = [i for i in json.loads(run.output)["identity"] if "population_uniques" in i]
    assert found, "no identity finding carries the population figure"
    measured = {t["table"]: t["population_uniques"] for t in risk(rel, sampling_fraction=0.1).to_json()["tables"]}
    for i in found:
        mine = measured[i["table"]]
        assert i["population_uniques"]["model"] == mine["model"]
        assert i["population_uniques"]["estimate"] == pytest.approx(mine["estimate"], rel=1e-9)
        assert "estimated unique in the population" in i["message"]
    html = report(rel, sampling_fraction=0.1).html
    assert 'class="population"' in html and "loglinear" in html
    view = risk_view(risk(rel, sampling_fraction=0.1).to_json())
    detail = [row[2] for b in view if b["kind"] == "facts" for row in b["rows"] if row[0] == "population uniques"]
    assert detail and "95 % under the model" in detail[0] and "pitman" in detail[0]
    run = CliRunner().invoke(cli, ["check", str(rel), "--sampling-fraction", "0"])
    assert run.exit_code == 2 and "(0, 1]" in run.output and "Traceback" not in run.output


def test_a_model_without_an_estimate_is_said_not_shown_as_zero() -> None:
    """SNB needs sample classes of two; without them it has no estimate: the figure is then
    ARX's rule's, and the reason says so (never 0 uniques "by snb")."""
    rng = np.random.default_rng(9)
    cols = [rng.permutation(300)[:200], rng.integers(0, 3, 200)]  # every record alone: no class of two
    codes, cards, f = _classes(cols)
    u = estimate(codes, cards, f, 0.1, model="snb")
    assert math.isnan(u.snb) and u.model != "snb" and "snb has no valid estimate" in u.chosen_by
    assert u.estimate == pytest.approx(min(max(u.zayatz if u.model == "zayatz" else u.pitman, 0.0), 200.0))


@pytest.mark.parametrize("name", ["c", "C"])
def test_risk_and_check_of_a_release_with_a_column_named_like_the_count(tmp_path: Path, name: str) -> None:
    """``risk RELEASE`` read each table's cells with a sum aliased ``c``: a published column
    named ``c`` (or ``C``: DuckDB's names ignore case) made two fields of one name (an internal
    error); ``check --sampling-fraction`` reads the cells the same way."""
    rng = np.random.default_rng(5)
    rows = [(int(rng.integers(20, 41)), "xyz"[i % 3], "pqr"[int(rng.integers(0, 3))]) for i in range(60)]
    data = _csv(tmp_path / "t.csv", rows, f"a,{name},dis")
    rel = tmp_path / "rel"
    run = CliRunner().invoke(cli, ["publish", "--input", str(data), "--rule", f"a, {name} -> dis", "--out", str(rel)])
    assert run.exit_code in (0, 6), run.output
    run = CliRunner().invoke(cli, ["risk", str(rel), "--sampling-fraction", "0.1", "--no-suda", "--json"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.output)["tables"][0]["attributes"] == ["a", name]
    run = CliRunner().invoke(cli, ["check", str(rel), "--sampling-fraction", "0.1", "--json"])
    assert run.exit_code in (0, 6) and any("population_uniques" in i for i in json.loads(run.output)["identity"])
