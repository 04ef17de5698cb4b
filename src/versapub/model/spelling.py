"""Names and values a release does not have, refused with the closest spellings ("did you
mean 'Female'?") — one wording for the query language and the model's Python methods."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from versapub.errors import ReleaseError


def unknown_attribute(name: str, attributes: Iterable[str]) -> ReleaseError:
    """The error for an attribute the release does not have."""
    names = [str(a) for a in attributes]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(map(repr, close))}? " if close else ""
    return ReleaseError(
        f"The query names attribute {name!r}, which the release does not have; {hint}"
        f"its attributes are: {', '.join(map(repr, names))}."
    )


def unknown_value(attribute: str, value: str, domain: Sequence[str]) -> ReleaseError:
    """The error for a value that never occurs in the attribute as published."""
    same_case = [d for d in domain if d.lower() == value.lower()]
    close = same_case or difflib.get_close_matches(value, list(domain), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    listing = f" Its values: {', '.join(map(repr, domain))}." if len(domain) <= 12 else ""
    return ReleaseError(
        f"The value {value!r} does not occur in attribute {attribute!r} of the release, so the condition "
        f"would match nothing.{hint}{listing}"
    )
