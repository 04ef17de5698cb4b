"""The release model fitted to noisy marginals (issue 52; :mod:`versapub.mechanisms.fit`):
exact marginals are recovered when the noise is zero (decomposable and cyclic sets), and on
noisy ones the fit reaches the optimum an independent oracle reaches — exponentiated gradient
over the whole joint table, no junction tree — on small domains."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from versapub.mechanisms.fit import Noisy, _project, fit, junction_tree

CARDS = {"a": 3, "b": 2, "c": 4, "d": 2}


def _joint(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(2000, rng.dirichlet(np.ones(3 * 2 * 4 * 2) * 0.7))
    return counts.reshape(3, 2, 4, 2).astype(np.float64)


def _marg(joint: np.ndarray, attrs: tuple[str, ...]) -> np.ndarray:
    names = ("a", "b", "c", "d")
    out = joint.sum(axis=tuple(i for i, n in enumerate(names) if n not in attrs))
    kept = [n for n in names if n in attrs]
    return np.transpose(out, [kept.index(a) for a in attrs])


def _oracle(measured: list[Noisy], total: float, steps: int = 20000) -> np.ndarray:
    """Exponentiated gradient over the whole joint table (4 attributes, 48 cells)."""
    p = np.full((3, 2, 4, 2), total / 48)
    eta = 5e-3  # converges to 1e-6 of the optimum here in 20,000 steps (1e-3 stops 5e-3 short)
    names = ("a", "b", "c", "d")
    for _ in range(steps):
        g = np.zeros_like(p)
        for m in measured:
            diff = _marg(p, m.attributes) - m.counts
            kept = [n for n in names if n in m.attributes]
            aligned = np.transpose(diff / m.sigma**2, [m.attributes.index(a) for a in kept])
            g += aligned.reshape([CARDS[n] if n in m.attributes else 1 for n in names])
        p = p * np.exp(-eta * g)
        p *= total / p.sum()
    return p


@pytest.mark.parametrize("sets", [[("a", "b"), ("b", "c")], [("a", "b"), ("b", "c"), ("c", "a")], [("a",), ("c", "d")]])
def test_zero_noise_recovers_the_exact_marginals(sets: list[tuple[str, ...]]) -> None:
    joint = _joint(0)
    measured = [Noisy(s, _marg(joint, s), 1.0) for s in sets]
    f = fit(measured, CARDS, iterations=3000)
    for s in sets:
        assert f.marginal(s) == pytest.approx(_marg(joint, s), abs=0.05)
    assert f.total == pytest.approx(2000)


def test_noisy_marginals_reach_the_oracles_optimum() -> None:
    joint = _joint(1)
    rng = np.random.default_rng(7)
    sets = [("a", "b"), ("b", "c"), ("c", "d"), ("a",)]
    measured = [Noisy(s, _marg(joint, s) + rng.normal(0, 20, _marg(joint, s).shape), 20.0) for s in sets]
    f = fit(measured, CARDS, iterations=5000, tolerance=1e-12)
    total = f.total
    oracle = _oracle(measured, total)
    for s in sets:  # the measured marginals' optimum is unique: both reach it
        assert f.marginal(s) == pytest.approx(_marg(oracle, s), abs=1e-3)
    assert all((m >= 0).all() for m in f.marginals)  # a distribution, whatever the noise
    for (i, c1), (j, c2) in itertools.combinations(enumerate(f.cliques), 2):
        shared = tuple(x for x in c1 if x in c2)
        if shared:  # consistent where cliques meet
            assert _project(c1, f.marginals[i], shared) == pytest.approx(_project(c2, f.marginals[j], shared))


def test_the_junction_tree_covers_every_measured_set() -> None:
    cliques, edges = junction_tree([("a", "b"), ("b", "c"), ("c", "a"), ("d",)])
    assert ("a", "b", "c") in cliques and ("d",) in cliques and len(edges) == len(cliques) - 1


def test_sampled_records_follow_the_fitted_model() -> None:
    """200,000 records drawn from a fit over a cycle and a pendant: every clique's empirical
    distribution within 5 standard errors of the model's, cell by cell."""
    joint = _joint(2)
    sets = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
    f = fit([Noisy(s, _marg(joint, s), 1.0) for s in sets], CARDS, iterations=2000)
    n = 200_000
    drawn = f.sample(n, np.random.default_rng(0))
    assert set(drawn) == set(CARDS) and all(len(v) == n for v in drawn.values())
    for c, m in zip(f.cliques, f.marginals, strict=True):
        p = m / m.sum()
        key = np.ravel_multi_index(tuple(drawn[a] for a in c), [CARDS[a] for a in c])
        emp = np.bincount(key, minlength=p.size).reshape(p.shape) / n
        assert np.all(np.abs(emp - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12), c


def test_the_fit_matches_private_pgms_on_the_same_noisy_marginals() -> None:
    """Private-PGM's ``mbi`` (2.0.0, JAX float64, 5,000 mirror-descent steps) as the oracle:
    its fitted marginals on the same noisy marginals, recorded by ``benchmarks/dp_fit.py
    --fixture`` (mbi pulls JAX, which versapub does not depend on). The optimum is unique, so
    both fits reach it within the optimizers' tolerance (``docs/dp.md``: at most 8e-5 counts
    apart on 2,000 records)."""
    import json
    from pathlib import Path

    recorded = json.loads((Path(__file__).parent / "fixtures" / "mbi_fit.json").read_text())
    cards = recorded["cards"]
    for case in recorded["cases"]:
        measured = [
            Noisy(tuple(k.split("+")), np.array(v, dtype=np.float64), case["sigma"])
            for k, v in case["measured"].items()
        ]
        mine = fit(measured, cards, iterations=3000, tolerance=1e-13)
        for key, theirs in case["mbi"].items():
            assert np.abs(mine.marginal(tuple(key.split("+"))) - np.array(theirs)).max() < 1e-3, (case["seed"], key)


def test_a_step_that_overflows_is_never_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """This stop's sweep (issue 63): AIM at epsilon 50 ended in exit 70 — a mirror-descent step
    overflowed the model (NaN beliefs), the backtracking stopped at its smallest step and took
    it, and the exponential mechanism then met a NaN score. A step whose loss or beliefs are not
    finite is now never taken: here beliefs overflow whenever a potential leaves [-30, 30], and
    the fit still returns finite marginals that lower the loss."""
    import versapub.mechanisms.fit as fit_module

    real = fit_module._Tree.beliefs

    def fragile(self: object, theta: list[np.ndarray], total: float) -> list[np.ndarray]:
        out = real(self, theta, total)  # type: ignore[arg-type]
        if any(np.abs(t).max() > 0 for t in theta):
            return [np.full_like(m, np.nan) for m in out]
        return out

    monkeypatch.setattr(fit_module._Tree, "beliefs", fragile)
    counts = np.array([[40.0, 0.0], [0.0, 60.0]])
    measured = [Noisy(("a", "b"), counts, 1e-6), Noisy(("a",), counts.sum(1), 1e-6)]
    got = fit(measured, {"a": 2, "b": 2}, iterations=200)
    assert all(np.isfinite(m).all() for m in got.marginals)
    assert np.isfinite(got.loss) and np.allclose(got.marginals[0], counts.sum() / 4)  # the uniform start
