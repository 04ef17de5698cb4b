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

from importlib import import_module
from typing import TYPE_CHECKING, Any

from versapub._version import __version__

#: Public names and the module each comes from; imported on first use, so that the
#: command line starts fast (its --help and input errors need none of the heavy engines).
_EXPORTS = {
    "datasets": "versapub.datasets",
    "inspect": "versapub.inspect",
    "workflow": "versapub.workflow",
    "publish": "versapub.api",
    "publish_dp": "versapub.api",
    "EncodedTable": "versapub.data",
    "Hierarchy": "versapub.data",
    "MissingPolicy": "versapub.data",
    "VersapubError": "versapub.errors",
    "PublishConfig": "versapub.io.config",
    "load_config": "versapub.io.config",
    "read_table": "versapub.io.read",
    "ReadOptions": "versapub.data.reading",
    "load_release": "versapub.kinds.load",
    "write_release": "versapub.workflow",
    "ReleaseModel": "versapub.model",
    "model_from_release": "versapub.kinds.build",
    "LDiversity": "versapub.privacy",
    "Rule": "versapub.privacy",
    "parse_rule": "versapub.privacy",
    "reduce_rules": "versapub.privacy",
    "Release": "versapub.release",
    "Schema": "versapub.schema",
    "SubTable": "versapub.schema",
    "check_gnf": "versapub.schema",
    "ColumnRoles": "versapub.privacy.screens.roles",
    "Privacy": "versapub.publishing.request",
    "Method": "versapub.publishing.request",
}

#: Exports that are modules (``versapub.inspect.evaluate(...)``), not names inside one.
_MODULES = {"datasets", "inspect", "workflow"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = import_module(_EXPORTS[name])
        value = module if name in _MODULES else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'versapub' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:
    from versapub import datasets, inspect, workflow
    from versapub.api import publish, publish_dp
    from versapub.data import EncodedTable, Hierarchy, MissingPolicy
    from versapub.data.reading import ReadOptions
    from versapub.errors import VersapubError
    from versapub.io.config import PublishConfig, load_config
    from versapub.io.read import read_table
    from versapub.kinds.build import model_from_release
    from versapub.kinds.load import load_release
    from versapub.model import ReleaseModel
    from versapub.privacy import LDiversity, Rule, parse_rule, reduce_rules
    from versapub.privacy.screens.roles import ColumnRoles
    from versapub.publishing.request import Method, Privacy
    from versapub.release import Release
    from versapub.schema import Schema, SubTable, check_gnf
    from versapub.workflow import write_release

__all__ = [
    "ColumnRoles",
    "EncodedTable",
    "Hierarchy",
    "LDiversity",
    "Method",
    "MissingPolicy",
    "Privacy",
    "PublishConfig",
    "ReadOptions",
    "Release",
    "ReleaseModel",
    "Rule",
    "Schema",
    "SubTable",
    "VersapubError",
    "__version__",
    "check_gnf",
    "datasets",
    "inspect",
    "load_config",
    "load_release",
    "model_from_release",
    "parse_rule",
    "publish",
    "publish_dp",
    "read_table",
    "reduce_rules",
    "workflow",
    "write_release",
]
