"""The ``anatomy`` kind (Xiao & Tao): a QIT ``qi..., group_id, count`` and an ST
``group_id, s..., count`` whose link inside a group is hidden; with several sensitive
attributes (multi-SA publishing) the ST holds all of them and a *suppressed group* may have
QIT rows only (``docs/release-format.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from versapub.anonymizers.base import AnonymizedTable
from versapub.data.counts import CountTable
from versapub.data.table import GROUP_KEY
from versapub.errors import ReleaseError
from versapub.kinds.base import CodesOf, CountRows, Entry, LeavesOnly, TablePart, View, register
from versapub.model.factors import AnatomyFactor, Choices, Factor
from versapub.privacy.guarantees.guarantee import Guarantee, Histograms

#: Largest product of sensitive domains a suppressed group is spread over.
MAX_SUPPRESSED_CELLS = 2_000_000


def group_column(table: str) -> str:
    """Name of the latent group column of an Anatomy table in the adversary's view."""
    return f"⟨group of {table}⟩"


def _suppressed(entry: Entry) -> int | None:
    sup = entry.raw.get("suppressed_group")
    if sup is not None and (isinstance(sup, bool) or not isinstance(sup, int)):
        raise ReleaseError(f"Table {entry.name!r}: suppressed_group must be an integer group id or null, got {sup!r}.")
    return sup


class Anatomy(LeavesOnly):
    """Bucketized tables (QIT + ST)."""

    name = "anatomy"
    counts = "exact"
    in_model = True
    glossary = (
        "A way to publish a table without changing any value: records are put into groups, and the release "
        "publishes each record's other values with its group number (QIT) and, separately, each group's list of "
        "sensitive values (ST). Nobody can tell which value of its group belongs to which record."
    )

    def sensitive_of(self, entry: Entry) -> tuple[str, ...]:
        rules = [entry.raw.get("enforces") or {}, *(entry.raw.get("also_enforces") or [])]
        s = [r.get("rhs") if isinstance(r, dict) else None for r in rules]
        if any(not isinstance(a, str) or a not in entry.attributes for a in s) or len(set(s)) != len(s):
            raise ReleaseError(f"Anatomy table {entry.name!r} must enforce rules whose sensitive attributes it holds.")
        return tuple(str(a) for a in s)

    def roles(self, entry: Entry) -> dict[str, list[str]]:
        s = self.sensitive_of(entry)
        qi = [a for a in entry.attributes if a not in s]
        return {"qit": [*qi, "group_id", "count"], "st": ["group_id", *s, "count"]}

    def file_names(self, table: str, ext: str) -> dict[str, str]:
        return {"qit": f"{table}_qit.{ext}", "st": f"{table}_st.{ext}"}

    def product_parts(self, table: AnonymizedTable) -> tuple[CountTable, CountTable | None, str | None] | None:
        single = len(table.sensitive_attributes) == 1 and table.suppressed_group is None
        return (table.parts["qit"], table.parts["st"], table.sensitive_attributes[0]) if single else None

    def manifest_fields(self, table: AnonymizedTable) -> dict[str, Any]:
        if not table.also_enforces:
            return {}
        return {
            "also_enforces": [r.to_json() for r in table.also_enforces],
            "suppressed_group": table.suppressed_group,
            "domains": {a: list(v) for a, v in table.domains.items()},
        }

    def validate(self, table: AnonymizedTable) -> None:
        if set(table.parts) != {"qit", "st"} or table.enforces is None:
            raise ValueError("an anatomy table has parts 'qit' and 'st' and enforces a rule")

    def groups(self, entry: Entry) -> tuple[str, list[str]] | None:
        return "st", ["group_id"]

    def cells(self, entry: Entry) -> tuple[str, list[str]]:
        s = self.sensitive_of(entry)
        return "qit", [a for a in entry.attributes if a not in s]

    def unguarded(self, entry: Entry) -> list[str]:
        """The QIT's columns: exact, and a group's guarantee says nothing of how they go
        with its sensitive values."""
        return self.cells(entry)[1]

    def withheld(self, entry: Entry, group_counts: Mapping[int, int]) -> dict[str, int]:
        sup = _suppressed(entry)
        return {} if sup is None else {"st": int(group_counts.get(sup, 0))}

    def factor(
        self, entry: Entry, parts: Mapping[str, TablePart], n: int, cards: Mapping[str, int], codes_of: CodesOf
    ) -> Factor:
        """Latent-group factor; group ids are renumbered densely.  A suppressed group's records
        have no ST rows: the maximum-entropy estimate spreads them uniformly over the product
        of the declared sensitive domains (the principle of generalized values, Kifer & Gehrke)."""
        s = self.sensitive_of(entry)
        qi = [a for a in entry.attributes if a not in s]
        qit, st = parts["qit"], parts["st"]
        st_g_raw, st_cols, st_counts = st.columns["group_id"], {a: st.columns[a] for a in s}, st.counts
        sup = _suppressed(entry)
        if sup is not None:
            declared = entry.raw.get("domains") or {}
            if not isinstance(declared, dict) or any(not isinstance(v, list) for v in declared.values()):
                raise ReleaseError(f"Table {entry.name!r}: domains must map attributes to lists of values.")
            doms = [codes_of(a, [str(x) for x in declared[a]] if a in declared else None) for a in s]
            size_sup = float(qit.counts[qit.columns["group_id"] == sup].sum())
            cells = int(np.prod([len(d) for d in doms], dtype=np.float64))
            if size_sup > 0 and cells > 0:
                if cells > MAX_SUPPRESSED_CELLS:
                    raise ReleaseError(
                        f"The suppressed group would be spread over {cells:,} combinations of "
                        f"{list(s)} (limit {MAX_SUPPRESSED_CELLS:,}); the release model cannot hold it."
                    )
                grids = np.meshgrid(*[np.asarray(d, dtype=np.int64) for d in doms], indexing="ij")
                st_g_raw = np.concatenate([st_g_raw, np.full(cells, sup, dtype=np.int64)])
                st_cols = {a: np.concatenate([st_cols[a], g.ravel()]) for a, g in zip(s, grids, strict=True)}
                st_counts = np.concatenate([st_counts, np.full(cells, size_sup / cells)])
        ids, inv = np.unique(np.concatenate([qit.columns["group_id"], st_g_raw]), return_inverse=True)
        inv = inv.astype(np.int64).ravel()
        g_q, g_s = inv[: len(qit.counts)], inv[len(qit.counts) :]
        size = np.bincount(g_s, weights=st_counts, minlength=len(ids)).astype(np.float64)
        cols = {a: qit.columns[a] for a in qi}
        cols[GROUP_KEY] = g_q
        choices = None
        if sup is not None:  # its records may hold any combination of the declared domains
            free = ids == sup
            rows = free[g_s]
            choices = Choices(free, g_s[rows], {a: c[rows] for a, c in st_cols.items()}, exact=True)
        return AnatomyFactor(
            tuple(qi), s, cols, qit.counts, g_s, st_cols, st_counts, size, float(n), dict(cards), choices
        )

    def view(self, entry: Entry, parts: Mapping[str, CountRows]) -> View:
        s = self.sensitive_of(entry)
        qi = tuple(a for a in entry.attributes if a not in s)
        g = group_column(entry.name)
        qit, st = parts["qit"], parts["st"]
        sup = _suppressed(entry)
        withheld, suppressed = 0, None
        if sup is not None:
            # Suppressed records may hold any sensitive values, so they never narrow anyone's
            # possibilities; the attack looks at the others.
            keep = [i for i, r in enumerate(qit.rows) if r[-1] != str(sup)]
            withheld = sum(qit.counts) - sum(qit.counts[i] for i in keep)
            declared = entry.raw.get("domains") or {}
            doms = {
                a: frozenset(str(v) for v in declared.get(a, [])) | {r[1 + j] for r in st.rows} for j, a in enumerate(s)
            }
            kept = set(keep)
            hidden = tuple(r[:-1] for i, r in enumerate(qit.rows) if i not in kept)
            suppressed = (qi, hidden, doms)
            qit = CountRows(
                qit.source, qit.columns, tuple(qit.rows[i] for i in keep), tuple(qit.counts[i] for i in keep)
            )
        return View(
            (CountRows(qit.source, (*qi, g), qit.rows, qit.counts), CountRows(st.source, (g, *s), st.rows, st.counts)),
            s,
            withheld,
            suppressed,
        )

    def summary(self, directory: Path, entry: Entry, guarantee: Guarantee | None) -> dict[str, Any]:
        """Group sizes from the ST file, and the achieved guarantee: the guarantee's own
        measure over every group's histogram (several sensitive attributes: the anonymizer's
        per-line figure from the manifest's stats)."""
        from versapub.data.sql import connect, duckdb_source, ident  # DuckDB only where it is used

        s = self.sensitive_of(entry)
        with connect() as con:
            con.execute(
                f'CREATE TABLE h AS SELECT CAST("group_id" AS BIGINT) g, {ident(s[0])} s, '
                f'CAST("count" AS BIGINT) c FROM {duckdb_source(directory / entry.files["st"])}'
            )
            rows = con.execute("SELECT n, count(*) FROM (SELECT sum(c) n FROM h GROUP BY g) GROUP BY n ORDER BY n")
            sizes = {int(n): int(c) for n, c in rows.fetchall()}
            hist = con.execute(
                "SELECT dense_rank() OVER (ORDER BY g) - 1, c, dense_rank() OVER (ORDER BY s) - 1 FROM h"
            ).fetchnumpy()
        stats = entry.raw.get("stats") or {}
        out: dict[str, Any] = {"groups": sum(sizes.values()), "group_sizes": sizes, "achieved": None}
        if len(s) > 1:
            out["achieved"] = stats.get("achieved")
            out["achieved_note"] = "per line"
            out["suppressed_records"] = stats.get("suppressed_records")
        elif guarantee is not None and guarantee.needs():  # compares with the table: the anonymizer's figure
            out["achieved"] = stats.get("achieved")
        elif guarantee is not None and len(hist["c"]):
            group, count, value = (np.asarray(v, dtype=np.int64) for v in hist.values())
            out["achieved"] = float(guarantee.achieved(Histograms(group, count, int(group.max()) + 1, value)))
        return out


ANATOMY = register(Anatomy())
