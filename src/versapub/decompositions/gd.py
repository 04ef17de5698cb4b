"""GD — Guardian Decomposition (Algorithm 1 of Jin et al., KDD 2010), on the schema level.

Steps 1–4 (:func:`guardian_decomposition`): start from one table holding every attribute
and enforcing one rule (chosen with the seeded generator); while some rule violates GNF
(the first violating rule in the given order, as the GNF checker reports it), remove its
``S`` from every table and add a table ``Q ∪ {S}`` enforcing it.

Steps 5–8 (:func:`add_back`): while some (attribute, table) pair keeps the schema in GNF
when the attribute is added to the table, add the pair whose release has the smallest
KL-divergence.  The KL-divergence needs the data and the anonymizer, which this layer
does not know: the caller passes ``score(schema) -> KL``.  Candidates that break GNF are
pruned from the schema alone before ``score`` is called.

Choices (``docs/choices.md``): an anonymized table always declares the rule
``(its other attributes) -> S`` (Anatomy protects ``S`` against every other attribute of
the table); a table whose sensitive attribute is removed becomes plain; a table left
without attributes disappears.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from versapub.data.source import Source
from versapub.errors import SchemaError
from versapub.privacy.rules import Rule
from versapub.schema.gnf import check_gnf, gnf_holds
from versapub.schema.model import Schema, SubTable


def _table(name: str, attrs: Sequence[str], sensitive: str | None, order: dict[str, int]) -> SubTable | None:
    attrs = sorted(set(attrs), key=order.__getitem__)
    if not attrs:
        return None
    if sensitive is None or sensitive not in attrs or len(attrs) == 1:
        return SubTable(name, tuple(attrs))
    lhs = tuple(a for a in attrs if a != sensitive)
    return SubTable(name, (*lhs, sensitive), Rule(lhs, sensitive))


def _renamed(tables: Sequence[SubTable]) -> Schema:
    """The tables numbered T1, T2, ...; a table equal to an earlier one (the same attributes
    and rule: removing a sensitive attribute from two tables can leave the same one-column
    table twice) is published once."""
    seen: set[tuple[frozenset[str], Rule | None]] = set()
    unique = []
    for t in tables:
        if (t.attribute_set, t.enforces) not in seen:
            seen.add((t.attribute_set, t.enforces))
            unique.append(t)
    return Schema(tuple(SubTable(f"T{i + 1}", t.attributes, t.enforces) for i, t in enumerate(unique)))


def gd_initial(table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema:
    """GD steps 1–4 as a decomposition (the API adds steps 5–8, which need the anonymizer
    and the release model)."""
    return guardian_decomposition(table.names, rules, rng)


def guardian_decomposition(
    attributes: Sequence[str], rules: Sequence[Rule], rng: np.random.Generator, max_rounds: int | None = None
) -> Schema:
    """Steps 1–4 of Algorithm 1."""
    order = {a: i for i, a in enumerate(attributes)}
    if not rules:
        return Schema((SubTable("T1", tuple(attributes)),))
    first = rules[int(rng.integers(len(rules)))]
    start = _table("T1", attributes, first.rhs, order)
    assert start is not None
    tables: list[SubTable] = [start]
    handled: dict[Rule, int] = {}
    rhs_all = {r.rhs for r in rules}
    for _ in range(max_rounds or 4 * len(rules) + 4):
        verdict = check_gnf(_renamed(tables), rules)
        bad = next((v.rule for v in verdict.verdicts if not v.holds), None)
        if bad is None:
            return _renamed(tables)
        handled[bad] = handled.get(bad, 0) + 1
        lhs = list(bad.lhs)
        if handled[bad] == 2:
            # Mutually dependent rules (a -> b and b -> a) make Algorithm 1 cycle: each
            # removes the other's S.  On a rule's second visit its new table leaves out the
            # LHS attributes that other tables protect as their sensitive attribute ...
            protected = {t.sensitive for t in tables if t.sensitive is not None}
            lhs = [a for a in bad.lhs if a not in protected]
        elif handled[bad] > 2:  # ... and from the third visit on, every attribute some rule protects
            lhs = [a for a in bad.lhs if a not in rhs_all]
        kept = []
        for t in tables:
            rest = [a for a in t.attributes if a != bad.rhs]
            nt = _table(t.name, rest, t.sensitive if t.sensitive != bad.rhs else None, order)
            if nt is not None:
                kept.append(nt)
        new = _table(f"T{len(kept) + 1}", [*lhs, bad.rhs], bad.rhs, order)
        assert new is not None
        tables = [*kept, new]
    # Not converged (cyclic rule sets): start from single-attribute tables, which are in
    # GNF; the add-back then grows them while GNF holds.
    single = Schema(tuple(SubTable(f"T{i + 1}", (a,)) for i, a in enumerate(attributes)))
    if not check_gnf(single, rules).ok:  # cannot happen (Lemma 1)
        raise SchemaError("Internal error: single-attribute tables are not in GNF.")
    return single


@dataclass(frozen=True)
class AddBackStep:
    """One greedy step: the pair added, the KL after it, and how many candidates were scored."""

    attribute: str
    table: str
    kl: float
    candidates: int
    pruned: int


def candidates(
    schema: Schema, rules: Sequence[Rule], attributes: Sequence[str] | None = None
) -> tuple[list[tuple[str, int, Schema]], int]:
    """Every (attribute, table) addition that keeps ``schema`` in GNF (and does not make a
    table equal to another), and how many were pruned."""
    order = {a: i for i, a in enumerate(attributes or sorted(schema.attributes))}
    out = []
    pruned = 0
    for ti, t in enumerate(schema.tables):
        for a in sorted(schema.attributes - t.attribute_set, key=order.__getitem__):
            nt = _table(t.name, [*t.attributes, a], t.sensitive, order)
            assert nt is not None
            if any(o.attribute_set == nt.attribute_set and o.enforces == nt.enforces for o in schema.tables):
                continue  # the same table twice publishes nothing more
            cand = Schema((*schema.tables[:ti], nt, *schema.tables[ti + 1 :]))
            if gnf_holds(cand, rules):
                out.append((a, ti, cand))
            else:
                pruned += 1
    return out, pruned


def add_back(
    schema: Schema,
    rules: Sequence[Rule],
    score: Callable[[Schema], float],
    *,
    stop_when_worse: bool = False,
    max_candidates: int | None = None,
    rng: np.random.Generator | None = None,
    on_step: Callable[[AddBackStep], None] | None = None,
    attributes: Sequence[str] | None = None,
    n_jobs: int = 1,
    on_candidate: Callable[[int, int, int, float], None] | None = None,
) -> tuple[Schema, list[AddBackStep]]:
    """Steps 5–8 of Algorithm 1 (greedy add-back).

    ``stop_when_worse`` stops at the first step whose best KL is not lower than the current
    one (an option; the paper continues until no pair remains).  ``max_candidates`` scores
    only a seeded random subset of that many candidates per step — an explicit
    approximation.  ``n_jobs`` > 1 scores a step's candidates in that many threads (the
    result is the same: ties are broken by candidate order, not by finishing order).
    ``on_candidate(step, scored, total, best_kl)`` reports each scored candidate.  A candidate
    scored ``math.inf`` is one the job cannot publish (e.g. its floor on published cells):
    never taken; the add-back ends when no other remains.
    """
    trace: list[AddBackStep] = []
    current = score(schema)
    while True:
        cands, pruned = candidates(schema, rules, attributes)
        if not cands:
            return schema, trace
        if max_candidates is not None and len(cands) > max_candidates:
            gen = rng if rng is not None else np.random.default_rng(0)
            pick = sorted(gen.choice(len(cands), size=max_candidates, replace=False).tolist())
            cands = [cands[i] for i in pick]
        lock = threading.Lock()
        done: list[float] = [0.0, math.inf]

        def scored_one(
            c: Schema,
            total: int = len(cands),
            step_no: int = len(trace) + 1,
            lock: Any = lock,
            done: list[float] = done,
        ) -> float:
            kl = score(c)
            if on_candidate is not None:
                with lock:
                    done[0] += 1
                    done[1] = min(done[1], kl)
                    on_candidate(step_no, int(done[0]), total, done[1])
            return kl

        if n_jobs > 1 and len(cands) > 1:
            with ThreadPoolExecutor(max_workers=n_jobs) as pool:
                kls = list(pool.map(scored_one, [c for _, _, c in cands]))
        else:
            kls = [scored_one(c) for _, _, c in cands]
        scored = [(kl, a, ti, c) for kl, (a, ti, c) in zip(kls, cands, strict=True) if math.isfinite(kl)]
        if not scored:  # every candidate is one the job cannot publish (score: math.inf)
            return schema, trace
        best_kl, a, ti, best = min(scored, key=lambda x: (x[0], x[2], x[1]))
        if stop_when_worse and best_kl >= current:
            return schema, trace
        step = AddBackStep(a, schema.tables[ti].name, best_kl, len(cands), pruned)
        trace.append(step)
        if on_step is not None:
            on_step(step)
        schema, current = best, best_kl
