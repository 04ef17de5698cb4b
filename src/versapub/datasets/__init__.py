"""Embedded data: the paper's running example, Adult (Table 5a domains), New York SPARCS
discharges and the synthetic ``texas_like`` generator.  Provenance: ``data/PROVENANCE.md``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from versapub.data.table import EncodedTable
from versapub.datasets.texas import (
    TEXAS_LIKE_DOMAINS,
    TEXAS_LIKE_RULES,
    texas_like,
    texas_like_parts,
    write_texas_like,
    write_texas_like_parquet,
)
from versapub.io.config import PublishConfig, load_config
from versapub.io.read import read_table

#: Rules 1–3 of the running example (§1.2 of Jin et al.).
RUNNING_EXAMPLE_RULES = (
    "age, ICD-9-CM -> race",
    "gender, ICD-9-CM -> zipcode",
    "hospital, race -> zipcode",
)


def data_path(*parts: str) -> Path:
    """Path of an embedded data file."""
    return Path(str(resources.files("versapub.datasets").joinpath("data", *parts)))


def running_example() -> EncodedTable:
    """Table 1 of Jin et al. (6 hospital discharges: hospital, age, gender, zipcode, race, ICD-9-CM)."""
    return read_table(data_path("running_example.csv"))


def adult_config() -> PublishConfig:
    """The default job: Adult generalized to Table 5a's domains, four rules, l = 2."""
    return load_config(data_path("adult", "adult.toml"))


def adult() -> EncodedTable:
    """UCI Adult (30,162 records), 7 attributes generalized to Table 5a's domains."""
    return adult_config().read()


#: The columns of the UCI Adult files (they have no header).
ADULT_UCI_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)


def adult_uci(columns: tuple[str, ...] | None = None) -> EncodedTable:
    """The raw UCI Adult training file with the records that have a missing cell (``?``)
    dropped (a missing cell in any column): 30,162 records, 15 attributes (or ``columns``),
    values as in the file."""
    table = read_table(
        data_path("adult_uci", "adult.data.gz"),
        header=False,
        names=ADULT_UCI_COLUMNS,
        delimiter=", ",
        na_values=("?",),
        missing="drop",
    )
    return table if columns is None else table.select(columns)


def sparcs() -> EncodedTable:
    """New York SPARCS 2020 inpatient discharges (339,006 records, 12 attributes): adults,
    elective admissions, discharged alive — real hospital data standing in for the Texas
    file of the paper's §6.3.  Provenance: ``data/PROVENANCE.md``."""
    return read_table(data_path("sparcs", "sparcs2020_survivorset.csv.gz"))


__all__ = [
    "ADULT_UCI_COLUMNS",
    "RUNNING_EXAMPLE_RULES",
    "TEXAS_LIKE_DOMAINS",
    "TEXAS_LIKE_RULES",
    "adult",
    "adult_config",
    "adult_uci",
    "data_path",
    "running_example",
    "sparcs",
    "texas_like",
    "texas_like_parts",
    "write_texas_like",
    "write_texas_like_parquet",
]
