"""KL-divergence of the release a schema would give (GD's add-back scorer, in the
release-model layer): incremental over candidate schemas."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.kinds.build import factor_of
from versapub.model.factors import Factor
from versapub.model.maxent import ReleaseModel
from versapub.model.utility import kl_divergence
from versapub.schema.model import Schema, SubTable


class KLScorer:
    """KL-divergence of the release a schema would give, for GD's add-back.

    Incremental: each distinct sub-table is anonymized once, and each factor's
    probabilities of the original's distinct records (over its attributes and over any
    separator) are computed once and reused by every candidate schema containing it.
    """

    def __init__(self, table: EncodedTable, anonymize: Callable[[SubTable], AnonymizedTable]) -> None:
        self.table, self.anonymize = table, anonymize
        attrs = list(table.names)
        grouping = group_rows([table.codes(a) for a in attrs], [table.cardinality(a) for a in attrs])
        self.records = {a: grouping.keys[i].astype(np.int64) for i, a in enumerate(attrs)}
        self.p = grouping.counts / grouping.counts.sum()
        self.domains = {c.name: c.values for c in table.columns}
        self.cards = {a: len(v) for a, v in self.domains.items()}
        self._factors: dict[SubTable, Factor] = {}
        self._probs: dict[tuple[SubTable, tuple[str, ...]], npt.NDArray[np.float64]] = {}

    def factor(self, sub: SubTable) -> Factor:
        key = SubTable("_", sub.attributes, sub.enforces)
        if key not in self._factors:
            self._factors[key] = factor_of(self.anonymize(sub), self.table.n_rows, self.cards)
        return self._factors[key]

    def _prob(self, sub: SubTable, attrs: tuple[str, ...]) -> npt.NDArray[np.float64]:
        key = (SubTable("_", sub.attributes, sub.enforces), attrs)
        if key not in self._probs:
            self._probs[key] = self.factor(sub).prob(attrs, self.records)
        return self._probs[key]

    def score(self, schema: Schema) -> float:
        factors = [self.factor(t) for t in schema.tables]
        model = ReleaseModel(factors, self.domains, self.table.n_rows, consistent=True)
        if model.tree is None:
            return kl_divergence(model, self.table).value
        q = np.ones(len(self.p))
        for c in model.tree.order:
            t = schema.tables[c]
            q *= self._prob(t, factors[c].attrs)
            sep = model.tree.sep.get(c, ())
            if sep:
                den = self._prob(t, sep)
                q = np.divide(q, den, out=np.zeros_like(q), where=den > 0)
        q /= model.z
        if (q <= 0).any():
            return math.inf
        return max(float(np.sum(self.p * (np.log(self.p) - np.log(q)))), 0.0)
