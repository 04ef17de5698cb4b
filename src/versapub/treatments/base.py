"""Treatments (issue 48): perturbative methods a statistical office applies to named
columns *before* the job's anonymization — sdcMicro's and mu-Argus's top and bottom coding,
rounding, and (to come) microaggregation, noise, PRAM and swapping.

A treatment is a registered plug-in (:mod:`versapub.treatments`): parameters only in its
``__init__``, checked by the one plug-in builder, and :meth:`Treatment.apply`, which returns
the treated table and the record the manifest keeps (``treatments``,
``docs/release-format.md``).  A treatment whose effect is a function of each value (top and
bottom coding, rounding) records all the verifier needs to apply it to the original itself;
one that draws at random (noise, PRAM, swapping) draws from the job's seeded generator and
never records the draws."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from versapub.data.table import Column, EncodedTable, encode_values
from versapub.errors import InputError

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Treated:
    """A treatment's outcome: the treated ``table``, the manifest's ``record`` of it (its
    name, columns and resolved parameters) and a sentence for the summary and report."""

    table: EncodedTable
    record: dict[str, Any] = field(compare=False)
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.record.get("name"), str) or not self.record.get("columns"):
            raise ValueError("a treatment's record names the treatment and its columns")


@runtime_checkable
class Treatment(Protocol):
    """A registered treatment: ``name``, the ``columns`` it treats, its ``params`` and
    :meth:`apply` (``rng``: the job's seeded generator, for treatments that draw)."""

    name: str
    columns: tuple[str, ...]

    def params(self) -> dict[str, Any]: ...

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated: ...


def numbers_of(table: EncodedTable, column: str, treatment: str) -> tuple[Floats, npt.NDArray[np.bool_]]:
    """Each dictionary value of ``column`` as a number, and which are missing (left as they
    are); a column that holds anything else is refused, naming the value."""
    if column not in table.names:
        raise InputError(
            f"The {treatment} treatment names column {column!r}, which the input does not have; its columns are: "
            f"{', '.join(table.names)}."
        )
    values = table.column(column).values
    texts = values.astype(str)
    missing = np.char.strip(texts) == ""
    try:  # vectorized over the dictionary; the loop below only names the first offending value
        out = np.where(missing, "nan", texts).astype(np.float64)
        if np.isfinite(out[~missing]).all():
            return out, missing
    except ValueError:
        pass
    for v, m in zip(texts, missing, strict=True):
        try:
            ok = m or math.isfinite(float(v))
        except ValueError:
            ok = False
        if not ok:
            raise InputError(
                f"The {treatment} treatment works on numbers, but column {column!r} holds {str(v)!r}. Treat only "
                "numeric columns, or recode that value first."
            )
    raise AssertionError("unreachable: a column that does not parse holds a value that does not")


def texts_of(numbers: Floats) -> npt.NDArray[np.object_]:
    """:func:`text_of` of many numbers, each distinct number formatted once."""
    uniq, inverse = np.unique(numbers, return_inverse=True)
    return np.array([text_of(float(x)) for x in uniq], dtype=object)[inverse.ravel()]


def text_of(x: float) -> str:
    """A number as the release writes it: a whole number without a decimal point, others
    in their shortest form (at most 12 significant digits, so 0.1 + 0.2 reads 0.3)."""
    r = float(f"{x:.12g}")
    return str(int(r)) if r.is_integer() and abs(r) < 1e15 else f"{r:.12g}"


def replaced(table: EncodedTable, column: str, new: Sequence[str] | npt.NDArray[np.object_]) -> EncodedTable:
    """``table`` with each dictionary value of ``column`` replaced by ``new`` (same order)."""
    col = table.column(column)
    mapped = encode_values(column, np.asarray(new, dtype=object))
    return table.replace(Column(column, mapped.codes[col.codes], mapped.values))


def records_changed(table: EncodedTable, column: str, changed: npt.NDArray[np.bool_]) -> int:
    """Records whose value of ``column`` is one of the dictionary values ``changed``."""
    return int(table.column(column).counts()[changed].sum())
