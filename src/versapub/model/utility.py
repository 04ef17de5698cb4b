"""Utility of a release, measured as the versatile-publishing paper does (§5.1, §6.1).

* KL-divergence ``D(p || p~) = Σ_i p_i log(p_i / p~_i)`` over the distinct records of the
  original table (equation 3): ``p`` the original's empirical distribution, ``p~`` the
  release model.  A record the model gives probability 0 makes it infinite; the number of
  such records is reported, never hidden.
* Relative error of a COUNT workload: ``n_queries`` random queries
  ``COUNT(*) WHERE A1 IN V1 AND ... AND Aqd IN Vqd`` on ``qd`` distinct random attributes,
  each ``Vi`` a random ``p``-fraction (at least one value) of ``Ai``'s domain in the
  original; ``|Act - Est| / Act``.  Queries with ``Act = 0`` are redrawn and counted.
  The workload depends only on the original table, the parameters and the seed, so every
  release of the same table is compared on identical queries.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import Grouping, group_rows
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.errors import InputError
from versapub.model.maxent import ReleaseModel
from versapub.model.sparse import Codes, Floats

Progress = Callable[[str, int, int], None]

#: Redraws allowed per query before giving up on finding a non-empty query.
MAX_REDRAWS_PER_QUERY = 100


def original_mismatch(
    model: ReleaseModel,
    original: EncodedTable,
    ignore: Collection[str] = (),
    attributes: Sequence[str] | None = None,
) -> list[str]:
    """How ``original`` differs from the table the release was published from, as far as
    the release shows: the number of records, and per attribute (those in ``attributes``,
    default all the release's; but those in ``ignore``: perturbed before anonymizing) the
    records whose value the release never publishes (each a sentence; empty when nothing
    differs)."""
    out = []
    if original.n_rows != model.n and not model.measurements:  # a noisy release's n is an estimate
        out.append(f"the original has {original.n_rows} records, the release {model.n}")
    attrs = list(model.attributes if attributes is None else attributes)
    missing = [a for a in attrs if a not in original]
    if missing:
        out.append(f"the original lacks the release's attribute(s) {', '.join(map(repr, missing))}")
    mapping = to_model_codes(model, original, attrs) if not missing else {}
    for a, codes in mapping.items():
        if a in ignore:
            continue
        unknown = np.flatnonzero(codes < 0)
        if len(unknown):
            counts = original.column(a).counts()[unknown]
            shown = ", ".join(repr(str(v)) for v in original.column(a).values[unknown[:3]])
            out.append(
                f"attribute {a!r}: {int(counts.sum())} record(s) hold {len(unknown)} value(s) the release never "
                f"publishes (e.g. {shown})"
            )
    if out:
        out = [
            "the original does not match the release, so what follows compares different tables: "
            + "; ".join(out)
            + ". Is it the file the release was published from, read with the same hierarchies and missing policy?"
        ]
    return out


def projected(model: ReleaseModel, original: EncodedTable) -> EncodedTable:
    """``original`` restricted to the release's attributes (extra columns are ignored)."""
    if set(original.names) - set(model.attributes) and all(a in original for a in model.attributes):
        return original.select(model.attributes)
    return original


def distinct_records(original: EncodedTable, attrs: Sequence[str]) -> Grouping:
    """The original's distinct records over ``attrs`` with their counts (one grouping shared
    by the KL-divergence and its reference)."""
    return group_rows([original.codes(a) for a in attrs], [original.cardinality(a) for a in attrs])


def independence_kl(original: EncodedTable, distinct: Grouping | None = None) -> float:
    """KL-divergence of the product of the original's one-attribute marginals from the
    original: the KL a release would have that published every attribute alone (a
    reference for how much a release keeps of the attributes' dependence); ``distinct``:
    :func:`distinct_records` over all of its attributes, when already computed."""
    attrs = list(original.names)
    g = distinct or distinct_records(original, attrs)
    p = g.counts / g.counts.sum()
    log_q = np.zeros(len(p))
    for i, a in enumerate(attrs):
        marg = original.column(a).counts() / original.n_rows
        log_q += np.log(marg[g.keys[i]])
    return max(float(np.sum(p * (np.log(p) - log_q))), 0.0)


def to_model_codes(
    model: ReleaseModel, original: EncodedTable, attributes: Sequence[str] | None = None
) -> dict[str, Codes]:
    """Per attribute (``attributes``, default all the release's): original dictionary code ->
    model domain code (-1: value not in the release)."""
    attrs = list(model.attributes if attributes is None else attributes)
    missing = [a for a in attrs if a not in original]
    if missing:
        raise InputError(
            f"The original table lacks the release's attribute(s) {missing}; pass the table the "
            "release was published from (with the same hierarchies applied)."
        )
    out = {}
    for a in attrs:
        dom = model.domains[a].astype(str)  # both sorted by text: map by binary search
        vals = original.column(a).values.astype(str)
        idx = np.minimum(np.searchsorted(dom, vals), max(len(dom) - 1, 0))
        hit = (dom[idx] == vals) if len(dom) else np.zeros(len(vals), dtype=bool)
        out[a] = np.where(hit, idx, -1).astype(np.int64)
    return out


@dataclass(frozen=True)
class KLResult:
    """Equation 3's KL-divergence (infinite when the model gives an original record
    probability 0: a DP, PRAM'd or suppressed release may), and beside it what stays finite:
    the KL on the shared support (the original's distribution renormalized over the records
    the model gives a positive probability) and the original's mass the model gives none
    (``lost_mass``), so such releases can be compared (issue 66)."""

    value: float
    n_distinct: int
    n_zero_probability: int
    seconds: float
    shared: float = 0.0
    lost_mass: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "kl_divergence": None if math.isinf(self.value) else self.value,
            "kl_infinite": math.isinf(self.value),
            "kl_shared_support": self.shared,
            "lost_mass": self.lost_mass,
            "distinct_records": self.n_distinct,
            "records_with_zero_model_probability": self.n_zero_probability,
        }


#: Distinct records evaluated per step of :func:`kl_divergence` (memory: about 150 bytes per
#: record and attribute in a step, whatever the table's size).
KL_CHUNK = 1 << 19


def kl_divergence(model: ReleaseModel, original: EncodedTable, distinct: Grouping | None = None) -> KLResult:
    """Equation 3 over the original's distinct records (one model evaluation per distinct
    record), summed over chunks of :data:`KL_CHUNK` distinct records (their int32 codes
    mapped to the model's domains chunk by chunk, so 10^7 records fit); ``distinct``:
    :func:`distinct_records` over the model's attributes, when already computed."""
    t0 = time.perf_counter()
    attrs = list(model.attributes)
    g = distinct or distinct_records(original, attrs)
    mapping = to_model_codes(model, original)
    total = float(g.counts.sum())
    value, zero, lost = 0.0, 0, 0.0
    for start in range(0, len(g.counts), KL_CHUNK):
        part = slice(start, start + KL_CHUNK)
        records = {a: mapping[a][g.keys[j][part]] for j, a in enumerate(attrs)}
        known = np.logical_and.reduce([records[a] >= 0 for a in attrs])
        q = np.zeros(len(known), dtype=np.float64)
        if known.any():
            q[known] = model.prob({a: records[a][known] for a in attrs})
        p = g.counts[part] / total
        bad = q <= 0
        zero += int(bad.sum())
        lost += float(p[bad].sum())
        value += float(np.sum(p[~bad] * (np.log(p[~bad]) - np.log(q[~bad]))))
    kept = 1.0 - lost  # the shared support's KL: p renormalized over the records the model can hold
    shared = max(value / kept - math.log(kept), 0.0) if kept > 0 else math.inf
    full = math.inf if zero else max(value, 0.0)
    return KLResult(full, len(g.counts), zero, time.perf_counter() - t0, shared, lost)


@dataclass(frozen=True)
class Workload:
    """Queries as ``{attribute: allowed original codes}`` with their true answers."""

    queries: list[dict[str, Codes]]
    actual: npt.NDArray[np.int64]
    qd: int
    p: float
    seed: int
    redrawn: int


def check_workload(n_attributes: int, n_queries: int, qd: int, p: float) -> None:
    """The workload's parameters are valid (one-paragraph errors)."""
    if not 1 <= qd <= n_attributes:
        raise InputError(f"qd must be between 1 and the number of attributes ({n_attributes}), got {qd}.")
    if not 0 < p <= 1:
        raise InputError(f"p must be in (0, 1], got {p}.")
    if n_queries < 1:
        raise InputError(f"The workload needs at least one query, got {n_queries}.")


def draw_query(
    rng: np.random.Generator, attrs: list[str], cards: dict[str, int], qd: int, p: float
) -> dict[str, Codes]:
    """One random query: ``qd`` distinct attributes, each a random ``p``-fraction (at least
    one value) of its domain (the module docstring)."""
    chosen = rng.choice(len(attrs), size=qd, replace=False)
    q: dict[str, Codes] = {}
    for j in sorted(chosen.tolist()):
        a = attrs[j]
        card = cards[a]
        k = max(1, round(p * card))
        q[a] = np.sort(rng.choice(card, size=k, replace=False)).astype(np.int64)
    return q


Drawn = tuple[list[dict[str, Codes]], npt.NDArray[np.int64], int]


def draw_queries(
    source: Source, n_queries: int, qd: int, p: float, seed: int, progress: Progress | None = None
) -> Drawn:
    """The workload's draws over any table of the backend seam (the module docstring):
    queries drawn in order from ``default_rng(seed)``, empty ones redrawn, the first
    ``n_queries`` non-empty kept, with their true answers and the number redrawn. Answered
    in batches (``source.count_queries``: in memory, or part by part on a cluster); the
    queries kept do not depend on the batch size."""
    attrs = list(source.names)
    check_workload(len(attrs), n_queries, qd, p)
    cards = {a: source.cardinality(a) for a in attrs}
    rng = np.random.default_rng(seed)
    queries: list[dict[str, Codes]] = []
    actual: list[int] = []
    redrawn = 0
    while len(queries) < n_queries:
        batch = [draw_query(rng, attrs, cards, qd, p) for _ in range(max(16, int(1.2 * (n_queries - len(queries)))))]
        if progress is not None:
            progress(
                f"the workload's true answers ({len(queries)} of {n_queries} queries so far)", len(queries), n_queries
            )
        for q, act in zip(batch, source.count_queries(batch).tolist(), strict=True):
            if len(queries) == n_queries:
                break
            if act == 0:
                redrawn += 1
                continue
            queries.append(q)
            actual.append(int(act))
        if redrawn > MAX_REDRAWS_PER_QUERY * n_queries:
            raise InputError(
                f"Could not draw {n_queries} non-empty queries with qd = {qd}, p = {p} ({redrawn} empty draws); "
                "raise p or lower qd."
            )
    return queries, np.asarray(actual, dtype=np.int64), redrawn


def make_workload(
    original: EncodedTable, n_queries: int = 1000, qd: int = 3, p: float = 0.4, seed: int = 1
) -> Workload:
    """Random COUNT queries over ``original`` (see the module docstring); seeded."""
    queries, actual, redrawn = draw_queries(original, n_queries, qd, p, seed)
    return Workload(queries, actual, qd, p, seed, redrawn)


#: A query whose true count is below this is a "small count" (its relative error is volatile).
SMALL_COUNT = 10


@dataclass(frozen=True)
class RelativeError:
    mean: float
    median: float
    errors: npt.NDArray[np.float64] = field(repr=False)
    estimates: npt.NDArray[np.float64] = field(repr=False)
    n_queries: int = 0
    redrawn: int = 0
    seconds: float = 0.0
    #: The queries' true counts (a relative error on a count below :data:`SMALL_COUNT` is large
    #: for a small absolute error: the mean follows them).
    actual: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0), repr=False)

    def to_json(self) -> dict[str, Any]:
        top = max(float(np.quantile(self.errors, 0.99)), 1e-9) if len(self.errors) else 1.0
        counts, edges = np.histogram(np.minimum(self.errors, top), bins=20, range=(0.0, top))
        small = (self.actual < SMALL_COUNT) if len(self.actual) == len(self.errors) else np.zeros(0, dtype=bool)
        return {
            "mean": self.mean,
            "median": self.median,
            "p90": float(np.quantile(self.errors, 0.9)) if len(self.errors) else 0.0,
            "small_count": SMALL_COUNT,
            "share_small_counts": float(small.mean()) if len(small) else None,
            "median_large_counts": float(np.median(self.errors[~small])) if small.size and (~small).any() else None,
            "n_queries": self.n_queries,
            "redrawn_empty_queries": self.redrawn,
            "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]},
        }


def workload_masks(
    model: ReleaseModel, original: EncodedTable, workload: Workload
) -> list[dict[str, npt.NDArray[np.bool_]]]:
    """Each workload query as masks over the model's codes."""
    mapping = to_model_codes(model, original)
    batch = []
    for q in workload.queries:
        masks = {}
        for a, vals in q.items():
            m = np.zeros(model.cards[a], dtype=bool)
            mc = mapping[a][vals]
            m[mc[mc >= 0]] = True
            masks[a] = m
        batch.append(masks)
    return batch


#: The widest ranges the workload summary names.
WIDEST = 5


def range_summary(
    model: ReleaseModel,
    batch: Sequence[Mapping[str, npt.NDArray[np.bool_]]],
    actual: npt.NDArray[Any],
    estimates: Floats,
) -> dict[str, Any]:
    """The workload's ranges over the tables consistent with the release (the cheap bounds of
    :mod:`versapub.model.bounds`, no integer program): the share of true answers inside
    (always 1 for a sound bound), the share claimed sharp, the median width relative to the
    true count, and the queries whose range is widest (relative to the true count)."""
    from versapub.model.bounds import workload_bounds

    every = workload_bounds(model, batch)
    # a differentially private release: only queries inside a measured marginal have an interval
    held = [i for i, b in enumerate(every) if b.basis != "dp-noise" or b.method]
    bounds = [every[i] for i in held]
    batch, estimates = [batch[i] for i in held], np.asarray(estimates)[held]
    actual = np.asarray(actual)[held]
    basis = every[0].basis if every else "release"
    lower = np.array([b.lower for b in bounds])
    upper = np.array([b.upper for b in bounds])
    act = np.asarray(actual, dtype=np.float64)
    inside = (lower - 1e-6 <= act) & (act <= upper + 1e-6)
    rel = (upper - lower) / np.maximum(act, 1.0)
    widest = np.argsort(-rel, kind="stable")[:WIDEST]
    return {
        "basis": basis,
        "share_with_interval": len(held) / len(every) if every else 1.0,
        "share_inside": float(inside.mean()) if len(act) else (None if basis == "dp-noise" else 1.0),
        "share_sharp": float(np.mean([b.sharp for b in bounds])) if bounds else 1.0,
        "median_relative_width": float(np.median(rel)) if len(rel) else 0.0,
        "mean_relative_width": float(rel.mean()) if len(rel) else 0.0,
        "widest": [
            {
                "query": describe(model, batch[i]),
                "estimate": float(estimates[i]),
                "lower": float(lower[i]),
                "upper": float(upper[i]),
                "actual": float(act[i]),
                "sharp": bounds[i].sharp,
            }
            for i in map(int, widest)
        ],
        "outside": [describe(model, batch[i]) for i in map(int, np.flatnonzero(~inside)[:WIDEST])],
    }


#: A described query lists at most this many values per attribute (``NOT IN`` when the
#: values left out are fewer; otherwise the first ones and how many more).
MOST_VALUES = 8


def describe(model: ReleaseModel, masks: Mapping[str, npt.NDArray[np.bool_]]) -> str:
    """A workload query in the query language (``age IN ('25-34', '35-44') AND ...``), for a
    reader: an attribute with more than :data:`MOST_VALUES` values is written ``NOT IN`` the
    values left out when they are few, else as its first values and ``... N more``."""

    def quoted(values: Any) -> list[str]:
        return ["'" + str(v).replace("'", "''") + "'" for v in values]

    parts = []
    for a, m in masks.items():
        name = a if a.replace("_", "").replace("-", "").isalnum() else '"' + a.replace('"', '""') + '"'
        inside, outside = model.domains[a][m], model.domains[a][~m]
        if len(inside) <= MOST_VALUES:
            parts.append(f"{name} IN ({', '.join(quoted(inside))})")
        elif len(outside) <= MOST_VALUES:
            parts.append(f"{name} NOT IN ({', '.join(quoted(outside))})")
        else:
            shown = ", ".join(quoted(inside[:MOST_VALUES]))
            parts.append(f"{name} IN ({shown}, ... {len(inside) - MOST_VALUES:,} more)")
    return " AND ".join(parts)


def relative_error(model: ReleaseModel, original: EncodedTable, workload: Workload) -> RelativeError:
    """``|Act - Est| / Act`` of every workload query; mean and median (the estimates in
    batches: :meth:`ReleaseModel.probability_batch`)."""
    t0 = time.perf_counter()
    batch = workload_masks(model, original, workload)
    est = model.n * model.probability_batch(batch)
    err = np.abs(workload.actual - est) / workload.actual
    return RelativeError(
        float(err.mean()),
        float(np.median(err)),
        err,
        est,
        len(err),
        workload.redrawn,
        time.perf_counter() - t0,
        np.asarray(workload.actual, dtype=np.float64),
    )


def marginal_errors(model: ReleaseModel, original: EncodedTable) -> dict[str, float]:
    """Per attribute: the largest |P_model(A = v) - P_original(A = v)| (0 for a faithful release)."""
    mapping = to_model_codes(model, original)
    out = {}
    for a in model.attributes:
        model_p, orig_p, lost = _one_way(model, original, mapping, a)
        out[a] = max(float(np.abs(model_p - orig_p).max(initial=0.0)), lost)
    return out


def _one_way(
    model: ReleaseModel, original: EncodedTable, mapping: dict[str, Codes], a: str
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """``a``'s distribution under the model and in the original over the model's domain, and
    the original's share of values the release does not hold."""
    m = model.marginal((a,))
    model_p = np.zeros(model.cards[a])
    model_p[m.codes[0]] = m.values
    orig_p = np.zeros(model.cards[a])
    counts = original.column(a).counts() / original.n_rows
    known = mapping[a] >= 0
    np.add.at(orig_p, mapping[a][known], counts[known])
    return model_p, orig_p, float(counts[~known].sum())


def marginal_shares(model: ReleaseModel, original: EncodedTable, top: int = 12) -> dict[str, dict[str, Any]]:
    """Per attribute, its ``top`` most frequent values in the release's domain: each value's
    share of the original's records and of the release's model (the one-way distributions
    beside each other; the rest of the values summed as ``other``)."""
    mapping = to_model_codes(model, original)
    out: dict[str, dict[str, Any]] = {}
    for a in model.attributes:
        model_p, orig_p, _ = _one_way(model, original, mapping, a)
        order = np.argsort(-(orig_p + model_p), kind="stable")[:top]
        rest = np.setdiff1d(np.arange(len(orig_p)), order)
        out[a] = {
            "values": [str(v) for v in model.domains[a][order]] + (["other"] if len(rest) else []),
            "original": [float(x) for x in orig_p[order]] + ([float(orig_p[rest].sum())] if len(rest) else []),
            "release": [float(x) for x in model_p[order]] + ([float(model_p[rest].sum())] if len(rest) else []),
        }
    return out


def utility_summary(
    model: ReleaseModel,
    original: EncodedTable,
    *,
    n_queries: int = 1000,
    qd: int = 3,
    p: float = 0.4,
    seed: int = 1,
) -> dict[str, Any]:
    """KL, relative error of the default workload and marginal errors, as stored in
    manifests; with ``exp(-KL)`` and the KL of publishing every attribute alone as a reference."""
    original = projected(model, original)
    shared = distinct_records(original, model.attributes) if list(original.names) == list(model.attributes) else None
    kl = kl_divergence(model, original, shared)
    qd_eff = min(qd, len(original.names))
    w = make_workload(original, n_queries, qd_eff, p, seed)
    re_ = relative_error(model, original, w)
    t0 = time.perf_counter()
    ranges = range_summary(model, workload_masks(model, original, w), w.actual, re_.estimates)
    ranges_s = time.perf_counter() - t0
    return {
        **kl.to_json(),
        "exp_minus_kl": None if math.isinf(kl.value) else math.exp(-kl.value),
        "kl_all_attributes_alone": independence_kl(original, shared),
        "relative_error": re_.to_json(),
        "ranges": ranges,
        "workload": {"n_queries": n_queries, "qd": qd_eff, "p": p, "seed": seed},
        "marginal_error": marginal_errors(model, original),
        "model_path": model.path,
        "seconds": {"kl": round(kl.seconds, 4), "workload": round(re_.seconds, 4), "ranges": round(ranges_s, 4)},
    }
