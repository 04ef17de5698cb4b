"""The msa-decomposition anonymizer end to end (issue 14): its sa-groups release written,
verified independently and loaded; hand corruptions caught with the group and attribute
named; bad input refused; the release model against a brute-force maximum-entropy oracle;
the background-knowledge attack and the paper's measure against brute force."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import versapub
from versapub.anonymizers.bucketizing.msa_decomposition import l_per
from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.errors import ConfigError, InfeasibleError
from versapub.model.set_groups import allowed_pairs, fit
from versapub.verify.attacks.attack_msa import msa_attack
from versapub.verify.files.release_check import verify_release

from .conftest import random_table


def _rules(qi: list[str], ls: dict[str, int | None]) -> list[object]:
    lhs = ", ".join(qi)
    return [
        f"{lhs} -> {s}" if l is None else {"rule": f"{lhs} -> {s}", "guarantee": "distinct-l-diversity", "l": l}
        for s, l in ls.items()
    ]


def _publish(table: EncodedTable, qi: list[str], ls: dict[str, int | None], **params: object) -> versapub.Release:
    return versapub.publish(
        table,
        _rules(qi, ls),
        anonymizer="msa-decomposition",
        anonymizer_params=params,
        seed=3,
        columns=versapub.ColumnRoles(others="insensitive"),
    )


def _table(seed: int = 1, n: int = 240) -> EncodedTable:
    return random_table(np.random.default_rng(seed), n, {"a": 4, "b": 5, "s1": 8, "s2": 6, "s3": 5}, skew=0.4)


def _sets(path: Path) -> dict[tuple[int, str], set[str]]:
    out: dict[tuple[int, str], set[str]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault((int(row["group_id"]), row["attribute"]), set()).add(row["value"])
    return out


def test_release_is_written_verified_and_loaded(tmp_path: Path) -> None:
    table = _table()
    rel = _publish(table, ["a", "b"], {"s1": None, "s2": 3, "s3": None})
    assert rel.decomposition == "multi-sa"  # the anonymizer's own schema: one table with every SA
    (t,) = rel.tables
    assert t.kind == "sa-groups"
    st_ = t.table.stats
    for a in ("s1", "s2", "s3"):
        assert st_["diversity"][a]["l_per"] == l_per(table.codes(a))
    assert st_["diversity"]["s2"]["l"] == 3 and st_["diversity"]["s1"]["l"] == st_["diversity"]["s1"]["l_per"]
    assert st_["primary"] == max(("s1", "s2", "s3"), key=lambda a: (st_["diversity"][a]["l"], -"s1s2s3".index(a)))
    for fmt in ("csv", "parquet"):
        out = tmp_path / fmt
        versapub.write_release(rel, out, format=fmt)
        assert verify_release(out, original=table).ok
        m = json.loads((out / "manifest.json").read_text())
        assert m["tables"][0]["diversity"]["s2"] == {"l": 3, "l_per": st_["diversity"]["s2"]["l_per"]}
        model = versapub.load_release(out)
        for a in table.names:  # every marginal exact: QIT and T^S are published exactly
            mg = model.marginal((a,))
            got = dict(zip((str(model.domains[a][c]) for c in mg.codes[0]), mg.values * model.n, strict=True))
            want = Counter(str(v) for v in table.column(a).values[table.codes(a)])
            assert all(got.get(k, 0.0) == pytest.approx(v, abs=1e-6) for k, v in want.items()), a
    sets = _sets(tmp_path / "csv" / "T1_sets.csv")
    for (g, a), values in sets.items():
        assert len(values) >= st_["diversity"][a]["l"], (g, a)


def test_paper_example_tables_4_to_6() -> None:
    """Ye et al.'s running example (Tables 5 and 6): eight records, two sensitive attributes;
    l_per(Occupation) = l_per(Salary) = 8 / 2 = 4, two SA-groups of four, every salary set
    topped up to four values with linkable noise only."""
    occ = ["nurse", "nurse", "police", "cook", "actor", "actor", "clerk", "clerk"]
    sal = ["1", "4", "8", "9", "2", "7", "8", "2"]
    table = EncodedTable.from_columns(
        {
            "gender": ["F", "F", "M", "M", "F", "M", "F", "F"],
            "zip": ["10078", "10085", "20086", "10076", "10077", "10085", "10075", "20087"],
            "occupation": occ,
            "salary": sal,
        }
    )
    rel = _publish(table, ["gender", "zip"], {"occupation": None, "salary": None})
    st_ = rel.tables[0].table.stats
    assert st_["diversity"] == {
        "occupation": {"l": 4, "l_per": 4, "smallest_set": 4},
        "salary": {"l": 4, "l_per": 4, "smallest_set": 4},
    }
    assert st_["groups"] == 2 and st_["group_sizes"] == {4: 2} and st_["residual_records"] == 0
    pairs = set(zip(occ, sal, strict=True))
    for g in range(2):
        rows = [r for r in rel.tables[0].table.listed["sets"] if r[0] == str(g)]
        o = {r[2] for r in rows if r[1] == "occupation"}
        s = {r[2] for r in rows if r[1] == "salary"}
        assert len(o) == 4 and len(s) >= 4
        assert s <= {v for (oo, v) in pairs if oo in o}  # Definition 4: only linkable salaries


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), d=st.integers(1, 3))
def test_random_jobs_pass_the_independent_verifier(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, seed: int, d: int
) -> None:
    _random_job(tmp_path_factory, fmt, seed, d)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), d=st.integers(1, 4))
def test_hundreds_of_random_jobs_pass_the_independent_verifier(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, seed: int, d: int
) -> None:
    _random_job(tmp_path_factory, fmt, seed, d)


def _random_job(tmp_path_factory: pytest.TempPathFactory, fmt: str, seed: int, d: int) -> None:
    """A random table, QI pair, d sensitive attributes with random l_i (or l_per): published,
    written in ``fmt``, passing the independent verifier against the input, and read back
    into the same model."""
    rng = np.random.default_rng(seed)
    cards = {"q1": int(rng.integers(2, 6)), "q2": int(rng.integers(2, 6))}
    cards |= {f"s{i}": int(rng.integers(3, 9)) for i in range(d)}
    table = random_table(rng, int(rng.integers(40, 200)), cards, skew=float(rng.uniform(0, 0.8)))
    ls: dict[str, int | None] = {}
    for i in range(d):
        lp = l_per(table.codes(f"s{i}"))
        ls[f"s{i}"] = None if rng.random() < 0.5 or lp < 2 else int(rng.integers(2, lp + 1))
    try:
        rel = _publish(table, ["q1", "q2"], ls)
    except InfeasibleError as exc:  # l_per < 2, or noise cannot reach l_i: refused with the reason
        assert "l_per" in str(exc) or "linkable" in str(exc), exc
        return
    out = tmp_path_factory.mktemp("m") / "r"
    versapub.write_release(rel, out, format=fmt)  # verified and checked before it is written
    rep = verify_release(out, original=table)
    assert rep.ok, rep.explain()
    assert {f.check for f in rep.findings} >= {"sa-groups", "grouping", "marginal"}
    loaded, in_memory = versapub.load_release(out), versapub.model_from_release(rel)
    for a in table.names:  # the model from the files is the model in memory
        x, y = loaded.marginal((a,)), in_memory.marginal((a,))
        got = {str(loaded.domains[a][c]): v for c, v in zip(x.codes[0], x.values, strict=True)}
        want = {str(in_memory.domains[a][c]): v for c, v in zip(y.codes[0], y.values, strict=True)}
        assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k], abs=1e-9) for k in got), a


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, EncodedTable]:
    table = _table(seed=4)
    out = tmp_path / "rel"
    versapub.write_release(_publish(table, ["a", "b"], {"s1": None, "s2": None}), out)
    return out, table


def _rewrite_sets(out: Path, change: object) -> None:
    path = out / "T1_sets.csv"
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], change(rows[1:])  # type: ignore[operator]
    with path.open("w", newline="") as f:
        csv.writer(f).writerows([header, *sorted(body, key=lambda r: (int(r[0]), r[1], r[2]))])


def _failures(out: Path, table: EncodedTable) -> str:
    rep = verify_release(out, original=table)
    assert not rep.ok
    return " | ".join(f.message for f in rep.failures)


def test_corrupt_set_with_too_few_values_is_named(written: tuple[Path, EncodedTable]) -> None:
    out, table = written
    m = json.loads((out / "manifest.json").read_text())
    l_s2 = m["tables"][0]["diversity"]["s2"]["l"]
    sets = _sets(out / "T1_sets.csv")
    g = min(g for (g, a), v in sets.items() if a == "s2" and len(v) == l_s2)
    drop = sorted(sets[(g, "s2")])[0]
    _rewrite_sets(out, lambda rows: [r for r in rows if not (r[0] == str(g) and r[1] == "s2" and r[2] == drop)])
    msg = _failures(out, table)
    assert f"e.g. group {g}" in msg and "'s2'" in msg and f"fewer than l = {l_s2}" in msg


def test_corrupt_non_linkable_noise_is_named(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    s1 = rng.integers(0, 8, 200)
    table = EncodedTable.from_columns(
        {
            "a": [f"a{x}" for x in rng.integers(0, 4, 200)],
            "b": [f"b{x}" for x in rng.integers(0, 5, 200)],
            "s1": [f"x{x}" for x in s1],
            "s2": [f"y{x % 6}" for x in s1],  # s2 follows s1: few linkable values
        }
    )
    out = tmp_path / "rel"
    versapub.write_release(_publish(table, ["a", "b"], {"s1": 4, "s2": 2}), out)
    m = json.loads((out / "manifest.json").read_text())
    primary = m["tables"][0]["primary"]
    other = "s2" if primary == "s1" else "s1"
    sets = _sets(out / "T1_sets.csv")
    ts: list[dict[str, str]] = list(csv.DictReader((out / "T1_ts.csv").open(newline="")))
    for (g, a), pv in sorted(sets.items()):
        if a != primary:
            continue
        linkable = {r[other] for r in ts if r[primary] in pv}
        outside = sorted({r[other] for r in ts} - linkable - sets[(g, other)])
        if outside:
            _rewrite_sets(out, lambda rows, g=g, v=outside[0]: [*rows, [str(g), other, v]])
            msg = _failures(out, table)
            assert "not linkable" in msg and f"group {g}" in msg and repr(other) in msg
            return
    raise AssertionError("the table was built so that some value is not linkable from some group")


def test_corrupt_ts_count_is_named(written: tuple[Path, EncodedTable]) -> None:
    out, table = written
    path = out / "T1_ts.csv"
    rows = list(csv.reader(path.open(newline="")))
    rows[1][-1] = str(int(rows[1][-1]) + 1)
    rows[2][-1] = str(int(rows[2][-1]) - 1) if int(rows[2][-1]) > 1 else rows[2][-1]
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    msg = _failures(out, table)
    assert "differs from the original's projection" in msg or "counts sum to" in msg


def test_moving_a_set_value_breaks_the_grouping(written: tuple[Path, EncodedTable]) -> None:
    """Swap one primary value between two groups' sets: sizes stay valid, but some records
    no longer fit any group (the max-flow grouping check)."""
    out, table = written
    primary = json.loads((out / "manifest.json").read_text())["tables"][0]["primary"]
    sets = _sets(out / "T1_sets.csv")
    a, b = sets[(0, primary)], sets[(1, primary)]
    x, y = sorted(a - b)[0], sorted(b - a)[0]

    def swap(rows: list[list[str]]) -> list[list[str]]:
        out_rows = []
        for r in rows:
            if r[1] == primary and (r[0], r[2]) == ("0", x):
                r = ["0", primary, y]
            elif r[1] == primary and (r[0], r[2]) == ("1", y):
                r = ["1", primary, x]
            out_rows.append(r)
        return out_rows

    _rewrite_sets(out, swap)
    assert "input records fit a group" in _failures(out, table)


def test_bad_input_is_refused_with_names() -> None:
    table = _table()
    lp = l_per(table.codes("s1"))
    with pytest.raises(InfeasibleError, match=rf"'s1'.*l_per = {lp}.*Use l <= {lp}"):
        _publish(table, ["a", "b"], {"s1": lp + 1, "s2": None})
    with pytest.raises(InfeasibleError, match=r"'s1'.*largest feasible l is 8"):  # beyond its distinct values
        _publish(table, ["a", "b"], {"s1": 50, "s2": None})
    with pytest.raises(ConfigError, match=r"primary sensitive attribute 'zz'.*s1, s2"):
        _publish(table, ["a", "b"], {"s1": None, "s2": None}, primary="zz")
    with pytest.raises(versapub.VersapubError, match=r"l of distinct-l-diversity must be a whole number >= 2, got 1"):
        _publish(table, ["a", "b"], {"s1": 1, "s2": None})
    with pytest.raises(ConfigError, match="distinct-l-diversity"):
        versapub.publish(
            table,
            ["a, b -> s1", "a, b -> s2"],
            l=3,
            anonymizer="msa-decomposition",
            columns=versapub.ColumnRoles(others="insensitive"),
        )
    skewed = EncodedTable.from_columns({"q": list("abcdefgh"), "s": list("xxxxxyyz"), "t": list("12341234")})
    with pytest.raises(InfeasibleError, match=r"'s'.*'x' holds 5 of 8.*l_per"):
        versapub.publish(skewed, ["q -> s", "q -> t"], anonymizer="msa-decomposition")
    # Above l_per with the override: published, and the noise it cost is reported.
    rel = _publish(table, ["a", "b"], {"s1": l_per(table.codes("s1")) + 1, "s2": None}, above_l_per=True)
    assert "noise_values" in rel.tables[0].table.stats


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_command_line(tmp_path: Path) -> None:
    table = _table()
    data = tmp_path / "in.csv"
    cols = table.to_pydict()
    with data.open("w", newline="") as f:
        csv.writer(f).writerows([list(cols), *zip(*cols.values(), strict=True)])
    out = tmp_path / "rel"
    code, stdout, stderr = _run(
        "publish",
        "--input",
        str(data),
        "--qi",
        "a,b",
        "--sensitive",
        "s1,s2:3,s3",
        "--anonymizer",
        "msa-decomposition",
        "--primary",
        "s2",
        "--out",
        str(out),
    )
    assert code == 0, stderr
    assert "primary sensitive attribute: s2 (given)" in stdout and "l_per" in stdout and "noise values" in stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["tables"][0]["primary"] == "s2" and m["tables"][0]["diversity"]["s2"]["l"] == 3
    code, stdout, _ = _run("check", str(out), "--original", str(data))
    assert code in (0, 6) and "sa-groups attack" in stdout and "knowing 1 other sensitive value(s)" in stdout
    code, _, stderr = _run(
        "publish",
        "--input",
        str(data),
        "--qi",
        "a,s1",
        "--sensitive",
        "s1,s2",
        "--anonymizer",
        "msa-decomposition",
        "--out",
        str(tmp_path / "x"),
    )
    assert code != 0 and "s1" in stderr
    above = f"s1:{l_per(table.codes('s1')) + 1},s2"
    code, _, stderr = _run(
        "publish",
        "--input",
        str(data),
        "--qi",
        "a,b",
        "--sensitive",
        above,
        "--insensitive",
        "s3",
        "--anonymizer",
        "msa-decomposition",
        "--out",
        str(tmp_path / "y"),
    )
    assert code == 2 and "l_per" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "y").exists()


def _maxent_oracle(size: np.ndarray, counts: np.ndarray, pg: np.ndarray, pk: np.ndarray) -> np.ndarray:
    """Maximum entropy over the support pairs under the margins, by a general solver."""
    cons = [{"type": "eq", "fun": lambda x, g=g: x[pg == g].sum() - size[g]} for g in range(len(size))]
    cons += [{"type": "eq", "fun": lambda x, k=k: x[pk == k].sum() - counts[k]} for k in range(len(counts))]
    x0 = np.full(len(pg), size.sum() / len(pg))
    res = minimize(
        lambda x: float(np.sum(x * np.log(np.maximum(x, 1e-300)))),
        x0,
        constraints=cons,
        bounds=[(0, None)] * len(pg),
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    return np.asarray(res.x)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_release_model_is_the_maximum_entropy_estimate(seed: int) -> None:
    """IPF over (group, combination) pairs equals a general maximum-entropy solver on tiny
    cases built from a true grouping (so the constraints are consistent)."""
    rng = np.random.default_rng(seed)
    n_groups, cards = int(rng.integers(2, 4)), [int(rng.integers(2, 4)), int(rng.integers(2, 4))]
    recs = [
        (int(rng.integers(n_groups)), int(rng.integers(cards[0])), int(rng.integers(cards[1])))
        for _ in range(int(rng.integers(6, 14)))
    ]
    member = [np.zeros((n_groups, c), dtype=bool) for c in cards]
    for g, a, b in recs:
        member[0][g, a] = member[1][g, b] = True
    for m in member:  # noise: some extra values in the sets
        m |= rng.random(m.shape) < 0.3
    combos = sorted({(a, b) for _, a, b in recs})
    size = np.bincount([r[0] for r in recs], minlength=n_groups).astype(float)
    counts = np.array([sum(1 for r in recs if (r[1], r[2]) == c) for c in combos], dtype=float)
    pg, pk = allowed_pairs(member, [np.array([c[0] for c in combos]), np.array([c[1] for c in combos])])
    for g, k in zip(pg, pk, strict=True):  # the support is exactly the product of the sets
        assert member[0][g, combos[k][0]] and member[1][g, combos[k][1]]
    assert len(pg) == sum(member[0][g, a] and member[1][g, b] for g in range(n_groups) for a, b in combos)
    x, _ = fit(size, counts, pg, pk)
    assert np.bincount(pg, weights=x, minlength=n_groups) == pytest.approx(size, abs=1e-6)
    assert np.bincount(pk, weights=x, minlength=len(combos)) == pytest.approx(counts, abs=1e-6)
    other = _maxent_oracle(size, counts, pg, pk)  # a general solver, on the same constraints

    def entropy(v: np.ndarray) -> float:
        v = v[v > 1e-12]
        return float(-(v * np.log(v)).sum())

    # The maximum: at least the general solver's entropy (when the solver's point is
    # feasible), and that point when the solver got there.
    feasible = (
        np.allclose(np.bincount(pg, weights=other, minlength=n_groups), size, atol=1e-6)
        and np.allclose(np.bincount(pk, weights=other, minlength=len(combos)), counts, atol=1e-6)
        and other.min() >= -1e-9
    )
    assume(feasible)
    assert entropy(x) >= entropy(other) - 1e-6
    if entropy(other) >= entropy(x) - 1e-7:
        assert x == pytest.approx(other, abs=1e-3)


def _brute_attack(table: EncodedTable, out: Path) -> dict[tuple[int, str], int]:
    """Per (known, attribute): records whose fewest candidates over every plausible group
    and every choice of known attributes fall below l (Python sets, the module docstring)."""
    m = json.loads((out / "manifest.json").read_text())["tables"][0]
    sens = [m["enforces"]["rhs"], *(r["rhs"] for r in m["also_enforces"])]
    qi = [a for a in m["attributes"] if a not in sens]
    sets = _sets(out / "T1_sets.csv")
    qit = list(csv.DictReader((out / "T1_qit.csv").open(newline="")))
    ts = [tuple(r[a] for a in sens) for r in csv.DictReader((out / "T1_ts.csv").open(newline=""))]
    recs = Counter(
        tuple(str(v) for v in row) for row in zip(*(table.to_pydict()[a] for a in [*qi, *sens]), strict=True)
    )
    out_counts: dict[tuple[int, str], int] = {}
    for rec, w in recs.items():
        q, s = rec[: len(qi)], rec[len(qi) :]
        groups = [int(r["group_id"]) for r in qit if tuple(r[a] for a in qi) == q]
        groups = [g for g in groups if all(s[i] in sets[(g, a)] for i, a in enumerate(sens))]
        for i, a in enumerate(sens):
            others = [j for j in range(len(sens)) if j != i]
            for k in range(len(sens)):
                fewest = min(
                    len({v for v in sets[(g, a)] if any(t[i] == v and all(t[j] == s[j] for j in known) for t in ts)})
                    for g in groups
                    for known in itertools.combinations(others, k)
                )
                if fewest < m["diversity"][a]["l"]:
                    out_counts[(k, a)] = out_counts.get((k, a), 0) + w
    return out_counts


def test_background_knowledge_attack_matches_brute_force(tmp_path: Path) -> None:
    table = _table(seed=9, n=150)
    out = tmp_path / "r"
    versapub.write_release(_publish(table, ["a", "b"], {"s1": None, "s2": None, "s3": None}), out)
    (res,) = msa_attack(out, table)
    want = _brute_attack(table, out)
    got = {(r["known"], r["attribute"]): r["below"] for r in res["rows"]}
    assert {k: v for k, v in got.items() if v} == want
    assert res["ok"] and all(r["below"] == 0 for r in res["rows"] if r["known"] == 0)
    (hyp,) = msa_attack(out, None)  # without the input: hypothetical targets, same zero at 0 known
    assert hyp["ok"] and hyp["n_targets"] >= 1


def test_paper_measure_matches_brute_force() -> None:
    table = _table(seed=2, n=80).select(["a", "b", "s1", "s2"])
    rel = _publish(table, ["a", "b"], {"s1": None, "s2": None})
    t = rel.tables[0].table
    sens = ["s1", "s2"]
    sets = {(int(g), a): set() for g, a, _ in t.listed["sets"]}
    for g, a, v in t.listed["sets"]:
        sets[(int(g), a)].add(v)
    qit = t.parts["qit"]
    d = table.to_pydict()
    n = table.n_rows
    recs = Counter(zip(d["a"], d["b"], d["s1"], d["s2"], strict=True))
    rows = list(zip(qit.decoded("a"), qit.decoded("b"), qit.decoded("group_id"), qit.counts, strict=True))
    kl = 0.0
    for (a, b, x, y), c in recs.items():
        p = sum(
            cnt
            / n
            * math.prod((v in sets[(int(g), s)]) / len(sets[(int(g), s)]) for s, v in zip(sens, (x, y), strict=True))
            for qa, qb, g, cnt in rows
            if (qa, qb) == (a, b)
        )
        kl += c / n * math.log((c / n) / p)
    assert t.stats["kl_uniform_over_sets"] == pytest.approx(kl, rel=1e-9)


def test_toml_configuration(tmp_path: Path) -> None:
    """The same job through a configuration file: per-rule l_i, the anonymizer table with
    its primary, and the l_per default for the rule without its own guarantee."""
    table = _table()
    data = tmp_path / "in.csv"
    cols = table.to_pydict()
    with data.open("w", newline="") as f:
        csv.writer(f).writerows([list(cols), *zip(*cols.values(), strict=True)])
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        '[input]\npath = "in.csv"\n\n[privacy]\n'
        'rules = [{rule = "a, b, s3 -> s1", guarantee = "distinct-l-diversity", l = 3}, "a, b, s3 -> s2"]\n\n'
        '[publish]\nseed = 2\n\n[publish.anonymizer]\nname = "msa-decomposition"\nprimary = "s1"\n',
        encoding="utf-8",
    )
    out = tmp_path / "rel"
    code, stdout, stderr = _run("publish", str(cfg), "--out", str(out))
    assert code == 0, stderr
    t = json.loads((out / "manifest.json").read_text())["tables"][0]
    assert t["kind"] == "sa-groups" and t["primary"] == "s1"
    assert t["diversity"]["s1"]["l"] == 3 and t["diversity"]["s2"]["l"] == l_per(table.codes("s2"))
    assert "primary sensitive attribute: s1 (given)" in stdout
