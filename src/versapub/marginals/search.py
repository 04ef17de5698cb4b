"""Choosing anonymized marginals that inject utility (Kifer & Gehrke §5.2, §7).

* :func:`greedy` — the paper's Figure 8: at each step, for every non-sensitive attribute
  (alone, and with the sensitive attribute), the one-attribute marginal at the *finest*
  level of its hierarchy whose addition keeps every check; the one that lowers the
  KL-divergence most is added.  Stops after ``max_marginals`` additions or when nothing
  passes or helps.
* :func:`stepwise` — forward selection over decomposable models (§5.2's stepwise
  model selection): the candidates are all marginals over up to ``max_width``
  non-sensitive attributes, each at any level below its root, with or without the
  sensitive attribute; a candidate is admissible when the enlarged collection is still
  decomposable (a junction tree over induced attributes exists — the condition the
  paper's edge and vertex moves preserve) and adds resolution.  Candidates are ranked by
  the KL-divergence they would reach (closed form, cached entropies) and checked in that
  order; the first that passes every check is added.

Both are incremental: entropies, marginals and Algorithm 1's pruned subtrees are cached
(:class:`~versapub.marginals.collection.Collection`), so a candidate costs its own clique,
separator and the junction-tree branch it touches.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from versapub.errors import ConfigError
from versapub.marginals.collection import Collection
from versapub.marginals.spec import Marginal, Requirement

#: ``progress(description, done, total)``.
Progress = Callable[[str, int, int], None]


def _quiet(description: str, done: int, total: int) -> None:
    del description, done, total


@dataclass(frozen=True)
class Step:
    """One addition: the marginal, the KL-divergence after it, candidates checked."""

    added: Marginal | None
    kl: float
    checked: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "added": None if self.added is None else self.added.label,
            "kl": self.kl,
            "checked": self.checked,
            "seconds": round(self.seconds, 4),
        }


def _adds(coll: Collection, m: Marginal) -> bool:
    """Does ``m`` add resolution (its induced attributes are not inside one marginal's)?"""
    trial = coll.with_marginal(m)
    new = frozenset(trial.keys(len(trial.marginals) - 1))
    return not any(new <= s for s in trial.key_sets()[:-1])


def greedy(
    coll: Collection,
    req: Requirement,
    max_marginals: int,
    attributes: Sequence[str] | None = None,
    progress: Progress = _quiet,
) -> tuple[Collection, list[Step]]:
    """Figure 8 (module docstring)."""
    if max_marginals < 0:
        raise ConfigError(f"--max-marginals must be >= 0, got {max_marginals}.")
    s = coll.space.sensitive
    attrs = [a for a in (attributes or coll.space.attributes) if a != s]
    steps = [Step(None, coll.kl(), 0, 0.0)]
    for step in range(max_marginals):
        t0 = time.perf_counter()
        best: tuple[float, Collection, Marginal] | None = None
        checked = 0
        variants = [(a, with_s) for a in attrs for with_s in (False, True)]
        for i, (a, with_s) in enumerate(variants):
            progress(f"greedy step {step + 1}: trying {a}{' with ' + s if with_s else ''}", i, len(variants))
            for lv in range(coll.space.top(a)):  # finest first
                m = Marginal((a, s), (lv, 0)) if with_s else Marginal((a,), (lv,))
                if not _adds(coll, m):
                    break  # a coarser level adds even less
                trial = coll.with_marginal(m)
                if not trial.decomposable():
                    continue
                checked += 1
                if trial.check(req).ok:
                    kl = trial.kl()
                    if best is None or kl < best[0]:
                        best = (kl, trial, m)
                    break
        if best is None or best[0] >= steps[-1].kl - 1e-12:
            break
        coll = best[1]
        steps.append(Step(best[2], best[0], checked, time.perf_counter() - t0))
        progress(f"greedy step {step + 1} added {best[2].label} (KL {best[0]:.4f})", 0, 0)
    progress("greedy search done", 1, 1)
    return coll, steps


def candidates(coll: Collection, max_width: int | None = None) -> list[Marginal]:
    """Every marginal over up to ``max_width`` non-sensitive attributes at levels below
    their roots, without and with the sensitive attribute."""
    s = coll.space.sensitive
    attrs = [a for a in coll.space.attributes if a != s]
    width = len(attrs) if max_width is None else max_width
    out = []
    for r in range(1, width + 1):
        for group in itertools.combinations(attrs, r):
            for levels in itertools.product(*(range(coll.space.top(a)) for a in group)):
                out.append(Marginal(group, levels))
                out.append(Marginal((*group, s), (*levels, 0)))
    return out


def stepwise(
    coll: Collection, req: Requirement, max_marginals: int, max_width: int | None = None, progress: Progress = _quiet
) -> tuple[Collection, list[Step]]:
    """Forward selection over decomposable collections (module docstring)."""
    if max_marginals < 0:
        raise ConfigError(f"--max-marginals must be >= 0, got {max_marginals}.")
    pool = candidates(coll, max_width)
    steps = [Step(None, coll.kl(), 0, 0.0)]
    for step in range(max_marginals):
        t0 = time.perf_counter()
        ranked: list[tuple[float, int, Collection, Marginal]] = []
        for i, m in enumerate(pool):
            if i % 64 == 0:
                progress(f"stepwise step {step + 1}: ranking candidates", i, len(pool))
            if not _adds(coll, m):
                continue
            trial = coll.with_marginal(m)
            if trial.decomposable():
                ranked.append((trial.kl(), i, trial, m))
        ranked.sort(key=lambda r: (r[0], r[1]))
        chosen = None
        checked = 0
        for j, (kl, _, trial, m) in enumerate(ranked):
            if kl >= steps[-1].kl - 1e-12:
                break
            if j % 16 == 0:
                progress(f"stepwise step {step + 1}: checking candidates by KL", j, len(ranked))
            checked += 1
            if trial.check(req).ok:
                chosen = (kl, trial, m)
                break
        if chosen is None:
            break
        coll = chosen[1]
        steps.append(Step(chosen[2], chosen[0], checked, time.perf_counter() - t0))
    progress("stepwise search done", 1, 1)
    return coll, steps
