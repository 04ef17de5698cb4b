"""The verifier's test of a DP release's noise scale (:mod:`versapub.verify.dp.dp_noise`):
genuine discrete-Gaussian deviations give p-values near uniform (so the stated false-alarm
rate holds), exact counts and shrunk noise are caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from versapub.verify.dp.dp_noise import _p_two_sided, _weights, moments, scale_findings, within


def _draws(rng: np.random.Generator, sigma: float, size: tuple[int, ...]) -> np.ndarray:
    k, w = _weights(sigma)
    return rng.choice(k, size=size, p=w)


@pytest.mark.parametrize("sigma", [0.4, 1.0, 7.5])
@pytest.mark.parametrize("cells", [1, 3, 40])
def test_genuine_noise_gives_p_values_near_uniform(sigma: float, cells: int) -> None:
    """Over 2,000 genuine tables, a p-value below 0.05 (and below 0.01) about as often as it
    should: the gamma with the discrete Gaussian's exact moments, floored by the lattice."""
    rng = np.random.default_rng(int(sigma * 100) + cells)
    d = _draws(rng, sigma, (2000, cells))
    v, mu4 = moments(sigma)
    totals = (d**2).sum(axis=1)
    ps = np.array(
        [
            _p_two_sided(t, cells * v, cells * (mu4 - v * v), within(sigma, math.sqrt(t / cells)) ** cells)
            for t in totals
        ]
    )
    assert (ps < 0.05).mean() <= 0.09 and (ps < 0.01).mean() <= 0.03
    assert (ps < 1e-4).mean() <= 0.002


def test_the_discrete_gaussians_moments_against_sampling() -> None:
    rng = np.random.default_rng(1)
    for sigma in (0.3, 2.0, 12.0):
        d = _draws(rng, sigma, (200_000,))
        v, mu4 = moments(sigma)
        assert (d**2).mean() == pytest.approx(v, rel=0.02)
        assert (d**4).mean() == pytest.approx(mu4, rel=0.06)
    assert moments(0.3)[0] < 0.3**2  # the continuous sigma^2 overstates it below sigma = 1


def test_exact_counts_and_shrunk_noise_are_caught() -> None:
    """Ten tables of 30 cells at sigma 10: the deviations replaced by 0, or divided by 10."""
    rng = np.random.default_rng(2)
    v, mu4 = moments(10.0)

    def tests(scale: float) -> list[tuple[str, float, float, float, int, float]]:
        out = []
        for i in range(10):
            d = np.round(_draws(rng, 10.0, (30,)) * scale)
            total = float((d**2).sum())
            out.append((f"t{i}", total, 30 * v, 30 * (mu4 - v * v), 30, within(10.0, math.sqrt(total / 30)) ** 30))
        return out

    assert all(f.ok for f in scale_findings(tests(1.0)))
    assert not scale_findings(tests(0.0))[-1].ok
    assert not scale_findings(tests(0.1))[-1].ok
    assert not scale_findings(tests(3.0))[-1].ok  # too much noise is as wrong as too little
