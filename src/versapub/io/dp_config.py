"""The configuration of a differentially private release (issue 52): ``[privacy] mechanism``
and ``[privacy.domains]`` (each column's values, declared: public knowledge, never read from
the data)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from versapub.errors import ConfigError


def mechanism_spec(priv: Mapping[str, Any], where: str) -> Any:
    """``[privacy] mechanism``: a spec ``"dp:epsilon=1"`` or a table ``{name = "dp", epsilon = 1}``."""
    m = priv.get("mechanism")
    if m is not None and not isinstance(m, (str, dict)):
        raise ConfigError(f'{where}: [privacy] mechanism must be a spec like "dp:epsilon=1" or a table.')
    return dict(m) if isinstance(m, dict) else m


def domain_values(column: str, spec: Any, base: Path, where: str) -> tuple[str, ...]:
    """A declared domain: a list of values, a range of whole numbers (``"17..90"``, or in
    TOML ``{from = 17, to = 90}``), or a file with one value per line (a line ``""``: the
    empty value, for a column whose missing cells are published as a value)."""
    if isinstance(spec, list) and spec and all(isinstance(v, (str, int, float)) for v in spec):
        return tuple(str(v) for v in spec)
    if isinstance(spec, dict) and set(spec) == {"from", "to"}:
        spec = f"{spec['from']}..{spec['to']}"
    if isinstance(spec, str) and re.fullmatch(r"-?\d+\.\.-?\d+", spec.strip()):
        low, high = (int(x) for x in spec.strip().split(".."))
        if low > high or high - low >= 10_000_000:
            raise ConfigError(
                f"{where}: the domain of {column!r}, {spec}, must run upwards and hold under 10^7 values."
            )
        return tuple(str(v) for v in range(low, high + 1))
    if isinstance(spec, str):
        path = base / spec
        try:
            values = [v.strip() for v in path.read_text(encoding="utf-8").splitlines()]
        except OSError as exc:
            raise ConfigError(
                f"{where}: the domain of {column!r} cannot be read from {path}: {exc.strerror}."
            ) from None
        # a line holding only "" is the empty value (a missing cell published as a value of its own, issue 66)
        out = tuple(dict.fromkeys("" if v == '""' else v for v in values if v))
        if out:
            return out
    raise ConfigError(
        f"{where}: the domain of {column!r} must be a non-empty list of values, a range of whole numbers like "
        "17..90 (TOML: {from = 17, to = 90}) or a file with one value per line."
    )


def declared_domains(priv: Mapping[str, Any], base: Path, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[privacy.domains]``: column -> values (a list, or a file relative to the configuration)."""
    d = priv.get("domains") or {}
    if not isinstance(d, dict):
        raise ConfigError(f"{where}: [privacy.domains] maps each column to its values (a list or a file).")
    return tuple((str(c), domain_values(str(c), v, base, where)) for c, v in d.items())
