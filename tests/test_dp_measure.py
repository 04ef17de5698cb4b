"""Differentially private measurement (issue 52, first part): zCDP accounting hand-computed
and against OpenDP's own, the Gaussian mechanism's scale from rho, marginals measured over a
declared domain with OpenDP's discrete Gaussian, and the verifier's independent check of the
ledger (a forged ledger fails)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("opendp", reason="the dp extra is installed by make test (pip install '.[test,dask,web,dp]')")

from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.mechanisms.accounting import delta_of, epsilon_of, gaussian_sigma, rho_of
from versapub.mechanisms.measure import measure_marginals
from versapub.mechanisms.noise import certified_epsilon
from versapub.verify.dp.dp_ledger import ledger_findings


def test_the_gaussian_scale_from_rho_by_hand() -> None:
    # rho = Delta^2 / (2 sigma^2): rho 1/2 -> sigma 1; rho 1/18 -> sigma 3; sensitivity 2, rho 1/2 -> 2
    assert gaussian_sigma(0.5) == pytest.approx(1.0)
    assert gaussian_sigma(1 / 18) == pytest.approx(3.0)
    assert gaussian_sigma(0.5, sensitivity=2.0) == pytest.approx(2.0)
    with pytest.raises(InputError, match="rho"):
        gaussian_sigma(0.0)


def test_the_conversion_by_hand_and_against_opendp() -> None:
    # Bun & Steinke's simple bound lies above the tighter conversion, which lies above rho
    for rho in (1e-3, 0.0149730576735885, 1 / 18, 0.5, 2.0):
        for delta in (1e-9, 1e-6, 1e-3):
            eps = epsilon_of(rho, delta)
            assert rho < eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
            assert eps == pytest.approx(certified_epsilon(rho, delta), rel=1e-9)  # OpenDP's accounting
            assert delta_of(rho, eps) == pytest.approx(delta, rel=1e-6)
    # the budget MST and AIM use for epsilon 1, delta 1e-9 (Private-PGM's cdp_rho)
    assert rho_of(1.0, 1e-9) == pytest.approx(0.0149730576735885, rel=1e-9)
    assert epsilon_of(rho_of(1.0, 1e-9), 1e-9) == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(InputError, match="delta"):
        rho_of(1.0, 0.0)


def _table() -> EncodedTable:
    rng = np.random.default_rng(0)
    n = 5000
    return EncodedTable.from_columns(
        {
            "sex": rng.choice(["F", "M"], size=n).tolist(),
            "age": rng.choice(["young", "middle", "old"], size=n).tolist(),
            "flu": rng.choice(["yes", "no"], size=n, p=[0.2, 0.8]).tolist(),
        }
    )


DOMAINS = {"sex": ["F", "M", "X"], "age": ["young", "middle", "old"], "flu": ["no", "yes"]}


def test_marginals_are_measured_over_the_declared_domain_with_their_ledger() -> None:
    t = _table()
    noisy, ledger = measure_marginals(t, [("sex", "flu"), ("age",)], 1.0, 1e-9, DOMAINS)
    rho = rho_of(1.0, 1e-9)
    assert ledger.rho == pytest.approx(rho) and ledger.spent_rho == pytest.approx(rho)
    assert ledger.spent_epsilon == pytest.approx(1.0, rel=1e-9)
    assert [e.rho for e in ledger.entries] == pytest.approx([rho / 2, rho / 2])
    sigma = 1 / math.sqrt(rho)  # rho / 2 each: sigma = 1 / sqrt(2 * rho / 2)
    assert all(e.sigma == pytest.approx(sigma) for e in ledger.entries)
    sf = noisy[0]
    assert sf.domains == (("F", "M", "X"), ("no", "yes")) and sf.counts.shape == (6,)
    exact = np.zeros(6, dtype=np.int64)
    for s, f in zip(t.column("sex").values[t.codes("sex")], t.column("flu").values[t.codes("flu")], strict=True):
        exact[DOMAINS["sex"].index(str(s)) * 2 + DOMAINS["flu"].index(str(f))] += 1
    # a cell is exact plus noise of scale ~8.2: 10 sigma bounds a draw with probability 1 - 1e-22
    assert np.all(np.abs(sf.counts - exact) <= 10 * sigma) and exact[4:].sum() == 0  # 'X' never occurs
    assert ledger_findings(ledger.to_json())[0].ok
    assert "rests on the mechanism" in ledger_findings(ledger.to_json())[0].message


def test_the_noise_has_the_scale_the_ledger_states() -> None:
    """20,000 cells of zero measured at sigma = 5: the sample's standard deviation within 5 %
    (its relative standard error is 1/sqrt(2n) = 0.5 %: ten of them) and mean within 0.5."""
    from versapub.mechanisms.noise import discrete_gaussian

    draws = discrete_gaussian(np.zeros(20_000, dtype=np.int64), 5.0, 1 / 50)
    assert abs(float(draws.std()) - 5.0) < 0.25 and abs(float(draws.mean())) < 0.5
    with pytest.raises(Exception, match="certifies"):
        discrete_gaussian(np.zeros(3, dtype=np.int64), 5.0, 0.5)  # a scale that does not give its rho


def test_the_domain_is_declared_never_read_from_the_data() -> None:
    t = _table()
    with pytest.raises(InputError, match="Declare the domain of \\['age'\\]"):
        measure_marginals(t, [("age",)], 1.0, 1e-9, {"sex": DOMAINS["sex"]})
    with pytest.raises(InputError, match="Column 'age' holds 'old'"):
        measure_marginals(t, [("age",)], 1.0, 1e-9, {"age": ["young", "middle"]})
    with pytest.raises(InputError, match="epsilon"):
        measure_marginals(t, [("age",)], -1.0, 1e-9, DOMAINS)


def test_a_forged_ledger_fails_the_independent_check() -> None:
    _, ledger = measure_marginals(_table(), [("sex", "flu"), ("age",)], 1.0, 1e-9, DOMAINS)
    good = ledger.to_json()
    quieter = {**good, "measurements": [{**good["measurements"][0], "sigma": 1.0}, good["measurements"][1]]}
    assert not ledger_findings(quieter)[0].ok and "gives rho" in ledger_findings(quieter)[0].message
    overspent = {**good, "measurements": [*good["measurements"], good["measurements"][0]]}
    messages = " ".join(f.message for f in ledger_findings(overspent))
    assert "more than the budget" in messages and "over the stated delta" in messages
    claimed = {**good, "epsilon": 0.5}  # the same spending claimed as a smaller epsilon
    assert any("over the stated delta" in f.message for f in ledger_findings(claimed))
    assert not ledger_findings({"epsilon": 1})[0].ok


def test_mst_selects_the_dependent_pairs_and_spends_its_budget_exactly() -> None:
    """A table where b copies a and d copies c (the rest independent): with a generous budget
    the exponential mechanism picks (a, b) and (c, d) among the tree's edges (their one-way
    fit's error is about n, the others' about sqrt(n): chosen with probability 1 - 1e-30)."""
    from versapub.mechanisms.mst import mst

    rng = np.random.default_rng(3)
    n = 3000
    a = rng.choice(["x", "y", "z"], size=n)
    c = rng.choice(["p", "q"], size=n)
    cols = {
        "a": a.tolist(),
        "b": a.tolist(),
        "c": c.tolist(),
        "d": c.tolist(),
        "e": rng.choice(["u", "v"], size=n).tolist(),
    }
    table = EncodedTable.from_columns(cols)
    domains = {"a": ["x", "y", "z"], "b": ["x", "y", "z"], "c": ["p", "q"], "d": ["p", "q"], "e": ["u", "v"]}
    s = mst(table, 20.0, 1e-9, domains, iterations=300)
    assert len(s.selected) == 4 and {("a", "b"), ("c", "d")} <= set(s.selected)
    steps = [e.step for e in s.ledger.entries]
    assert steps.count("measurement") == 5 + 4 and steps.count("selection") == 4
    assert s.ledger.spent_rho == pytest.approx(s.ledger.rho) and s.ledger.spent_epsilon == pytest.approx(20.0)
    assert ledger_findings(s.ledger.to_json())[0].ok  # the verifier's arithmetic agrees, selections included
    ab = s.model.marginal(("a", "b"))
    assert np.trace(ab) / ab.sum() > 0.97  # the fitted model keeps b = a
