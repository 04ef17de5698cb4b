"""Noise from a vetted sampler: OpenDP's discrete Gaussian (Canonne, Kamath & Steinke 2020),
sampled exactly on integers from OpenDP's own cryptographic generator — no floating-point
sampler (whose low bits leak the value, Mironov 2012), nothing to seed and so no seed to
publish. Needs the ``dp`` extra (``pip install 'versapub[dp]'``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.errors import ConfigError

Counts = npt.NDArray[np.int64]


def _opendp() -> Any:
    try:
        import opendp.prelude as dp
    except ImportError:
        raise ConfigError(
            "Differentially private releases need the dp extra: pip install 'versapub[dp]' (OpenDP, the vetted "
            "noise sampler)."
        ) from None
    dp.enable_features("contrib")
    return dp


def discrete_gaussian(counts: Counts, sigma: float, rho: float) -> Counts:
    """``counts`` plus discrete Gaussian noise of scale ``sigma``, drawn by OpenDP; the
    measurement OpenDP builds must itself certify ``rho``-zCDP for a change of one record (L2
    sensitivity 1), or nothing is drawn."""
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
    meas = space >> dp.m.then_gaussian(scale=float(sigma))
    certified = float(meas.map(1))
    if not math.isclose(certified, rho, rel_tol=1e-9):
        raise ConfigError(f"OpenDP certifies rho = {certified} for noise scale {sigma}, not the ledger's {rho}.")
    return np.asarray(meas(np.asarray(counts, dtype=np.int64).tolist()), dtype=np.int64)


def certified_epsilon(rho: float, delta: float) -> float:
    """OpenDP's own conversion of ``rho``-zCDP to (epsilon, ``delta``)-DP (a cross-check of
    :func:`versapub.mechanisms.accounting.epsilon_of`)."""
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
    meas = space >> dp.m.then_gaussian(scale=1.0 / math.sqrt(2.0 * rho))
    return float(dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), delta).map(1)[0])


def noisy_max(scores: npt.NDArray[np.float64], scale: float, rho: float) -> int:
    """The index of the highest of ``scores`` after Gumbel noise of ``scale`` (the exponential
    mechanism, OpenDP's ``make_noisy_max`` in zCDP), each score of sensitivity 1; refused
    unless OpenDP certifies ``rho`` for that scale."""
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    meas = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=float(scale))
    certified = float(meas.map(1.0))
    if not math.isclose(certified, rho, rel_tol=1e-9):
        raise ConfigError(f"OpenDP certifies rho = {certified} for selection noise {scale}, not the ledger's {rho}.")
    return int(meas([float(x) for x in scores]))
