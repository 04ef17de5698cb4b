"""The release model fitted to noisy, mutually inconsistent marginals (issue 52): Private-PGM's
estimator (McKenna, Sheldon & Miklau, ICML 2019, Algorithm 1 with the squared loss of §4):
mirror descent over a graphical model whose cliques cover the measured marginals, each step
computing the model's clique marginals by belief propagation on a junction tree.

The loss is ``L(mu) = sum_r ||mu_r - y_r||^2 / (2 sigma_r^2)`` over the measured marginals
``y_r`` (noise scale ``sigma_r``); mirror descent in the log-potentials ``theta`` moves each
potential against the gradient of ``L`` with respect to the marginals it covers
(``theta_C -= eta * sum_{r in C} (mu_r - y_r) / sigma_r^2``), with Armijo backtracking on
``eta``. The measured marginals' optimum is unique (``L`` is strictly convex in them and the
realizable marginals form a convex set), so any correct fit reaches the same marginals; a
test compares this one with exponentiated gradient over the whole joint table on small
domains. The total is the measured totals' minimum-variance average (as Private-PGM's)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp

from versapub.errors import InputError

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Noisy:
    """One measured marginal: its attributes, its counts (dense, C order over the attributes'
    domains) and its noise scale; ``cells``: a scale per cell where they differ (a merged cell
    of MST's compressed domain, the sum of ``m`` noisy cells, has scale ``sigma sqrt(m)``)."""

    attributes: tuple[str, ...]
    counts: Array
    sigma: float
    cells: Array | None = None

    def __post_init__(self) -> None:
        if not self.attributes or len(set(self.attributes)) != len(self.attributes) or not self.sigma > 0:
            raise ValueError(f"a measured marginal needs distinct attributes and a positive scale: {self!r}")
        if self.cells is not None and (self.cells.shape != self.counts.shape or not (self.cells > 0).all()):
            raise ValueError("a measured marginal's cell scales must be positive and shaped as its counts")

    @property
    def variance(self) -> Array | float:
        """Each cell's noise variance (one number when every cell has the same)."""
        return self.sigma**2 if self.cells is None else self.cells**2


@dataclass(frozen=True)
class Fit:
    """The fitted model: the junction tree's cliques with their marginals (consistent,
    non-negative, summing to ``total``), the loss reached and the iterations taken."""

    cliques: tuple[tuple[str, ...], ...]
    marginals: tuple[Array, ...]
    total: float
    loss: float
    iterations: int
    #: The junction tree's edges (indices into ``cliques``).
    edges: tuple[tuple[int, int], ...] = ()
    #: The log-potentials reached, one per clique (a later fit over more cliques starts there).
    potentials: tuple[Array, ...] = ()

    def project(self, attributes: Sequence[str]) -> Array:
        """The model's marginal over any ``attributes`` (C order over them): the junction
        tree's closed form ``prod mu_C / prod mu_S``, summed down by ``numpy.einsum``
        (variable elimination in a greedy order); a marginal inside one clique directly."""
        want = tuple(attributes)
        if any(set(want) <= set(c) for c in self.cliques):
            return self.marginal(want)
        names = list(dict.fromkeys(a for c in self.cliques for a in c))
        missing = [a for a in want if a not in names]
        if missing:
            raise InputError(f"The fitted model holds no attribute {missing}; its attributes: {names}.")
        index = {a: i for i, a in enumerate(names)}
        operands: list[object] = []
        for c, m in zip(self.cliques, self.marginals, strict=True):
            operands += [np.clip(m, 0.0, None) / self.total, [index[a] for a in c]]
        for i, j in self.edges:
            sep = tuple(a for a in self.cliques[i] if a in self.cliques[j])
            if sep:
                s = _project(self.cliques[i], np.clip(self.marginals[i], 0.0, None), sep) / self.total
                operands += [np.divide(1.0, s, out=np.zeros_like(s), where=s > 0), [index[a] for a in sep]]
        out = np.einsum(*operands, [index[a] for a in want], optimize="greedy")  # type: ignore[call-overload]
        return np.asarray(out, dtype=np.float64) * self.total

    def sample(self, n: int, rng: np.random.Generator) -> dict[str, npt.NDArray[np.int64]]:
        """``n`` synthetic records drawn from the model, as codes per attribute: each tree's
        root clique from its marginal, then each clique's other attributes given the values
        its parent already drew (ancestral sampling on the junction tree)."""
        if n < 0:
            raise InputError(f"The number of records to draw must be non-negative, got {n}.")
        nbrs: dict[int, list[int]] = {i: [] for i in range(len(self.cliques))}
        for i, j in self.edges:
            nbrs[i].append(j)
            nbrs[j].append(i)
        out: dict[str, npt.NDArray[np.int64]] = {}
        seen: set[int] = set()
        for root in range(len(self.cliques)):
            if root in seen:
                continue
            stack = [(root, -1)]
            while stack:
                node, parent = stack.pop()
                seen.add(node)
                self._draw(node, parent, n, rng, out)
                stack += [(k, node) for k in nbrs[node] if k != parent]
        return out

    def _draw(
        self, node: int, parent: int, n: int, rng: np.random.Generator, out: dict[str, npt.NDArray[np.int64]]
    ) -> None:
        """Draw clique ``node``'s attributes not drawn yet, given those already drawn."""
        attrs, table = self.cliques[node], np.clip(self.marginals[node], 0.0, None)
        given = tuple(a for a in attrs if a in out)
        free = tuple(a for a in attrs if a not in out)
        if not free:
            return
        shape_free = [table.shape[attrs.index(a)] for a in free]
        cond = np.transpose(table, [attrs.index(a) for a in (*given, *free)]).reshape(-1, int(np.prod(shape_free)))
        if given:
            key = np.ravel_multi_index(tuple(out[a] for a in given), [table.shape[attrs.index(a)] for a in given])
        else:
            key = np.zeros(n, dtype=np.int64)
        cell = np.empty(n, dtype=np.int64)
        for k in np.unique(key):  # one draw per separator value, not per record
            rows = np.flatnonzero(key == k)
            w = cond[k]
            p = w / w.sum() if w.sum() > 0 else np.full(w.size, 1.0 / w.size)
            cell[rows] = rng.choice(w.size, size=rows.size, p=p)
        for a, codes in zip(free, np.unravel_index(cell, shape_free), strict=True):
            out[a] = codes.astype(np.int64)

    def marginal(self, attributes: Sequence[str]) -> Array:
        """The model's marginal over ``attributes`` (inside one clique), C order over them."""
        want = tuple(attributes)
        for c, m in zip(self.cliques, self.marginals, strict=True):
            if set(want) <= set(c):
                return _project(c, m, want)
        raise InputError(f"No clique of the fitted model holds {list(want)}; its cliques: {list(self.cliques)}.")


def _project(attrs: tuple[str, ...], table: Array, want: tuple[str, ...]) -> Array:
    """Sum ``table`` (over ``attrs``) down to ``want``, its axes in ``want``'s order."""
    drop = tuple(i for i, a in enumerate(attrs) if a not in want)
    kept = [a for a in attrs if a in want]
    out = table.sum(axis=drop) if drop else table
    return np.transpose(out, [kept.index(a) for a in want]) if kept != list(want) else out


def _expand(attrs: tuple[str, ...], table: Array, to: tuple[str, ...], cards: Mapping[str, int]) -> Array:
    """``table`` over ``attrs`` broadcast to the axes of ``to`` (a superset)."""
    order = [a for a in to if a in attrs]
    moved = np.transpose(table, [attrs.index(a) for a in order]) if tuple(order) != attrs else table
    shape = [cards[a] if a in attrs else 1 for a in to]
    return moved.reshape(shape)


def junction_tree(cliques: Sequence[tuple[str, ...]]) -> tuple[list[tuple[str, ...]], list[tuple[int, int]]]:
    """Maximal cliques of a chordal completion of the graph joining the attributes measured
    together, and the edges of a junction tree over them (a maximum spanning tree of
    separator sizes)."""
    import networkx as nx

    g = nx.Graph()
    for c in cliques:
        g.add_nodes_from(c)
        g.add_edges_from((a, b) for i, a in enumerate(c) for b in c[i + 1 :])
    chordal, _ = nx.complete_to_chordal_graph(g)
    found = sorted((tuple(sorted(c)) for c in nx.chordal_graph_cliques(chordal)), key=lambda c: (-len(c), c))
    tree = nx.Graph()
    tree.add_nodes_from(range(len(found)))
    for i in range(len(found)):
        for j in range(i + 1, len(found)):
            tree.add_edge(i, j, weight=len(set(found[i]) & set(found[j])))
    span = nx.maximum_spanning_tree(tree) if len(found) > 1 else tree
    return found, sorted((min(e), max(e)) for e in span.edges())


class _Tree:
    """Belief propagation (sum-product in log space) on a junction tree."""

    def __init__(self, cliques: list[tuple[str, ...]], edges: list[tuple[int, int]], cards: Mapping[str, int]):
        self.cliques, self.cards = cliques, cards
        self.nbrs: dict[int, list[int]] = {i: [] for i in range(len(cliques))}
        for i, j in edges:
            self.nbrs[i].append(j)
            self.nbrs[j].append(i)
        self.order: list[tuple[int, int]] = []  # (child, parent) from the leaves up, one tree per component
        seen: set[int] = set()
        for root in range(len(cliques)):
            if root in seen:
                continue
            stack, visit = [(root, -1)], []
            while stack:
                node, parent = stack.pop()
                seen.add(node)
                visit.append((node, parent))
                stack += [(n, node) for n in self.nbrs[node] if n != parent]
            self.order += [(n, p) for n, p in reversed(visit) if p >= 0]

    def beliefs(self, theta: list[Array], total: float) -> list[Array]:
        """Each clique's marginal under potentials ``theta`` (log space), scaled to ``total``."""
        msg: dict[tuple[int, int], Array] = {}

        def send(i: int, j: int) -> None:
            belief = theta[i].copy()
            for k in self.nbrs[i]:
                if k != j:
                    belief = belief + msg[(k, i)]
            sep = tuple(a for a in self.cliques[i] if a in self.cliques[j])
            axes = tuple(n for n, a in enumerate(self.cliques[i]) if a not in sep)
            m = logsumexp(belief, axis=axes) if axes else belief
            msg[(i, j)] = _expand(sep, m, self.cliques[j], self.cards)

        for child, parent in self.order:
            send(child, parent)
        for child, parent in reversed(self.order):
            send(parent, child)
        out = []
        for i, t in enumerate(theta):
            b = t.copy()
            for k in self.nbrs[i]:
                b = b + msg[(k, i)]
            out.append(b)
        # each clique normalized alone: the cliques of separate components each sum to the total too
        return [total * np.exp(b - float(logsumexp(b))) for b in out]


def _total(measured: Sequence[Noisy]) -> float:
    """The records' count: the measured totals averaged with weights inverse to their
    variances (``sigma^2`` times the cells summed), the minimum-variance unbiased estimate."""
    weights = np.array([1.0 / float(np.sum(np.broadcast_to(m.variance, m.counts.shape))) for m in measured])
    totals = np.array([float(m.counts.sum()) for m in measured])
    return max(1.0, float(np.average(totals, weights=weights)))


def fit(
    measured: Sequence[Noisy],
    cards: Mapping[str, int],
    iterations: int = 1000,
    tolerance: float = 1e-9,
    start: Fit | None = None,
) -> Fit:
    """Private-PGM's mirror descent (module docstring) on ``measured`` over domains of
    ``cards`` values per attribute: stops after ``iterations`` steps or when a step lowers the
    loss by less than ``tolerance`` of it; ``start``: an earlier fit whose potentials it
    starts from (each added into a clique holding it — AIM's warm start)."""
    if not measured:
        raise InputError("Give at least one measured marginal to fit.")
    for m in measured:
        shape = tuple(cards[a] for a in m.attributes)
        if m.counts.shape != shape:
            raise InputError(f"The marginal over {list(m.attributes)} has shape {m.counts.shape}, its domain {shape}.")
    cliques, edges = junction_tree([m.attributes for m in measured])
    tree = _Tree(cliques, edges, cards)
    home = [next(i for i, c in enumerate(cliques) if set(m.attributes) <= set(c)) for m in measured]
    total = _total(measured)
    theta = [np.zeros(tuple(cards[a] for a in c)) for c in cliques]
    if start is not None:
        for c, t in zip(start.cliques, start.potentials, strict=True):
            home_of = next((i for i, d in enumerate(cliques) if set(c) <= set(d)), None)
            if home_of is not None:
                theta[home_of] = theta[home_of] + _expand(c, t, cliques[home_of], cards)

    def loss_and_grad(th: list[Array]) -> tuple[float, list[Array], list[Array]]:
        mu = tree.beliefs(th, total)
        loss, grads = 0.0, [np.zeros_like(t) for t in th]
        for m, h in zip(measured, home, strict=True):
            diff = _project(cliques[h], mu[h], m.attributes) - m.counts
            loss += float((diff**2 / (2 * m.variance)).sum())
            grads[h] = grads[h] + _expand(m.attributes, diff / m.variance, cliques[h], cards)
        return loss, grads, mu

    loss, grads, mu = loss_and_grad(theta)
    eta, done = 1.0 / total, 0
    for done in range(1, iterations + 1):  # noqa: B007 (the count is reported)
        while True:  # Armijo backtracking: the step must lower the loss by half its first-order promise
            trial = [t - eta * g for t, g in zip(theta, grads, strict=True)]
            with np.errstate(over="ignore", invalid="ignore"):
                new_loss, new_grads, new_mu = loss_and_grad(trial)
            finite = math.isfinite(new_loss) and all(np.isfinite(m).all() for m in new_mu)
            if finite:
                promise = sum(float((g * (m - nm)).sum()) for g, m, nm in zip(grads, mu, new_mu, strict=True))
                if new_loss <= loss - 0.5 * promise:
                    break
            if eta < 1e-30:
                break
            eta /= 2
        if not finite:  # no step keeps the model finite (an overflow at every size): the last finite fit
            break
        gained = loss - new_loss
        theta, loss, grads, mu = trial, new_loss, new_grads, new_mu
        eta *= 1.5
        if gained <= tolerance * max(loss, 1e-12):
            break
    return Fit(tuple(cliques), tuple(mu), total, loss, done, tuple(edges), tuple(theta))
