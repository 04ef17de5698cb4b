"""Building registered plug-ins with their parameters (scikit-learn style: parameters only
in the constructor).  One function for anonymizers, decompositions and guarantees, so an
unknown name or parameter is always the same kind of one-paragraph error, listing what is
valid."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from versapub.errors import ConfigError

T = TypeVar("T")


def parameters(factory: Callable[..., Any]) -> list[str]:
    """The constructor's parameter names."""
    return [p for p in inspect.signature(factory).parameters if p != "self"]


def build(
    what: str,
    registry: Mapping[str, Callable[..., T]],
    name: str,
    params: Mapping[str, Any] | None = None,
    aliases: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
) -> T:
    """``registry[name](**params)``; ``aliases`` map other names to a registered name with
    fixed parameters (e.g. ``anatomy-wraparound`` -> ``anatomy`` with ``grouping``)."""
    key = str(name).strip().lower()
    fixed: dict[str, Any] = {}
    if aliases and key in aliases:
        key, preset = aliases[key]
        fixed = dict(preset)
    if key not in registry:
        names = sorted({*registry, *(aliases or {})})
        raise ConfigError(f"Unknown {what} {name!r}; available: {', '.join(names)}.")
    factory = registry[key]
    given = {**fixed, **dict(params or {})}
    valid = parameters(factory)
    unknown = sorted(set(given) - set(valid))
    if unknown:
        listed = ", ".join(valid) if valid else "none"
        raise ConfigError(
            f"The {what} {key!r} has no parameter(s) {', '.join(map(repr, unknown))}; its parameters are: {listed}."
        )
    try:
        return factory(**given)
    except (TypeError, ValueError) as exc:  # e.g. a number given as text
        raise ConfigError(f"The {what} {key!r} cannot be built with {given}: {exc}.") from None


def parse_spec(text: str, flag: str) -> tuple[str, dict[str, Any]]:
    """``"NAME:p=v,q=w"`` (the command-line form of a plug-in with parameters) -> name and
    parameters; values become booleans, integers or floats when they read as one."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise ConfigError(f"{flag} {text!r}: give a name, e.g. {flag} NAME:param=value.")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"{flag} {text!r}: parameters are key=value pairs separated by commas.")
        params[key.strip().replace("-", "_")] = _value(value.strip())
    return name.strip().lower(), params


def _value(text: str) -> Any:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.lower() in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            continue
    return text
