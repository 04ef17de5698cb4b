"""Random irreducible rule sets, as in the paper's experiments (§6.1 of Jin et al.):
``c`` rules with ``lhs`` LHS attributes each; a rule that even single-attribute publishing
cannot satisfy (its RHS is infeasible under the guarantee) is excluded."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from versapub.errors import RuleError
from versapub.privacy.rules import Rule

#: Draws per requested rule before giving up.
MAX_DRAWS_PER_RULE = 200


def random_rules(
    attributes: Sequence[str],
    c: int,
    lhs: int,
    rng: np.random.Generator,
    feasible_rhs: Callable[[str], bool] = lambda a: True,
) -> list[Rule]:
    """``c`` distinct rules, irreducible together (Definition 2), each with ``lhs`` LHS
    attributes and a feasible RHS, drawn uniformly with ``rng``."""
    if not 1 <= lhs < len(attributes):
        raise RuleError(f"lhs must be between 1 and {len(attributes) - 1}, got {lhs}.")
    rhs_pool = [a for a in attributes if feasible_rhs(a)]
    if not rhs_pool:
        raise RuleError("No attribute can be a right-hand side: every one is infeasible under the guarantee.")
    rules: list[Rule] = []
    draws = 0
    while len(rules) < c:
        draws += 1
        if draws > MAX_DRAWS_PER_RULE * max(c, 1):
            raise RuleError(f"Could not draw {c} irreducible rules with lhs = {lhs} over {len(attributes)} attributes.")
        rhs = str(rng.choice(rhs_pool))
        others = [a for a in attributes if a != rhs]
        chosen = tuple(str(x) for x in rng.choice(others, size=lhs, replace=False))
        rule = Rule(chosen, rhs)
        if any(r == rule or r.implies(rule) or rule.implies(r) for r in rules):
            continue
        rules.append(rule)
    return rules
