"""Proxies of a protected attribute: unprotected columns that reveal it.

A rule ``Q -> S`` bounds what the release says about ``S`` to someone who knows ``Q``.  A
column ``C`` that no rule protects and that the release publishes *exactly* where that
person can read it (a table reachable from ``Q``, see :func:`reached`) can carry ``S``
itself: a copy of a diagnosis, a recoding of it (code and description), its chapter.
Anatomy then hides which of a group's diagnoses is a record's while ``C`` says it, and no
check of the release can see it — the release model does not know that ``C`` and ``S`` are
two names for one fact.  So before a release is written, each such pair is measured on the
input (``docs/choices.md`` item 124):

* **derived** — Goodman & Kruskal's lambda of ``C`` given ``S``: the share of the errors of
  always guessing ``C``'s most frequent value that knowing a record's ``S`` removes.  1 when
  ``C`` is a function of ``S``: a copy, a recoding or a coarsening (a chapter);
* **determines** — lambda of ``S`` given ``C``: 1 when ``S`` is a function of ``C`` (a copy,
  or a finer code than ``S``).

A value seen in fewer than ``MIN_SUPPORT`` records reveals nothing in either measure (its
records are guessed the most frequent value): an association a few records show is chance
the adversary could not know, and this keeps nearly unique columns from scoring 1.  A pair
whose larger measure reaches ``STRONG`` is a **proxy**: publishing it is refused unless the
steward protects ``C`` (a rule), drops it, or allows it by name (``allow_proxy``, recorded in
the manifest).  A pair reaching ``LISTED`` is an **association**, listed in the report.  The
thresholds, and the false-positive rate on every real dataset of the repository, come from
``benchmarks/proxies.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.source import Source
from versapub.privacy.rules import Rule

#: Records a value needs before it can reveal anything.
MIN_SUPPORT = 3
#: A proxy: knowing one column removes at least this share of the errors guessing the other.
STRONG = 0.85
#: An association worth listing in the report.
LISTED = 0.3

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Association:
    """How much the unprotected ``column`` reveals the protected right-hand side of ``rule``
    (module docstring), measured on the input; ``tables``: where the release publishes the
    column exactly within reach of the rule's left-hand side."""

    rule: Rule
    column: str
    derived: float
    determines: float
    tables: tuple[str, ...] = ()
    #: The steward allowed this column to be published anyway (``allow_proxy``).
    allowed: bool = False

    def __post_init__(self) -> None:
        for name in ("derived", "determines"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")

    @property
    def sensitive(self) -> str:
        return self.rule.rhs

    @property
    def strength(self) -> float:
        return max(self.derived, self.determines)

    @property
    def strong(self) -> bool:
        return self.strength >= STRONG

    @property
    def listed(self) -> bool:
        return self.strength >= LISTED

    def describe(self) -> str:
        """One sentence: the two measures in words, and where the column is published."""
        where = f", published exactly in {', '.join(self.tables)}" if self.tables else ""
        c, s = self.column, self.sensitive
        if min(self.derived, self.determines) >= 0.99:
            kind = " — a copy or recoding of it"
        elif self.derived >= 0.99:
            kind = f" — a coarsening of it ({c!r} is a function of {s!r})"
        elif self.determines >= 0.99:
            kind = f" — {s!r} is a function of it"
        else:
            kind = ""
        return (
            f"{c!r} reveals {s!r} (rule '{self.rule}'{where}){kind}: knowing {s!r} removes {self.derived:.0%} of "
            f"the errors in guessing {c!r}, knowing {c!r} removes {self.determines:.0%} of the errors in guessing "
            f"{s!r} (Goodman-Kruskal lambda on the input)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.to_json(),
            "column": self.column,
            "sensitive": self.sensitive,
            "derived": round(self.derived, 4),
            "determines": round(self.determines, 4),
            "strong": self.strong,
            "allowed": self.allowed,
            "tables": list(self.tables),
        }


def _lambda(given: Ints, target: Ints, w: Floats) -> float:
    """Goodman & Kruskal's lambda of ``target`` given ``given`` over weighted code pairs: the
    share of the errors of always guessing ``target``'s most frequent value that knowing
    ``given`` removes.  A ``given`` value with fewer than ``MIN_SUPPORT`` records reveals
    nothing (its records are guessed the most frequent value); 0 when ``target`` has one
    value."""
    t_inv = _dense(target)
    t_tot = np.bincount(t_inv, weights=w)
    total, mode = float(w.sum()), int(np.argmax(t_tot))
    modal = float(t_tot[mode])
    if total <= modal:
        return 0.0
    g_inv = _dense(given)
    n_ids = int(g_inv.max()) + 1
    best = np.zeros(n_ids)
    np.maximum.at(best, g_inv, w)
    at_mode = np.bincount(g_inv, weights=np.where(t_inv == mode, w, 0.0), minlength=n_ids)
    supported = np.bincount(g_inv, weights=w, minlength=n_ids) >= MIN_SUPPORT
    right = float(np.where(supported, best, at_mode).sum())
    return min(1.0, max(0.0, (right - modal) / (total - modal)))


def _dense(codes: Ints) -> Ints:
    """Codes renumbered ``0 .. k-1`` keeping their order (dictionary codes are already small
    non-negative integers: a lookup table instead of a sort)."""
    if len(codes) and codes.min() >= 0 and int(codes.max()) < 4 * len(codes) + 1024:
        used = np.zeros(int(codes.max()) + 1, dtype=bool)
        used[codes] = True
        return np.asarray((np.cumsum(used) - 1)[codes], dtype=np.int64)
    return np.unique(codes, return_inverse=True)[1].ravel().astype(np.int64)


def measure(c: Ints, s: Ints, n: Ints) -> tuple[float, float]:
    """(derived, determines) of the joint counts ``n`` over the distinct code pairs
    ``(c, s)`` of an unprotected column and a protected one (module docstring)."""
    if not len(n):
        return 0.0, 0.0
    c, s, w = np.asarray(c, np.int64), np.asarray(s, np.int64), np.asarray(n, np.float64)
    return _lambda(s, c, w), _lambda(c, s, w)


def reached(tables: Sequence[tuple[str, Sequence[str]]], known: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Per column, the tables where someone who knows the columns ``known`` of a person reads
    the column exactly (``tables``: each table's name and the columns it publishes exactly
    beside its guarantee, ``TableKind.unguarded``).  A table is read when it publishes one of
    the known columns exactly (the rows to look at); its exact columns are then known too,
    and the search goes on from them (a chain of links across tables)."""
    knows = set(known)
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, exact in tables:
            if name in seen or not knows & set(exact):
                continue
            seen.add(name)
            grew = True
            for col in exact:
                out.setdefault(col, []).append(name)
                knows.add(col)
    return {c: tuple(t) for c, t in out.items()}


def screen(
    table: Source,
    rules: Sequence[Rule],
    tables: Sequence[tuple[str, Sequence[str]]],
    ignore: Iterable[str] = (),
    truth: Source | None = None,
) -> list[Association]:
    """Every pair (rule ``Q -> S``, unprotected column ``C``) where the release publishes
    ``C`` exactly within reach of ``Q`` (:func:`reached`), measured on ``table`` — all pairs
    counted in one pass over the records.  ``C`` ranges over the columns that are no rule's
    right-hand side and not in the rule's own left-hand side (the adversary of ``Q -> S``
    knows ``Q``: reading it in the release tells nothing new, whatever it says about ``S``
    in the data), except ``ignore``.  ``truth``: the input before its treatments — each
    ``S`` is measured as it was read (a copy of the original beside a PRAM'd ``S`` is a proxy
    whatever the draw: issue 64)."""
    protected = {r.rhs for r in rules} | set(ignore)
    if truth is not None and truth is not table and truth.in_memory and table.in_memory:
        for s in dict.fromkeys(r.rhs for r in rules):
            if s in truth.names:
                table = table.replace(truth.column(s))  # type: ignore[attr-defined]
    wanted: dict[tuple[Rule, str], tuple[str, ...]] = {}
    for r in rules:
        for col, where in reached(tables, r.lhs).items():
            if col not in protected and col not in r.lhs:
                wanted[(r, col)] = where
    pairs = list(dict.fromkeys((col, r.rhs) for r, col in wanted))
    measured = dict(zip(pairs, (measure(*p) for p in table.pair_counts(pairs)), strict=True))
    return [Association(r, col, *measured[(col, r.rhs)], where) for (r, col), where in wanted.items()]


def proxy_error(strong: Sequence[Association]) -> str:
    """The one paragraph refusing ``strong`` proxies: each named with its measures and
    tables, and the ways out."""
    cols = list(dict.fromkeys(a.column for a in strong))
    first = strong[0]
    return (
        f"Refused: {len(cols)} column(s) that no rule protects would reveal a protected attribute, published "
        f"exactly where anyone who knows a rule's left-hand side reads them: "
        + "; ".join(a.describe() for a in strong)
        + f". A proxy at {STRONG:.0%} or more is refused (docs/choices.md item 124). For each column: protect it "
        f"with a rule (e.g. '{', '.join(first.rule.lhs)} -> {first.column}'), drop it (--identifying "
        f"{first.column}), or, when publishing it beside the rule's attributes is intended, allow it with "
        f"--allow-proxy {first.column} ([columns] allow_proxy; recorded in the manifest). Nothing was written."
    )
