"""Noise addition (Brand, "Microdata protection through noise addition", in *Inference
Control in Statistical Databases*, LNCS 2316, 2002; Hundepool et al., *Statistical
Disclosure Control*, 2012, §3.4.5; sdcMicro's ``addNoise``), with ``magnitude`` in percent:

* ``uncorrelated`` (sdcMicro's ``additive``): each column ``x_j`` gets independent normal
  noise with standard deviation ``magnitude / 100`` times the column's own (``y = x + e``,
  ``e ~ N(0, (a sd_j)^2)``, ``a = magnitude / 100``): means kept in expectation, variances grown
  by ``1 + a^2``, correlations shrunk.
* ``correlated`` (Kim's method, sdcMicro's ``correlated2``): noise with the columns' own
  covariance, ``e ~ N(0, alpha Sigma)`` with ``alpha = (magnitude / 100)^2``, then the linear
  transformation ``y = c (x + e) + (1 - c) mean(x)`` with
  ``c = sqrt((n - 1) / (n (1 + alpha) - 1))`` (Brand §3.3), so the sample means and the
  covariance matrix are kept in expectation and the correlations too.

A noisy value is written with as many decimals as the column's input values have (a noisy
amount in cents stays in cents; choice 201).  Missing values stay missing (``correlated``
needs every record's numbers).  The draws come from the job's generator, secret unless a
seed was given (:func:`versapub.publishing.treating.draws_of`), and are never recorded.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from versapub.data.table import EncodedTable
from versapub.plugins import Param, validated
from versapub.treatments.base import (
    Floats,
    Treated,
    changed_records,
    decimals,
    no_missing,
    record_numbers,
    text_of,
    with_numbers,
)


def uncorrelated(x: Floats, present: np.ndarray, a: float, rng: np.random.Generator) -> Floats:
    """``x`` plus normal noise of standard deviation ``a`` times ``x``'s (over ``present``)."""
    sd = float(x[present].std(ddof=1)) if present.sum() > 1 else 0.0
    return x + rng.normal(0.0, a * sd, size=len(x))


def correlated(z: Floats, a: float, rng: np.random.Generator) -> Floats:
    """Kim's method on the records x columns ``z`` (module docstring)."""
    n = len(z)
    alpha = a * a
    sigma = np.atleast_2d(np.cov(z, rowvar=False))
    e = rng.multivariate_normal(np.zeros(z.shape[1]), alpha * sigma, size=n, method="eigh")
    c = np.sqrt((n - 1) / (n * (1 + alpha) - 1))
    return c * (z + e) + (1 - c) * z.mean(axis=0)


class Noise:
    """Additive noise on ``columns`` (module docstring)."""

    name = "noise"
    draws = True
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True),
        "magnitude": Param(
            "number", low=0, low_open=True, required=True, why="the noise's standard deviation, in % of the column's"
        ),
        "method": Param("choice", choices=("uncorrelated", "correlated")),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "income", "magnitude": 10}
    glossary: ClassVar[str] = (
        "Noise: random normal noise added to numeric columns, scaled to each column's spread (uncorrelated) or "
        "with the columns' covariance (correlated, Kim's method)."
    )

    def __init__(self, columns: tuple[str, ...] | str, magnitude: float, method: str = "uncorrelated") -> None:
        got = validated(
            self.name, self.parameter_constraints, {"columns": columns, "magnitude": magnitude, "method": method}
        )
        self.columns: tuple[str, ...] = got["columns"]
        self.magnitude: float = got["magnitude"]
        self.method: str = got["method"]

    def params(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "magnitude": self.magnitude, "method": self.method}

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        a = self.magnitude / 100
        values = [record_numbers(table, c, self.name) for c in self.columns]
        if self.method == "correlated":
            for c, (_, missing) in zip(self.columns, values, strict=True):
                no_missing(table, c, missing, self.name)
            noisy = correlated(np.column_stack([x for x, _ in values]), a, rng)
            new = [noisy[:, j] for j in range(len(self.columns))]
        else:
            new = [uncorrelated(np.where(m, 0.0, x), ~m, a, rng) for x, m in values]
        out = table
        for c, y, (_, missing) in zip(self.columns, new, values, strict=True):
            places = decimals(table, c)
            out = with_numbers(out, c, np.round(y, places), missing)
        changed = {c: changed_records(table, out, c) for c in self.columns}
        record = {**self.params(), "name": self.name, "changed": changed}
        note = f"{self.method} noise of {text_of(self.magnitude)} % of each column's spread on " + "; ".join(
            f"{c} ({changed[c]:,} value(s) changed)" for c in self.columns
        )
        return Treated(out, record, note)
