"""Differentially private releases end to end (issue 52): every registered mechanism over the
conformance catalog (written, verified from its files, read back, queried, sampled), the
noise's interval against a hand computation from the published files, forged releases
refused by the verifier, and the command line and configuration."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.csv as pacsv
import pytest
from click.testing import CliRunner

from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.io.release_writer import digests
from versapub.kinds import KINDS
from versapub.kinds.load import load_release
from versapub.mechanisms import MECHANISMS, make_mechanism
from versapub.model.query import parse_query
from versapub.publishing.dp_release import write_dp_release
from versapub.verify.check import run_check

from .test_conformance import CATALOG

pytest.importorskip("opendp")

#: The kinds a mechanism writes.
MECHANISM_KINDS = {k for k in KINDS if KINDS[k].counts != "exact"}
#: Every registered mechanism with the settings the conformance suite runs it in.
SETTINGS: dict[str, list[dict[str, object]]] = {
    "dp": [
        {"select": "mst"},
        {"select": "rules"},
        {"select": "given", "marginals": "q1+s;q2+s2"},
        {"select": "aim", "rounds": 6},
    ],
}
CASES = [(name, params) for name, settings in SETTINGS.items() for params in settings]


def _domains(table: EncodedTable) -> dict[str, list[str]]:
    """A test's declared domains: every value the column has, and one it does not."""
    return {a: sorted({str(v) for v in table.column(a).values} | {"unseen"}) for a in table.names}


def _publish(table: EncodedTable, out: Path, mechanism: str = "dp", **params: object) -> object:
    mech = make_mechanism(mechanism, epsilon=1.0, **params)
    synth = mech.run(table, _domains(table), [(("q1", "q2"), "s")])
    write_dp_release(synth, table, _domains(table), out, mechanism={"name": "dp"}, source={"path": "t.csv"})
    return synth


def test_the_conformance_settings_name_every_registered_mechanism() -> None:
    assert set(SETTINGS) == set(MECHANISMS)


@pytest.mark.parametrize("name", sorted(CATALOG))
@pytest.mark.parametrize(
    ("mechanism", "params"), CASES, ids=lambda x: str(x.get("select", x)) if isinstance(x, dict) else str(x)
)
def test_every_mechanism_over_the_catalog(tmp_path: Path, name: str, mechanism: str, params: dict[str, object]) -> None:
    """Written, verified from the files, read back as a model that sums to one over every
    declared value, queried with an interval from the noise, and sampled."""
    table = CATALOG[name]()
    out = tmp_path / "r"
    synth = _publish(table, out, mechanism, **params)
    rep = run_check(out, original=table)
    assert rep.ok, rep.failures()
    manifest = json.loads((out / "manifest.json").read_text())
    assert {t["kind"] for t in manifest["tables"]} == MECHANISM_KINDS
    assert "rows_read" not in manifest["input"] and "sha256" not in manifest["input"]  # functions of the data
    model = load_release(out)
    for a in table.names:
        assert set(model.domains[a]) == set(_domains(table)[a])  # declared, not read from the data
    joint = model.marginal(tuple(table.names))
    assert float(joint.values.sum()) == pytest.approx(1.0, abs=1e-9)
    assert model.n == max(1, round(synth.model.total))  # type: ignore[attr-defined]
    a = table.names[0]
    bound = _interval(out, f"{a} = '{table.column(a).values[0]}'")
    assert bound.basis == "dp-noise" and bound.method


def _interval(out: Path, text: str) -> object:
    from versapub.model.bounds import count_bounds, query_formula

    model = load_release(out)
    return count_bounds(model, query_formula(model, parse_query(text)))


def test_the_interval_is_the_noisy_cells_combined_by_inverse_variance(tmp_path: Path) -> None:
    """Hand computation from the published noisy files: every noisy table holding the
    query's attribute gives the sum of its selected cells with variance sigma^2 x cells; the
    interval is their inverse-variance mean ± 1.959964 sd (lower end clipped at 0)."""
    table = CATALOG["skewed"]()
    out = tmp_path / "r"
    _publish(table, out, select="given", marginals="q1+s;q1+q2")
    value = str(table.column("q1").values[0])
    manifest = json.loads((out / "manifest.json").read_text())
    answers, weights = [], []
    for t in manifest["tables"]:
        if t["kind"] != "noisy" or "q1" not in t["attributes"]:
            continue
        rows = pacsv.read_csv(out / t["files"]["data"]).to_pylist()
        picked = [r["count"] for r in rows if str(r["q1"]) == value]
        answers.append(sum(picked))
        weights.append(1.0 / (t["sigma"] ** 2 * len(picked)))
    assert len(answers) == 2  # q1+s and q1+q2 (a column no marginal names is measured alone)
    mean = sum(w * x for w, x in zip(weights, answers, strict=True)) / sum(weights)
    sd = math.sqrt(1.0 / sum(weights))
    b = _interval(out, f"q1 = '{value}'")
    assert b.lower == pytest.approx(max(0.0, mean - 1.959964 * sd), abs=1e-4)  # type: ignore[attr-defined]
    assert b.upper == pytest.approx(max(b.lower, mean + 1.959964 * sd), abs=1e-4)  # type: ignore[attr-defined]
    across = _interval(out, f"s = 's_0' AND q2 = '{table.column('q2').values[0]}'")  # measured apart: no interval
    assert across.basis == "dp-noise" and not across.method  # type: ignore[attr-defined]


def _forge(out: Path, change: object) -> list[str]:
    m = json.loads((out / "manifest.json").read_text())
    change(m)  # type: ignore[operator]
    (out / "manifest.json").write_text(json.dumps(m))
    return [f.message for f in run_check(out).verification.failures]


def test_a_forged_ledger_or_file_fails_check(tmp_path: Path) -> None:
    table = CATALOG["uniform"]()
    out = tmp_path / "r"
    _publish(table, out, select="mst")
    assert run_check(out).verification.ok

    def quieter(m: dict) -> None:  # a table claims less noise than its share pays for
        noisy = next(t for t in m["tables"] if t["kind"] == "noisy")
        noisy["sigma"] /= 2

    assert any("spends rho" in f for f in _forge(out, quieter))

    fresh = tmp_path / "r2"
    _publish(table, fresh, select="mst")

    def smaller_epsilon(m: dict) -> None:  # the same spending claimed for a smaller epsilon
        m["mechanism"]["ledger"]["epsilon"] = 0.5

    assert _forge(fresh, smaller_epsilon)

    third = tmp_path / "r3"
    _publish(table, third, select="mst")
    m = json.loads((third / "manifest.json").read_text())
    noisy = next(t for t in m["tables"] if t["kind"] == "noisy")
    path = third / noisy["files"]["data"]
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # a cell left out, digests recomputed
    m["digests"] = digests(third, [t["files"]["data"] for t in m["tables"]])
    (third / "manifest.json").write_text(json.dumps(m))
    failures = [f.message for f in run_check(third).verification.failures]
    assert any("cells of the declared domains" in f for f in failures), failures


def _csv(path: Path, table: EncodedTable) -> Path:
    pacsv.write_csv(__import__("pyarrow").table(table.to_pydict()), path)
    return path


def test_publish_mechanism_on_the_command_line_and_in_a_configuration(tmp_path: Path) -> None:
    table = CATALOG["uniform"]()
    data = _csv(tmp_path / "data.csv", table)
    flags = []
    for a, values in _domains(table).items():
        (tmp_path / f"{a}.txt").write_text("\n".join(values) + "\n")
        flags += ["--domain", f"{a}={tmp_path / f'{a}.txt'}"]
    run = CliRunner().invoke(
        cli, ["publish", "--input", str(data), "--mechanism", "dp:epsilon=2", *flags, "--out", str(tmp_path / "a")]
    )
    assert run.exit_code == 0, run.output
    assert "differentially private release" in run.output and "pairs selected by MST" in run.output
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["mechanism"]["ledger"]["epsilon"] == 2
    refused = CliRunner().invoke(
        cli, ["publish", "--input", str(data), "--mechanism", "dp:epsilon=1", *flags[:2], "--out", str(tmp_path / "b")]
    )
    assert refused.exit_code == 2 and "Declare the domain of" in refused.output and not (tmp_path / "b").exists()
    both = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(data),
            "--mechanism",
            "dp:epsilon=1",
            "--k",
            "5",
            *flags,
            "--out",
            str(tmp_path / "b"),
        ],
    )
    assert (
        both.exit_code == 2 and "--k belong(s) to a syntactic release" in both.output and not (tmp_path / "b").exists()
    )
    domains = "\n".join(f"{a} = {json.dumps(v)}" for a, v in _domains(table).items())
    (tmp_path / "job.toml").write_text(
        f'[input]\npath = "data.csv"\n\n[privacy]\nrules = ["q1, q2 -> s"]\n'
        f'mechanism = {{name = "dp", epsilon = 1, select = "rules"}}\n\n[privacy.domains]\n{domains}\n'
    )
    run = CliRunner().invoke(cli, ["publish", str(tmp_path / "job.toml"), "--out", str(tmp_path / "c")])
    assert run.exit_code == 0, run.output
    m = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert ["q1", "q2", "s"] in [t["attributes"] for t in m["tables"] if t["kind"] == "noisy"]
    q = CliRunner().invoke(cli, ["query", str(tmp_path / "c"), "q1 = 'q1_0' AND s = 's_0'"])
    assert q.exit_code == 0 and "95 % interval from the noise" in q.output, q.output


def _one_way(attr: str, counts: list[int], sigma: float) -> object:
    from versapub.mechanisms.measure import Entry, NoisyMarginal

    values = tuple(f"v{i}" for i in range(len(counts)))
    entry = Entry((attr,), len(counts), sigma, 1 / (2 * sigma**2))
    return NoisyMarginal((attr,), (values,), np.array(counts, dtype=np.int64), entry)


def test_mst_compression_by_hand() -> None:
    """Values whose noisy count is below 3 sigma merge (Private-PGM's compress_domain); the
    one-way measurement is re-expressed with the merged cell's scale sigma sqrt(m); a table
    over the compressed domain spreads a merged value's mass equally over its values."""
    from versapub.mechanisms.compress import compress, label

    sigma = 10.0
    m = _one_way("a", [100, 29, 30, -5, 31], sigma)  # 29 and -5 are below 3 sigma = 30
    keep_all = _one_way("b", [40, 50], sigma)
    comp = compress([m, keep_all], {"a": ["v0", "v1", "v2", "v3", "v4"], "b": ["v0", "v1"]})
    assert comp.recode["a"].tolist() == [0, 3, 1, 3, 2] and "b" not in comp.recode
    assert comp.values["a"] == ("v0", "v2", "v4", label(2)) and comp.merged["a"] == (label(2), ("v1", "v3"))
    noisy = comp.noisy(m)  # type: ignore[arg-type]
    assert noisy.counts.tolist() == [100, 30, 31, 24]
    assert noisy.cells is not None and noisy.cells.tolist() == pytest.approx([10, 10, 10, 10 * math.sqrt(2)])
    spread = comp.spread(("b", "a"), np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]))
    assert spread.tolist() == [[1.0, 2.0, 2.0, 2.0, 3.0], [5.0, 4.0, 6.0, 4.0, 7.0]]


def test_a_merged_value_that_is_not_the_declared_rare_values_fails_check(tmp_path: Path) -> None:
    table = CATALOG["many values"]()  # 40 values of s: some rare at a small epsilon
    out = tmp_path / "r"
    synth = make_mechanism("dp", epsilon=0.05, select="mst").run(table, _domains(table))
    write_dp_release(synth, table, _domains(table), out, mechanism={"name": "dp"}, source={"path": "t.csv"})
    m = json.loads((out / "manifest.json").read_text())
    merged = [t for t in m["tables"] if t.get("merged")]
    assert merged, "at epsilon 0.05 some value of 40 is rare"  # the 'unseen' value always is
    spec = next(iter(merged[0]["merged"].values()))
    spec["values"] = spec["values"][1:]  # one rare value left out of what the label covers
    (out / "manifest.json").write_text(json.dumps(m))
    failures = [f.message for f in run_check(out).verification.failures]
    assert any("domains that are not the declared ones" in f for f in failures), failures


def test_aim_candidates_and_model_size_by_hand() -> None:
    """AIM's downward closure weighted by shared attributes, and the junction tree's size."""
    from versapub.mechanisms.aim import candidates, model_size

    got = candidates([("a", "b"), ("b", "c")])
    assert got == {("a",): 1, ("b",): 2, ("c",): 1, ("a", "b"): 3, ("b", "c"): 3}
    cards = {"a": 4, "b": 1024, "c": 2}
    assert model_size([("a", "b"), ("b", "c")], cards) == pytest.approx((4 * 1024 + 1024 * 2) * 8 / 2**20)
    # a cycle a-b, b-c, a-c needs the triangle as one clique
    assert model_size([("a", "b"), ("b", "c"), ("a", "c")], cards) == pytest.approx(4 * 1024 * 2 * 8 / 2**20)


def test_aim_spends_exactly_its_budget_and_its_ledger_passes(tmp_path: Path) -> None:
    from versapub.mechanisms.accounting import rho_of

    table = CATALOG["skewed"]()
    out = tmp_path / "r"
    synth = _publish(table, out, select="aim", rounds=5)
    ledger = synth.ledger  # type: ignore[attr-defined]
    assert ledger.spent_rho == pytest.approx(rho_of(1.0, 1e-9), rel=1e-9)
    assert {e.step for e in ledger.entries} == {"measurement", "selection"}
    assert run_check(out, original=table).ok


def test_a_marginal_across_cliques_by_variable_elimination_equals_the_joint() -> None:
    """Fit.project over attributes no clique holds equals the brute-force joint of the
    junction tree's closed form (prod of clique marginals over prod of separators)."""
    from versapub.mechanisms.fit import Noisy, fit

    rng = np.random.default_rng(3)
    cards = {"a": 3, "b": 4, "c": 2, "d": 3}
    measured = [
        Noisy(("a", "b"), rng.integers(5, 50, (3, 4)).astype(float), 2.0),
        Noisy(("b", "c"), rng.integers(5, 50, (4, 2)).astype(float), 2.0),
        Noisy(("c", "d"), rng.integers(5, 50, (2, 3)).astype(float), 2.0),
    ]
    model = fit(measured, cards, iterations=500)
    ab, bc, cd = (model.marginal(m.attributes) / model.total for m in measured)
    b, c = ab.sum(axis=0), cd.sum(axis=1)
    joint = (
        ab[:, :, None, None]
        * bc[None, :, :, None]
        * cd[None, None, :, :]
        / b[None, :, None, None]
        / c[None, None, :, None]
    )
    assert joint.sum() == pytest.approx(1.0)
    want = joint.sum(axis=(1, 2)) * model.total  # over a and d: in no clique together
    assert np.allclose(model.project(("a", "d")), want)
    assert np.allclose(model.project(("d", "a")), want.T)


def test_a_warm_start_reaches_the_cold_fit() -> None:
    from versapub.mechanisms.fit import Noisy, fit

    rng = np.random.default_rng(5)
    cards = {"a": 3, "b": 4, "c": 2}
    first = [Noisy(("a", "b"), rng.integers(5, 50, (3, 4)).astype(float), 3.0)]
    more = [*first, Noisy(("b", "c"), rng.integers(5, 50, (4, 2)).astype(float), 3.0)]
    warm = fit(more, cards, iterations=3000, tolerance=1e-13, start=fit(first, cards))
    cold = fit(more, cards, iterations=3000, tolerance=1e-13)
    assert warm.loss == pytest.approx(cold.loss, rel=1e-6, abs=1e-6)
    assert np.allclose(warm.project(("a", "c")), cold.project(("a", "c")), atol=1e-3)


def test_side_by_side_with_a_syntactic_release_of_the_same_file(tmp_path: Path) -> None:
    """``publish_dp`` from Python with the job's rule; the checks attack the rule, read no
    guardian and no identity risk into noisy cells; ``risk`` says it measures nothing and
    ``compare`` sets the release beside Anatomy's, saying it records no input digest."""
    import versapub
    from versapub.inspect.comparison import compare
    from versapub.inspect.risks import risk

    table = CATALOG["uniform"]()
    data = _csv(tmp_path / "data.csv", table)
    read = versapub.read_table(data)
    synth = versapub.publish_dp(read, tmp_path / "dp", domains=_domains(table), epsilon=1.0, rules=["q1, q2 -> s"])
    assert next(e.attributes for e in synth.ledger.entries if e.step == "measurement") == ("q1", "q2", "s")
    rep = run_check(tmp_path / "dp", original=read)
    assert rep.ok and rep.adversary is not None and rep.adversary["rules"], rep.failures()
    messages = [f.message for f in rep.verification.findings]
    assert any("Guardian Normal Form is a property of syntactic releases" in m for m in messages)
    assert all(i["ok"] and not i["attention"] and "not a person one can find" in i["message"] for i in rep.identity)
    assert not risk(tmp_path / "dp").tables and "publishes no table of records" in risk(tmp_path / "dp").notes[0]
    args = ["publish", "--input", str(data), "--rule", "q1, q2 -> s", "--l", "2", "--others", "insensitive"]
    assert CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "anatomy"), "--quiet"]).exit_code == 0
    cmp = compare([tmp_path / "anatomy", tmp_path / "dp"], data)
    rows = {Path(str(r["release"])).name: r for r in cmp.rows}
    assert rows["dp"]["guarantee"].startswith("differential-privacy") and rows["dp"]["prosecutor_highest"] is None
    assert rows["dp"]["workload_median"] is not None and rows["anatomy"]["prosecutor_highest"] is not None
    assert any("record(s) no digest of the input" in n for n in cmp.notes)
    side = CliRunner().invoke(
        cli, ["evaluate", str(tmp_path / "anatomy"), str(tmp_path / "dp"), "--original", str(data)]
    )
    assert side.exit_code == 0 and "differential" in side.output and "l-diversity" in side.output, side.output


def test_declared_domains_lists_ranges_and_files(tmp_path: Path) -> None:
    from versapub.errors import ConfigError
    from versapub.io.dp_config import domain_values

    (tmp_path / "d.txt").write_text("b\na\n\nb\n")
    assert domain_values("x", ["a", 1], tmp_path, "w") == ("a", "1")
    assert domain_values("x", "17..19", tmp_path, "w") == ("17", "18", "19")
    assert domain_values("x", {"from": -1, "to": 1}, tmp_path, "w") == ("-1", "0", "1")
    assert domain_values("x", "d.txt", tmp_path, "w") == ("b", "a")  # in the file's order, once each
    for bad in ("19..17", [], "missing.txt", {"from": 1}):
        with pytest.raises(ConfigError, match="'x'"):
            domain_values("x", bad, tmp_path, "w")


@pytest.mark.slow
def test_the_side_by_side_experiment_runs(tmp_path: Path) -> None:
    """``versapub experiment dp`` end to end (about a minute): every release published,
    verified and compared; the page drawn from its results."""
    out = tmp_path / "dp"
    run = CliRunner().invoke(cli, ["experiment", "dp", "--out", str(out)])
    assert run.exit_code == 0, run.output
    results = json.loads((out / "results.json").read_text())
    assert {r["release"] for r in results["runs"]} >= {"anatomy", "mondrian", "marginals", "dp-mst-eps1", "dp-aim-eps1"}
    assert all(r["measures"].get("verdict") in ("passed", "attention") for r in results["runs"])
    page = tmp_path / "results-dp.md"
    assert CliRunner().invoke(cli, ["experiment", "dp-page", "--out", str(out), "--page", str(page)]).exit_code == 0
    assert "DP, AIM, epsilon 1" in page.read_text()


def test_fitted_cliques_that_disagree_fail_check(tmp_path: Path) -> None:
    """Mass moved between two cells of one fitted table (its total kept): the cliques no longer
    agree on what they share, and ``check`` says so."""
    import pyarrow as pa

    table = CATALOG["skewed"]()
    out = tmp_path / "r"
    _publish(table, out, select="given", marginals="q1+q2;q2+s")
    m = json.loads((out / "manifest.json").read_text())
    fitted = [t for t in m["tables"] if t["kind"] == "fitted" and "q2" in t["attributes"]]
    assert len(fitted) == 2  # q1+q2 and q2+s share q2 (s2, measured alone, is a clique of its own)
    path = out / fitted[0]["files"]["data"]
    t = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types={"count": pa.float64()}))
    q2, counts = t.column("q2").to_pylist(), t.column("count").to_pylist()
    first = max(range(len(counts)), key=counts.__getitem__)  # the fullest cell: at least total / cells
    other = next(i for i, v in enumerate(q2) if v != q2[first])
    moved = counts[first] / 2
    counts[first] -= moved
    counts[other] += moved
    pacsv.write_csv(t.set_column(t.column_names.index("count"), "count", pa.array(counts)), path)
    m["digests"] = digests(out, [x["files"]["data"] for x in m["tables"]])
    (out / "manifest.json").write_text(json.dumps(m))
    failures = [f.message for f in run_check(out).verification.failures]
    assert any("fitted cliques agree" in f and "largest difference" in f for f in failures), failures


def test_preprocessing_that_claims_a_budget_fails_check(tmp_path: Path) -> None:
    table = CATALOG["uniform"]()
    out = tmp_path / "r"
    _publish(table, out, select="mst")
    m = json.loads((out / "manifest.json").read_text())
    assert m["mechanism"]["preprocessing"][0] == {
        "step": "domains",
        "source": "declared (public knowledge)",
        "rho": 0.0,
    }

    def spends(m: dict) -> None:  # a domain learned from the data, its cost outside the ledger
        m["mechanism"]["preprocessing"][0]["rho"] = 0.001

    assert any("claim a budget the ledger does not hold" in f for f in _forge(out, spends))


def test_a_mechanism_section_beside_tables_of_records_skips_no_check(tmp_path: Path) -> None:
    """A syntactic release whose manifest is given a ``mechanism`` section is still checked as
    one: its rules' Guardian Normal Form, its record count against the input."""
    table = CATALOG["uniform"]()
    data = _csv(tmp_path / "data.csv", table)
    args = ["publish", "--input", str(data), "--rule", "q1, q2 -> s", "--l", "2", "--others", "insensitive"]
    assert CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "a"), "--quiet"]).exit_code == 0
    m = json.loads((tmp_path / "a" / "manifest.json").read_text())
    m["mechanism"] = {"name": "dp", "ledger": {}}
    m["n_records"] += 1
    (tmp_path / "a" / "manifest.json").write_text(json.dumps(m))
    from versapub.io.read import read_table

    rep = run_check(tmp_path / "a", original=read_table(data))
    messages = [f.message for f in rep.verification.findings]
    assert not any("property of syntactic releases" in x for x in messages)
    assert any("'q1, q2 -> s'" in x or "q1, q2 -> s" in x for x in messages if "guard" in x.lower() or "GNF" in x)
    assert any("but the input has" in f.message for f in rep.verification.failures)
