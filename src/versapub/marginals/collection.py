"""A collection of anonymized marginals of one table: its induced tables, its privacy
checks (k-link, k-combinatorial, maxent l-diversity) and its utility (KL-divergence of
the maximum-entropy estimate from the data).

For a decomposable collection the KL-divergence has a closed form in entropies of the
data's marginals (Kifer & Gehrke: the closed form of §4.1 with §5.2's theorem on
anonymized marginals): with maximal cliques
``E_i`` and separators ``S_i`` of a junction tree over induced attributes,

    KL(data || estimate) = Σ_i H(E_i) − Σ_i H(S_i) + Σ_a E[log w_a] − H(data),

where ``w_a`` is the number of leaves of the node a record falls in at the finest level
the collection publishes attribute ``a`` (the whole domain when it publishes none).  No
estimate is ever materialized; entropies are cached, so a search that adds one marginal
pays only for its clique and separator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from versapub.errors import ConfigError
from versapub.marginals import graph
from versapub.marginals.diversity import Context, Groups, maxent_diversity, relaxed_diversity
from versapub.marginals.identity import Outcome, k_combinatorial, k_link
from versapub.marginals.space import Key, Space, Table, finest, induced_keys, induced_levels, shown
from versapub.marginals.spec import Marginal, Requirement


@dataclass(frozen=True)
class Verdict:
    """The three checks of one collection."""

    link: Outcome
    combinatorial: Outcome
    diversity: Outcome

    @property
    def ok(self) -> bool:
        return self.link.ok and self.combinatorial.ok and self.diversity.ok

    @property
    def outcomes(self) -> tuple[Outcome, ...]:
        return (self.link, self.combinatorial, self.diversity)

    def failures(self) -> list[str]:
        return [o.message for o in self.outcomes if not o.ok]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [o.to_json() for o in self.outcomes]}


@dataclass
class Collection:
    """Marginals of ``space``'s data (validated: attributes and levels exist, the
    sensitive attribute exact), named ``names`` (default ``M1, M2, ...``)."""

    space: Space
    marginals: tuple[Marginal, ...]
    names: tuple[str, ...] = ()
    _cache: dict[object, Groups] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.marginals = tuple(self.marginals)
        if not self.names:
            self.names = tuple(f"M{i + 1}" for i in range(len(self.marginals)))
        if len(self.names) != len(self.marginals):
            raise ConfigError("One name per marginal.")
        for m in self.marginals:
            self.space.check(m)

    @property
    def sensitive(self) -> Key:
        return (self.space.sensitive, 0)

    @cached_property
    def levels(self) -> dict[str, tuple[int, ...]]:
        return induced_levels(self.space, self.marginals)

    def keys(self, i: int) -> tuple[Key, ...]:
        return induced_keys(self.marginals[i], self.levels)

    def table(self, i: int) -> Table:
        return self.space.table(self.keys(i), self.names[i])

    def nonsensitive(self, i: int) -> Table:
        keys = self.keys(i)
        return self.table(i).project([k for k in keys if k != self.sensitive], self.cards)

    @cached_property
    def cards(self) -> dict[Key, int]:
        out = {k: self.space.card(k) for i in range(len(self.marginals)) for k in self.keys(i)}
        out[self.sensitive] = self.space.card(self.sensitive)
        return out

    def show(self, key: Key, node: int) -> str:
        return self.space.label(key, node)

    def context(self) -> Context:
        return Context(
            self.sensitive, self.cards[self.sensitive], self.cards, self.show, self.space.parent, self.space.width
        )

    def with_marginal(self, m: Marginal, name: str | None = None) -> Collection:
        """The collection with one more marginal (sharing the data and the check cache)."""
        out = Collection(self.space, (*self.marginals, m), (*self.names, name or f"M{len(self.marginals) + 1}"))
        out._cache = self._cache
        return out

    # -- checks ----------------------------------------------------------------------
    def check(self, req: Requirement, relaxed: float | None = None) -> Verdict:
        """k-link, k-combinatorial anonymity and maxent diversity (``relaxed``: the
        paper's relaxed check with that epsilon instead of the exact one)."""
        if req.sensitive != self.space.sensitive:
            raise ConfigError(f"The requirement protects {req.sensitive!r}, the collection {self.space.sensitive!r}.")
        ns = [self.nonsensitive(i) for i in range(len(self.marginals))]
        everything = sorted({k for t in ns for k in t.keys}, key=str)
        witness = self.space.table(everything)
        link = k_link(ns, req.k, self.show)
        tables = [self.table(i) for i in range(len(self.marginals))]
        comb = k_combinatorial(tables, self.cards, req.k, self.show, self.sensitive, witness)
        if relaxed is None:
            div = maxent_diversity(tables, req.diversity, self.context(), self._cache)
        else:
            div = relaxed_diversity(tables, int(req.diversity.params().get("l", 2)), relaxed, self.context())
        return Verdict(link, comb, div)

    # -- utility ---------------------------------------------------------------------
    def key_sets(self) -> list[frozenset[Key]]:
        return [frozenset(self.keys(i)) for i in range(len(self.marginals))]

    def decomposable(self) -> bool:
        return graph.tree(self.key_sets()) is not None

    def kl(self) -> float:
        """KL-divergence of the maximum-entropy estimate from the data (module docstring);
        only for decomposable collections (others: the release model's IPF)."""
        return kl_of(self.space, self.key_sets())


def kl_of(space: Space, sets: Sequence[frozenset[Key]]) -> float:
    """The closed form of the module docstring for the collection over ``sets``."""
    found = graph.tree(sets)
    if found is None:
        raise ConfigError(
            f"The collection is not decomposable ({graph.why_not(sets, shown)}); its "
            "KL-divergence needs the release model (iterative proportional fitting)."
        )
    jt = found
    keep = jt.keep
    h = sum(space.entropy(sets[i]) for i in keep)
    h -= sum(space.entropy(jt.sep[c]) for c in jt.parent)
    fine = finest(k for s in sets for k in s)
    logw = sum(space.log_width(a, fine.get(a)) for a in space.attributes)
    full = space.entropy((a, 0) for a in space.attributes)
    return max(h + logw - full, 0.0)
