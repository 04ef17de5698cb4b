"""``rules``: what a job's rules become before anything is published."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from versapub.errors import VersapubError

if TYPE_CHECKING:
    from versapub.io.config import PublishConfig
    from versapub.privacy.feasibility import Feasibility
    from versapub.privacy.guarantees.base import Guarantee
    from versapub.privacy.rules import Reduction, Rule
    from versapub.release.value import Release
    from versapub.schema.gnf import GNFVerdict
    from versapub.schema.model import Schema

Progress = Callable[[str, int, int], None]


def _silent(description: str, completed: int, total: int) -> None:
    del description, completed, total


@dataclass(frozen=True)
class RulesReport:
    """The rules of a job as ``versapub rules`` shows them: the table read, the guarantee,
    the reduced rules (Definition 2: implied rules dropped) with each rule's own guarantee,
    feasibility per rule, the rule graph, and — when every rule is feasible — the schema of
    the decomposition asked for with why each rule holds (``release``: published in memory,
    nothing written)."""

    input: str
    n_records: int
    attributes: tuple[str, ...]
    guarantee: Guarantee
    reduction: Reduction
    per_rule: dict[Rule, Guarantee]
    feasibility: tuple[Feasibility, ...]
    #: The rule graph: (LHS attribute, RHS attribute) edges.
    edges: tuple[tuple[str, str], ...]
    release: Release | None
    #: Per rule, the largest ``l`` its guarantee could take and stay feasible (guarantees
    #: with an ``l``; None for the others).
    largest: dict[Rule, int | None] = field(default_factory=dict)
    #: The classic one-table job's quasi-identifiers (no rule; empty for a job with rules).
    quasi_identifiers: tuple[str, ...] = ()
    #: The decomposition asked for (its name).
    decomposition: str = ""
    #: Why publishing would be refused (one paragraph with its ways out), or ``None``.
    refusal: str | None = None
    #: The decomposition's schema before anything is anonymized, when publishing is refused.
    schema: Schema | None = None
    gnf: GNFVerdict | None = None

    @property
    def feasible(self) -> bool:
        return all(f.feasible for f in self.feasibility)

    def classic_text(self) -> str | None:
        """The classic one-table job (quasi-identifiers, no rule) in a sentence; ``None`` for
        a job with rules."""
        if not self.quasi_identifiers:
            return None
        built = (
            "; ".join(f"{p.name} is published {p.table.kind}" for p in self.release.tables)
            if self.release is not None
            else "no release could be built"
        )
        return (
            f"The classic one-table job on the quasi-identifiers {', '.join(self.quasi_identifiers)} (no rule "
            f"Q -> S): {self.guarantee.describe()}; {built}."
        )

    def own_guarantee(self, rule: Rule) -> Guarantee | None:
        """The rule's guarantee when it differs from the job's."""
        mine = self.per_rule[rule]
        return None if mine.to_manifest() == self.guarantee.to_manifest() else mine

    def promise(self, rule: Rule) -> str | None:
        """The rule's guarantee in a few words (``k-anonymity with k = 5``), what its groups meet."""
        g = self.per_rule.get(rule, self.guarantee)
        return g.describe().split(":")[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "n_records": self.n_records,
            "attributes": list(self.attributes),
            "guarantee": self.guarantee.to_manifest(),
            "rules": [{**r.to_json(), "guarantee": self.per_rule[r].to_manifest()} for r in self.reduction.rules],
            "dropped": [{"rule": d.rule.to_json(), "reason": d.reason} for d in self.reduction.dropped],
            "feasibility": [
                {"feasible": f.feasible, "message": f.message(), "largest_l": self.largest.get(f.rule)}
                for f in self.feasibility
            ],
            "edges": [list(e) for e in self.edges],
            "feasible": self.feasible,
            "quasi_identifiers": list(self.quasi_identifiers),
            "classic": self.classic_text(),
            "schema": self._schema_dict(),
            "refusal": self.refusal,
        }

    def _schema_dict(self) -> dict[str, Any] | None:
        """The schema built (its tables, why each rule holds, the associations listed), or the
        decomposition's before anything is anonymized when publishing would be refused."""
        if self.release is None:
            if self.schema is None or self.gnf is None:
                return None
            return {
                "decomposition": f"{self.decomposition}, before anything is anonymized: publishing is refused",
                "tables": [t.describe() for t in self.schema.tables],
                "why": [f"'{v.rule}' {v.plain(self.promise(v.rule))}" for v in self.gnf.verdicts],
                "associations": [],
            }
        return {
            "decomposition": self.release.decomposition,
            "tables": [t.describe() for t in self.release.schema.tables],
            "why": [f"'{v.rule}' {v.plain(self.promise(v.rule))}" for v in self.release.gnf.verdicts],
            "associations": [
                {"column": a.column, "sensitive": a.sensitive, "text": a.describe()}
                for a in self.release.associations
                if a.listed
            ],
        }


def rules_report(config: PublishConfig, progress: Progress = _silent) -> RulesReport:
    """Read the job's input, reduce and check its rules, and (when every rule is feasible)
    build the decomposition's schema in memory; nothing is written."""
    from versapub.api import rule_feasibility
    from versapub.privacy import make_guarantee, reduce_rules, validate_rules
    from versapub.privacy.per_rule import effective, split

    table = config.read()
    parsed, own = split(config.rules)
    validate_rules(parsed, table.names, none_ok=bool(config.roles.quasi_identifying))  # the classic job
    red = reduce_rules(parsed)
    g = make_guarantee(config.guarantee_spec())
    feas = (
        []
        if not parsed
        else rule_feasibility(  # the classic job: no rule to check, its release is built below
            table,
            config.rules,
            guarantee=g,
            decomposition=config.decomposition,
            anonymizer=config.anonymizer,
            decomposition_params=config.decomposition_params,
            anonymizer_params=config.anonymizer_params,
            hierarchies=config.anonymizer_hierarchies(table.names),
        )
    )
    feasible = all(f.feasible for f in feas)
    per_rule = effective(red, own, g)
    largest = {f.rule: largest_l(per_rule.get(f.rule, g), table.column(f.rule.rhs).counts()) for f in feas}
    return RulesReport(
        input=str(config.input),
        n_records=table.n_rows,
        attributes=tuple(table.names),
        guarantee=g,
        reduction=red,
        per_rule=per_rule,
        feasibility=tuple(feas),
        edges=tuple(sorted({(q, r.rhs) for r in red.rules for q in r.lhs})),
        largest=largest,
        quasi_identifiers=() if parsed else tuple(config.roles.quasi_identifying),
        **(_built(config, table, red, progress) if feasible else {"release": None}),
    )


def _built(config: PublishConfig, table: Any, red: Reduction, progress: Progress) -> dict[str, Any]:
    """The release built in memory; when publishing would be refused (a proxy, a floor, an
    option the job cannot honour), the refusal's paragraph and the decomposition's schema
    before anything is anonymized instead, so that feasibility and the schema stay shown
    beside the refusal (issue 66)."""
    from versapub import workflow
    from versapub.publishing.choice import plugins_for
    from versapub.schema import check_gnf

    try:
        return {"release": workflow.publish(config, table, progress)}
    except VersapubError as e:
        kept = [a for a in table.names if a not in set(config.roles.identifying)]
        try:
            dec, _ = plugins_for(
                config.decomposition, config.anonymizer, config.decomposition_params, config.anonymizer_params
            )
            schema = dec.decompose(table.select(kept), red.rules, np.random.default_rng(config.seed or 0))
        except VersapubError:
            schema = None
        gnf = None if schema is None else check_gnf(schema, red.rules)
        name = dec.name if schema is not None else ""
        return {"release": None, "refusal": str(e), "schema": schema, "gnf": gnf, "decomposition": name}


def largest_l(g: Guarantee, counts: Any) -> int | None:
    """The largest ``l`` a guarantee with an ``l`` (its other parameters kept) could take
    with the sensitive attribute's ``counts`` published alone (feasibility is monotone in
    ``l``: a binary search); None for a guarantee without ``l``."""
    from versapub.privacy import make_guarantee

    spec = g.to_manifest()
    if "l" not in spec:
        return None

    def ok(ell: int) -> bool:
        try:
            return make_guarantee({**spec, "l": ell}).single_attribute_violation(counts) is None
        except VersapubError:
            return False

    lo, hi = 2, len(counts)  # l never exceeds the number of distinct values
    if not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo
