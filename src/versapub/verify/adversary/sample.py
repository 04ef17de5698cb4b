"""The original the adversary attacks when its records stay on a cluster (issue 67): a seeded
sample of them, drawn on the cluster (``Source.sample_codes``) and held in memory as a table.

The attacks take their targets, their population reference and their singling-out counts from
the sample; every figure is then the sample's, said beside them (``check.json``'s
``adversary.sample``): a singling-out predicate unique in the sample may match others of the
whole file, so singling out is an upper reading, and the inference figures estimate the whole
file's with the sample's intervals."""

from __future__ import annotations

import numpy as np

from versapub.data.source import Source
from versapub.data.table import CODE_DTYPE, Column, EncodedTable

#: Records of a table on a cluster the adversary attacks (every record of a smaller one).
SAMPLE_RECORDS = 200_000
#: The sample's seed (the attacks are a measurement: the same every run).
SAMPLE_SEED = 45
#: What the figures are, in a sentence (``check.json`` and the report).
SAMPLE_NOTE = (
    "the attacks' targets, population reference and singling-out counts are those of a seeded sample of the "
    "input's records drawn on the cluster (singling out within the sample: an upper reading for the whole file)"
)


def sampled_original(original: Source) -> EncodedTable:
    """:data:`SAMPLE_RECORDS` of ``original``'s records (all when it holds fewer), every column."""
    names = list(original.names)
    size = min(SAMPLE_RECORDS, original.n_rows)
    codes = original.sample_codes(names, size, np.random.default_rng(SAMPLE_SEED))
    cols = tuple(
        Column(a, np.ascontiguousarray(codes[a], dtype=CODE_DTYPE), np.asarray(original.column(a).values, dtype=object))
        for a in names
    )
    return EncodedTable(cols, source=f"{original.source} (a sample of {size:,} records)")
