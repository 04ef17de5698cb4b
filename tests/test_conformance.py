"""One contract for every registered plug-in (issue 11, item 5; issue 26).

Every registered anonymizer (aliases included) × every registered guarantee × a catalog of
tables, and every registered decomposition × random rule sets, must: give a schema in GNF;
pass the guarantee's own per-group test and the independent verifier's check; publish every
marginal exactly; write and load back (CSV and Parquet, every table kind) to the same
marginals; and disclose no record to the attacks — or refuse in one paragraph naming what it
refuses (a parameter with its value, or the guarantee and the anonymizer).  The suite cannot
pass by refusing: every anonymizer publishes, every guarantee is published, every supported
pair publishes on some table; and every registered table kind makes a round trip (write,
read, verify, attack, model from files = model in memory, ``check --k``).  A new plug-in is
tested by registering it — nothing else.  Modelled on ``tests/test_model.py``'s catalog ×
seeds pattern.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import versapub
from versapub.anonymizers import ALIASES, ANONYMIZERS, make_anonymizer
from versapub.anonymizers.base import PublishRequest
from versapub.data.table import EncodedTable
from versapub.decompositions import DECOMPOSITIONS
from versapub.errors import ConfigError, InfeasibleError
from versapub.kinds import KINDS
from versapub.privacy.guarantees.context import bind
from versapub.privacy.guarantees.guarantee import GUARANTEES, Histograms, make_guarantee
from versapub.privacy.rules import Rule
from versapub.verify.files.release_check import verify_release

from .conftest import random_table

#: Parameters each registered guarantee is exercised with (a new guarantee adds its grid here).
GUARANTEE_PARAMS: dict[str, list[dict[str, object]]] = {
    "l-diversity": [{"l": 2}, {"l": 3}],
    "distinct-l-diversity": [{"l": 3}],
    "entropy-l-diversity": [{"l": 2.5}],
    "recursive-cl-diversity": [{"c": 2, "l": 3}, {"c": 0.5, "l": 2}],
    "k-anonymity": [{"k": 4}],
    "t-closeness": [{"t": 0.3}],
    "all-of": [{"guarantees": [{"name": "l-diversity", "l": 2}, {"name": "entropy-l-diversity", "l": 2}]}],
    "functional-diversity": [{"tau": 0.5, "lambda": 3}],
    "beta-likeness": [{"beta": 1.5}, {"beta": 3, "enhanced": True}],
    "delta-disclosure": [{"delta": 1.5}],
    "k-map": [{"k": 8, "fraction": 0.5}, {"k": 6}],
    "delta-presence": [{"delta_min": 0.05, "delta_max": 0.6}],
}


def population_of(table: EncodedTable) -> EncodedTable:
    """The population a catalog table is drawn from (for the models checked against one):
    its records, then as many again with each column shuffled (seeded), so that classes
    cover different shares of it."""
    rng = np.random.default_rng(11)
    d = table.to_pydict()
    return EncodedTable.from_columns({k: v + [v[i] for i in rng.permutation(len(v))] for k, v in d.items()})


def _population_for(spec: dict[str, object], table: EncodedTable) -> EncodedTable | None:
    return population_of(table) if "population" in make_guarantee(spec).needs() else None


def _catalog() -> dict[str, Callable[[], EncodedTable]]:
    def make(n: int, cards: dict[str, int], skew: float, seed: int) -> Callable[[], EncodedTable]:
        return lambda: random_table(np.random.default_rng(seed), n, cards, skew)

    def dominant() -> EncodedTable:  # one sensitive value holds a third of the records
        rng = np.random.default_rng(4)
        t = random_table(rng, 90, {"q1": 3, "q2": 4, "s2": 4}, 0.5).to_pydict()
        t["s"] = ["s_top" if i % 3 == 0 else f"s_{i % 11}" for i in range(90)]
        return EncodedTable.from_columns(t)

    return {
        "skewed": make(120, {"q1": 4, "q2": 5, "s": 6, "s2": 5}, 1.0, 1),
        "uniform": make(100, {"q1": 3, "q2": 3, "s": 5, "s2": 4}, 0.0, 2),
        "tiny": make(12, {"q1": 2, "q2": 2, "s": 4, "s2": 3}, 0.0, 3),
        "one-value-dominant": dominant,
        "many values": make(150, {"q1": 12, "q2": 9, "s": 40, "s2": 30}, 0.3, 5),
    }


CATALOG = _catalog()
#: The catalog's columns that no rule names are published as insensitive (a decision, issue 27).
OTHERS_INSENSITIVE = versapub.ColumnRoles(others="insensitive")
ANONYMIZER_NAMES = sorted({*ANONYMIZERS, *ALIASES})
GUARANTEE_SPECS = [{"name": name, **p} for name in sorted(GUARANTEES) for p in GUARANTEE_PARAMS[name]]


def test_every_registered_guarantee_has_a_parameter_grid() -> None:
    assert set(GUARANTEE_PARAMS) == set(GUARANTEES)


def _marginals_equal(model: versapub.ReleaseModel, table: EncodedTable, withheld: set[str]) -> None:
    """Every attribute's marginal is the original's — except a sensitive attribute whose
    values some records withhold (multi-SA's suppressed group): the model spreads those
    records over its domain, and the verifier checks the published counts stay below."""
    for a in table.names:
        m = model.marginal((a,))
        assert m.values.sum() * model.n == pytest.approx(table.n_rows)
        if a in withheld:
            continue
        got = dict(zip((str(model.domains[a][c]) for c in m.codes[0]), m.values * model.n, strict=True))
        want = dict(zip(table.column(a).values.astype(str), table.column(a).counts(), strict=True))
        assert set(want) <= set(got)
        for v, c in want.items():
            assert got[v] == pytest.approx(c, abs=1e-6), (a, v)


def _batched_queries_equal_marginals(model: versapub.ReleaseModel) -> None:
    """The model's batched COUNT answers equal the same conditions summed over its
    marginal (a different code path: messages carrying the query's attributes)."""
    rng = np.random.default_rng(0)
    names = list(model.attributes)
    queries = []
    for _ in range(12):
        chosen = list(rng.choice(names, size=int(rng.integers(1, min(3, len(names)) + 1)), replace=False))
        queries.append({a: rng.random(model.cards[a]) < 0.5 for a in chosen})
    got = model.probability_batch(queries)
    for q, p in zip(queries, got, strict=True):
        attrs = tuple(sorted(q, key=names.index))
        m = model.marginal(attrs)
        keep = np.ones(len(m.values), dtype=bool)
        for a, codes in zip(m.attrs, m.codes, strict=True):
            keep &= q[a][codes]
        assert p == pytest.approx(float(m.values[keep].sum()), abs=1e-9), attrs


def _check_release(rel: versapub.Release, table: EncodedTable, out: Path, fmt: str) -> None:
    assert rel.gnf.ok
    g = rel.guarantee
    for t in rel.tables:  # the guarantee's own per-group test, on what was published
        if "st" in t.table.parts:
            st_ = t.table.parts["st"]
            gid = st_.column("group_id").astype(np.int64)
            n_groups = int(gid.max()) + 1 if len(gid) else 0
            if len(t.table.sensitive_attributes) == 1:  # several: per line, checked by the verifier
                (s,) = t.table.sensitive_attributes
                # the st's codes are the table's (a guarantee comparing with the whole table is bound to it)
                hist = Histograms(gid, st_.counts.astype(np.int64), n_groups, st_.column(s).astype(np.int64))
                assert bind(g, table, s).groups_satisfied(hist).all(), t.name
    versapub.write_release(rel, out, format=fmt)  # runs the independent verifier and the attacks
    population = rel.population.table if rel.population is not None else None
    assert verify_release(out, original=table, population=population).ok
    withheld = {a for t in rel.tables if t.table.stats.get("suppressed_records") for a in t.table.sensitive_attributes}
    # A generalized attribute's marginal is its labels' counts spread over their leaves.
    withheld |= {a for t in rel.tables for a in t.table.leaves}
    loaded, in_memory = versapub.load_release(out), versapub.model_from_release(rel)
    _marginals_equal(loaded, table, withheld)
    _marginals_equal(in_memory, table, withheld)
    for a in table.names:  # the model from the files is the model in memory
        x, y = loaded.marginal((a,)), in_memory.marginal((a,))
        got = {str(loaded.domains[a][c]): v for c, v in zip(x.codes[0], x.values, strict=True)}
        want = {str(in_memory.domains[a][c]): v for c, v in zip(y.codes[0], y.values, strict=True)}
        assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k]) for k in got), a
    _batched_queries_equal_marginals(versapub.load_release(out))
    kinds = {t.kind for t in rel.tables}
    assert kinds <= set(KINDS)


def _rules_for(anonymizer: str) -> list[Rule]:
    several = make_anonymizer(anonymizer).max_rules > 1
    return [Rule(("q1", "q2"), "s"), Rule(("q1", "q2"), "s2")] if several else [Rule(("q1", "q2"), "s")]


def _publish(anonymizer: str, spec: dict[str, object], table: EncodedTable) -> versapub.Release:
    several = make_anonymizer(anonymizer).max_rules > 1
    return versapub.publish(
        table,
        _rules_for(anonymizer),
        guarantee=make_guarantee(spec),
        anonymizer=anonymizer,
        columns=OTHERS_INSENSITIVE,
        decomposition="multi-sa" if several else "uad",
        seed=7,
        population=_population_for(spec, table),
    )


def _params(spec: dict[str, object]) -> list[str]:
    """The parameters a refusal may name: the guarantee's own, or those of its parts."""
    if spec["name"] == "all-of":
        return [p for part in spec["guarantees"] for p in _params(part)]  # type: ignore[attr-defined]
    return [k for k in spec if k != "name"]


def assert_names_what_it_refuses(exc: Exception, anonymizer: str, spec: dict[str, object]) -> None:
    """A refusal is one paragraph naming what it refuses: an infeasible requirement names a
    parameter of the guarantee with a value ("l = 3", "the largest feasible l is 1"); a
    guarantee the anonymizer cannot provide names both (by their registered names)."""
    msg = str(exc)
    assert "Traceback" not in msg and "\n" not in msg.strip()
    if isinstance(exc, InfeasibleError):
        named = [p for p in _params(spec) if re.search(rf"(?<![\w-]){re.escape(p)}(_\w+)? (=|is) [0-9]", msg)]
        assert named, (spec, msg)
    else:
        assert isinstance(exc, ConfigError)
        assert make_guarantee(spec).name in msg and make_anonymizer(anonymizer).name in msg, (anonymizer, msg)


@pytest.mark.parametrize("table_name", sorted(CATALOG))
@pytest.mark.parametrize("spec", GUARANTEE_SPECS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
@pytest.mark.parametrize("anonymizer", ANONYMIZER_NAMES)
def test_every_anonymizer_with_every_guarantee_on_the_catalog(
    tmp_path: Path, anonymizer: str, spec: dict[str, object], table_name: str
) -> None:
    table = CATALOG[table_name]()
    fmt = "parquet" if sorted(CATALOG).index(table_name) % 2 else "csv"
    try:
        rel = _publish(anonymizer, spec, table)
    except (InfeasibleError, ConfigError) as exc:  # refused with its reason, never published
        assert_names_what_it_refuses(exc, anonymizer, spec)
        if isinstance(exc, ConfigError):
            # only a guarantee outside the anonymizer's reach: multi-sa encodes frequency l-diversity,
            # msa-decomposition distinct l-diversity of sets (Definition 3); sequential-sweep and
            # one-d-l-diversity work on bounds of cumulative frequencies; anatomy publishes QIs exactly
            g = make_guarantee(spec)
            cumulative = anonymizer in ("sequential-sweep", "one-d-l-diversity") and g.cumulative_bound() is None
            assert g.group_width() is None or anonymizer in ("multi-sa", "msa-decomposition") or cumulative, exc
        return
    assert rel.anonymizer == make_anonymizer(anonymizer).name
    _check_release(rel, table, tmp_path / "r", fmt)


def _outcomes() -> dict[tuple[str, str, str], str]:
    """Every catalog case: ``published``, or the refusal's class (publishing only: the grid
    test above writes, verifies and attacks each published one)."""
    out = {}
    for a in ANONYMIZER_NAMES:
        for spec in GUARANTEE_SPECS:
            for name in sorted(CATALOG):
                try:
                    _publish(a, spec, CATALOG[name]())
                    out[(a, str(spec), name)] = "published"
                except (InfeasibleError, ConfigError) as exc:
                    out[(a, str(spec), name)] = type(exc).__name__
    return out


def test_the_suite_does_not_pass_by_refusing() -> None:
    """Issue 26: every registered anonymizer publishes catalog cases, every registered
    guarantee is published by some anonymizer, every (anonymizer, guarantee) pair the
    anonymizer supports (not refused as outside its reach) publishes on some catalog table,
    and most supported cases publish (each refusal is asserted above to name what it refuses)."""
    outcomes = _outcomes()
    pairs: dict[tuple[str, str], list[str]] = {}
    for (a, spec, _), v in outcomes.items():
        pairs.setdefault((a, spec), []).append(v)
    for a in ANONYMIZER_NAMES:
        assert any(v == "published" for (x, _, _), v in outcomes.items() if x == a), f"{a} never publishes"
    names = {spec["name"]: str(spec) for spec in GUARANTEE_SPECS}
    for name in GUARANTEES:
        assert any("published" in vs for (_, spec), vs in pairs.items() if names[name] == spec or f"'{name}'" in spec)
    supported = {k: vs for k, vs in pairs.items() if "ConfigError" not in vs}
    never = [k for k, vs in supported.items() if "published" not in vs]
    assert not never, never
    cases = [v for vs in supported.values() for v in vs]
    share = cases.count("published") / len(cases)
    assert share >= 0.7, f"only {share:.0%} of the supported conformance cases publish"


def _a_release_of_kind(kind: str) -> tuple[versapub.Release, EncodedTable]:
    """The first catalog release (every registered decomposition × anonymizer × guarantee ×
    table) holding a table of ``kind``: a kind no plug-in produces fails."""
    for dec in sorted(DECOMPOSITIONS):
        for a in ANONYMIZER_NAMES:
            for spec in GUARANTEE_SPECS:
                for name in sorted(CATALOG):
                    table = CATALOG[name]()
                    try:
                        rel = versapub.publish(
                            table,
                            _rules_for(a),
                            guarantee=make_guarantee(spec),
                            anonymizer=a,
                            columns=OTHERS_INSENSITIVE,
                            decomposition=dec,
                            seed=7,
                            population=_population_for(spec, table),
                        )
                    except (InfeasibleError, ConfigError):
                        continue
                    if kind in {t.kind for t in rel.tables}:
                        return rel, table
    raise AssertionError(f"no registered plug-in publishes a table of kind {kind!r} on the catalog")


#: Kinds an anonymizer writes; those a mechanism writes (noisy and expected counts) go through
#: the mechanism conformance of tests/test_dp_release.py.
ANONYMIZED_KINDS = sorted(k for k in KINDS if KINDS[k].counts == "exact")


@pytest.mark.parametrize("kind", ANONYMIZED_KINDS)
def test_a_round_trip_for_every_registered_kind(tmp_path: Path, kind: str) -> None:
    """Write, read, verify, attack, the model from the files equal to the model in memory
    (the whole joint), and ``check --k`` — for each registered table kind."""

    rel, table = _a_release_of_kind(kind)
    _round_trip(rel, table, tmp_path)


def _round_trip(rel: versapub.Release, table: EncodedTable, tmp_path: Path) -> None:
    """Write, read, verify, attack, the model from the files equal to the model in memory
    (the whole joint), and ``check --k``."""
    from click.testing import CliRunner

    from versapub.cli.main import cli
    from versapub.verify.check import run_check

    out = tmp_path / "r"
    assert versapub.write_release(rel, out).ok
    rep = run_check(out, original=table)
    assert rep.ok and rep.attacks and all(a.ok for a in rep.attacks), rep.failures()
    loaded, in_memory = versapub.load_release(out), versapub.model_from_release(rel)
    attrs = tuple(table.names)

    def joint(model: versapub.ReleaseModel) -> dict[tuple[str, ...], float]:
        m = model.marginal(attrs)
        keys = zip(*(model.domains[a][c] for a, c in zip(m.attrs, m.codes, strict=True)), strict=True)
        return {tuple(str(v) for v in k): float(p) for k, p in zip(keys, m.values, strict=True)}

    a, b = joint(loaded), joint(in_memory)
    assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], abs=1e-12) for k in a)
    code = CliRunner().invoke(cli, ["check", str(out), "--k", "2", "--json"])
    collection = json.loads(code.stdout)["collection"]
    assert {c["check"] for c in collection} >= {"k-link", "k-combinatorial"}, code.stdout


def test_a_kind_no_registered_anonymizer_emits_is_reached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kind recipe is complete: a kind registered with its module (here Anatomy's under
    another name) and its entry in the verifier's kind table goes through the whole round
    trip — writer, verifier, attacks, release model, ``check --k`` — with nothing else
    knowing its name, emitted by a plug-in object no registry lists."""
    from dataclasses import replace

    from versapub.anonymizers import Anatomy
    from versapub.verify.reading.kind_checks import KIND_CHECKS

    class Copy(type(KINDS["anatomy"])):  # type: ignore[misc]
        name = "anatomy-copy"
        glossary = "Anatomy's tables under another kind name (a conformance test)."

    class Emits:
        name = "emits-anatomy-copy"
        max_rules = 1
        parameter_constraints: ClassVar[dict[str, object]] = {}
        glossary = "Anatomy relabelled."

        def params(self) -> dict[str, object]:
            return {}

        def publish(self, request: PublishRequest) -> object:
            return replace(Anatomy().publish(request), kind="anatomy-copy")

    monkeypatch.setitem(KINDS, "anatomy-copy", Copy())
    monkeypatch.setitem(KIND_CHECKS, "anatomy-copy", KIND_CHECKS["anatomy"])
    table = CATALOG[sorted(CATALOG)[0]]()
    rel = versapub.publish(table, _rules_for("anatomy"), l=2, anonymizer=Emits(), columns=OTHERS_INSENSITIVE, seed=7)  # type: ignore[arg-type]
    assert "anatomy-copy" in {t.kind for t in rel.tables}
    _round_trip(rel, table, tmp_path)


def test_the_verifier_knows_every_registered_kind() -> None:
    from versapub.verify.reading.kind_checks import KIND_CHECKS

    assert set(KIND_CHECKS) == set(KINDS)
    # its own reading of each kind's files (issue 46: the verifier loads nothing of versapub.kinds)
    assert all(c.reading is not None for c in KIND_CHECKS.values())


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), fmt=st.sampled_from(["csv", "parquet"]))
@pytest.mark.parametrize("decomposition", sorted(DECOMPOSITIONS))
def test_every_decomposition_on_random_rule_sets(
    tmp_path_factory: pytest.TempPathFactory, decomposition: str, seed: int, fmt: str
) -> None:
    rng = np.random.default_rng(seed)
    attrs = [f"a{i}" for i in range(int(rng.integers(3, 6)))]
    table = random_table(rng, int(rng.integers(30, 90)), {a: int(rng.integers(2, 6)) for a in attrs}, skew=0.3)
    rules = []
    for _ in range(int(rng.integers(1, 4))):
        rhs = str(rng.choice(attrs))
        others = [a for a in attrs if a != rhs]
        lhs = rng.choice(others, size=int(rng.integers(1, len(others) + 1)), replace=False)
        rules.append(Rule(tuple(str(x) for x in lhs), rhs))
    try:
        rel = versapub.publish(
            table,
            rules,
            l=2,
            seed=seed,
            decomposition=decomposition,
            anonymizer_params={"time_limit_s": 5} if decomposition == "multi-sa" else None,
            columns=OTHERS_INSENSITIVE,
        )
    except InfeasibleError as exc:  # refused naming the parameter (l) and its value
        assert_names_what_it_refuses(exc, "anatomy", {"name": "l-diversity", "l": 2})
        return
    _check_release(rel, table, tmp_path_factory.mktemp("d") / "r", fmt)


#: Parameters each registered treatment is exercised with on a numeric column ``x`` (a new
#: treatment adds its grid here).
TREATMENT_PARAMS: dict[str, list[dict[str, object]]] = {
    "top-coding": [{"threshold": 40}, {"quantile": 0.9, "value": 99}],
    "bottom-coding": [{"threshold": 10}, {"quantile": 0.2}],
    "rounding": [{"base": 5}, {"base": 2.5}],
    "microaggregation": [{"k": 3}, {"k": 2, "method": "optimal", "aggregate": "median"}],
    "noise": [{"magnitude": 10}, {"magnitude": 20, "method": "correlated"}],
    "pram": [{"retention": 0.8}, {"retention": 0.6, "invariant": True}],
    "rank-swapping": [{"p": 10}],
    "targeted-swapping": [{"keys": ["q1"], "rate": 0.2}],
}


def test_every_registered_treatment_has_a_parameter_grid() -> None:
    from versapub.treatments import TREATMENTS

    assert set(TREATMENT_PARAMS) == set(TREATMENTS)


@pytest.mark.parametrize("table_name", sorted(CATALOG))
def test_every_treatment_on_the_catalog_verifies_against_the_untreated_input(tmp_path: Path, table_name: str) -> None:
    """Each treatment (its grid) on a catalog table with a numeric column ``x`` beside it:
    the default job publishes, the manifest records the treatment, and the release verifies
    from its files and against the untreated input (the verifier treats it itself)."""
    rng = np.random.default_rng(sorted(CATALOG).index(table_name))
    d = CATALOG[table_name]().to_pydict()
    d["x"] = [str(int(v)) for v in rng.integers(0, 60, len(d["s"]))]
    table = EncodedTable.from_columns(d)
    for name, grid in TREATMENT_PARAMS.items():
        for i, params in enumerate(grid):
            rel = versapub.publish(
                table,
                ["q1, q2 -> s"],
                l=2,
                columns=OTHERS_INSENSITIVE,
                treatments=[{"name": name, "columns": ["x"], **params}],
            )
            out = tmp_path / f"{name}{i}"
            versapub.write_release(rel, out, format="csv")
            m = json.loads((out / "manifest.json").read_text())
            assert [t["name"] for t in m["treatments"]] == [name]
            rep = verify_release(out, original=table.select(list(rel.attributes)))
            assert rep.ok, (name, params, rep.explain())
            assert any(f.check == "treatment" and f.ok for f in rep.findings)
