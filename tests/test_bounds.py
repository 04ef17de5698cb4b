"""The range a release allows for a count (issue 49), against brute force: on tiny tables of
every release kind, every table consistent with the published tables is enumerated and each
one's count must lie inside the bounds; where the bounds claim to be sharp they must equal
the enumeration's minimum and maximum.  The cases are drawn by hypothesis (derandomized)."""

from __future__ import annotations

import itertools
from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from versapub.data.table import GROUP_KEY
from versapub.model.bounds import count_bounds
from versapub.model.factors import AnatomyFactor, Choices, PlainFactor
from versapub.model.formula import from_query
from versapub.model.generalized import GeneralizedFactor, cover_from_sets
from versapub.model.query import parse_query

CARDS = {"a": 3, "b": 2, "c": 2, "s": 3}
DOMAINS = {k: np.array([str(i) for i in range(v)], dtype=object) for k, v in CARDS.items()}
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@st.composite
def queries(draw: Any, attrs: tuple[str, ...]) -> str:
    def atom() -> str:
        a = draw(st.sampled_from(attrs))
        v = draw(st.integers(0, CARDS[a] - 1))
        op = draw(st.sampled_from(["=", "!=", "<", ">=", "IN"]))
        if op == "IN":
            w = draw(st.integers(0, CARDS[a] - 1))
            return f"{a} IN ('{v}', '{w}')"
        return f"{a} {op} '{v}'"

    def expr(depth: int) -> str:
        if depth == 0 or draw(st.booleans()):
            return atom()
        op = draw(st.sampled_from(["AND", "OR", "NOT"]))
        if op == "NOT":
            return f"NOT ({expr(depth - 1)})"
        return f"({expr(depth - 1)}) {op} ({expr(depth - 1)})"

    return expr(2)


def _count(text: str, records: list[dict[str, int]]) -> int:
    """The query on exact records: each condition evaluated on the value's text."""
    q = parse_query(text)
    if not records:
        return 0
    codes = {a: np.array([r[a] for r in records]) for a in q.attributes}
    return int(q.mask(DOMAINS, codes).sum())


def _check(model: Any, text: str, tables: list[list[dict[str, int]]], claim_sharp: bool | None = None) -> None:
    b = count_bounds(model, from_query(parse_query(text), DOMAINS))
    counts = [_count(text, t) for t in tables]
    assert counts, "the enumeration found no consistent table"
    assert b.lower <= min(counts) and max(counts) <= b.upper, (text, b, min(counts), max(counts))
    if b.sharp:
        assert (b.lower, b.upper) == (min(counts), max(counts)), (text, b, min(counts), max(counts))
    if claim_sharp is not None:
        assert b.sharp == claim_sharp or b.lower == b.upper, (text, b)


def _model(factors: list[Any], n: int) -> Any:
    return SimpleNamespace(published=factors, n=n, domains=DOMAINS)


def _records(rng: np.random.Generator, n: int, attrs: str) -> list[dict[str, int]]:
    return [{a: int(rng.integers(CARDS[a])) for a in attrs} for _ in range(n)]


def _plain(rows: list[dict[str, int]], attrs: tuple[str, ...], n: int) -> PlainFactor:
    c = Counter(tuple(r[a] for a in attrs) for r in rows)
    keys = list(c)
    cols = {a: np.array([k[i] for k in keys], dtype=np.int64) for i, a in enumerate(attrs)}
    return PlainFactor(attrs, cols, np.array([c[k] for k in keys], dtype=float) / n, {a: CARDS[a] for a in attrs})


# -- Anatomy (and its suppressed group) -------------------------------------------------


def _anatomy(rows: list[dict[str, int]], groups: list[int], qi: tuple[str, ...], free: set[int]) -> AnatomyFactor:
    n = len(rows)
    ng = max(groups) + 1
    q = Counter((*(r[a] for a in qi), g) for r, g in zip(rows, groups, strict=True))
    qk = list(q)
    qit = {a: np.array([k[i] for k in qk], dtype=np.int64) for i, a in enumerate(qi)}
    qit[GROUP_KEY] = np.array([k[-1] for k in qk], dtype=np.int64)
    s = Counter((g, r["s"]) for r, g in zip(rows, groups, strict=True) if g not in free)
    sk = list(s)
    st_g = [k[0] for k in sk]
    st_s = [k[1] for k in sk]
    counts = [float(s[k]) for k in sk]
    size = np.bincount(groups, minlength=ng).astype(float)
    choices = None
    if free:
        fg = [g for g in sorted(free) for _ in range(CARDS["s"])]
        fs = [v for _ in sorted(free) for v in range(CARDS["s"])]
        st_g += fg
        st_s += fs
        counts += [size[g] / CARDS["s"] for g in fg]
        mask = np.isin(np.arange(ng), sorted(free))
        choices = Choices(mask, np.array(fg, dtype=np.int64), {"s": np.array(fs, dtype=np.int64)}, exact=True)
    return AnatomyFactor(
        qi,
        ("s",),
        qit,
        np.array([q[k] for k in qk], dtype=float),
        np.array(st_g, dtype=np.int64),
        {"s": np.array(st_s, dtype=np.int64)},
        np.array(counts),
        size,
        float(n),
        dict(CARDS),
        choices,
    )


def _pairings(rows: list[dict[str, int]], groups: list[int], free: set[int]) -> list[list[dict[str, int]]]:
    """Every table consistent with the groups: in each group, any pairing of its QI values
    with its sensitive values (any sensitive value in a free group)."""
    per_group = []
    for g in sorted(set(groups)):
        members = [r for r, gg in zip(rows, groups, strict=True) if gg == g]
        if g in free:
            options = {tuple(v) for v in itertools.product(range(CARDS["s"]), repeat=len(members))}
        else:
            options = set(itertools.permutations([r["s"] for r in members]))
        per_group.append([[{**m, "s": v} for m, v in zip(members, opt, strict=True)] for opt in options])
    return [[r for part in combo for r in part] for combo in itertools.product(*per_group)]


@SETTINGS
@given(seed=st.integers(0, 10**6), text=queries(("a", "b", "s")), suppressed=st.booleans())
def test_anatomy_bounds_are_sharp_per_group(seed: int, text: str, suppressed: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    rows = _records(rng, n, "abs")
    groups = [i // 2 for i in range(n)]
    free = {max(groups)} if suppressed else set()
    f = _anatomy(rows, groups, ("a", "b"), free)
    _check(_model([f], n), text, _pairings(rows, groups, free), claim_sharp=True)


# -- generalized tables (Mondrian's ranges, Incognito's levels) --------------------------


@settings(SETTINGS, max_examples=200)
@given(seed=st.integers(0, 10**6), text=queries(("a", "b", "s")), runs=st.booleans())
def test_generalized_bounds_classes_inside_or_overlapping(seed: int, text: str, runs: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    rows = _records(rng, n, "abs")
    labels: dict[str, list[tuple[int, ...]]] = {"a": [], "b": []}
    published = []
    for r in rows:
        cell = []
        for a in ("a", "b"):
            if runs:  # Mondrian: a range around the value
                lo = int(rng.integers(0, r[a] + 1))
                hi = int(rng.integers(r[a], CARDS[a]))
                leaves = tuple(range(lo, hi + 1))
            else:  # a full-domain level: the value or everything
                leaves = (r[a],) if rng.random() < 0.5 else tuple(range(CARDS[a]))
            if leaves not in labels[a]:
                labels[a].append(leaves)
            cell.append(CARDS[a] + labels[a].index(leaves))
        published.append((*cell, r["s"]))
    c = Counter(published)
    keys = list(c)
    cols = {a: np.array([k[i] for k in keys], dtype=np.int64) for i, a in enumerate(("a", "b", "s"))}
    covers = {a: cover_from_sets([np.array(x) for x in labels[a]]) for a in ("a", "b")}
    f = GeneralizedFactor(("a", "b", "s"), cols, np.array([c[k] for k in keys], dtype=float) / n, dict(CARDS), covers)
    boxes = [
        [labels["a"][k[0] - CARDS["a"]], labels["b"][k[1] - CARDS["b"]], (k[2],)] for k in published
    ]  # every record's leaves
    tables = [
        [{"a": x[0], "b": x[1], "s": x[2]} for x in combo]
        for combo in itertools.product(*(list(itertools.product(*box)) for box in boxes))
    ]
    b = count_bounds(_model([f], n), from_query(parse_query(text), DOMAINS))
    _check(_model([f], n), text, tables)
    if from_query(parse_query(text), DOMAINS).read_once:
        assert b.sharp


# -- the MSA decomposition's groups --------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 10**6), text=queries(("a", "s", "c")))
def test_sa_groups_bounds_are_sound(seed: int, text: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    rows = _records(rng, n, "asc")
    groups = [i // 2 for i in range(n)]
    ng = max(groups) + 1
    sets = [{a: {r[a] for r, g in zip(rows, groups, strict=True) if g == gi} for a in ("s", "c")} for gi in range(ng)]
    ts = Counter((r["s"], r["c"]) for r in rows)
    combos = list(ts)
    pair_g, pair_k = [], []
    for gi in range(ng):
        for k, (sv, cv) in enumerate(combos):
            if sv in sets[gi]["s"] and cv in sets[gi]["c"]:
                pair_g.append(gi)
                pair_k.append(k)
    base = _anatomy([{**r, "s": 0} for r in rows], groups, ("a",), set())
    choices = Choices(
        np.ones(ng, dtype=bool),
        np.array(pair_g, dtype=np.int64),
        {"s": np.array([combos[k][0] for k in pair_k]), "c": np.array([combos[k][1] for k in pair_k])},
        exact=False,
    )
    f = AnatomyFactor(
        ("a",), ("s", "c"), base.qit, base.c_qg, np.array(pair_g, dtype=np.int64),
        choices.s, np.ones(len(pair_g)), base.size, float(n), dict(CARDS), choices,
    )  # fmt: skip
    tables = []
    for pick in itertools.product(*([k for k, gg in zip(pair_k, pair_g, strict=True) if gg == g] for g in groups)):
        if Counter(combos[k] for k in pick) == ts:
            tables.append(
                [{"a": r["a"], "s": combos[k][0], "c": combos[k][1]} for r, k in zip(rows, pick, strict=True)]
            )
    _check(_model([f], n), text, tables)


# -- collections of marginals and multi-table releases ------------------------------------


def _full_tables(n: int, attrs: str) -> list[list[dict[str, int]]]:
    cells = list(itertools.product(*(range(CARDS[a]) for a in attrs)))
    out = []
    for combo in itertools.combinations_with_replacement(range(len(cells)), n):
        out.append([dict(zip(attrs, cells[i], strict=True)) for i in combo])
    return out


def _projection(rows: list[dict[str, int]], attrs: tuple[str, ...]) -> Counter[tuple[int, ...]]:
    return Counter(tuple(r[a] for a in attrs) for r in rows)


@pytest.mark.parametrize("shape", ["decomposable", "cycle"])
@SETTINGS
@given(seed=st.integers(0, 10**6), text=queries(("a", "b", "c")))
def test_marginal_collections_by_integer_program(shape: str, seed: int, text: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    rows = _records(rng, n, "abc")
    sets = [("a", "b"), ("b", "c")] + ([("a", "c")] if shape == "cycle" else [])
    factors = [_plain(rows, s, n) for s in sets]
    want = [_projection(rows, s) for s in sets]
    tables = [t for t in _full_tables(n, "abc") if all(_projection(t, s) == w for s, w in zip(sets, want, strict=True))]
    _check(_model(factors, n), text, tables, claim_sharp=True)


@SETTINGS
@given(seed=st.integers(0, 10**6), text=queries(("a", "b", "s")))
def test_versatile_plain_and_anatomy_tables(seed: int, text: str) -> None:
    """A plain table {a, b} beside an Anatomy table b -> s: a consistent table matches the
    plain table and one of the Anatomy table's pairings on {b, s}."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    rows = _records(rng, n, "abs")
    groups = [i // 2 for i in range(n)]
    an = _anatomy(rows, groups, ("b",), set())
    factors = [_plain(rows, ("a", "b"), n), an]
    pairings = {frozenset(_projection(p, ("b", "s")).items()) for p in _pairings(rows, groups, set())}
    ab = _projection(rows, ("a", "b"))
    tables = [
        t
        for t in _full_tables(n, "abs")
        if _projection(t, ("a", "b")) == ab and frozenset(_projection(t, ("b", "s")).items()) in pairings
    ]
    _check(_model(factors, n), text, tables)


def test_budget_fallback_is_sound_and_not_sharp() -> None:
    """With no time for the integer program, a cycle of marginals gets the cheap bounds,
    marked not sharp; with time, the program's sharp ones inside them."""
    rng = np.random.default_rng(7)
    n = 4
    rows = _records(rng, n, "abc")
    sets = [("a", "b"), ("b", "c"), ("a", "c")]
    model = _model([_plain(rows, s, n) for s in sets], n)
    f = from_query(parse_query("a = '0' AND b = '1' AND c = '0' OR a = '1' AND c = '1'"), DOMAINS)
    cheap = count_bounds(model, f, seconds=0.0)
    full = count_bounds(model, f, seconds=5.0)
    assert (full.sharp and full.method == "integer program over the join") or full.lower == full.upper
    assert cheap.lower <= full.lower <= full.upper <= cheap.upper
    if cheap.lower != cheap.upper:
        assert not cheap.sharp


def test_generalized_formula_read_twice_is_sound_but_not_sharp() -> None:
    """``(a = 0 AND b = 1) OR a = 1`` holds for every leaf of the class a ∈ {0, 1}, b = 1, but
    three-valued logic cannot see it (``a`` is read twice): the bounds stay sound, not sharp."""
    cover = {"a": cover_from_sets([np.array([0, 1])])}
    f = GeneralizedFactor(
        ("a", "b"), {"a": np.array([CARDS["a"]]), "b": np.array([1])}, np.array([1.0]), dict(CARDS), cover
    )
    q = from_query(parse_query("(a = '0' AND b = '1') OR a = '1'"), DOMAINS)
    b = count_bounds(_model([f], 1), q)
    assert (b.lower, b.upper, b.sharp) == (0.0, 1.0, False)
    one = count_bounds(_model([f], 1), from_query(parse_query("a IN ('0', '1') AND b = '1'"), DOMAINS))
    assert (one.lower, one.upper, one.sharp) == (1.0, 1.0, True)


# -- end to end: releases written by the anonymizers, queries through inspect.query ------------


def _release_cases() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("anatomy", {"rules": ["a, b -> s1"], "l": 2}),
        ("mondrian", {"rules": ["a, b -> s1"], "l": 2, "anonymizer": "mondrian"}),
        ("incognito", {"rules": ["a, b -> s1"], "l": 2, "anonymizer": "incognito"}),
        (
            "msa-decomposition",
            {"rules": ["a, b -> s1", "a, b -> s2"], "anonymizer": "msa-decomposition", "seed": 3},
        ),
        ("versatile", {"rules": ["a -> s1", "b -> s2"], "l": 2}),
    ]


@pytest.mark.parametrize(("name", "job"), _release_cases(), ids=[c[0] for c in _release_cases()])
def test_true_counts_lie_inside_on_written_releases(name: str, job: dict[str, Any], tmp_path: Any) -> None:
    """Random queries on releases the anonymizers write: the true count is inside the range
    every time, and a query one plain or Anatomy table answers alone is sharp."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    import versapub
    from versapub.inspect import query

    from .conftest import random_table

    table = random_table(np.random.default_rng(5), 300, {"a": 4, "b": 5, "s1": 4, "s2": 3}, skew=0.3)
    data = tmp_path / "in.csv"
    pcsv.write_csv(pa.table({c: [str(v) for v in table.column(c).values[table.codes(c)]] for c in table.names}), data)
    read = versapub.read_table(data)
    rules = job.pop("rules")
    rel = versapub.publish(read, rules, columns=versapub.ColumnRoles(others="insensitive"), **job)
    versapub.write_release(rel, tmp_path / "r")
    rng = np.random.default_rng(11)
    domains = {c: sorted({str(v) for v in read.column(c).values}) for c in read.names}
    for _ in range(25):
        attrs = rng.choice(list(domains), size=int(rng.integers(1, 4)), replace=False)
        parts = []
        for a in attrs:
            vals = rng.choice(domains[a], size=int(rng.integers(1, len(domains[a]))), replace=False)
            parts.append(f"{a} IN ({', '.join(repr(str(v)) for v in vals)})")
        text = (" OR " if rng.random() < 0.3 else " AND ").join(parts)
        got = query(tmp_path / "r", text, original=data)
        assert got.bound is not None and got.inside, (name, text, got)


def test_pram_interval_is_the_corrected_estimates_variance() -> None:
    """One PRAM'd column of two values: Var(o · v) = v^T Cov(o) v with
    Cov(o) = Σ_i t_i (diag P_i - P_i P_i^T) and v = P^-1 w, hand-arranged."""
    from versapub.model.bounds import pram_interval
    from versapub.model.maxent import ReleaseModel
    from versapub.model.query import count

    p = np.array([[0.8, 0.2], [0.3, 0.7]])
    observed = np.array([60.0, 40.0])  # published counts of '0' and '1'
    fac = PlainFactor(("z",), {"z": np.array([0, 1])}, observed / 100, {"z": 2})
    model = ReleaseModel([fac], {"z": np.array(["0", "1"], dtype=object)}, 100)
    q = parse_query("z = '1'")
    fix = {"z": (["0", "1"], p)}
    est = count(model, q, fix)
    t = np.maximum(observed @ np.linalg.inv(p), 0)
    assert est == pytest.approx(t[1])
    v = np.linalg.inv(p) @ np.array([0.0, 1.0])
    cov = sum(t[i] * (np.diag(p[i]) - np.outer(p[i], p[i])) for i in range(2))
    half = 1.96 * np.sqrt(v @ cov @ v)
    b = pram_interval(model, q, fix, est)
    assert (b.lower, b.upper) == pytest.approx((est - half, est + half))
    assert b.statistical and not b.sharp and b.basis == "pram-variance"


def _random_conjunctions(rng: np.random.Generator, attrs: tuple[str, ...], k: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(k):
        chosen = rng.choice(attrs, size=int(rng.integers(1, len(attrs) + 1)), replace=False)
        out.append({str(a): rng.random(CARDS[str(a)]) < 0.5 for a in chosen})
    return out


@SETTINGS
@given(seed=st.integers(0, 10**6), suppressed=st.booleans())
def test_the_workloads_batches_give_the_bounds_one_query_gets(seed: int, suppressed: bool) -> None:
    """:func:`workload_bounds` (tables answering many queries at once) against
    :func:`count_bounds` one query at a time, on Anatomy (with a suppressed group), a
    generalized table and a plain table beside an Anatomy table."""
    from versapub.model.bounds import workload_bounds
    from versapub.model.formula import conjunction

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 12))
    rows = _records(rng, n, "abs")
    groups = [i // 2 for i in range(n)]
    free = {max(groups)} if suppressed else set()
    cover = {"a": cover_from_sets([np.array([0, 1]), np.array([2])])}
    gen = GeneralizedFactor(
        ("a", "b"),
        {"a": np.array([CARDS["a"] + (0 if r["a"] < 2 else 1) for r in rows]), "b": np.array([r["b"] for r in rows])},
        np.full(n, 1.0 / n),
        dict(CARDS),
        cover,
    )
    models = [
        _model([_anatomy(rows, groups, ("a", "b"), free)], n),
        _model([gen], n),
        _model([_plain(rows, ("a", "b"), n), _anatomy(rows, groups, ("b",), free)], n),
    ]
    import versapub.model.batch_bounds as bb

    few = bb.FEW
    try:
        for bb.FEW in (0, few):  # projected batches, and small batches one query at a time
            for model in models:
                queries = _random_conjunctions(rng, ("a", "b", "s"), 12)
                batch = workload_bounds(model, queries)
                for q, got in zip(queries, batch, strict=True):
                    one = count_bounds(model, conjunction(q), seconds=0.0)
                    assert (got.lower, got.upper, got.sharp) == (one.lower, one.upper, one.sharp), (q, got, one)
    finally:
        bb.FEW = few


def test_a_described_workload_query_stays_readable() -> None:
    """The summary names the widest queries: a long value list is written NOT IN the few
    values left out, or as its first values and how many more (a 51,920-record release's
    widest query was 90,000 characters)."""
    from versapub.model.utility import MOST_VALUES, describe

    dom = np.array([f"v{i}" for i in range(20)], dtype=object)
    model = SimpleNamespace(domains={"a": dom, "my col": np.array(["x", "y"], dtype=object)})
    few = np.zeros(20, bool)
    few[[1, 4]] = True
    assert describe(model, {"a": few}) == "a IN ('v1', 'v4')"  # type: ignore[arg-type]
    assert describe(model, {"a": ~few}) == "a NOT IN ('v1', 'v4')"  # type: ignore[arg-type]
    half = np.arange(20) < 11
    both = describe(model, {"a": half, "my col": np.array([False, True])})  # type: ignore[arg-type]
    shown = ", ".join(f"'v{i}'" for i in range(MOST_VALUES))
    assert both == f"a IN ({shown}, ... {11 - MOST_VALUES} more) AND \"my col\" IN ('y')"


@SETTINGS
@given(seed=st.integers(0, 10**6), text=queries(("a", "b", "s")), suppressed=st.booleans())
def test_merged_groups_give_every_query_the_same_bounds(seed: int, text: str, suppressed: bool) -> None:
    """Issue 67: groups of the same content merged into one, counts times their number
    (:mod:`versapub.model.group_merge`), give any query (``AND``, ``OR``, ``NOT``) the bounds
    the groups give one by one: a table of many pairs drawn from few records, a free group
    among them, merged and not."""
    import versapub.model.factors as factors

    rng = np.random.default_rng(seed)
    few = _records(rng, 3, "abs")
    rows = [dict(few[int(i)]) for i in rng.integers(0, 3, 24)]  # 12 groups of two from 3 records
    groups = [i // 2 for i in range(len(rows))]
    free = {max(groups)} if suppressed else set()
    f = _anatomy(rows, groups, ("a", "b"), free)
    assert f._groups().n_groups < len(f.size)  # some groups merged
    merged = count_bounds(_model([f], len(rows)), from_query(parse_query(text), DOMAINS))
    original = factors.merged
    try:
        factors.merged = lambda gr: gr
        one_by_one = count_bounds(
            _model([_anatomy(rows, groups, ("a", "b"), free)], len(rows)), from_query(parse_query(text), DOMAINS)
        )
    finally:
        factors.merged = original
    assert (merged.lower, merged.upper, merged.sharp) == (one_by_one.lower, one_by_one.upper, one_by_one.sharp)
