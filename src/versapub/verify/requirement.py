"""What a release is checked against: the steward's requirement, or the release's own claim.

A manifest states the rules and guarantees the release was published under; a verdict
against them says only that the release keeps its own promise — a manifest edited from
``l = 3`` to ``l = 2`` keeps it too.  A steward states what *they* require once — a policy
file (``check --policy``: the ``[privacy]`` keys of a job), ``--guarantee``/``--l``, or
``--rule`` — and the verdict then says it was checked against that.  Rules and guarantees
are carried in the manifest's own form (``{"lhs", "rhs", "guarantee"?}``, ``{"name", ...}``)
and read by the verifier's own checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The prosecutor risk a ``--max-risk`` ceiling applies to.
RISK_MEASURES = ("highest", "average")


def _key(rule: dict[str, Any]) -> tuple[frozenset[str], str]:
    return frozenset(str(a) for a in rule.get("lhs", [])), str(rule.get("rhs"))


def shown(spec: dict[str, Any]) -> str:
    """``l-diversity (l = 3)``; an all-of as its parts joined by "and"."""
    if spec.get("name") == "all-of" and isinstance(spec.get("guarantees"), list):
        return " and ".join(shown(p) for p in spec["guarantees"] if isinstance(p, dict))
    params = ", ".join(f"{k} = {v}" for k, v in spec.items() if k != "name")
    return f"{spec.get('name')} ({params})" if params else str(spec.get("name"))


@dataclass(frozen=True)
class Requirement:
    """``guarantee``: the guarantee of every rule without one of its own (``None``: the
    manifest's); ``rules``: the rules, each optionally with its own ``guarantee`` (``None``:
    the manifest's rules); ``source``: who stated it (``"policy.toml"``, ``"--l 3"``)."""

    guarantee: dict[str, Any] | None = None
    rules: tuple[dict[str, Any], ...] | None = None
    source: str = ""
    #: A floor on every table's smallest published cell of non-sensitive values (``--k``).
    k: int | None = None
    #: A ceiling on every table's prosecutor re-identification risk (``--max-risk``), of the
    #: measure ``risk_measure``: ``highest`` (1 / the smallest cell) or ``average`` (cells / records).
    max_risk: float | None = None
    risk_measure: str = "highest"
    #: A ceiling on every table's measured singling-out risk (``--max-singling-out``; with the
    #: original: the attacks on everything published).
    max_singling_out: float | None = None

    def __post_init__(self) -> None:
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 2):
            raise ValueError(f"k must be a whole number >= 2, got {self.k!r}")
        if self.max_risk is not None and (
            isinstance(self.max_risk, bool) or not isinstance(self.max_risk, (int, float)) or not 0 < self.max_risk <= 1
        ):
            raise ValueError(f"the largest re-identification risk is a probability in (0, 1], got {self.max_risk!r}")
        if self.max_singling_out is not None and (
            isinstance(self.max_singling_out, bool)
            or not isinstance(self.max_singling_out, (int, float))
            or not 0 <= self.max_singling_out <= 1
        ):
            raise ValueError(f"the largest singling-out risk is a share in [0, 1], got {self.max_singling_out!r}")
        if self.risk_measure not in RISK_MEASURES:
            raise ValueError(f"the risk measure is one of {', '.join(RISK_MEASURES)}, got {self.risk_measure!r}")
        if self.guarantee is not None and not isinstance(self.guarantee.get("name"), str):
            raise ValueError(f"a required guarantee needs a name, got {self.guarantee!r}")
        for r in self.rules or ():
            if not isinstance(r.get("lhs"), list) or not isinstance(r.get("rhs"), str):
                raise ValueError(f"a required rule is {{'lhs': [...], 'rhs': '...'}}, got {r!r}")

    @property
    def stated(self) -> bool:
        """Whether the checker stated anything (else the release is held to its own claim)."""
        return (
            self.guarantee is not None
            or self.rules is not None
            or self.k is not None
            or self.max_risk is not None
            or self.max_singling_out is not None
        )

    def default(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """The guarantee of a rule (or table) nothing else names one for."""
        return self.guarantee if self.guarantee is not None else manifest["guarantee"]

    def rule_specs(self, manifest: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Each rule checked, with its guarantee: the requirement's own for the rule, else
        the required guarantee, else (nothing required of it) the manifest's own for the
        same rule, else the manifest's."""
        claimed = {
            _key(r): r["guarantee"]
            for r in manifest.get("rules", [])
            if isinstance(r, dict) and isinstance(r.get("guarantee"), dict)
        }
        rules = list(self.rules) if self.rules is not None else [r for r in manifest["rules"] if isinstance(r, dict)]
        out = []
        for r in rules:
            own = r.get("guarantee") if self.rules is not None else None
            if isinstance(own, dict):
                spec = own
            elif self.guarantee is not None:
                spec = self.guarantee
            else:
                spec = claimed.get(_key(r), manifest["guarantee"])
            out.append(({"lhs": list(r["lhs"]), "rhs": r["rhs"]}, spec))
        return out

    def describe(self, manifest: dict[str, Any]) -> str:
        """The verdict's first sentence: what the release was checked against, and by whose word."""
        specs = self.rule_specs(manifest)
        distinct: list[dict[str, Any]] = []
        for _, g in specs:
            if g not in distinct:
                distinct.append(g)
        what = "; ".join(shown(g) for g in distinct) or shown(self.default(manifest))
        if self.k is not None:
            what += f"; every table's smallest published cell at least k = {self.k}"
        if self.max_risk is not None:
            what += f"; every table's {self.risk_measure} prosecutor risk at most {self.max_risk:g}"
        if not self.stated:
            return (
                f"checked against the release's own claim: {what} (its manifest; a claim, not your requirement — "
                "state yours with --policy FILE, --guarantee or --l)"
            )
        return f"checked against your requirement ({self.source or 'given by the caller'}): {what}"
