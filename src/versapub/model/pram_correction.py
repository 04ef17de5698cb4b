"""Estimates corrected for PRAM (Gouweleeuw, Kooiman, Willenborg & de Wolf, "Post
randomisation for statistical disclosure control", JOS 14(4), 1998, §2): a column published
through a transition matrix ``P`` (row ``i``: the chance an input value ``i`` is published as
each value) has expected published frequencies ``T* = T P``, so ``T = T* P^-1`` estimates the
input's without bias.  Applied along the column's axis of the model's joint distribution
over a query's attributes, it corrects every count involving the column (other columns
untouched).  The matrix is the manifest's (``treatments[].matrices``); a stratified
invariant PRAM publishes one per stratum and is not corrected here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

#: A PRAM'd column's correction: the matrix's values (its row and column order) and P.
Correction = tuple[Sequence[str], npt.NDArray[np.float64]]


def corrected_joint(
    attrs: Sequence[str],
    codes: Sequence[npt.NDArray[Any]],
    values: npt.NDArray[np.float64],
    domains: Mapping[str, npt.NDArray[Any]],
    corrections: Mapping[str, Correction],
) -> tuple[list[npt.NDArray[np.int64]], npt.NDArray[np.float64], dict[str, npt.NDArray[Any]]]:
    """The joint distribution over ``attrs`` (``codes`` into ``domains``, probabilities
    ``values``) with each corrected attribute's axis multiplied by ``P^-1``: its codes then
    index the matrix's values (the returned domains)."""
    cur = [np.asarray(c, dtype=np.int64) for c in codes]
    vals = np.asarray(values, dtype=np.float64)
    doms = {a: np.asarray(domains[a], dtype=object) for a in attrs}
    for i, a in enumerate(attrs):
        if a not in corrections:
            continue
        names, p = corrections[a]
        order = {str(v): j for j, v in enumerate(names)}
        to_matrix = np.array([order.get(str(v), -1) for v in doms[a]], dtype=np.int64)
        if (to_matrix[cur[i]] < 0).any():
            continue  # a published value the matrix does not know (recoded): not corrected
        inverse = np.linalg.pinv(p)
        rest = [c for j, c in enumerate(cur) if j != i]
        if rest:
            keys = np.column_stack(rest)
            uniq, row = np.unique(keys, axis=0, return_inverse=True)
        else:
            uniq, row = np.zeros((1, 0), dtype=np.int64), np.zeros(len(vals), dtype=np.int64)
        dense = np.zeros((len(uniq), len(names)))
        np.add.at(dense, (row.ravel(), to_matrix[cur[i]]), vals)
        fixed = dense @ inverse
        r, k = np.nonzero(np.ones_like(fixed, dtype=bool))
        cur = [
            *(uniq[r, j] for j in range(i)),
            k.astype(np.int64),
            *(uniq[r, j] for j in range(i, uniq.shape[1])),
        ]
        vals = fixed[r, k]
        doms[a] = np.asarray(list(names), dtype=object)
    return cur, vals, doms
