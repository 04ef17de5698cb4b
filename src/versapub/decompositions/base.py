"""The decomposition extension point: a function from (table, rules) to a schema.

A decomposition returns sub-tables that each enforce at most one rule; the caller
(the API) always passes the result through the GNF checker before anything is
anonymized.  Plain functions satisfy the protocol; register them in
:mod:`versapub.decompositions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from versapub.data.table import EncodedTable
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema


class Decomposition(Protocol):
    """``decompose(table, rules, rng) -> Schema`` (rules irreducible and validated)."""

    def __call__(self, table: EncodedTable, rules: Sequence[Rule], rng: np.random.Generator) -> Schema: ...
