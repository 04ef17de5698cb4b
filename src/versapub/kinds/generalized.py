"""The ``generalized`` kind: one count table ``attributes..., count`` whose non-sensitive
values may be generalized (a range ``[lo, hi]`` or a hierarchy node), the sensitive
attribute (if any) exact — or generalized up its taxonomy too (Sequential Sweep; the
manifest's ``generalized`` lists it) — and two listings saying which leaves every
generalized value covers: ``order`` numbers each attribute's leaves, ``labels`` gives each generalized value
as a run ``first..last`` of them (``docs/release-format.md``).  Its equivalence classes
are the distinct combinations of the non-sensitive columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from versapub.anonymizers.base import AnonymizedTable, Labels
from versapub.data.counts import CountTable
from versapub.errors import ReleaseError
from versapub.kinds.base import CodesOf, CountRows, Entry, LeafSets, TablePart, View, register
from versapub.model.factors import Factor
from versapub.model.generalized import Cover, GeneralizedFactor
from versapub.privacy.guarantees.guarantee import Guarantee, Histograms

LABELS = ["attribute", "value", "first", "last"]
ORDER = ["attribute", "leaf", "position"]


class Generalized:
    """Generalized count tables (Mondrian, Incognito; the generalized marginals of Kifer &
    Gehrke)."""

    name = "generalized"
    glossary = (
        "A table whose non-sensitive values may be replaced by ranges ([20, 29]) or coarser categories of a "
        "hierarchy, so that records share them; the records sharing all of them form an equivalence class."
    )
    exact_values = False
    counts = "exact"
    in_model = True

    def sensitive_of(self, entry: Entry) -> tuple[str, ...]:
        """The enforced rule's sensitive attribute (published exactly, or generalized); the
        ``sensitive`` the entry names when it enforces no rule (a marginal of a collection,
        protected by the collection's checks); none for a table that protects identities
        only (k-anonymity of its quasi-identifiers, ``enforces`` null)."""
        rule = entry.raw.get("enforces")
        if rule is None:
            held = entry.raw.get("sensitive")  # a collection's marginal: held without a rule
            if held is None:
                return ()
            if not isinstance(held, str) or held not in entry.attributes:
                raise ReleaseError(
                    f"Generalized table {entry.name!r} names a sensitive attribute {held!r} it does not hold."
                )
            return (held,)
        s = rule.get("rhs") if isinstance(rule, dict) else None
        if not isinstance(s, str) or s not in entry.attributes:
            raise ReleaseError(
                f"Generalized table {entry.name!r} must enforce a rule whose sensitive attribute it holds."
            )
        return (s,)

    def roles(self, entry: Entry) -> dict[str, list[str]]:
        return {"data": [*entry.attributes, "count"]}

    def file_names(self, table: str, ext: str) -> dict[str, str]:
        return {"data": f"{table}.{ext}", "labels": f"{table}_labels.{ext}", "order": f"{table}_order.{ext}"}

    def listing_roles(self, entry: Entry) -> dict[str, list[str]]:
        return {"labels": list(LABELS), "order": list(ORDER)}

    def listings(self, table: AnonymizedTable) -> dict[str, list[tuple[str, ...]]]:
        labels: list[tuple[str, ...]] = []
        order: list[tuple[str, ...]] = []
        for a, lab in table.leaves.items():
            labels += [(a, label, str(first), str(last)) for label, (first, last) in lab.spans.items()]
            order += [(a, leaf, str(i)) for i, leaf in enumerate(lab.order)]
        return {"labels": sorted(labels), "order": sorted(order)}  # value (text) order, as every published file

    def leaf_sets(self, entry: Entry, listings: Mapping[str, Sequence[tuple[str, ...]]]) -> LeafSets:
        where = f"table {entry.name!r}"
        orders: dict[str, dict[int, str]] = {}
        for a, leaf, pos in listings.get("order", ()):
            if a not in entry.attributes:
                raise ReleaseError(
                    f"The order listing of {where} names attribute {a!r}, which the table does not hold."
                )
            at = _int(pos, f"the order listing of {where}")
            if at in orders.setdefault(a, {}):
                raise ReleaseError(f"The order listing of {where} gives position {at} of {a!r} twice.")
            orders[a][at] = leaf
        spans: dict[str, dict[str, tuple[int, int]]] = {}
        for a, label, first, last in listings.get("labels", ()):
            if a not in orders:
                raise ReleaseError(f"The labels listing of {where} names {a!r}, whose order is not listed.")
            spans.setdefault(a, {})[label] = (_int(first, where), _int(last, where))
        out: LeafSets = {}
        for a, by_pos in orders.items():
            if sorted(by_pos) != list(range(len(by_pos))):
                raise ReleaseError(f"The order listing of {where} does not number {a!r}'s leaves 0 .. m-1.")
            order = tuple(by_pos[i] for i in range(len(by_pos)))
            leaves = set(order)
            own = spans.get(a, {})
            clash = sorted(x for x in own if x in leaves and own[x] != (order.index(x),) * 2)
            if clash:
                raise ReleaseError(f"In {where}, value(s) {clash[:5]} of {a!r} are both generalized values and leaves.")
            try:
                out[a] = Labels(order, own)
            except ValueError as exc:
                raise ReleaseError(f"The labels listing of {where} for {a!r}: {exc}.") from None
        return out

    def product_parts(self, table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
        """One part, its rows spread over the leaves the table's ``leaves`` list (the
        out-of-core model spreads them: :mod:`versapub.model.outofcore`)."""
        return table.parts["data"], None, None

    def manifest_fields(self, table: AnonymizedTable) -> dict[str, Any]:
        held = {"sensitive": table.sensitive} if table.enforces is None and table.sensitive else {}
        kept = {"kept": list(table.kept)} if table.kept else {}
        own = {"guarantee": dict(table.own_guarantee)} if table.enforces is None and table.own_guarantee else {}
        return {"generalized": sorted(table.leaves), **held, **kept, **own}

    def sensitive_runs(self, directory: Path, entry: Entry) -> dict[str, tuple[str, str]]:
        """The sensitive attribute's published values as runs of its leaf order, when the
        manifest lists it among the generalized attributes (from the two listings)."""
        from versapub.data.sql import duckdb_source  # DuckDB only where it is used

        s = [a for a in self.sensitive_of(entry) if a in set(entry.raw.get("generalized") or ())]
        if not s:
            return {}
        lit = "'" + s[0].replace("'", "''") + "'"
        labels, order = (duckdb_source(directory / entry.files[r]) for r in ("labels", "order"))
        leaves = f"SELECT CAST(position AS BIGINT) position, leaf FROM {order} WHERE attribute = {lit}"
        runs = (
            f"SELECT value pv, CAST(first AS BIGINT) f, CAST(last AS BIGINT) l FROM {labels} WHERE "
            f"attribute = {lit} UNION ALL SELECT leaf, position, position FROM ({leaves}) WHERE leaf NOT IN "
            f"(SELECT value FROM {labels} WHERE attribute = {lit})"
        )
        return {s[0]: (runs, leaves)}

    def validate(self, table: AnonymizedTable) -> None:
        if set(table.parts) != {"data"} or table.also_enforces:
            raise ValueError("a generalized table has one part 'data' and enforces at most one rule")

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        """The equivalence classes: the non-sensitive columns but those kept beside them."""
        kept = set(entry.raw.get("kept") or ())
        return "data", [a for a in self.cells(entry)[1] if a not in kept]

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        s = self.sensitive_of(entry)
        return "data", [a for a in entry.attributes if a not in s]

    def unguarded(self, entry: Entry) -> list[str]:
        """The columns kept exactly beside the classes (the classic job's other columns); the
        classes' own values meet the guarantee."""
        return [str(a) for a in entry.raw.get("kept") or ()]

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        return {}

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        """Each row spread uniformly over the leaves its values cover (Kifer & Gehrke)."""
        part = parts["data"]
        cols: dict[str, np.ndarray] = {}
        covers = {}
        for a in entry.attributes:
            codes = np.asarray(part.columns[a], dtype=np.int64)
            card = cards[a]
            labels = entry.leaf_sets.get(a)
            if labels:
                by_code = {entry.label_codes[a][label]: span for label, span in labels.spans.items()}
                used = np.unique(codes[codes >= card])
                missing = [int(c) for c in used if int(c) not in by_code]
                if missing:
                    raise ReleaseError(f"Table {entry.name!r}: a value of {a!r} is neither a leaf nor a listed label.")
                local = np.searchsorted(used, codes)
                codes = np.where(codes >= card, card + local, codes)
                first = np.array([by_code[int(c)][0] for c in used], dtype=np.int64)
                last = np.array([by_code[int(c)][1] for c in used], dtype=np.int64)
                covers[a] = _in_domain(first, last + 1, codes_of(a, list(labels.order)))
            elif (codes >= card).any() or (codes < 0).any():
                raise ReleaseError(f"Table {entry.name!r}: a value of {a!r} is not in its domain.")
            cols[a] = codes
        return GeneralizedFactor(tuple(entry.attributes), cols, part.counts / n, dict(cards), covers)

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        return View((parts["data"],), self.sensitive_of(entry), covers=dict(entry.leaf_sets))

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        """Equivalence classes and their sizes from the file, and the achieved guarantee
        (the manifest's stats when the guarantee needs the table's context); generalized
        sensitive values count as induced frequencies over the leaves they cover."""
        from versapub.data.sql import connect, duckdb_source, ident  # DuckDB only where it is used

        exact = self.sensitive_of(entry)
        qi = [a for a in entry.attributes if a not in exact]
        keys = ", ".join(ident(a) for a in qi) or "1"
        s_expr = ident(exact[0]) if exact else "'*'"
        src = duckdb_source(directory / entry.files["data"])
        runs = self.sensitive_runs(directory, entry)
        spread = bool(runs)
        with connect() as con:
            if spread:  # induced counts: each published value spread over the leaf positions it covers
                con.execute(
                    f"CREATE TABLE h AS SELECT g, v, sum(w) c FROM (SELECT dense_rank() OVER (ORDER BY {keys})"
                    f' - 1 g, unnest(range(r.f, r.l + 1)) v, CAST("count" AS DOUBLE) / (r.l - r.f + 1) w '
                    f"FROM {src} d JOIN ({runs[exact[0]][0]}) r ON d.{s_expr} = r.pv) "
                    "GROUP BY g, v"
                )
            else:
                con.execute(
                    f"CREATE TABLE h AS SELECT dense_rank() OVER (ORDER BY {keys}) - 1 g, dense_rank() "
                    f'OVER (ORDER BY {s_expr}) - 1 v, CAST("count" AS BIGINT) c FROM {src}'
                )
            rows = con.execute(
                "SELECT n, count(*) FROM (SELECT round(sum(c)) n FROM h GROUP BY g) GROUP BY n ORDER BY n"
            )
            sizes = {int(k): int(c) for k, c in rows.fetchall()}
            hist = con.execute("SELECT g, c, v FROM h").fetchnumpy()
        out: dict[str, Any] = {"groups": sum(sizes.values()), "group_sizes": sizes, "achieved": None}
        stats = entry.raw.get("stats") or {}
        if guarantee is not None and not guarantee.needs() and len(hist["g"]):
            g, v = (np.asarray(hist[k], dtype=np.int64) for k in ("g", "v"))
            c = np.asarray(hist["c"], dtype=np.float64) if spread else np.asarray(hist["c"], dtype=np.int64)
            out["achieved"] = float(guarantee.achieved(Histograms(g, c, int(g.max()) + 1, v)))
        else:
            out["achieved"] = stats.get("achieved")
        return out


GENERALIZED = register(Generalized())


def _in_domain(start: np.ndarray, end: np.ndarray, leaves: np.ndarray) -> Cover:
    """Runs ``start:end`` of listed leaves as a :class:`Cover` of the model's domain: leaves
    outside it (code -1: a population's values the input lacks, listed by a release checked
    against a population) hold no record and are left out, the runs shortened to match."""
    inside = leaves >= 0
    if inside.all():
        return Cover(start, end, leaves)
    before = np.r_[0, np.cumsum(inside)].astype(np.int64)
    return Cover(before[start], before[end], leaves[inside])


def _int(text: str, where: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ReleaseError(f"{where}: position {text!r} is not a whole number.") from None
