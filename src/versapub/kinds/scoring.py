"""KL-divergence of the release a schema would give (GD's add-back scorer, in the
release-model layer): incremental over candidate schemas."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.groupby import group_rows
from versapub.data.table import EncodedTable
from versapub.kinds.build import factor_of
from versapub.model.factors import Factor
from versapub.model.maxent import ReleaseModel, junction_tree, mixed_separator
from versapub.model.utility import kl_divergence
from versapub.schema.model import Schema, SubTable

#: Anonymized candidate sub-tables kept by :class:`KLScorer` (least recently used dropped).
FACTORS_KEPT = 48


class KLScorer:
    """KL-divergence of the release a schema would give, for GD's add-back.

    Incremental: each factor's probabilities of the original's distinct records (over
    its attributes and over any separator) are computed once and reused by every
    candidate schema containing it.  The factors themselves (an anonymized sub-table each,
    megabytes on a wide table) are kept for the ``FACTORS_KEPT`` most recently used
    sub-tables only; one evicted and needed again is anonymized again, identically (its
    generator is derived from the seed and the sub-table).
    """

    def __init__(self, table: EncodedTable, anonymize: Callable[[SubTable], AnonymizedTable]) -> None:
        self.table, self.anonymize = table, anonymize
        attrs = list(table.names)
        grouping = group_rows([table.codes(a) for a in attrs], [table.cardinality(a) for a in attrs])
        self.records = {a: grouping.keys[i].astype(np.int64) for i, a in enumerate(attrs)}
        self.p = grouping.counts / grouping.counts.sum()
        self.domains = {c.name: c.values for c in table.columns}
        self.cards = {a: len(v) for a, v in self.domains.items()}
        self._factors: OrderedDict[SubTable, Factor] = OrderedDict()
        self._lock = threading.Lock()
        self._probs: dict[tuple[SubTable, tuple[str, ...]], npt.NDArray[np.float64]] = {}
        self._shapes: dict[SubTable, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def factor(self, sub: SubTable) -> Factor:
        key = SubTable("_", sub.attributes, sub.enforces)
        with self._lock:
            if key in self._factors:
                self._factors.move_to_end(key)
                return self._factors[key]
        made = factor_of(self.anonymize(sub), self.table.n_rows, self.cards)
        with self._lock:
            self._factors[key] = made
            while len(self._factors) > FACTORS_KEPT:
                self._factors.popitem(last=False)
        return made

    def _prob(self, sub: SubTable, attrs: tuple[str, ...]) -> npt.NDArray[np.float64]:
        key = (SubTable("_", sub.attributes, sub.enforces), attrs)
        if key not in self._probs:
            self._probs[key] = self.factor(sub).prob(attrs, self.records)
        return self._probs[key]

    def score(self, schema: Schema) -> float:
        shapes = [self._shape(t) for t in schema.tables]
        tree = junction_tree([attrs for attrs, _ in shapes])
        if tree is None or mixed_separator(tree, [latent for _, latent in shapes]):
            # the general path (IPF, or a normalizing constant to compute): the whole model
            factors = [self.factor(t) for t in schema.tables]
            model = ReleaseModel(factors, self.domains, self.table.n_rows, consistent=True)
            if model.tree is None:
                return kl_divergence(model, self.table).value
            tree, z = model.tree, model.z
        else:  # tables computed from one table agree on their separators: Z = 1
            z = 1.0
        q = np.ones(len(self.p))
        for c in tree.order:
            t = schema.tables[c]
            q *= self._prob(t, shapes[c][0])
            sep = tree.sep.get(c, ())
            if sep:
                den = self._prob(t, sep)
                q = np.divide(q, den, out=np.zeros_like(q), where=den > 0)
        q /= z
        if (q <= 0).any():
            return math.inf
        return max(float(np.sum(self.p * (np.log(self.p) - np.log(q)))), 0.0)

    def _shape(self, sub: SubTable) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The factor's attributes (in its order) and latent attributes, remembered once
        the sub-table has been anonymized (so a candidate needs no factor to be scored)."""
        key = SubTable("_", sub.attributes, sub.enforces)
        if key not in self._shapes:
            f = self.factor(sub)
            self._shapes[key] = (f.attrs, f.latent)
        return self._shapes[key]
