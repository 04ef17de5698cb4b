"""Binding a guarantee to the table it protects: the context it declares in
:meth:`~versapub.privacy.guarantees.base.Guarantee.needs` (the sensitive attribute's value counts,
its taxonomy from a hierarchy), computed once per rule."""

from __future__ import annotations

from collections.abc import Mapping

from versapub.data.hierarchy import Hierarchy
from versapub.data.source import Source
from versapub.errors import RuleError
from versapub.privacy.guarantees.base import Guarantee, GuaranteeContext, Taxonomy
from versapub.privacy.guarantees.population import Population


def taxonomy_of(hierarchy: Hierarchy, table: Source, attribute: str) -> Taxonomy:
    """The hierarchy over the column's codes (every value must be a leaf)."""
    return Taxonomy(hierarchy.node_codes(table.column(attribute)))


def bind(
    guarantee: Guarantee,
    table: Source,
    sensitive: str,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    population: Population | None = None,
) -> Guarantee:
    """``guarantee`` with the context it needs for rules protecting ``sensitive`` in ``table``
    (``population``: the population the records were drawn from, for the guarantees that
    are checked against one; a guarantee already bound to one keeps it)."""
    need = guarantee.needs()
    if not need:
        return guarantee
    h = (hierarchies or {}).get(sensitive)
    bound = guarantee.bind(
        GuaranteeContext(
            sensitive_distribution=table.column(sensitive).counts() if "sensitive_distribution" in need else None,
            taxonomy=taxonomy_of(h, table, sensitive) if h is not None and "taxonomy" in need else None,
            population=population,
        )
    )
    return bound if "population" not in need else require_population(bound)


def with_population(guarantee: Guarantee, population: Population | None) -> Guarantee:
    """``guarantee`` bound to ``population`` when it is checked against one (else as is)."""
    if population is None or "population" not in guarantee.needs():
        return guarantee
    return guarantee.bind(GuaranteeContext(population=population))


def require_population(guarantee: Guarantee) -> Guarantee:
    """``guarantee``, or a one-paragraph error when it is checked against a population and
    none was given."""
    if "population" in guarantee.needs() and guarantee.checked_population() is None:
        raise RuleError(
            f"The guarantee {guarantee.name} is checked against the population the records were drawn from, and none "
            "was given: give it with --population FILE (Python: publish(..., population=...); TOML: [input] population)"
            + (", or give k-map a sampling fraction (k-map:k=10,fraction=0.1)" if guarantee.name == "k-map" else "")
            + "."
        )
    return guarantee
