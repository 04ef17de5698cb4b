"""Reading a written release back as a :class:`~versapub.model.ReleaseModel`.

Only the manifest's core keys are used (``format``, ``n_records``, ``tables`` with
``name``/``attributes``/``kind``/``enforces``/``files``), so hand-made releases in the
same format load too.  Every attribute's domain is the sorted union of the values the
tables publish for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.errors import ReleaseError
from versapub.io.manifest import read_manifest
from versapub.model.build import TablePart, anatomy_factor, plain_factor
from versapub.model.factors import Factor
from versapub.model.maxent import ReleaseModel

_INTS = ("group_id", "count")


def _read_table(path: Path, columns: list[str]) -> pa.Table:
    if not path.is_file():
        raise ReleaseError(f"The release lists {path.name}, but the file is missing from {path.parent}.")
    try:
        if path.suffix.lower() == ".parquet":
            t = pq.read_table(path)
        else:
            types = {c: (pa.int64() if c in _INTS else pa.string()) for c in columns}
            t = pacsv.read_csv(
                path,
                convert_options=pacsv.ConvertOptions(
                    column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]
                ),
            )
    except (pa.ArrowException, OSError) as exc:
        raise ReleaseError(f"Cannot read {path.name} of the release: {str(exc).splitlines()[0]}.") from None
    if t.column_names != columns:
        raise ReleaseError(f"{path.name} has columns {t.column_names}, expected {columns}.")
    if t.num_rows and pc.min(t.column("count")).as_py() <= 0:
        raise ReleaseError(f"{path.name} has a count that is not positive.")
    return t


def _sensitive_of(
    entry: dict[str, Any], name: str, attrs: list[str]
) -> tuple[list[str], int | None, dict[str, list[str]]]:
    """An anatomy entry's sensitive attributes (``enforces`` then ``also_enforces``), its
    suppressed group id and the declared sensitive domains."""
    rules = [entry.get("enforces") or {}, *(entry.get("also_enforces") or [])]
    s = [r.get("rhs") if isinstance(r, dict) else None for r in rules]
    if any(not isinstance(a, str) or a not in attrs for a in s) or len(set(s)) != len(s):
        raise ReleaseError(f"Anatomy table {name!r} must enforce rules whose sensitive attributes it holds.")
    sup = entry.get("suppressed_group")
    if sup is not None and (isinstance(sup, bool) or not isinstance(sup, int)):
        raise ReleaseError(f"Table {name!r}: suppressed_group must be an integer group id or null, got {sup!r}.")
    declared = entry.get("domains") or {}
    if not isinstance(declared, dict) or any(not isinstance(v, list) for v in declared.values()):
        raise ReleaseError(f"Table {name!r}: domains must map attributes to lists of values.")
    return [str(a) for a in s], sup, {str(k): [str(x) for x in v] for k, v in declared.items()}


def _codes_of(values: list[str] | None, value_set: pa.Array) -> npt.NDArray[np.int64]:
    """Codes of the declared domain values (every code when none are declared)."""
    if values is None:
        return np.arange(len(value_set), dtype=np.int64)
    idx = pc.index_in(pa.array(values, type=pa.string()), value_set=value_set)
    return np.unique(idx.to_numpy(zero_copy_only=False).astype(np.int64))


def load_release(directory: str | Path) -> ReleaseModel:
    """The maximum-entropy model of the release in ``directory``."""
    d = Path(directory)
    manifest = read_manifest(d)
    n = int(manifest["n_records"])
    specs = []
    for entry in manifest["tables"]:
        try:
            name, attrs, kind, files = entry["name"], list(entry["attributes"]), entry["kind"], entry["files"]
        except (KeyError, TypeError):
            raise ReleaseError(f"A table entry of {d / 'manifest.json'} lacks name/attributes/kind/files.") from None
        s: list[str] = []
        suppressed: int | None = None
        declared: dict[str, list[str]] = {}
        if kind == "plain":
            parts = {"data": _read_table(d / files["data"], [*attrs, "count"])}
        elif kind == "anatomy":
            s, suppressed, declared = _sensitive_of(entry, name, attrs)
            qi = [a for a in attrs if a not in s]
            parts = {
                "qit": _read_table(d / files["qit"], [*qi, "group_id", "count"]),
                "st": _read_table(d / files["st"], ["group_id", *s, "count"]),
            }
        else:
            raise ReleaseError(f"Table {name!r} has kind {kind!r}; this versapub reads plain and anatomy tables.")
        withheld = 0
        if suppressed is not None:
            qit = parts["qit"]
            withheld = pc.sum(pc.filter(qit.column("count"), pc.equal(qit.column("group_id"), suppressed))).as_py() or 0
        for role, t in parts.items():
            total = (pc.sum(t.column("count")).as_py() or 0) + (withheld if role == "st" else 0)
            if total != n:
                raise ReleaseError(
                    f"{files[role]} counts sum to {total}, but n_records is {n}: the release is corrupt."
                )
        specs.append((name, attrs, kind, (s, suppressed, declared), parts))

    uniques: dict[str, list[pa.Array]] = {}
    for _, _, _, (_, _, declared), parts in specs:
        for t in parts.values():
            for c in t.column_names:
                if c not in _INTS:
                    uniques.setdefault(c, []).append(pc.unique(pc.cast(t.column(c), pa.string())))
        for a, values in declared.items():
            uniques.setdefault(a, []).append(pa.array(values, type=pa.string()))
    domains = {
        a: np.unique(np.concatenate([u.to_numpy(zero_copy_only=False) for u in v]).astype(str)).astype(object)
        for a, v in uniques.items()
    }
    cards = {a: len(v) for a, v in domains.items()}
    value_sets = {a: pa.array(v.astype(str), type=pa.string()) for a, v in domains.items()}

    def encode(t: pa.Table) -> TablePart:
        cols = {}
        for c in t.column_names:
            arr = t.column(c)
            if c in _INTS:
                cols[c] = arr.to_numpy().astype(np.int64)
            else:
                idx = pc.index_in(pc.cast(arr, pa.string()), value_set=value_sets[c])
                cols[c] = idx.to_numpy(zero_copy_only=False).astype(np.int64)
        return TablePart(cols, cols["count"].astype(np.float64))

    factors: list[Factor] = []
    for _name, attrs, kind, (s, suppressed, declared), parts in specs:
        enc = {role: encode(t) for role, t in parts.items()}
        if kind == "plain":
            factors.append(plain_factor(attrs, enc["data"], n, cards))
        else:
            spread = None
            if suppressed is not None:
                doms = [_codes_of(declared.get(a), value_sets[a]) for a in s]
                spread = (suppressed, doms)
            factors.append(anatomy_factor([a for a in attrs if a not in s], s, enc["qit"], enc["st"], n, cards, spread))
    order = [a for a in manifest.get("attributes", []) if a in domains] + [
        a for a in domains if a not in manifest.get("attributes", [])
    ]
    return ReleaseModel(factors, {a: domains[a] for a in order}, n, [sp[0] for sp in specs])
