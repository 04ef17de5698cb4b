"""Binding a guarantee to the table it protects: the context it declares in
:meth:`~versapub.privacy.base.Guarantee.needs` (the sensitive attribute's value counts,
its taxonomy from a hierarchy), computed once per rule."""

from __future__ import annotations

from collections.abc import Mapping

from versapub.data.hierarchy import Hierarchy
from versapub.data.source import Source
from versapub.privacy.base import Guarantee, GuaranteeContext, Taxonomy


def taxonomy_of(hierarchy: Hierarchy, table: Source, attribute: str) -> Taxonomy:
    """The hierarchy over the column's codes (every value must be a leaf)."""
    return Taxonomy(hierarchy.node_codes(table.column(attribute)))


def bind(
    guarantee: Guarantee, table: Source, sensitive: str, hierarchies: Mapping[str, Hierarchy] | None = None
) -> Guarantee:
    """``guarantee`` with the context it needs for rules protecting ``sensitive`` in ``table``."""
    need = guarantee.needs()
    if not need:
        return guarantee
    h = (hierarchies or {}).get(sensitive)
    return guarantee.bind(
        GuaranteeContext(
            sensitive_distribution=table.column(sensitive).counts() if "sensitive_distribution" in need else None,
            taxonomy=taxonomy_of(h, table, sensitive) if h is not None and "taxonomy" in need else None,
        )
    )
