"""Brute-force oracles for collections of anonymized marginals on tiny domains, written
from the definitions only (no induced attributes, no junction trees):

* the maximum-entropy distribution over the *leaf* domain by iterative proportional
  fitting from the uniform joint, each marginal a constraint on the sums over the leaves
  its generalized cells cover;
* every integer table over the leaf domain (the sensitive attribute included) with ``n``
  records, filtered by the marginals' counts, for the sharp bounds of k-combinatorial
  anonymity (Definition 7: tables consistent with the whole marginals).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.marginals.spec import Marginal
from versapub.privacy.guarantees.base import Guarantee, Histograms


def random_instance(
    rng: np.random.Generator, n: int, m_sens: int = 3, n_attrs: int = 3, max_card: int = 4
) -> tuple[EncodedTable, dict[str, Hierarchy]]:
    """A random table over ``a0 .. a{n_attrs-1}`` and ``s`` with random two- or
    three-level hierarchies (leaves, groups, ``*``)."""
    data: dict[str, list[str]] = {}
    hier: dict[str, Hierarchy] = {}
    for j in range(n_attrs):
        a = f"a{j}"
        card = int(rng.integers(2, max_card + 1))
        codes = rng.integers(0, card, size=n)
        data[a] = [f"{a}v{c}" for c in codes]
        groups = rng.integers(0, max(1, card // 2) + 1, size=card)
        rows = [[f"{a}v{c}", f"{a}g{groups[c]}", "*"] for c in range(card)]
        if rng.random() < 0.5:
            rows = [[r[0], "*"] for r in rows]
        hier[a] = Hierarchy.from_rows(a, rows)
    w = rng.dirichlet(np.ones(m_sens))
    data["s"] = [f"s{c}" for c in rng.choice(m_sens, size=n, p=w)]
    return EncodedTable.from_columns(data), hier


def random_marginals(
    rng: np.random.Generator, hier: dict[str, Hierarchy], count: int, with_s: float = 0.7
) -> tuple[Marginal, ...]:
    out = []
    attrs = sorted(hier)
    for _ in range(count):
        k = int(rng.integers(1, len(attrs) + 1))
        pick = [attrs[i] for i in sorted(rng.choice(len(attrs), size=k, replace=False))]
        levels = [int(rng.integers(0, hier[a].height - 1)) for a in pick]
        if rng.random() < with_s:
            pick.append("s")
            levels.append(0)
        out.append(Marginal(tuple(pick), tuple(levels)))
    return tuple(out)


def _node(hier: dict[str, Hierarchy], a: str, level: int, leaves: Sequence[str]) -> np.ndarray:
    """Each leaf's node label at ``level`` (leaves themselves at 0)."""
    if a not in hier:
        return np.asarray(leaves, dtype=object)
    mapping = hier[a].mapping(level)
    return np.asarray([mapping[v] for v in leaves], dtype=object)


def maxent_joint(
    table: EncodedTable,
    hier: dict[str, Hierarchy],
    marginals: Sequence[Marginal],
    attrs: Sequence[str],
    residual: list[float] | None = None,
) -> np.ndarray:
    """The maximum-entropy joint over the leaves of ``attrs`` (axes in that order); IPF until
    every marginal is met within 1e-13 or 5,000 sweeps (``residual`` receives the largest
    marginal error left)."""
    leaves = [list(table.column(a).values.astype(str)) for a in attrs]
    shape = tuple(len(v) for v in leaves)
    grid = np.indices(shape).reshape(len(shape), -1)
    q = np.full(grid.shape[1], 1.0 / grid.shape[1])
    cons = []
    n = table.n_rows
    for m in marginals:
        parts_cells, parts_data = [], []
        for a, lv in zip(m.attributes, m.levels, strict=True):
            j = attrs.index(a)
            node = _node(hier, a, lv, leaves[j])
            parts_cells.append(node[grid[j]])
            parts_data.append(_node(hier, a, lv, list(table.column(a).values.astype(str)))[table.codes(a)])
        cell_keys = list(zip(*parts_cells, strict=True))
        data_keys = list(zip(*parts_data, strict=True))
        uniq = {key: i for i, key in enumerate(sorted(set(cell_keys) | set(data_keys)))}
        idx = np.array([uniq[key] for key in cell_keys])
        target = np.bincount([uniq[key] for key in data_keys], minlength=len(uniq)) / n
        cons.append((idx, target))
    for _ in range(5000):
        err = 0.0
        for idx, target in cons:
            cur = np.bincount(idx, weights=q, minlength=len(target))
            q = q * np.divide(target, cur, out=np.zeros_like(target), where=cur > 0)[idx]
            err = max(err, float(np.abs(cur - target).max()))
        if err < 1e-13:
            break
    if residual is not None:
        residual.append(err)
    return q.reshape(shape)


def diverse_cells(joint: np.ndarray, guarantee: Guarantee) -> np.ndarray:
    """Per non-sensitive cell (sensitive attribute the last axis): satisfied, or no mass."""
    m = joint.shape[-1]
    flat = joint.reshape(-1, m)
    tot = flat.sum(axis=1)
    ok = np.ones(len(flat), dtype=bool)
    live = np.flatnonzero(tot > 1e-12)
    v = np.round(flat[live] / tot[live, None] * 1e6, 3)  # ties stay ties despite IPF's last digits
    g, s = np.nonzero(v > 0)
    ok[live] = guarantee.groups_satisfied(Histograms(g, v[g, s], len(live), s))
    return ok.reshape(joint.shape[:-1])


def tables_of(n: int, cells: int, chunk: int = 1 << 16):
    """Every integer table with ``n`` records over ``cells`` cells, in chunks of rows."""
    combos = itertools.combinations_with_replacement(range(cells), n)
    while True:
        block = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, chunk)), dtype=np.int64)
        if not len(block):
            return
        rows = block.reshape(-1, n)
        t = np.zeros((len(rows), cells), dtype=np.int64)
        np.add.at(t, (np.repeat(np.arange(len(rows)), n), rows.ravel()), 1)
        yield t


def sharp_upper_bounds(
    table: EncodedTable,
    hier: dict[str, Hierarchy],
    marginals: Sequence[Marginal],
    attrs: Sequence[str],
    sensitive: str = "s",
) -> np.ndarray:
    """``U(t)`` for every non-sensitive leaf cell ``t`` (Kifer & Gehrke, Definition 7): the
    largest ``Σ_s T(t, s)`` of any integer table consistent with the *whole* marginals, the
    sensitive attribute included — every table over the leaf domain of ``attrs`` and the
    sensitive attribute enumerated."""
    full = [*attrs, sensitive]
    leaves = [list(table.column(a).values.astype(str)) for a in full]
    shape = tuple(len(v) for v in leaves)
    grid = np.indices(shape).reshape(len(shape), -1)
    cells = grid.shape[1]
    n = table.n_rows
    checks = []
    for m in marginals:
        pairs = [(a, lv) for a, lv in zip(m.attributes, m.levels, strict=True) if a in full]
        cell_keys = [
            tuple(_node(hier, a, lv, leaves[full.index(a)])[grid[full.index(a)][c]] for a, lv in pairs)
            for c in range(cells)
        ]
        data_keys = [
            tuple(_node(hier, a, lv, leaves[full.index(a)])[table.codes(a)[r]] for a, lv in pairs) for r in range(n)
        ]
        uniq = sorted(set(cell_keys) | set(data_keys))
        pos = {k: i for i, k in enumerate(uniq)}
        onto = np.zeros((cells, len(uniq)), dtype=np.int64)
        onto[np.arange(cells), [pos[k] for k in cell_keys]] = 1
        checks.append((onto, np.bincount([pos[k] for k in data_keys], minlength=len(uniq))))
    best_t = np.zeros(cells // shape[-1], dtype=np.int64)
    for t in tables_of(n, cells):
        ok = np.ones(len(t), dtype=bool)
        for onto, want in checks:
            ok &= (t @ onto == want).all(axis=1)
        if ok.any():
            best_t = np.maximum(best_t, t[ok].reshape(int(ok.sum()), -1, shape[-1]).sum(axis=2).max(axis=0))
    return best_t.reshape(shape[:-1])
