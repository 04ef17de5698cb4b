"""Building registered plug-ins with their parameters (scikit-learn style: parameters only
in the constructor, constraints declared beside them).  One parser and one builder for
anonymizers, decompositions and guarantees, so that an unknown name, an unknown or missing
parameter and a value out of range are always the same kind of one-paragraph error, naming
the parameter and listing what is valid.

A plug-in class declares ``parameter_constraints`` — parameter name -> :class:`Param` — and
checks its values with :func:`validated` when built directly from Python; :func:`build`
checks them before construction when a plug-in is built from a configuration or the command
line (``--anonymizer incognito:suppression=0.02``)."""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from versapub.errors import ConfigError, VersapubError

T = TypeVar("T")

Kind = Literal["whole", "number", "numbers", "flag", "choice", "text", "names"]


@dataclass(frozen=True)
class Param:
    """A parameter's constraint: ``whole`` (an integer), ``number`` (a real), ``numbers`` (a
    list of reals, each within the bounds), ``flag`` (true or false), ``choice`` (one of
    ``choices``), ``text`` or ``names`` (column names: a list, or one text with the names
    separated by ``;``: ``columns=amount;installment``); numbers within ``[low, high]``
    (open ends with ``low_open``/``high_open``); ``optional``: None is accepted; ``required``:
    the parameter has no default; ``why``: what the bound means, added to the error."""

    kind: Kind
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False
    required: bool = False
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("whole", "number", "numbers", "flag", "choice", "text", "names"):
            raise ValueError(f"unknown parameter kind {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError("a choice parameter lists its choices")

    def describe(self) -> str:
        """The constraint in words: "a whole number >= 2", "a number in (0, 1)", ..."""
        if self.kind == "flag":
            text = "true or false"
        elif self.kind == "choice":
            text = "one of " + ", ".join(self.choices)
        elif self.kind == "text":
            text = "a non-empty text"
        elif self.kind == "names":
            text = "one or more column names (a;b)"
        else:
            noun = {"whole": "a whole number", "number": "a number", "numbers": "a list of numbers"}[self.kind]
            if self.low is not None and self.high is not None:
                left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
                text = f"{noun} in {left}{self.low:g}, {self.high:g}{right}"
            elif self.low is not None:
                text = f"{noun} >{'' if self.low_open else '='} {self.low:g}"
            elif self.high is not None:
                text = f"{noun} <{'' if self.high_open else '='} {self.high:g}"
            else:
                text = noun
        return text + (" (or none)" if self.optional else "")

    def convert(self, value: Any, what: str, error: type[VersapubError] = ConfigError) -> Any:
        """``value`` checked (whole numbers as ``int``, numbers as ``float``), or ``error``:
        "WHAT must be DESCRIPTION, got VALUE." """
        if value is None and self.optional:
            return None
        got = self._converted(value)
        if got is _BAD:
            raise error(f"{what} must be {self.describe()}, got {value!r}." + (f" ({self.why})" if self.why else ""))
        return got

    def _converted(self, value: Any) -> Any:
        if self.kind == "flag":
            return value if isinstance(value, bool) else _BAD
        if self.kind == "choice":
            return value if isinstance(value, str) and value in self.choices else _BAD
        if self.kind == "text":
            return value if isinstance(value, str) and value.strip() else _BAD
        if self.kind == "names":
            items = value.split(";") if isinstance(value, str) else value if isinstance(value, list | tuple) else None
            names = tuple(str(v).strip() for v in items or () if isinstance(v, str) and v.strip())
            return names if items and len(names) == len(items) else _BAD
        if self.kind == "numbers":
            if not isinstance(value, list | tuple) or not value:
                return _BAD
            each = Param("number", self.low, self.high, self.low_open, self.high_open)
            got = [each._converted(v) for v in value]
            return _BAD if any(g is _BAD for g in got) else tuple(got)
        if isinstance(value, bool) or not _is_number(value):
            return _BAD
        v = float(value)
        if self.kind == "whole":
            if not v.is_integer():
                return _BAD
            v = int(value)
        if not math.isfinite(v):
            return _BAD
        if self.low is not None and (v <= self.low if self.low_open else v < self.low):
            return _BAD
        if self.high is not None and (v >= self.high if self.high_open else v > self.high):
            return _BAD
        return v


_BAD = object()


def _is_number(value: Any) -> bool:
    try:
        import numpy as np

        return isinstance(value, int | float | np.integer | np.floating)
    except ImportError:  # pragma: no cover - numpy is a dependency
        return isinstance(value, int | float)


def validated(
    owner: str,
    constraints: Mapping[str, Param],
    values: Mapping[str, Any],
    error: type[VersapubError] = ConfigError,
) -> dict[str, Any]:
    """``values`` checked against ``constraints`` (``owner`` names the plug-in in the error:
    "t of t-closeness must be a number in (0, 1), got 2.")."""
    return {
        k: constraints[k].convert(v, f"{k} of {owner}", error) if k in constraints else v for k, v in values.items()
    }


def parameters(factory: Callable[..., Any]) -> list[str]:
    """The plug-in's public parameter names: its declared constraints, else its constructor's."""
    declared = getattr(factory, "parameter_constraints", None)
    if declared:
        return list(declared)
    return [p for p in inspect.signature(factory).parameters if p != "self"]


class LazyRegistry(Mapping[str, T]):
    """Plug-ins by name, each imported when its name is first looked up: ``where`` maps a
    name to ``"package.module:attribute"``.  Listing the names imports nothing, so a command
    that uses one plug-in does not load every other (issue 50: start-up is most of an
    interactive command's time)."""

    def __init__(self, where: Mapping[str, str]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, T] = {}

    def __getitem__(self, name: str) -> T:
        if name not in self._loaded:
            module, _, attribute = self._where[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __contains__(self, name: object) -> bool:  # Mapping's would import the plug-in
        return name in self._where

    def __len__(self) -> int:
        return len(self._where)


def build(
    what: str,
    registry: Mapping[str, Callable[..., T]],
    name: str,
    params: Mapping[str, Any] | None = None,
    aliases: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
    error: type[VersapubError] = ConfigError,
) -> T:
    """``registry[name](**params)`` with every parameter checked first; ``aliases`` map other
    names to a registered name with fixed parameters (e.g. ``anatomy-wraparound`` ->
    ``anatomy`` with ``grouping``).  A parameter a plug-in spells differently from its field
    (``lambda`` -> ``lam``) is listed in the plug-in's ``spelled``; a parameter it declines
    on purpose, with the reason the refusal gives, in its ``not_offered``."""
    key = str(name).strip().lower()
    fixed: dict[str, Any] = {}
    if aliases and key in aliases:
        key, preset = aliases[key]
        fixed = dict(preset)
    if key not in registry:
        names = sorted({*registry, *(aliases or {})})
        raise error(f"Unknown {what} {name!r}; available: {', '.join(names)}.")
    factory = registry[key]
    given = {**fixed, **dict(params or {})}
    valid = parameters(factory)
    unknown = sorted(set(given) - set(valid))
    if unknown:
        listed = ", ".join(valid) if valid else "none"
        why: Mapping[str, str] = getattr(factory, "not_offered", {})  # parameters a plug-in declines, and why
        reasons = " ".join(why[p] for p in unknown if p in why)
        raise error(
            f"The {what} {key!r} has no parameter(s) {', '.join(map(repr, unknown))}; its parameters are: {listed}."
            + (f" {reasons}" if reasons else "")
        )
    constraints: Mapping[str, Param] = getattr(factory, "parameter_constraints", None) or {}
    missing = [p for p, c in constraints.items() if c.required and p not in given]
    if missing:
        example: Mapping[str, Any] = getattr(factory, "example", {})
        cli = ",".join(f"{p}={example[p]}" for p in missing if p in example) or f"{missing[0]}=..."
        toml = ", ".join(f"{p} = {example[p]}" for p in missing if p in example) or f"{missing[0]} = ..."
        raise error(
            f"The {what} {key!r} needs a value for {', '.join(missing)} (e.g. {key}:{cli} on the command line, "
            f"or {toml} in the configuration)."
        )
    checked = validated(key, constraints, given, error)
    spelled: Mapping[str, str] = getattr(factory, "spelled", {})
    try:
        return factory(**{spelled.get(k, k): v for k, v in checked.items()})
    except VersapubError:
        raise
    except (TypeError, ValueError) as exc:  # e.g. a number given as text
        raise error(f"The {what} {key!r} cannot be built with {given}: {exc}.") from None


def parse_spec(text: str, flag: str) -> tuple[str, dict[str, Any]]:
    """``"NAME:p=v,q=w"`` (the command-line form of a plug-in with parameters) -> name and
    parameters; values become booleans, None, integers or floats when they read as one, and
    ``[a; b]`` a list; a hyphen in a parameter's name reads as an underscore."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise ConfigError(f"{flag} {text!r}: give a name, e.g. {flag} NAME:param=value.")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in _split(rest))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            listed = ""
            if eq == "" and params:  # 'columns=a,b': the second value read as a parameter of its own
                last = list(params)[-1]
                listed = (
                    f" {part.strip()!r} has no '=': a list of values is separated by ';' "
                    f"(e.g. {last}={params[last]};{part.strip()}), commas separate parameters."
                )
            raise ConfigError(f"{flag} {text!r}: parameters are key=value pairs separated by commas.{listed}")
        params[key.strip().replace("-", "_")] = _value(value.strip())
    return name.strip().lower(), params


def _split(text: str) -> list[str]:
    """Split at commas outside brackets (``phi=[0.5; 0.75]`` stays whole)."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _value(text: str) -> Any:
    if text.startswith("[") and text.endswith("]"):
        return [_value(v.strip()) for v in text[1:-1].replace(";", ",").split(",") if v.strip()]
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
