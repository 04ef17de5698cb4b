"""The decomposition extension point: an object built with its parameters that turns
(table, rules) into a schema, and may refine it.

``decompose(table, rules, rng) -> Schema`` gives sub-tables that each enforce the rules
their anonymizer will check; the caller always passes the result through the GNF checker
before anything is anonymized.  ``refine(schema, rules, score, rng, progress)`` improves a
schema given ``score(schema) -> KL`` (GD's add-back; the identity for the others) and
returns the trace of its steps.  ``default_anonymizer`` names the anonymizer its tables
need when the user names none (multi-SA tables enforce several rules).  Register the class
in :mod:`versapub.decompositions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from versapub.data.source import Source
from versapub.plugins import Param
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema

#: ``score(schema) -> KL-divergence`` of the release the schema would give; ``math.inf`` for a
#: schema the job cannot publish (its floor on published cells, issue 63), which a refinement
#: never takes.
Score = Callable[[Schema], float]
#: ``progress(description, completed, total)``.
Progress = Callable[[str, int, int], None]


class Decomposition(Protocol):
    """See the module docstring."""

    name: str
    default_anonymizer: str

    @property
    def parameter_constraints(self) -> Mapping[str, Param]:
        """Parameter -> its constraint (:class:`versapub.plugins.Param`), checked by the builder."""
        ...

    @property
    def glossary(self) -> str:
        """The decomposition in a sentence or two, its paper cited, for the report's glossary."""
        ...

    def params(self) -> dict[str, Any]:
        """Constructor parameters, recorded in the manifest."""
        ...

    def decompose(self, table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema: ...

    def refine(
        self,
        schema: Schema,
        rules: Sequence[Rule],
        score: Callable[[], Score],
        rng: np.random.Generator,
        progress: Progress,
        attributes: Sequence[str],
    ) -> tuple[Schema, list[dict[str, Any]]]:
        """An improved schema and the trace of its steps (``score`` builds the scorer; it
        is called only by decompositions that refine)."""
        ...
