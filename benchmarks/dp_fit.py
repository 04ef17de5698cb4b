"""The estimator of noisy marginals (``versapub.mechanisms.fit``, issue 52) against
Private-PGM's own (``mbi``'s ``MirrorDescent``) on the same noisy marginals: the largest
difference between their fitted marginals, their losses and their times, five seeds.

mbi needs JAX, which versapub does not depend on: run this with mbi importable, e.g.
``pip install mbi`` in a scratch environment, or ``pip install --target DIR mbi jax jaxlib
...`` and ``PYTHONPATH=DIR python benchmarks/dp_fit.py``; ``--fixture FILE`` writes the test
oracle ``tests/fixtures/mbi_fit.json`` instead. JAX computes in float32 unless
told otherwise; both fits run in float64 here (in float32 mbi stops about 1e-4 of the loss
short of the optimum, from rounding alone)."""

from __future__ import annotations

import time

import numpy as np

CARDS = {"a": 3, "b": 2, "c": 4, "d": 2}
NAMES = ("a", "b", "c", "d")
SETS = [("a", "b"), ("b", "c"), ("c", "d"), ("a",), ("a", "c")]  # a cycle a-b-c and a pendant d


def marginal(joint: np.ndarray, attrs: tuple[str, ...]) -> np.ndarray:
    out = joint.sum(axis=tuple(i for i, n in enumerate(NAMES) if n not in attrs))
    kept = [n for n in NAMES if n in attrs]
    return np.transpose(out, [kept.index(a) for a in attrs])


def main() -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    from mbi import Domain, LinearMeasurement, estimation

    from versapub.mechanisms.fit import Noisy, fit

    print("seed | max |versapub - mbi| (counts) | loss versapub | loss mbi | versapub s | mbi s (after JIT)")
    print("---|---|---|---|---|---")
    for seed in range(5):
        rng = np.random.default_rng(seed)
        joint = rng.multinomial(2000, rng.dirichlet(np.ones(48) * 0.7)).reshape(3, 2, 4, 2).astype(np.float64)
        noise = np.random.default_rng(100 + seed)
        measured = [Noisy(s, marginal(joint, s) + noise.normal(0, 15, marginal(joint, s).shape), 15.0) for s in SETS]
        t0 = time.perf_counter()
        f = fit(measured, CARDS, iterations=3000, tolerance=1e-13)
        mine_s = time.perf_counter() - t0
        dom = Domain(NAMES, tuple(CARDS[n] for n in NAMES))
        ms = [LinearMeasurement(m.counts.ravel(), m.attributes, stddev=m.sigma) for m in measured]
        estimation.MirrorDescent().estimate(dom, ms, iters=3000)  # compile once
        t0 = time.perf_counter()
        model = estimation.MirrorDescent().estimate(dom, ms, iters=3000)
        theirs_s = time.perf_counter() - t0

        def theirs(s: tuple[str, ...], model: object = model) -> np.ndarray:
            return np.asarray(model.project(s).datavector(flatten=False))  # type: ignore[attr-defined]

        def loss(get: object, measured: list[Noisy] = measured) -> float:
            return sum(float(((get(m.attributes) - m.counts) ** 2).sum()) / (2 * m.sigma**2) for m in measured)  # type: ignore[operator]

        gap = max(float(np.abs(f.marginal(s) - theirs(s)).max()) for s in SETS)
        print(f"{seed} | {gap:.1e} | {loss(f.marginal):.10f} | {loss(theirs):.10f} | {mine_s:.2f} | {theirs_s:.2f}")


def fixture(path: str) -> None:
    """Write the test oracle ``tests/fixtures/mbi_fit.json``: for two seeds, the noisy
    marginals (as above) and mbi's fitted marginals on them (float64, 5,000 steps), which
    ``tests/test_noisy_fit.py`` compares versapub's fit with (mbi is not a test dependency:
    it pulls JAX)."""
    import json

    import jax

    jax.config.update("jax_enable_x64", True)
    from mbi import Domain, LinearMeasurement, estimation

    cases = []
    for seed in range(2):
        rng = np.random.default_rng(seed)
        joint = rng.multinomial(2000, rng.dirichlet(np.ones(48) * 0.7)).reshape(3, 2, 4, 2).astype(np.float64)
        noise = np.random.default_rng(100 + seed)
        measured = [(s, marginal(joint, s) + noise.normal(0, 15, marginal(joint, s).shape)) for s in SETS]
        dom = Domain(NAMES, tuple(CARDS[n] for n in NAMES))
        ms = [LinearMeasurement(y.ravel(), s, stddev=15.0) for s, y in measured]
        model = estimation.MirrorDescent().estimate(dom, ms, iters=5000)
        fitted = {"+".join(s): np.asarray(model.project(s).datavector(flatten=False)).tolist() for s in SETS}
        cases.append(
            {"seed": seed, "sigma": 15.0, "measured": {"+".join(s): y.tolist() for s, y in measured}, "mbi": fitted}
        )
    from importlib.metadata import version

    meta = {"mbi": version("mbi"), "jax": jax.__version__, "cards": CARDS, "cases": cases}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(meta, f)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--fixture":
        fixture(sys.argv[2])
    else:
        main()
