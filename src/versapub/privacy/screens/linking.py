"""Columns that are not near-unique and still identify: a unit id that ties several records of
one person (a panel's person id, a household id) and free text (issue 44).

* **Unit ids** (:func:`unit_ids`).  A panel file has each person on several rows (`zper`:
  four rows each, no value unique), so the uniqueness screen lets it through, yet it links
  every row of a person to the others: whoever finds one of them finds all.  A column is a
  unit id when its values group the records in small groups (``MIN_MEAN``..``MAX_MEAN``
  records per value, at least half of the records in groups of two or more) inside which at
  least ``MIN_CONSTANT`` other columns are nearly constant (``PURITY``: the share of records
  of groups of two or more that hold their group's most frequent value), where a random
  grouping would leave them far from constant (only columns whose most frequent value holds
  at most ``MAX_TOP_SHARE`` of the records are read: in random pairs they agree in at most
  ``(1 + 0.8^2 + 0.2^2) / 2 = 0.84`` of records, well below ``PURITY``) — counting only constant
  columns of few values (fewer than ``1 / RECODING`` of the column's: a job title constant per
  person is itself a near-id of the unit), whose combinations are far fewer than the column's
  values (again ``1 / RECODING``), so that it is not a recoding of them (a diagnosis code with
  its description and chapter).  Above ``SAMPLE_RECORDS`` records, whole groups are sampled
  (every value whose code is a multiple of a step), so a group is never cut.
* **Free text** (:func:`free_text`).  A column of many values (``TEXT_VALUES`` or more, and
  rare ones: at least ``TEXT_RARE`` of the records hold a value no other record has, or it has
  a value per ``1 / TEXT_RARE`` records) most of which are several words (``TEXT_SPACED`` of
  its distinct values hold a space, and ``TEXT_WORDS`` words on average) can hold names,
  addresses or notes; published exactly, each value may single its record out.  A controlled
  vocabulary (a procedure's description: 209 values over 36,631 records) is not free text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from versapub.data.groupby import group_rows
from versapub.data.source import Source

MIN_MEAN = 1.5
MAX_MEAN = 50.0
MIN_VALUES = 20
PURITY = 0.98
MAX_TOP_SHARE = 0.8
MIN_CONSTANT = 2
RECODING = 5
SAMPLE_RECORDS = 200_000
#: At most this many columns are tested as unit ids (the most values first), each against at
#: most this many others (the most even of those with few enough values to count).
MAX_CANDIDATES = 12
MAX_OTHERS = 12

TEXT_VALUES = 100
TEXT_SPACED = 0.5
TEXT_WORDS = 1.5
TEXT_RARE = 0.05
#: Distinct values read to decide (the first, in value order: the dictionary).
TEXT_SAMPLE = 2000


def _codes(table: Source, name: str) -> npt.NDArray[np.int64] | None:
    codes = getattr(table, "codes", None)
    return np.asarray(codes(name), dtype=np.int64) if callable(codes) else None


def _purity(unit: npt.NDArray[np.int64], other: npt.NDArray[np.int64], n_units: int, n_other: int) -> float:
    """Share of the records of groups of two or more (by ``unit``) holding their group's most
    frequent value of ``other``."""
    g = group_rows([unit, other], [n_units, n_other])
    size = np.bincount(unit, minlength=n_units)
    top = np.zeros(n_units, dtype=np.int64)
    np.maximum.at(top, g.keys[0].astype(np.int64), g.counts.astype(np.int64))
    shared = size >= 2
    total = int(size[shared].sum())
    return float(top[shared].sum() / total) if total else 0.0


def unit_ids(table: Source, candidates: Iterable[str]) -> list[tuple[str, tuple[str, ...], float]]:
    """The ``candidates`` that tie several records of one unit together (module docstring):
    each with the columns constant inside its groups and the mean records per value."""
    n = table.n_rows
    if n < 2 * MIN_VALUES:
        return []
    top_share = {c: float(table.column(c).counts().max() / n) for c in table.names if table.cardinality(c) >= 2}
    # the few-valued columns only: many-valued ones never count as constant (issue 64: a wide
    # panel's dozens of spending columns, the most even, crowded out site and sex)
    readable = sorted(
        (c for c, share in top_share.items() if share <= MAX_TOP_SHARE and table.cardinality(c) <= 1000),
        key=lambda c: top_share[c],
    )
    tested = sorted(
        (
            c
            for c in candidates
            if table.cardinality(c) >= MIN_VALUES and MIN_MEAN <= n / table.cardinality(c) <= MAX_MEAN
        ),
        key=lambda c: -table.cardinality(c),
    )[:MAX_CANDIDATES]
    found = []
    for c in tested:
        unit = _codes(table, c)
        if unit is None:
            return []
        card = table.cardinality(c)
        keep = None
        if n > SAMPLE_RECORDS:  # whole groups: every value whose code is a multiple of the step
            step = int(np.ceil(n / SAMPLE_RECORDS))
            keep = unit % step == 0
            unit = unit[keep] // step
            card = (card + step - 1) // step
        sizes = np.bincount(unit, minlength=card)
        if sizes[sizes >= 2].sum() < 0.5 * len(unit):
            continue
        constant = []
        others = [o for o in readable if o != c and table.cardinality(o) * RECODING < table.cardinality(c)]
        for o in others[:MAX_OTHERS]:
            if o == c:
                continue
            codes = _codes(table, o)
            assert codes is not None
            if _purity(unit, codes[keep] if keep is not None else codes, card, table.cardinality(o)) >= PURITY:
                constant.append(o)
        # the constant columns of few values (those of many are themselves near-ids of the unit)
        low = [o for o in constant if table.cardinality(o) * RECODING < table.cardinality(c)]
        if len(low) < MIN_CONSTANT:
            continue
        cols = [_codes(table, o) for o in low]
        joint = group_rows(
            [x[keep] if keep is not None else x for x in cols if x is not None],
            [table.cardinality(o) for o in low],
        )
        if len(joint.counts) * RECODING < card:  # not a recoding of them
            found.append((c, tuple(low), n / table.cardinality(c)))
    return found


def free_text(table: Source, candidates: Iterable[str]) -> list[tuple[str, float]]:
    """The ``candidates`` that read as free text (module docstring), with the share of their
    distinct values that hold a space."""
    out = []
    for c in candidates:
        col = table.column(c)
        if col.cardinality < TEXT_VALUES:
            continue
        counts = col.counts()
        rare = float(counts[counts == 1].sum()) / max(table.n_rows, 1)
        if rare < TEXT_RARE and col.cardinality < TEXT_RARE * table.n_rows:
            continue
        values: Sequence[str] = [str(v) for v in col.values[:TEXT_SAMPLE]]
        words = np.array([len(v.split()) for v in values], dtype=np.float64)
        spaced = float(np.mean(words >= 2)) if len(words) else 0.0
        if spaced >= TEXT_SPACED and float(words.mean()) >= TEXT_WORDS:
            out.append((c, spaced))
    return out
