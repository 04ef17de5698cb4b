"""A generalized count table's rows spread over the leaves they cover, part by part on the
cluster (the release model of a ``generalized`` table out of core: Kifer & Gehrke's
uniform spreading, :class:`versapub.model.generalized.GeneralizedFactor` in memory).

A row whose published values cover ``V = Π_a size_a`` combinations of leaves spreads its
count evenly over them.  These functions run inside the workers on one part (codes and
``count``); the attributes' spans (first and last leaf position of every published code)
are computed by the caller from the table's listings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _volume(df: Any, sizes: Mapping[str, Floats]) -> Floats:
    v = np.ones(len(df), dtype=np.float64)
    for a, size in sizes.items():
        v *= size[df[a].to_numpy()]
    return v


def _key(df: Any, others: Sequence[tuple[str, int]]) -> IntArray:
    key = np.zeros(len(df), dtype=np.int64)
    for a, card in others:
        key = key * card + df[a].to_numpy().astype(np.int64)
    return key


def part_roots(
    df: Any, sizes: Mapping[str, Floats], roots: Mapping[str, npt.NDArray[np.bool_]], others: Sequence[tuple[str, int]]
) -> tuple[IntArray, Floats, Floats]:
    """The part's rows whose every generalized value covers the whole domain (a suppressed
    class): their key over the other columns, records and records per covered point."""
    if not roots or not len(df):
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    at = np.ones(len(df), dtype=bool)
    for a, r in roots.items():
        at &= r[df[a].to_numpy()]
    c = df["count"].to_numpy(dtype=np.float64)[at]
    return _key(df, others)[at], c, c / _volume(df, sizes)[at]


def part_log_sum(
    df: Any,
    sizes: Mapping[str, Floats],
    roots: Mapping[str, npt.NDArray[np.bool_]],
    others: Sequence[tuple[str, int]],
    root_keys: IntArray,
    root_density: Floats,
) -> float:
    """``Σ c ln(c / V + R(key))`` over the part's rows that are not at the root: a record's
    estimate is its row's density plus that of the root row of its other values (``R``; a
    row's box is otherwise disjoint from every other's: Mondrian's partitions, a full-domain
    node's classes)."""
    if not len(df):
        return 0.0
    c = df["count"].to_numpy(dtype=np.float64)
    dens = c / _volume(df, sizes)
    at = np.ones(len(df), dtype=bool)
    for a, r in roots.items():
        at &= r[df[a].to_numpy()]
    if len(root_keys):
        key = _key(df, others)
        i = np.minimum(np.searchsorted(root_keys, key), len(root_keys) - 1)
        dens = dens + np.where(root_keys[i] == key, root_density[i], 0.0)
    keep = ~at if roots else np.ones(len(df), dtype=bool)
    return float(np.sum(c[keep] * np.log(dens[keep])))


def part_queries(df: Any, queries: Sequence[Mapping[str, IntArray]], spans: Mapping[str, tuple[Any, ...]]) -> Floats:
    """Per query (``{attribute: allowed leaf positions}``), the records the part's rows put
    on the allowed leaves: each row's count times, per condition, the share of its covered
    leaves allowed."""
    c = df["count"].to_numpy(dtype=np.float64)
    rows = {a: (first[df[a].to_numpy()], last[df[a].to_numpy()] + 1, m) for a, (first, last, m) in spans.items()}
    out = np.zeros(len(queries), dtype=np.float64)
    for i, q in enumerate(queries):
        w = c.copy()
        for a, allowed in q.items():
            f, stop, m = rows[a]
            prefix = np.zeros(m + 1, dtype=np.float64)
            prefix[np.asarray(allowed, dtype=np.int64) + 1] = 1.0
            prefix = np.cumsum(prefix)
            w *= (prefix[stop] - prefix[f]) / (stop - f)
        out[i] = float(w.sum())
    return out


def part_marginal(df: Any, name: str, first: IntArray, last: IntArray, m: int) -> Floats:
    """Records per leaf position of ``name``, each row's count spread over its leaves."""
    f, stop = first[df[name].to_numpy()], last[df[name].to_numpy()] + 1
    w = df["count"].to_numpy(dtype=np.float64) / (stop - f)
    return np.cumsum(np.bincount(f, weights=w, minlength=m + 1) - np.bincount(stop, weights=w, minlength=m + 1))[:m]
