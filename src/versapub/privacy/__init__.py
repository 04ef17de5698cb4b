"""Privacy layer: rules, their reduction, guarantees and feasibility."""

from versapub.privacy.feasibility import Feasibility, feasibility, require_feasible
from versapub.privacy.guarantee import Guarantee, LDiversity, make_guarantee
from versapub.privacy.rules import (
    DroppedRule,
    Reduction,
    Rule,
    format_attribute,
    parse_rule,
    parse_rules,
    reduce_rules,
    validate_rules,
)

__all__ = [
    "DroppedRule",
    "Feasibility",
    "Guarantee",
    "LDiversity",
    "Reduction",
    "Rule",
    "feasibility",
    "format_attribute",
    "make_guarantee",
    "parse_rule",
    "parse_rules",
    "reduce_rules",
    "require_feasible",
    "validate_rules",
]
