"""Hand corruptions of written releases that the checks must catch (issue 11, item 6)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import versapub
from versapub.cli.main import cli
from versapub.data.table import EncodedTable
from versapub.verify.files.release_check import verify_release

from .conftest import random_table, seal


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def job(tmp_path: Path) -> tuple[Path, Path, EncodedTable]:
    """A release of a random table (one Anatomy table q -> s, l = 2) and its input file."""
    table = random_table(np.random.default_rng(5), 120, {"q": 6, "r": 3, "s": 5}, skew=0.3)
    data = tmp_path / "in.csv"
    cols = table.to_pydict()
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerows(zip(*cols.values(), strict=True))
    out = tmp_path / "rel"
    code, _, stderr = run("publish", "--input", str(data), "--rule", "q, r -> s", "--l", "2", "--out", str(out))
    assert code == 0, stderr
    return out, data, table


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    gi = header.index("group_id") if "group_id" in header else None
    key = (lambda r: (int(r[gi]), *r[:gi], *r[gi + 1 : -1])) if gi is not None else (lambda r: r[:-1])
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(sorted(rows, key=key))


def test_steward_requires_a_stronger_guarantee_than_the_manifest(job: tuple[Path, Path, EncodedTable]) -> None:
    out, _, _ = job
    code, stdout, _ = run("check", str(out))
    assert code == 0 and "checked against the release's own claim: l-diversity (l = 2)" in stdout
    code, stdout, _ = run("check", str(out), "--guarantee", "l-diversity:l=3")
    assert code == 1 and "checked against your requirement (--guarantee l-diversity:l=3): l-diversity (l = 3)" in stdout
    code, _, _ = run("check", str(out), "--l", "3")
    assert code == 1


def test_lowered_l_in_the_manifest_does_not_fool_the_steward(job: tuple[Path, Path, EncodedTable]) -> None:
    out, _, _ = job
    m = json.loads((out / "manifest.json").read_text())
    assert m["guarantee"] == {"name": "l-diversity", "l": 2}
    code, _, _ = run("check", str(out), "--l", "3")  # the steward's requirement, not the manifest's claim
    assert code == 1


def test_swapped_sensitive_values_fail_the_pairing(job: tuple[Path, Path, EncodedTable]) -> None:
    out, data, table = job
    header, rows = _rows(out / "T1_st.csv")
    by_group: dict[str, dict[str, list[str]]] = {}
    for r in rows:
        by_group.setdefault(r[0], {})[r[1]] = r
    # two groups g1, g2 and values a in g1 only, b in g2 only, each once: swap them
    groups = list(by_group)
    done = False
    for g1 in groups:
        for g2 in groups:
            if g1 == g2 or done:
                continue
            a = next((v for v, r in by_group[g1].items() if v not in by_group[g2] and r[2] == "1"), None)
            b = next((v for v, r in by_group[g2].items() if v not in by_group[g1] and r[2] == "1"), None)
            if a and b:
                by_group[g1][a][1], by_group[g2][b][1] = b, a
                done = True
    assert done
    _write(out / "T1_st.csv", header, rows)
    rep = verify_release(out, original=table)
    assert {f.check for f in rep.failures} == {"pairing", "digests"}, rep.explain()
    seal(out)  # a forger who also rewrites the digests: the pairing check stands on its own
    rep = verify_release(out, original=table)
    failed = {f.check for f in rep.failures}
    assert failed == {"pairing"}, rep.explain()  # sizes, marginals and the guarantee still agree
    code, stdout, _ = run("check", str(out), "--original", str(data))
    assert code == 1 and "moved between groups" in stdout


def test_group_ids_outside_the_range_fail(job: tuple[Path, Path, EncodedTable]) -> None:
    out, _, table = job
    for name in ("T1_qit.csv", "T1_st.csv"):
        header, rows = _rows(out / name)
        gi = header.index("group_id")
        for r in rows:
            r[gi] = str(int(r[gi]) + 100)
        _write(out / name, header, rows)
    rep = verify_release(out, original=table)
    assert "group ids run from 100" in rep.explain()


def test_a_file_the_manifest_does_not_list_is_a_leak(job: tuple[Path, Path, EncodedTable]) -> None:
    out, _, _ = job
    (out / "T1_linked.csv").write_text("q,s,count\nx,y,1\n")
    rep = verify_release(out)
    assert not rep.ok and "T1_linked.csv" in rep.explain() and "leak" in rep.explain()
    code, stdout, _ = run("check", str(out))
    assert code == 1 and "T1_linked.csv" in stdout


def test_multi_sa_release_with_an_added_linking_table_is_a_violation(tmp_path: Path) -> None:
    table = random_table(np.random.default_rng(2), 90, {"q": 3, "a": 3, "b": 3}, skew=0.0)
    rel = versapub.publish(table, ["q -> a", "q -> b"], l=2, seed=1, decomposition="multi-sa")
    out = tmp_path / "rel"
    versapub.write_release(rel, out)
    m = json.loads((out / "manifest.json").read_text())
    pairs: dict[tuple[str, str], int] = {}
    cols = table.to_pydict()
    for q, a in zip(cols["q"], cols["a"], strict=True):
        pairs[(q, a)] = pairs.get((q, a), 0) + 1
    (out / "X.csv").write_text("q,a,count\n" + "".join(f"{q},{a},{c}\n" for (q, a), c in sorted(pairs.items())))
    m["tables"].append(
        {"name": "X", "attributes": ["q", "a"], "kind": "plain", "enforces": None, "files": {"data": "X.csv"}}
    )
    (out / "manifest.json").write_text(json.dumps(m))
    code, stdout, stderr = run("check", str(out))
    assert code == 1, stdout + stderr  # a violation, reported — not a refusal (exit 2)
    assert "CHECKS FAILED" in stdout


@pytest.mark.parametrize("target", ["table", "hierarchy"])
def test_a_replaced_file_fails_its_digest(tmp_path: Path, target: str) -> None:
    """Issue 26: every file the manifest lists — tables, listings and the sensitive hierarchy
    copied for t-closeness — carries a SHA-256 digest the verifier recomputes; replacing the
    copied hierarchy changes no other check."""
    rng = np.random.default_rng(7)
    n = 300
    t = EncodedTable.from_columns(
        {"a": list(rng.choice(["x", "y", "z"], n)), "d": list(rng.choice(["d1", "d2", "d3", "d4"], n))}
    )
    from versapub.data.hierarchy import Hierarchy

    hier = Hierarchy.from_rows("d", [["d1", "A", "*"], ["d2", "A", "*"], ["d3", "B", "*"], ["d4", "B", "*"]])
    rel = versapub.publish(
        t,
        ["a -> d | t-closeness:t=0.4,distance=hierarchical"],
        hierarchies={"d": hier},
        anonymizer="mondrian",
        columns=versapub.ColumnRoles(allow_unique=t.names, others="insensitive"),
    )
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    m = json.loads((out / "manifest.json").read_text())
    assert set(m["digests"]) == {*m["hierarchies"].values(), *m["tables"][0]["files"].values()}
    assert verify_release(out, original=t).ok
    if target == "hierarchy":
        name = next(iter(m["hierarchies"].values()))
        (out / name).write_text("d1;A;*\nd2;B;*\nd3;A;*\nd4;B;*\n", encoding="utf-8")  # another taxonomy
    else:
        name = m["tables"][0]["files"]["labels"]
        (out / name).write_text((out / name).read_text() + "\n", encoding="utf-8")
    rep = verify_release(out, original=t)
    assert [f.check for f in rep.failures] == ["digests"] and name in rep.failures[0].message
    code, stdout, _ = run("check", str(out))
    assert code == 1 and "differ from their recorded SHA-256" in stdout


SPECS = {  # an edit of the manifest's claim, and the requirement that sees through it
    "l": ("l-diversity", {"l": 3}, {"l": 2}, "anatomy"),
    "l_i": ("distinct-l-diversity", {"l": 5}, {"l": 2}, "msa-decomposition"),
    "k": ("k-anonymity", {"k": 8}, {"k": 2}, "mondrian"),
    "t": ("t-closeness", {"t": 0.05}, {"t": 0.9}, "mondrian"),
    "tau": ("functional-diversity", {"tau": 0.35, "lambda": 4}, {"tau": 0.9, "lambda": 4}, "mondrian"),
}


@pytest.mark.parametrize("param", sorted(SPECS))
def test_an_edited_claim_passes_as_a_claim_and_fails_the_stewards_policy(tmp_path: Path, param: str) -> None:
    """Issue 26: ``check`` alone verifies the release's own claim and says so; the steward's
    policy file (the ``[privacy]`` keys of a job) holds the release to the requirement."""
    name, strict, loose, anonymizer = SPECS[param]
    rng = np.random.default_rng(11)
    n = 600
    t = random_table(rng, n, {"a": 6, "b": 5, "d": 6})
    rel = versapub.publish(
        t,
        ["a, b -> d"],
        guarantee={"name": name, **loose},
        anonymizer=anonymizer,
        columns=versapub.ColumnRoles(allow_unique=t.names, others="insensitive"),
    )
    out = tmp_path / "r"
    versapub.write_release(rel, out)
    policy = tmp_path / "policy.toml"
    params = "".join(f"{k} = {v}\n" for k, v in strict.items())
    policy.write_text(f'[privacy]\nrules = ["a, b -> d"]\n[privacy.guarantee]\nname = "{name}"\n{params}')
    code, stdout, _ = run("check", str(out), "--policy", str(policy))
    assert code == 1 and "checked against your requirement (" in stdout and str(policy) in stdout
    code, stdout, _ = run("check", str(out))
    assert code == 0 and "the release's own claim" in stdout
    m = json.loads((out / "manifest.json").read_text())
    assert {k: m["guarantee"][k] for k in ("name", *loose)} == {"name": name, **loose}
    code, stdout, _ = run("check", str(out), "--json")
    rep = json.loads(stdout)
    assert rep["ok"] and not rep["required"] and "own claim" in rep["checked_against"]


def test_a_policy_is_validated_in_one_paragraph(tmp_path: Path, job: tuple[Path, Path, EncodedTable]) -> None:
    out, _, _ = job
    cases = {
        "[input]\npath = 'x'\n": "has no [privacy] section",
        "[privacy]\nrules = ['a -> b']\n": "state the guarantee you require",
        "[privacy]\nguarantee = 't-closeness'\n": "needs a value for t",
        "[privacy]\nl = 3\nflavour = 1\n": "unknown key(s) ['flavour']",
        "[privacy\n": "is not valid TOML",
    }
    for i, (text, fragment) in enumerate(cases.items()):
        p = tmp_path / f"p{i}.toml"
        p.write_text(text)
        code, _, stderr = run("check", str(out), "--policy", str(p))
        assert code == 2 and fragment in stderr.replace("\n", " ") and "Traceback" not in stderr, stderr
    code, _, stderr = run("check", str(out), "--policy", str(tmp_path / "p0.toml"), "--l", "3")
    assert code == 2 and "states the whole requirement" in stderr


def test_a_failed_posterior_names_the_tables_and_what_to_change(job: tuple[Path, Path, EncodedTable]) -> None:
    """Issue 26, defect 4: when the posterior across the release exceeds a rule's limit, the
    verdict says which tables publish the sensitive attribute, how, and what to change."""
    out, _, _ = job
    code, stdout, _ = run("check", str(out), "--l", "9", "--json")
    rep = json.loads(stdout)
    bad = [p for p in rep["posterior"] if not p["ok"]]
    assert code == 1 and bad
    m = json.loads((out / "manifest.json").read_text())
    holder = next(t["name"] for t in m["tables"] if bad[0]["rule"]["rhs"] in t["attributes"])
    assert holder in bad[0]["tables"] and f"{holder} (" in bad[0]["message"]
    assert "must meet this rule's guarantee too" in bad[0]["message"]
