"""The keyword groups of :func:`versapub.publish` (issue 70), mirroring the CLI's and the
TOML job's sections: :class:`Privacy` (``[privacy]``: what the release must guarantee beyond
its rules — the floor on published cells, its key variables and how records or values give
way to it, the population) and :class:`Method` (``[publish]``: the plug-ins, their
parameters and hierarchies). Values validated on construction.

``versapub.publish(table, rules, l=3, privacy=Privacy(k=5, keys=("age", "sex")),
method=Method(anonymizer="mondrian", hierarchies=h))`` is the same job as
``versapub publish --l 3 --k 5 --keys age,sex --anonymizer mondrian``. The long form (each
of these as its own keyword of ``publish``) keeps working for a deprecation period, with a
``DeprecationWarning`` naming the group (:func:`from_long_form`)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from versapub.errors import ConfigError, InputError

RISK_MEASURES = ("highest", "average")
SUPPRESSION_MODES = ("remove", "cells")


@dataclass(frozen=True)
class Privacy:
    """``[privacy]`` beyond the rules and their guarantee: ``k`` and ``max_risk`` (with
    ``risk_measure``) a floor on the cells of the key variables ``keys`` (default: every
    exactly published column), met with ``suppression`` a share of records that may be
    removed, or with ``suppression_mode="cells"`` by local suppression of key values in the
    order of ``importance``; ``population``: the population the input was drawn from
    (delta-presence, k-map without a sampling fraction)."""

    k: int | None = None
    max_risk: float | None = None
    risk_measure: str = "highest"
    keys: tuple[str, ...] | None = None
    suppression: float = 0.0
    suppression_mode: str = "remove"
    importance: tuple[str, ...] = ()
    population: Any = None
    #: What the floor counts: ``record`` or ``household`` (every household's structure shared by
    #: ``k`` households; needs the household id, ``ColumnRoles(household=...)``; issue 68).
    unit: str = "record"

    def __post_init__(self) -> None:
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1):
            raise InputError(f"Privacy(k=...) is a whole number >= 1, got {self.k!r}.")
        if self.max_risk is not None and (
            isinstance(self.max_risk, bool) or not isinstance(self.max_risk, int | float) or not 0 < self.max_risk <= 1
        ):
            raise InputError(f"Privacy(max_risk=...) is a probability in (0, 1], got {self.max_risk!r}.")
        if self.risk_measure not in RISK_MEASURES:
            raise InputError(
                f"Privacy(risk_measure=...) is one of {', '.join(RISK_MEASURES)}, got {self.risk_measure!r}."
            )
        if isinstance(self.suppression, bool) or not isinstance(self.suppression, int | float):
            raise InputError(f"Privacy(suppression=...) is a share of records in [0, 1), got {self.suppression!r}.")
        if self.suppression_mode not in SUPPRESSION_MODES:
            raise InputError(
                f"Privacy(suppression_mode=...) is one of {', '.join(SUPPRESSION_MODES)}, "
                f"got {self.suppression_mode!r}."
            )
        for name in ("keys", "importance"):  # lists are taken, kept as tuples (a frozen value)
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                if isinstance(value, str) or not isinstance(value, Sequence):
                    raise InputError(f"Privacy({name}=...) is a sequence of column names, got {value!r}.")
                object.__setattr__(self, name, tuple(value))


@dataclass(frozen=True)
class Method:
    """``[publish]``: the ``decomposition`` and ``anonymizer`` (registered names or plug-in
    objects) with their parameters, ``plugin_defaults`` (per ``(kind, name)``, parameters a
    plug-in takes when chosen), the attributes' generalization ``hierarchies`` and
    ``detach_others`` (the classic job's other columns in a table of their own)."""

    decomposition: Any = None
    anonymizer: Any = None
    decomposition_params: Mapping[str, Any] | None = None
    anonymizer_params: Mapping[str, Any] | None = None
    plugin_defaults: Mapping[tuple[str, str], Mapping[str, Any]] | None = None
    hierarchies: Mapping[str, Any] | None = None
    detach_others: bool = False

    def __post_init__(self) -> None:
        for name in ("decomposition_params", "anonymizer_params", "plugin_defaults", "hierarchies"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Mapping):
                raise InputError(f"Method({name}=...) is a mapping, got {type(value).__name__}.")
        if not isinstance(self.detach_others, bool):
            raise InputError(f"Method(detach_others=...) is True or False, got {self.detach_others!r}.")


_PRIVACY = {f.name for f in fields(Privacy)}
_METHOD = {f.name for f in fields(Method)} - {"decomposition", "anonymizer"}


@dataclass(frozen=True)
class Groups:
    """The two groups a call resolved to."""

    privacy: Privacy = field(default_factory=Privacy)
    method: Method = field(default_factory=Method)


def from_long_form(
    privacy: Privacy | None, method: Method | None, decomposition: Any, anonymizer: Any, long_form: Mapping[str, Any]
) -> Groups:
    """The groups of a :func:`versapub.publish` call: ``privacy`` and ``method`` as given,
    or built from the long form's keywords (with a ``DeprecationWarning`` naming the group);
    a setting given both ways, or a keyword no group knows, is one clear error."""
    unknown = sorted(set(long_form) - _PRIVACY - _METHOD)
    if unknown:
        raise TypeError(f"publish() got unexpected keyword argument(s) {', '.join(unknown)}")
    p_kw = {k: v for k, v in long_form.items() if k in _PRIVACY}
    m_kw = {k: v for k, v in long_form.items() if k in _METHOD}
    if decomposition is not None:
        m_kw["decomposition"] = decomposition
    if anonymizer is not None:
        m_kw["anonymizer"] = anonymizer
    for group, given, kw in (("Privacy", privacy, p_kw), ("Method", method, m_kw)):
        twice = sorted(k for k in kw if given is not None and getattr(given, k) != getattr(type(given)(), k))
        if twice:
            raise ConfigError(
                f"{', '.join(twice)} given both as a keyword and in {group}(...): give each setting once "
                f"(in {group}(...), the long form being deprecated)."
            )
    old = sorted(set(long_form))
    if old:
        warnings.warn(
            f"publish(..., {', '.join(f'{k}=' for k in old)}) is the long form, kept for a deprecation period: "
            "give them as privacy=versapub.Privacy(...) or method=versapub.Method(...).",
            DeprecationWarning,
            stacklevel=3,
        )
    if p_kw:
        privacy = Privacy(**{**_asdict(privacy or Privacy()), **p_kw})
    if m_kw:
        method = Method(**{**_asdict(method or Method()), **m_kw})
    return Groups(privacy or Privacy(), method or Method())


def _asdict(value: Privacy | Method) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in fields(value)}
