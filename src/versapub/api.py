"""The Python API: the one place that wires the layers together.

>>> from versapub import datasets, publish
>>> release = publish(datasets.running_example(), datasets.RUNNING_EXAMPLE_RULES, l=2, seed=1)
>>> release.gnf.ok
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from versapub.anonymizers import get_anonymizer, publish_plain
from versapub.data.table import EncodedTable
from versapub.decompositions import get_decomposition
from versapub.errors import InputError, SchemaError
from versapub.privacy.feasibility import require_feasible
from versapub.privacy.guarantee import Guarantee, make_guarantee
from versapub.privacy.rules import Rule, parse_rules, reduce_rules, validate_rules
from versapub.release.model import InputInfo, PublishedTable, Release
from versapub.schema.gnf import require_gnf

#: ``progress(description, completed, total)`` is called as work advances.
ProgressHook = Callable[[str, int, int], None]


def _no_progress(description: str, completed: int, total: int) -> None:
    del description, completed, total


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
) -> Release:
    """Publish ``table`` under ``rules``: reduce, check feasibility, decompose into GNF,
    anonymize every sub-table.  Returns the in-memory :class:`Release`; write it with
    :func:`versapub.write_release`, which verifies it from its files first.

    ``table`` is an :class:`EncodedTable` (e.g. from :func:`versapub.read_table`) or a
    mapping ``{column: [text values]}``.  ``rules`` are strings ``"a, b -> c"`` or
    :class:`Rule` objects.  The guarantee defaults to frequency l-diversity with ``l``.
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
                "publish() needs an EncodedTable (see versapub.read_table) or a mapping "
                f"{{column: [values]}}, got {type(table).__name__}."
            )
        table = EncodedTable.from_columns({k: list(v) for k, v in table.items()})
    if isinstance(guarantee, Mapping):
        guarantee = make_guarantee(dict(guarantee))
    g: Guarantee = guarantee if guarantee is not None else make_guarantee({"name": "l-diversity", "l": l})
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"seed must be a whole number >= 0, got {seed!r}.")
    rng = np.random.default_rng(int(seed))

    hook("checking rules", 0, 1)
    parsed = parse_rules(rules)
    validate_rules(parsed, table.names)
    reduction = reduce_rules(parsed)
    feas = require_feasible(table, reduction.rules, g)
    lap("rules")

    hook("decomposing", 0, 1)
    decompose = get_decomposition(decomposition)
    schema = decompose(table, reduction.rules, rng)
    verdict = require_gnf(schema, reduction.rules, decomposition)
    if schema.attributes != frozenset(table.names):
        missing = sorted(set(table.names) - schema.attributes)
        raise SchemaError(
            f"Internal error: the {decomposition} decomposition left attribute(s) {missing} "
            "unpublished, so nothing was published. Please report this as a bug."
        )
    lap("decompose")

    anon = get_anonymizer(anonymizer)
    published = []
    total = len(schema.tables)
    for i, sub in enumerate(schema.tables):
        hook(f"anonymizing {sub.name} ({len(sub.attributes)} attributes)", i, total)
        part = table.select(sub.attributes)
        out = publish_plain(part) if sub.enforces is None else anon.publish(part, sub.enforces, g, rng)
        published.append(PublishedTable(sub.name, out))
    hook("anonymized", total, total)
    lap("anonymize")

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
        anonymizer=anon.name,
        anonymizer_params=anon.params(),
        seed=int(seed),
        input=info,
        timings=timings,
    )
