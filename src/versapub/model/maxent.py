"""The maximum-entropy estimate of the original table from a release (Kifer & Gehrke).

Decomposable schemas (the published tables' attribute sets admit a junction tree: the
running-intersection property holds) use the closed form: the root table's distribution
times every other table's conditional distribution given its separator,

    P(x) = p_root(x_root) · Π_{c ≠ root} p_c(x_c) / p_c(x_sep(c)),

with each table's own separator marginal in the denominator, so the result is normalized
even when two tables disagree slightly on a separator.  Factors stay sparse (observed
value combinations only; Anatomy tables in latent-group form).  Queries are answered
exactly by message passing with indicator evidence; sampling is forward sampling along
the tree.  Other schemas fall back to iterative proportional fitting on a dense joint
over the published attributes (tolerance ``IPF_TOL``, at most ``IPF_MAX_ITER`` sweeps,
refused above ``IPF_MAX_CELLS`` cells); :attr:`ReleaseModel.path` says which was used.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from versapub.errors import ReleaseError
from versapub.model.batch import BATCH_CELLS, BatchFn, remember
from versapub.model.factors import Factor, Masks
from versapub.model.sparse import JOIN_MAX_ROWS, Codes, Floats, JoinTooLarge, SparseFn
from versapub.model.spelling import unknown_attribute, unknown_value

if TYPE_CHECKING:
    import pyarrow as pa

IPF_TOL = 1e-12
IPF_MAX_ITER = 1000
IPF_MAX_CELLS = 1 << 22


@dataclass(frozen=True)
class JunctionTree:
    """Tables as cliques: ``order`` (root first, parents before children), ``parent``
    and separator attributes of every non-root clique."""

    order: tuple[int, ...]
    parent: dict[int, int]
    sep: dict[int, tuple[str, ...]]

    @property
    def disjoint(self) -> bool:
        return all(not s for s in self.sep.values())


def junction_tree(cliques: Sequence[Sequence[str]]) -> JunctionTree | None:
    """A junction tree of the cliques, or ``None`` if none exists.

    Kruskal's maximum spanning tree on shared-attribute counts (edges ``(i, j)``, ``i < j``,
    in lexicographic order, stably sorted by decreasing weight, so ties go to the earlier
    pair), then the running-intersection property is checked (every attribute's holders
    span ``holders - 1`` tree edges); the root is clique 0 and the order breadth-first
    with each clique's children in the order their edges were accepted.  Small and
    dependency-free: GD builds one tree per candidate schema."""
    k = len(cliques)
    sets = [frozenset(c) for c in cliques]
    edges = sorted(((len(sets[i] & sets[j]), i, j) for i in range(k) for j in range(i + 1, k)), key=lambda e: -e[0])
    root = list(range(k))

    def find(x: int) -> int:
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    adj: list[list[int]] = [[] for _ in range(k)]
    tree_edges = []
    for _, i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            root[rj] = ri
            adj[i].append(j)
            adj[j].append(i)
            tree_edges.append((i, j))
    holders: dict[str, int] = {}
    for members in sets:
        for a in members:
            holders[a] = holders.get(a, 0) + 1
    linked: dict[str, int] = {}
    for i, j in tree_edges:
        for a in sets[i] & sets[j]:
            linked[a] = linked.get(a, 0) + 1
    if any(linked.get(a, 0) != h - 1 for a, h in holders.items()):
        return None
    order: list[int] = [0] if k else []
    parent: dict[int, int] = {}
    for c in order:  # grows while iterating: breadth-first
        for d in adj[c]:
            if d != parent.get(c) and d not in parent and d != 0:
                parent[d] = c
                order.append(d)
    sep = {c: tuple(a for a in cliques[c] if a in sets[p]) for c, p in parent.items()}
    return JunctionTree(tuple(order), parent, sep)


def mixed_separator(tree: JunctionTree, latent: Sequence[Sequence[str]]) -> bool:
    """Does some tree edge have a table (with ``latent`` attributes) whose separator mixes
    its QI and sensitive attributes, or touches one of several sensitive attributes (a
    suppressed group changes their marginal)?  Then tables built from one table can
    still disagree on the separator and the model's Z must be computed."""
    for c, p in tree.parent.items():
        sep = set(tree.sep[c])
        for lat in (set(latent[c]), set(latent[p])):
            if sep & lat and (not sep <= lat or len(lat) > 1):
                return True
    return False


class ReleaseModel:
    """The maximum-entropy distribution over a release's attributes.

    ``domains[a]`` are attribute ``a``'s values (sorted text); all codes are indices into
    them.  ``n`` is the number of records the release describes.
    """

    #: A differentially private release's noisy marginals the model was fitted to
    #: (:class:`versapub.model.noise_interval.Measurement`): the estimates' intervals read them.
    measurements: tuple[Any, ...] = ()

    def __init__(
        self,
        factors: Sequence[Factor],
        domains: Mapping[str, npt.NDArray[np.object_]],
        n: int,
        names: Sequence[str] | None = None,
        *,
        consistent: bool = False,
    ) -> None:
        """``consistent=True`` promises that every factor was computed from one and the same
        table (as in GD's scoring): then tables agree on every separator whose marginal
        they publish exactly, Z = 1 unless an Anatomy table has a separator mixing its
        QI and sensitive attributes, and the normalizing pass is skipped."""
        self.factors = list(factors)
        #: The tables as published (on leaves); an induced model's own factors differ.
        self.published = list(factors)
        self.names = list(names) if names is not None else [f"T{i + 1}" for i in range(len(factors))]
        self.domains = {a: np.asarray(v, dtype=object) for a, v in domains.items()}
        self.n = int(n)
        self.attributes = tuple(self.domains)
        self.cards = {a: len(v) for a, v in self.domains.items()}
        self.tree = junction_tree([f.attrs for f in self.factors])
        self._dense: _Dense | None = None
        if self.tree is None:
            self._dense = _Dense.fit(self.factors, self.attributes, self.cards)
        self._den: dict[int, SparseFn] = {}
        # Z = 1 unless a child table has no support for separator values its parent
        # produces (tables that disagree on a separator); all results are divided by Z.
        self.z = 1.0
        self._skip_empty = False
        if self._dense is not None or (consistent and not self._mixed_separator()):
            self.z = 1.0
        else:
            self.z = self.probability_masks({})
        if not self.z > 0:
            raise ReleaseError("The published tables are inconsistent: the model has no mass.")
        # A subtree without evidence sends the all-ones message exactly when Z = 1.
        self._skip_empty = abs(self.z - 1.0) < 1e-12

    def _mixed_separator(self) -> bool:
        assert self.tree is not None
        return mixed_separator(self.tree, [f.latent for f in self.factors])

    @property
    def residual(self) -> float:
        """How far the model is from meeting its tables: 0 for the closed form; for IPF the
        largest difference between a table's share and the fitted marginal when it stopped
        (below ``IPF_TOL`` when it converged, else after ``IPF_MAX_ITER`` sweeps)."""
        return 0.0 if self._dense is None else self._dense.error

    @property
    def path(self) -> str:
        """``"junction-tree (closed form)"`` or ``"ipf (... sweeps)"``."""
        if self._dense is None:
            return "junction-tree (closed form)"
        return f"ipf ({self._dense.iterations} sweeps, max marginal error {self._dense.error:.1e})"

    # -- encoding -----------------------------------------------------------------
    def masks(self, predicate: Mapping[str, Iterable[str]]) -> dict[str, npt.NDArray[np.bool_]]:
        """Indicator masks over codes for ``{attribute: allowed values}``; an attribute or a
        value the release does not have is refused with the closest spellings, as by the
        query language (a silent 0 would read as an answer)."""
        out = {}
        for a, vals in predicate.items():
            if a not in self.domains:
                raise unknown_attribute(a, self.attributes)
            index = {str(v): i for i, v in enumerate(self.domains[a])}
            m = np.zeros(self.cards[a], dtype=bool)
            for v in vals if not isinstance(vals, str) else [vals]:
                if str(v) not in index:
                    raise unknown_value(a, str(v), list(index))
                m[index[str(v)]] = True
            out[a] = m
        return out

    # -- queries ------------------------------------------------------------------
    def probability_masks(self, masks: Masks) -> float:
        """``P(every attribute's code is allowed by its mask)`` by message passing."""
        if self._dense is not None:
            return self._dense.probability(masks)
        return float(self._batch([masks])[0])

    def _children(self) -> dict[int, list[int]]:
        assert self.tree is not None
        children: dict[int, list[int]] = {}
        for c, p in self.tree.parent.items():
            children.setdefault(p, []).append(c)
        return children

    def _homes(self) -> dict[str, int]:
        """Each attribute's topmost table in the tree: its evidence enters the message pass
        there only (an indicator counts once; tables below it then need no message)."""
        assert self.tree is not None
        home: dict[str, int] = {}
        for c in self.tree.order:
            for a in self.factors[c].attrs:
                home.setdefault(a, c)
        return home

    def probability_batch(self, queries: Sequence[Masks]) -> Floats:
        """:meth:`probability_masks` of many queries, answered in batches: queries that
        constrain the same attributes share one message pass, with ``(batch, ...)``
        values (:mod:`versapub.model.batch`), and every table is reduced to the attributes
        the batch constrains before any query touches it.  When the tables share no
        attribute, each table answers the queries' conditions on its own attributes,
        batched by those attributes alone, and the answers multiply."""
        out = np.empty(len(queries), dtype=np.float64)
        if self._dense is not None:
            for i, q in enumerate(queries):
                out[i] = self._dense.probability(q)
            return out
        assert self.tree is not None
        if self.tree.disjoint:
            out[:] = 1.0
            for f in self.factors:  # a table no query constrains contributes its total, 1
                local: list[Masks] = [{a: m for a, m in q.items() if a in f.attrs} for q in queries]
                hit = [i for i, q in enumerate(local) if q]
                if hit:
                    out[hit] *= _by_pattern([local[i] for i in hit], functools.partial(self._alone, f), f.rows)
            return out / self.z
        return _by_pattern(queries, self._batch, max((f.rows for f in self.factors), default=1))

    def _alone(self, f: Factor, queries: Sequence[Masks]) -> Floats:
        """One table's probability of each query's conditions on its attributes."""
        return f.weighted_batch(_stack(queries, self.cards), [], (), len(queries)).values[:, 0]

    def _batch(self, queries: Sequence[Masks]) -> Floats:
        assert self.tree is not None
        b = len(queries)
        masks = _stack(queries, self.cards)
        children = self._children()
        home = self._homes()
        msgs: dict[int, BatchFn] = {}
        evidence: dict[int, bool] = {}
        total = np.ones(b, dtype=np.float64)
        for c in reversed(self.tree.order):
            f = self.factors[c]
            fm = {a: masks[a] for a in f.attrs if a in masks and home[a] == c}
            kids = children.get(c, [])
            evidence[c] = bool(fm) or any(evidence[d] for d in kids)
            if self._skip_empty and not evidence[c]:
                continue
            incoming = [msgs[d] for d in kids if d in msgs]
            if c not in self.tree.parent:
                total = total * f.weighted_batch(fm, incoming, (), b).values[:, 0]
                continue
            sep = self.tree.sep[c]
            num = f.weighted_batch(fm, incoming, sep, b)
            if sep:
                at = dict(zip(num.attrs, num.codes, strict=True))
                lookup = functools.partial(self._separator(c).lookup, at)
                den = remember(("den", id(self), c, *map(id, num.codes)), num.codes, lookup)
                safe = np.where(den > 0, den, 1.0)
                num = BatchFn(num.attrs, num.codes, np.where(den > 0, num.values / safe, 0.0), num.cards)
            msgs[c] = num
        return total / self.z

    def _separator(self, c: int) -> SparseFn:
        if c not in self._den:
            assert self.tree is not None
            self._den[c] = self.factors[c].weighted({}, [], self.tree.sep[c])
        return self._den[c]

    def probability(self, predicate: Mapping[str, Iterable[str]]) -> float:
        """``P(A1 IN V1 AND ... AND Ak IN Vk)`` under the model (values as text)."""
        return self.probability_masks(self.masks(predicate))

    def count(self, predicate: Mapping[str, Iterable[str]]) -> float:
        """Estimated ``COUNT(*) WHERE predicate`` = ``n · probability``."""
        return self.n * self.probability(predicate)

    def prob(self, records: Mapping[str, Codes]) -> Floats:
        """Model probability of each record (codes for every attribute)."""
        if self._dense is not None:
            return self._dense.prob(records, self.attributes)
        assert self.tree is not None
        n_rec = len(next(iter(records.values())))
        p = np.ones(n_rec, dtype=np.float64)
        for c in self.tree.order:
            f = self.factors[c]
            p *= f.prob(f.attrs, records)
            sep = self.tree.sep.get(c, ())
            if sep:
                den = f.prob(sep, records)
                p = np.divide(p, den, out=np.zeros_like(p), where=den > 0)
        return p / self.z

    def marginal(self, attrs: Sequence[str]) -> SparseFn:
        """The model's marginal over ``attrs`` (codes into ``domains``)."""
        attrs = tuple(attrs)
        for a in attrs:
            if a not in self.domains:
                raise ReleaseError(f"The release has no attribute {a!r}.")
        if self._dense is not None:
            return self._dense.marginal(attrs, self.attributes, self.cards)
        assert self.tree is not None
        for c in self.tree.order:  # covered by the root table (or any table of a disjoint
            f = self.factors[c]  # schema): its own marginal, exact when Z = 1
            if self._skip_empty and set(attrs) <= set(f.attrs) and (self.tree.disjoint or c == self.tree.order[0]):
                return f.weighted({}, [], attrs)
        if self.tree.disjoint:
            out = SparseFn.scalar(1.0)
            for f in self.factors:
                part = tuple(a for a in attrs if a in f.attrs)
                if part:
                    out = _outer(out, f.weighted({}, [], part))
            return _reorder(out, attrs)
        return self._carried_marginal(attrs)

    def _carried_marginal(self, attrs: tuple[str, ...]) -> SparseFn:
        """The marginal over attributes of several linked tables: message passing in which
        each message keeps, besides its separator, the wanted attributes of its subtree
        (sparse: only value combinations with positive probability are ever formed)."""
        assert self.tree is not None
        want = set(attrs)
        children = self._children()
        below: dict[int, set[str]] = {}
        msgs: dict[int, SparseFn] = {}
        out = SparseFn.scalar(0.0)
        try:
            for c in reversed(self.tree.order):
                f = self.factors[c]
                kids = children.get(c, [])
                below[c] = set(f.attrs).union(*(below[d] for d in kids))
                if self._skip_empty and not want & below[c]:
                    continue
                incoming = [msgs[d] for d in kids if d in msgs]
                if c not in self.tree.parent:
                    out = f.weighted({}, incoming, attrs)
                    break
                sep = self.tree.sep[c]
                by = (*sep, *(a for a in attrs if a in below[c] and a not in sep))
                num = f.weighted({}, incoming, by)
                if sep:
                    den = self._separator(c).lookup(dict(zip(num.attrs, num.codes, strict=True)))
                    vals = np.divide(num.values, den, out=np.zeros_like(num.values), where=den > 0)
                    num = SparseFn(num.attrs, num.codes, vals, num.cards)
                msgs[c] = num
        except JoinTooLarge as exc:
            raise ReleaseError(
                f"The marginal over {', '.join(map(repr, attrs))} combines tables linked by shared attributes "
                f"and would need {exc.rows:,} intermediate value combinations (versapub stops at "
                f"{JOIN_MAX_ROWS:,}). Ask about fewer attributes at once, or write the question as conditions "
                "attr IN (...) joined by AND, which is answered without enumerating."
            ) from None
        return SparseFn(out.attrs, out.codes, out.values / self.z, out.cards)

    def sample(self, n: int, rng: np.random.Generator) -> pa.Table:
        """``n`` synthetic records drawn from the model, as values (a pyarrow Table in the
        release's attribute order; ``.to_pandas()`` for a DataFrame); codes into
        :attr:`domains` with :meth:`sample_codes`."""
        import pyarrow as pa

        draws = self.sample_codes(n, rng)
        arrays = [pa.array(self.domains[a].astype(str)).take(pa.array(draws[a])) for a in self.attributes]
        return pa.Table.from_arrays(arrays, names=list(self.attributes))

    def sample_codes(self, n: int, rng: np.random.Generator) -> dict[str, Codes]:
        """``n`` synthetic records (codes) by forward sampling along the junction tree."""
        if n < 0:
            raise ValueError("n must be >= 0")
        if self._dense is not None:
            return self._dense.sample(n, self.attributes, self.cards, rng)
        assert self.tree is not None
        tree = self.tree
        out: dict[str, Codes] = {a: np.empty(0, dtype=np.int64) for a in self.attributes}
        need = n
        for _ in range(1000):  # rejection only when tables disagree on a separator (Z < 1)
            if need == 0:
                break
            draw: dict[str, Codes] = {}
            for c in tree.order:
                f = self.factors[c]
                draw.update(f.sample(need, {a: draw[a] for a in tree.sep.get(c, ())}, rng))
            ok = np.all(np.stack([draw[a] >= 0 for a in self.attributes]), axis=0)
            for a in self.attributes:
                out[a] = np.concatenate([out[a], draw[a][ok]])
            need -= int(ok.sum())
        if need:
            raise ReleaseError("Sampling failed: the published tables disagree too much on a separator.")
        return {a: out[a] for a in self.attributes}

    def decode(self, attr: str, codes: npt.NDArray[np.integer]) -> npt.NDArray[np.object_]:
        return self.domains[attr][codes]


def _stack(queries: Sequence[Masks], cards: Mapping[str, int]) -> dict[str, npt.NDArray[np.bool_]]:
    """The queries' masks as one ``(batch, card)`` matrix per attribute (all true where a
    query does not constrain the attribute; floats when some query gives shares)."""
    b = len(queries)
    masks: dict[str, npt.NDArray[np.bool_]] = {}
    for j, q in enumerate(queries):
        for a, m in q.items():
            if a not in masks:
                fractional = any(a in o and o[a].dtype != np.bool_ for o in queries)  # shares (induced model)
                masks[a] = np.ones((b, cards[a]), dtype=np.float64 if fractional else bool)
            masks[a][j] = m
    return masks


def _by_pattern(queries: Sequence[Masks], answer: Callable[[list[Masks]], Floats], rows: int) -> Floats:
    """``answer`` called on batches of queries constraining the same attributes (at most
    ``BATCH_CELLS // rows`` queries each), the results in the queries' order."""
    out = np.empty(len(queries), dtype=np.float64)
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, q in enumerate(queries):
        groups.setdefault(tuple(sorted(q)), []).append(i)
    step = max(1, BATCH_CELLS // max(rows, 1))
    parts = [idx[lo : lo + step] for idx in groups.values() for lo in range(0, len(idx), step)]

    for part in parts:
        out[part] = answer([queries[i] for i in part])
    return out


def _outer(a: SparseFn, b: SparseFn) -> SparseFn:
    ia = np.repeat(np.arange(len(a.values)), len(b.values))
    ib = np.tile(np.arange(len(b.values)), len(a.values))
    return SparseFn(
        a.attrs + b.attrs,
        tuple(c[ia] for c in a.codes) + tuple(c[ib] for c in b.codes),
        a.values[ia] * b.values[ib],
        a.cards + b.cards,
    )


def _reorder(f: SparseFn, attrs: tuple[str, ...]) -> SparseFn:
    idx = [f.attrs.index(a) for a in attrs]
    return SparseFn(attrs, tuple(f.codes[i] for i in idx), f.values, tuple(f.cards[i] for i in idx))


@dataclass
class _Dense:
    """IPF on a dense joint over all attributes (non-decomposable schemas only)."""

    q: npt.NDArray[np.float64]
    attrs: tuple[str, ...]
    iterations: int
    error: float

    @classmethod
    def fit(cls, factors: Sequence[Factor], attrs: tuple[str, ...], cards: Mapping[str, int]) -> _Dense:
        shape = tuple(cards[a] for a in attrs)
        cells = math.prod(shape)
        if cells > IPF_MAX_CELLS:
            raise ReleaseError(
                f"The published tables are not decomposable (no junction tree), and iterative "
                f"proportional fitting over all {len(attrs)} attributes would need {cells} cells "
                f"(limit {IPF_MAX_CELLS}); versapub's decompositions never produce such schemas."
            )
        targets = []
        for f in factors:
            m = f.weighted({}, [], f.attrs)
            t = np.zeros(tuple(cards[a] for a in f.attrs))
            t[tuple(m.codes)] = m.values
            axes = tuple(i for i, a in enumerate(attrs) if a not in f.attrs)
            perm = [f.attrs.index(a) for a in attrs if a in f.attrs]
            targets.append((axes, np.transpose(t, perm)))
        q = np.full(shape, 1.0 / cells)
        err = math.inf
        it = 0
        while it < IPF_MAX_ITER:
            it += 1
            for axes, t in targets:
                cur = q.sum(axis=axes, keepdims=True)
                ratio = np.divide(np.expand_dims(t, axes), cur, out=np.zeros_like(cur), where=cur > 0)
                q = q * ratio
            err = max(float(np.abs(q.sum(axis=axes) - t).max()) for axes, t in targets)
            if err < IPF_TOL:
                break
        return cls(q / q.sum(), attrs, it, err)

    def probability(self, masks: Masks) -> float:
        return float((self.q * _outer_mask(masks, self.attrs, self.q.shape)).sum())

    def prob(self, records: Mapping[str, Codes], attrs: tuple[str, ...]) -> Floats:
        return np.asarray(self.q[tuple(records[a] for a in attrs)], dtype=np.float64)

    def marginal(self, want: tuple[str, ...], attrs: tuple[str, ...], cards: Mapping[str, int]) -> SparseFn:
        axes = tuple(i for i, a in enumerate(attrs) if a not in want)
        m = self.q.sum(axis=axes)
        present = [a for a in attrs if a in want]
        m = np.transpose(m, [present.index(a) for a in want])
        idx = np.nonzero(m > 0)
        return SparseFn(want, tuple(i.astype(np.int64) for i in idx), m[idx], tuple(cards[a] for a in want))

    def sample(
        self, n: int, attrs: tuple[str, ...], cards: Mapping[str, int], rng: np.random.Generator
    ) -> dict[str, Codes]:
        flat = rng.choice(self.q.size, size=n, p=self.q.ravel())
        idx = np.unravel_index(flat, self.q.shape)
        return {a: idx[i].astype(np.int64) for i, a in enumerate(attrs)}


def _outer_mask(masks: Masks, attrs: tuple[str, ...], shape: tuple[int, ...]) -> npt.NDArray[np.float64]:
    out = np.ones(shape)
    for i, a in enumerate(attrs):
        if a in masks:
            view = [1] * len(shape)
            view[i] = shape[i]
            out = out * masks[a].reshape(view)
    return out
