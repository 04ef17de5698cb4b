"""versapub — versatile privacy-preserving publishing of microdata.

Publish a table under many privacy rules ``Q -> S`` at once: decompose it into
sub-tables in Guardian Normal Form, anonymize each with a single-rule algorithm, verify
the release from its own files, and write it in the documented ``versapub-release/1``
format.

>>> import versapub
>>> table = versapub.datasets.running_example()
>>> release = versapub.publish(table, ["age, ICD-9-CM -> race"], l=2, seed=1)
>>> [t.name for t in release.tables]
['T1', 'T2']
"""

__version__ = "0.1.0"

from versapub import datasets
from versapub.api import publish
from versapub.data import EncodedTable, Hierarchy, MissingPolicy
from versapub.errors import VersapubError
from versapub.io.config import PublishConfig, load_config
from versapub.io.read import read_table
from versapub.io.release_reader import load_release
from versapub.io.release_writer import write_release
from versapub.model import ReleaseModel, model_from_release
from versapub.privacy import LDiversity, Rule, parse_rule, reduce_rules
from versapub.release import Release
from versapub.schema import Schema, SubTable, check_gnf

__all__ = [
    "EncodedTable",
    "Hierarchy",
    "LDiversity",
    "MissingPolicy",
    "PublishConfig",
    "Release",
    "ReleaseModel",
    "Rule",
    "Schema",
    "SubTable",
    "VersapubError",
    "__version__",
    "check_gnf",
    "datasets",
    "load_config",
    "load_release",
    "model_from_release",
    "parse_rule",
    "publish",
    "read_table",
    "reduce_rules",
    "write_release",
]
