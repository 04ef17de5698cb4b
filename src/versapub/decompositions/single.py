"""Single-attribute publishing (§1.3 of Jin et al.): every attribute as its own one-column
count table.  No two attributes are reachable from each other, so every rule holds by
Lemma 1; all correlation between attributes is lost."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from versapub.data.source import Source
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema, SubTable


def single_attribute(table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema:
    """One plain table per attribute."""
    del rules, rng
    return Schema(tuple(SubTable(f"T{i + 1}", (a,)) for i, a in enumerate(table.names)))
