"""Choosing the plug-ins of a job: the decomposition and anonymizers by name and
parameters, each rule's own anonymizer, what the Dask backend can run, and what a rule's
anonymizer can reach (feasibility judged on it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from versapub.anonymizers import make_anonymizer
from versapub.anonymizers.base import Anonymizer, DefaultDecomposition, SensitiveGeneralizing
from versapub.data.hierarchy import Hierarchy
from versapub.data.source import OutOfCore
from versapub.data.table import EncodedTable
from versapub.decompositions import Decomposition, make_decomposition
from versapub.errors import ConfigError
from versapub.privacy.feasibility import Feasibility, feasibility
from versapub.privacy.guarantees.guarantee import Guarantee
from versapub.privacy.per_rule import RuleItem, anonymizers, effective, effective_anonymizers, split
from versapub.privacy.rules import Rule, reduce_rules, validate_rules
from versapub.privacy.screens.roles import ColumnRoles
from versapub.schema.model import SubTable


def plugins_for(
    decomposition: str | Decomposition | None,
    anonymizer: str | Anonymizer | None,
    decomposition_params: Mapping[str, Any] | None = None,
    anonymizer_params: Mapping[str, Any] | None = None,
    defaults: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
) -> tuple[Decomposition, Anonymizer]:
    """The one place that turns names and parameters (config, command line, Python) into
    plug-in objects.  ``defaults``: per ``("decomposition" | "anonymizer", name)``, the
    parameters that plug-in takes when it is the one chosen (a configuration's ``gd_*`` and
    ``multi_sa_*`` keys), below the explicit parameters.  Without a decomposition, the
    anonymizer's ``default_decomposition`` (if it has one) or ``uad``."""
    preset = {(role, name.strip().lower()): dict(v) for (role, name), v in (defaults or {}).items()}
    if decomposition is None:
        named = make_anonymizer(anonymizer) if isinstance(anonymizer, str) else anonymizer
        decomposition = named.default_decomposition if isinstance(named, DefaultDecomposition) else "uad"
    if isinstance(decomposition, str):
        d_params = {
            **preset.get(("decomposition", decomposition.strip().lower()), {}),
            **dict(decomposition_params or {}),
        }
        dec: Decomposition = make_decomposition(decomposition, **d_params)
    else:
        dec = decomposition
    if anonymizer is None or isinstance(anonymizer, str):
        name = anonymizer or dec.default_anonymizer
        a_params = {**preset.get(("anonymizer", name.strip().lower()), {}), **dict(anonymizer_params or {})}
        anon: Anonymizer = make_anonymizer(name, **a_params)
    else:
        anon = anonymizer
    return dec, anon


def anonymizer_of(rule: Rule, spec: str) -> Anonymizer:
    from versapub.plugins import parse_spec

    name, params = parse_spec(spec, f"the anonymizer of rule '{rule}'")
    return make_anonymizer(name, **params)


def anon_for(sub: SubTable, default: Anonymizer, own: Mapping[Rule, Anonymizer]) -> Anonymizer:
    """The anonymizer of a sub-table: its rule's own (a rule a decomposition derived, e.g.
    GD's guardian of part of a left-hand side, takes the own anonymizer of the kept rule on
    its sensitive attribute when there is exactly one), else the release's."""
    if sub.enforces is None:
        return default
    if sub.enforces in own:
        return own[sub.enforces]
    same = {own[r].name: own[r] for r in own if r.rhs == sub.enforces.rhs}
    return next(iter(same.values())) if len(same) == 1 else default


def require_out_of_core(
    dec: Decomposition,
    anon: Anonymizer,
    rules: Iterable[RuleItem],
    roles: ColumnRoles,
    asked: str | Anonymizer | None = None,
) -> None:
    """A table that is not in memory (the Dask backend) can be published only by plug-ins
    with the :class:`~versapub.data.source.OutOfCore` capability (the UAD decomposition,
    Anatomy, Mondrian, Incognito and plain tables); the classic one-table job (quasi-identifiers
    without a rule) by the anonymizer it runs (``asked``, else Mondrian).  Checked before
    any record is read."""
    rules = list(rules)
    if not split(rules)[0] and roles.quasi_identifying:
        runs = make_anonymizer("mondrian") if asked is None else anon
        if isinstance(runs, OutOfCore) and (why := getattr(runs, "in_memory_only", None)):  # a parameter's doing
            raise ConfigError(f"On the Dask backend {runs.name} cannot run as asked: {why}.")
        if not isinstance(runs, OutOfCore):
            raise ConfigError(
                f"On the Dask backend the quasi-identifiers alone are generalized by mondrian or incognito; "
                f"{runs.name} cannot keep the other columns in the classes' rows there. Use --anonymizer mondrian, "
                "or the in-memory backend."
            )
        return
    if not isinstance(dec, OutOfCore):
        raise ConfigError(
            f"The Dask backend publishes with the uad decomposition; {dec.name} is not available there (gd scores "
            "many candidate schemas by the KL-divergence of their release model, which needs the records in "
            "memory). Use --decomposition uad, or the in-memory backend on this table or a sample of it."
        )
    for a in [anon, *(anonymizer_of(r, spec) for r, spec in anonymizers(rules).items())]:
        if isinstance(a, OutOfCore) and (why := getattr(a, "in_memory_only", None)):  # a parameter's doing
            raise ConfigError(f"On the Dask backend {a.name} cannot run as asked: {why}.")
        if not isinstance(a, OutOfCore):
            raise ConfigError(
                f"The Dask backend anonymizes with {ON_CLUSTER}; {a.name} needs the records in memory "
                f"({getattr(a, 'in_memory_only', 'it reads every record')}). Use one of those, or the in-memory "
                "backend."
            )


#: The anonymizers the Dask backend runs (those with the OutOfCore capability).
ON_CLUSTER = (
    "anatomy (groups from value counts and ranks), mondrian (rounds of cuts from per-partition histograms) or "
    "incognito (its lattice over distinct rows counted on the cluster)"
)


def reach_of(
    table: EncodedTable,
    rules: Iterable[Rule],
    per_rule: Mapping[Rule, Guarantee],
    own: Mapping[Rule, Anonymizer],
    default: Anonymizer,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> dict[Rule, tuple[Any, str]]:
    """For rules whose anonymizer may generalize sensitive values (Sequential Sweep), the
    induced counts it can reach and the note for a refusal: feasibility is judged on them."""
    out = {}
    for r in rules:
        a = own.get(r, default)
        if isinstance(a, SensitiveGeneralizing):
            got = a.sensitive_reach(table, r, per_rule[r], hierarchies)
            out[r] = (got.counts, got.note)
    return out


def rule_feasibility(
    table: EncodedTable,
    rules: Iterable[RuleItem],
    *,
    guarantee: Guarantee,
    decomposition: str | None = None,
    anonymizer: str | None = None,
    decomposition_params: Mapping[str, Any] | None = None,
    anonymizer_params: Mapping[str, Any] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> list[Feasibility]:
    """Feasibility of the rules as :func:`publish` judges it (each rule's guarantee, and what
    its anonymizer can reach), without publishing; ``rules`` as for :func:`publish`."""
    parsed, own = split(rules)
    validate_rules(parsed, table.names)
    reduction = reduce_rules(parsed)
    per_rule = effective(reduction, own, guarantee)
    _, anon = plugins_for(decomposition, anonymizer, decomposition_params, anonymizer_params)
    own_anon = {r: anonymizer_of(r, spec) for r, spec in effective_anonymizers(reduction, anonymizers(rules)).items()}
    return feasibility(
        table, reduction.rules, per_rule, reach_of(table, reduction.rules, per_rule, own_anon, anon, hierarchies)
    )
