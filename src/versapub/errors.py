"""Error types.

Every failure a user can cause (bad input, an infeasible rule, a broken hierarchy,
a corrupt release) is raised as a :class:`VersapubError` whose message is one
self-contained paragraph naming the column, value, rule or file at fault.  The CLI
prints that paragraph and exits non-zero; anything else is a bug.
"""

from __future__ import annotations


class VersapubError(Exception):
    """Base class of every error the user can cause; its message is the paragraph shown."""

    exit_code = 2


class InputError(VersapubError):
    """The input table cannot be read or encoded (headers, encoding, missing cells, ...)."""


class HierarchyError(VersapubError):
    """A generalization hierarchy is malformed or does not cover the data."""


class RuleError(VersapubError):
    """A privacy rule is malformed or names an unknown attribute."""


class InfeasibleError(VersapubError):
    """A privacy rule cannot be satisfied even by publishing its sensitive attribute alone."""


class ConfigError(VersapubError):
    """A configuration file is malformed."""


class ClusterError(VersapubError):
    """The Dask cluster failed while publishing (a worker died, the scheduler went away)."""

    exit_code = 5


class ReleaseError(VersapubError):
    """A release directory is missing, incomplete or would be overwritten."""


class VerificationError(VersapubError):
    """A release failed verification; nothing was written."""

    exit_code = 3


class RequirementError(VersapubError):
    """A release meets its guarantees but not a requirement the steward set that is measured
    on the release rather than built into it (``--max-singling-out``, ``--max-risk`` with the
    average risk): refused like bad input (exit 2), nothing written, with the ways out."""


class SchemaError(VersapubError):
    """A decomposition produced a schema that is not in Guardian Normal Form (a bug)."""

    exit_code = 4


class MissingCellsError(InputError):
    """The input has missing cells and the policy is ``error`` (every column named)."""


class Refused(InputError):
    """Several problems stop a job before anonymizing: every one reported at once, each in a
    section with its way out (``sections``: the original errors, in the order found)."""

    def __init__(self, sections: list[tuple[str, VersapubError]]) -> None:
        self.sections = sections
        parts = [f"({i}) {title}: {exc}" for i, (title, exc) in enumerate(sections, start=1)]
        super().__init__(
            f"This job cannot be published yet: {len(sections)} problems, each with its way out.\n\n"
            + "\n\n".join(parts)
        )


def refusal(sections: list[tuple[str, VersapubError]]) -> VersapubError:
    """The error to raise for these problems: the one problem as it is, several as one
    :class:`Refused`."""
    return sections[0][1] if len(sections) == 1 else Refused(sections)


def refuse(sections: list[tuple[str, VersapubError]]) -> None:
    """Raise :func:`refusal` of the problems; nothing when there are none."""
    if sections:
        raise refusal(sections)
