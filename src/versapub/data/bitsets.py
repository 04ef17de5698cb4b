"""Which rows meet every condition, by intersecting bit sets (one bit per row).

A recurring join: for each probe (a record, a cell), the rows of a table (groups, published
rows) that are listed beside *each* of the probe's values — a group whose sets hold every
sensitive value of the record, a generalized row covering every value.  Joining on one
attribute and filtering on the others costs a gather per (probe, row of that attribute);
when a value is listed beside many rows, that is most of the table per probe.  Here each
(attribute, value) holds the set of its rows as bits, 64 rows per word, and a probe ANDs
one bit set per attribute: ``attributes x rows / 64`` word operations per probe, then only
the surviving (probe, row) pairs are listed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Codes = npt.NDArray[np.int64]
Words = npt.NDArray[np.uint64]

#: Words (64 rows each) of one chunk of probes.
CHUNK_WORDS = 1 << 21
#: The bit sets of one call may take at most this many bytes (values x rows / 8 summed over attributes).
MAX_BYTES = 1 << 28


def n_words(n_rows: int) -> int:
    return (n_rows + 63) // 64


def fits(cards: Sequence[int], n_rows: int) -> bool:
    """Whether the bit sets of attributes with ``cards`` values over ``n_rows`` rows stay
    within :data:`MAX_BYTES`."""
    return sum(cards) * n_words(n_rows) * 8 <= MAX_BYTES


def pays(probes: int, n_rows: int, pairs: int) -> bool:
    """Whether intersecting bit sets (``probes x rows / 64`` word operations per attribute)
    beats joining probes with ``pairs`` rows on one attribute (a gather of about four word
    operations per pair and attribute)."""
    return probes * n_words(n_rows) < 4 * pairs


def bitset(values: Codes, rows: Codes, card: int, n_rows: int) -> Words:
    """Per value ``0 .. card-1``: the rows listed beside it in the pairs ``(values[i], rows[i])``."""
    flags = np.zeros((card, n_words(n_rows) * 64), dtype=np.bool_)
    flags[values, rows] = True
    return np.packbits(flags, axis=1, bitorder="little").view(np.uint64)


def matching_pairs(sets: Sequence[Words], probes: Sequence[Codes]) -> tuple[Codes, Codes]:
    """Every ``(probe, row)`` with ``row`` in ``sets[a][probes[a][probe]]`` for every ``a``
    (probe-major, rows ascending within a probe)."""
    n = len(probes[0])
    words = sets[0].shape[1]
    chunk = max(1, CHUNK_WORDS // max(words, 1))
    out_p: list[Codes] = []
    out_r: list[Codes] = []
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        acc = sets[0][probes[0][lo:hi]]
        for bits, codes in zip(sets[1:], probes[1:], strict=True):
            acc &= bits[codes[lo:hi]]
        probe, word = np.nonzero(acc)
        if not len(probe):
            continue
        flags = np.unpackbits(acc[probe, word].view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
        hit, bit = np.nonzero(flags)
        out_p.append(probe[hit].astype(np.int64) + lo)
        out_r.append(word[hit].astype(np.int64) * 64 + bit)
    if not out_p:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(out_p), np.concatenate(out_r)
