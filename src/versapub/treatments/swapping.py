"""Swapping: rank swapping of numeric columns and targeted record swapping of geography.

* ``rank-swapping`` (Moore, "Controlled data-swapping techniques for masking public use
  microdata sets", US Census Bureau, 1996; Hundepool et al., *Statistical Disclosure
  Control*, 2012, §3.4.7; sdcMicro's ``rankSwap``): each column on its own, every record's
  value is exchanged with that of a record whose rank lies within ``p`` % of the records.
  Pairs are drawn at once rather than record by record (choice 203): each record's rank plus
  a uniform draw in ``[0, w)`` (``w = p % of n``) orders the records, consecutive records in
  that order are paired and a pair farther apart than ``w`` ranks is not swapped.  The
  column's values are only permuted: its distribution is kept exactly.
* ``targeted-swapping`` (the method Eurostat harmonised for the 2021 censuses: de Wolf,
  "Targeted record swapping", and sdcMicro's ``recordSwap``): units (households: records
  sharing ``unit``; else each record) are swapped between areas of the ``geography``
  (columns from coarse to fine, constant inside a unit).  A record's risk is ``1 / count``
  of its ``keys``' combination within its area, the highest over the geography's levels; a
  unit is **risky** when a record of it lies in a cell of at most ``threshold`` records.
  Every risky unit is swapped; when they are fewer than ``rate`` of the units, more units
  are drawn with probability proportional to their risk until ``rate`` is reached.  Each is
  swapped — all geography columns exchanged — with a unit of the same profile (``similar``
  columns, by default the unit's size) in another finest area that is not itself selected;
  selected units left without one are paired with each other (same profile, other area); a
  unit for which no partner is found after ten rounds of drawing is left where it is and
  counted.

The draws come from the job's generator (secret unless a seed was given) and are never
recorded.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from versapub.data.table import Column, EncodedTable
from versapub.errors import ConfigError, InputError
from versapub.plugins import Param, validated
from versapub.treatments.base import Treated, changed_records, record_numbers

Ints = npt.NDArray[np.int64]
ROUNDS = 10


def rank_pairs(x: npt.NDArray[np.float64], p: float, rng: np.random.Generator) -> tuple[Ints, Ints]:
    """The pairs of positions of ``x`` whose values rank swapping exchanges."""
    n = len(x)
    width = max(1.0, math.floor(p / 100 * n))
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(x, kind="stable")] = np.arange(n)
    order = np.argsort(rank + rng.uniform(0, width, size=n), kind="stable")
    a, b = order[0 : n - 1 : 2], order[1:n:2]
    near = np.abs(rank[a] - rank[b]) <= width
    return a[near], b[near]


class RankSwapping:
    """Rank swapping of numeric ``columns`` within ``p`` % of ranks (module docstring)."""

    name = "rank-swapping"
    draws = True
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True),
        "p": Param("number", low=0, high=100, low_open=True, why="the largest rank distance, in % of the records"),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "income", "p": 5}
    glossary: ClassVar[str] = "Rank swapping: each value exchanged with one whose rank lies within p % of the records."

    def __init__(self, columns: tuple[str, ...] | str, p: float = 5) -> None:
        got = validated(self.name, self.parameter_constraints, {"columns": columns, "p": p})
        self.columns: tuple[str, ...] = got["columns"]
        self.p: float = got["p"]

    def params(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "p": self.p}

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        out = table
        for c in self.columns:
            x, missing = record_numbers(table, c, self.name)
            present = np.flatnonzero(~missing)
            a, b = rank_pairs(x[present], self.p, rng)
            codes = table.column(c).codes.copy()
            pa, pb = present[a], present[b]
            codes[pa], codes[pb] = table.column(c).codes[pb], table.column(c).codes[pa]
            out = out.replace(Column(c, codes, table.column(c).values))
        changed = {c: changed_records(table, out, c) for c in self.columns}
        record = {**self.params(), "name": self.name, "changed": changed}
        note = f"rank swapping within {self.p:g} % of ranks: " + "; ".join(
            f"{changed[c]:,} value(s) of {c} changed" for c in self.columns
        )
        return Treated(out, record, note)


def _codes(table: EncodedTable, names: tuple[str, ...], what: str) -> Ints:
    """Each record's combination of ``names`` as one integer (0 for no names)."""
    for c in names:
        if c not in table.names:
            raise InputError(f"Targeted swapping's {what} name column {c!r}, which the input does not have.")
    if not names:
        return np.zeros(table.n_rows, dtype=np.int64)
    return combined([table.column(c).codes for c in names], [table.column(c).cardinality for c in names])


def combined(codes: list[npt.NDArray[np.integer]], cards: list[int]) -> Ints:
    """Each record's combination of several coded columns as one dense integer (0 for
    none): mixed-radix keys, made dense whenever the next radix would overflow."""
    key = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
    width = 1
    for c, card in zip(codes, cards, strict=True):
        if width * max(card, 1) >= 2**62:
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
            width = int(key.max()) + 1 if len(key) else 1
        key = key * max(card, 1) + c
        width *= max(card, 1)
    return np.unique(key, return_inverse=True)[1].ravel().astype(np.int64) if len(key) else key


def _ranked(group: Ints, rng: np.random.Generator) -> Ints:
    """Each item's rank inside its group, in a random order."""
    order = np.lexsort((rng.random(len(group)), group))
    first = np.searchsorted(group[order], group[order], side="left")
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = np.arange(len(group)) - first
    return rank


def partners(donors: Ints, free: Ints, profile: Ints, area: Ints, rng: np.random.Generator) -> Ints:
    """Per donor unit, a free unit of the same profile in another area (-1: none found),
    each free unit used once: a few rounds of random matching by rank inside the profile."""
    out = np.full(len(donors), -1, dtype=np.int64)
    free = free.copy()
    big = max(len(donors), len(free)) + 1
    for _ in range(ROUNDS):  # a few rounds, each vectorized over every unit
        todo = np.flatnonzero(out < 0)
        if not len(todo) or not len(free):
            break
        dkey = profile[donors[todo]] * big + _ranked(profile[donors[todo]], rng)
        fkey = profile[free] * big + _ranked(profile[free], rng)
        order = np.argsort(fkey)
        at = np.minimum(np.searchsorted(fkey[order], dkey), len(free) - 1)
        cand = order[at]
        ok = (fkey[cand] == dkey) & (area[free[cand]] != area[donors[todo]])
        out[todo[ok]] = free[cand[ok]]
        free = np.delete(free, cand[ok])
    return out


def among(donors: Ints, profile: Ints, area: Ints, rng: np.random.Generator) -> tuple[Ints, Ints]:
    """Donors left without a partner, paired with each other: in a random order inside
    their profile, consecutive donors of different areas (a few rounds)."""
    left = donors.copy()
    a_out: list[Ints] = []
    b_out: list[Ints] = []
    for _ in range(ROUNDS):  # a few rounds, each vectorized over every unit
        if len(left) < 2:
            break
        order = left[np.lexsort((rng.random(len(left)), profile[left]))]
        a, b = order[0:-1:2], order[1::2]
        ok = (profile[a] == profile[b]) & (area[a] != area[b])
        a_out.append(a[ok])
        b_out.append(b[ok])
        left = np.setdiff1d(left, np.concatenate([a[ok], b[ok]]))
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(a_out) if a_out else empty), (np.concatenate(b_out) if b_out else empty)


class TargetedSwapping:
    """Targeted record swapping of ``geography`` between units (module docstring)."""

    name = "targeted-swapping"
    draws = True
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "columns": Param("names", required=True, why="the geography, coarse to fine"),
        "keys": Param("names", required=True, why="the risk variables"),
        "unit": Param("text", optional=True, why="the column of the unit (household) id"),
        "similar": Param("names", optional=True, why="the profile a partner must share (default: the unit's size)"),
        "rate": Param("number", low=0, high=1, why="the share of units swapped, at least"),
        "threshold": Param("whole", low=1, why="a cell of at most this many records is risky"),
    }
    example: ClassVar[dict[str, Any]] = {"columns": "region;district", "keys": "age;sex", "rate": 0.05}
    glossary: ClassVar[str] = (
        "Targeted record swapping: risky households (small cells of their keys) swapped with similar ones in "
        "other areas, at a given rate (Eurostat's method for the 2021 censuses)."
    )

    def __init__(
        self,
        columns: tuple[str, ...] | str,
        keys: tuple[str, ...] | str,
        unit: str | None = None,
        similar: tuple[str, ...] | str | None = None,
        rate: float = 0.05,
        threshold: int = 3,
    ) -> None:
        got = validated(
            self.name,
            self.parameter_constraints,
            {"columns": columns, "keys": keys, "unit": unit, "similar": similar, "rate": rate, "threshold": threshold},
        )
        self.columns: tuple[str, ...] = got["columns"]
        self.keys: tuple[str, ...] = got["keys"]
        self.unit: str | None = got["unit"]
        self.similar: tuple[str, ...] = got["similar"] or ()
        self.rate: float = got["rate"]
        self.threshold: int = got["threshold"]
        clash = set(self.columns) & ({*self.keys, *self.similar} | ({self.unit} if self.unit else set()))
        if clash:
            raise ConfigError(f"Targeted swapping's geography cannot also be a key, profile or unit: {sorted(clash)}.")

    def params(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "keys": list(self.keys),
            "unit": self.unit,
            "similar": list(self.similar),
            "rate": self.rate,
            "threshold": self.threshold,
        }

    def _units(self, table: EncodedTable) -> tuple[Ints, Ints]:
        """Each record's unit, and each unit's first record."""
        if self.unit is None:
            return np.arange(table.n_rows, dtype=np.int64), np.arange(table.n_rows, dtype=np.int64)
        unit = _codes(table, (self.unit,), "unit")
        _, first = np.unique(unit, return_index=True)
        return unit, first.astype(np.int64)

    def risk(self, table: EncodedTable, unit: Ints, n_units: int) -> npt.NDArray[np.float64]:
        """Each unit's risk: ``1 / count`` of its records' keys within their area, the
        highest over the geography's levels and the unit's records."""
        keys = _codes(table, self.keys, "keys")
        worst = np.zeros(table.n_rows)
        for level in range(1, len(self.columns) + 1):
            area = _codes(table, self.columns[:level], "geography")
            cell = combined([area, keys], [int(area.max()) + 1, int(keys.max()) + 1])
            worst = np.maximum(worst, 1.0 / np.bincount(cell)[cell])
        out = np.zeros(n_units)
        np.maximum.at(out, unit, worst)
        return out

    def apply(self, table: EncodedTable, rng: np.random.Generator) -> Treated:
        unit, first = self._units(table)
        n_units = len(first)
        area_rec = _codes(table, self.columns, "geography")
        area = area_rec[first]
        if self.unit is not None and (area_rec != area[unit]).any():
            bad = int(np.flatnonzero(area_rec != area[unit])[0])
            raise InputError(
                f"Targeted swapping moves whole units, but unit {table.column(self.unit).decode()[bad]!r} of column "
                f"{self.unit!r} has records in more than one area of {', '.join(self.columns)}. Correct the "
                "geography first."
            )
        risk = self.risk(table, unit, n_units)
        risky = risk >= 1.0 / self.threshold - 1e-12
        size = np.bincount(unit, minlength=n_units)
        profile = (
            _codes(table, self.similar, "similar")[first] if self.similar else np.unique(size, return_inverse=True)[1]
        )
        profile = profile.ravel().astype(np.int64)
        selected = risky.copy()
        want = math.ceil(self.rate * n_units)
        extra = want - int(risky.sum())
        if extra > 0:  # more units, drawn with probability proportional to their risk (Efraimidis & Spirakis keys)
            keys = np.log(rng.random(n_units)) / np.maximum(risk, 1e-12)
            keys[risky] = -np.inf
            selected[np.argsort(-keys)[:extra]] = True
        donors = rng.permutation(np.flatnonzero(selected))
        partner = partners(donors, np.flatnonzero(~selected), profile, area, rng)
        ok = partner >= 0
        left_a, left_b = among(donors[~ok], profile, area, rng)  # the rest swap with each other
        one = np.concatenate([donors[ok], left_a])
        two = np.concatenate([partner[ok], left_b])
        moved = area.copy()
        moved[one], moved[two] = area[two], area[one]
        out = table
        geo = np.column_stack([table.column(c).codes for c in self.columns])
        area_geo = np.empty((int(area.max()) + 1, len(self.columns)), dtype=np.int64)
        area_geo[area] = geo[first]
        new_geo = area_geo[moved][unit]  # each record takes the geography of its unit's new area
        for j, c in enumerate(self.columns):
            out = out.replace(Column(c, new_geo[:, j].astype(np.int32), table.column(c).values))
        swapped_units = 2 * len(one)
        unmatched = len(donors) - int(ok.sum()) - 2 * len(left_a)
        swapped_records = int(size[one].sum() + size[two].sum())
        record = {
            **self.params(),
            "name": self.name,
            "units": n_units,
            "risky_units": int(risky.sum()),
            "swapped_units": swapped_units,
            "swapped_records": swapped_records,
            "unmatched_units": unmatched,
            "changed": {c: changed_records(table, out, c) for c in self.columns},
        }
        note = (
            f"targeted swapping of {', '.join(self.columns)}: {swapped_units:,} of {n_units:,} units swapped "
            f"({swapped_records:,} records; {int(risky.sum()):,} risky at a threshold of {self.threshold})"
            + (f"; {unmatched:,} found no partner and were not swapped" if unmatched else "")
        )
        return Treated(out, record, note)
