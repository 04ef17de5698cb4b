"""t-closeness (Li, Li, Venkatasubramanian, ICDE 2007).

Definition 2 (t-closeness): an equivalence class is t-close when the Earth Mover's
Distance between its sensitive distribution ``P`` and the whole table's ``Q`` is at most
``t``.  Two ground distances (§4.2 of the paper):

* **equal distance** (every two values at distance 1): ``EMD = ½ Σ_i |p_i − q_i|``;
* **hierarchical distance** (two leaves at distance ``level(LCA)/H``, ``H`` the height of
  the sensitive attribute's taxonomy): the paper's ``Σ_N cost(N)`` over internal nodes.
  On a tree of uniform height this equals the tree-metric form used here,
  ``EMD = Σ_{N ≠ root} |extra(N)| / (2H)`` with ``extra(N) = Σ_{leaves under N}(p_i − q_i)``
  (an edge between consecutive levels weighs ``1/(2H)``, so leaves whose lowest common
  ancestor is at level ``L`` are ``L/H`` apart); the equal distance is the case ``H = 1``.

Vectorized over groups: only the nodes a group holds are visited, using
``Σ_N |P(N) − Q(N)| = Σ_{N: P(N)>0} (|P(N) − Q(N)| − Q(N)) + 1`` per level.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.errors import RuleError
from versapub.plugins import Param
from versapub.privacy.guarantees.base import (
    Floats,
    GuaranteeContext,
    Histograms,
    IntArray,
    Params,
    SingleAttributeViolation,
    Taxonomy,
)
from versapub.privacy.guarantees.tolerance import at_most

DISTANCES = ("auto", "equal", "hierarchical")


def emd(h: Histograms, q: Floats, taxonomy: Taxonomy | None) -> Floats:
    """Per group, the EMD between its sensitive distribution and ``q`` (sums to 1 over the
    value codes); hierarchical ground distance when a taxonomy is given, equal otherwise."""
    levels = taxonomy.nodes[:-1] if taxonomy is not None else (np.arange(len(q), dtype=np.int64),)
    height = taxonomy.height if taxonomy is not None else 1
    size = h.sizes().astype(np.float64)
    p = h.count / np.maximum(size[h.group], 1.0)
    v = h.values()
    total = np.zeros(h.n_groups, dtype=np.float64)
    for nodes in levels:
        n_nodes = int(nodes.max()) + 1 if len(nodes) else 0
        q_node = np.bincount(nodes, weights=q, minlength=n_nodes)
        node = nodes[v]
        key = h.group * n_nodes + node
        uniq, inv = np.unique(key, return_inverse=True)
        p_node = np.bincount(inv.ravel(), weights=p)
        qn = q_node[uniq % n_nodes]
        total += np.bincount(uniq // n_nodes, weights=np.abs(p_node - qn) - qn, minlength=h.n_groups) + 1.0
    return np.where(size > 0, total / (2 * height), 0.0)


@dataclass(frozen=True)
class TCloseness(Params):
    """t-closeness (Li et al. 2007, Definition 2; see the module docstring).  ``t`` in
    (0, 1); ``distance`` is ``"equal"``, ``"hierarchical"`` (needs the sensitive
    attribute's hierarchy) or ``"auto"`` (hierarchical when the attribute has one).  The
    table-wide distribution and the taxonomy are bound per sensitive attribute
    (:meth:`bind`)."""

    t: float
    distance: str = "auto"
    q: Floats | None = field(default=None, repr=False, compare=False)
    taxonomy: Taxonomy | None = field(default=None, repr=False, compare=False)

    name = "t-closeness"
    example: ClassVar[dict[str, Any]] = {"t": 0.2}
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "t": Param("number", low=0, high=1, low_open=True, high_open=True, required=True),
        "distance": Param("choice", choices=DISTANCES),
    }
    glossary: ClassVar[str] = (
        "t-closeness (Li, Li & Venkatasubramanian, ICDE 2007, Definition 2): every class's distribution of the "
        "sensitive attribute is within Earth Mover's Distance t of the whole table's."
    )
    #: ``achieved`` is the largest distance (the weakest group has the largest).
    achieved_is_distance = True

    def __post_init__(self) -> None:
        self.check_parameters()

    def params(self) -> dict[str, Any]:
        return {"t": self.t, "distance": self.distance}

    def needs(self) -> frozenset[str]:
        return frozenset({"sensitive_distribution", "taxonomy"})

    def bind(self, context: GuaranteeContext) -> TCloseness:
        if context.sensitive_distribution is None:
            raise RuleError("t-closeness needs the table's sensitive distribution.")
        counts = np.asarray(context.sensitive_distribution, dtype=np.float64)
        tax = context.taxonomy
        if self.distance == "hierarchical" and tax is None:
            raise RuleError(
                "t-closeness with the hierarchical distance needs a hierarchy for the sensitive attribute "
                "(--hierarchy ATTR=FILE, or [hierarchies] in the configuration)."
            )
        if self.distance == "equal":
            tax = None
        return replace(self, q=counts / counts.sum(), taxonomy=tax)

    def _q(self) -> Floats:
        if self.q is None:
            raise RuleError("t-closeness must be bound to the table's sensitive distribution before use.")
        return self.q

    def describe(self) -> str:
        how = {"equal": "equal", "hierarchical": "hierarchical", "auto": "equal or hierarchical"}[self.distance]
        return (
            f"t-closeness with t = {self.t:g} ({how} ground distance): every group's sensitive distribution is "
            f"within Earth Mover's Distance {self.t:g} of the whole table's"
        )

    def group_width(self) -> None:
        return None

    def min_possible_values(self) -> int:
        return 1

    def posterior_limit(self) -> float:
        """An EMD of at most ``t`` moves at most ``H t`` of probability mass (each unit moves
        at least ``1/H``), so no value's share exceeds ``max_s q_s + H t``."""
        if self.q is None:
            return 1.0
        height = self.taxonomy.height if self.taxonomy is not None else 1
        return float(min(1.0, self.q.max() + height * self.t))

    def value_limits(self, p: Floats) -> Floats:
        """A value's share moves at most ``H t`` (the posterior limit's argument, per value)."""
        height = self.taxonomy.height if self.taxonomy is not None else 1
        return np.minimum(1.0, np.asarray(p, dtype=np.float64) + height * self.t)

    def distances(self, h: Histograms) -> Floats:
        return emd(h, self._q(), self.taxonomy)

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        return np.asarray(at_most(self.distances(h), self.t) & (h.sizes() > 0))

    def achieved(self, h: Histograms) -> float:
        d = self.distances(h)[h.sizes() > 0]
        return float(d.max()) if len(d) else 0.0

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        """The whole table is at distance 0 from itself: always feasible."""
        del counts
        return None
