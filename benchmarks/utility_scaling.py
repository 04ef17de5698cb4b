"""Utility measurement at scale (issue: KL of a 10^6 x 18 release <= 5 s; 1,000 queries <= 20 s).

Part 1: texas_like releases (9 rules, l = 10, UAD + Anatomy) at 10^5 and 10^6 records are
written, loaded back from their files, and measured: model load, KL-divergence over the
original's distinct records, and a 1,000-query workload (qd = 3, p = 0.4).

Part 2, side by side in the same run: the closed-form junction-tree estimate against a
generic dense IPF producing the same estimate, on the embedded Adult data (7 attributes)
for the UAD release and for a chain of three overlapping plain tables — time of each and
their largest difference.

    python benchmarks/utility_scaling.py [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

import versapub
from versapub.anonymizers import publish_plain
from versapub.datasets import TEXAS_LIKE_RULES, adult, adult_config, texas_like
from versapub.kinds.build import factor_of, model_from_release
from versapub.model import kl_divergence, make_workload, relative_error


def ALL_ALLOWED(table: versapub.EncodedTable) -> versapub.ColumnRoles:
    """Every column may be near-unique, and those no rule names are insensitive: the benchmark measures speed."""
    return versapub.ColumnRoles(allow_unique=table.names, others="insensitive")


def part1(sizes: list[int]) -> None:
    print(
        f"{'n':>9} {'tables':>6} {'load s':>7} {'KL s':>6} {'KL':>9} {'distinct':>9} {'1000 queries s':>15} "
        f"{'mean rel.err':>12} {'median':>8}"
    )
    for n in sizes:
        table = texas_like(n, seed=0)
        rel = versapub.publish(table, TEXAS_LIKE_RULES, l=10, seed=0, columns=ALL_ALLOWED(table))
        with tempfile.TemporaryDirectory() as tmp:
            versapub.write_release(rel, Path(tmp) / "r")
            t0 = time.perf_counter()
            model = versapub.load_release(Path(tmp) / "r")
            load_s = time.perf_counter() - t0
        kl = kl_divergence(model, table)
        w = make_workload(table, 1000, 3, 0.4, seed=1)
        re_ = relative_error(model, table, w)
        print(
            f"{n:>9} {len(rel.tables):>6} {load_s:>7.2f} {kl.seconds:>6.2f} {kl.value:>9.4f} {kl.n_distinct:>9} "
            f"{re_.seconds:>15.2f} {re_.mean:>12.4f} {re_.median:>8.4f}",
            flush=True,
        )


def dense_ipf(model: versapub.ReleaseModel, tol: float = 1e-12, max_iter: int = 1000) -> tuple[np.ndarray, int]:
    """Generic IPF over the full joint, fitting every table's own distribution."""
    attrs = model.attributes
    shape = tuple(model.cards[a] for a in attrs)
    targets = []
    for f in model.factors:
        m = f.weighted({}, [], f.attrs)
        t = np.zeros(tuple(model.cards[a] for a in f.attrs))
        t[tuple(m.codes)] = m.values
        perm = [f.attrs.index(a) for a in attrs if a in f.attrs]
        axes = tuple(i for i, a in enumerate(attrs) if a not in f.attrs)
        targets.append((axes, np.expand_dims(np.transpose(t, perm), axes)))
    q = np.full(shape, 1.0 / math.prod(shape))
    for it in range(1, max_iter + 1):
        err = 0.0
        for axes, t in targets:
            cur = q.sum(axis=axes, keepdims=True)
            err = max(err, float(np.abs(cur - t).max()))
            q = q * np.divide(t, cur, out=np.zeros_like(cur), where=cur > 0)
        if err < tol:
            return q, it
    return q, max_iter


def _compare(name: str, model: versapub.ReleaseModel) -> None:
    t0 = time.perf_counter()
    grids = np.meshgrid(*[np.arange(model.cards[a]) for a in model.attributes], indexing="ij")
    closed = model.prob({a: g.ravel() for a, g in zip(model.attributes, grids, strict=True)}).reshape(grids[0].shape)
    closed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ipf, iters = dense_ipf(model)
    ipf_s = time.perf_counter() - t0
    print(
        f"{name} ({math.prod(closed.shape)} cells, {len(model.factors)} tables): closed form over every cell "
        f"{closed_s:.3f} s; dense IPF {ipf_s:.3f} s ({iters} sweeps); max |difference| "
        f"{np.abs(closed - ipf).max():.2e}"
    )


def part2() -> None:
    table = adult()
    print()
    rel = versapub.publish(table, adult_config().rules, l=2, seed=1, columns=ALL_ALLOWED(table))
    _compare("Adult, UAD release", model_from_release(rel))
    # An overlapping (GD-like) decomposable schema of plain tables on the same data.
    chain = [
        ("age", "sex", "education"),
        ("education", "occupation", "salary-class"),
        ("salary-class", "marital-status", "native-country"),
    ]
    cards = {c.name: c.cardinality for c in table.columns}
    factors = []
    for attrs in chain:
        factors.append(factor_of(publish_plain(table.select(attrs)), table.n_rows, cards))
    domains = {c.name: c.values for c in table.columns}
    _compare("Adult, chain of three overlapping plain tables", versapub.ReleaseModel(factors, domains, table.n_rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10**5, 10**6])
    args = ap.parse_args()
    part1(args.sizes)
    part2()


if __name__ == "__main__":
    main()
