"""The read side, for every front end: what ``versapub evaluate``, ``query``, ``check``,
``rules``, ``sample``, ``report``, ``risk`` (and its attacks), ``compare`` and ``marginals check``
compute, as Python functions
that return values (the command line only renders them; the web interface uses the same).

>>> import versapub
>>> ev = versapub.inspect.evaluate("demo-release")            # doctest: +SKIP
>>> ev.kl_divergence, ev.to_dict() == json.loads(<versapub evaluate demo-release --json>)

Every function takes a release directory (``str`` or :class:`~pathlib.Path`) and raises
:class:`~versapub.errors.VersapubError` with one paragraph on bad input.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: Each public name and the module holding it, imported on first use: a command loads only
#: what it runs (``query`` never loads the risk measures' scipy).
_WHERE = {
    "Report": "checking",
    "attacks": "checking",
    "Comparison": "comparison",
    "compare": "comparison",
    "check": "checking",
    "report": "checking",
    "treatment_effect": "checking",
    "eligible": "eligibility",
    "Evaluation": "evaluation",
    "evaluate": "evaluation",
    "HierarchyFit": "hierarchies",
    "hierarchy_fit": "hierarchies",
    "MarginalsCheck": "marginals",
    "marginals_check": "marginals",
    "Original": "original",
    "original_table": "original",
    "ColumnProfile": "profiling",
    "Profile": "profiling",
    "profile": "profiling",
    "QueryResult": "querying",
    "domains": "querying",
    "query": "querying",
    "sample": "querying",
    "RiskReport": "risks",
    "risk": "risks",
    "RiskChoices": "risks",
    "risk_choices": "risks",
    "RulesReport": "rules",
    "rules_report": "rules",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(import_module(f"versapub.inspect.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'versapub.inspect' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


if TYPE_CHECKING:
    from versapub.inspect.checking import Report, attacks, check, report, treatment_effect
    from versapub.inspect.comparison import Comparison, compare
    from versapub.inspect.eligibility import eligible
    from versapub.inspect.evaluation import Evaluation, evaluate
    from versapub.inspect.hierarchies import HierarchyFit, hierarchy_fit
    from versapub.inspect.marginals import MarginalsCheck, marginals_check
    from versapub.inspect.original import Original, original_table
    from versapub.inspect.profiling import ColumnProfile, Profile, profile
    from versapub.inspect.querying import QueryResult, domains, query, sample
    from versapub.inspect.risks import RiskChoices, RiskReport, risk, risk_choices
    from versapub.inspect.rules import RulesReport, rules_report

__all__ = [
    "ColumnProfile",
    "Comparison",
    "Evaluation",
    "HierarchyFit",
    "MarginalsCheck",
    "Original",
    "Profile",
    "QueryResult",
    "Report",
    "RiskChoices",
    "RiskReport",
    "RulesReport",
    "attacks",
    "check",
    "compare",
    "domains",
    "eligible",
    "evaluate",
    "hierarchy_fit",
    "marginals_check",
    "original_table",
    "profile",
    "query",
    "report",
    "risk",
    "risk_choices",
    "rules_report",
    "sample",
    "treatment_effect",
]
