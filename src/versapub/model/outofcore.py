"""The utility of a release whose records are not in memory (the Dask backend), with the
paper's measures (§5.1, §6.1: :mod:`versapub.model.utility`) computed out of core.

It applies to the releases that backend publishes: UAD's tables share no attribute, each
plain or an Anatomy table with one sensitive attribute, so the maximum-entropy estimate is
the product of the tables' own distributions, ``p~(x) = Π_t p~_t(x_t)``, with
``p~_t(q, s) = Σ_g c(q, g) c(g, s) / (n |g|)`` for an Anatomy table and the table's counts
over ``n`` for a plain one.

* **KL-divergence** ``Σ_x p(x) log p(x) − Σ_t Σ_{x_t} p_t(x_t) log p~_t(x_t)``, in DuckDB
  over the codes (the records' scratch dataset and the tables' parts): the data's entropy
  from its distinct records (grouped on two 64-bit hashes of all columns); a plain table's
  term from its counts; an Anatomy table's by joining the data's distinct ``(q, s)`` with the
  QIT rows of the same ``q`` (two hashes of ``q``) and the ST rows of their groups.
* **The COUNT workload** — the same random queries as in memory (same seed, same draws):
  candidate queries evaluated on the records by the backend (``count_queries``), the first
  ``n_queries`` non-empty kept; each estimate the product over the tables of the share of
  the records its conditions allow (``weighted_queries``; an Anatomy table's QIT and ST
  conditions together: ``paired_queries``, part by part).
* **Marginal errors** of every attribute (0 for a faithful release).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from versapub.data.sql import connect
from versapub.errors import ReleaseError
from versapub.model.sparse import Codes
from versapub.model.utility import RelativeError, draw_queries
from versapub.release.value import Release

Progress = Callable[[str, int, int], None]


def _quiet(description: str, done: int, total: int) -> None:
    del description, done, total


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: A table as a factor of the product estimate: ``(first part, second part or None, its
#: sensitive attribute or None)``, or None when its kind is no such factor — a kind's
#: ``product_parts`` (:class:`versapub.kinds.base.TableKind`), handed in by the caller.
PartsOf = Callable[[Any], "tuple[Any, Any, str | None] | None"]
#: (name, first part, second part, attributes, sensitive, spans) per table; ``spans``: a
#: generalized table's attributes as :class:`Spans` (None for a table of exact values).
Tables = list[tuple[str, Any, Any, list[str], str | None, "dict[str, Spans] | None"]]


class Spans:
    """One attribute of a generalized table on the leaves' positions: ``first[code]``,
    ``last[code]`` of every published code, ``m`` leaves, and the position of every code
    of the source's dictionary (``at``); an attribute published exactly is its own order."""

    def __init__(self, dictionary: Any, labels: Any, source_values: Any) -> None:
        text = np.asarray(dictionary, dtype=object).astype(str)
        if labels is None:  # published exactly: positions are the codes
            self.m = len(text)
            self.first = self.last = np.arange(self.m, dtype=np.int64)
            self.at = np.arange(self.m, dtype=np.int64)
            self.generalized = False
            return
        pos = {leaf: i for i, leaf in enumerate(labels.order)}
        runs = [labels.spans[t] if t in labels.spans else (pos[t], pos[t]) for t in text]
        self.first = np.array([a for a, _ in runs], dtype=np.int64)
        self.last = np.array([b for _, b in runs], dtype=np.int64)
        self.m = len(labels.order)
        self.at = np.array([pos[str(v)] for v in source_values], dtype=np.int64)
        self.generalized = True

    @property
    def size(self) -> Any:
        return (self.last - self.first + 1).astype(np.float64)

    @property
    def root(self) -> Any:
        return (self.first == 0) & (self.last == self.m - 1)


def _tables(release: Release, parts_of: PartsOf) -> Tables:
    """(name, first part, second part, attributes, sensitive) per table; refuses releases
    whose estimate is not a product of tables that are factors on their own (plain and
    single-attribute Anatomy tables: their kinds say so)."""
    seen: set[str] = set()
    out: Tables = []
    for t in release.tables:
        attrs = list(t.attributes)
        if seen & set(attrs):
            raise ReleaseError(
                f"Table {t.name} shares attributes with another; the out-of-core utility needs disjoint tables (UAD's)."
            )
        seen |= set(attrs)
        parts = parts_of(t.table)
        if parts is None:
            raise ReleaseError(
                f"Table {t.name} is a {t.table.kind} table; the out-of-core utility measures plain, Anatomy and "
                "generalized tables."
            )
        spans = None
        if t.table.leaves:  # generalized values: each row spread over the leaves it covers
            first = parts[0]
            spans = {
                a: Spans(d, t.table.leaves.get(a), release.source.column(a).values)
                for a, d in zip(first.names, first.dictionaries, strict=True)
            }
        out.append((t.name, parts[0], parts[1], attrs, parts[2], spans))
    return out


def spread_term(first: Any, spans: dict[str, Spans]) -> float:
    """A generalized table's ``Σ c ln(n p~)`` (each row spread over its leaves)."""
    gen = {a: sp for a, sp in spans.items() if sp.generalized}
    others = [(a, sp.m) for a, sp in spans.items() if not sp.generalized]
    total, _ = first.spread_log_sum(
        {a: sp.size for a, sp in gen.items()}, {a: sp.root for a, sp in gen.items()}, others
    )
    return float(total)


def kl_divergence(release: Release, tables: Tables, con: Any) -> dict[str, Any]:
    """The KL-divergence (module docstring) and the counts it rests on."""
    n = release.n_records
    cols = [_q(a) for a in release.attributes]
    everything = ", ".join(cols)
    row = con.execute(
        f"SELECT sum(c * ln(c)), count(*) FROM (SELECT count(*) c FROM original_codes GROUP BY "
        f"hash({everything}), hash({everything}, 7))"
    ).fetchone()
    plogp, distinct = float(row[0]) / n - math.log(n), int(row[1])
    expected = 0.0  # E_p[log p~]
    zero = 0
    for i, (_, first, second, attrs, s, spans) in enumerate(tables):
        if spans is not None:
            expected += spread_term(first, spans) / n - math.log(n)
            continue
        if second is None:
            first.register_duckdb(con, f"t{i}")
            got = con.execute(f'SELECT sum("count" * ln("count")) FROM t{i}').fetchone()
            expected += float(got[0]) / n - math.log(n)
            continue
        first.register_duckdb(con, f"q{i}")
        second.register_duckdb(con, f"s{i}")
        got = anatomy_term(con, f"q{i}", f"s{i}", ", ".join(_q(a) for a in attrs if a != s), _q(str(s)))
        zero += int(got[1])
        expected += float(got[0] or 0.0) / n - math.log(n)
    value = math.inf if zero else max(plogp - expected, 0.0)
    return {"value": value, "distinct": distinct, "zero": zero, "plogp": plogp}


#: Rows per slice of the Anatomy term's joins (:func:`anatomy_term`).
CHUNK_ROWS = 20_000_000


def anatomy_term(
    con: Any, qit: str, st: str, qi: str, sq: str, order: str | None = None, chunks: int | None = None
) -> tuple[float | None, int]:
    """``Σ_(q,s) c(q, s) log(n p~(q, s))`` over the data's distinct ``(q, s)`` and how many
    have ``p~ = 0``, where ``n p~(q, s) = Σ_g c(q, g) c(g, s) / |g|``.

    Two join orders give the same sum; the cheaper is chosen from counts: from the data's
    pairs, each joined with the groups its ``q`` is in (``Σ_(q,s) groups(q)``: cheap when
    ``q`` is nearly unique) or from the groups, each QIT row with each ST row of its group
    (``Σ_g rows_QIT(g) rows_ST(g)``, at most ``n`` times the group size: cheap when few
    ``q`` values spread over many groups); ``order`` (``pairs`` or ``groups``) forces one.
    The sum runs over slices of the ``q`` values (by hash), about :data:`CHUNK_ROWS` rows
    each, so that no join outgrows DuckDB's memory (``chunks`` forces their number)."""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE rec AS SELECT hash({qi}) h1, hash({qi}, 7) h2, {sq} sv, count(*) c
                    FROM original_codes GROUP BY ALL""")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE qh AS SELECT hash({qi}) h1, hash({qi}, 7) h2, group_id g, "count" c
                    FROM {qit}""")
    con.execute(f'CREATE OR REPLACE TEMP TABLE sz AS SELECT group_id g, sum("count") size FROM {st} GROUP BY ALL')
    by_pairs = (
        con.execute(
            "SELECT sum(k) FROM rec JOIN (SELECT h1, h2, count(*) k FROM qh GROUP BY ALL) USING (h1, h2)"
        ).fetchone()[0]
        or 0
    )
    by_groups = con.execute(
        f"SELECT sum(a.k * b.k) FROM (SELECT g, count(*) k FROM qh GROUP BY ALL) a JOIN "
        f"(SELECT group_id g, count(*) k FROM {st} GROUP BY ALL) b USING (g)"
    ).fetchone()[0]
    pairs = order == "pairs" or (order is None and by_pairs <= (by_groups or 0))
    rows = con.execute("SELECT count(*) FROM rec").fetchone()[0]
    k = chunks or max(1, math.ceil(max(rows, by_pairs if pairs else by_groups or 0) / CHUNK_ROWS))
    total, zero = None, 0
    for i in range(k):  # the q values in k slices by hash: each slice's joins fit in memory
        part = f"h1 % {k} = {i}"
        if pairs:
            w = (
                f'SELECT r.h1, r.h2, r.sv, sum(qh.c * t."count" / sz.size) w FROM rec r JOIN qh USING (h1, h2) '
                f"JOIN {st} t ON t.group_id = qh.g AND t.{sq} = r.sv JOIN sz ON sz.g = qh.g WHERE r.{part} "
                "GROUP BY ALL"
            )
        else:
            w = (
                f'SELECT qh.h1, qh.h2, t.{sq} sv, sum(qh.c * t."count" / sz.size) w FROM qh '
                f"JOIN {st} t ON t.group_id = qh.g JOIN sz ON sz.g = qh.g WHERE qh.{part} GROUP BY ALL"
            )
        got = con.execute(
            f"WITH w AS ({w}) SELECT sum(rec.c * ln(w.w)), count(*) FILTER (WHERE w.w IS NULL) "
            f"FROM rec LEFT JOIN w USING (h1, h2, sv) WHERE rec.{part}"
        ).fetchone()
        if got[0] is not None:
            total = float(got[0]) + (total or 0.0)
        zero += int(got[1])
    con.execute("DROP TABLE rec; DROP TABLE qh; DROP TABLE sz")
    return total, zero


def workload(
    release: Release, n_queries: int, qd: int, p: float, seed: int, progress: Progress = _quiet
) -> tuple[list[dict[str, Codes]], np.ndarray, int]:
    """The in-memory workload's queries (same draws), with their true answers."""
    return draw_queries(release.source, n_queries, qd, p, seed, progress)


def estimates(
    release: Release, tables: Tables, queries: Sequence[dict[str, Codes]], progress: Progress = _quiet
) -> np.ndarray:
    """The model's answer to every query: ``n`` times the product over the tables."""
    n = release.n_records
    prob = np.ones(len(queries), dtype=np.float64)
    for k, (name, first, second, attrs, s, spans) in enumerate(tables):
        progress(f"the workload's estimates: table {name}", k, len(tables))
        own = [{a: v for a, v in q.items() if a in attrs} for q in queries]
        if spans is not None:  # allowed source codes as leaf positions, rows spread over their leaves
            hit = [i for i, c in enumerate(own) if c]
            if hit:
                pos = [{a: spans[a].at[np.asarray(v, dtype=np.int64)] for a, v in own[i].items()} for i in hit]
                used = {a for q in pos for a in q}
                shape = {a: (spans[a].first, spans[a].last, spans[a].m) for a in used}
                prob[hit] *= first.spread_queries(pos, shape) / n
            continue
        if second is None:
            hit = [i for i, c in enumerate(own) if c]
            if hit:
                prob[hit] *= first.weighted_queries([own[i] for i in hit]) / n
            continue
        qi = [{a: v for a, v in c.items() if a != s} for c in own]
        sv = [{a: v for a, v in c.items() if a == s} for c in own]
        only_q = [i for i in range(len(own)) if qi[i] and not sv[i]]
        only_s = [i for i in range(len(own)) if sv[i] and not qi[i]]
        both = [i for i in range(len(own)) if qi[i] and sv[i]]
        if only_q:
            prob[only_q] *= first.weighted_queries([qi[i] for i in only_q]) / n
        if only_s:
            prob[only_s] *= second.weighted_queries([sv[i] for i in only_s]) / n
        if both:
            prob[both] *= first.paired_queries(second, [qi[i] for i in both], [sv[i] for i in both]) / n
    return n * prob


def marginal_errors(release: Release, tables: Tables) -> dict[str, float]:
    """Per attribute, the largest |P_published(v) − P_original(v)|."""
    n = release.n_records
    out = {}
    for _, first, second, attrs, s, spans in tables:
        for a in attrs:
            part = second if a == s else first
            if spans is not None and spans[a].generalized:
                sp = spans[a]
                pub = first.spread_marginal(a, sp.first, sp.last, sp.m)[sp.at]
            else:
                pub = part.marginal(a)
            orig = release.source.column(a).counts()
            m = max(len(pub), len(orig))
            out[a] = float(np.abs(np.pad(pub, (0, m - len(pub))) - np.pad(orig, (0, m - len(orig)))).max(initial=0)) / n
    return {a: out[a] for a in release.attributes if a in out}


def utility_summary(
    release: Release,
    *,
    parts_of: PartsOf,
    n_queries: int = 1000,
    qd: int = 3,
    p: float = 0.4,
    seed: int = 1,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """The manifest's ``utility`` for a release published on the Dask backend (the keys of
    :func:`versapub.model.utility.utility_summary`); ``parts_of``: each table's kind's
    ``product_parts``."""
    tables = _tables(release, parts_of)
    t0 = time.perf_counter()
    with connect(0.25, ordered=False) as con:  # a LocalCluster's workers have the rest of the memory
        progress("KL-divergence (DuckDB over the codes)", 0, 3)
        release.source.register_duckdb(con)
        kl = kl_divergence(release, tables, con)
    kl_s = time.perf_counter() - t0
    n = release.n_records
    alone = sum(
        -float((c[c > 0] / n * np.log(c[c > 0] / n)).sum())
        for c in (release.source.column(a).counts() for a in release.attributes)
    )
    t1 = time.perf_counter()
    qd_eff = min(qd, len(release.attributes))
    queries, actual, redrawn = workload(release, n_queries, qd_eff, p, seed, progress)
    est = estimates(release, tables, queries, progress)
    err = np.abs(actual - est) / actual
    re_ = RelativeError(
        float(err.mean()),
        float(np.median(err)),
        err,
        est,
        len(err),
        redrawn,
        time.perf_counter() - t1,
        np.asarray(actual, dtype=np.float64),
    )
    value = kl["value"]
    return {
        "kl_divergence": None if math.isinf(value) else value,
        "kl_infinite": math.isinf(value),
        "distinct_records": kl["distinct"],
        "records_with_zero_model_probability": kl["zero"],
        "exp_minus_kl": None if math.isinf(value) else math.exp(-value),
        "kl_all_attributes_alone": max(alone + kl["plogp"], 0.0),
        "relative_error": re_.to_json(),
        "workload": {"n_queries": n_queries, "qd": qd_eff, "p": p, "seed": seed},
        "marginal_error": marginal_errors(release, tables),
        "model_path": "out of core: the product of the disjoint tables (KL in DuckDB over the codes; the workload on "
        "the cluster)",
        "seconds": {"kl": round(kl_s, 4), "workload": round(re_.seconds, 4)},
    }
