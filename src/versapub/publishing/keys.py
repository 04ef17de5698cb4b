"""The key variables a floor on published cells counts (``--keys``, issue 65): the columns an
adversary is assumed to know, as sdcMicro's ``keyVars`` and ARX's quasi-identifiers.

Without ``--keys`` every exactly published non-sensitive column is a key (the reading since
issue 47: anyone may know any of them); with it, ``--k``, ``--max-risk``, the identity part
of the verdict, ``risk`` and the previews count the cells of the named keys a table
publishes, and a table publishing none of them is one cell.  A treated column is a key only
when named.  ``suppression_mode`` says what meets the floor beside generalizing: ``remove``
(ARX: records removed, published in no table) or ``cells`` (sdcMicro's local suppression:
key values published empty, an empty value matching any value —
:mod:`versapub.publishing.local_suppression`), with ``importance`` ordering the keys from
the most important (suppressed last)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from versapub.errors import ConfigError, InputError

#: How a floor's suppression treats a short cell's records.
SUPPRESSION_MODES = ("remove", "cells")
#: What the floor counts (``--unit``): records, or households (their structure, issue 68).
UNITS = ("record", "household")


@dataclass(frozen=True)
class KeyVariables:
    """``names``: the key variables (``None``: every exactly published column);
    ``suppression_mode``: ``remove`` or ``cells``; ``importance``: keys, most important
    first (``cells`` only); ``excluded``: without ``names``, the columns a perturbing
    treatment changed (noise, microaggregation, PRAM, swapping), which count only when named."""

    names: tuple[str, ...] | None = None
    suppression_mode: str = "remove"
    importance: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    #: ``record`` or ``household``: what the floor counts (``--unit``; issue 68).
    unit: str = "record"

    def __post_init__(self) -> None:
        if self.names is not None:
            object.__setattr__(self, "names", _names(self.names, "keys"))
            if not self.names:
                raise InputError("keys names the key variables: give at least one column (or leave keys out).")
        object.__setattr__(self, "importance", _names(self.importance, "importance"))
        if self.suppression_mode not in SUPPRESSION_MODES:
            raise InputError(
                f"suppression_mode is one of {', '.join(SUPPRESSION_MODES)} (remove: records in no table; cells: key "
                f"values published empty, sdcMicro's local suppression), got {self.suppression_mode!r}."
            )
        if self.unit not in UNITS:
            raise InputError(f"unit is one of {', '.join(UNITS)} (what the floor counts), got {self.unit!r}.")
        if self.importance and self.suppression_mode != "cells":
            raise ConfigError(
                "--importance orders the key variables for local suppression (which values are suppressed first); "
                "give --suppression-mode cells with it, or leave --importance out."
            )
        if self.names is not None:
            stray = [a for a in self.importance if a not in self.names]
            if stray:
                raise ConfigError(
                    f"--importance names {', '.join(map(repr, stray))}, not among --keys "
                    f"({', '.join(self.names)}): it orders the keys; name only keys."
                )

    def of(self, columns: Iterable[str]) -> list[str]:
        """The keys among ``columns`` (a table's exactly published columns), in their order."""
        cols = list(columns)
        if self.names is None:
            return [a for a in cols if a not in self.excluded]
        return [a for a in cols if a in self.names]

    @property
    def counts_all(self) -> bool:
        """Whether every exactly published column is counted (no --keys, no treated column left out)."""
        return self.names is None and not self.excluded

    def check_columns(self, names: Sequence[str]) -> None:
        """Every key and important column is a column of the input (one paragraph otherwise)."""
        unknown = [a for a in (*(self.names or ()), *self.importance) if a not in names]
        if unknown:
            raise InputError(
                f"--keys/--importance name {', '.join(map(repr, unknown))}, not a column of the input (its columns: "
                f"{', '.join(names[:12])}{' ...' if len(names) > 12 else ''})."
            )

    def reading(self) -> str:
        """The reading of the floor, for the summary and the report."""
        base = (
            "k counted on every exactly published non-sensitive column (no --keys)"
            if self.names is None
            else f"k counted on the key variables {', '.join(self.names)} (--keys)"
        )
        if self.names is None and self.excluded:
            base += (
                f" but the treated {', '.join(self.excluded)} (a perturbed column counts only when named with --keys)"
            )
        if self.suppression_mode == "cells":
            base += "; short cells met by local suppression (a suppressed value is published empty, matching any value)"
        return base

    def to_manifest(self) -> dict[str, object]:
        out: dict[str, object] = {"keys": None if self.names is None else list(self.names)}
        if self.names is None and self.excluded:
            out["keys_excluded"] = list(self.excluded)
        out["suppression_mode"] = self.suppression_mode
        if self.importance:
            out["importance"] = list(self.importance)
        if self.unit != "record":
            out["unit"] = self.unit
        return out


def _names(raw: object, what: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [p for p in raw.split(",")]
    if not isinstance(raw, Iterable):
        raise InputError(f"{what} is a list of column names, got {raw!r}.")
    out = tuple(str(a).strip() for a in raw)
    if any(not a for a in out) or len(set(out)) != len(out):
        raise InputError(f"{what} is a list of distinct column names, got {list(out)!r}.")
    return out


__all__ = ["SUPPRESSION_MODES", "KeyVariables"]
