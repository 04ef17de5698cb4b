"""What generalizing anonymizers (Mondrian, Incognito) share: each quasi-identifier as a
:class:`Dimension` (its leaves in order, and its hierarchy when it has one), and turning
equivalence classes into a ``generalized`` table.

A class covers, per attribute, either a *range* of the attribute's values in value order
(an ordered attribute without hierarchy: published as ``[lo, hi]``, or the value itself
when ``lo = hi``), a *set* of the values of an unordered attribute without hierarchy
(published as ``{Asian, Black}``), or a *node* of its hierarchy (published as the node's
label; a leaf is itself).

Ordered or not (issue 44, docs/choices.md): an attribute without hierarchy is *ordered* when
every value that is not missing holds a digit — numbers, dates, date-times, numbered brackets
(``[70-80)``), codes (``E08``) — and is cut in value order; otherwise (``race``, ``gender``)
it is *unordered*: its values are ranked by decreasing frequency (ties by spelling), a cut
splits a class's run of that order in two, and a class publishes the set of values between
the first and the last it holds in that order.  A missing (empty) value is ranked last in
either case, so it is never the lower end of a range: a range that reaches it is published
as ``[20, 99] or (empty)``.  The published table counts records per (class labels, sensitive value); each
label's leaves are listed for the reader (``docs/release-format.md``, kind
``generalized``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from versapub.anonymizers.base import AnonymizedTable, Labels, as_rules
from versapub.data.counts import CountTable
from versapub.data.groupby import group_rows
from versapub.data.hierarchy import Hierarchy
from versapub.data.missing import EMPTY_LABEL
from versapub.data.order import numeric, ranks
from versapub.data.source import Source
from versapub.data.table import EncodedTable, is_missing_value
from versapub.errors import HierarchyError
from versapub.privacy.guarantees.base import Guarantee, Histograms
from versapub.privacy.guarantees.induced import induced_histograms
from versapub.privacy.rules import Rule

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Dimension:
    """One quasi-identifier: ``rank[c]`` is code ``c``'s position in the leaf order (value
    order, or for a hierarchy an order in which every node's leaves are contiguous);
    ``width[c]`` the number its range is measured in (the value when every value is a
    number, else its rank); ``nodes[k][c]`` the hierarchy node of code ``c`` at level ``k``
    with ``labels[k]`` the node labels (``None`` without hierarchy)."""

    attribute: str
    values: npt.NDArray[np.object_]
    rank: IntArray
    width: Floats
    nodes: tuple[IntArray, ...] | None = None
    labels: tuple[tuple[str, ...], ...] | None = None
    #: Hierarchy labels published under another name: (label, level, published label).
    renamed: tuple[tuple[str, int, str], ...] = ()
    #: Without hierarchy: an unordered attribute (its classes publish sets of values).
    unordered: bool = False

    @property
    def hierarchical(self) -> bool:
        return self.nodes is not None

    @property
    def top(self) -> int:
        """The root's level (0 without hierarchy)."""
        return 0 if self.nodes is None else len(self.nodes) - 1

    @property
    def span(self) -> float:
        """The whole domain's range (the normalizer of a class's range)."""
        return float(self.width.max() - self.width.min()) if len(self.width) else 0.0


def dimension(table: Source, attribute: str, hierarchy: Hierarchy | None) -> Dimension:
    """The attribute as a dimension (its hierarchy must cover every value)."""
    col = table.column(attribute)
    values = col.values
    if hierarchy is None:
        text = [str(v) for v in values]
        missing = np.array([is_missing_value(v) for v in text], dtype=bool)
        unordered = not all(m or any(ch.isdigit() for ch in v) for v, m in zip(text, missing, strict=True))
        if unordered:  # by decreasing frequency, ties by spelling, the missing value last
            counts = col.counts()
            order = sorted(range(len(text)), key=lambda c: (bool(missing[c]), -int(counts[c]), text[c]))
        else:  # value order, the missing value last
            by_value = np.argsort(ranks(values), kind="stable")
            order = [int(c) for c in by_value if not missing[c]] + [int(c) for c in by_value if missing[c]]
        r = np.empty(len(text), dtype=np.int64)
        r[np.asarray(order, dtype=np.int64)] = np.arange(len(text), dtype=np.int64)
        num = None if unordered else numeric(values)
        return Dimension(attribute, values, r, num if num is not None else r.astype(np.float64), unordered=unordered)
    nodes = hierarchy.node_codes(col)
    row = {r[0]: r for r in hierarchy.levels}
    labels: list[tuple[str, ...]] = []
    for k in range(hierarchy.height):  # node ids are the ranks of the sorted labels (node_codes)
        labels.append(tuple(sorted({str(row[str(v)][k]) for v in values})))
    # Leaf order: by node from the root down, then by value order: every node's leaves contiguous
    # (np.lexsort's last key is the primary one: the level below the root).
    value_rank = ranks(values)
    by_node = np.lexsort((value_rank, *(nodes[k] for k in range(1, hierarchy.height))))
    r = np.empty(len(values), dtype=np.int64)
    r[by_node] = np.arange(len(values), dtype=np.int64)
    distinct, renamed = distinct_labels(values, nodes, labels)
    return Dimension(attribute, values, r, r.astype(np.float64), nodes, distinct, renamed)


def distinct_labels(
    values: npt.NDArray[np.object_], nodes: Sequence[IntArray], labels: Sequence[tuple[str, ...]]
) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, int, str], ...]]:
    """Hierarchy labels made unambiguous, as ARX files come: a node whose label is also a
    value of the column (``Other;Other;*`` beside ``Asian;Other;*``) or another node's label
    at another level, covering other values, is published as ``LABEL (level K)``; a label
    that names the same values (a padded level) is kept.  One pass per node, not per record.
    Returns the labels per level and the renamings ``(label, level, published)``."""
    cover: dict[str, frozenset[int]] = {str(v): frozenset({c}) for c, v in enumerate(values)}
    out: list[tuple[str, ...]] = [tuple(labels[0])]
    renamed: list[tuple[str, int, str]] = []
    for k in range(1, len(labels)):
        level: list[str] = []
        for v, label in enumerate(labels[k]):
            covers = frozenset(np.flatnonzero(nodes[k] == v).tolist())
            name, i = label, 1
            while name in cover and cover[name] != covers:
                i += 1
                name = f"{label} (level {k})" if i == 2 else f"{label} (level {k}, {i - 1})"
            if name != label:
                renamed.append((label, k, name))
            cover.setdefault(name, covers)
            level.append(name)
        out.append(tuple(level))
    return tuple(out), tuple(renamed)


def dimensions(
    table: Source, attributes: Sequence[str], hierarchies: Mapping[str, Hierarchy] | None
) -> list[Dimension]:
    return [dimension(table, a, (hierarchies or {}).get(a)) for a in attributes]


Spans = dict[str, tuple[int, int]]


def leaf_order(dim: Dimension) -> tuple[str, ...]:
    """The dimension's leaves in its order (value order, or a hierarchy's leaf order)."""
    return tuple(str(v) for v in dim.values[np.argsort(dim.rank)])


def range_labels(dim: Dimension, lo: IntArray, hi: IntArray) -> tuple[IntArray, list[str], Spans]:
    """Classes covering leaf ranks ``lo..hi``: each class's code in the extended dictionary
    (the leaves, then the new labels), the new labels, and each label's span of positions."""
    by_rank = np.argsort(dim.rank)  # code at each rank
    card = len(dim.values)
    codes = by_rank[lo].astype(np.int64)
    wide = lo != hi
    key, inv = np.unique(lo[wide] * card + hi[wide], return_inverse=True)  # one int per (lo, hi)
    first, last = key // card, key % card
    leaves = [str(v) for v in dim.values[by_rank]]  # leaf text at each rank
    if dim.unordered or (card and is_missing_value(leaves[-1])):
        labels = [run_label(leaves, int(a), int(b), dim.unordered) for a, b in zip(first, last, strict=True)]
    else:
        text = pa.array(leaves, type=pa.string())
        joined = pc.binary_join_element_wise("[", text.take(pa.array(first)), ", ", text.take(pa.array(last)), "]", "")
        labels = joined.to_pylist()
    clash = sorted(set(labels) & {str(v) for v in dim.values})
    if clash:
        raise HierarchyError(
            f"Attribute {dim.attribute!r} has a value {clash[0]!r} that reads like a range of its values."
        )
    spans = dict(zip(labels, zip(first.tolist(), last.tolist(), strict=True), strict=True))
    codes[wide] = card + np.asarray(inv, dtype=np.int64).ravel()
    return codes, labels, spans


#: How the missing (empty) value is written inside a published set or range.
EMPTY = EMPTY_LABEL
#: A set of more values than this is written with its first three, an ellipsis, its last
#: one and its size: ``{White, Black, Asian, …, Other} (7 values)``.
SET_SHOWN = 6


def run_label(leaves: Sequence[str], first: int, last: int, unordered: bool) -> str:
    """The published label of the leaves at positions ``first..last`` (``last > first``): a
    set ``{a, b}`` for an unordered attribute, a range ``[lo, hi]`` otherwise; the missing
    value (always last) written :data:`EMPTY`, never a range's end (``[20, 99] or (empty)``)."""
    run = list(leaves[first : last + 1])
    empty = is_missing_value(run[-1])
    if unordered:
        shown = [EMPTY if is_missing_value(v) else v for v in run]
        if len(shown) > SET_SHOWN:
            return "{" + ", ".join([*shown[:3], "…", shown[-1]]) + "}" + f" ({len(shown)} values)"
        return "{" + ", ".join(shown) + "}"
    if not empty:
        return f"[{run[0]}, {run[-1]}]"
    rest = run[:-1]
    return f"{rest[0] if len(rest) == 1 else f'[{rest[0]}, {rest[-1]}]'} or {EMPTY}"


def node_labels(dim: Dimension, level: IntArray, node: IntArray) -> tuple[IntArray, list[str], Spans]:
    """Classes covering hierarchy node ``node`` at ``level``: as :func:`range_labels` (a
    node's leaves are contiguous in the dimension's leaf order)."""
    assert dim.nodes is not None and dim.labels is not None
    card = len(dim.values)
    codes = np.empty(len(level), dtype=np.int64)
    leaf = level == 0
    codes[leaf] = node[leaf]
    pairs, inv = np.unique(np.stack([level[~leaf], node[~leaf]]), axis=1, return_inverse=True)
    inv = np.asarray(inv, dtype=np.int64).ravel()
    labels: list[str] = []
    spans: Spans = {}
    index: dict[str, int] = {}
    taken = {str(v): c for c, v in enumerate(dim.values)}
    slot = np.empty(pairs.shape[1], dtype=np.int64)
    for j, (k, v) in enumerate(pairs.T):  # one pass per distinct node (never per record)
        label = dim.labels[int(k)][int(v)]
        covered = np.flatnonzero(dim.nodes[int(k)] == v)
        if label in taken:
            if len(covered) == 1 and taken[label] == covered[0]:
                slot[j] = covered[0]  # a padded level: the node is the leaf itself
                continue
            raise HierarchyError(
                f"The hierarchy of {dim.attribute!r} has a node {label!r} (level {int(k)}) that is also a value "
                "of the column but covers other values; rename the node."
            )
        if label not in spans:
            pos = dim.rank[covered]
            spans[label] = (int(pos.min()), int(pos.max()))
            index[label] = card + len(labels)
            labels.append(label)
        slot[j] = index[label]
    codes[~leaf] = slot[inv]
    return codes, labels, spans


def published_values(
    dim: Dimension, used: IntArray
) -> tuple[IntArray, IntArray, npt.NDArray[np.object_], tuple[list[str], Spans], int]:
    """One attribute's published values from the covers its classes use (``2 x m``: lo, hi
    ranks, or level, node): sorted cover keys, their codes in the attribute's dictionary
    (leaves and labels, in text order), that dictionary, the labels' spans and the key's
    width."""
    a, b = used
    codes, labels, spans = node_labels(dim, a, b) if dim.nodes is not None else range_labels(dim, a, b)
    ext = np.concatenate([dim.values, np.array(labels, dtype=object)])
    order = np.argsort(ext.astype(str), kind="stable")
    rank = np.empty(len(ext), dtype=np.int64)
    rank[order] = np.arange(len(ext), dtype=np.int64)
    width = int(b.max()) + 1 if len(b) else 1
    return a * width + b, rank[codes], ext[order], (labels, spans), width


@dataclass(frozen=True)
class Target:
    """What a generalizing anonymizer protects: the rule's sensitive attribute (its codes and
    domain size) and the quasi-identifiers (every other attribute); with no rule (the
    classic k-anonymity job) every attribute is a quasi-identifier and the sensitive codes
    are all 0 (one value)."""

    rule: Rule | None
    qi: tuple[str, ...]
    codes: IntArray
    cardinality: int
    #: A sensitive attribute published without a rule (a marginal of a collection).
    sensitive: str | None = None
    #: Columns published exactly in each record's row, not part of the classes (classic job).
    kept: tuple[str, ...] = ()


class KeepingColumns:
    """The :class:`~versapub.anonymizers.base.KeepsColumns` capability of a generalizing
    anonymizer whose ``publish`` passes ``request.keep`` to :func:`target`: the classic
    job's one table, classes over every column but ``keep`` (and the rule's sensitive
    attribute), ``keep`` published exactly in each record's row (ARX's insensitive
    attributes)."""

    keeps_columns = True


def target(table: EncodedTable, rules: Rule | Sequence[Rule], name: str, keep: Sequence[str] = ()) -> Target:
    """The one rule a generalizing anonymizer enforces, or none (identities only: every
    column a quasi-identifier but those to ``keep`` exactly beside the classes); ``keep``
    never holds the rule's own attributes (the classic job's insensitive columns)."""
    rule, qi, kept = target_names(table, rules, name, keep)
    if rule is None:
        return Target(None, qi, np.zeros(table.n_rows, dtype=np.int64), 1, kept=kept)
    s = table.column(rule.rhs)
    return Target(rule, qi, s.codes.astype(np.int64), s.cardinality, kept=kept)


def target_names(
    table: Source, rules: Rule | Sequence[Rule], name: str, keep: Sequence[str] = ()
) -> tuple[Rule | None, tuple[str, ...], tuple[str, ...]]:
    """:func:`target`'s rule, quasi-identifiers and kept columns, from the names alone (any
    backend)."""
    out = (rules,) if isinstance(rules, Rule) else tuple(rules)
    kept = tuple(a for a in table.names if a in set(keep))
    if not out:
        return None, tuple(a for a in table.names if a not in set(keep)), kept
    (rule,) = as_rules(out, name, 1)
    if set(kept) & {*rule.lhs, rule.rhs}:
        raise ValueError("a rule's own attributes are never kept beside the classes")
    return rule, tuple(a for a in table.names if a != rule.rhs and a not in set(kept)), kept


def classes_table(
    table: EncodedTable,
    goal: Target,
    dims: Sequence[Dimension],
    cls: IntArray,
    cover: Sequence[tuple[IntArray, IntArray]],
    stats: dict[str, object],
) -> AnonymizedTable:
    """The ``generalized`` table of equivalence classes: ``cls[i]`` is record ``i``'s class
    and ``cover[j]`` the per-class (lo, hi) leaf ranks (ordered dimension) or (level, node)
    (hierarchy) of dimension ``j``; the sensitive attribute is published exactly."""
    n_cls = int(cls.max()) + 1 if len(cls) else 0
    kept = [table.codes(a).astype(np.int64) for a in goal.kept]
    cells = group_rows([cls, goal.codes, *kept], [n_cls, goal.cardinality, *(table.cardinality(a) for a in goal.kept)])
    c_cls = cells.keys[0].astype(np.int64)
    return cells_table(
        table,
        goal,
        dims,
        [(a[c_cls], b[c_cls]) for a, b in cover],
        cells.counts,
        stats,
        s_codes=cells.keys[1].astype(np.int64),
        kept_codes=[k.astype(np.int64) for k in cells.keys[2:]],
    )


def cells_table(
    table: EncodedTable,
    goal: Target,
    dims: Sequence[Dimension],
    cover: Sequence[tuple[IntArray, IntArray]],
    counts: IntArray,
    stats: dict[str, object],
    s_codes: IntArray | None = None,
    s_dim: Dimension | None = None,
    s_cover: tuple[IntArray, IntArray] | None = None,
    kept_codes: Sequence[IntArray] = (),
) -> AnonymizedTable:
    """The ``generalized`` table of cells: cell ``i`` holds ``counts[i]`` records whose
    quasi-identifiers are covered as ``cover[j][.][i]`` says (see :func:`classes_table`)
    and whose sensitive value is the code ``s_codes[i]`` (exact) or the node ``s_cover``
    (level, node) of the sensitive taxonomy ``s_dim`` (generalized sensitive values:
    Sequential Sweep); ``kept_codes`` the codes of ``goal.kept``, published exactly.  Cells
    with equal published values are merged."""
    names: list[str] = []
    columns: list[IntArray] = []
    cards: list[int] = []
    dicts: list[npt.NDArray[np.object_]] = []
    leaves: dict[str, Labels] = {}
    s_name = [goal.rule.rhs] if goal.rule is not None else [goal.sensitive] if goal.sensitive else []
    covered = list(zip(dims, cover, strict=True))
    if s_dim is not None and s_cover is not None:
        covered.append((s_dim, s_cover))
    notes: list[str] = list(stats.get("notes", []))  # type: ignore[call-overload]
    for dim, (a, b) in covered:
        codes, labels, spans = node_labels(dim, a, b) if dim.hierarchical else range_labels(dim, a, b)
        shown = set(labels)
        notes += [
            f"the hierarchy of {dim.attribute!r} names two things {old!r}: its level-{k} node is published as {new!r}"
            for old, k, new in dim.renamed
            if new in shown
        ]
        names.append(dim.attribute)
        columns.append(codes)
        cards.append(len(dim.values) + len(labels))
        dicts.append(np.concatenate([dim.values, np.array(labels, dtype=object)]))
        if spans:
            leaves[dim.attribute] = Labels(leaf_order(dim), spans)
    for col, kc in zip(goal.kept, kept_codes, strict=True):  # the classic job's other columns, exact
        names.append(col)
        columns.append(np.asarray(kc, dtype=np.int64))
        cards.append(table.cardinality(col))
        dicts.append(table.column(col).values)
    if s_name and s_dim is None:
        assert s_codes is not None
        names += s_name
        columns.append(np.asarray(s_codes, dtype=np.int64))
        cards.append(goal.cardinality)
        dicts.append(table.column(s_name[0]).values)
    g = group_rows(columns, cards, with_inverse=True) if columns else None
    if g is not None:
        assert g.inverse is not None
        merged = np.bincount(g.inverse, weights=counts, minlength=len(g.counts)).astype(np.int64)
        keys = list(g.keys)
    else:
        merged, keys = np.array([int(np.sum(counts))], dtype=np.int64), []
    perm = np.argsort([table.names.index(a) for a in names])  # the table's attribute order
    keys = [keys[i] for i in perm]
    dicts_in_order = [dicts[i] for i in perm]
    # Rows in value order (text, column by column), as every published table: a label's code
    # comes after the leaves', its text need not.
    text_rank = [
        np.argsort(np.argsort(d.astype(str), kind="stable"))[k] for d, k in zip(dicts_in_order, keys, strict=True)
    ]
    rows = np.lexsort(text_rank[::-1]) if keys else np.zeros(0, dtype=np.int64)
    ct = CountTable(
        tuple(names[i] for i in perm),
        tuple(k[rows] for k in keys),
        tuple(dicts_in_order),
        merged[rows],
    )
    return AnonymizedTable(
        table.names,
        "generalized",
        goal.rule,
        {"data": ct},
        {"rows": ct.n_rows, **stats, **({"notes": notes} if notes else {})},
        leaves=leaves,
        sensitive=goal.sensitive if goal.rule is None else None,
        kept=goal.kept,
    )


def published_histograms(anon: AnonymizedTable) -> Histograms:
    """The sensitive histograms of a generalized table's equivalence classes (distinct
    values of its non-sensitive columns), as published: a generalized sensitive value
    spreads over the leaves it covers (induced counts, :mod:`versapub.privacy.guarantees.induced`);
    values are leaf positions.  Without a sensitive attribute every class holds one value."""
    ct = anon.parts["data"]
    s = anon.sensitive_attributes[0] if anon.sensitive_attributes else None
    qi = [j for j, a in enumerate(ct.names) if a != s]
    if qi:
        g = group_rows(
            [ct.codes[j] for j in qi], [int(ct.codes[j].max()) + 1 if ct.n_rows else 1 for j in qi], with_inverse=True
        )
        assert g.inverse is not None
        cls, n_cls = g.inverse.astype(np.int64), len(g.counts)
    else:
        cls, n_cls = np.zeros(ct.n_rows, dtype=np.int64), 1 if ct.n_rows else 0
    if s is None:
        return Histograms(cls, ct.counts, n_cls, np.zeros(ct.n_rows, dtype=np.int64))
    j = ct.names.index(s)
    dictionary = ct.dictionaries[j]
    assert dictionary is not None
    labels = anon.leaves.get(s)
    if labels is None:
        v = ct.codes[j].astype(np.int64)
        return Histograms(cls, ct.counts, n_cls, v)
    position = {leaf: i for i, leaf in enumerate(labels.order)}
    runs = np.array(
        [labels.spans[str(v)] if str(v) in labels.spans else (position[str(v)],) * 2 for v in dictionary],
        dtype=np.int64,
    ).reshape(-1, 2)
    code = ct.codes[j].astype(np.int64)
    return induced_histograms(cls, runs[code, 0], runs[code, 1], ct.counts, n_cls)


def lowest_nodes(
    dim: Dimension, codes: IntArray, cls: IntArray, n_cls: int, start: IntArray
) -> tuple[IntArray, IntArray]:
    """Per class, the lowest hierarchy level (at most ``start``) whose node covers all its
    records, and that node."""
    assert dim.nodes is not None
    level = start.copy()
    for k in range(dim.top, -1, -1):
        ids = dim.nodes[k][codes]
        lo = np.full(n_cls, np.iinfo(np.int64).max, dtype=np.int64)
        hi = np.full(n_cls, -1, dtype=np.int64)
        np.minimum.at(lo, cls, ids)
        np.maximum.at(hi, cls, ids)
        level = np.where((lo == hi) & (k < level), k, level)
    node = np.zeros(n_cls, dtype=np.int64)
    first = np.full(n_cls, -1, dtype=np.int64)
    first[cls[::-1]] = np.arange(len(cls) - 1, -1, -1)
    for k in range(dim.top + 1):
        at = level == k
        node[at] = dim.nodes[k][codes[first[at]]]
    return level, node


def class_cover(
    dims: Sequence[Dimension],
    codes: Sequence[IntArray],
    cls: IntArray,
    n_cls: int,
    start: npt.NDArray[np.int64] | None = None,
) -> list[tuple[IntArray, IntArray]]:
    """Per dimension, each class's cover: the lowest hierarchy node over its records (no
    higher than ``start[:, j]``, default the root) or the range of its records' ranks."""
    cover = []
    for j, dim in enumerate(dims):
        if dim.hierarchical:
            top = start[:, j] if start is not None else np.full(n_cls, dim.top, dtype=np.int64)
            cover.append(lowest_nodes(dim, codes[j], cls, n_cls, top))
        else:
            r = dim.rank[codes[j]]
            lo = np.full(n_cls, np.iinfo(np.int64).max, dtype=np.int64)
            hi = np.full(n_cls, -1, dtype=np.int64)
            np.minimum.at(lo, cls, r)
            np.maximum.at(hi, cls, r)
            cover.append((lo, hi))
    return cover


def root_cover(dims: Sequence[Dimension], cover: list[tuple[IntArray, IntArray]], cls: int) -> None:
    """Class ``cls`` (the suppressed records) covers every quasi-identifier's whole domain:
    the root of a hierarchy, the full range of an ordered attribute."""
    for dim, (a, b) in zip(dims, cover, strict=True):
        if dim.hierarchical:
            assert dim.nodes is not None
            a[cls], b[cls] = dim.top, int(dim.nodes[dim.top][0])
        else:
            a[cls], b[cls] = int(dim.rank.min()), int(dim.rank.max())


def class_stats(
    guarantee: Guarantee,
    cls: IntArray,
    s: IntArray,
    n_cls: int,
    s_card: int,
    weights: IntArray | None = None,
    population: IntArray | None = None,
) -> dict[str, object]:
    """Classes, their sizes and the achieved guarantee, for the report (``weights``: records
    per row, when rows are distinct records with counts; ``population``: each class's
    population count, for a guarantee checked against the population)."""
    g = group_rows([cls, s], [n_cls, s_card], with_inverse=weights is not None)
    counts = g.counts
    if weights is not None:
        assert g.inverse is not None
        counts = np.bincount(g.inverse, weights=weights, minlength=len(g.counts)).astype(np.int64)
    h = Histograms(g.keys[0].astype(np.int64), counts, n_cls, g.keys[1].astype(np.int64), population)
    sizes = h.sizes()
    size_values, size_counts = np.unique(sizes, return_counts=True)
    return {
        "groups": n_cls,
        "group_sizes": {int(k): int(v) for k, v in zip(size_values, size_counts, strict=True)},
        "achieved": guarantee.achieved(h),
        "discernibility": int((sizes.astype(np.int64) ** 2).sum()),
    }
