"""Reading a written release back as a :class:`~versapub.model.ReleaseModel`.

Only the manifest's core keys are used (``format``, ``n_records``, ``tables`` with
``name``/``attributes``/``kind``/``files`` and the kind's own keys), so hand-made releases
in the format load too.  Every attribute's domain is the sorted union of the values the
tables publish for it (and of any domain a table declares).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from versapub.data.arrow import numpy_of, string_array
from versapub.data.parsed import arrow_of
from versapub.errors import ReleaseError
from versapub.formats import read_manifest
from versapub.kinds.base import Entry, TablePart, get_kind, parse_entry
from versapub.model.factors import Factor
from versapub.model.induced import release_model
from versapub.model.maxent import ReleaseModel
from versapub.model.noise_interval import Measurement
from versapub.model.sparse import Codes

_INTS = ("group_id", "count")


def _read_table(path: Path, columns: list[str], counts: str = "exact") -> pa.Table:
    """``path``'s columns; ``count`` as the kind declares it (:attr:`TableKind.counts`)."""
    if not path.exists():  # a file, or a directory of Parquet parts (the Dask backend's form)
        raise ReleaseError(f"The release lists {path.name}, but the file is missing from {path.parent}.")
    try:
        shared = arrow_of(path, tuple(c for c in columns if c in _INTS)) if counts == "exact" else None
        if shared is not None:  # parsed once for every reader (versapub check)
            t = shared
        elif path.suffix.lower() == ".parquet":
            t = pq.read_table(path)
        else:
            types = {c: (pa.int64() if c in _INTS else pa.string()) for c in columns}
            if counts == "expected" and "count" in types:
                types["count"] = pa.float64()
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
    if "count" in columns and t.num_rows and counts != "noisy":
        low = pc.min(t.column("count")).as_py()
        if low < 0 or (counts == "exact" and low == 0):
            raise ReleaseError(f"{path.name} has a count that is not positive.")
    return t


def _group_counts(t: pa.Table) -> dict[int, int]:
    if "group_id" not in t.column_names or not t.num_rows:
        return {}
    # numpy rather than Table.group_by: that loads pyarrow's Acero and with it pandas (~0.6 s)
    ids, inv = np.unique(numpy_of(t.column("group_id")), return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=numpy_of(t.column("count")).astype(np.float64), minlength=len(ids))
    return {int(g): round(c) for g, c in zip(ids.tolist(), sums.tolist(), strict=True)}


def published_labels(directory: str | Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per attribute, every generalized value the release publishes and the values it covers
    (from the generalized tables' labels and order listings)."""
    d = Path(directory)
    manifest = read_manifest(d)
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for entry in map(parse_entry, manifest.entries()):
        kind = get_kind(entry.kind)
        listings = {}
        for role, columns in kind.listing_roles(entry).items():
            if role in entry.files:
                t = _read_table(d / entry.files[role], columns)
                listings[role] = list(zip(*(t.column(c).to_pylist() for c in columns), strict=True))
        for a, lab in kind.leaf_sets(entry, listings).items():
            mine = out.setdefault(a, {})
            for label, (first, last) in lab.spans.items():
                mine[label] = tuple(lab.order[first : last + 1])
    return out


def _read_specs(d: Path, entries: Any, n: int) -> list[tuple[Entry, dict[str, pa.Table]]]:
    """Each table entry with its listings read and its files as Arrow tables, the totals
    checked against ``n`` as the kind's counts declare them."""
    specs: list[tuple[Entry, dict[str, pa.Table]]] = []
    for entry in map(parse_entry, entries):
        kind = get_kind(entry.kind)
        listings = {}
        for role, columns in kind.listing_roles(entry).items():
            if role not in entry.files:
                raise ReleaseError(f"Table {entry.name!r} lists no {role!r} file (a {entry.kind} table needs it).")
            t = _read_table(d / entry.files[role], columns)
            listings[role] = list(zip(*(t.column(c).to_pylist() for c in columns), strict=True))
        text = {role: [tuple(str(v) for v in r) for r in rows] for role, rows in listings.items()}
        entry = replace(entry, leaf_sets=kind.leaf_sets(entry, listings), listings=text)
        parts = {}
        for role, columns in kind.roles(entry).items():
            if role not in entry.files:
                raise ReleaseError(f"Table {entry.name!r} lists no {role!r} file (a {entry.kind} table needs it).")
            parts[role] = _read_table(d / entry.files[role], columns, kind.counts)
        if kind.counts == "noisy":  # a measurement sums to anything
            specs.append((entry, parts))
            continue
        totals = {role: float(pc.sum(t.column("count")).as_py() or 0) for role, t in parts.items()}
        first = next(iter(parts.values()))
        withheld = kind.withheld(entry, _group_counts(first)) if kind.counts == "exact" else {}
        slack = 1e-6 * max(n, 1) if kind.counts == "expected" else 0.0
        for role, total in totals.items():
            if abs(total + withheld.get(role, 0) - n) > slack:
                raise ReleaseError(
                    f"{entry.files[role]} counts sum to {total + withheld.get(role, 0):g}, but n_records is {n}: "
                    "the release is corrupt."
                )
        specs.append((entry, parts))

    return specs


def load_release(directory: str | Path) -> ReleaseModel:
    """The maximum-entropy model of the release in ``directory``."""
    d = Path(directory)
    manifest = read_manifest(d)
    n = manifest.n_records
    specs = _read_specs(d, manifest.entries(), n)
    uniques: dict[str, list[pa.Array]] = {}
    labels: dict[str, set[str]] = {}
    for entry, parts in specs:
        if not get_kind(entry.kind).in_model:  # evidence: its values are the model's, or merged ones
            continue
        for a, lab in entry.leaf_sets.items():
            labels.setdefault(a, set()).update(lab.spans)
            uniques.setdefault(a, []).append(pa.array(list(lab.order), type=pa.string()))
        for t in parts.values():
            for c in t.column_names:
                if c not in _INTS:
                    values = pc.unique(pc.cast(t.column(c), pa.string()))
                    own = entry.leaf_sets.get(c)
                    if own:  # a generalized value is not a value of the domain; its leaves are
                        values = values.filter(pc.invert(pc.is_in(values, string_array(sorted(own.spans)))))
                    uniques.setdefault(c, []).append(values)
        declared = entry.raw.get("domains") or {}
        if isinstance(declared, dict):
            for a, values in declared.items():
                if isinstance(values, list):
                    uniques.setdefault(str(a), []).append(string_array(str(v) for v in values))
    domains = {
        a: np.unique(np.array([x for u in v for x in u.to_pylist()], dtype=object).astype(str)).astype(object)
        for a, v in uniques.items()
    }
    cards = {a: len(v) for a, v in domains.items()}
    ordered = {a: sorted(v) for a, v in labels.items()}  # labels get codes card, card + 1, ...
    value_sets = {a: string_array([*v.astype(str), *ordered.get(a, [])]) for a, v in domains.items()}
    code_of = {a: {lab: cards[a] + i for i, lab in enumerate(v)} for a, v in ordered.items()}
    specs = [
        (replace(e, label_codes={a: {lab: code_of[a][lab] for lab in e.leaf_sets[a].spans} for a in e.leaf_sets}), p)
        for e, p in specs
    ]

    def encode(t: pa.Table) -> TablePart:
        cols = {}
        for c in t.column_names:
            arr = t.column(c)
            if c == "group_id":
                cols[c] = numpy_of(arr).astype(np.int64)
            elif c != "count":
                idx = pc.index_in(pc.cast(arr, pa.string()), value_set=value_sets[c])
                cols[c] = numpy_of(idx).astype(np.int64)
        return TablePart(cols, numpy_of(t.column("count")).astype(np.float64))

    def codes_of(attr: str, values: Sequence[str] | None) -> Codes:
        if values is None:
            return np.arange(cards[attr], dtype=np.int64)
        idx = pc.index_in(string_array(values), value_set=value_sets[attr])
        return np.asarray(numpy_of(idx.fill_null(-1)), dtype=np.int64)  # in the given order

    factors: list[Factor] = []
    measured: list[Measurement] = []
    for entry, parts in specs:
        kind = get_kind(entry.kind)
        if kind.counts == "noisy":  # what the intervals of a differentially private release read
            measured.append(_measurement(entry, parts["data"], codes_of, cards, kind.summary(d, entry, None)["sigma"]))
        if get_kind(entry.kind).in_model:  # a noisy table is evidence the model was fitted to
            enc = {role: encode(t) for role, t in parts.items()}
            factors.append(get_kind(entry.kind).factor(entry, enc, n, cards, codes_of))
    listed = [str(a) for a in manifest.get("attributes", [])]
    order = [a for a in listed if a in domains] + [a for a in domains if a not in listed]
    model = release_model(
        factors, {a: domains[a] for a in order}, n, [e.name for e, _ in specs if get_kind(e.kind).in_model]
    )
    model.measurements = tuple(measured)
    return model


def _measurement(entry: Entry, t: pa.Table, codes_of: Any, cards: dict[str, int], sigma: float) -> Measurement:
    """A noisy table as the intervals read it: codes into the model's domains, and a merged
    value (MST's compression, the entry's ``merged``) as code ``card`` covering its values."""
    from versapub.model.generalized import Cover

    merged = entry.raw.get("merged") or {}
    columns, covers = {}, {}
    for a in entry.attributes:
        text = [str(v) for v in t.column(a).to_pylist()]
        codes = codes_of(a, text)
        spec = merged.get(a) if isinstance(merged, dict) else None
        if isinstance(spec, dict):
            leaves = codes_of(a, [str(v) for v in spec.get("values") or []])
            codes = np.where(np.array(text, dtype=object) == str(spec.get("label")), cards[a], codes)
            covers[a] = Cover(np.array([0]), np.array([len(leaves)]), leaves)
        if (codes < 0).any():
            raise ReleaseError(
                f"Noisy table {entry.name!r} publishes a value of {a!r} the model's domain does not hold."
            )
        columns[a] = codes
    counts = numpy_of(t.column("count")).astype(np.float64)
    return Measurement(entry.attributes, columns, counts, sigma, covers)
