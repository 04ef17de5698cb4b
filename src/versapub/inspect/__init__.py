"""The read side, for every front end: what ``versapub evaluate``, ``query``, ``check``,
``rules``, ``sample``, ``report``, ``risk`` (and its attacks) and ``marginals check`` compute, as Python functions
that return values (the command line only renders them; the web interface uses the same).

>>> import versapub
>>> ev = versapub.inspect.evaluate("demo-release")            # doctest: +SKIP
>>> ev.kl_divergence, ev.to_dict() == json.loads(<versapub evaluate demo-release --json>)

Every function takes a release directory (``str`` or :class:`~pathlib.Path`) and raises
:class:`~versapub.errors.VersapubError` with one paragraph on bad input.
"""

from versapub.inspect.checking import Report, attacks, check, report, treatment_effect
from versapub.inspect.eligibility import eligible
from versapub.inspect.evaluation import Evaluation, evaluate
from versapub.inspect.hierarchies import HierarchyFit, hierarchy_fit
from versapub.inspect.marginals import MarginalsCheck, marginals_check
from versapub.inspect.original import Original, original_table
from versapub.inspect.profile import ColumnProfile, Profile, profile
from versapub.inspect.querying import QueryResult, domains, query, sample
from versapub.inspect.risk import RiskReport, risk
from versapub.inspect.rules import RulesReport, rules_report

__all__ = [
    "ColumnProfile",
    "Evaluation",
    "HierarchyFit",
    "MarginalsCheck",
    "Original",
    "Profile",
    "QueryResult",
    "Report",
    "RiskReport",
    "RulesReport",
    "attacks",
    "check",
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
    "rules_report",
    "sample",
    "treatment_effect",
]
