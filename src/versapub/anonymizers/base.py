"""The anonymizer extension point.

An anonymizer takes one sub-table (the input restricted to the sub-table's
attributes) and the single rule ``X -> S`` it must enforce, and *publishes* it: it
emits one or more count tables (Anatomy: a quasi-identifier table and a sensitive
table).  Parameters live in ``__init__`` (scikit-learn style); the verb is
:meth:`Anonymizer.publish`.  Generalization (Mondrian), Sequential Sweep and
multi-sensitive-attribute decomposition implement the same protocol and register in
:mod:`versapub.anonymizers`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from versapub.data.counts import CountTable
from versapub.data.hierarchy import Hierarchy
from versapub.data.source import Source
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError
from versapub.plugins import Param
from versapub.privacy.guarantees.guarantee import Guarantee
from versapub.privacy.rules import Rule

#: The table kind's registered name (``versapub.kinds``: plain, anatomy, ...).
Kind = str


@dataclass(frozen=True)
class Labels(Mapping[str, tuple[str, ...]]):
    """The generalized values of one attribute: ``order`` lists the attribute's leaves
    (its domain) in an order where every generalized value covers a contiguous run, and
    ``spans[label] = (first, last)`` the positions of the run (inclusive).  As a mapping,
    ``labels[label]`` is the tuple of leaves (computed on demand: a range over a large
    domain is stored as two positions, never as its leaves)."""

    order: tuple[str, ...]
    spans: dict[str, tuple[int, int]]

    def __post_init__(self) -> None:
        m = len(self.order)
        for label, (a, b) in self.spans.items():
            if not 0 <= a <= b < m:
                raise ValueError(f"label {label!r} covers positions {a}..{b} outside 0..{m - 1}")

    def __getitem__(self, label: str) -> tuple[str, ...]:
        a, b = self.spans[label]
        return self.order[a : b + 1]

    def __iter__(self) -> Iterator[str]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def size(self, label: str) -> int:
        a, b = self.spans[label]
        return b - a + 1


@dataclass(frozen=True)
class AnonymizedTable:
    """What an anonymizer emits for one sub-table.

    ``parts`` maps a file role to its count table: ``{"data": ...}`` for a plain
    table, ``{"qit": ..., "st": ...}`` for an anatomy table.  ``stats`` are figures for
    the report (groups, group sizes, achieved guarantee).  A table anonymized for several
    rules at once (multi-SA publishing) lists the further rules in ``also_enforces``; its
    ST then holds every sensitive attribute, ``suppressed_group`` is the id of the group
    whose sensitive values are withheld (no ST rows; ``None``: no suppression) and
    ``domains`` lists each sensitive attribute's values (over which the suppressed
    records are spread by the release model).  A generalized table lists, per attribute,
    the leaves each published label covers (``leaves``; a value not listed is a leaf).
    """

    attributes: tuple[str, ...]
    kind: Kind
    enforces: Rule | None
    parts: dict[str, CountTable]
    stats: dict[str, Any] = field(default_factory=dict)
    also_enforces: tuple[Rule, ...] = ()
    suppressed_group: int | None = None
    domains: dict[str, tuple[str, ...]] = field(default_factory=dict)
    leaves: dict[str, Labels] = field(default_factory=dict)
    #: Listings (files without counts) by role, as rows of text: an ``sa-groups`` table's
    #: ``sets`` (``group_id, attribute, value``).
    listed: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    #: The sensitive attribute of a table that holds it without enforcing a rule (a
    #: marginal of a collection, whose own checks protect it: :mod:`versapub.marginals`).
    sensitive: str | None = None
    #: Columns a generalized table publishes exactly in each record's row beside its classes
    #: without being part of them (the classic job's other columns: ARX's insensitive ones).
    kept: tuple[str, ...] = ()
    #: Records removed by suppression (ARX's semantics, ``suppression_mode="remove"``): their
    #: row numbers in the anonymizer's input, published in no table; and their number by
    #: reason (:func:`~versapub.anonymizers.generalizing.suppression.reasons`).
    removed: npt.NDArray[np.int64] | None = field(default=None, compare=False)
    removed_by_reason: dict[str, int] = field(default_factory=dict)
    #: The guarantee a table that enforces no rule was built for, as the manifest writes it:
    #: a plain sub-table generalized to meet the job's floor on published cells is
    #: ``{"name": "k-anonymity", "k": K}`` of its columns (issue 63: the verifier reads it so,
    #: not as the release's guarantee of rules it does not enforce).
    own_guarantee: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("an anonymized table has at least one part")
        if self.also_enforces and self.enforces is None:
            raise ValueError("a table that enforces further rules enforces a first one")

    @property
    def enforced_rules(self) -> tuple[Rule, ...]:
        return () if self.enforces is None else (self.enforces, *self.also_enforces)

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        if self.enforces is None and self.sensitive is not None:
            return (self.sensitive,)
        return tuple(r.rhs for r in self.enforced_rules)


def _quiet(message: str) -> None:
    del message


@dataclass(frozen=True)
class PublishRequest:
    """What an anonymizer is asked to publish: ``table`` (the sub-table: the input
    restricted to its attributes; an :class:`~versapub.data.table.EncodedTable`, or any
    :class:`~versapub.data.source.Source` for an anonymizer that runs out of core), the
    ``rules`` it enforces (none: identities only, the classic job), their ``guarantees``
    (one for every rule, or one per rule for a :class:`PerRuleAnonymizer`), the seeded
    ``rng``, ``progress`` (receives lines about long steps), the attributes'
    generalization ``hierarchies`` (generalizing anonymizers use them, the others ignore
    them) and the columns to ``keep`` exactly beside a generalizing anonymizer's classes
    (:class:`KeepsColumns`), and the job's floor ``k`` on published cells
    (:class:`MeetsCellFloor`).  The population a guarantee is checked against travels with
    the guarantee (:attr:`population`)."""

    table: Any
    rules: tuple[Rule, ...]
    guarantees: tuple[Guarantee, ...]
    rng: np.random.Generator
    progress: Callable[[str], None] | None = None
    hierarchies: Mapping[str, Hierarchy] | None = None
    keep: tuple[str, ...] = ()
    #: The job's floor on published cells (``--k``, and ``--max-risk`` as ``1/k``): every
    #: record shares its exactly published non-sensitive values with at least ``k - 1``
    #: others.  Set only for an anonymizer that meets it (:class:`MeetsCellFloor`); 1: none.
    k: int = 1
    #: The kept columns the floor counts (the job's ``--keys`` among them; ``None``: all of
    #: ``keep``): a kept column no key names is published exactly but makes no cell.
    counted: tuple[str, ...] | None = None

    def floor_kept(self, kept: Sequence[str]) -> list[str]:
        """The kept columns whose values make the floor's cells beside the classes."""
        return list(kept) if self.counted is None else [a for a in kept if a in self.counted]

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"a request's cell floor k is a whole number >= 1, got {self.k!r}")
        if len(self.guarantees) not in {1, len(self.rules)}:
            raise ValueError(
                f"a request has one guarantee for every rule or one per rule: {len(self.guarantees)} guarantee(s) "
                f"for {len(self.rules)} rule(s)"
            )

    @classmethod
    def of(
        cls,
        table: Any,
        rules: Rule | Sequence[Rule],
        guarantee: Guarantee | Sequence[Guarantee],
        rng: np.random.Generator,
        progress: Callable[[str], None] | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        keep: Sequence[str] = (),
        k: int = 1,
    ) -> PublishRequest:
        """A request from loose arguments: one rule or several, one guarantee or one per rule."""
        rs = (rules,) if isinstance(rules, Rule) else tuple(rules)
        gs = tuple(guarantee) if isinstance(guarantee, Sequence) else (guarantee,)
        return cls(table, rs, gs, rng, progress, hierarchies, tuple(keep), k)

    @property
    def guarantee(self) -> Guarantee:
        """The guarantee of the request's (first) rule: every rule's, unless per rule."""
        return self.guarantees[0]

    def per_rule(self) -> tuple[Guarantee, ...]:
        """Each rule's guarantee, in the order of :attr:`rules`."""
        return self.guarantees if len(self.guarantees) == len(self.rules) else self.guarantees * len(self.rules)

    @property
    def say(self) -> Callable[[str], None]:
        """``progress``, or a callback that says nothing."""
        return self.progress or _quiet

    def with_table(self, table: Any, rules: Sequence[Rule] | None = None) -> PublishRequest:
        """The same request for another table (and rules)."""
        return replace(self, table=table, rules=self.rules if rules is None else tuple(rules))


class Anonymizer(Protocol):
    """Publishes one sub-table so that it satisfies its rule(s) under ``guarantee``.

    ``max_rules`` is how many rules one table may enforce at once (1: single-rule
    publishing such as Anatomy; multi-SA publishing enforces any number).  ``publish``
    takes one rule or a sequence of them; ``progress`` receives lines about long steps;
    ``hierarchies`` are the attributes' generalization hierarchies (``--hierarchy ATTR=FILE``),
    which generalizing anonymizers use and the others ignore."""

    name: str
    max_rules: int

    @property
    def parameter_constraints(self) -> Mapping[str, Param]:
        """Parameter -> its constraint (:class:`versapub.plugins.Param`), checked by the builder."""
        ...

    @property
    def glossary(self) -> str:
        """The anonymizer in a sentence or two, its paper cited, for the report's glossary."""
        ...

    def params(self) -> dict[str, Any]:
        """Constructor parameters, recorded in the manifest."""
        ...

    def publish(self, request: PublishRequest) -> AnonymizedTable:
        """The sub-table of ``request`` published under its rule(s) and guarantee(s)."""
        ...


@runtime_checkable
class PerRuleAnonymizer(Protocol):
    """Optional capability: an anonymizer that enforces several rules, each under its own
    guarantee (``request.guarantees[i]`` for ``request.rules[i]``), instead of their
    conjunction (the MSA decomposition: one ``l_i`` per sensitive attribute).  The workflow
    then binds each rule's guarantee to its own sensitive attribute."""

    guarantees_per_rule: bool


@runtime_checkable
class DefaultDecomposition(Protocol):
    """Optional capability: the decomposition an anonymizer's tables need when the user names
    none (the MSA decomposition's one table of every sensitive attribute: ``multi-sa``)."""

    default_decomposition: str


@runtime_checkable
class KeepsColumns(Protocol):
    """Optional capability of a generalizing anonymizer: the classic job's one table —
    equivalence classes over the quasi-identifiers, the ``keep`` columns published exactly in
    each record's row (ARX's insensitive attributes), under the table's one rule or none
    (identities only): ``request.keep`` names them."""

    keeps_columns: bool


@runtime_checkable
class MeetsCellFloor(Protocol):
    """Optional capability: the anonymizer meets the job's floor on published cells
    (``--k``; ``--max-risk`` with the highest prosecutor risk, as ``k = ceil(1/R)``) while it
    anonymizes — Mondrian stops cutting, Incognito climbs the lattice — instead of being
    refused after the fact: ``request.k`` is set for it (docs/choices.md)."""

    meets_k: bool


@runtime_checkable
class RecodesLocally(Protocol):
    """Optional capability (a declaration): the anonymizer generalizes each equivalence class
    on its own (multidimensional local recoding: Mondrian's ranges may overlap across
    classes), so the values it publishes of an attribute need not partition its leaves. A
    table of it that shares a generalized attribute with another table cannot be read as one
    collection of marginals, which ``check --k`` does (Kifer & Gehrke's k-link and
    k-combinatorial anonymity): such a job is refused with ``--k`` before anything is
    anonymized (issue 63)."""

    recodes_locally: bool


@runtime_checkable
class PublishesSensitiveJoint(Protocol):
    """Optional capability (a declaration): the anonymizer publishes the joint distribution of
    its table's sensitive attributes exactly (the MSA decomposition's ``T^S``), so a rule whose
    left-hand side holds another of those sensitive attributes cannot hold in its table —
    anyone who knows that value reads the protected attribute's distribution beside it.
    Such a job is refused before anything is anonymized (issue 63)."""

    publishes_sensitive_joint: bool


@runtime_checkable
class PublishesExactly(Protocol):
    """Optional capability: a bucketizing anonymizer (Anatomy, multi-SA publishing, the MSA
    decomposition) publishes every attribute of its table but the enforced rules' sensitive
    ones exactly, beside the groups.  Declared so the proxy screen can run on the schema
    before anything is anonymized (every refusal of a job at once, issue 44);
    ``exact_quasi_identifiers`` is True."""

    exact_quasi_identifiers: bool


@runtime_checkable
class DefaultGuarantees(Protocol):
    """Optional capability: the guarantee of each rule the user gave none for (no rule's
    own and no release guarantee), computed from the data (the MSA decomposition: distinct
    l-diversity with ``l_per``, its paper's default)."""

    def default_guarantees(self, table: EncodedTable, rules: Sequence[Rule]) -> dict[Rule, Guarantee]: ...


@dataclass(frozen=True)
class SensitiveReach:
    """How far an anonymizer may generalize a rule's sensitive values: the most protective
    distribution it can publish — the induced counts of the column's values (code order)
    when every value is generalized to ``level`` — and a note for refusals (the eligible
    ranges up to that level)."""

    level: int
    counts: npt.NDArray[np.float64]
    note: str


@runtime_checkable
class SensitiveGeneralizing(Protocol):
    """Optional capability: an anonymizer that may publish sensitive values generalized up
    a taxonomy (Sequential Sweep).  A rule is then feasible when the distribution it can
    reach is; the workflow checks feasibility with :meth:`sensitive_reach` instead of the
    column's own counts."""

    def sensitive_reach(
        self, table: EncodedTable, rule: Rule, guarantee: Guarantee, hierarchies: Mapping[str, Hierarchy] | None
    ) -> SensitiveReach: ...


def as_rules(rules: Rule | Sequence[Rule], name: str, max_rules: int) -> tuple[Rule, ...]:
    """The rules an anonymizer is asked to enforce, refused beyond its ``max_rules``."""
    out = (rules,) if isinstance(rules, Rule) else tuple(rules)
    if not out:
        raise ValueError(f"{name} needs a rule to enforce")
    if len(out) > max_rules:
        raise ConfigError(
            f"The {name} anonymizer enforces {max_rules} rule(s) per table, but a table must enforce "
            f"{len(out)}: {'; '.join(map(str, out))}. Use an anonymizer that enforces several (multi-sa)."
        )
    return out


def publish_plain(table: Source) -> AnonymizedTable:
    """A sub-table that enforces no rule: its exact projection as a count table (on the
    table's backend: :mod:`versapub.data.source`)."""
    ct = cast(CountTable, table.count_table(table.names))  # a backend's count table (in memory: CountTable)
    return AnonymizedTable(table.names, "plain", None, {"data": ct}, {"rows": ct.n_rows})
