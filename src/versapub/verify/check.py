"""``versapub check``: every check of a release, from its files (plus, optionally, the
original table and other rules).

* the verifier's structure, schema (GNF), per-table guarantee and consistency checks
  (:mod:`versapub.verify.files.release_check`);
* intersection attacks: exact (possible worlds, CP-SAT) for releases of at most
  ``EXACT_MAX_RECORDS`` records, and scalable (propagation) for any size;
* the maximum-entropy posterior: the largest ``P(S = s | Q = q)`` the files allow (their
  group bounds, or the verifier's own estimate), against ``1/l``; a rule it cannot
  estimate needs attention;
* identity risk: per table, the share of records alone in their cell of the table's
  non-sensitive attributes and the smallest cell (k-anonymity of the published cells;
  with ``k`` it must be at least ``k``);
* linkage hygiene: every table's rows are in value order (no row order or id that could
  follow the input order) and carry no column beyond the format's.
* each kind's own attacks (an sa-groups table against Ye et al.'s adversary), the tables as a
  collection with ``k`` (k-link, k-combinatorial anonymity), a differentially private
  release's files and ledger, and what treatments, recodings and removals did;
* with the original, the attacks on everything published: inference per rule, singling out
  and linkability per table, by an adversary who computes (``verify/adversary/``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from versapub.data.parsed import ParsedFiles, sharing
from versapub.data.source import Source
from versapub.data.sql import connect, memory_share
from versapub.data.table import EncodedTable
from versapub.errors import ReleaseError, VersapubError
from versapub.privacy.rules import Rule
from versapub.verify.adversary.adversary_check import N_ATTACKS, adversary_check
from versapub.verify.adversary.sample import SAMPLE_NOTE, SAMPLE_SEED, sampled_original
from versapub.verify.attacks.attack import EXACT_MAX_RECORDS, AttackResult, exact_attack, scalable_attack
from versapub.verify.attacks.attack_generalized import generalized_attack, generalizing_tables
from versapub.verify.attacks.attack_sql import fast_scalable_attack
from versapub.verify.attacks.posterior import _holding, group_bounds, own_posterior, posterior_hint
from versapub.verify.collection.collection_check import check_collection
from versapub.verify.files.release_check import required, verify_release
from versapub.verify.finding import Finding
from versapub.verify.guarantees.thresholds import Threshold, Thresholds, threshold
from versapub.verify.identity.identity import hygiene_check, identity_check
from versapub.verify.identity.key_cells import excluded_of, keys_of, matches_any, shared_keys
from versapub.verify.reading.kind_checks import KIND_CHECKS, drawers, reading
from versapub.verify.reading.manifest import Manifest, manifest_of
from versapub.verify.reading.primitives import PAIRING_MAX_ROWS, VerificationReport
from versapub.verify.reading.published import read_published
from versapub.verify.requirement import Requirement
from versapub.verify.treatments.perturbation_effect import perturbation_effect
from versapub.verify.treatments.recoding import recoded_original
from versapub.verify.treatments.treatments import perturbed_columns, treated_original

#: Up to this many records the scalable attack runs full propagation with group counting.
SCALABLE_PROPAGATION_MAX_RECORDS = 2_000

#: The share of the machine's memory each check's DuckDB connections may hold (beyond it
#: they spill to disk): the checks run side by side, so the shares sum to less than the
#: whole (at least 1 GB each; a 10^8-record release needs tens of gigabytes unshared).
MEMORY_SHARES = {
    "verify": 0.25,
    "adversary": 0.05,
    "attacks": 0.15,
    "posterior": 0.15,
    "identity": 0.1,
    "hygiene": 0.05,
    "kind_attacks": 0.1,
    "collection": 0.05,
    "perturbation": 0.05,
}


#: What a differentially private release's files say in place of figures computed from the
#: input without noise (:meth:`CheckReport.noise_free_withheld`).
WITHHELD_ATTACKS = (
    "run on the input's records ({verdict}); their figures are computed from the input without noise, so a "
    "differentially private release never holds them (versapub check RELEASE --original FILE shows them to "
    "the steward)"
)
WITHHELD_NOISE = (
    "the deviations from the input's counts have the ledger's scale (tested with the input; its statistics "
    "are not written into a differentially private release)"
)


@dataclass
class CheckReport:
    """Everything ``check`` found."""

    directory: str
    guarantee: dict[str, Any]
    verification: VerificationReport
    attacks: list[AttackResult] = field(default_factory=list)
    posterior: list[dict[str, Any]] = field(default_factory=list)
    hygiene: list[Finding] = field(default_factory=list)
    identity: list[dict[str, Any]] = field(default_factory=list)
    #: The kinds' own attacks (:data:`versapub.verify.reading.kind_checks.KIND_CHECKS`).
    kind_attacks: list[dict[str, Any]] = field(default_factory=list)
    #: With ``k``: k-link and k-combinatorial anonymity of the release as a collection of
    #: count tables (:mod:`versapub.verify.collection.collection_check`).
    collection: list[dict[str, Any]] = field(default_factory=list)
    k: int | None = None
    #: With ``--max-risk``: the ceiling and the prosecutor measure it applies to.
    max_risk: dict[str, Any] | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    #: What the release was checked against, in words (the steward's requirement or the
    #: release's own claim), and whether the steward stated a requirement.
    checked_against: str = ""
    required: bool = False
    #: How many rules the steward's requirement states (None: the manifest's rules).
    rules_required: int | None = None

    #: With the original: the attacks on everything published (inference per rule, singling
    #: out and linkability per table; :mod:`versapub.verify.adversary.adversary_check`).
    adversary: dict[str, Any] | None = None
    #: With the original and treatments: what they changed, from the files and the original
    #: (:mod:`versapub.verify.treatments.perturbation_effect`).
    perturbation: dict[str, Any] | None = None

    #: The verification's own checks of a collection of marginals.
    COLLECTION_CHECKS = ("k-link", "k-combinatorial", "maxent-diversity", "collection")

    def noise_free_withheld(self) -> CheckReport:
        """What a differentially private release's own files may hold of this check (issue 66):
        nothing computed from the input without noise. The attacks on the input's records
        (their number, their success counts and shares) give way to their verdict and a
        sentence saying where to run them; the noise-scale test against the input
        (``dp noise``) keeps its verdict, not its statistics (a one-cell table's squared
        deviation is the record count's distance from the noisy one)."""
        from dataclasses import replace

        from versapub.verify.reading.primitives import VerificationReport

        findings = [
            replace(f, message=WITHHELD_NOISE) if f.check == "dp noise" else f for f in self.verification.findings
        ]
        verification = VerificationReport(self.verification.directory, findings)
        adversary = None
        if self.adversary is not None:
            ok = bool(self.adversary.get("ok", True))
            verdict = "within every ceiling asked for" if ok else "above a ceiling asked for: the release fails"
            adversary = {"withheld": WITHHELD_ATTACKS.format(verdict=verdict), "ok": ok, "rules": [], "tables": []}
        return replace(self, verification=verification, adversary=adversary)

    def findings_of(self, *checks: str) -> list[Finding]:
        """The verification's findings of these checks, in order."""
        return [f for f in self.verification.findings if f.check in checks]

    @property
    def ok(self) -> bool:
        return (
            self.verification.ok
            and all(a.ok for a in self.attacks)
            and all(p["ok"] for p in self.posterior)
            and all(f.ok for f in self.hygiene)
            and all(i["ok"] for i in self.identity)
            and all(a["ok"] for a in self.kind_attacks)
            and all(c["ok"] for c in self.collection)
            and (self.adversary is None or bool(self.adversary.get("ok", True)))
        )

    @property
    def attention(self) -> list[str]:
        """Warnings that need the steward's attention though every check passed: tables that
        leave records alone in their cell of columns that got no decision of their own, an older
        release whose files cannot be shown unchanged (no digests), and a rule whose posterior
        could not be checked (the reason said)."""
        out = [f"[{f.check}] {f.message}" for f in self.verification.findings if f.ok and f.attention]
        out += [f"[posterior] {p['message']}" for p in self.posterior if p.get("skipped")]
        adv = self.adversary or {}
        out += [f"[inference attack] {r['message']}" for r in adv.get("rules", []) if r.get("attention")]
        out += [f"[singling out {t['table']}] {t['message']}" for t in adv.get("tables", []) if t.get("attention")]
        return out + [f"[identity {i['table']}] {i['message']}" for i in self.identity if i.get("attention")]

    @property
    def verdict(self) -> str:
        """``failed``, ``attention`` (passed, with warnings that need attention) or ``passed``."""
        return "failed" if not self.ok else ("attention" if self.attention else "passed")

    def failures(self) -> list[str]:
        out = [f"[{f.check}{' ' + f.file if f.file else ''}] {f.message}" for f in self.verification.failures]
        for a in self.attacks:
            out += [f"[{a.method} attack] {d.describe()}" for d in a.disclosures[:20]]
            if a.disclosed > 20:
                out.append(f"[{a.method} attack] ... and {a.disclosed - 20:,} more disclosed target(s): {a.summary()}")
        out += [f"[posterior] {p['message']}" for p in self.posterior if not p["ok"]]
        out += [f"[hygiene {f.file}] {f.message}" for f in self.hygiene if not f.ok]
        out += [f"[identity {i['table']}] {i['message']}" for i in self.identity if not i["ok"]]
        out += [f"[{a['kind']} attack] {a['message']}" for a in self.kind_attacks if not a["ok"]]
        out += [
            f"[{c['check']}{' ' + c['file'] if c['file'] else ''}] {c['message']}"
            for c in self.collection
            if not c["ok"]
        ]
        adv = self.adversary or {}
        out += [f"[inference attack] {r['message']}" for r in adv.get("rules", []) if not r["ok"]]
        out += [f"[singling out {t['table']}] {t['message']}" for t in adv.get("tables", []) if not t["ok"]]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "verdict": self.verdict,
            "attention": self.attention,
            "checked_against": self.checked_against,
            "required": self.required,
            "guarantee": self.guarantee,
            "verification": self.verification.to_json(),
            "attacks": [a.to_json() for a in self.attacks],
            "posterior": self.posterior,
            "hygiene": [f.to_json() for f in self.hygiene],
            "identity": self.identity,
            "kind_attacks": self.kind_attacks,
            "collection": self.collection,
            "adversary": self.adversary,
            "perturbation": self.perturbation,
            "k": self.k,
            "max_risk": self.max_risk,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }


def _guarantee(directory: Path, requirement: Requirement, manifest: Manifest | None = None) -> Threshold:
    """The default guarantee checked: the one the steward requires, else the manifest's (a
    manifest whose guarantee cannot be built is an error, never a silent default)."""
    manifest = manifest_of(directory, manifest)
    spec = requirement.default(manifest)
    if not isinstance(spec, dict):
        raise ReleaseError(f"{directory / 'manifest.json'}: 'guarantee' must be an object like {{\"name\": ..., ...}}.")
    return threshold(spec)


def _by_guarantee(
    directory: Path, requirement: Requirement, manifest: Manifest | None = None
) -> list[tuple[Threshold, list[Rule]]]:
    """The rules checked, grouped by the guarantee each must meet (the requirement's, else
    the manifest's claim: :meth:`Requirement.rule_specs`)."""
    manifest = manifest_of(directory, manifest)
    groups: dict[str, tuple[Threshold, list[Rule]]] = {}
    for r, spec in requirement.rule_specs(manifest):
        key = json.dumps(spec, sort_keys=True)
        if key not in groups:
            groups[key] = (threshold(spec), [])
        groups[key][1].append(Rule.from_json(r))
    return list(groups.values())


def _records(original: EncodedTable) -> list[dict[str, str]]:
    d = original.to_pydict()
    return [dict(zip(d, vals, strict=True)) for vals in zip(*d.values(), strict=True)]


def run_attacks(
    directory: Path,
    rules: list[Rule],
    g: Thresholds,
    original: EncodedTable | None,
    which: str = "auto",
    manifest: Manifest | None = None,
) -> list[AttackResult]:
    """``auto``: exact when the release is small enough, and always the scalable attack."""
    manifest = manifest_of(directory, manifest)
    n = int(manifest["n_records"])
    out: list[AttackResult] = []
    small = n <= EXACT_MAX_RECORDS
    pub = None
    recs = _records(original) if original is not None and small else None
    if which == "exact" or (which in ("auto", "both") and small):
        pub = read_published(directory, rules, manifest)
        out.append(exact_attack(pub, g, recs))
    if which in ("auto", "both", "scalable"):
        if n <= SCALABLE_PROPAGATION_MAX_RECORDS:  # full propagation (Python) on small releases
            pub = pub or read_published(directory, rules, manifest)
            out.append(
                scalable_attack(pub, g, recs if recs is not None else (_records(original) if original else None))
            )
        else:  # SQL on the files: exact propagation for unlinked tables, a sound bound for linked ones
            out.append(fast_scalable_attack(directory, rules, g, original, manifest))
    if which != "exact" and generalizing_tables(manifest):
        out.append(generalized_attack(directory, rules, g, original, manifest))
    return out


def collection_identity(
    directory: Path, k: int | None, manifest: Manifest | None = None, keys: list[str] | None = None
) -> list[dict[str, Any]]:
    """With ``k``: k-link and k-combinatorial anonymity (Kifer & Gehrke's definitions)
    of every published count table's non-sensitive cells, the release read as a collection
    of marginals (the key variables — ``keys``, else the manifest's — or the attributes no
    rule protects).  A release that suppressed key values locally (an empty value matching
    any value) is read table by table (the identity check), which holds for the collection
    when no key column is published by two tables: otherwise it fails here."""
    if k is None:
        return []
    m = manifest_of(directory, manifest)
    named = keys_of(m, keys)
    rhs = {str(r.get("rhs")) for r in m.get("rules", []) if isinstance(r, dict)}
    quasi = None if named is None else [a for a in named if a not in rhs]
    left_out = excluded_of(m, keys)  # perturbed columns the release's floor left out (no keys named)
    if quasi is None and left_out:
        every = [str(a) for e in m.get("tables", []) if isinstance(e, dict) for a in e.get("attributes") or []]
        quasi = [a for a in dict.fromkeys(every) if a not in rhs and a not in left_out]
    if matches_any(m):
        shared = [(a, ts) for a, ts in shared_keys(m, quasi) if a not in rhs]
        return [
            {
                "check": "k-link",
                "ok": not shared,
                "message": (
                    f"key column {shared[0][0]!r} is published by tables {', '.join(shared[0][1])}: an empty value "
                    "matching any value (local suppression) has no reading across tables joined on it"
                    if shared
                    else f"--k {k} read table by table with an empty value matching any value (local suppression): "
                    "no key column is published by two tables, so no table links to another on the keys"
                ),
                "file": None,
            }
        ]
    if m.get("tables") and not any(reading(str(t.get("kind"))).records for t in m["tables"]):
        return [  # issue 71: differential privacy has no cells of records to hold k
            {
                "check": "k-link",
                "ok": True,
                "message": f"--k {k} has no meaning here: every table holds noisy or expected counts (differential "
                "privacy), no cell is a group of records; what one record can change is bounded by the budget",
                "file": None,
            }
        ]
    return [r.to_json() for r in check_collection(directory, k=k, quasi=quasi, diversity=False, manifest=manifest)]


def kind_attacks(directory: Path, manifest: Manifest, original: EncodedTable | None) -> list[dict[str, Any]]:
    """The own attack of every kind the release holds that has one (:data:`KIND_CHECKS`)."""
    kinds = dict.fromkeys(str(t.get("kind")) for t in manifest.get("tables", []))
    attacks = [KIND_CHECKS[k].attack for k in kinds if k in KIND_CHECKS]
    return [r for attack in attacks if attack is not None for r in attack(directory, original, manifest)]


def run_check(
    directory: str | Path,
    *,
    rules: list[Rule] | None = None,
    original: Source | None = None,
    attack: str = "auto",
    k: int | None = None,
    guarantee: dict[str, Any] | None = None,
    pairing_max_rows: int | None = PAIRING_MAX_ROWS,
    requirement: Requirement | None = None,
    population: Source | None = None,
    n_attacks: int = N_ATTACKS,
    progress: Callable[[str], None] | None = None,
    keys: list[str] | None = None,
) -> CheckReport:
    """Every check, from the release's files alone (the posterior from the files' group
    bounds or the verifier's own estimate, :mod:`versapub.verify.attacks.estimate`); ``guarantee``
    (``{"name": ..., params}``) and ``rules`` replace the manifest's: the steward checks what
    they require; ``k``: fail a table whose smallest published cell of non-sensitive values
    holds fewer than ``k`` records (of the key variables ``keys``, else the manifest's);
    ``population``: the population the records were drawn from (delta-presence, and k-map
    without a fraction, are checked against it).

    The verification (DuckDB), the attacks (DuckDB, CP-SAT), the posterior (numpy) and the
    row-order check (pyarrow) read independently and release the GIL in their engines, so
    they run side by side; when the verification finds unreadable or inconsistent files,
    the other results are discarded (attacking such files would prove nothing).
    """
    req = requirement or required(rules, guarantee)
    run = _Run(Path(directory), req, original, n_attacks, progress)
    # treated columns (top/bottom coding, rounding) and columns recoded to meet --k: read as published
    as_read, original = original, recoded_original(treated_original(original, run.parsed), run.parsed)
    run.in_memory = cast("EncodedTable | None", original if original is not None and original.in_memory else None)
    run.as_read = cast("EncodedTable | None", as_read if as_read is not None and as_read.in_memory else None)
    if run.in_memory is None and original is not None:  # on a cluster: the adversary attacks a seeded sample
        run.sampled = sampled_original(original)
    run.attack = attack
    k = k if k is not None else req.k
    with ThreadPoolExecutor(max_workers=4) as pool:
        # the verification treats and recodes the input as read itself (and recounts the rules' changes on it)
        verify_args = (run.d, as_read, None, None, pairing_max_rows, req, run.parsed, population)
        verification_f = pool.submit(run.timed, "verify", verify_release, *verify_args)
        try:
            if run.parsed is None:
                raise ValueError("the manifest cannot be parsed")  # the verification says why
            use_rules = [Rule.from_json(r) for r, _ in req.rule_specs(run.manifest)]
            g = _guarantee(run.d, req, run.manifest)
            _by_guarantee(run.d, req, run.manifest)  # every guarantee readable before the attacks start
        except (OSError, ValueError, KeyError, TypeError, VersapubError):  # the verifier names what is wrong
            return CheckReport(str(run.d), req.guarantee or {}, verification_f.result(), seconds=run.seconds)
        others = run.submit(pool, use_rules, k, keys)
        verification = verification_f.result()
        rep = CheckReport(
            str(run.d),
            g.to_manifest(),
            verification,
            seconds=run.seconds,
            checked_against=req.describe(run.manifest),
            required=req.stated,
            rules_required=len(req.rules) if req.rules is not None else None,
        )
        broken = {"manifest", "file", "counts", "anatomy"}
        if any(f.check in broken for f in verification.failures):
            for f in others.values():
                f.exception()  # wait, and discard
            return rep
        for name, future in others.items():
            setattr(rep, name, future.result())
        rep.k = k
        if req.max_risk is not None:
            rep.max_risk = {"value": req.max_risk, "measure": req.risk_measure}
    return rep


class _Run:
    """One check's shared state: the release's manifest and files parsed once, the
    requirement, the original held in memory (the attacks enumerate targets from it; a
    table on a cluster is not listed record by record: they then take their targets from
    the release) and each check's time."""

    def __init__(
        self, d: Path, req: Requirement, original: Source | None, n_attacks: int, progress: Callable[[str], None] | None
    ) -> None:
        self.d, self.req, self.n_attacks, self.progress = d, req, n_attacks, progress
        try:  # parsed once, handed to every check (the verification reports a manifest it cannot parse)
            self.parsed: Manifest | None = manifest_of(d)
        except (OSError, ValueError):
            self.parsed = None
        self.manifest: Manifest = self.parsed or {}
        self.files = ParsedFiles(d)  # the release's CSV files, parsed once for every check (issue 31)
        self.seconds: dict[str, float] = {}
        self.attack = "auto"  # exact | scalable | auto
        self.in_memory = cast("EncodedTable | None", original if original is not None and original.in_memory else None)
        self.as_read = self.in_memory  # the input before the release's treatments (set by check)
        #: A table on a cluster: a seeded sample of its records in memory, for the adversary (set by check).
        self.sampled: EncodedTable | None = None

    def timed(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        t = time.perf_counter()
        try:
            with memory_share(MEMORY_SHARES[name]), sharing(self.files):  # side by side: each its memory share
                return fn(*args)
        finally:
            self.seconds[name] = time.perf_counter() - t

    def submit(
        self, pool: ThreadPoolExecutor, use_rules: list[Rule], k: int | None, keys: list[str] | None = None
    ) -> dict[str, Future[Any]]:
        """Every check but the verification, started (by the report's field names)."""
        d, m, req = self.d, self.manifest, self.req
        risk = (req.max_risk, req.risk_measure, keys)
        return {
            "attacks": pool.submit(self.timed, "attacks", self.attacks),
            "posterior": pool.submit(self.timed, "posterior", self.posterior, use_rules),
            "hygiene": pool.submit(self.timed, "hygiene", hygiene_check, d, m),
            "identity": pool.submit(self.timed, "identity", identity_check, d, k, m, *risk),
            "kind_attacks": pool.submit(self.timed, "kind_attacks", kind_attacks, d, m, self.targets),
            "collection": pool.submit(self.timed, "collection", collection_identity, d, k, m, keys),
            "adversary": pool.submit(self.timed, "adversary", self.adversary),
            "perturbation": pool.submit(self.timed, "perturbation", self.perturbation),
        }

    def posterior(self, use_rules: list[Rule]) -> list[dict[str, Any]]:
        """Each rule's posterior: from the files' group bounds, else the verifier's own
        estimate (never the publisher's model)."""
        out: dict[Rule, dict[str, Any]] = {}
        fits: dict[str, Any] = {}  # an sa-groups table fitted once for the rules of every guarantee
        for gg, rules_g in _by_guarantee(self.d, self.req, self.manifest):
            bounds = group_bounds(self.d, rules_g, gg, self.manifest)  # from the files
            rest = [r for r in rules_g if r not in bounds]
            out.update(bounds)
            if rest:
                out.update(own_posterior(self.d, self.manifest, rest, gg, fits))
        for r in use_rules:
            if not out[r]["ok"]:
                out[r] = {
                    **out[r],
                    "tables": [t["name"] for t in _holding(self.manifest, r.rhs)],
                    "message": out[r]["message"] + posterior_hint(self.manifest, r),
                }
        return [out[r] for r in use_rules]

    def attacks(self) -> list[AttackResult]:
        return [
            a
            for gg, rules_g in _by_guarantee(self.d, self.req, self.manifest)
            for a in run_attacks(self.d, rules_g, gg, self.targets, self.attack, self.manifest)
        ]

    @property
    def targets(self) -> EncodedTable | None:
        """The table the exact-match attacks take their targets from: the original, unless
        a treatment perturbed columns (an adversary's true values then match no published
        value by design, which is no disclosure): the release's own combinations."""
        return None if perturbed_columns(self.manifest) else self.in_memory

    def perturbation(self) -> dict[str, Any] | None:
        # against the input as read: what every treatment changed, its input mean before any of them
        if self.as_read is None or not isinstance(self.manifest, dict) or not self.manifest.get("treatments"):
            return None
        with connect() as con:
            return perturbation_effect(self.d, self.manifest, self.as_read, con)

    def adversary(self) -> dict[str, Any] | None:
        attacked = self.in_memory if self.in_memory is not None else self.sampled
        if attacked is None:
            return None
        groups = _by_guarantee(self.d, self.req, self.manifest)
        out = adversary_check(
            self.d,
            self.manifest,
            attacked,
            groups,
            drawers(),
            n_attacks=self.n_attacks,
            max_singling_out=self.req.max_singling_out,
            progress=self.progress,
        )
        if attacked is self.sampled:  # said beside every figure: they are the sample's
            out["sample"] = {"records": attacked.n_rows, "seed": SAMPLE_SEED, "note": SAMPLE_NOTE}
        return out
