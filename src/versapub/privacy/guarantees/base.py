"""What every privacy guarantee provides (§2.3: a guarantee instantiates a rule).

A :class:`Guarantee` says when one group of records (an equivalence class of a
generalized table, or an Anatomy bucket) protects its sensitive values, and whether a
whole table's sensitive column can be protected at all.  Everything downstream
(anonymizers, reports, the attacks) talks to this interface only; each guarantee is one
module of :mod:`versapub.privacy` registered in :mod:`versapub.privacy.guarantees.guarantee`.

Group histograms are passed sparsely as :class:`~versapub.data.histograms.Histograms`
(re-exported here): parallel arrays ``group``
(group index of each entry), ``count`` (records of the group holding one sensitive value)
and, when the guarantee compares distributions, ``value`` (the value's code); only
non-zero entries are listed.  Counts may be fractional: a record whose sensitive value is
*generalized* (a taxonomy node) spreads ``1/|leaves|`` over the leaves it covers — the
*induced* counts of the functional-diversity paper (reading notes: ``w(v, a)``); a group's
size is still its number of records.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from versapub.data.histograms import Histograms
from versapub.errors import RuleError
from versapub.plugins import Param, validated

if TYPE_CHECKING:
    from versapub.privacy.guarantees.population import Population

IntArray = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SingleAttributeViolation:
    """Why publishing a sensitive attribute alone breaks the guarantee."""

    value_code: int
    count: int
    n: int
    largest_feasible: dict[str, Any]
    explanation: str


#: Context a guarantee may declare in :meth:`Guarantee.needs`.
CONTEXTS = ("sensitive_distribution", "taxonomy", "population")


@dataclass(frozen=True)
class Taxonomy:
    """A sensitive attribute's hierarchy over its codes: ``nodes[k][c]`` is the node (an
    integer id, unique per level) of leaf code ``c`` at level ``k`` (level 0: the leaf,
    the last level: the root)."""

    nodes: tuple[IntArray, ...]

    @property
    def height(self) -> int:
        """Levels above the leaves (the ``H`` of the hierarchical ground distance)."""
        return len(self.nodes) - 1


@dataclass(frozen=True)
class GuaranteeContext:
    """What a guarantee may need besides one group's histogram (see :data:`CONTEXTS`):
    the value counts of the sensitive attribute over the whole table, its taxonomy, and the
    population the records were drawn from (delta-presence, k-map against a population:
    their groups' histograms then carry each group's population count,
    :attr:`Histograms.population`)."""

    sensitive_distribution: IntArray | None = None
    taxonomy: Taxonomy | None = None
    population: Population | None = None


@runtime_checkable
class Guarantee(Protocol):
    """What a privacy guarantee must provide."""

    @property
    def name(self) -> str: ...

    def to_manifest(self) -> dict[str, Any]:
        """The guarantee as stored in a release manifest (``{"name": ..., params}``)."""
        ...

    def describe(self) -> str:
        """One sentence for reports."""
        ...

    def group_width(self) -> int | None:
        """Distinct sensitive values an Anatomy group (all values distinct) must hold for
        the guarantee to hold; ``None`` when no such bucketization can guarantee it (the
        guarantee needs generalization)."""
        ...

    def groups_satisfied(self, h: Histograms) -> npt.NDArray[np.bool_]:
        """Per group: does its sensitive-value histogram satisfy the guarantee?"""
        ...

    def achieved(self, h: Histograms) -> float:
        """The guarantee's own measure over every group (the weakest group's), for reports."""
        ...

    @property
    def achieved_is_distance(self) -> bool:
        """The achieved measure is a distance (larger = weaker: t-closeness), not a level."""
        ...

    def achieved_text(self, value: float) -> str:
        """The achieved measure in words for summaries ("3.00"; functional diversity's slack
        0 reads "met exactly")."""
        ...

    @property
    def glossary(self) -> str:
        """The guarantee in a sentence or two for the report's glossary, its definition cited."""
        ...

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        """Can a column with these value counts be published alone (the feasibility test)?"""
        ...

    def params(self) -> dict[str, Any]:
        """The guarantee's parameters (``to_manifest()`` without the name)."""
        ...

    def needs(self) -> frozenset[str]:
        """The context the guarantee needs besides a group's histogram (names from
        :data:`CONTEXTS`); it receives it through :meth:`bind`."""
        ...

    def bind(self, context: GuaranteeContext) -> Guarantee:
        """The guarantee with its context."""
        ...

    def checked_population(self) -> Population | None:
        """The population the guarantee is checked against, once bound to one (``None``:
        it needs none, or is not bound yet).  Anonymizers that count each class's
        population (Mondrian, Incognito) read it here."""
        ...

    def min_possible_values(self) -> int:
        """The attacks' disclosure test: a target left with fewer possible sensitive values
        than this is disclosed."""
        ...

    def posterior_limit(self) -> float:
        """The posterior criterion: the largest ``P(S = s | Q = q)`` the release may allow
        under its maximum-entropy model (1: the guarantee bounds no posterior)."""
        ...

    def value_limits(self, p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Per value of table-wide share ``p``, the largest share a group may give it — what
        the guarantee allows an adversary who reads one value (issue 64: the set screen's
        per-record bound): the posterior limit for the l-diversity family, ``p + H t`` for
        t-closeness, ``(1 + beta) p`` for beta-likeness, ``p e^delta`` for delta-disclosure."""
        ...

    def cumulative_bound(self) -> tuple[float, ...] | None:
        """The guarantee as a bound on a group's cumulative frequencies, ``F(k) <= phi(k)``
        for ``k = 1, 2, ...`` (1 after the last value), when it is one (functional
        (tau, lambda)-diversity; frequency l-diversity is ``phi(k) = k/l``); ``None``
        otherwise.  Anonymizers that work on cumulative frequencies (Sequential Sweep)
        accept exactly these."""
        ...


def whole(value: object, what: str, minimum: int) -> int:
    """``value`` as an integer ``>= minimum`` or a one-paragraph :class:`RuleError`."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < minimum:
        raise RuleError(f"{what} must be a whole number >= {minimum}, got {value!r}.")
    return int(value)


def real(value: object, what: str, low: float, high: float | None = None, low_open: bool = False) -> float:
    """``value`` as a number in ``[low, high)`` (``(low, high)`` with ``low_open``) or an error."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise RuleError(f"{what} must be a number, got {value!r}.")
    v = float(value)
    bad_low = v <= low if low_open else v < low
    if bad_low or (high is not None and v >= high) or not np.isfinite(v):
        rng = (
            f"in {'(' if low_open else '['}{low:g}, {high:g})"
            if high is not None
            else f"a number >{'' if low_open else '='} {low:g}"
        )
        raise RuleError(f"{what} must be {rng}, got {value!r}.")
    return v


def top_violation(counts: IntArray, largest: dict[str, Any], explanation: str) -> SingleAttributeViolation:
    """A violation reported at the column's most frequent value."""
    top = int(np.argmax(counts))
    return SingleAttributeViolation(top, int(counts[top]), int(counts.sum()), largest, explanation)


class Params:
    """The parts every guarantee shares: its manifest form from its fields, no context, its
    parameters checked against their declared constraints (:mod:`versapub.plugins`), the
    description its glossary entry shows, and its achieved measure read as a level (the
    default; ``achieved_is_distance``: a distance such as t-closeness', where smaller is
    stronger)."""

    name = ""
    #: A valid value of each parameter, for messages and help ("l-diversity:l=3").
    example: ClassVar[dict[str, Any]] = {}
    #: Parameter -> its constraint (:class:`versapub.plugins.Param`): one error shape.
    parameter_constraints: ClassVar[dict[str, Param]] = {}
    #: A parameter spelled differently from its field (``lambda`` -> ``lam``).
    spelled: ClassVar[dict[str, str]] = {}
    #: The guarantee in a sentence for the report's glossary (its definition, cited).
    glossary: ClassVar[str] = ""
    #: The achieved measure is a distance (larger = weaker), not a level.
    achieved_is_distance: ClassVar[bool] = False

    def achieved_text(self, value: float) -> str:
        return f"{value:.2f}"

    def check_parameters(self) -> None:
        """Check every declared parameter (a one-paragraph :class:`RuleError` naming it) and
        store it converted (whole numbers as ``int``, numbers as ``float``)."""
        field_of = {p: self.spelled.get(p, p) for p in self.parameter_constraints}
        got = validated(
            self.name, self.parameter_constraints, {p: getattr(self, f) for p, f in field_of.items()}, RuleError
        )
        for p, v in got.items():
            object.__setattr__(self, field_of[p], v)

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def to_manifest(self) -> dict[str, Any]:
        return {"name": self.name, **self.params()}

    def needs(self) -> frozenset[str]:
        return frozenset()

    def bind(self, context: GuaranteeContext) -> Guarantee:
        del context
        return self  # type: ignore[return-value]

    def checked_population(self) -> Population | None:
        return None

    def posterior_limit(self) -> float:
        return 1.0

    def value_limits(self, p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.full(len(p), self.posterior_limit())

    def cumulative_bound(self) -> tuple[float, ...] | None:
        return None
