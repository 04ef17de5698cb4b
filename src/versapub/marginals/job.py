"""A marginals job from its specification: the collection (base table, given marginals,
injected ones), its checks, and the roles and search steps the manifest records; and a
released collection reopened for more injection."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InfeasibleError
from versapub.marginals.base_table import best_table
from versapub.marginals.collection import Collection, Verdict
from versapub.marginals.search import Step, greedy, stepwise
from versapub.marginals.space import Space
from versapub.marginals.spec import Marginal, MarginalsSpec, Requirement, parse_marginals

Progress = Callable[[str, int, int], None]


def _quiet(description: str, done: int, total: int) -> None:
    del description, done, total


@dataclass
class Job:
    """A collection ready to be released: its checks, each marginal's role, the search."""

    collection: Collection
    requirement: Requirement
    verdict: Verdict
    roles: dict[str, str] = field(default_factory=dict)
    steps: list[Step] | None = None

    def search_json(self) -> list[dict[str, Any]] | None:
        return None if self.steps is None else [s.to_json() for s in self.steps]


def _refuse(coll: Collection, verdict: Verdict, what: str) -> InfeasibleError:
    shown = "; ".join(verdict.failures())
    listed = ", ".join(f"{n} = {m.label}" for n, m in zip(coll.names, coll.marginals, strict=True))
    return InfeasibleError(
        f"{what} ({listed}) cannot be published together: {shown}. Generalize the marginal named, "
        "drop it, or lower k or l."
    )


def search(coll: Collection, req: Requirement, n: int, how: str, progress: Progress) -> tuple[Collection, list[Step]]:
    """Inject up to ``n`` marginals by ``how`` (``greedy`` or ``stepwise``)."""
    if how == "greedy":
        return greedy(coll, req, n, progress=progress)
    if how == "stepwise":
        return stepwise(coll, req, n, progress=progress)
    raise ConfigError(f"Unknown search {how!r}; use greedy or stepwise.")


def build(
    table: EncodedTable, spec: MarginalsSpec, hierarchies: Mapping[str, Hierarchy], progress: Progress = _quiet
) -> Job:
    """The collection the specification describes, checked (refused with the failing
    marginal and cell when it does not pass), then enlarged by ``spec.inject``."""
    for a in hierarchies:
        if a not in table.names:
            raise ConfigError(f"A hierarchy is given for {a!r}, which is not a column ({', '.join(table.names)}).")
    req = Requirement.build(spec.sensitive, spec.k, spec.diversity)
    space = Space.of_table(table, spec.sensitive, hierarchies)
    given = parse_marginals(spec.marginals)
    for m in given:
        space.check(m)
    marginals: list[Marginal] = []
    roles: dict[str, str] = {}
    if spec.base is not None:
        if spec.base.strip().lower() == "incognito":
            progress("base table: Incognito's minimal l-diverse, k-anonymous generalizations", 0, 0)
            marginals.append(best_table(table, space, req, hierarchies))
        else:
            marginals.append(Marginal.parse(spec.base))
        roles["M1"] = "base"
    marginals += given
    covered = {a for m in marginals for a in m.attributes}
    missing = [a for a in table.names if a not in covered]
    if missing:
        raise ConfigError(
            f"Column(s) {', '.join(map(repr, missing))} are in no marginal; publish them in one (at any "
            "level) or leave them out of the input with --column."
        )
    coll = Collection(space, tuple(marginals))
    progress("checking k-link, k-combinatorial anonymity and maxent diversity", 0, 0)
    verdict = coll.check(req)
    if not verdict.ok:
        raise _refuse(coll, verdict, "The marginals")
    steps = None
    if spec.inject:
        start = len(coll.marginals)
        coll, steps = search(coll, req, spec.inject, spec.search, progress)
        verdict = coll.check(req)
        roles.update({coll.names[i]: "injected" for i in range(start, len(coll.marginals))})
    return Job(coll, req, verdict, roles, steps)


def reopen(table: EncodedTable, section: Mapping[str, Any], hierarchies: Mapping[str, Hierarchy]) -> Job:
    """A released collection (its manifest's ``marginals`` section) over its original table."""
    try:
        req = Requirement.build(str(section["sensitive"]), int(section["k"]), dict(section["diversity"]))
        tables = list(section["tables"])
        names = tuple(str(t["name"]) for t in tables)
        marginals = tuple(Marginal(tuple(t["levels"]), tuple(t["levels"].values())) for t in tables)
        roles = {str(t["name"]): str(t.get("role", "given")) for t in tables}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(
            f"The release's marginals section is malformed ({exc}); it is not a versapub collection."
        ) from None
    space = Space.of_table(table, req.sensitive, hierarchies)
    coll = Collection(space, marginals, names)
    verdict = coll.check(req)
    if not verdict.ok:
        raise _refuse(coll, verdict, "The released marginals")
    return Job(coll, req, verdict, roles)
