"""The Python API: the one place that wires the layers together.

>>> from versapub import datasets, publish
>>> release = publish(datasets.running_example(), datasets.RUNNING_EXAMPLE_RULES, l=2, seed=1)
>>> release.gnf.ok
True
"""

from __future__ import annotations

import math
import os
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.anonymizers import get_anonymizer, publish_plain
from versapub.anonymizers.base import AnonymizedTable, Anonymizer
from versapub.anonymizers.multi_sa import MAX_COMBINATIONS, TIME_LIMIT_S, MultiSAAnatomy
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.decompositions import AddBackStep, add_back, get_decomposition
from versapub.errors import InputError, SchemaError
from versapub.kinds import get_kind
from versapub.kinds.build import factor_of
from versapub.model.factors import Factor
from versapub.model.maxent import ReleaseModel
from versapub.model.utility import kl_divergence
from versapub.privacy.feasibility import require_feasible
from versapub.privacy.guarantee import Guarantee, make_guarantee
from versapub.privacy.roles import (
    MIN_RECORDS,
    UNIQUE_SHARE,
    ColumnRoles,
    apply_roles,
    cell_risk,
    require_no_identifiers,
)
from versapub.privacy.rules import Rule, parse_rules, reduce_rules, validate_rules
from versapub.release.model import InputInfo, PublishedTable, Release
from versapub.schema.gnf import require_gnf
from versapub.schema.model import Schema, SubTable

#: ``progress(description, completed, total)`` is called as work advances.
ProgressHook = Callable[[str, int, int], None]


def _no_progress(description: str, completed: int, total: int) -> None:
    del description, completed, total


def _step_hook(hook: ProgressHook, completed: int, total: int) -> Callable[[str], None]:
    """A one-argument progress callback for work inside one step."""

    def say(description: str) -> None:
        hook(description, completed, total)

    return say


def table_rng(seed: int, sub: SubTable) -> np.random.Generator:
    """The generator for one sub-table: derived from the seed and the sub-table itself."""
    key = zlib.crc32(("\x1f".join(sub.attributes) + "\x1e" + (sub.sensitive or "")).encode("utf-8"))
    return np.random.default_rng([seed, key])


def anonymize(
    table: EncodedTable,
    sub: SubTable,
    anon: Anonymizer,
    g: Guarantee,
    seed: int,
    multi: MultiSAAnatomy | None = None,
    progress: Callable[[str], None] | None = None,
) -> AnonymizedTable:
    """Publish one sub-table: plain when it enforces no rule, with the anonymizer when it
    enforces one, with multi-SA publishing (Appendix B) when it enforces several."""
    part = table.select(sub.attributes)
    if sub.enforces is None:
        out = publish_plain(part)
    elif sub.also_enforces:
        out = (multi or MultiSAAnatomy()).publish_rules(part, sub.enforced_rules, g, table_rng(seed, sub), progress)
    else:
        out = anon.publish(part, sub.enforces, g, table_rng(seed, sub))
    get_kind(out.kind).validate(out)  # the kind's parts and rules, before anything is written
    return out


def identity_risk(table: EncodedTable, published: AnonymizedTable) -> dict[str, float | int]:
    """Identity risk of one published table: its non-sensitive attributes' cells (exact in
    a plain table and in an Anatomy QIT) counted on the input."""
    attrs = [a for a in published.attributes if a not in published.sensitive_attributes]
    if not attrs:
        return {"unique_share": 0.0, "k": table.n_rows, "cells": 1}
    g = group_rows([table.codes(a) for a in attrs], [table.cardinality(a) for a in attrs])
    return cell_risk(g.counts, table.n_rows)


class KLScorer:
    """KL-divergence of the release a schema would give, for GD's add-back.

    Incremental: each distinct sub-table is anonymized once, and each factor's
    probabilities of the original's distinct records (over its attributes and over any
    separator) are computed once and reused by every candidate schema containing it.
    """

    def __init__(self, table: EncodedTable, anon: Anonymizer, g: Guarantee, seed: int) -> None:
        self.table, self.anon, self.g, self.seed = table, anon, g, seed
        attrs = list(table.names)
        grouping = group_rows([table.codes(a) for a in attrs], [table.cardinality(a) for a in attrs])
        self.records = {a: grouping.keys[i].astype(np.int64) for i, a in enumerate(attrs)}
        self.p = grouping.counts / grouping.counts.sum()
        self.domains = {c.name: c.values for c in table.columns}
        self.cards = {a: len(v) for a, v in self.domains.items()}
        self._factors: dict[SubTable, Factor] = {}
        self._probs: dict[tuple[SubTable, tuple[str, ...]], npt.NDArray[np.float64]] = {}

    def factor(self, sub: SubTable) -> Factor:
        key = SubTable("_", sub.attributes, sub.enforces)
        if key not in self._factors:
            out = anonymize(self.table, sub, self.anon, self.g, self.seed)
            self._factors[key] = factor_of(out, self.table.n_rows, self.cards)
        return self._factors[key]

    def _prob(self, sub: SubTable, attrs: tuple[str, ...]) -> npt.NDArray[np.float64]:
        key = (SubTable("_", sub.attributes, sub.enforces), attrs)
        if key not in self._probs:
            self._probs[key] = self.factor(sub).prob(attrs, self.records)
        return self._probs[key]

    def score(self, schema: Schema) -> float:
        factors = [self.factor(t) for t in schema.tables]
        model = ReleaseModel(factors, self.domains, self.table.n_rows, consistent=True)
        if model.tree is None:
            return kl_divergence(model, self.table).value
        q = np.ones(len(self.p))
        for c in model.tree.order:
            t = schema.tables[c]
            q *= self._prob(t, factors[c].attrs)
            sep = model.tree.sep.get(c, ())
            if sep:
                den = self._prob(t, sep)
                q = np.divide(q, den, out=np.zeros_like(q), where=den > 0)
        q /= model.z
        if (q <= 0).any():
            return math.inf
        return max(float(np.sum(self.p * (np.log(self.p) - np.log(q)))), 0.0)


def publish(
    table: EncodedTable | Mapping[str, Iterable[str]],
    rules: Iterable[str | Rule],
    *,
    l: int = 2,
    guarantee: Guarantee | Mapping[str, Any] | None = None,
    decomposition: str = "uad",
    anonymizer: str = "anatomy",
    seed: int = 0,
    input_info: InputInfo | None = None,
    progress: ProgressHook | None = None,
    gd_stop_when_worse: bool = False,
    gd_max_candidates: int | None = None,
    gd_jobs: int | None = None,
    multi_sa_time_limit_s: float = TIME_LIMIT_S,
    multi_sa_max_combinations: int = MAX_COMBINATIONS,
    columns: ColumnRoles | None = None,
) -> Release:
    """Publish ``table`` under ``rules``: reduce, check feasibility, decompose into GNF,
    anonymize every sub-table.  Returns the in-memory :class:`Release`; write it with
    :func:`versapub.write_release`, which verifies it from its files first.

    ``table`` is an :class:`EncodedTable` (e.g. from :func:`versapub.read_table`) or a
    mapping ``{column: [text values]}``.  ``rules`` are strings ``"a, b -> c"`` or
    :class:`Rule` objects.  The guarantee defaults to frequency l-diversity with ``l``.

    ``decomposition`` is ``"uad"`` (default), ``"gd"``, ``"single-attribute"`` or
    ``"multi-sa"`` (Appendix B: one table, SA = every right-hand side, groups chosen by an
    integer program solved with CP-SAT within ``multi_sa_time_limit_s`` and refused above
    ``multi_sa_max_combinations`` distinct SA combinations; unselectable records have
    their sensitive values suppressed).  GD's
    greedy add-back (Algorithm 1, steps 5–8) runs until no GNF-preserving pair remains;
    ``gd_stop_when_worse`` stops at the first step that does not lower the KL-divergence,
    ``gd_max_candidates`` scores only a seeded random subset of candidates per step (an
    approximation); ``gd_jobs`` threads score a step's candidates (default: one per CPU;
    the result does not depend on it).  ``columns`` declares column roles
    (:class:`~versapub.privacy.roles.ColumnRoles`): identifying columns are removed, and
    undeclared columns that look like direct identifiers (near-unique, or named like ``id``)
    are refused.  Every sub-table is anonymized with a generator derived from ``seed``
    and the sub-table, so the same sub-table is anonymized identically wherever it occurs.
    """
    hook = progress or _no_progress
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    if not isinstance(table, EncodedTable):
        if not isinstance(table, Mapping):
            raise InputError(
                "The table to publish must be an EncodedTable (read with versapub.read_table) or a mapping "
                f"{{column: [values]}}, got {type(table).__name__}."
            )
        table = EncodedTable.from_columns({k: list(v) for k, v in table.items()})
    if isinstance(guarantee, Mapping):
        guarantee = make_guarantee(dict(guarantee))
    g: Guarantee = guarantee if guarantee is not None else make_guarantee({"name": "l-diversity", "l": l})
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"seed must be a whole number >= 0, got {seed!r}.")
    rng = np.random.default_rng(int(seed))
    if gd_max_candidates is not None and (isinstance(gd_max_candidates, bool) or gd_max_candidates < 1):
        raise InputError(f"gd_max_candidates must be a whole number >= 1, got {gd_max_candidates!r}.")

    hook("checking rules", 0, 1)
    parsed = parse_rules(rules)
    validate_rules(parsed, table.names)
    roles = columns if columns is not None else ColumnRoles()
    table, warnings = apply_roles(table, parsed, roles)
    require_no_identifiers(table, parsed, roles)
    reduction = reduce_rules(parsed)
    feas = require_feasible(table, reduction.rules, g)
    lap("rules")

    hook("decomposing", 0, 1)
    decompose = get_decomposition(decomposition)
    schema = decompose(table, reduction.rules, rng)
    verdict = require_gnf(schema, reduction.rules, decomposition)
    anon = get_anonymizer(anonymizer)
    multi = MultiSAAnatomy(multi_sa_time_limit_s, multi_sa_max_combinations)
    params: dict[str, Any] = {}
    if decomposition.lower() == "multi-sa":
        params = multi.params()
    trace: list[dict[str, Any]] = []
    if decomposition.lower() == "gd":
        scorer = KLScorer(table, anon, g, int(seed))
        params = {"stop_when_worse": gd_stop_when_worse, "max_candidates": gd_max_candidates}
        initial = scorer.score(schema)
        trace.append({"step": 0, "kl": initial, "added": None})

        def on_step(step: AddBackStep) -> None:
            trace.append({"step": len(trace), "kl": step.kl, "added": [step.attribute, step.table],
                          "candidates": step.candidates, "pruned": step.pruned})  # fmt: skip
            hook(f"GD add-back: {step.attribute} -> {step.table}, KL {step.kl:.5f}", len(trace), len(trace) + 1)

        def on_candidate(step_no: int, scored: int, total: int, best: float) -> None:
            hook(f"GD step {step_no}: scoring candidates, best KL so far {best:.5f}", scored, total)

        schema, _ = add_back(
            schema, reduction.rules, scorer.score, stop_when_worse=gd_stop_when_worse,
            max_candidates=gd_max_candidates, rng=rng, on_step=on_step, attributes=table.names,
            n_jobs=gd_jobs if gd_jobs is not None else (os.cpu_count() or 1), on_candidate=on_candidate,
        )  # fmt: skip
        verdict = require_gnf(schema, reduction.rules, decomposition)
    if schema.attributes != frozenset(table.names):
        missing = sorted(set(table.names) - schema.attributes)
        raise SchemaError(
            f"Internal error: the {decomposition} decomposition left attribute(s) {missing} "
            "unpublished, so nothing was published. Please report this as a bug."
        )
    lap("decompose")

    published = []
    total = len(schema.tables)
    for i, sub in enumerate(schema.tables):
        hook(f"anonymizing {sub.name} ({len(sub.attributes)} attributes)", i, total)
        say = _step_hook(hook, i, total)
        published.append(PublishedTable(sub.name, anonymize(table, sub, anon, g, int(seed), multi, say)))
    hook("anonymized", total, total)
    lap("anonymize")

    identity = {p.name: identity_risk(table, p.table) for p in published}
    for p in published:
        if identity[p.name]["unique_share"] >= UNIQUE_SHARE and table.n_rows >= MIN_RECORDS:
            shown = ", ".join(a for a in p.attributes if a not in p.table.sensitive_attributes)
            warnings.append(
                f"table {p.name} publishes ({shown}) exactly, and {identity[p.name]['unique_share']:.0%} of the "
                "records are the only one with their values there: anyone who knows those values of a person can "
                "find the person's record. Add a rule over these attributes, generalize one with a hierarchy, or "
                "declare a direct identifier among them --identifying"
            )
    info = input_info or InputInfo(rows_read=table.n_rows + table.n_dropped, rows_dropped_missing=table.n_dropped)
    return Release(
        tables=tuple(published),
        source=table,
        guarantee=g,
        reduction=reduction,
        feasibility=tuple(feas),
        schema=schema,
        gnf=verdict,
        decomposition=decomposition.lower(),
        decomposition_params=params,
        decomposition_trace=trace,
        anonymizer=anon.name,
        anonymizer_params=anon.params(),
        seed=int(seed),
        input=info,
        timings=timings,
        columns=roles.to_manifest(removed=list(roles.identifying)),
        identity=identity,
        warnings=warnings,
    )
