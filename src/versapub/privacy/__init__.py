"""Privacy layer: rules, their reduction, guarantees and feasibility.

Imports are lazy: ``versapub.privacy.rules`` (rule parsing, which the independent verifier
uses) loads nothing else of this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from versapub.privacy.feasibility import Feasibility, feasibility, require_feasible
    from versapub.privacy.guarantees.guarantee import Guarantee, LDiversity, make_guarantee
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

_WHERE = {
    "Feasibility": "feasibility",
    "feasibility": "feasibility",
    "require_feasible": "feasibility",
    "Guarantee": "guarantees.guarantee",
    "LDiversity": "guarantees.guarantee",
    "make_guarantee": "guarantees.guarantee",
    "DroppedRule": "rules",
    "Reduction": "rules",
    "Rule": "rules",
    "format_attribute": "rules",
    "parse_rule": "rules",
    "parse_rules": "rules",
    "reduce_rules": "rules",
    "validate_rules": "rules",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'versapub.privacy' has no attribute {name!r}")
    return getattr(importlib.import_module(f"versapub.privacy.{_WHERE[name]}"), name)


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
