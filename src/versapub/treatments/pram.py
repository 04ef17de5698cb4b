"""PRAM, the post-randomization method (Gouweleeuw, Kooiman, Willenborg & de Wolf,
"Post randomisation for statistical disclosure control: theory and implementation", Journal
of Official Statistics 14(4), 1998; Hundepool et al., *Statistical Disclosure Control*,
2012, §3.4.6; sdcMicro's ``pram``): each record's value ``i`` of a categorical column is
replaced by ``j`` with probability ``P[i, j]``, a published transition matrix.

* **The matrix** ``P``: ``retention`` on the diagonal, the rest ``(1 - retention) / (K - 1)``
  to each of the column's other ``K - 1`` values (choice 202), or the steward's own (a CSV
  file: a ``from`` column, then one column per value, each row summing to 1).
* **Invariant** PRAM (``invariant=true``): ``R = P Q`` with the backward matrix
  ``Q[j, i] = P[i, j] pi_i / sum_l P[l, j] pi_l`` (``pi``: the values' frequencies), so that
  ``pi R = pi`` — the expected published frequencies are the original ones (Gouweleeuw et
  al. §3).  ``R``'s stationary distribution is ``pi``: publishing ``R`` publishes the
  column's frequencies (which the perturbed column estimates without bias anyway).
* **Strata** (``strata=region``): an invariant matrix per stratum, built on the stratum's
  frequencies, so each stratum's expected frequencies are kept.

The matrices used are published in the manifest (``treatments[].matrices``) so that anyone
can estimate the original frequencies from the published ones: ``T = T* P^-1`` for a
non-invariant ``P`` (Gouweleeuw et al. §2, :func:`corrected`).  The draws come from the job's
generator (secret unless a seed was given) and are never recorded.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.data.table import Column, EncodedTable
from versapub.errors import ConfigError, InputError
from versapub.plugins import Param, validated
from versapub.treatments.base import Floats, Treated, changed_records

TOL = 1e-9


def retention_matrix(k: int, retention: float) -> Floats:
    """``retention`` on the diagonal, the rest spread evenly over the other ``k - 1`` values."""
    if k == 1:
        return np.ones((1, 1))
    p = np.full((k, k), (1 - retention) / (k - 1))
    np.fill_diagonal(p, retention)
    return p


def invariant(p: Floats, pi: Floats) -> Floats:
    """``R = P Q`` with ``Q[j, i] = P[i, j] pi_i / sum_l P[l, j] pi_l`` (``pi R = pi``);
    values of frequency 0 keep ``P``'s rows (they occur in no record of the stratum)."""
    lam = pi @ p
    q = (p * pi[:, None]).T / np.where(lam > 0, lam, 1.0)[:, None]
    r = p @ q
    r[pi <= 0] = p[pi <= 0]
    return r / r.sum(axis=1, keepdims=True)


def corrected(published: Floats, p: Floats) -> Floats:
    """Unbiased estimate of the original frequencies from the published ones, ``T* P^-1``
    (least squares when ``P`` is singular)."""
    return np.asarray(np.linalg.lstsq(p.T, published, rcond=None)[0], dtype=np.float64)


def draw(codes: npt.NDArray[np.integer], matrix: Floats, rng: np.random.Generator) -> npt.NDArray[np.int32]:
    """Each code replaced by a draw from its row of ``matrix`` (one uniform per record,
    located in the row's cumulative distribution)."""
    cdf = np.cumsum(matrix, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random(len(codes))
    out = np.empty(len(codes), dtype=np.int32)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(matrix.shape[0] + 1))
    for i in range(matrix.shape[0]):  # one step per value of the column
        rows = order[bounds[i] : bounds[i + 1]]
        out[rows] = np.searchsorted(cdf[i], u[rows], side="right")
    return np.minimum(out, matrix.shape[0] - 1)


def read_matrix(path: str, values: list[str], column: str) -> Floats:
    """A steward's transition matrix from a CSV file (``from``, then one column per value)."""
    try:
        with Path(path).open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise ConfigError(f"PRAM's matrix file {path!r} cannot be read: {exc.strerror or exc}.") from None
    if not rows or rows[0][:1] != ["from"]:
        raise ConfigError(f"PRAM's matrix file {path!r} must start with a header: from, then one column per value.")
    header = rows[0][1:]
    got = {r[0]: r[1:] for r in rows[1:] if r}
    if sorted(header) != sorted(values) or sorted(got) != sorted(values):
        raise ConfigError(
            f"PRAM's matrix file {path!r} must have one row and one column for each value of {column!r}: "
            f"{', '.join(values)}."
        )
    try:
        m = np.array([[float(got[a][header.index(b)]) for b in values] for a in values])
    except (ValueError, IndexError):
        raise ConfigError(f"PRAM's matrix file {path!r} holds an entry that is not a number.") from None
    if (m < 0).any() or np.abs(m.sum(axis=1) - 1).max() > 1e-6:
        raise ConfigError(f"PRAM's matrix file {path!r}: every entry must be >= 0 and every row must sum to 1.")
    return m / m.sum(axis=1, keepdims=True)


class Pram:
    """PRAM of categorical ``columns`` (module docstring)."""

    name = "pram"
    draws = True
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True),
        "retention": Param("number", low=0, high=1, why="the chance a value is kept"),
        "invariant": Param("flag", why="keep the expected frequencies"),
        "strata": Param("names", optional=True, why="an invariant matrix per stratum"),
        "matrix": Param("text", optional=True, why="a CSV file with the transition matrix"),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "sex", "retention": 0.8}
    glossary: ClassVar[str] = (
        "PRAM: each categorical value changed at random by a published transition matrix (invariant: the "
        "expected frequencies kept)."
    )

    def __init__(
        self,
        columns: tuple[str, ...] | str,
        retention: float = 0.8,
        invariant: bool = False,
        strata: tuple[str, ...] | str | None = None,
        matrix: str | None = None,
    ) -> None:
        got = validated(
            self.name,
            self.parameter_constraints,
            {"columns": columns, "retention": retention, "invariant": invariant, "strata": strata, "matrix": matrix},
        )
        self.columns: tuple[str, ...] = got["columns"]
        self.retention: float = got["retention"]
        self.invariant: bool = got["invariant"]
        self.strata: tuple[str, ...] = got["strata"] or ()
        self.matrix: str | None = got["matrix"]
        if self.matrix is not None and len(self.columns) > 1:
            raise ConfigError("PRAM's matrix file serves one column: give one pram treatment per column.")
        if set(self.strata) & set(self.columns):
            raise ConfigError(
                f"PRAM cannot stratify by a column it perturbs: {sorted(set(self.strata) & set(self.columns))}."
            )

    def params(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "retention": self.retention,
            "invariant": self.invariant,
            "strata": list(self.strata),
            "matrix": self.matrix,
        }

    def _strata(self, table: EncodedTable) -> tuple[npt.NDArray[np.int64], list[dict[str, str]]]:
        """Each record's stratum and each stratum's values (one stratum without ``strata``)."""
        if not self.strata:
            return np.zeros(table.n_rows, dtype=np.int64), [{}]
        for s in self.strata:
            if s not in table.names:
                raise InputError(f"PRAM's strata name column {s!r}, which the input does not have.")
        codes = np.column_stack([table.column(s).codes for s in self.strata])
        uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
        labels = [
            {s: str(table.column(s).values[u[i]]) for i, s in enumerate(self.strata)} for u in uniq
        ]  # one per stratum
        return inverse.ravel().astype(np.int64), labels

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        stratum, labels = self._strata(table)
        out = table
        matrices: list[dict[str, Any]] = []
        for c in self.columns:
            if c not in table.names:
                raise InputError(f"The pram treatment names column {c!r}, which the input does not have.")
            col = table.column(c)
            kept = np.array([i for i, v in enumerate(col.values) if str(v).strip()], dtype=np.int64)
            values = [str(col.values[i]) for i in kept]  # a missing value is kept as it is, never drawn
            category = np.full(len(col.values), -1, dtype=np.int64)
            category[kept] = np.arange(len(kept))
            base = read_matrix(self.matrix, values, c) if self.matrix else retention_matrix(len(values), self.retention)
            new = col.codes.copy()
            present = np.flatnonzero(category[col.codes] >= 0)
            order = present[np.argsort(stratum[present], kind="stable")]  # the records with a value, by stratum
            bounds = np.searchsorted(stratum[order], np.arange(len(labels) + 1))
            for s, label in enumerate(labels):  # one step per stratum
                rows = order[bounds[s] : bounds[s + 1]]
                cats = category[col.codes[rows]]
                pi = np.bincount(cats, minlength=len(values)) / max(len(rows), 1)
                m = invariant(base, pi) if self.invariant else base
                new[rows] = kept[draw(cats, m, rng)]
                if self.invariant or s == 0:
                    matrices.append({"column": c, "stratum": label, "values": values, "matrix": m.round(12).tolist()})
            out = out.replace(Column(c, new, col.values))
        changed = {c: changed_records(table, out, c) for c in self.columns}
        record = {**self.params(), "name": self.name, "matrices": matrices, "changed": changed}
        if not self.invariant:
            for entry in matrices:
                entry["stratum"] = {}
        note = (
            f"PRAM ({'invariant, ' if self.invariant else ''}retention {self.retention:g}"
            + (f", strata {', '.join(self.strata)}" if self.strata else "")
            + ") of "
            + "; ".join(f"{c} ({changed[c]:,} value(s) changed)" for c in self.columns)
            + "; the transition matrices are published in the manifest"
        )
        return Treated(out, record, note)
