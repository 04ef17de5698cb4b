"""The sections and keys of a job (and policy) file: every one known, read in place (the CLI's
hyphens as underscores, a guarantee's parameters beside its name), an unknown one an error
naming it with the known ones."""

from __future__ import annotations

from typing import Any

from versapub.errors import ConfigError

SECTIONS = {
    "input": {
        "path",
        "delimiter",
        "missing",
        "columns",
        "format",
        "hierarchies",
        "hierarchy_dir",
        "header",
        "names",
        "na_values",
        "strip",
        "date_formats",
        "population",
    },
    "privacy": {
        "guarantee",
        "l",
        "rules",
        "k",
        "max_risk",
        "risk_measure",
        "max_singling_out",
        "suppression",
        "keys",
        "suppression_mode",
        "importance",
        "unit",
        "mechanism",
        "domains",
    },
    "columns": {
        "identifying",
        "quasi_identifying",
        "sensitive",
        "insensitive",
        "allow_unique",
        "others",
        "allow_proxy",
        "household",
    },
    "marginals": {"sensitive", "k", "l", "diversity", "base", "marginals", "inject", "search"},
    "publish": {
        "backend",
        "scheduler",
        "workers",
        "worker_memory",
        "scratch",
        "decomposition",
        "anonymizer",
        "seed",
        "format",
        "gd_stop_when_worse",
        "gd_max_candidates",
        "multi_sa_time_limit",
        "multi_sa_max_combinations",
        "record_input_path",
        "detach_others",
    },
}


def _guarantee_params_beside(priv: dict[str, Any], where: str) -> None:
    """``[privacy]`` keys that are parameters of the named guarantee (``guarantee =
    "recursive-cl"`` with ``c = 3``) move into ``[privacy.guarantee]``."""
    from versapub.plugins import parameters
    from versapub.privacy.guarantees.guarantee import ALIASES, GUARANTEES

    g = priv.get("guarantee")
    if not isinstance(g, str):
        return
    cls = GUARANTEES.get(ALIASES.get(g.lower(), g.lower()))
    params = [p for p in parameters(cls) if p != "l"] if cls is not None else []  # l stays the short form
    beside = {k: priv.pop(k) for k in [k for k in priv if k in params]}
    if beside:
        priv["guarantee"] = {"name": g, **beside}


#: The one array of tables: ``[[treatment]]``, in order (:mod:`versapub.treatments`).
LISTED = "treatment"

#: The keys of a hierarchy's table in ``[input.hierarchies.ATTR]``.
_HIERARCHY_KEYS = {"file", "level", "delimiter"}


def check_sections(data: dict[str, Any], where: str) -> list[str]:
    """Every section and key of a job (or policy) file known, in place: the CLI's hyphens read
    as underscores, a guarantee's parameters beside its name moved into ``[privacy.guarantee]``;
    an unknown section or key is a :class:`ConfigError` naming it with the known ones.  Returns
    the notes of what was read differently."""
    notes: list[str] = []
    for name, value in data.items():
        if name == LISTED:  # [[treatment]]: a list of tables, each checked by the plug-in builder
            if not isinstance(value, list) or not all(
                isinstance(t, dict) and isinstance(t.get("name"), str) for t in value
            ):
                raise ConfigError(
                    f"{where}: each [[treatment]] is a table with a name and its parameters, e.g. [[treatment]] "
                    'name = "top-coding", columns = ["income"], quantile = 0.99.'
                )
            continue
        if name not in SECTIONS:
            raise ConfigError(f"{where}: unknown section [{name}]; known: {', '.join([*SECTIONS, LISTED])}.")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: '{name}' must be a table ([{name}]).")
        for key in [k for k in value if "-" in k and k.replace("-", "_") in SECTIONS[name]]:
            canonical = key.replace("-", "_")  # one spelling: underscores; the CLI's hyphens accepted
            if canonical in value:
                raise ConfigError(f"{where}: [{name}] gives both {key!r} and {canonical!r}; keep one.")
            value[canonical] = value.pop(key)
            notes.append(f"[{name}] {key} is read as {canonical} (the configuration's spelling)")
        if name == "privacy":  # a guarantee's parameters beside its name: guarantee = "recursive-cl", c = 3
            _guarantee_params_beside(value, where)
        unknown = set(value) - SECTIONS[name]
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {sorted(unknown)} in [{name}]; known: {sorted(SECTIONS[name])}."
            )
    for attr, spec in (data.get("input", {}).get("hierarchies") or {}).items():
        extra = sorted(set(spec) - _HIERARCHY_KEYS) if isinstance(spec, dict) else []
        if extra:
            raise ConfigError(
                f"{where}: unknown key(s) {extra} in [input.hierarchies.{attr}]; known: {sorted(_HIERARCHY_KEYS)}."
            )
    return notes
