"""Feasibility of a rule set: every rule must hold when its sensitive attribute is
published alone (the premise of Lemma 1 and of the paper's experiments, §6.1), i.e.
for l-diversity the most frequent value count ``n1 <= n / l``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import numpy.typing as npt

from versapub.data.source import Source
from versapub.errors import InfeasibleError
from versapub.privacy.guarantees.guarantee import Guarantee, IntArray, SingleAttributeViolation
from versapub.privacy.rules import Rule


@dataclass(frozen=True)
class Feasibility:
    """Per rule: its sensitive attribute's most frequent value and whether it is feasible."""

    rule: Rule
    top_value: str
    top_count: int
    n: int
    violation: SingleAttributeViolation | None

    @property
    def feasible(self) -> bool:
        return self.violation is None

    @property
    def share(self) -> float:
        return self.top_count / self.n

    def message(self) -> str:
        if self.violation is None:
            return (
                f"'{self.rule}': feasible (most frequent {self.rule.rhs!r} value {self.top_value!r} "
                f"in {self.share:.1%} of records)"
            )
        return (
            f"rule '{self.rule}' cannot be satisfied: value {self.top_value!r} of "
            f"{self.rule.rhs!r} occurs in {self.top_count} of {self.n} records "
            f"({self.share:.1%}), {self.violation.explanation}"
        )


def feasibility(
    table: Source,
    rules: Sequence[Rule],
    guarantee: Guarantee | Mapping[Rule, Guarantee],
    reach: Mapping[Rule, tuple[npt.NDArray[np.float64], str]] | None = None,
) -> list[Feasibility]:
    """Evaluate every rule's feasibility under its guarantee (one for all, or each rule's;
    one ``bincount`` per sensitive attribute).  ``reach[rule] = (counts, note)``: the rule's
    anonymizer may generalize its sensitive values, so feasibility is judged on the
    (induced) counts it can reach, and a refusal carries the note."""
    out = []
    for r in rules:
        col = table.column(r.rhs)
        counts = col.counts()
        g = guarantee[r] if isinstance(guarantee, Mapping) else guarantee
        own = (reach or {}).get(r)
        v = g.single_attribute_violation(cast(IntArray, own[0]) if own is not None else counts)
        if v is not None and own is not None:
            v = replace(v, explanation=f"{v.explanation}; {own[1]}")
        top = int(counts.argmax())
        out.append(Feasibility(r, str(col.values[top]), int(counts[top]), int(counts.sum()), v))
    return out


def require_feasible(
    table: Source,
    rules: Sequence[Rule],
    guarantee: Guarantee | Mapping[Rule, Guarantee],
    reach: Mapping[Rule, tuple[npt.NDArray[np.float64], str]] | None = None,
) -> list[Feasibility]:
    """Raise :class:`InfeasibleError` naming every infeasible rule; return the evaluation."""
    result = feasibility(table, rules, guarantee, reach)
    bad = [f for f in result if not f.feasible]
    if bad:
        detail = "; ".join(f.message() for f in bad)
        how = {(guarantee[f.rule] if isinstance(guarantee, Mapping) else guarantee).describe() for f in bad}
        raise InfeasibleError(
            f"Under {'; '.join(sorted(how))}, {len(bad)} rule(s) cannot be satisfied even by "
            f"publishing the sensitive attribute alone: {detail}. Lower l, generalize the "
            "attribute (hierarchy level), or drop the rule. On a skewed attribute (one value in most records), "
            "a guarantee that bounds how far a class's distribution may move from the table's own can always "
            "hold (the whole table is one class): give the rule its own, t-closeness or beta-likeness, with a "
            "generalizing anonymizer — e.g. --rule 'Q -> S | t-closeness:t=0.2' (TOML: {rule = 'Q -> S', "
            "guarantee = 't-closeness', t = 0.2}) with --anonymizer mondrian or incognito."
        )
    return result
