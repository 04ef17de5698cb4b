"""Treatments (issue 48): perturbative methods a statistical office applies to named
columns *before* the job's anonymization — sdcMicro's and mu-Argus's top and bottom coding,
rounding, microaggregation, noise, PRAM and swapping.

A treatment is a registered plug-in (:mod:`versapub.treatments`): parameters only in its
``__init__``, checked by the one plug-in builder, and :meth:`Treatment.apply`, which returns
the treated table and the record the manifest keeps (``treatments``,
``docs/release-format.md``).  A treatment whose effect is a function of each value (top and
bottom coding, rounding) records all the verifier needs to apply it to the original itself;
one that draws at random (noise, PRAM, swapping) draws from the
generator the job hands it — fresh operating-system entropy, never recorded, unless the job
gives a seed (a reproducible test: the manifest then says the draws were seeded, and the
summary warns that anyone with the release can redo them; ``publishing/treating.draws_of``)."""

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
    """A registered treatment: ``name``, the ``columns`` it treats, whether it ``draws`` at
    random (then its draws are secret unless a seed was given), its ``params`` and
    :meth:`apply` (``rng``: the generator it draws from)."""

    name: str
    columns: tuple[str, ...]
    draws: bool

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


def record_numbers(table: EncodedTable, column: str, treatment: str) -> tuple[Floats, npt.NDArray[np.bool_]]:
    """Every record's value of ``column`` as a number, and which records miss it."""
    nums, missing = numbers_of(table, column, treatment)
    codes = table.column(column).codes
    return nums[codes], missing[codes]


def no_missing(table: EncodedTable, column: str, missing: npt.NDArray[np.bool_], treatment: str) -> None:
    """Refuse a column with missing values for a treatment that needs every record's number."""
    if missing.any():
        raise InputError(
            f"The {treatment} treatment needs a number in every record, but column {column!r} is missing in "
            f"{int(missing.sum()):,} record(s). Drop or impute them first (--missing drop), or treat other columns."
        )


def decimals(table: EncodedTable, column: str) -> int:
    """The most decimals any value of ``column`` is written with (what a treated value is
    rounded to, so a noisy amount in cents stays in cents)."""
    texts = np.char.strip(table.column(column).values.astype(str))
    parts = np.char.partition(texts, ".")
    plain = np.char.find(texts, "e") < 0  # 1e5 and the like: no decimals of their own
    widths = np.char.str_len(parts[:, 2])[plain & (parts[:, 1] == ".")]
    return int(widths.max()) if len(widths) else 0


def with_numbers(
    table: EncodedTable, column: str, numbers: Floats, missing: npt.NDArray[np.bool_] | None = None
) -> EncodedTable:
    """``table`` with every record's value of ``column`` replaced by ``numbers`` (written
    by :func:`text_of`), records ``missing`` keeping their text."""
    old = table.column(column)
    miss = np.zeros(len(numbers), dtype=bool) if missing is None else missing
    uniq, inverse = np.unique(np.where(miss, 0.0, numbers), return_inverse=True)
    texts = np.concatenate([texts_of(uniq), old.values.astype(str).astype(object)])
    index = np.where(miss, len(uniq) + old.codes, inverse.ravel())
    used, compact = np.unique(index, return_inverse=True)
    words, code_of = np.unique(texts[used].astype(str), return_inverse=True)
    return table.replace(Column(column, code_of.ravel()[compact.ravel()].astype(np.int32), words.astype(object)))


def changed_records(before: EncodedTable, after: EncodedTable, column: str) -> int:
    """Records whose text in ``column`` differs between ``before`` and ``after``."""
    a, b = before.column(column), after.column(column)
    old, new = a.values.astype(str), b.values.astype(str)
    at = np.minimum(np.searchsorted(new, old), max(len(new) - 1, 0))
    same = np.where(new[at] == old, at, -1)  # each old text's code in the new dictionary, -1 if gone
    return int((same[a.codes] != b.codes).sum())
