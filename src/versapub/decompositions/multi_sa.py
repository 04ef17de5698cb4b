"""Multi-SA publishing's schema (Appendix B, Algorithm 3, line 1 of Jin et al.).

One table over every attribute.  SA = the attributes on some rule's right-hand side,
QI = the others; the table enforces ``A \\ A_i -> A_i`` for every SA ``A_i`` (which implies
every given rule ``Q -> A_i`` by Theorem 3.1, since ``Q ⊆ A \\ A_i``).  The anonymizer for
such a table is :class:`versapub.anonymizers.bucketizing.multi_sa.MultiSAAnatomy`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from versapub.data.source import Source
from versapub.privacy.rules import Rule
from versapub.schema.model import Schema, SubTable


def multi_sa(table: Source, rules: Sequence[Rule], rng: np.random.Generator) -> Schema:
    """The single multi-SA table (plain when there is no rule)."""
    del rng
    names = table.names
    sens = [a for a in names if any(r.rhs == a for r in rules)]
    if not sens:
        return Schema((SubTable("T1", names),))
    qi = [a for a in names if a not in sens]
    full = [Rule(tuple(a for a in names if a != s), s) for s in sens]
    return Schema((SubTable("T1", (*qi, *sens), full[0], tuple(full[1:])),))
