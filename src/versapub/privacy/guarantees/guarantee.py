"""The registry of privacy guarantees, and building one from its manifest or command-line
form.

Each guarantee is a module of :mod:`versapub.privacy.guarantees` implementing
:class:`~versapub.privacy.guarantees.base.Guarantee`: frequency l-diversity (the paper's,
§6.1), distinct, entropy and recursive (c,l)-diversity (``diversity``), k-anonymity
(``kanonymity``), t-closeness (``closeness``), beta-likeness (``likeness``),
delta-disclosure privacy (``disclosure``), k-map (``kmap``) and delta-presence
(``presence``; the last two checked against a population, ``population``).  Adding one:
its module, a line in :data:`GUARANTEES`, its check in the independent verifier, and a
parameter grid in the conformance suite.
"""

from __future__ import annotations

from typing import Any

from versapub.errors import RuleError
from versapub.plugins import build, parse_spec
from versapub.privacy.guarantees.base import (
    CONTEXTS,
    Guarantee,
    GuaranteeContext,
    Histograms,
    IntArray,
    SingleAttributeViolation,
    Taxonomy,
)
from versapub.privacy.guarantees.closeness import TCloseness
from versapub.privacy.guarantees.combined import AllOf
from versapub.privacy.guarantees.disclosure import DeltaDisclosure
from versapub.privacy.guarantees.diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    LDiversity,
    RecursiveCLDiversity,
)
from versapub.privacy.guarantees.functional import FunctionalDiversity
from versapub.privacy.guarantees.kanonymity import KAnonymity
from versapub.privacy.guarantees.kmap import KMap
from versapub.privacy.guarantees.likeness import BetaLikeness
from versapub.privacy.guarantees.presence import DeltaPresence

__all__ = [
    "ALIASES",
    "CONTEXTS",
    "GUARANTEES",
    "AllOf",
    "BetaLikeness",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "Guarantee",
    "GuaranteeContext",
    "Histograms",
    "IntArray",
    "KAnonymity",
    "KMap",
    "LDiversity",
    "RecursiveCLDiversity",
    "SingleAttributeViolation",
    "TCloseness",
    "Taxonomy",
    "make_guarantee",
    "parse_guarantee",
]

#: Registered guarantees: name -> class built with the guarantee's parameters.
GUARANTEES: dict[str, type] = {
    "l-diversity": LDiversity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "k-anonymity": KAnonymity,
    "t-closeness": TCloseness,
    "all-of": AllOf,
    "functional-diversity": FunctionalDiversity,
    "beta-likeness": BetaLikeness,
    "delta-disclosure": DeltaDisclosure,
    "k-map": KMap,
    "delta-presence": DeltaPresence,
}
#: Other spellings accepted for a registered name.
ALIASES = {
    "ldiversity": "l-diversity",
    "frequency-l-diversity": "l-diversity",
    "distinct-l": "distinct-l-diversity",
    "entropy-l": "entropy-l-diversity",
    "recursive-cl": "recursive-cl-diversity",
    "recursive-c-l-diversity": "recursive-cl-diversity",
    "k-anon": "k-anonymity",
    "kanonymity": "k-anonymity",
    "tcloseness": "t-closeness",
    "functional": "functional-diversity",
    "tau-lambda": "functional-diversity",
    "b-likeness": "beta-likeness",
    "betalikeness": "beta-likeness",
    "delta-disclosure-privacy": "delta-disclosure",
    "d-disclosure": "delta-disclosure",
    "kmap": "k-map",
    "d-presence": "delta-presence",
    "deltapresence": "delta-presence",
}


def make_guarantee(spec: dict[str, Any]) -> Guarantee:
    """Build a guarantee from its manifest/config form, e.g. ``{"name": "l-diversity", "l": 3}``,
    with :func:`versapub.plugins.build` (the one builder: an unknown name or parameter, a
    missing one or a value out of range is a one-paragraph error naming it); parameters that
    hold guarantees (``all-of``'s) are built first."""
    name = str(spec.get("name", "l-diversity")).lower()
    params = {k: v for k, v in spec.items() if k != "name"}
    cls = GUARANTEES.get(ALIASES.get(name, name))
    for k in getattr(cls, "recorded", ()):  # what the manifest records beside the parameters (k-map's derived k)
        params.pop(k, None)
    for k in getattr(cls, "nested", ()):  # parameters holding guarantees (all-of): built first
        if k in params:
            parts = params[k]
            if not isinstance(parts, list | tuple):
                raise RuleError(f"The {name} guarantee's {k} is a list of guarantees, got {parts!r}.")
            params[k] = tuple(make_guarantee(dict(g)) if isinstance(g, dict) else g for g in parts)
    built: Guarantee = build(
        "guarantee", GUARANTEES, name, params, aliases={a: (n, {}) for a, n in ALIASES.items()}, error=RuleError
    )
    return built


def parse_guarantee(text: str) -> dict[str, Any]:
    """``"l-diversity:l=3"`` (command-line form: a name, then ``param=value`` pairs after a
    colon, comma-separated) -> ``{"name": "l-diversity", "l": 3}``; values read as every
    plug-in's do (:func:`versapub.plugins.parse_spec`: booleans, None, numbers)."""
    name, params = parse_spec(text, "--guarantee")
    return {"name": name, **params}
