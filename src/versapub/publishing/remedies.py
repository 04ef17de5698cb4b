"""Ways out that work (issue 64, item 4): for a set of columns the screen refuses, the
smallest treatment of its columns under which the whole set's recovery falls below the
guarantee's bound — computed, checked on held-out records, and printed as a ready
``--treat`` argument.

The ladder, least perturbation first: additive noise of 10, 25, 50, 100 and 200 % of each
column's spread, and microaggregation into groups of 5, 10, 25, 50 and 100 records (both
on the set's many-valued numeric columns, together). Each rung is applied by the treatment
plug-in itself to a seeded sample of the input (the screen's records), and the screen is run
again on it — the same learners, the same candidates, the same bound — with three
independent draws; a rung is the remedy when, in each, the strongest set's share (listed or
not) lies at most half its interval above what the guarantee allows (where a blind guess
scores) — not merely within its whole interval, so that a secret draw at publish is not one
unlucky draw away from a refusal (measured in ``benchmarks/proxies.py``).
The first noise rung and the first microaggregation rung that pass are offered; a set with
no many-valued numeric column gets none (drop or coarsen a column, or protect the attribute)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.errors import VersapubError
from versapub.privacy.rules import Rule
from versapub.privacy.screens.computing import KEY_VALUES, Limit
from versapub.privacy.screens.proxy_sets import SAMPLE, SetProxy, screen_sets
from versapub.treatments import make_treatment

NOISE = (10, 25, 50, 100, 200)
GROUPS = (5, 10, 25, 50, 100)
#: Independent draws a rung must pass.
DRAWS = 3


def _numeric(table: EncodedTable, column: str) -> bool:
    col = table.column(column)
    if col.cardinality <= KEY_VALUES:
        return False
    try:
        np.asarray([v for v in col.values if str(v).strip() != ""], dtype=np.float64)
    except ValueError:
        return False
    return True


def _passes(
    sample: EncodedTable,
    spec: tuple[str, dict[str, object]],
    proxy: SetProxy,
    layout: Sequence[tuple[str, Sequence[str]]],
    limit: Limit,
    truth: EncodedTable,
) -> bool:
    """The screen refuses nothing of the rule after the treatment ``spec`` on ``sample``, in
    every one of :data:`DRAWS` independent draws."""
    name, params = spec
    for draw in range(DRAWS):
        try:
            treated = make_treatment(name, **params).apply(sample, np.random.default_rng([64, draw])).table
        except VersapubError:
            return False
        found = screen_sets(treated, [proxy.rule], layout, {proxy.rule: limit}, seed=draw, truth=truth, every=True)
        # not refused, and not near it: the strongest set's share (listed or not) at most half its
        # interval above what the guarantee allows, where a blind guess already scores (a secret
        # draw at publish is another draw: a rung that passes by its whole interval is refused
        # again one publish in a few; measured in benchmarks/proxies.py)
        if any(
            p.breach or max(p.share, p.best_share) - (p.share - p.low) / 2 > max(p.bound, p.baseline) for p in found
        ):
            return False
    return True


def remedies(
    table: Source,
    proxy: SetProxy,
    layout: Sequence[tuple[str, Sequence[str]]],
    limit: Limit,
    truth: Source | None = None,
) -> list[str]:
    """The ready ``--treat`` arguments that bring ``proxy``'s set below its bound (module
    docstring): at most one noise and one microaggregation rung; none for a table not in
    memory or a set without a many-valued numeric column."""
    if not isinstance(table, EncodedTable):
        return []
    whole = list(dict.fromkeys([*proxy.best_columns, *proxy.columns]))
    cols = [c for c in whole if c in table.names and _numeric(table, c)]
    if not cols:
        return []
    rng = np.random.default_rng(64)
    n = table.n_rows
    rows = np.sort(rng.choice(n, size=SAMPLE, replace=False)) if n > SAMPLE else np.arange(n)
    sample = table.take(rows)
    original = truth if isinstance(truth, EncodedTable) and proxy.sensitive in truth.names else table
    target = original.take(rows)
    joined = ";".join(cols)
    # the set alone where it is published (its columns and the left-hand side that reaches them)
    keep = set(whole) | set(proxy.rule.lhs)
    layout = [(name, [c for c in published if c in keep]) for name, published in layout]
    out: list[str] = []
    ladders: Mapping[str, Sequence[tuple[str, dict[str, object]]]] = {
        "noise": [("noise", {"columns": tuple(cols), "magnitude": m}) for m in NOISE],
        "microaggregation": [("microaggregation", {"columns": tuple(cols), "k": k}) for k in GROUPS],
    }
    for rungs in ladders.values():
        for spec in rungs:
            if spec[0] == "microaggregation" and int(spec[1]["k"]) * 2 > len(rows):  # type: ignore[call-overload]
                break
            if _passes(sample, spec, proxy, layout, limit, target):
                name, params = spec
                rest = ",".join(f"{k}={v}" for k, v in params.items() if k != "columns")
                out.append(f"{name}:columns={joined},{rest}")
                break
    return out


def with_remedies(
    table: Source,
    refused: Sequence[SetProxy],
    layout: Sequence[tuple[str, Sequence[str]]],
    limits: Mapping[Rule, Limit],
    truth: Source | None = None,
) -> list[SetProxy]:
    """Each refused set with its computed remedies (the refusal names them)."""
    from dataclasses import replace

    return [
        replace(p, remedies=tuple(remedies(table, p, layout, limits[p.rule], truth))) if p.refused else p
        for p in refused
    ]
