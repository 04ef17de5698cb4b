"""The published tables of a release, read for the attacks (independently of the writer).

Every published table becomes one or two *count tables* over named columns: a plain table
its rows; an Anatomy table its QIT over ``QI ∪ {g}`` and its ST over ``{g, S}``, where
``g`` is a latent column named ``⟨group of T⟩`` that only these two share.  Values are
text, counts integers.  Files are read with DuckDB; the manifest's core keys suffice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from versapub.errors import ReleaseError
from versapub.privacy.rules import Rule
from versapub.verify.sources import duckdb_source


def group_column(table: str) -> str:
    """Name of the latent group column of an Anatomy table."""
    return f"⟨group of {table}⟩"


@dataclass(frozen=True)
class CountRows:
    """Distinct rows over ``columns`` with their counts."""

    source: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class PublishedRelease:
    """What an adversary sees: ``n``, the rules, the guarantee and the count tables."""

    n: int
    attributes: tuple[str, ...]
    rules: tuple[Rule, ...]
    guarantee: dict[str, Any]
    tables: tuple[CountRows, ...]
    kinds: dict[str, str]
    sensitive: dict[str, str]
    #: Per table with a suppressed group: its QI columns and the QI rows of that group
    #: (those records are left out of ``tables`` and ``n``), and each sensitive domain.
    suppressed: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...], dict[str, frozenset[str]]]] = field(
        default_factory=dict
    )


def _read(con: duckdb.DuckDBPyConnection, path: Path, columns: list[str]) -> CountRows:
    if not path.is_file():
        raise ReleaseError(f"The release lists {path.name}, but the file is missing from {path.parent}.")
    src = duckdb_source(path)
    try:
        rel = con.execute(f"SELECT * FROM {src}")
        names = [d[0] for d in rel.description]
        data = rel.fetchall()
    except duckdb.Error as exc:
        raise ReleaseError(f"Cannot read {path.name}: {str(exc).splitlines()[0]}.") from None
    if names != columns:
        raise ReleaseError(f"{path.name} has columns {names}, expected {columns}.")
    try:
        counts = tuple(int(r[-1]) for r in data)
    except (TypeError, ValueError):
        raise ReleaseError(f"{path.name} has a count that is not an integer.") from None
    return CountRows(path.name, tuple(columns[:-1]), tuple(tuple(str(v) for v in r[:-1]) for r in data), counts)


def read_published(directory: str | Path, rules: list[Rule] | None = None) -> PublishedRelease:
    """Read the release in ``directory``; ``rules`` override the manifest's."""
    d = Path(directory)
    try:
        m = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        n = int(m["n_records"])
        entries = list(m["tables"])
        manifest_rules = [Rule.from_json(r) for r in m["rules"]]
    except FileNotFoundError:
        raise ReleaseError(f"{d} has no manifest.json; it is not a versapub release.") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"{d / 'manifest.json'} is malformed: {exc}.") from None
    con = duckdb.connect(":memory:")
    tables: list[CountRows] = []
    kinds: dict[str, str] = {}
    sensitive: dict[str, str] = {}
    attrs: list[str] = []
    suppressed: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...], dict[str, frozenset[str]]]] = {}
    try:
        for e in entries:
            name, cols, kind, files = str(e["name"]), list(e["attributes"]), e["kind"], e["files"]
            kinds[name] = kind
            attrs += [a for a in cols if a not in attrs]
            if kind == "plain":
                tables.append(_read(con, d / files["data"], [*cols, "count"]))
            elif kind == "anatomy":
                sens = [str(r["rhs"]) for r in [e["enforces"], *(e.get("also_enforces") or [])]]
                sensitive[name] = sens[0]
                qi = [a for a in cols if a not in sens]
                g = group_column(name)
                qit = _read(con, d / files["qit"], [*qi, "group_id", "count"])
                st = _read(con, d / files["st"], ["group_id", *sens, "count"])
                sup = e.get("suppressed_group")
                if sup is not None:
                    # Suppressed records may hold any sensitive values, so they never
                    # narrow anyone's possibilities; the attack looks at the others.
                    if len(entries) > 1:
                        raise ReleaseError(
                            f"Table {name!r} has a suppressed group and the release has other tables; "
                            "the attacks handle suppression only in a single-table release."
                        )
                    keep = [i for i, r in enumerate(qit.rows) if r[-1] != str(sup)]
                    withheld = sum(qit.counts) - sum(qit.counts[i] for i in keep)
                    declared = e.get("domains") or {}
                    doms = {a: frozenset(str(v) for v in declared.get(a, [])) | {r[1 + j] for r in st.rows}
                            for j, a in enumerate(sens)}  # fmt: skip
                    kept = set(keep)
                    hidden = tuple(r[:-1] for i, r in enumerate(qit.rows) if i not in kept)
                    suppressed[name] = (tuple(qi), hidden, doms)
                    n -= withheld
                    qit = CountRows(qit.source, qit.columns, tuple(qit.rows[i] for i in keep),
                                    tuple(qit.counts[i] for i in keep))  # fmt: skip
                tables.append(CountRows(qit.source, (*qi, g), qit.rows, qit.counts))
                tables.append(CountRows(st.source, (g, *sens), st.rows, st.counts))
            else:
                raise ReleaseError(f"Table {name!r} has kind {kind!r}; the attacks know plain and anatomy tables.")
    finally:
        con.close()
    return PublishedRelease(
        n, tuple(attrs), tuple(rules if rules is not None else manifest_rules), dict(m.get("guarantee", {})),
        tuple(tables), kinds, sensitive, suppressed,
    )  # fmt: skip
