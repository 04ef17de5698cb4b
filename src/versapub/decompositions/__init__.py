"""Decompositions of a table into sub-tables, registered by name and built with their
parameters: UAD (Algorithm 2), GD (Algorithm 1 with its add-back), and the paper's
baselines (single-attribute, multi-SA)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from versapub.data.source import Source
from versapub.decompositions.base import Decomposition, Progress, Score
from versapub.decompositions.gd import AddBackStep, add_back, gd_initial, guardian_decomposition
from versapub.decompositions.multi_sa import multi_sa
from versapub.decompositions.single import single_attribute
from versapub.decompositions.uad import uad, uad_schema
from versapub.plugins import Param, build, validated
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema


class _Fixed:
    """A decomposition without parameters and without refinement."""

    name = ""
    default_anonymizer = "anatomy"
    parameter_constraints: ClassVar[dict[str, Param]] = {}
    glossary: ClassVar[str] = ""
    _fn: Callable[[Source, Sequence[Rule], np.random.Generator], Schema]

    def params(self) -> dict[str, Any]:
        return {}

    def decompose(self, table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema:
        return type(self)._fn(table, rules, rng)

    def refine(
        self,
        schema: Schema,
        rules: Sequence[Rule],
        score: Callable[[], Score],
        rng: np.random.Generator,
        progress: Progress,
        attributes: Sequence[str],
    ) -> tuple[Schema, list[dict[str, Any]]]:
        return schema, []


class UAD(_Fixed):
    """Algorithm 2: one table per colour class of the rule graph's DSATUR colouring."""

    name = "uad"
    glossary: ClassVar[str] = (
        "UAD (Algorithm 2 of Jin et al.): one table per colour class of the rule graph; every rule's sensitive "
        "attribute is guarded by the table that holds it."
    )
    _fn = staticmethod(uad)
    #: Needs only the attributes and the rules: runs on any backend (versapub.data.source).
    out_of_core = True


class SingleAttribute(_Fixed):
    """The single-attribute baseline (§1.3): every attribute alone."""

    name = "single-attribute"
    glossary: ClassVar[str] = "The single-attribute baseline (§1.3 of Jin et al.): every attribute published alone."
    _fn = staticmethod(single_attribute)


class MultiSA(_Fixed):
    """The multi-SA baseline (Appendix B): one table, every right-hand side sensitive."""

    name = "multi-sa"
    default_anonymizer = "multi-sa"
    glossary: ClassVar[str] = (
        "The multi-SA baseline (Appendix B of Jin et al.): one table, every right-hand side sensitive."
    )
    _fn = staticmethod(multi_sa)


class GD:
    """Algorithm 1: the guardian decomposition (steps 1–4), then the greedy add-back
    (steps 5–8) as a refinement scored by the release's KL-divergence.

    ``stop_when_worse`` stops at the first step that does not lower KL; ``max_candidates``
    scores a seeded random subset per step (an approximation); ``jobs`` threads score a
    step's candidates (default: one per CPU; the result does not depend on it)."""

    name = "gd"
    default_anonymizer = "anatomy"
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "stop_when_worse": Param("flag"),
        "max_candidates": Param("whole", low=1, optional=True),
        "jobs": Param("whole", low=1, optional=True),
    }
    glossary: ClassVar[str] = (
        "GD, the guardian decomposition (Algorithm 1 of Jin et al.): a schema in GNF, then attributes added back "
        "greedily while the release's KL-divergence falls."
    )

    def __init__(self, stop_when_worse: bool = False, max_candidates: int | None = None, jobs: int | None = None):
        got = validated(
            self.name,
            self.parameter_constraints,
            {"stop_when_worse": stop_when_worse, "max_candidates": max_candidates, "jobs": jobs},
        )
        self.stop_when_worse = got["stop_when_worse"]
        self.max_candidates = got["max_candidates"]
        self.jobs = got["jobs"]

    def params(self) -> dict[str, Any]:
        return {"stop_when_worse": self.stop_when_worse, "max_candidates": self.max_candidates}

    def decompose(self, table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema:
        return gd_initial(table, rules, rng)

    def refine(
        self,
        schema: Schema,
        rules: Sequence[Rule],
        score: Callable[[], Score],
        rng: np.random.Generator,
        progress: Progress,
        attributes: Sequence[str],
    ) -> tuple[Schema, list[dict[str, Any]]]:
        scorer = score()
        trace: list[dict[str, Any]] = [{"step": 0, "kl": scorer(schema), "added": None}]

        def on_step(step: AddBackStep) -> None:
            trace.append(
                {
                    "step": len(trace),
                    "kl": step.kl,
                    "added": [step.attribute, step.table],
                    "candidates": step.candidates,
                    "pruned": step.pruned,
                }
            )
            progress(f"GD add-back: {step.attribute} -> {step.table}, KL {step.kl:.5f}", len(trace), len(trace) + 1)

        def on_candidate(step_no: int, scored: int, total: int, best: float) -> None:
            progress(f"GD step {step_no}: scoring candidates, best KL so far {best:.5f}", scored, total)

        schema, _ = add_back(
            schema,
            rules,
            scorer,
            stop_when_worse=self.stop_when_worse,
            max_candidates=self.max_candidates,
            rng=rng,
            on_step=on_step,
            attributes=attributes,
            n_jobs=self.jobs or (os.cpu_count() or 1),
            on_candidate=on_candidate,
        )
        return schema, trace


DECOMPOSITIONS: dict[str, Callable[..., Decomposition]] = {
    "uad": UAD,
    "gd": GD,
    "single-attribute": SingleAttribute,
    "multi-sa": MultiSA,
}


def make_decomposition(name: str, **params: Any) -> Decomposition:
    """The registered decomposition ``name`` built with ``params`` (a clear error lists the
    valid names or parameters)."""
    return build("decomposition", DECOMPOSITIONS, name, params)


def get_decomposition(name: str) -> Decomposition:
    """``make_decomposition(name)`` with default parameters."""
    return make_decomposition(name)


__all__ = [
    "DECOMPOSITIONS",
    "GD",
    "UAD",
    "AddBackStep",
    "Decomposition",
    "MultiSA",
    "SingleAttribute",
    "add_back",
    "get_decomposition",
    "guardian_decomposition",
    "make_decomposition",
    "multi_sa",
    "single_attribute",
    "uad",
    "uad_schema",
]
