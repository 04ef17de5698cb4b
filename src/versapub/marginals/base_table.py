"""The base table a collection starts from: the minimal full-domain generalizations that
are simultaneously k-anonymous and diverse (Incognito's search, LeFevre et al.), as the
paper's §7 builds its tables A, B and C; the best of them by KL-divergence."""

from __future__ import annotations

from collections.abc import Mapping

from versapub.anonymizers.generalizing.incognito import Incognito
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.marginals.collection import Collection
from versapub.marginals.space import Space
from versapub.marginals.spec import Marginal, Requirement
from versapub.privacy.guarantees.combined import AllOf
from versapub.privacy.guarantees.kanonymity import KAnonymity
from versapub.privacy.rules import Rule


def minimal_tables(
    table: EncodedTable, space: Space, req: Requirement, hierarchies: Mapping[str, Hierarchy]
) -> list[Marginal]:
    """Every minimal node (levels of all non-sensitive attributes) whose table is
    k-anonymous and satisfies the diversity form, as a marginal over every attribute."""
    s = space.sensitive
    qi = tuple(a for a in space.attributes if a != s)
    guarantee = AllOf((KAnonymity(req.k), req.diversity))
    found = Incognito().minimal_nodes(
        table.select((*qi, s)), Rule(qi, s), guarantee, hierarchies={a: h for a, h in hierarchies.items() if a in qi}
    )
    order = list(found.goal.qi)
    return [Marginal((*qi, s), (*(node[order.index(a)] for a in qi), 0)) for node in found.minimal]


def best_table(table: EncodedTable, space: Space, req: Requirement, hierarchies: Mapping[str, Hierarchy]) -> Marginal:
    """The minimal table whose maximum-entropy estimate is closest to the data (KL)."""
    tables = minimal_tables(table, space, req, hierarchies)
    return min(tables, key=lambda m: (Collection(space, (m,)).kl(), m.levels))
