"""A steward's requirement for ``versapub check``: a policy file, ``--guarantee``/``--l`` and
``--rule``, read into the verifier's :class:`~versapub.verify.requirement.Requirement`.

A policy file holds the ``[privacy]`` keys of a job (``guarantee`` or ``[privacy.guarantee]``,
``l``, ``rules`` — each rule optionally with its own guarantee —, ``k``), so a job's configuration is a
policy too: its other sections are read as a job's (an unknown section or key anywhere is an error
naming it, never silently ignored) and only ``[privacy]`` is the requirement; a guarantee's
parameters may stand beside its name, as in a job (``guarantee = "t-closeness"``, ``t = 0.25``)::

    [privacy]
    guarantee = "l-diversity"
    l = 3
    rules = ["zip, sex -> disease", {rule = "age -> income", guarantee = "t-closeness", t = 0.2}]
    k = 5   # optional: every table's smallest published cell holds at least 5 records (check --k)

Everything is validated here (the guarantees by :mod:`versapub.privacy`) and handed to the
verifier in the manifest's own form, which the verifier reads with its own checks.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from versapub.errors import ConfigError
from versapub.io.config import check_max_risk
from versapub.io.sections import check_sections
from versapub.privacy.guarantees.guarantee import make_guarantee, parse_guarantee
from versapub.privacy.per_rule import RuleItem, split
from versapub.verify.requirement import Requirement

_KEYS = {"guarantee", "l", "rules", "k", "max_risk", "risk_measure", "max_singling_out"}


def _guarantee(spec: dict[str, Any], where: str) -> dict[str, Any]:
    try:
        return make_guarantee(spec).to_manifest()
    except ConfigError:
        raise
    except Exception as exc:  # a RuleError naming the parameter
        raise ConfigError(f"{where}: {exc}") from None


def _rules(items: Sequence[RuleItem], where: str) -> tuple[list[dict[str, Any]], bool]:
    """The rules in manifest form (a rule's own guarantees joined), and whether every rule
    carries one of its own."""
    try:
        rules, own = split(items)
    except Exception as exc:
        raise ConfigError(f"{where}: {exc}") from None
    out: list[dict[str, Any]] = []
    seen: dict[Any, dict[str, Any]] = {}  # a rule given twice: one entry, both guarantees
    complete = True
    for r in rules:
        gs = [g.to_manifest() for g in own.get(r, [None]) if g is not None]
        complete &= r in own and None not in own[r]
        entry = seen.get(r)
        if entry is None:
            entry = seen[r] = r.to_json()
            out.append(entry)
        mine = entry.get("guarantee")
        parts = [*([mine] if isinstance(mine, dict) else []), *gs]
        if parts:
            flat = [p for g in parts for p in (g["guarantees"] if g["name"] == "all-of" else [g])]
            distinct = [p for i, p in enumerate(flat) if p not in flat[:i]]
            entry["guarantee"] = distinct[0] if len(distinct) == 1 else {"name": "all-of", "guarantees": distinct}
    return out, complete


def read_policy(path: str | Path) -> Requirement:
    """The requirement a policy file states (module docstring); a one-paragraph
    :class:`ConfigError` for a missing file, invalid TOML, an unknown key or guarantee."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"Policy file {p} does not exist.") from None
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Policy file {p} is not valid TOML: {exc}.") from None
    check_sections(data, str(p))
    priv = data.get("privacy")
    if not isinstance(priv, dict):
        raise ConfigError(
            f"Policy file {p} has no [privacy] section; state the requirement there (guarantee, l, "
            "rules), as in a job's configuration."
        )
    unknown = sorted(set(priv) - _KEYS)
    if unknown:  # the job's [privacy] keys (check_sections) are the policy's
        raise ConfigError(f"{p}: unknown key(s) {unknown} in [privacy]; known: {sorted(_KEYS)}.")
    where = str(p)
    g_raw, ell = priv.get("guarantee"), priv.get("l")
    if ell is not None and (isinstance(ell, bool) or not isinstance(ell, int)):
        raise ConfigError(f"{where}: [privacy] l must be a whole number, got {ell!r}.")
    spec: dict[str, Any] | None
    if isinstance(g_raw, dict):
        spec = dict(g_raw)
    elif isinstance(g_raw, str):
        spec = {"name": g_raw}
    elif g_raw is None:
        spec = {"name": "l-diversity"} if ell is not None else None
    else:
        raise ConfigError(f"{where}: [privacy] guarantee must be a name or a table [privacy.guarantee].")
    if spec is not None and ell is not None:
        spec.setdefault("l", ell)
    guarantee = _guarantee(spec, where) if spec is not None else None
    items = priv.get("rules")
    if items is not None and not (isinstance(items, list) and all(isinstance(r, str | dict) for r in items)):
        raise ConfigError(
            f"{where}: [privacy] rules must be a list of rules 'a, b -> c' or tables "
            "{rule = '...', guarantee = '...', ...}."
        )
    rules, complete = _rules(items, where) if items else (None, True)
    k = priv.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 2):
        raise ConfigError(
            f"{where}: [privacy] k must be a whole number >= 2 (every table's smallest published cell "
            f"of non-sensitive values holds at least k records), got {k!r}."
        )
    if guarantee is None and not (rules and complete):
        raise ConfigError(
            f"{where}: state the guarantee you require ([privacy] guarantee = 'NAME' with its "
            "parameters, or l = L), or give every rule its own."
        )
    max_risk, measure = priv.get("max_risk"), priv.get("risk_measure", "highest")
    check_max_risk(max_risk, measure, where)
    so = priv.get("max_singling_out")
    if so is not None and (isinstance(so, bool) or not isinstance(so, (int, float)) or not 0 <= so <= 1):
        raise ConfigError(f"{where}: [privacy] max_singling_out is a share in [0, 1], got {so!r}.")
    return Requirement(guarantee, tuple(rules) if rules is not None else None, str(p), k, max_risk, measure, so)


def requirement(
    policy: Path | None = None,
    guarantee: str | None = None,
    ell: int | None = None,
    rules: Sequence[str] = (),
    rules_from: Path | None = None,
) -> Requirement:
    """What ``versapub check`` is asked to check: a policy file, or ``--guarantee``/``--l``
    and ``--rule`` (a rule may carry its own guarantee after `` | ``) or ``--rules CONFIG``
    (a job's rules); nothing: the release's own claim."""
    if guarantee is not None and ell is not None:
        raise ConfigError("Give the guarantee either with --guarantee or with --l, not both.")
    if rules_from is not None and rules:
        raise ConfigError("Give the rules either with --rules CONFIG or with --rule, not both.")
    if policy is not None:
        if guarantee is not None or ell is not None or rules or rules_from is not None:
            raise ConfigError(
                "--policy states the whole requirement; give the guarantee and rules there, not also "
                "with --guarantee, --l, --rule or --rules."
            )
        return read_policy(policy)
    spec = parse_guarantee(guarantee) if guarantee is not None else {"name": "l-diversity", "l": ell} if ell else None
    g = _guarantee(spec, "--guarantee" if guarantee is not None else "--l") if spec is not None else None
    items: list[RuleItem] = list(rules)
    if rules_from is not None:
        from versapub.io.config import load_config

        items = list(load_config(rules_from).rules)
        if not items:
            raise ConfigError(f"{rules_from} states no rules ([privacy] rules = [...]); there is nothing to check.")
    found = _rules(items, "--rule")[0] if items else None
    shown = [
        f"--guarantee {guarantee}" if guarantee else "",
        f"--l {ell}" if ell else "",
        f"--rules {rules_from}" if rules_from else "",
        "--rule" if rules else "",
    ]
    return Requirement(g, tuple(found) if found is not None else None, ", ".join(x for x in shown if x))
