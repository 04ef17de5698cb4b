"""Privacy guarantees that instantiate a rule (§2.3).

A :class:`Guarantee` says when one group of records (an anonymized equivalence class
or bucket) protects its sensitive values, and when a whole table's sensitive column
can be published at all.  Everything downstream (anonymizers, reports) talks to this
interface only; later guarantees ((c,l)-diversity, entropy l-diversity, t-closeness,
functional (tau,lambda)-diversity) are further implementations.

Group histograms are passed sparsely: parallel arrays ``group`` (group index of each
entry), ``count`` (how many records of the group carry one sensitive value), and the
number of groups.  Only non-zero entries are listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from versapub.errors import RuleError

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class SingleAttributeViolation:
    """Why publishing a sensitive attribute alone breaks the guarantee."""

    value_code: int
    count: int
    n: int
    largest_feasible: dict[str, Any]
    explanation: str


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

    def group_width(self) -> int:
        """Distinct sensitive values a bucketization group must start with."""
        ...

    def groups_satisfied(self, group: IntArray, count: IntArray, n_groups: int) -> npt.NDArray[np.bool_]:
        """Per group: does its sensitive-value histogram satisfy the guarantee?"""
        ...

    def achieved(self, group: IntArray, count: IntArray, n_groups: int) -> float:
        """The strongest parameter every group achieves (for reports)."""
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
        """The guarantee with its context (the table-wide sensitive distribution, a ground
        distance, the sensitive attribute's taxonomy)."""
        ...

    def min_possible_values(self) -> int:
        """The attacks' disclosure test: a target left with fewer possible sensitive values
        than this is disclosed."""
        ...

    def posterior_limit(self) -> float:
        """The posterior criterion: the largest ``P(S = s | Q = q)`` the release may allow
        under its maximum-entropy model."""
        ...


#: Context a guarantee may declare in :meth:`Guarantee.needs`.
CONTEXTS = ("sensitive_distribution", "ground_distance", "taxonomy")


@dataclass(frozen=True)
class GuaranteeContext:
    """What a guarantee may need besides one group's histogram (see :data:`CONTEXTS`)."""

    sensitive_distribution: IntArray | None = None
    ground_distance: Any = None
    taxonomy: Any = None


@dataclass(frozen=True)
class LDiversity:
    """Frequency l-diversity: ``Pr{t[S] | t[Q], release} <= 1/l`` for every record.

    Inside a group this is ``l * max_count(s) <= |group|`` (the form used by the paper's
    experiments, §6.1, and by Anatomy).  Validated on construction: ``l`` is an integer >= 2.
    """

    l: int

    def __post_init__(self) -> None:
        if isinstance(self.l, bool) or not isinstance(self.l, int | np.integer):
            raise RuleError(f"l must be a whole number >= 2, got {self.l!r}.")
        if int(self.l) < 2:
            raise RuleError(
                f"l must be at least 2 (l = {self.l} protects nothing: with l = 1 any value "
                "may be disclosed with certainty)."
            )
        object.__setattr__(self, "l", int(self.l))

    @property
    def name(self) -> str:
        return "l-diversity"

    def to_manifest(self) -> dict[str, Any]:
        return {"name": self.name, **self.params()}

    def params(self) -> dict[str, Any]:
        return {"l": self.l}

    def needs(self) -> frozenset[str]:
        return frozenset()

    def bind(self, context: GuaranteeContext) -> LDiversity:
        del context
        return self

    def min_possible_values(self) -> int:
        """Fewer than ``l`` possible values leave one of them above ``1/l``."""
        return self.l

    def posterior_limit(self) -> float:
        return 1.0 / self.l

    def describe(self) -> str:
        return (
            f"frequency l-diversity with l = {self.l}: an adversary who knows a record's "
            f"left-hand-side values guesses its sensitive value with probability at most 1/{self.l}"
        )

    def group_width(self) -> int:
        return self.l

    @staticmethod
    def _size_and_max(group: IntArray, count: IntArray, n_groups: int) -> tuple[IntArray, IntArray]:
        size = np.bincount(group, weights=count, minlength=n_groups).astype(np.int64)
        mx = np.zeros(n_groups, dtype=np.int64)
        np.maximum.at(mx, group, count)
        return size, mx

    def groups_satisfied(self, group: IntArray, count: IntArray, n_groups: int) -> npt.NDArray[np.bool_]:
        size, mx = self._size_and_max(group, count, n_groups)
        return np.asarray((self.l * mx <= size) & (size > 0))

    def achieved(self, group: IntArray, count: IntArray, n_groups: int) -> float:
        size, mx = self._size_and_max(group, count, n_groups)
        ok = size > 0
        return float(np.min(size[ok] / mx[ok])) if ok.any() else float("inf")

    def single_attribute_violation(self, counts: IntArray) -> SingleAttributeViolation | None:
        n = int(counts.sum())
        top = int(np.argmax(counts))
        n1 = int(counts[top])
        if self.l * n1 <= n:
            return None
        best = n // n1
        return SingleAttributeViolation(
            value_code=top,
            count=n1,
            n=n,
            largest_feasible={"l": best},
            explanation=(
                f"more than 1/l = {100 / self.l:.1f}% of the records; the largest feasible l "
                f"is {best} (floor(n/n1) = floor({n}/{n1}))" + (" — no l >= 2 is feasible" if best < 2 else "")
            ),
        )


#: Registered guarantees: name -> class built with the guarantee's parameters.
GUARANTEES: dict[str, type] = {"l-diversity": LDiversity}
#: Other spellings accepted for a registered name.
ALIASES = {"ldiversity": "l-diversity", "frequency-l-diversity": "l-diversity"}


def make_guarantee(spec: dict[str, Any]) -> Guarantee:
    """Build a guarantee from its manifest/config form, e.g. ``{"name": "l-diversity", "l": 3}``;
    an unknown name or parameter is a one-paragraph error listing the valid ones."""
    name = str(spec.get("name", "l-diversity")).lower()
    name = ALIASES.get(name, name)
    if name not in GUARANTEES:
        raise RuleError(f"Unknown guarantee {name!r}; available: {', '.join(sorted(GUARANTEES))}.")
    cls = GUARANTEES[name]
    fields = [f for f in getattr(cls, "__dataclass_fields__", {})]
    params = {k: v for k, v in spec.items() if k != "name"}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise RuleError(
            f"The {name} guarantee has no parameter(s) {', '.join(unknown)}; its parameters are: {', '.join(fields)}."
        )
    missing = [f for f in fields if f not in params]
    if missing:
        raise RuleError(
            f"The {name} guarantee needs a value for {', '.join(missing)} (e.g. {name}:{missing[0]}=2 on the "
            f"command line, or {missing[0]} = 2 in the configuration)."
        )
    built: Guarantee = cls(**params)
    return built


def parse_guarantee(text: str) -> dict[str, Any]:
    """``"l-diversity:l=3"`` (command-line form: a name, then ``param=value`` pairs after a
    colon, comma-separated) -> ``{"name": "l-diversity", "l": 3}`` (numbers become numbers)."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise RuleError(f"--guarantee {text!r}: give a name, e.g. l-diversity:l=3.")
    spec: dict[str, Any] = {"name": name.strip().lower()}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise RuleError(f"--guarantee {text!r}: parameters are key=value pairs, e.g. l-diversity:l=3.")
        v: Any = value.strip()
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                continue
        spec[key.strip()] = v
    return spec
