"""Private-PGM's MST (``mechanisms/mst.py`` of ``ryan112358/private-pgm``, commit 4d2b3c5,
Apache-2.0), ported to the API of ``mbi`` 2.0 for ``benchmarks/dp.py`` (issue 52), in float64 unless
``--float32`` (JAX's default): the same
steps — a third of rho on the one-way marginals, their rare values compressed (noisy count
below 3 sigma), a third on the exponential mechanism's spanning tree (2,500 mirror-descent
steps for the scores), a third on the chosen pairs, 10,000 mirror-descent steps, synthetic
data by mbi's default randomized rounding, decompressed uniformly. Noise from numpy (as the
original). ``mbi`` needs JAX: run with mbi importable (see ``benchmarks/dp.py``).

    python benchmarks/dp_reference.py DATA.csv DOMAIN.json OUT_DIR --seed 0 [--epsilon 1 --delta 1e-9]

writes ``OUT_DIR/synthetic.csv``, ``OUT_DIR/timing.json`` (the seconds and peak memory of
the command's work: reading, MST, synthetic records written) and ``OUT_DIR/model.npz`` (the
fitted model's 3-way marginals, for the model-to-model comparison; computed after the timing:
mbi compiles a projection per marginal shape)."""

from __future__ import annotations

import time

START = time.perf_counter()  # the whole command's time runs from here (interpreter start-up aside)

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402


def cdp_rho(eps: float, delta: float) -> float:
    """Private-PGM's ``cdp2adp.cdp_rho``: the largest rho whose (eps, delta) bound holds."""
    import math

    def cdp_delta(rho: float) -> float:
        amin, amax = 1.01, (eps + 1) / (2 * rho) + 2
        for _ in range(1000):
            alpha = (amin + amax) / 2
            deriv = (2 * alpha - 1) * rho - eps + math.log1p(-1.0 / alpha)
            amin, amax = (alpha, amax) if deriv < 0 else (amin, alpha)
        d = math.exp((alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)) / (alpha - 1.0)
        return min(d, 1.0)

    lo, hi = 0.0, eps + 1
    for _ in range(1000):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdp_delta(mid) <= delta else (lo, mid)
    return lo


def mst(data, epsilon: float, delta: float, prng: np.random.Generator):  # type: ignore[no-untyped-def]
    from mbi import estimation

    rho = cdp_rho(epsilon, delta)
    sigma = np.sqrt(3 / (2 * rho))
    log1 = measure(data, [(c,) for c in data.domain.attributes], sigma, prng)
    data, log1, mapping = compress_domain(data, log1)
    cliques = select(data, rho / 3.0, log1, prng)
    log2 = measure(data, cliques, sigma, prng)
    est = estimation.MirrorDescent().estimate(data.domain, log1 + log2, iters=10000)
    return est, mapping, est.synthetic_data().decompress(mapping)


def measure(data, cliques, sigma, prng):  # type: ignore[no-untyped-def]
    from mbi import LinearMeasurement

    wgt = 1 / np.sqrt(len(cliques))
    out = []
    for proj in cliques:
        x = data.project(proj).datavector()
        out.append(LinearMeasurement(x + prng.normal(0, sigma / wgt, size=x.size), proj, sigma / wgt))
    return out


def compress_domain(data, measurements):  # type: ignore[no-untyped-def]
    mapping = {}
    for m in measurements:
        sup = np.asarray(m.noisy_measurement) >= 3 * m.stddev
        if not sup.all():
            code = np.full(sup.size, sup.sum(), dtype=np.int64)
            code[sup] = np.arange(sup.sum())
            mapping[m.clique[0]] = code
    return data.compress(mapping), [m.compress(mapping, data.domain) for m in measurements], mapping


def select(data, rho, log, prng):  # type: ignore[no-untyped-def]
    from mbi import estimation
    from scipy.cluster.hierarchy import DisjointSet
    from scipy.special import logsumexp

    est = estimation.MirrorDescent().estimate(data.domain, log, iters=2500)
    candidates = list(itertools.combinations(data.domain.attributes, 2))
    weights = {
        (a, b): np.linalg.norm(data.project([a, b]).datavector() - np.asarray(est.project([a, b]).datavector()), 1)
        for a, b in candidates
    }
    ds = DisjointSet(data.domain.attributes)
    r = len(data.domain.attributes)
    eps = np.sqrt(8 * rho / (r - 1))
    edges = []
    for _ in range(r - 1):
        candidates = [e for e in candidates if not ds.connected(*e)]
        scores = 0.5 * eps * np.array([weights[e] for e in candidates])
        e = candidates[prng.choice(len(candidates), p=np.exp(scores - logsumexp(scores)))]
        ds.merge(*e)
        edges.append(e)
    return edges


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("domain")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--float32", action="store_true", help="JAX's default precision (mbi warns it may stall)")
    args = ap.parse_args()
    import jax

    jax.config.update("jax_enable_x64", not args.float32)
    import pandas as pd
    from mbi import Dataset, Domain

    dom = json.loads(Path(args.domain).read_text())
    df = pd.read_csv(args.data)
    data = Dataset({c: df[c].to_numpy() for c in dom}, Domain(list(dom), list(dom.values())))
    est, mapping, synth = mst(data, args.epsilon, args.delta, np.random.default_rng(args.seed))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({c: np.asarray(synth.data[c]) for c in dom}).to_csv(out / "synthetic.csv", index=False)
    # the command's work ends here; what follows only serves the model-to-model comparison
    done = {
        "seconds": time.perf_counter() - START,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    (out / "timing.json").write_text(json.dumps(done))
    np.savez_compressed(out / "model.npz", **model_marginals(est, mapping, list(dom)))


def model_marginals(est, mapping: dict, names: list[str]) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The fitted model's 3-way marginals over the declared domains: its junction tree's
    clique marginals (one mbi projection each), the closed form prod mu_C / prod mu_S summed
    down by ``numpy.einsum``, merged values spread back equally (as the decompression draws)."""
    from mbi import junction_tree

    tree, _ = junction_tree.make_junction_tree(est.domain, est.cliques)
    cliques = [tuple(c) for c in tree.nodes]
    mu = {c: np.asarray(est.project(list(c)).datavector(flatten=False), dtype=np.float64) for c in cliques}
    index = {a: i for i, a in enumerate(names)}
    operands: list = []
    for c in cliques:
        operands += [mu[c] / mu[c].sum(), [index[a] for a in c]]
    for a, b in tree.edges:
        sep = [x for x in a if x in b]
        if sep:
            s = mu[tuple(a)].sum(axis=tuple(i for i, x in enumerate(a) if x not in sep)) / mu[tuple(a)].sum()
            operands += [np.divide(1.0, s, out=np.zeros_like(s), where=s > 0), [index[x] for x in sep]]
    out = {}
    for w in itertools.combinations(names, 3):
        m = np.einsum(*operands, [index[a] for a in w], optimize="greedy")
        for axis, a in enumerate(w):
            if a in mapping:
                code = mapping[a]
                shape = [1] * m.ndim
                shape[axis] = len(code)
                m = np.take(m, code, axis=axis) / np.bincount(code).astype(np.float64)[code].reshape(shape)
        out["|".join(w)] = m
    return out


if __name__ == "__main__":
    main()
