"""Several releases of one input side by side (``versapub compare``, the web page's
comparison view): each release's parameters, verdict, utility (KL-divergence, the seeded
workload's error and the share of true counts inside their ranges), re-identification risk
on the same quasi-identifiers, and the strongest attack its check recorded — the question a
steward asks before choosing ("l = 2 or l = 3? Anatomy or Mondrian?")."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from versapub.errors import ConfigError, VersapubError
from versapub.formats import read_manifest

Progress = Callable[[str, int, int], None]


def _silent(description: str, completed: int, total: int) -> None:
    """No progress shown."""


@dataclass(frozen=True)
class Comparison:
    """One row per release (and first, when the input was found, the input itself measured
    on the same quasi-identifiers): ``rows[i]`` maps each measure to its value."""

    input: str
    qi: tuple[str, ...]
    rows: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.rows:
            raise ValueError("a comparison needs at least one release")

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "qi": list(self.qi),
            "rows": [dict(r) for r in self.rows],
            "notes": list(self.notes),
        }


def _parameters(raw: dict[str, Any]) -> dict[str, Any]:
    """What a release's manifest says it is: its tables' kinds, anonymizer, decomposition,
    guarantee and rules."""

    def spec(x: Any) -> str:
        if not isinstance(x, dict):
            return str(x or "")
        params = {k: v for k, v in (x.get("params") or {}).items()} | {
            k: v for k, v in x.items() if k not in ("name", "params", "add_back_trace")
        }
        inner = ", ".join(f"{k}={v}" for k, v in params.items())
        return f"{x.get('name', '')}" + (f" ({inner})" if inner else "")

    kinds = sorted({str(t.get("kind")) for t in raw.get("tables") or [] if isinstance(t, dict)})
    rules = [r for r in raw.get("rules") or [] if isinstance(r, dict)]
    own = [spec(r["guarantee"]) for r in rules if isinstance(r.get("guarantee"), dict)]
    # a rule with its own guarantee is published under it; the job's applies to the others only (issue 66)
    shown = list(dict.fromkeys([*own, *([spec(raw.get("guarantee"))] if len(own) < len(rules) or not rules else [])]))
    return {
        "kinds": ", ".join(kinds),
        "tables": len(raw.get("tables") or []),
        "anonymizer": spec(raw.get("anonymizer")),
        "decomposition": spec(raw.get("decomposition")),
        "guarantee": "; ".join(shown) + (" (per rule)" if own else ""),
        "rules": len(rules),
    }


def _attack(check: dict[str, Any] | None) -> dict[str, Any]:
    """The strongest attack of the release's own check: the highest rate at which the
    adversary guessed a protected value, beside what the guarantee allows."""
    adv = (check or {}).get("adversary") or {}
    best: tuple[float, float | None, str] | None = None
    for r in adv.get("rules") or []:
        for key in ("inference", "learned"):
            part = r.get(key) or {}
            rate = (part.get("risk") or part).get("rate") if isinstance(part, dict) else None
            if isinstance(rate, (int, float)) and (best is None or rate > best[0]):
                rule = r.get("rule") or {}
                best = (float(rate), r.get("bound"), f"{', '.join(rule.get('lhs') or [])} -> {rule.get('rhs', '')}")
    if best is None:
        return {"attack_rate": None, "attack_bound": None, "attack_rule": None}
    bound = best[1] if isinstance(best[1], (int, float)) and best[1] < 1 else None  # 1: the guarantee bounds no guess
    return {"attack_rate": best[0], "attack_bound": bound, "attack_rule": best[2]}


def compare(
    releases: Sequence[str | Path],
    original: str | Path | None = None,
    *,
    within: Path | None = None,
    missing: str | None = None,
    n_queries: int = 1000,
    seed: int = 1,
    sampling_fraction: float | None = None,
    progress: Progress = _silent,
) -> Comparison:
    """Compare ``releases`` of one input (each must record the same input SHA-256) on the
    same measures: the same seeded workload (``n_queries``, ``seed``) against the original
    (``original``, or the input they record, found as ``evaluate`` finds it; ``within``: only
    inside that folder), risk on the union of the quasi-identifiers they declare (each
    release measured on those it publishes), without SUDA, and the strongest attack each
    release's ``check.json`` recorded."""
    from versapub.inspect.evaluation import evaluate
    from versapub.inspect.original import original_table
    from versapub.inspect.risks import risk, risk_choices

    dirs = [Path(r) for r in releases]
    if len(dirs) < 2:
        raise ConfigError("Compare two or more releases of one input (give their folders).")
    manifests = [read_manifest(d) for d in dirs]
    # a differentially private release records no digest of its input (a function of the data)
    digests = {str(m.input["sha256"]) for m in manifests if m.input.get("sha256")}
    if len(digests) > 1:
        named = ", ".join(
            f"{d} ({str(m.input.get('sha256') or 'none')[:12]})" for d, m in zip(dirs, manifests, strict=True)
        )
        raise ConfigError(
            f"These releases were published from different inputs (their manifests' input SHA-256: {named}); "
            "compare releases of one input."
        )
    _same_input(dirs, manifests)
    choices = [risk_choices(d) for d in dirs]
    qi = tuple(dict.fromkeys(a for c in choices for a in c.declared))
    rows: list[dict[str, Any]] = []
    undigested = [str(d) for d, m in zip(dirs, manifests, strict=True) if not m.input.get("sha256")]
    notes: list[str] = (
        [
            f"{', '.join(undigested)} record(s) no digest of the input (a differentially private release "
            "publishes none): taken to be of the same input as the others."
        ]
        if undigested and digests
        else []
    )
    total = len(dirs) + 1
    progress("the input itself", 0, total)
    try:
        recorded = next((d for d, m in zip(dirs, manifests, strict=True) if m.input.get("sha256")), dirs[0])
        first = original_table(recorded, original, missing, within=within)
        mine = [a for a in qi if a in first.table.names]
        base = risk(first.table, qi=mine, sampling_fraction=sampling_fraction, with_suda=False).to_json()
        rows.append({"release": "(the input itself)", **_risk_row(base)})
    except VersapubError as exc:
        notes.append(f"The input was not found, so utility is not measured and no row shows its own risk: {exc}")
        first = None
    for i, (d, m, c) in enumerate(zip(dirs, manifests, choices, strict=True)):
        progress(f"measuring {d.name}", i + 1, total)
        check_file = d / "check.json"
        check = json.loads(check_file.read_text(encoding="utf-8")) if check_file.is_file() else None
        row: dict[str, Any] = {"release": str(d), **_parameters(m.raw), "records": m.n_records}
        row["verdict"] = str(check.get("verdict")) if check else "not checked"
        if first is not None:
            e = evaluate(d, original, missing=missing, n_queries=n_queries, seed=seed, within=within).to_dict()
            rel, rng = e.get("relative_error") or {}, e.get("ranges") or {}
            row |= {
                "kl": e.get("kl_divergence"),
                "kl_infinite": bool(e.get("kl_infinite")),  # a record the model gives probability 0
                "kl_shared": e.get("kl_shared_support"),  # finite: on the records the model can hold
                "lost_mass": e.get("lost_mass"),
                "workload_median": rel.get("median"),
                "workload_mean": rel.get("mean"),
                "ranges_inside": rng.get("share_inside"),
                "ranges_sharp": rng.get("share_sharp"),
            }
        mine = [a for a in qi if a in c.candidates]
        r = risk(d, qi=mine, sampling_fraction=sampling_fraction, with_suda=False).to_json()
        rows.append(row | _risk_row(r) | _attack(check))
    progress("done", total, total)
    name = Path(str(manifests[0].input.get("path") or "")).name
    return Comparison(name, qi, tuple(rows), tuple(notes))


def _same_input(dirs: Sequence[Path], manifests: Sequence[Any]) -> None:
    """A release without a digest of its input (a differentially private one: a digest would
    tell a candidate input from its neighbours) must still name the same input file, with
    columns among the same ones, as the others: what it records without any count (issue 66)."""

    def name(m: Any) -> str:  # a table published from memory names no file
        text = Path(str(m.input.get("path") or "")).name
        return "" if text.startswith("(") else text

    def columns(m: Any) -> set[str]:
        return {str(c) for c in m.input.get("columns") or []}

    bare = [(d, m) for d, m in zip(dirs, manifests, strict=True) if not m.input.get("sha256")]
    if not bare:
        return  # every release has its digest: compared above
    others = [m for m in manifests if m.input.get("sha256")] or [bare[0][1]]
    for d, m in bare:
        if name(m) and all(name(o) and name(o) != name(m) for o in others):
            raise ConfigError(
                f"{d} records no digest of its input (a differentially private release publishes none) and names "
                f"another input file ({name(m)}, the others {', '.join(sorted({name(o) for o in others}))}): "
                "compare releases of one input."
            )
        cols = columns(m)
        if cols and all(columns(o) and not (cols <= columns(o) or columns(o) <= cols) for o in others):
            raise ConfigError(
                f"{d} records no digest of its input and its columns ({', '.join(sorted(cols))}) are not among "
                "those of the others' input: compare releases of one input."
            )


def _risk_row(r: dict[str, Any]) -> dict[str, Any]:
    pros = r.get("prosecutor") or {}
    return {
        "prosecutor_highest": pros.get("highest"),
        "prosecutor_average": pros.get("average"),
        "records_at_risk": pros.get("records_at_risk"),
        "sample_uniques": r.get("sample_uniques"),
    }
