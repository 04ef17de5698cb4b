"""The verifier's own reading of each table kind, from ``docs/release-format.md`` (issue 46):
which files a table entry names and their columns, which attributes it publishes apart,
its groups and cells, and the adversary's view of its rows — written here again, so that
``check`` loads nothing of :mod:`versapub.kinds` (whose classes build releases and load the
anonymizers and the guarantees).  A new table kind is a module of :mod:`versapub.kinds`, its
registration, and its entry in the verifier's kind table with one :class:`Reading` from here
(:func:`versapub.verify.reading.kind_checks.reading` finds it; ``tests/test_conformance.py`` asks for
both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from versapub.errors import ReleaseError


@dataclass(frozen=True)
class CountRows:
    """Distinct rows over ``columns`` (values as text) with their counts: what an adversary reads."""

    source: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class Entry:
    """A manifest table entry with the keys every kind has (``raw``: the whole entry)."""

    name: str
    attributes: tuple[str, ...]
    kind: str
    files: dict[str, str]
    raw: dict[str, Any]


def parse_entry(entry: object, where: str = "manifest.json") -> Entry:
    """``entry`` read as a table entry; a malformed one is a :class:`ReleaseError`."""
    if not isinstance(entry, dict):
        raise ReleaseError(f"A table entry of {where} is not an object: {entry!r}.")
    try:
        name, attrs, kind, files = entry["name"], entry["attributes"], entry["kind"], entry["files"]
    except KeyError as exc:
        raise ReleaseError(f"A table entry of {where} lacks {exc.args[0]!r} (name/attributes/kind/files).") from None
    if not isinstance(attrs, list) or not isinstance(files, dict):
        raise ReleaseError(f"Table {name!r} of {where}: 'attributes' must be a list and 'files' an object.")
    return Entry(
        str(name), tuple(str(a) for a in attrs), str(kind), {str(k): str(v) for k, v in files.items()}, dict(entry)
    )


def group_column(table: str) -> str:
    """The latent group column of a bucketized table in the adversary's view."""
    return f"⟨group of {table}⟩"


@dataclass(frozen=True)
class View:
    """A table as the adversary sees it: count tables over named columns (a latent group
    column shared by two of them hides which rows go together), the attributes published
    apart, and records whose sensitive values are withheld (QI columns, their rows, each
    sensitive domain)."""

    tables: tuple[CountRows, ...]
    sensitive: tuple[str, ...] = ()
    withheld_records: int = 0
    suppressed: tuple[tuple[str, ...], tuple[tuple[str, ...], ...], dict[str, frozenset[str]]] | None = None


@dataclass(frozen=True)
class Reading:
    """One kind as the format describes it.  ``exact_values``: every published value is an
    input value; ``sensitive_of``: the attributes published apart; ``roles``: file role ->
    its columns; ``groups``: the role and columns naming a group whose sensitive counts bound
    every posterior (None: no such groups); ``cells``: the role and columns of the exactly
    published non-sensitive values; ``view``: the adversary's count tables (None: attacked by
    the kind's own attack)."""

    exact_values: bool
    sensitive_of: Callable[[Entry], tuple[str, ...]]
    roles: Callable[[Entry], dict[str, list[str]]]
    groups: Callable[[Entry], tuple[str, list[str]] | None]
    cells: Callable[[Entry], tuple[str, list[str]]]
    view: Callable[[Entry, Mapping[str, CountRows]], View] | None = None
    generalized_sensitive: Callable[[Entry], tuple[str, ...]] = lambda e: ()
    #: Its counts count records (False: noisy or expected counts of a differentially private
    #: release, where a cell of one is noise or a model's expectation, not a person to find).
    records: bool = True


def _enforced(entry: Entry, what: str) -> tuple[str, ...]:
    """The sensitive attributes of the rules a bucketized table enforces (each held, once)."""
    rules = [entry.raw.get("enforces") or {}, *(entry.raw.get("also_enforces") or [])]
    s = [r.get("rhs") if isinstance(r, dict) else None for r in rules]
    if any(not isinstance(a, str) or a not in entry.attributes for a in s) or len(set(s)) != len(s):
        raise ReleaseError(f"{what} table {entry.name!r} must enforce rules whose sensitive attributes it holds.")
    return tuple(str(a) for a in s)


def _others(entry: Entry, s: tuple[str, ...]) -> list[str]:
    return [a for a in entry.attributes if a not in s]


# -- plain ----------------------------------------------------------------------------------
PLAIN = Reading(
    exact_values=True,
    sensitive_of=lambda e: (),
    roles=lambda e: {"data": [*e.attributes, "count"]},
    groups=lambda e: None,
    cells=lambda e: ("data", list(e.attributes)),
    view=lambda e, parts: View((parts["data"],)),
)


# -- anatomy --------------------------------------------------------------------------------
def _anatomy_sensitive(e: Entry) -> tuple[str, ...]:
    return _enforced(e, "Anatomy")


def _suppressed_group(e: Entry) -> int | None:
    sup = e.raw.get("suppressed_group")
    if sup is not None and (isinstance(sup, bool) or not isinstance(sup, int)):
        raise ReleaseError(f"Table {e.name!r}: suppressed_group must be an integer group id or null, got {sup!r}.")
    return sup


def _anatomy_view(e: Entry, parts: Mapping[str, CountRows]) -> View:
    """QIT and ST joined only through the latent group column; a suppressed group's records
    (any sensitive values) withheld from the attack's counting, their QI rows kept apart."""
    s = _anatomy_sensitive(e)
    qi = tuple(_others(e, s))
    g = group_column(e.name)
    qit, st = parts["qit"], parts["st"]
    sup = _suppressed_group(e)
    withheld, suppressed = 0, None
    if sup is not None:
        keep = [i for i, r in enumerate(qit.rows) if r[-1] != str(sup)]
        withheld = sum(qit.counts) - sum(qit.counts[i] for i in keep)
        declared = e.raw.get("domains") or {}
        doms = {
            a: frozenset(str(v) for v in declared.get(a, [])) | {r[1 + j] for r in st.rows} for j, a in enumerate(s)
        }
        kept = set(keep)
        suppressed = (qi, tuple(r[:-1] for i, r in enumerate(qit.rows) if i not in kept), doms)
        qit = CountRows(qit.source, qit.columns, tuple(qit.rows[i] for i in keep), tuple(qit.counts[i] for i in keep))
    tables = (CountRows(qit.source, (*qi, g), qit.rows, qit.counts), CountRows(st.source, (g, *s), st.rows, st.counts))
    return View(tables, s, withheld, suppressed)


ANATOMY = Reading(
    exact_values=True,
    sensitive_of=_anatomy_sensitive,
    roles=lambda e: {
        "qit": [*_others(e, _anatomy_sensitive(e)), "group_id", "count"],
        "st": ["group_id", *_anatomy_sensitive(e), "count"],
    },
    groups=lambda e: ("st", ["group_id"]),
    cells=lambda e: ("qit", _others(e, _anatomy_sensitive(e))),
    view=_anatomy_view,
)


# -- sa-groups (the MSA decomposition) ------------------------------------------------------
def _sa_sensitive(e: Entry) -> tuple[str, ...]:
    return _enforced(e, "sa-groups")


def _sa_view(e: Entry, parts: Mapping[str, CountRows]) -> View:
    """The QIT with its latent group column, and T^S as it is (the group sets are not
    counts: the kind's own attack reads them)."""
    s = _sa_sensitive(e)
    qit = parts["qit"]
    return View((CountRows(qit.source, (*_others(e, s), group_column(e.name)), qit.rows, qit.counts), parts["ts"]), s)


SA_GROUPS = Reading(
    exact_values=True,
    sensitive_of=_sa_sensitive,
    roles=lambda e: {"qit": [*_others(e, _sa_sensitive(e)), "group_id", "count"], "ts": [*_sa_sensitive(e), "count"]},
    groups=lambda e: None,  # a group's sensitive values are a set, not counts
    cells=lambda e: ("qit", _others(e, _sa_sensitive(e))),
    view=_sa_view,
)


# -- generalized ----------------------------------------------------------------------------
def _generalized_sensitive(e: Entry) -> tuple[str, ...]:
    """The enforced rule's sensitive attribute; the ``sensitive`` a collection's marginal
    names when it enforces no rule; none for a table protecting identities only."""
    rule = e.raw.get("enforces")
    if rule is None:
        held = e.raw.get("sensitive")
        if held is None:
            return ()
        if not isinstance(held, str) or held not in e.attributes:
            raise ReleaseError(f"Generalized table {e.name!r} names a sensitive attribute {held!r} it does not hold.")
        return (held,)
    s = rule.get("rhs") if isinstance(rule, dict) else None
    if not isinstance(s, str) or s not in e.attributes:
        raise ReleaseError(f"Generalized table {e.name!r} must enforce a rule whose sensitive attribute it holds.")
    return (s,)


def _classes(e: Entry) -> tuple[str, list[str]]:
    """The equivalence classes: the non-sensitive columns but those kept exactly beside them."""
    kept = set(e.raw.get("kept") or ())
    return "data", [a for a in _others(e, _generalized_sensitive(e)) if a not in kept]


GENERALIZED = Reading(
    exact_values=False,
    sensitive_of=_generalized_sensitive,
    roles=lambda e: {"data": [*e.attributes, "count"]},
    groups=_classes,
    cells=lambda e: ("data", _others(e, _generalized_sensitive(e))),
    generalized_sensitive=lambda e: tuple(
        a for a in _generalized_sensitive(e) if a in set(e.raw.get("generalized") or ())
    ),
)


def sensitive_runs(
    directory: Path, entry: Entry, kind: Reading, q: Callable[[Path], str]
) -> dict[str, tuple[str, str]]:
    """Per sensitive attribute whose published values are generalized (the manifest lists it
    among ``generalized``), two DuckDB queries: each published value with the run ``f .. l``
    of leaf positions it covers, and the leaves by position (from the ``labels`` and
    ``order`` listings; ``q`` turns a file into a relation)."""
    s = kind.generalized_sensitive(entry)
    if not s:
        return {}
    lit = "'" + s[0].replace("'", "''") + "'"
    labels, order = (q(directory / entry.files[r]) for r in ("labels", "order"))
    leaves = f"SELECT CAST(position AS BIGINT) position, leaf FROM {order} WHERE attribute = {lit}"
    runs = (
        f"SELECT value pv, CAST(first AS BIGINT) f, CAST(last AS BIGINT) l FROM {labels} WHERE "
        f"attribute = {lit} UNION ALL SELECT leaf, position, position FROM ({leaves}) WHERE leaf NOT IN "
        f"(SELECT value FROM {labels} WHERE attribute = {lit})"
    )
    return {s[0]: (runs, leaves)}
