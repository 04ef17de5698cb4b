"""``marginals check``: a proposed collection of anonymized marginals against its data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from versapub.io.config import PublishConfig
    from versapub.marginals.collection import Collection, Verdict


@dataclass(frozen=True)
class MarginalsCheck:
    """k-link, k-combinatorial anonymity and maxent diversity of a proposed collection, and
    its KL-divergence when the collection is decomposable (closed form). :meth:`to_dict` is
    ``versapub marginals check --json``."""

    collection: Collection
    verdict: Verdict
    kl: float | None

    @property
    def ok(self) -> bool:
        return bool(self.verdict.ok)

    def to_dict(self) -> dict[str, Any]:
        return {**self.verdict.to_json(), "kl": self.kl, "marginals": [m.label for m in self.collection.marginals]}


def marginals_check(config: PublishConfig, relaxed: float | None = None) -> MarginalsCheck:
    """Check the collection of ``config.marginals`` (its base table first — ``incognito``:
    the minimal l-diverse, k-anonymous full-domain generalization with the lowest KL) against
    the data, writing nothing; ``relaxed``: the paper's relaxed maxent check with epsilon."""
    from versapub.errors import ConfigError
    from versapub.marginals.collection import Collection
    from versapub.marginals.space import Space
    from versapub.marginals.spec import Marginal, Requirement, parse_marginals

    spec = config.marginals
    if spec is None:
        raise ConfigError("A marginals check needs a [marginals] section (or --sensitive, --k and the marginals).")
    table = config.read()
    hier = config.anonymizer_hierarchies(table.names)
    req = Requirement.build(spec.sensitive, spec.k, spec.diversity)
    space = Space.of_table(table, spec.sensitive, hier)
    ms = list(parse_marginals(spec.marginals))
    if spec.base is not None:
        if spec.base.strip().lower() == "incognito":
            from versapub.marginals.base_table import best_table

            ms.insert(0, best_table(table, space, req, hier))
        else:
            ms.insert(0, Marginal.parse(spec.base))
    coll = Collection(space, tuple(ms))
    verdict = coll.check(req, relaxed=relaxed)
    return MarginalsCheck(coll, verdict, coll.kl() if coll.decomposable() else None)
