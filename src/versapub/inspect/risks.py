"""``versapub risk``: re-identification risk of a data file, a table in memory, a release
directory or a release in memory (issue 32).

Each table becomes its *classes*: rows grouped by the quasi-identifiers, with their records
(:class:`Classes`). A data file's rows are its records; a published table's rows are the
cells its kind publishes the non-sensitive attributes in (``TableKind.cells``: a plain
table's rows, an Anatomy or MSA QIT's exact values summed over groups, a generalized
table's classes of published values), each with its ``count``. The measures
(:mod:`versapub.privacy.risk.reidentification`, :mod:`versapub.privacy.risk.uniqueness`,
:mod:`versapub.privacy.risk.suda`) read only the classes, so a release read from its files and
the same release in memory give the same figures. A release of several tables is reported
per table and, at the top, measure by measure the worst over its tables (choice 160).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from versapub.data.groupby import group_rows
from versapub.errors import InputError
from versapub.privacy.risk import population
from versapub.privacy.risk import reidentification as rid
from versapub.privacy.risk.households import HouseholdRisk
from versapub.privacy.risk.missing_match import compatible_sizes
from versapub.privacy.risk.suda import DEFAULT_COST_LIMIT, Suda, suda
from versapub.privacy.risk.uniqueness import Uniqueness

if TYPE_CHECKING:
    from versapub.data.table import EncodedTable
    from versapub.release.value import Release

#: Bin edges of the record-risk histogram, bins ``(a, b]`` (prosecutor risks 1, 1/2, 1/3 fall
#: in bins of their own: classes of one, two and three records).
MODEL_KEYS = ("highest", "average", "records_at_risk", "records_at_risk_count")
RISK_EDGES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 1 / 3, 0.5, 1.0)


@dataclass(frozen=True)
class Classes:
    """One table's rows over its quasi-identifiers: the codes of each attribute (with its
    cardinality), the records per row, and optionally each row's sum of sampling weights."""

    name: str
    attributes: tuple[str, ...]
    codes: tuple[npt.NDArray[np.int64], ...]
    cards: tuple[int, ...]
    counts: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64] | None = None
    #: Per attribute, the code of its missing (empty) value (None: none); with
    #: ``matches_any``, a missing value matches any value (sdcMicro's reading).
    missing: tuple[int | None, ...] = ()
    matches_any: bool = False
    #: Per attribute, each code's rank in its values' order (numeric when every value is a
    #: number, else by text) and whether they are numbers: the copula model's value order
    #: (:mod:`versapub.privacy.risk.copula`), the same whichever way the classes were read.
    orders: tuple[tuple[npt.NDArray[np.int64], bool], ...] = ()

    def grouped(self) -> Classes:
        """The distinct combinations of the attributes, records (and weights) summed."""
        if not self.attributes:
            total = np.array([int(self.counts.sum())], dtype=np.int64) if len(self.counts) else self.counts
            w = None if self.weights is None else np.array([self.weights.sum()])
            return Classes(self.name, (), (), (), total, w, (), self.matches_any, ())
        g = group_rows(list(self.codes), list(self.cards), with_inverse=True)
        assert g.inverse is not None
        sizes = np.bincount(g.inverse, weights=self.counts, minlength=len(g.counts)).astype(np.int64)
        w = (
            None
            if self.weights is None
            else np.bincount(g.inverse, weights=self.weights, minlength=len(g.counts)).astype(np.float64)
        )
        keys = tuple(k.astype(np.int64) for k in g.keys)
        return Classes(
            self.name, self.attributes, keys, self.cards, sizes, w, self.missing, self.matches_any, self.orders
        )


@dataclass(frozen=True)
class TableRisk:
    """Every measure of one table (module docstring)."""

    name: str
    attributes: tuple[str, ...]
    records: int
    classes: int
    sample_uniques: int
    prosecutor: rid.ModelRisk
    journalist: rid.ModelRisk
    marketer: float
    uniqueness: Uniqueness
    individual_highest: float
    individual_average: float
    expected_reidentifications: float
    histogram: tuple[int, ...]
    suda: dict[str, Any] | None
    population: str

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.name,
            "attributes": list(self.attributes),
            "records": self.records,
            "classes": self.classes,
            "sample_uniques": self.sample_uniques,
            "prosecutor": self.prosecutor.to_json(),
            "journalist": self.journalist.to_json(),
            "marketer": {"average": self.marketer},
            "population_uniques": self.uniqueness.to_json(),
            "individual_risk": {
                "highest": self.individual_highest,
                "average": self.individual_average,
                "expected_reidentifications": self.expected_reidentifications,
            },
            "risk_histogram": {"edges": list(RISK_EDGES), "records": list(self.histogram)},
            "suda": self.suda,
            "population": self.population,
        }


@dataclass(frozen=True)
class RiskReport:
    """Per table, and measure by measure the worst over tables."""

    source: str
    tables: tuple[TableRisk, ...]
    threshold: float
    sampling_fraction: float
    notes: tuple[str, ...] = field(default=())
    #: The household figures (``risk --household``; None: no household id given).
    households: HouseholdRisk | None = None

    def worst(self) -> dict[str, Any]:
        """Each figure at its worst over the tables (the table named for the highest risks)."""
        t = [x.to_json() for x in self.tables]
        if not t:
            return {}
        if len(t) == 1:
            return {k: v for k, v in t[0].items() if k not in ("table",)}

        def top(path: tuple[str, ...]) -> Any:
            vals = []
            for x in t:
                v: Any = x
                for p in path:
                    v = v.get(p) if isinstance(v, dict) else None
                vals.append(v)
            nums = [v for v in vals if isinstance(v, (int, float))]
            return max(nums) if nums else None

        pu = max(t, key=lambda x: x["population_uniques"]["estimate"])["population_uniques"]
        hi = max(t, key=lambda x: x["prosecutor"]["highest"])
        return {
            "records": max(x["records"] for x in t),
            "sample_uniques": top(("sample_uniques",)),
            "prosecutor": {
                **{k: top(("prosecutor", k)) for k in MODEL_KEYS},
                "threshold": self.threshold,
                "table": hi["table"],
            },
            "journalist": {
                **{k: top(("journalist", k)) for k in MODEL_KEYS},
                "threshold": self.threshold,
            },
            "marketer": {"average": top(("marketer", "average"))},
            "population_uniques": pu,
            "individual_risk": {
                k: top(("individual_risk", k)) for k in ("highest", "average", "expected_reidentifications")
            },
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            **self.worst(),
            "threshold": self.threshold,
            "sampling_fraction": self.sampling_fraction,
            "tables": [x.to_json() for x in self.tables],
            **({"households": self.households.to_json()} if self.households is not None else {}),
            "notes": list(self.notes),
        }


def measure(
    classes: Classes,
    *,
    threshold: float = 0.2,
    sampling_fraction: float = 1.0,
    suda_max_size: int | None = None,
    with_suda: bool = True,
    suda_limit: int | None = DEFAULT_COST_LIMIT,
    progress: Callable[[int, int], None] | None = None,
    model: str = "auto",
) -> TableRisk:
    """Every measure of one table's classes (``suda_limit``, ``progress``: SUDA's cost ceiling
    and progress, :func:`versapub.privacy.risk.suda.suda`; ``model``: the population-uniqueness
    model reported, :mod:`versapub.privacy.risk.population`)."""
    g = classes.grouped()
    f = g.counts.astype(np.float64)
    if g.weights is not None:
        big_f = rid.population_sizes(f, weights=g.weights)
        how = "population class sizes: the classes' sums of sampling weights"
        if sampling_fraction >= 1:  # the fraction the weights imply (records / their sum)
            sampling_fraction = min(1.0, float(f.sum()) / float(g.weights.sum()))
    elif sampling_fraction < 1:
        big_f = rid.population_sizes(f, sampling_fraction=sampling_fraction)
        how = f"population class sizes estimated as sample sizes / {sampling_fraction:g} (the sampling fraction)"
    else:
        big_f = f
        how = "no sampling fraction given: the data is taken as the whole population (journalist = prosecutor)"
    n = int(f.sum())
    s: Suda | None = None
    if with_suda and classes.attributes and len(f):
        s = suda(
            list(g.codes),
            list(g.cards),
            list(g.attributes),
            counts=g.counts,
            max_size=suda_max_size,
            limit=suda_limit,
            progress=progress,
        )
    size = f  # each record's class size: its class's, or with a missing value matching any value ...
    if classes.matches_any and any(m is not None for m in g.missing) and len(f):
        size = compatible_sizes(list(g.codes), list(g.cards), list(g.missing), g.counts).astype(np.float64)
        big_f = size * (big_f / f)  # ... the records compatible with it (sdcMicro's freqCalc), scaled alike
        how += (
            "; a missing value matches any value (sdcMicro): class sizes count every compatible record (population "
            "uniques and SUDA read the exact classes)"
        )
    models = rid.per_record(size, f, big_f, threshold) if size is not f else None
    individual = rid.individual_risk(size, big_f) if len(f) else f
    return TableRisk(
        name=classes.name,
        attributes=classes.attributes,
        records=n,
        classes=len(f),
        sample_uniques=int(f[size == 1].sum()),
        prosecutor=models["prosecutor"] if models else rid.prosecutor(f, threshold),
        journalist=models["journalist"] if models else rid.journalist(f, big_f, threshold),
        marketer=models["marketer"] if models else rid.marketer(f, big_f),
        uniqueness=population.estimate(
            g.codes,
            g.cards,
            g.counts,
            sampling_fraction,
            weights=g.weights,
            orders=g.orders or None,
            names=g.attributes,
            model=model,
        ),
        individual_highest=float(individual.max()) if len(f) else 0.0,
        individual_average=rid.global_risk(f, individual) / n if n else 0.0,
        expected_reidentifications=rid.global_risk(f, individual),
        histogram=tuple(int(x) for x in rid.risk_histogram(f, 1.0 / size if len(f) else f, RISK_EDGES)),
        suda=None if s is None else s.summary(g.counts),
        population=how,
    )


def fraction(records: int, sampling_fraction: float | None, population_size: int | None) -> float:
    """The sampling fraction from ``--sampling-fraction`` or ``--population-size`` (1 with neither)."""
    if sampling_fraction is not None and population_size is not None:
        raise InputError("Give either --sampling-fraction or --population-size, not both.")
    if population_size is not None:
        if isinstance(population_size, bool) or not isinstance(population_size, int) or population_size < records:
            raise InputError(
                f"The population size must be a whole number at least the number of records ({records:,}), "
                f"got {population_size!r}."
            )
        return records / population_size if population_size else 1.0
    return 1.0 if sampling_fraction is None else rid.check_fraction(sampling_fraction)


# -- reading classes ---------------------------------------------------------------------
def _encode(columns: Sequence[pa.ChunkedArray | pa.Array]) -> tuple[list[npt.NDArray[np.int64]], list[int]]:
    codes, cards = [], []
    for col in columns:
        enc = pc.dictionary_encode(pc.cast(col, pa.string()).fill_null("\x00<missing>"))
        enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
        codes.append(np.asarray(enc.indices, dtype=np.int64))
        cards.append(max(len(enc.dictionary), 1))
    return codes, cards


def _missing_code(values: npt.NDArray[Any]) -> int | None:
    from versapub.data.table import is_missing_value

    found = [i for i, v in enumerate(values) if v is None or is_missing_value(str(v))]
    return found[0] if found else None


def table_classes(
    table: EncodedTable, qi: Sequence[str], name: str = "data", weights: str | None = None, matches_any: bool = False
) -> Classes:
    """A table's records as classes over ``qi`` (``weights``: a column of sampling weights;
    ``matches_any``: a missing value matches any value)."""
    missing = [c for c in [*qi, *([weights] if weights else [])] if c not in table.names]
    if missing:
        raise InputError(f"Column(s) {missing} are not in the data (its columns: {', '.join(table.names)}).")
    w = None
    if weights:
        vals = table.column(weights).values.astype(str)
        try:
            wv = vals.astype(np.float64)[table.codes(weights)]
        except ValueError:
            bad = str(next(v for v in vals if not _is_number(v)))
            raise InputError(f"The weights column '{weights}' holds {bad!r}, not a number.") from None
        if not np.all(np.isfinite(wv)) or (len(wv) and wv.min() <= 0):
            raise InputError(f"The weights column '{weights}' must hold positive numbers (sampling weights).")
        w = wv
    return Classes(
        name,
        tuple(qi),
        tuple(table.codes(a).astype(np.int64) for a in qi),
        tuple(table.cardinality(a) for a in qi),
        np.ones(table.n_rows, dtype=np.int64),
        w,
        tuple(_missing_code(table.column(a).values) for a in qi),
        matches_any,
        tuple(value_order(table.column(a).values) for a in qi),
    )


def value_order(
    values: Sequence[Any] | npt.NDArray[Any], size: int | None = None
) -> tuple[npt.NDArray[np.int64], bool]:
    """Each code's rank among the first ``size`` of ``values`` (default all) in their order —
    numeric when every value is a number, else by text — and whether they are numbers."""
    vals = list(values)[: len(values) if size is None else size]
    try:
        keys: list[Any] = [float(v) for v in vals]
        numeric = all(math.isfinite(x) for x in keys)
    except (TypeError, ValueError):
        numeric = False
    if not numeric:
        keys = [str(v) for v in vals]
    rank = np.empty(len(vals), dtype=np.int64)
    rank[sorted(range(len(vals)), key=keys.__getitem__)] = np.arange(len(vals))
    return rank, numeric


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def _published(all_cols: Sequence[str], qi: Sequence[str] | None) -> list[str]:
    return list(all_cols) if qi is None else [c for c in all_cols if c in set(qi)]


@dataclass(frozen=True)
class RiskChoices:
    """What a release's risk can be measured on: every published non-sensitive column
    (``candidates``, in the order the tables publish them) and the quasi-identifiers the
    release declares among them (``declared``: the rules' left-hand sides and the columns
    declared quasi-identifying; all candidates when it declares none), with SUDA's plan
    for the declared ones over the release's records."""

    candidates: tuple[str, ...]
    declared: tuple[str, ...]
    records: int

    def suda_plan_text(self, qi: Sequence[str] | None = None) -> str:
        """SUDA's cost for ``qi`` (default: the declared ones), in a sentence, before it runs."""
        from versapub.privacy.risk.suda import plan

        n = len(self.declared if qi is None else qi)
        if not n or not self.records:
            return "SUDA has nothing to search: no quasi-identifier is chosen."
        p = plan(n, self.records)
        cost = (
            f"SUDA over {n} quasi-identifiers searches MSUs of up to {p.searched} attributes: at most {p.cost:,} "
            "row-groupings per table"
        )
        return cost + (f"; {p.note()}" if p.note() else " (under the default ceiling of about 4 s).")

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": list(self.candidates),
            "declared": list(self.declared),
            "records": self.records,
            "suda": self.suda_plan_text(),
        }


def risk_choices(directory: str | Path) -> RiskChoices:
    """The columns a release's risk can be measured on and those it declares
    quasi-identifying (:class:`RiskChoices`)."""
    from versapub.formats import read_manifest
    from versapub.kinds import get_kind, parse_entry

    manifest = read_manifest(Path(directory))
    cols = [c for e in map(parse_entry, manifest.entries()) for c in get_kind(e.kind).cells(e)[1]]
    candidates = tuple(dict.fromkeys(cols))
    raw = manifest.raw
    named = [str(a) for r in raw.get("rules") or [] if isinstance(r, dict) for a in r.get("lhs") or []]
    roles = raw.get("columns") if isinstance(raw.get("columns"), dict) else {}
    named += [str(a) for a in (roles or {}).get("quasi-identifying") or []]
    declared = tuple(c for c in candidates if c in set(named)) or candidates
    return RiskChoices(candidates, declared, int(manifest.n_records))


def _release_reading(
    path: Path, qi: Sequence[str] | None, matches_any: bool, notes: list[str]
) -> tuple[Sequence[str] | None, bool]:
    """A release's own reading of its cells: its key variables (the manifest's ``job.keys``,
    ``--keys`` when published) unless ``qi`` names others, and an empty value matching any
    value when it suppressed key values locally (``suppressed``)."""
    from versapub.formats import read_manifest

    raw = read_manifest(path).raw or {}
    job = raw.get("job")
    keys = job.get("keys") if isinstance(job, dict) else None
    if qi is None and isinstance(keys, list) and keys:
        qi = [str(a) for a in keys]
        notes.append(f"measured on the key variables the release names ({', '.join(qi)}); --qi measures others")
    if isinstance(raw.get("suppressed"), dict) and not matches_any:
        matches_any = True
        notes.append("an empty value matches any value (the release suppressed key values locally)")
    return qi, matches_any


def release_classes(directory: Path, qi: Sequence[str] | None, matches_any: bool = False) -> list[Classes]:
    """Each table of a written release as classes of its published non-sensitive values
    (``qi``: only these of them), read from its files."""
    from versapub.data.sql import connect, duckdb_source, fresh_alias, ident
    from versapub.formats import read_manifest
    from versapub.kinds import get_kind, parse_entry

    manifest = read_manifest(directory)
    out = []
    with connect() as con:
        for entry in map(parse_entry, manifest.entries()):
            if get_kind(entry.kind).counts != "exact":  # noisy or expected counts: no cell is a class of records
                continue
            role, cols = get_kind(entry.kind).cells(entry)
            cols = _published(cols, qi)
            src = duckdb_source(directory / entry.files[role])
            sel = ", ".join(ident(c) for c in cols)
            total = ident(fresh_alias("c", cols))  # a column may be named c (DuckDB's names ignore case)
            sql = f'SELECT {sel + ", " if cols else ""}sum(CAST("count" AS BIGINT)) AS {total} FROM {src}'
            t = con.sql(sql + (f" GROUP BY {sel}" if cols else "")).to_arrow_table()
            codes, cards = _encode([t.column(i) for i in range(len(cols))])
            counts = np.asarray(t.column(t.num_columns - 1).fill_null(0), dtype=np.int64)
            present = counts > 0
            missing = tuple(_null_code(t.column(i)) for i in range(len(cols)))
            cls = Classes(entry.name, tuple(cols), tuple(x[present] for x in codes), tuple(cards), counts[present])
            orders = tuple(value_order(_dictionary(t.column(i))) for i in range(len(cols)))
            out.append(replace(cls, missing=missing, matches_any=matches_any, orders=orders))
    return out


def _dictionary(col: pa.ChunkedArray) -> list[Any]:
    """The values :func:`_encode` gives codes to, in code order."""
    enc = pc.dictionary_encode(pc.cast(col, pa.string()).fill_null("\x00<missing>"))
    enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    return list(enc.dictionary.to_pylist())


def _null_code(col: pa.ChunkedArray) -> int | None:
    """The code :func:`_encode` gives a column's missing cells (read as null or empty)."""
    enc = pc.dictionary_encode(pc.cast(col, pa.string()).fill_null("\x00<missing>"))
    enc = enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc
    values = enc.dictionary.to_pylist()
    found = [i for i, v in enumerate(values) if v == "\x00<missing>" or not str(v).strip()]
    return found[0] if found else None


def memory_classes(release: Release, qi: Sequence[str] | None) -> list[Classes]:
    """Each table of an in-memory release as classes (the same as its files give)."""
    from versapub.kinds import get_kind
    from versapub.kinds.base import entry_of

    out = []
    for p in release.tables:
        role, cols = get_kind(p.table.kind).cells(entry_of(p.name, p.table))
        cols = _published(cols, qi)
        part = p.table.parts[role]
        if not hasattr(part, "codes"):
            raise InputError(
                f"Table {p.name} is held on a cluster; measure the written release's risk from its directory."
            )
        codes = [part.column(c).astype(np.int64) for c in cols]
        cards = [int(c.max()) + 1 if len(c) else 1 for c in codes]
        dicts = [part.dictionaries[part.names.index(c)] for c in cols]
        orders = tuple(value_order(range(k) if d is None else d, size=k) for d, k in zip(dicts, cards, strict=True))
        cls = Classes(p.name, tuple(cols), tuple(codes), tuple(cards), part.counts.astype(np.int64))
        out.append(replace(cls, orders=orders))
    return out


def risk(
    source: str | Path | EncodedTable | Release,
    *,
    qi: Sequence[str] | None = None,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weights: str | None = None,
    threshold: float = 0.2,
    suda_max_size: int | None = None,
    with_suda: bool = True,
    delimiter: str | None = None,
    missing: str = "value",
    missing_matches_any: bool = False,
    suda_limit: int | None = DEFAULT_COST_LIMIT,
    progress: Callable[[str, int, int], None] | None = None,
    household: str | None = None,
    household_level: Sequence[str] | None = None,
    model: str = "auto",
) -> RiskReport:
    """Re-identification risk of ``source``: a data file (CSV/Parquet; ``qi`` required), an
    encoded table, a release directory or an in-memory release (``qi``: default every
    published non-sensitive column of each table). ``sampling_fraction`` or
    ``population_size`` say what share of the population the data is; ``weights`` names a
    column of sampling weights (data only); ``missing_matches_any``: a missing value matches
    any value in the class sizes (sdcMicro's reading; by default it is a value like any
    other, ARX's — :mod:`versapub.privacy.risk.missing_match`). SUDA searches the MSU sizes
    whose cost fits under ``suda_limit`` row-groupings (``None``: every size; the result
    notes what it did not search); ``progress(description, done, total)`` follows it.
    ``household`` (a data file's or table's household id column) and ``household_level``:
    the household figures of :mod:`versapub.privacy.risk.households` beside the others;
    ``model``: the population-uniqueness model reported (:mod:`~versapub.privacy.risk.population`)."""
    from versapub.data.table import EncodedTable
    from versapub.release.value import Release

    threshold = rid.check_threshold(threshold)
    population.check_model(model)
    notes: list[str] = []
    table_read: EncodedTable | None = None
    if household_level is not None and household is None:
        raise InputError("--household-level names columns of households: give the household id with --household.")
    if isinstance(source, Release):
        if missing_matches_any:
            raise InputError("--missing-matches-any reads a data file or a release directory, not a release in memory.")
        if weights:
            raise InputError("Sampling weights are a column of the original data; a release does not publish them.")
        classes, label = memory_classes(source, qi), "release (in memory)"
    elif isinstance(source, EncodedTable):
        classes, label = [_data_classes(source, qi, weights, missing_matches_any)], "table (in memory)"
        table_read = source
    else:
        path = Path(source)
        if path.is_dir() and (path / "manifest.json").is_file():
            if weights or household:
                raise InputError(
                    "Sampling weights and the household id are columns of the original data; a release does not "
                    "publish them (give the data file)."
                )
            qi, missing_matches_any = _release_reading(path, qi, missing_matches_any, notes)
            classes, label = release_classes(path, qi, missing_matches_any), str(path)
            if not classes:  # a differentially private release: noisy or expected counts only
                notes.append(
                    f"{label} publishes no table of records (its counts are noisy measurements or a fitted model's "
                    "expectations, under differential privacy): re-identification risk of published cells does not "
                    "apply; the budget bounds what one record changes, and the attacks of `versapub check` measure "
                    "what an adversary learns"
                )
                return RiskReport(label, (), threshold, 1.0, tuple(notes))
        elif path.is_file():
            table_read = _read_data(
                path,
                [*(qi or []), *([weights] if weights else []), *([household] if household else [])],
                delimiter,
                missing,
            )
            classes, label = [_data_classes(table_read, qi, weights, missing_matches_any)], str(path)
        else:
            raise InputError(f"{path} is neither a data file nor a release directory (with a manifest.json).")
    if qi is not None:
        unknown = sorted(set(qi) - {a for c in classes for a in c.attributes})
        if unknown:
            raise InputError(f"--qi names {unknown}, published as a non-sensitive column by no table of {label}.")
        notes += [f"table {c.name} publishes none of the quasi-identifiers" for c in classes if not c.attributes]
    pi, w = _fraction_of(classes, sampling_fraction, population_size)

    tables = tuple(
        measure(
            c,
            threshold=threshold,
            sampling_fraction=pi,
            suda_max_size=suda_max_size,
            with_suda=with_suda,
            suda_limit=suda_limit,
            progress=_follow(progress, c.name),
            model=model,
        )
        for c in classes
    )
    hh = _households(table_read, qi, household, household_level, pi, threshold, w)
    return RiskReport(label, tables, threshold, pi, tuple(notes), hh)


def _fraction_of(
    classes: Sequence[Classes], sampling_fraction: float | None, population_size: int | None
) -> tuple[float, npt.NDArray[np.float64] | None]:
    """The sampling fraction (given, or the one the sampling weights imply) and the weights."""
    records = max((int(c.counts.sum()) for c in classes), default=0)
    pi = fraction(records, sampling_fraction, population_size)
    w = classes[0].weights if classes else None
    if w is not None and sampling_fraction is None and population_size is None and w.sum() > 0:
        pi = min(1.0, records / float(w.sum()))  # the fraction the sampling weights imply
    return pi, w


def _households(
    table: EncodedTable | None,
    qi: Sequence[str] | None,
    household: str | None,
    level: Sequence[str] | None,
    pi: float,
    threshold: float,
    weights: npt.NDArray[np.float64] | None,
) -> HouseholdRisk | None:
    """The household figures of ``risk --household`` (``None`` without a household id)."""
    if household is None:
        return None
    if table is None:
        raise InputError("--household reads a data file or a table in memory, not a release.")
    from versapub.inspect.household_risk import households_of

    return households_of(table, list(qi or []), household, level, pi, threshold, weights)


def _follow(progress: Callable[[str, int, int], None] | None, name: str) -> Callable[[int, int], None] | None:
    """SUDA's progress on table ``name`` as ``progress(description, done, total)``."""
    if progress is None:
        return None
    hook = progress
    return lambda done, total: hook(f"SUDA on {name}: minimal sample uniques", done, total)


def _read_data(path: Path, wanted: list[str], delimiter: str | None, missing: str) -> EncodedTable:
    """A data file's columns the measures read (all of them when those are not all there, so
    that the error can name the choices)."""
    from versapub.io.read import read_table

    try:
        return read_table(path, delimiter=delimiter, missing=missing, columns=wanted or None)
    except InputError:
        return read_table(path, delimiter=delimiter, missing=missing)


def _data_classes(
    table: EncodedTable, qi: Sequence[str] | None, weights: str | None, matches_any: bool = False
) -> Classes:
    if not qi:
        raise InputError(
            "Name the quasi-identifiers of the data with --qi a,b,c (the columns an attacker may know about a "
            f"person); its columns: {', '.join(table.names)}."
        )
    return table_classes(table, qi, "data", weights, matches_any)


def record_risks(
    table: EncodedTable,
    qi: Sequence[str],
    *,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weights: str | None = None,
    suda_max_size: int | None = None,
    suda_limit: int | None = DEFAULT_COST_LIMIT,
) -> dict[str, npt.NDArray[Any]]:
    """Per record of ``table`` (in its order): the size of its class over ``qi``, its
    prosecutor risk ``1/f``, journalist risk ``1/F``, Benedetti–Franconi individual risk,
    its number of MSUs, the size of its smallest (0: none) and its SUDA score; with a
    sampling fraction or weights also the log-linear model's risk ``E(1/F | f)`` and
    probability of being unique in the population (:mod:`versapub.privacy.risk.loglinear`)
    — what ``versapub risk DATA --records FILE`` writes."""
    from versapub.privacy.risk.loglinear import loglinear

    c = _data_classes(table, qi, weights)
    g = group_rows(list(c.codes), list(c.cards), with_inverse=True)
    assert g.inverse is not None
    inv = g.inverse
    f = g.counts.astype(np.float64)
    pi = fraction(table.n_rows, sampling_fraction, population_size)
    pi_k: float | npt.NDArray[np.float64] = pi
    if c.weights is not None:
        w = np.bincount(inv, weights=c.weights, minlength=len(f))
        big_f = rid.population_sizes(f, weights=w)
        pi_k = np.minimum(f / w, 1.0)
    else:
        big_f = rid.population_sizes(f, sampling_fraction=pi)
    s = suda(list(c.codes), list(c.cards), list(qi), max_size=suda_max_size, limit=suda_limit)
    modelled: dict[str, npt.NDArray[Any]] = {}
    if c.weights is not None or pi < 1:
        keys = [k.astype(np.int64) for k in g.keys]
        ll = loglinear(keys, list(c.cards), g.counts, pi_k, list(qi))
        modelled = {"loglinear_risk": ll.risk[inv], "population_unique": ll.unique[inv]}
    return {
        "class_size": g.counts[inv],
        "prosecutor": (1.0 / f)[inv],
        "journalist": (1.0 / big_f)[inv],
        "individual": rid.individual_risk(f, big_f)[inv],
        "msus": s.msus,
        "smallest_msu": s.smallest,
        "suda_score": s.scores,
        **modelled,
    }
