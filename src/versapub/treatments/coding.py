"""Top and bottom coding and rounding (sdcMicro's ``topBotCoding`` and rounding; Hundepool
et al., *Statistical Disclosure Control*, 2012, §3.4.2): value by value, so the verifier can
apply them to the original itself.

* **Top coding** (``top-coding``): every value above the column's threshold is replaced by
  ``value`` (default: the threshold).  The threshold is given, or the column's ``quantile``
  over its records — the smallest value with at least that share of the records at or
  below it (the empirical distribution's inverse, numpy's ``inverted_cdf``: a value of the
  column), recorded as a number.
* **Bottom coding** (``bottom-coding``): the same below the threshold.
* **Rounding** (``rounding``): every value to the nearest multiple of ``base``, halves up.

Missing values stay missing.  A column holding anything but numbers is refused.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from versapub.data.table import EncodedTable
from versapub.errors import ConfigError
from versapub.plugins import Param, validated
from versapub.treatments.base import Treated, numbers_of, records_changed, replaced, text_of, texts_of


class _Coding:
    """Top or bottom coding (``side``); see the module docstring."""

    name: str
    side: str
    draws = False
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True),
        "threshold": Param("number", optional=True),
        "quantile": Param("number", low=0, high=1, low_open=True, high_open=True, optional=True),
        "value": Param("number", optional=True, why="the replacement; default: the threshold"),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "income", "threshold": 100000}

    def __init__(
        self,
        columns: tuple[str, ...] | str,
        threshold: float | None = None,
        quantile: float | None = None,
        value: float | None = None,
    ) -> None:
        got = validated(
            self.name,
            self.parameter_constraints,
            {"columns": columns, "threshold": threshold, "quantile": quantile, "value": value},
        )
        if (got["threshold"] is None) == (got["quantile"] is None):
            raise ConfigError(
                f"The {self.name} treatment takes a threshold or a quantile (one of them), e.g. "
                f"{self.name}:columns=income,threshold=100000 or {self.name}:columns=income,quantile=0.99."
            )
        self.columns: tuple[str, ...] = got["columns"]
        self.threshold: float | None = got["threshold"]
        self.quantile: float | None = got["quantile"]
        self.value: float | None = got["value"]

    def params(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "threshold": self.threshold,
            "quantile": self.quantile,
            "value": self.value,
        }

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        del rng  # value by value: nothing drawn
        thresholds: dict[str, float] = {}
        replacements: dict[str, float] = {}
        changed: dict[str, int] = {}
        for c in self.columns:
            nums, missing = numbers_of(table, c, self.name)
            t = self.threshold if self.threshold is not None else _quantile(table, c, nums, missing, self.quantile)
            v = self.value if self.value is not None else t
            beyond = ~missing & ((nums > t) if self.side == "top" else (nums < t))
            new = np.where(beyond, text_of(v), table.column(c).values.astype(str)).astype(object)
            changed[c] = records_changed(table, c, beyond)
            table = replaced(table, c, new)
            thresholds[c], replacements[c] = float(t), float(v)
        record = {
            "name": self.name,
            "columns": list(self.columns),
            "threshold": thresholds,
            "replacement": replacements,
            **({"quantile": self.quantile} if self.quantile is not None else {}),
            "changed": changed,
        }
        word = "above" if self.side == "top" else "below"
        note = f"{self.name}: " + "; ".join(
            f"{changed[c]:,} value(s) of {c} {word} {text_of(thresholds[c])} published as {text_of(replacements[c])}"
            for c in self.columns
        )
        return Treated(table, record, note)


def _quantile(table: EncodedTable, column: str, nums: np.ndarray, missing: np.ndarray, q: float | None) -> float:
    """The ``q`` quantile of ``column`` over its records (missing ones left out): the
    smallest value with at least that share of the records at or below it."""
    weights = table.column(column).counts()
    keep = ~missing & (weights > 0)
    values = np.repeat(nums[keep], weights[keep])
    if not len(values):
        raise ConfigError(f"Column {column!r} holds no number to take a quantile of.")
    return float(np.quantile(values, float(q or 0), method="inverted_cdf"))


class TopCoding(_Coding):
    """Top coding: values above the threshold replaced (module docstring)."""

    name = "top-coding"
    side = "top"
    glossary: ClassVar[str] = "Top coding: every value above a threshold (or a quantile) replaced by it."


class BottomCoding(_Coding):
    """Bottom coding: values below the threshold replaced (module docstring)."""

    name = "bottom-coding"
    side = "bottom"
    glossary: ClassVar[str] = "Bottom coding: every value below a threshold (or a quantile) replaced by it."


class Rounding:
    """Rounding to the nearest multiple of ``base``, halves up (module docstring)."""

    name = "rounding"
    draws = False
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True),
        "base": Param("number", low=0, low_open=True, required=True),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "income", "base": 1000}
    glossary: ClassVar[str] = "Rounding: every value to the nearest multiple of a base."

    def __init__(self, columns: tuple[str, ...] | str, base: float) -> None:
        got = validated(self.name, self.parameter_constraints, {"columns": columns, "base": base})
        self.columns: tuple[str, ...] = got["columns"]
        self.base: float = got["base"]

    def params(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "base": self.base}

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        del rng
        changed: dict[str, int] = {}
        for c in self.columns:
            nums, missing = numbers_of(table, c, self.name)
            rounded = np.floor(np.where(missing, 0.0, nums) / self.base + 0.5) * self.base
            old = table.column(c).values.astype(str).astype(object)
            new = np.where(missing, old, texts_of(rounded))
            changed[c] = records_changed(table, c, new != old)
            table = replaced(table, c, new)
        record = {"name": self.name, "columns": list(self.columns), "base": self.base, "changed": changed}
        note = f"rounding to multiples of {text_of(self.base)}: " + "; ".join(
            f"{changed[c]:,} value(s) of {c} changed" for c in self.columns
        )
        return Treated(table, record, note)
