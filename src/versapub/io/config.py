"""Publishing configuration (TOML), documented with a complete example in docs/configuration.md.

.. code-block:: toml

    [input]
    path = "adult.csv"          # CSV (optionally .gz) or Parquet; relative to this file
    delimiter = ";"             # default: "," ("\\t" for .tsv); any string, e.g. ", "
    header = true               # false: the file has no header line; name columns with 'names'
    # names = ["age", "sex"]    # column names (rename the header's, or name a header-less file's)
    # na_values = ["?", "-9"]   # markers that mean a missing cell (compared without surrounding spaces)
    strip = false               # true: remove spaces around every cell
    missing = "error"           # error | value | drop
    columns = ["age", "sex"]    # optional: attributes to publish (default: all)

    [input.hierarchies.age]     # optional, one table per attribute
    file = "age.csv"            # ARX format: ';'-separated, leaf first, root last
    level = 1                   # generalize when reading (0 = original values); without a
                                # level the hierarchy goes to the anonymizer and guarantee
    # hierarchy_dir = "hierarchies"  # every *_hierarchy_ATTR.csv / ATTR.csv there, no level
    # population = "census.csv"  # the population the input was drawn from (delta-presence, k-map), read alike

    [columns]                   # optional: column roles (ARX's vocabulary)
    identifying = ["patient_id"]  # removed before publishing, listed in the manifest and report
    # quasi_identifying = [...], sensitive = [...], insensitive = [...]   (QI and sensitive
    # without rules: the rules 'QI -> S' for each sensitive column, as --qi with --sensitive)
    # allow_unique = ["visit"]  # publish a near-unique column as it is
    # others = "insensitive"     # every column no rule names and no role declares (or quasi-identifying,
    #                            # identifying = removed); without it such a column is refused
    # allow_proxy = ["chapter"]  # publish a column that reveals a protected one (recorded in the manifest)
    # household = "hh_id"  # each person's household id: removed; household figures beside the record ones

    [privacy]
    guarantee = "l-diversity"   # or a table: [privacy.guarantee] name = "l-diversity", l = 3
    l = 2                       # short form of l-diversity's parameter
    rules = ["age, sex -> marital-status", "education -> occupation"]
    # k = 5                     # a floor: refuse the release when a table's smallest published
    #                           # cell of non-sensitive values holds fewer than k records (check --k)
    # a rule with its own guarantee (the others have the release's):
    # rules = [{rule = "age, sex -> marital-status", guarantee = "t-closeness", t = 0.2}, "education -> occupation"]
    # a rule may name its table's anonymizer: {rule = "...", anonymizer = "mondrian"}

    [publish]
    decomposition = "uad"       # uad | gd | single-attribute | multi-sa  (or a table, below;
                                # default: the anonymizer's own, else uad)
    anonymizer = "anatomy"      # anatomy | multi-sa | mondrian | incognito | msa-decomposition
                                # (default: the decomposition's)
    # msa-decomposition (Ye et al.): [columns] sensitive = ["occupation:7", "salary:4"] gives
    # each sensitive attribute its l (without ":L": its l_per); [publish.anonymizer]
    # name = "msa-decomposition", primary = "occupation", above_l_per = false

    # [publish.decomposition]   # a plug-in with its parameters
    # name = "gd"
    # stop_when_worse = true
    # [publish.anonymizer]
    # name = "anatomy"
    # grouping = "wrap-around"
    seed = 1
    format = "csv"              # csv | parquet
    gd_stop_when_worse = false  # GD: stop add-back at the first step that does not lower KL
    # gd_max_candidates = 50    # GD: score a random subset of candidates per step (approximation)
    # multi_sa_time_limit = 60  # multi-SA: seconds per integer-program solve
    # multi_sa_max_combinations = 50000  # multi-SA: refuse above this many distinct SA combinations
    # record_input_path = false # record the input's absolute path in the release (default: its name)
    # detach_others = false     # classic job (quasi-identifiers, no rule): the other columns in a
                                # plain table of their own instead of in the generalized table's records
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from versapub.data.dates import dated_hierarchy, require_formats
from versapub.data.hierarchy import Hierarchy
from versapub.data.missing import MissingPolicy
from versapub.data.reading import ReadOptions
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, VersapubError
from versapub.io.dp_config import declared_domains as _domains
from versapub.io.dp_config import mechanism_spec as _mechanism
from versapub.io.read import file_sha256, read_table
from versapub.io.sections import SECTIONS, check_sections
from versapub.privacy.screens.roles import ColumnRoles

if TYPE_CHECKING:
    from versapub.marginals.spec import MarginalsSpec


@dataclass(frozen=True)
class HierarchySpec:
    """A hierarchy file for one attribute and the level to publish it at; without a level
    (``None``) the hierarchy is handed to the anonymizer and the guarantee instead
    (Mondrian's categorical cuts, t-closeness's hierarchical distance)."""

    attribute: str
    file: Path
    level: int | None = None
    delimiter: str = ";"

    def __post_init__(self) -> None:
        if self.level is not None and (
            isinstance(self.level, bool) or not isinstance(self.level, int) or self.level < 0
        ):
            raise ConfigError(
                f"Hierarchy level for {self.attribute!r} must be a whole number >= 0, got {self.level!r}."
            )

    def load(self) -> Hierarchy:
        return Hierarchy.read(self.file, self.attribute, self.delimiter)


@dataclass(frozen=True)
class FolderMatch:
    """The hierarchies of a folder matched to a table's columns (:func:`match_hierarchies`)."""

    specs: tuple[HierarchySpec, ...]
    #: Files of the folder that match no column.
    unused: tuple[str, ...]

    def notes(self) -> list[str]:
        """What was loaded for which column, and what was not used, in words."""
        out = [f"hierarchy of {s.attribute!r} from {s.file.name}" for s in self.specs]
        if self.unused:
            out.append(f"hierarchy file(s) matching no column, not used: {', '.join(self.unused)}")
        return out


def _attribute_of(stem: str, columns: Sequence[str]) -> str | None:
    """The column a hierarchy file names: ``PREFIX_hierarchy_ATTR``, ``ATTR``, or the longest
    column ``ATTR`` with ``PREFIX_ATTR`` (``diabetes_age`` -> ``age``)."""
    if "_hierarchy_" in stem:
        attr = stem.split("_hierarchy_", 1)[1]
        return attr if attr in columns else None
    if stem in columns:
        return stem
    ends = [c for c in columns if stem.endswith("_" + c)]
    return max(ends, key=len) if ends else None


def match_hierarchies(directory: Path, columns: Sequence[str]) -> FolderMatch:
    """The hierarchies of ``directory`` for ``columns``: files named ``ATTR.csv``,
    ``PREFIX_hierarchy_ATTR.csv`` (ARX) or ``PREFIX_ATTR.csv``; a folder matching no column
    is refused (a silent miss would publish every such column fully generalized)."""
    if not directory.is_dir():
        raise ConfigError(f"--hierarchies {directory}: not a folder.")
    files = sorted(directory.glob("*.csv"))
    specs: dict[str, HierarchySpec] = {}
    unused: list[str] = []
    for f in files:
        attr = _attribute_of(f.stem, columns)
        if attr is None:
            unused.append(f.name)
            continue
        if attr in specs:
            raise ConfigError(
                f"Folder {directory} holds two hierarchies for {attr!r}: {specs[attr].file.name} and {f.name}."
            )
        specs[attr] = HierarchySpec(attr, f)
    if not specs:
        shown = ", ".join(f.name for f in files[:8]) or "no .csv file"
        raise ConfigError(
            f"--hierarchies {directory}: no file matches a column of the table ({shown}; columns: "
            f"{', '.join(columns)}). Name each ATTR.csv, PREFIX_hierarchy_ATTR.csv or PREFIX_ATTR.csv."
        )
    return FolderMatch(tuple(specs.values()), tuple(unused))


def hierarchies_in(directory: Path) -> tuple[HierarchySpec, ...]:
    """Every hierarchy file of a folder, each named by its file (``PREFIX_hierarchy_ATTR.csv``
    or ``ATTR.csv``), when the columns are not known yet (the files a job must not
    overwrite; ``marginals inject``); :func:`match_hierarchies` matches them to columns."""
    if not directory.is_dir():
        raise ConfigError(f"--hierarchies {directory}: not a folder.")
    specs: dict[str, HierarchySpec] = {}
    for f in sorted(directory.glob("*.csv")):
        stem = f.stem
        attr = stem.split("_hierarchy_", 1)[1] if "_hierarchy_" in stem else stem
        if attr in specs:
            raise ConfigError(
                f"Folder {directory} holds two hierarchies for {attr!r}: {specs[attr].file.name} and {f.name}."
            )
        specs[attr] = HierarchySpec(attr, f)
    if not specs:
        raise ConfigError(f"Folder {directory} holds no hierarchy (*_hierarchy_ATTR.csv or ATTR.csv).")
    return tuple(specs.values())


#: Where the records are held: in memory (default) or on a Dask cluster (``versapub[dask]``).
BACKENDS = ("memory", "dask")


def marginals_spec(section: dict[str, Any], where: str) -> MarginalsSpec:
    """``[marginals]`` of a configuration file."""
    from versapub.marginals.spec import MarginalsSpec

    div = section.get("diversity")
    if div is None:
        div = {"name": "l-diversity", "l": _get(section, "l", int, where, 2)}
    elif isinstance(div, str):
        div = {"name": div, **({"l": section["l"]} if "l" in section else {})}
    elif not isinstance(div, dict):
        raise ConfigError(f"{where}: [marginals] diversity must be a name or a table {{name = ..., l = ...}}.")
    marg = _get(section, "marginals", list, where, [])
    if not all(isinstance(m, str) for m in marg):
        raise ConfigError(f"{where}: [marginals] marginals must be a list of strings like 'age@2, race'.")
    if "sensitive" not in section or "k" not in section:
        raise ConfigError(f"{where}: [marginals] needs 'sensitive' (the sensitive column) and 'k'.")
    return MarginalsSpec(
        sensitive=_get(section, "sensitive", str, where),
        k=_get(section, "k", int, where),
        diversity=dict(div),
        base=_get(section, "base", str, where),
        marginals=tuple(marg),
        inject=_get(section, "inject", int, where, 0),
        search=_get(section, "search", str, where, "greedy"),
    )


@dataclass(frozen=True)
class PublishConfig:
    """Everything one ``publish`` run needs; validated on construction."""

    input: Path
    rules: tuple[str | dict[str, Any], ...]
    l: int | None = None
    guarantee: str = "l-diversity"
    guarantee_params: dict[str, Any] = field(default_factory=dict)
    delimiter: str | None = None
    missing: str = "error"
    columns: tuple[str, ...] | None = None
    input_format: str | None = None
    hierarchies: tuple[HierarchySpec, ...] = ()
    hierarchy_dir: Path | None = None
    #: The population the input was drawn from (delta-presence, k-map without a fraction).
    population: Path | None = None
    decomposition: str | None = None
    anonymizer: str | None = None
    decomposition_params: dict[str, Any] = field(default_factory=dict)
    anonymizer_params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    format: str = "csv"
    gd_stop_when_worse: bool = False
    gd_max_candidates: int | None = None
    multi_sa_time_limit: float = 60.0
    multi_sa_max_combinations: int = 50_000
    header: bool = True
    names: tuple[str, ...] | None = None
    na_values: tuple[str, ...] = ()
    strip: bool = False
    #: Column -> the format its dates are written in (``--date-format COL=FORMAT``).
    date_formats: dict[str, str] = field(default_factory=dict)
    source: str = "<flags>"
    config_path: Path | None = None
    roles: ColumnRoles = field(default_factory=ColumnRoles)
    extra: dict[str, Any] = field(default_factory=dict)
    #: A collection of anonymized marginals (``[marginals]``; ``versapub marginals publish``).
    marginals: MarginalsSpec | None = None
    #: ``memory`` (default) or ``dask``: where the records are held and counted.
    backend: str = "memory"
    #: The Dask scheduler's address (``tcp://HOST:8786``); none: a LocalCluster on this machine.
    scheduler: str | None = None
    #: A LocalCluster's workers and memory per worker (default: one per core, the memory split).
    workers: int | None = None
    worker_memory: str | None = None
    #: Where the Dask backend keeps its intermediate Parquet files (default: beside the output;
    #: every worker must see it).
    scratch: Path | None = None
    #: A floor: the release is refused when a table's smallest published cell of
    #: non-sensitive values holds fewer than ``k`` records (``check --k``'s test).
    k: int | None = None
    #: A ceiling: the release is refused when a table's prosecutor risk (``risk_measure``:
    #: ``highest`` or ``average``) is above ``max_risk`` (``check --max-risk``'s test).
    max_risk: float | None = None
    risk_measure: str = "highest"
    #: With ``k``: the share of records the recoding that meets it may remove instead of
    #: generalizing further (ARX's suppression limit; ``[privacy] suppression``).
    suppression: float = 0.0
    #: The key variables the floor counts (``--keys``, ``[privacy] keys``; ``None``: every
    #: exactly published column), how its suppression works (``remove`` or ``cells``) and the
    #: keys' importance for local suppression, most important first.
    keys: tuple[str, ...] | None = None
    suppression_mode: str = "remove"
    importance: tuple[str, ...] = ()
    #: What the floor counts (``--unit``, ``[privacy] unit``): ``record`` or ``household``.
    unit: str = "record"
    #: Treatments applied to the input in order before anything else (``--treat``, TOML
    #: ``[[treatment]]``; :mod:`versapub.treatments`): specs ``NAME:p=v,...`` or tables.
    treatments: tuple[Any, ...] = ()
    #: A ceiling on every table's measured singling-out risk (the attacks on everything
    #: published, ``check --max-singling-out``'s test).
    max_singling_out: float | None = None
    #: Record the input's and hierarchies' absolute paths in the release (internal use); by
    #: default only their file names are recorded (a path can itself be confidential).
    record_input_path: bool = False
    #: The classic job (quasi-identifiers, no rule): publish the other columns in a plain table
    #: of their own rather than in each record's row of the generalized table.
    detach_others: bool = False
    #: How the configuration file was read, in words (an alias spelling, ...): release notes.
    notes: tuple[str, ...] = ()
    #: A differentially private release instead of a syntactic one (``--mechanism``, TOML
    #: ``[privacy] mechanism``; :mod:`versapub.mechanisms`): a spec ``dp:epsilon=1,...`` or a table.
    mechanism: Any = None
    #: Each column's declared domain for the mechanism (``--domain COL=FILE``, TOML
    #: ``[privacy.domains]``): public knowledge, never read from the data.
    domains: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def recorded(self, path: Path) -> str:
        """How a file the job read is named in the release: its name, or with
        ``record_input_path`` its absolute path."""
        return str(path.resolve()) if self.record_input_path else path.name

    def read_files(self) -> tuple[str, ...]:
        """The absolute paths of every file the job reads (input, hierarchies, this
        configuration): never overwritten, never recorded unless asked."""
        files = [self.input, *(h.file for h in self.hierarchies), *([self.config_path] if self.config_path else [])]
        files += [self.population] if self.population is not None else []
        if self.hierarchy_dir is not None and self.hierarchy_dir.is_dir():
            files += [h.file for h in hierarchies_in(self.hierarchy_dir)]
        return tuple(str(f.resolve()) for f in files)

    def __post_init__(self) -> None:
        MissingPolicy.parse(self.missing)
        if self.format not in ("csv", "parquet"):
            raise ConfigError(f"{self.source}: output format must be csv or parquet, got {self.format!r}.")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ConfigError(f"{self.source}: seed must be a whole number >= 0, got {self.seed!r}.")
        if self.l is not None and (isinstance(self.l, bool) or not isinstance(self.l, int)):
            raise ConfigError(f"{self.source}: l must be a whole number, got {self.l!r}.")
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 2):
            raise ConfigError(
                f"{self.source}: k must be a whole number >= 2 (every table's smallest published cell "
                f"of non-sensitive values holds at least k records), got {self.k!r}."
            )
        check_max_risk(self.max_risk, self.risk_measure, str(self.source))
        s = self.suppression
        if isinstance(s, bool) or not isinstance(s, int | float) or not 0 <= s < 1:
            raise ConfigError(
                f"{self.source}: suppression is the share of records --k may remove instead of generalizing "
                f"further, in [0, 1) (0.02: at most 2 %), got {s!r}."
            )
        if self.delimiter is not None and (not self.delimiter or self.delimiter.strip("\r\n") != self.delimiter):
            raise ConfigError(f"{self.source}: the delimiter must be non-empty text without line breaks.")
        if self.backend not in BACKENDS:
            raise ConfigError(f"{self.source}: backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}.")
        if self.workers is not None and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1
        ):
            raise ConfigError(f"{self.source}: workers must be a whole number >= 1, got {self.workers!r}.")
        if self.backend == "memory" and (self.scheduler or self.workers or self.worker_memory):
            raise ConfigError(f"{self.source}: --scheduler, --workers and --worker-memory are for --backend dask.")
        seen: dict[str, HierarchySpec] = {}
        for h in self.hierarchies:
            if h.attribute in seen:
                raise ConfigError(
                    f"{self.source}: attribute {h.attribute!r} has two hierarchies ({seen[h.attribute].file} and "
                    f"{h.file}); give one per attribute (with :LEVEL to generalize it when reading, without to hand "
                    "it to the anonymizer)."
                )
            seen[h.attribute] = h

    def guarantee_spec(self) -> dict[str, Any]:
        """The guarantee as ``{"name": ..., params}``: ``l`` is the short form of
        l-diversity's parameter (default 2 when nothing else is given)."""
        spec: dict[str, Any] = {"name": self.guarantee, **self.guarantee_params}
        if self.l is not None:
            spec["l"] = self.l
        elif spec["name"] in ("l-diversity", "ldiversity", "frequency-l-diversity") and "l" not in spec:
            spec["l"] = 2
        return spec

    def plugin_defaults(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The ``[publish]`` shorthand keys as parameters of the plug-in they name (taken
        when that plug-in is chosen; ``[publish.decomposition]``/``[publish.anonymizer]``
        parameters win): ``gd_*`` for GD, ``multi_sa_*`` for the multi-SA anonymizer."""
        gd: dict[str, Any] = {"stop_when_worse": self.gd_stop_when_worse}
        if self.gd_max_candidates is not None:
            gd["max_candidates"] = self.gd_max_candidates
        return {
            ("decomposition", "gd"): gd,
            ("anonymizer", "multi-sa"): {
                "time_limit_s": self.multi_sa_time_limit,
                "max_combinations": self.multi_sa_max_combinations,
            },
        }

    def guarantee_given(self) -> bool:
        """Whether a release guarantee was configured (else the anonymizer's own default
        applies where it has one, e.g. msa-decomposition's ``l_per``)."""
        return self.l is not None or self.guarantee != "l-diversity" or bool(self.guarantee_params)

    def read_options(self) -> ReadOptions:
        """How the input is read, as configured (hierarchies with a level applied when read)."""
        return ReadOptions(
            delimiter=self.delimiter,
            missing=MissingPolicy.parse(self.missing),
            columns=None if self.columns is None else tuple(self.columns),
            hierarchies={h.attribute: (h.load(), h.level) for h in self.hierarchies if h.level is not None},
            format=self.input_format,
            header=self.header,
            names=None if self.names is None else tuple(self.names),
            na_values=tuple(self.na_values),
            strip=self.strip,
            date_formats=dict(self.date_formats),
        )

    def read(self) -> EncodedTable:
        """Read and encode the input as configured (hierarchies applied)."""
        return read_table(self.input, self.read_options())

    def _load(self, spec: HierarchySpec) -> Hierarchy:
        """A hierarchy as read, its dates in ISO 8601 when its column has a date format."""
        h = spec.load()
        fmt = self.date_formats.get(spec.attribute)
        return dated_hierarchy(h, fmt) if fmt else h

    def anonymizer_hierarchies(self, attributes: tuple[str, ...] | list[str]) -> dict[str, Hierarchy]:
        """The hierarchies without a level, for the anonymizer and the guarantee: those of
        ``--hierarchies DIR`` for the table's attributes (others ignored), then the ones
        given one by one (which must name an attribute of the table)."""
        from versapub.errors import HierarchyError

        out = {}
        if self.hierarchy_dir is not None:
            levelled = {h.attribute for h in self.hierarchies}
            out = {
                h.attribute: self._load(h)
                for h in match_hierarchies(self.hierarchy_dir, attributes).specs
                if h.attribute not in levelled
            }
        for h in self.hierarchies:
            if h.level is None:
                if h.attribute not in attributes:
                    raise HierarchyError(
                        f"--hierarchy {h.attribute}={h.file}: the table has no column {h.attribute!r} "
                        f"(columns: {', '.join(attributes)})."
                    )
                out[h.attribute] = self._load(h)
        return out

    def _hierarchy_paths(self, attributes: tuple[str, ...] | list[str]) -> dict[str, Path]:
        out = {}
        if self.hierarchy_dir is not None:
            levelled = {h.attribute for h in self.hierarchies}
            out = {
                h.attribute: h.file
                for h in match_hierarchies(self.hierarchy_dir, attributes).specs
                if h.attribute not in levelled
            }
        out.update({h.attribute: h.file for h in self.hierarchies if h.level is None})
        return out

    def hierarchy_notes(self, attributes: tuple[str, ...] | list[str]) -> list[str]:
        """Which file of ``--hierarchies DIR`` was loaded for which column, and which were not used."""
        return match_hierarchies(self.hierarchy_dir, attributes).notes() if self.hierarchy_dir is not None else []

    def date_notes(self) -> list[str]:
        """How each column with a date format was read and is published."""
        return [
            f"column {c!r} read as dates written {f} and published in ISO 8601 (YYYY-MM-DD), in time order"
            for c, f in self.date_formats.items()
        ]

    def hierarchy_files(self, attributes: tuple[str, ...] | list[str]) -> dict[str, str]:
        """Where :meth:`anonymizer_hierarchies` read each hierarchy, as recorded
        (:meth:`recorded`: the file name by default)."""
        return {a: self.recorded(f) for a, f in self._hierarchy_paths(attributes).items()}

    def hierarchy_digests(self, attributes: tuple[str, ...] | list[str]) -> dict[str, str]:
        """The SHA-256 of each file :meth:`hierarchy_files` names (to find it again by name)."""
        return {a: file_sha256(f) for a, f in self._hierarchy_paths(attributes).items()}

    def input_settings(self) -> dict[str, Any]:
        """How the input was read, as recorded in the manifest's ``input`` (so that the
        original can be read the same way later, see :func:`original_reader`)."""
        return {
            "missing_policy": self.missing,
            "hierarchies": {
                h.attribute: {
                    "file": self.recorded(h.file),
                    "sha256": file_sha256(h.file),
                    "level": h.level,
                    "delimiter": h.delimiter,
                }
                for h in self.hierarchies
                if h.level is not None
            },
            "delimiter": self.delimiter,
            "columns": list(self.columns) if self.columns is not None else None,
            "format": self.input_format,
            "header": self.header,
            "names": list(self.names) if self.names is not None else None,
            "na_values": list(self.na_values),
            "strip": self.strip,
            "date_formats": dict(self.date_formats),
        }

    def with_overrides(self, **changes: Any) -> PublishConfig:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _names(section: dict[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    """``[privacy] keys``/``importance``: a list of column names (``None`` when absent)."""
    raw = _get(section, key, list, where)
    if raw is not None and not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{where}: [privacy] {key} must be a list of column names.")
    return None if raw is None else tuple(raw)


def _date_formats(inp: dict[str, Any], where: str) -> dict[str, str]:
    """``[input] date_formats = { admitted = "%d/%m/%Y" }``, each format checked."""
    raw = _get(inp, "date_formats", dict, where, {})
    if not all(isinstance(v, str) for v in raw.values()):
        raise ConfigError(f'{where}: [input] date_formats maps columns to formats, e.g. {{ admitted = "%d/%m/%Y" }}.')
    return require_formats(raw)


def check_max_risk(max_risk: float | None, measure: str, where: str) -> None:
    """``max_risk`` a probability in (0, 1] and ``measure`` a prosecutor measure (one paragraph otherwise)."""
    if max_risk is not None and (
        isinstance(max_risk, bool) or not isinstance(max_risk, (int, float)) or not 0 < max_risk <= 1
    ):
        raise ConfigError(
            f"{where}: max_risk is the largest prosecutor re-identification risk allowed, a probability in (0, 1] "
            f"(0.2: every record in a class of at least 5 with risk_measure = 'highest'), got {max_risk!r}."
        )
    if measure not in ("highest", "average"):  # the verifier's Requirement keeps its own list
        raise ConfigError(
            f"{where}: risk_measure is 'highest' (1 / the smallest class) or 'average' (classes / records), "
            f"got {measure!r}."
        )


def _get(section: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str, default: Any = None) -> Any:
    if key not in section:
        return default
    value = section[key]
    if not isinstance(value, typ) or (isinstance(value, bool) and typ is int):
        raise ConfigError(f"{where}: '{key}' has the wrong type ({type(value).__name__}: {value!r}).")
    return value


def _plugin(section: dict[str, Any], key: str, where: str, default: str | None) -> tuple[Any, dict[str, Any]]:
    """``key = "name"`` or a table ``[publish.key]`` with ``name`` and the parameters."""
    raw = section.get(key, default)
    if isinstance(raw, dict):
        if not isinstance(raw.get("name"), str):
            raise ConfigError(f'{where}: [publish.{key}] needs name = "...".')
        return raw["name"], {k: v for k, v in raw.items() if k != "name"}
    if raw is not None and not isinstance(raw, str):
        raise ConfigError(f"{where}: [publish] {key} must be a name or a table [publish.{key}].")
    return raw, {}


def _roles_of(
    lists: dict[str, list[str]],
    allow_unique: list[str],
    others: str | None,
    allow_proxy: list[str],
    where: str,
    household: str | None = None,
) -> ColumnRoles:
    try:
        return ColumnRoles.from_mapping(lists, allow_unique, others, allow_proxy, household)
    except VersapubError as exc:
        raise ConfigError(f"{where}: [columns] {exc}") from None


def load_config(path: str | Path) -> PublishConfig:
    """Parse a TOML publishing configuration; relative paths are relative to the file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"Configuration file {p} does not exist.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Configuration file {p} is not valid TOML: {exc}.") from None
    return parse_config(text, p)


def _rules_and_guarantee(priv: dict[str, Any], where: str) -> tuple[list[Any], tuple[str, dict[str, Any]]]:
    """``[privacy]``'s rules and the release guarantee's name and parameters."""
    rules = _get(priv, "rules", list, where, [])
    g_raw = priv.get("guarantee", "l-diversity")
    if isinstance(g_raw, dict):
        if "name" not in g_raw or not isinstance(g_raw["name"], str):
            raise ConfigError(f'{where}: [privacy.guarantee] needs name = "..." (e.g. "l-diversity").')
        g_name, g_params = g_raw["name"], {k: v for k, v in g_raw.items() if k != "name"}
    elif isinstance(g_raw, str):
        g_name, g_params = g_raw, {}
    else:
        raise ConfigError(f"{where}: [privacy] guarantee must be a name or a table [privacy.guarantee].")
    if not all(isinstance(r, str | dict) for r in rules):
        raise ConfigError(
            f"{where}: [privacy] rules must be a list of strings like 'a, b -> c', or tables with their own "
            "guarantee like {rule = 'zip, sex -> diagnosis', guarantee = 't-closeness', t = 0.2}."
        )
    return rules, (g_name, g_params)


def _hierarchy_specs(inp: dict[str, Any], base: Path, where: str) -> list[HierarchySpec]:
    """``[input.hierarchies.ATTR]``: each hierarchy's file (relative to the configuration's
    folder), level and delimiter."""
    out = []
    for attr, spec in _get(inp, "hierarchies", dict, where, {}).items():
        if not isinstance(spec, dict) or "file" not in spec:
            raise ConfigError(
                f"{where}: [input.hierarchies.{attr}] needs 'file' (ARX CSV) and, to generalize the column "
                "when reading, 'level' (an integer)."
            )
        out.append(HierarchySpec(attr, base / str(spec["file"]), spec.get("level"), str(spec.get("delimiter", ";"))))
    return out


def parse_config(text: str, path: str | Path) -> PublishConfig:
    """A TOML publishing configuration from its text, as if read from ``path`` (relative
    paths are relative to its folder; the file itself need not exist: the web interface
    checks a job before saving it)."""
    p = Path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Configuration file {p} is not valid TOML: {exc}.") from None
    where = str(p)
    notes = check_sections(data, where)
    inp = data.get("input", {})
    priv = data.get("privacy", {})
    pub = data.get("publish", {})
    if "path" not in inp:
        raise ConfigError(f"{where}: [input] needs 'path', the data file to publish.")
    base = p.parent
    rules, (g_name, g_params) = _rules_and_guarantee(priv, where)
    hier_specs = _hierarchy_specs(inp, base, where)
    hdir = _get(inp, "hierarchy_dir", str, where)
    columns = _get(inp, "columns", list, where)
    dec_name, dec_params = _plugin(pub, "decomposition", where, None)
    anon_name, anon_params = _plugin(pub, "anonymizer", where, None)
    cols_section = data.get("columns", {})
    others, household = _get(cols_section, "others", str, where), _get(cols_section, "household", str, where)
    role_lists = {
        k.replace("_", "-") if k == "quasi_identifying" else k: _get(cols_section, k, list, where, [])
        for k in SECTIONS["columns"]
        if k not in ("others", "household")
    }
    if not all(isinstance(x, str) for v in role_lists.values() for x in v):
        raise ConfigError(f"{where}: [columns] roles must be lists of column names.")
    allow_unique = role_lists.pop("allow_unique")
    allow_proxy = role_lists.pop("allow_proxy")
    if not rules and role_lists["quasi-identifying"] and role_lists["sensitive"]:  # as --qi with --sensitive
        from versapub.privacy.rules import format_attribute

        qi = ", ".join(format_attribute(a) for a in role_lists["quasi-identifying"])
        rules = [f"{qi} -> {format_attribute(s)}" for s in role_lists["sensitive"]]
    names = _get(inp, "names", list, where)
    na_values = _get(inp, "na_values", list, where, [])
    for key, lst in (("columns", columns), ("names", names), ("na_values", na_values)):
        if lst is not None and not all(isinstance(x, str) for x in lst):
            raise ConfigError(f"{where}: [input] {key} must be a list of strings.")
    return PublishConfig(
        input=base / str(inp["path"]),
        rules=tuple(rules),
        l=_get(priv, "l", int, where),
        k=_get(priv, "k", int, where),
        max_risk=_get(priv, "max_risk", (int, float), where),
        suppression=_get(priv, "suppression", (int, float), where, 0.0),
        keys=_names(priv, "keys", where),
        suppression_mode=_get(priv, "suppression_mode", str, where, "remove"),
        importance=_names(priv, "importance", where) or (),
        unit=_get(priv, "unit", str, where, "record"),
        treatments=tuple(dict(t) for t in data.get("treatment", [])),
        mechanism=_mechanism(priv, where),
        domains=_domains(priv, base, where),
        max_singling_out=_get(priv, "max_singling_out", (int, float), where),
        risk_measure=_get(priv, "risk_measure", str, where, "highest"),
        record_input_path=_get(pub, "record_input_path", bool, where, False),
        detach_others=_get(pub, "detach_others", bool, where, False),
        notes=tuple(notes),
        guarantee=g_name,
        guarantee_params=g_params,
        delimiter=_get(inp, "delimiter", str, where),
        missing=_get(inp, "missing", str, where, "error"),
        columns=tuple(columns) if columns is not None else None,
        input_format=_get(inp, "format", str, where),
        header=_get(inp, "header", bool, where, True),
        names=tuple(names) if names is not None else None,
        na_values=tuple(na_values),
        strip=_get(inp, "strip", bool, where, False),
        date_formats=_date_formats(inp, where),
        hierarchies=tuple(hier_specs),
        hierarchy_dir=base / hdir if hdir is not None else None,
        population=base / pop if (pop := _get(inp, "population", str, where)) is not None else None,
        decomposition=dec_name,
        decomposition_params=dec_params,
        anonymizer=anon_name,
        anonymizer_params=anon_params,
        seed=_get(pub, "seed", int, where, None),
        format=_get(pub, "format", str, where, "csv"),
        gd_stop_when_worse=_get(pub, "gd_stop_when_worse", bool, where, False),
        gd_max_candidates=_get(pub, "gd_max_candidates", int, where),
        multi_sa_time_limit=float(_get(pub, "multi_sa_time_limit", (int, float), where, 60.0)),
        multi_sa_max_combinations=_get(pub, "multi_sa_max_combinations", int, where, 50_000),
        source=where,
        config_path=p,
        roles=_roles_of(role_lists, allow_unique, others, allow_proxy, where, household),
        marginals=marginals_spec(data["marginals"], where) if "marginals" in data else None,
        backend=_get(pub, "backend", str, where, "dask" if "scheduler" in pub else "memory"),
        scheduler=_get(pub, "scheduler", str, where),
        workers=_get(pub, "workers", int, where),
        worker_memory=_get(pub, "worker_memory", str, where),
        scratch=base / _get(pub, "scratch", str, where) if "scratch" in pub else None,
    )


def original_reader(
    manifest: Mapping[str, Any],
    path: Path | None = None,
    missing: str | None = None,
    release_dir: Path | None = None,
    columns: Sequence[str] | None = None,
    within: Path | None = None,
    households: bool = False,
) -> PublishConfig:
    """How to read the original table of a release: ``path`` (a data file read with the
    settings the manifest records — delimiter, header, names, markers, hierarchies and
    levels, missing policy — or the TOML configuration it was published with), or by
    default the input the manifest records, found by name beside ``release_dir`` or in the
    current directory (:mod:`versapub.io.locate`).  Only the release's attributes are read,
    so an original with extra columns is projected — only those of them in ``columns`` when
    given, unless the missing policy drops records (which then depends on every column);
    ``missing`` overrides the policy.  ``within``: the input and hierarchies the manifest
    records are looked for only inside that folder (the web server's root); ``households``: also
    the household id column the manifest names (``check``: what was done per household)."""
    from versapub.io.locate import locate

    raw = manifest.get("input")
    inp: dict[str, Any] = raw if isinstance(raw, dict) else {}
    attrs = [str(a) for a in manifest.get("attributes") or []]
    if path is not None and path.suffix.lower() == ".toml":
        cfg = load_config(path)
    else:
        if path is None and not inp.get("path"):
            raise ConfigError(
                "The release does not record its input; give the original table with --original "
                "(a CSV/Parquet file, or the TOML config it was published with)."
            )
        if path is not None:
            src = path
        else:
            found = locate(str(inp["path"]), release_dir, inp.get("sha256"), within)
            if found.path is None:
                how = ". Give the original with --original (a CSV/Parquet file, or the job's TOML configuration)."
                raise ConfigError(found.explain(str(inp["path"]), "its input") + how)
            src = found.path
        specs = []
        try:
            for a, h in (inp.get("hierarchies") or {}).items():
                got = locate(str(h["file"]), release_dir, h.get("sha256"), within)
                if got.path is None:
                    raise ConfigError(
                        got.explain(str(h["file"]), f"the hierarchy of {a!r}") + ". Put it beside the "
                        "release, or give the TOML configuration the release was published with as "
                        "--original."
                    )
                specs.append(HierarchySpec(a, got.path, int(h["level"]), str(h.get("delimiter", ";"))))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ConfigError(
                "The manifest's input.hierarchies is malformed (each needs 'file' and 'level'); give the TOML "
                "configuration the release was published with as --original."
            ) from None
        names = inp.get("names")
        cfg = PublishConfig(
            input=src,
            rules=(),
            delimiter=inp.get("delimiter"),
            missing=str(inp.get("missing_policy") or "error"),
            input_format=inp.get("format"),
            hierarchies=tuple(specs),
            header=bool(inp.get("header", True)),
            names=tuple(names) if names else None,
            na_values=tuple(inp.get("na_values") or ()),
            strip=bool(inp.get("strip", False)),
            date_formats={str(k): str(v) for k, v in (inp.get("date_formats") or {}).items()},
            source=str(src),
        )
    block = manifest.get("household")  # the households' id: the verifier reads what was done per household
    if households and isinstance(block, dict) and isinstance(block.get("column"), str) and columns is None and attrs:
        attrs.append(block["column"])
    cfg = cfg.with_overrides(missing=missing, columns=tuple(attrs) if attrs else None)
    if columns is not None and cfg.missing != "drop":
        want = set(columns)
        keep = [a for a in (cfg.columns or attrs) if a in want]
        if keep:
            held = tuple(h for h in cfg.hierarchies if h.attribute in want)
            cfg = replace(cfg, columns=tuple(keep), hierarchies=held)
    return cfg
