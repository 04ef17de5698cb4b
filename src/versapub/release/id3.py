"""ID3 decision trees on generalized data, for the functional-diversity paper's ratio of
classification accuracies ``rca = accuracy(anonymized) / accuracy(original)`` and its number
of classification rules (§5.3.2).

ID3 (Quinlan 1986): multiway splits on categorical attributes, the attribute of largest
information gain, each attribute at most once on a path.  A generalized value (here of a
feature or of the class) is handled as the paper's other measures handle it — the text on
classification is lost (``docs/choices.md``): a record whose value covers ``w`` leaves is
``w`` fractional records of weight ``1/w`` each, one per leaf (the induced-frequency view of
§2 and the count queries of §5.3.3), so every count ID3 takes is a sum of weights.  Growth
stops at ``max_depth``, below ``min_weight`` records, or when a node is pure; a leaf
predicts its heaviest class.  Trees are learned on published rows with counts
(:class:`~versapub.release.cells.Cells`); all work per node is vectorized over its rows.

A *classification rule* is a leaf's path; it is counted when, on the test records, it covers
at least ``min_cover`` records (1%) and predicts at least ``min_accuracy`` of them correctly
(default: the original tree's overall accuracy — the paper's thresholds are lost).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.release.cells import Cells

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def _entropy(mass: Floats) -> Floats:
    """Row-wise entropy (bits) of non-negative masses."""
    total = mass.sum(axis=-1, keepdims=True)
    p = np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return np.asarray(t.sum(axis=-1))


@dataclass
class Tree:
    """Nodes in creation order: the split attribute (``-1``: a leaf), the heaviest class,
    and children by leaf position (``child[(node, position)]``)."""

    features: tuple[str, ...]
    attribute: list[int] = field(default_factory=list)
    prediction: list[int] = field(default_factory=list)
    weight: list[float] = field(default_factory=list)
    child: dict[tuple[int, int], int] = field(default_factory=dict)

    @property
    def leaves(self) -> int:
        return sum(1 for a in self.attribute if a < 0)

    def route(self, positions: Sequence[IntArray]) -> IntArray:
        """The node each record (``positions[j]``: its leaf positions of feature ``j``) ends
        at: down the tree while the child of its value exists."""
        n = len(positions[0]) if positions else 0
        node = np.zeros(n, dtype=np.int64)
        attr = np.asarray(self.attribute, dtype=np.int64)
        if not self.child:
            return node
        keys = np.array(sorted(self.child), dtype=np.int64).reshape(-1, 2)
        span = int(max(int(keys[:, 1].max()) + 2, max((int(p.max()) + 2 for p in positions if len(p)), default=2)))
        flat = keys[:, 0] * span + keys[:, 1]
        target = np.array([self.child[(int(a), int(b))] for a, b in keys], dtype=np.int64)
        pos = np.stack(positions) if positions else np.zeros((0, n), dtype=np.int64)
        active = attr[node] >= 0
        while active.any():
            idx = np.flatnonzero(active)
            at = node[idx]
            value = pos[attr[at], idx]
            k = at * span + value
            i = np.searchsorted(flat, k)
            found = (i < len(flat)) & (flat[np.minimum(i, len(flat) - 1)] == k) & (value >= 0)
            node[idx[found]] = target[i[found]]
            active[idx[~found]] = False
            active[idx[found]] = attr[node[idx[found]]] >= 0
        return node


def learn(train: Cells, target: str, features: Sequence[str], max_depth: int = 5, min_weight: float = 20.0) -> Tree:
    """An ID3 tree predicting ``target`` from ``features`` on the rows of ``train``."""
    tree = Tree(tuple(features))
    n_cls = len(train.order[target])
    cf, cl = train.first[target], train.last[target]
    cw = (cl - cf + 1).astype(np.float64)
    sizes = [len(train.order[a]) for a in features]

    def class_mass(rows: IntArray, w: Floats) -> Floats:
        diff = np.zeros(n_cls + 1)
        np.add.at(diff, cf[rows], w / cw[rows])
        np.add.at(diff, cl[rows] + 1, -w / cw[rows])
        return np.cumsum(diff)[:n_cls]

    def new_node(rows: IntArray, w: Floats) -> int:
        mass = class_mass(rows, w)
        tree.attribute.append(-1)
        tree.prediction.append(int(np.argmax(mass)))
        tree.weight.append(float(w.sum()))
        return len(tree.attribute) - 1

    root_rows = np.arange(len(train.counts), dtype=np.int64)
    root_w = train.counts.astype(np.float64)
    queue: list[tuple[int, IntArray, Floats, frozenset[int], int]] = [
        (new_node(root_rows, root_w), root_rows, root_w, frozenset(), 0)
    ]
    while queue:
        node, rows, w, used, depth = queue.pop()
        mass = class_mass(rows, w)
        total = float(w.sum())
        base = float(_entropy(mass))
        if depth >= max_depth or total < min_weight or base <= 1e-12:
            continue
        best, best_gain = -1, 1e-9
        for j, a in enumerate(features):
            if j in used:
                continue
            af, al = train.first[a][rows], train.last[a][rows]
            aw = (al - af + 1).astype(np.float64)
            share = w / (aw * cw[rows])
            m = sizes[j]
            grid = np.zeros((m + 1, n_cls + 1))
            r_cf, r_cl = cf[rows], cl[rows] + 1
            np.add.at(grid, (af, r_cf), share)
            np.add.at(grid, (al + 1, r_cf), -share)
            np.add.at(grid, (af, r_cl), -share)
            np.add.at(grid, (al + 1, r_cl), share)
            joint = np.cumsum(np.cumsum(grid, axis=0), axis=1)[:m, :n_cls]
            per = joint.sum(axis=1)
            gain = base - float((per / total * _entropy(joint)).sum())
            if gain > best_gain:
                best, best_gain = j, gain
        if best < 0:
            continue
        a = features[best]
        af, al = train.first[a][rows], train.last[a][rows]
        width = al - af + 1
        rep = np.repeat(np.arange(len(rows), dtype=np.int64), width)
        value = af[rep] + (np.arange(int(width.sum()), dtype=np.int64) - np.repeat(np.cumsum(width) - width, width))
        cw_rows, c_w = rows[rep], (w / width)[rep]
        order = np.argsort(value, kind="stable")
        value, cw_rows, c_w = value[order], cw_rows[order], c_w[order]
        cuts = np.flatnonzero(np.r_[True, value[1:] != value[:-1], True])
        tree.attribute[node] = best
        for lo, hi in itertools.pairwise(cuts):
            child = new_node(cw_rows[lo:hi], c_w[lo:hi])
            tree.child[(node, int(value[lo]))] = child
            queue.append((child, cw_rows[lo:hi], c_w[lo:hi], used | {best}, depth + 1))
    return tree


def of_table(table: EncodedTable, like: Cells) -> Cells:
    """The table's distinct rows as cells over ``like``'s leaf orders (exact values: runs of
    one leaf; a value ``like`` does not know gets position -1)."""
    attrs = [a for a in like.attributes if a in table.names]
    g = group_rows([table.codes(a) for a in attrs], [table.cardinality(a) for a in attrs])
    first, last = {}, {}
    for a, k in zip(attrs, g.keys, strict=True):
        where = {v: i for i, v in enumerate(like.order[a])}
        per_code = np.array([where.get(str(v), -1) for v in table.column(a).values], dtype=np.int64)
        first[a] = per_code[k]
        last[a] = first[a].copy()
    return Cells(
        tuple(attrs), {a: like.order[a] for a in attrs}, first, last, g.counts.astype(np.int64), like.sensitive
    )


@dataclass(frozen=True)
class Evaluation:
    """Accuracy on the test records and the rules that are accurate and cover enough."""

    accuracy: float
    leaves: int
    rules: int


def evaluate(tree: Tree, test: Cells, target: str, min_cover: float, min_accuracy: float) -> Evaluation:
    """Accuracy of ``tree`` on ``test`` (exact rows with counts) and its counted rules."""
    positions = [test.first[a] for a in tree.features]
    node = tree.route(positions)
    pred = np.asarray(tree.prediction, dtype=np.int64)[node]
    truth = test.first[target]
    right = (pred == truth) * test.counts
    n = max(int(test.counts.sum()), 1)
    reach = np.bincount(node, weights=test.counts, minlength=len(tree.attribute))
    hit = np.bincount(node, weights=right, minlength=len(tree.attribute))
    leaf = np.asarray(tree.attribute) < 0
    acc = np.divide(hit, reach, out=np.zeros_like(hit), where=reach > 0)
    rules = int(((reach >= min_cover) & (acc >= min_accuracy) & leaf).sum())
    return Evaluation(float(right.sum() / n), tree.leaves, rules)


def classification(
    anon: Cells,
    original: EncodedTable,
    target: str,
    test: EncodedTable | None = None,
    max_depth: int = 5,
    min_weight: float | None = None,
    min_cover: float | None = None,
    min_accuracy: float | None = None,
    reference: Evaluation | None = None,
) -> dict[str, Any]:
    """``rca`` and the rules of trees learned on the anonymized rows and on ``original``,
    both tested on ``test`` (default: ``original``).  ``min_weight`` defaults to 0.5% of
    the records (at least 20), ``min_cover`` to 1%, ``min_accuracy`` of a counted rule to
    the original tree's overall accuracy (a rule at least as accurate as the classifier
    learned from the original).  ``reference``: the original tree's evaluation, when
    already known (:func:`reference_evaluation`)."""
    features = [a for a in anon.attributes if a != target]
    mw = min_weight if min_weight is not None else max(20.0, 0.005 * original.n_rows)
    test_cells = of_table(test if test is not None else original, anon)
    cover = min_cover if min_cover is not None else 0.01 * test_cells.n
    if reference is None:
        reference = reference_evaluation(anon, original, target, test, max_depth, mw, cover, min_accuracy)
    t_anon = learn(anon, target, features, max_depth, mw)
    acc = min_accuracy if min_accuracy is not None else reference.accuracy
    e_anon = evaluate(t_anon, test_cells, target, cover, acc)
    return {
        "target": target,
        "accuracy_anonymized": e_anon.accuracy,
        "accuracy_original": reference.accuracy,
        "rca": e_anon.accuracy / reference.accuracy if reference.accuracy > 0 else float("nan"),
        "rules_anonymized": e_anon.rules,
        "rules_original": reference.rules,
        "rule_accuracy": acc,
    }


def reference_evaluation(
    like: Cells,
    original: EncodedTable,
    target: str,
    test: EncodedTable | None = None,
    max_depth: int = 5,
    min_weight: float | None = None,
    min_cover: float | None = None,
    min_accuracy: float | None = None,
) -> Evaluation:
    """The tree learned on ``original`` (over ``like``'s leaf orders) evaluated on ``test``;
    its rules counted at ``min_accuracy`` (default: its own overall accuracy)."""
    features = [a for a in like.attributes if a != target]
    mw = min_weight if min_weight is not None else max(20.0, 0.005 * original.n_rows)
    test_cells = of_table(test if test is not None else original, like)
    cover = min_cover if min_cover is not None else 0.01 * test_cells.n
    tree = learn(of_table(original, like), target, features, max_depth, mw)
    first = evaluate(tree, test_cells, target, cover, 1.0)
    return evaluate(tree, test_cells, target, cover, min_accuracy if min_accuracy is not None else first.accuracy)
