"""Local suppression for Mondrian and Incognito as one class (issue 34, item 2; since issue
47 the named alternative ``suppression_mode="class"``, ARX's record removal being the
default: ``tests/test_suppression_removal.py``): the records of parts that cannot meet the
guarantee are published with every quasi-identifier at its root, at most
``floor(suppression x n)`` of them, shown in the stats and metrics and checked by the
verifier (counted, never dropped)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import versapub
from versapub.anonymizers import make_anonymizer
from versapub.api import require_out_of_core
from versapub.cli.main import cli
from versapub.data.hierarchy import Hierarchy
from versapub.data.table import EncodedTable
from versapub.decompositions import make_decomposition
from versapub.errors import ConfigError
from versapub.model.utility import kl_divergence
from versapub.privacy.screens.roles import ColumnRoles
from versapub.verify.files.release_check import verify_release

from .conftest import random_table, seal


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _tiny() -> tuple[EncodedTable, dict[str, Hierarchy]]:
    """Six records of one hierarchical quasi-identifier: A = {a1, a2} with four records, B and
    C with one each."""
    t = EncodedTable.from_columns({"x": ["a1", "a1", "a2", "a2", "b1", "c1"], "other": ["u"] * 6})
    h = Hierarchy("x", (("a1", "A", "*"), ("a2", "A", "*"), ("b1", "B", "*"), ("c1", "C", "*")), "test")
    return t, {"x": h}


def _classes(rel: versapub.Release) -> dict[str, int]:
    (t,) = rel.tables
    return {str(k): int(v) for k, v in t.table.stats["group_sizes"].items()}


def test_mondrian_suppresses_the_small_children_by_hand() -> None:
    """k = 2: the root cut leaves B and C with one record each; without suppression the table
    stays one class of 6 at the root; with a budget of 2 records (2/6) both are suppressed
    together (2 records: they satisfy k = 2 as one class) and A is cut into a1, a2."""
    t, h = _tiny()
    roles = ColumnRoles(quasi_identifying=("x",), insensitive=("other",))
    plain = versapub.publish(t, [], guarantee={"name": "k-anonymity", "k": 2}, columns=roles, hierarchies=h)
    assert plain.tables[0].table.stats["groups"] == 1
    rel = versapub.publish(
        t, [], guarantee={"name": "k-anonymity", "k": 2}, columns=roles, hierarchies=h,
        anonymizer="mondrian", anonymizer_params={"suppression": 0.34, "suppression_mode": "class"},
    )  # fmt: skip
    st = rel.tables[0].table.stats
    assert st["suppressed_records"] == 2 and st["groups"] == 3 and _classes(rel) == {"2": 3}
    # a budget of one record cannot pay for both: nothing suppressed
    one = versapub.publish(
        t, [], guarantee={"name": "k-anonymity", "k": 2}, columns=roles, hierarchies=h,
        anonymizer="mondrian", anonymizer_params={"suppression": 0.2, "suppression_mode": "class"},
    )  # fmt: skip
    assert one.tables[0].table.stats.get("suppressed_records") == 0 and one.tables[0].table.stats["groups"] == 1


def test_suppressed_together_must_satisfy_or_none_is_suppressed() -> None:
    """k = 3: B and C (2 records together) would form a suppressed class below k: Mondrian
    generalizes instead and says so."""
    t, h = _tiny()
    roles = ColumnRoles(quasi_identifying=("x",), insensitive=("other",))
    said: list[str] = []
    rel = versapub.publish(
        t, [], guarantee={"name": "k-anonymity", "k": 3}, columns=roles, hierarchies=h,
        anonymizer="mondrian", anonymizer_params={"suppression": 0.5, "suppression_mode": "class"},
        progress=lambda msg, *_: said.append(msg),
    )  # fmt: skip
    assert rel.tables[0].table.stats["suppressed_records"] == 0
    assert any("none suppressed" in m for m in said)


@pytest.mark.parametrize("anonymizer", ["mondrian", "incognito"])
@pytest.mark.parametrize("share", [0.0, 0.01, 0.05])
def test_budget_respected_and_verified(tmp_path: Path, anonymizer: str, share: float) -> None:
    """On a skewed random table under l-diversity: at most floor(share x n) records are
    suppressed, all in one class at the roots that meets the guarantee; the release verifies
    against the original (every record counted) and the verifier's suppression finding
    reports the count."""
    table = random_table(np.random.default_rng(3), 800, {"q1": 9, "q2": 7, "q3": 5, "s": 6}, skew=1.2)
    rel = versapub.publish(
        table, ["q1, q2, q3 -> s"], guarantee={"name": "distinct-l-diversity", "l": 3},
        anonymizer=anonymizer, anonymizer_params={"suppression": share, "suppression_mode": "class"}, seed=2,
    )  # fmt: skip
    st = rel.tables[0].table.stats
    assert st.get("suppressed_records", 0) <= math.floor(share * 800)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    rep = verify_release(out, original=table)
    assert rep.ok
    found = [f for f in rep.findings if f.check == "suppression"]
    assert bool(found) == bool(share)
    d = pd.read_csv(out / "T1.csv", dtype=str)
    assert d["count"].astype(int).sum() == 800  # never dropped
    if st.get("suppressed_records"):
        assert found[0].ok and f"{st['suppressed_records']:,} record(s) suppressed" in found[0].message


def test_suppression_improves_mondrian_on_adult(tmp_path: Path) -> None:
    """The reason to suppress: a few outliers (rare countries of birth) no longer keep
    partitions whole — Adult, k = 20 over five quasi-identifiers, 2 % suppression: more
    classes and a lower KL-divergence."""
    adult = Path(__file__).resolve().parents[1] / "src/versapub/datasets/data/adult"
    table = versapub.read_table(adult / "adult.csv.gz", delimiter=";")
    h = {
        a: Hierarchy.read(adult / "hierarchies" / f"adult_hierarchy_{a}.csv", a)
        for a in ("native-country", "marital-status")
    }
    qi = ("age", "sex", "race", "marital-status", "native-country")
    roles = ColumnRoles(quasi_identifying=qi, others="identifying")
    g = {"name": "k-anonymity", "k": 20}
    runs = [
        versapub.publish(
            table,
            [],
            guarantee=g,
            columns=roles,
            hierarchies=h,
            anonymizer="mondrian",
            anonymizer_params={"suppression": s, "suppression_mode": "class"},
        )
        for s in (0.0, 0.02)
    ]
    (a, b) = (r.tables[0].table.stats for r in runs)
    assert b["suppressed_records"] == math.floor(0.02 * table.n_rows) and b["groups"] > a["groups"]
    kl = [kl_divergence(versapub.model_from_release(r), table).value for r in runs]
    assert kl[1] < kl[0]


def test_forged_suppression_claims_fail(tmp_path: Path) -> None:
    """A manifest claiming more suppressed records than the limit allows, or than the records
    at the roots, fails the check (digests re-sealed)."""
    t, h = _tiny()
    roles = ColumnRoles(quasi_identifying=("x",), insensitive=("other",))
    rel = versapub.publish(
        t, [], guarantee={"name": "k-anonymity", "k": 2}, columns=roles, hierarchies=h,
        anonymizer="mondrian", anonymizer_params={"suppression": 0.34, "suppression_mode": "class"},
    )  # fmt: skip
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv")
    assert verify_release(out).ok
    m = json.loads((out / "manifest.json").read_text())
    m["anonymizer"]["params"]["suppression"] = 0.1  # limit floor(0.6) = 0 < 2 claimed
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    bad = [f for f in verify_release(out).findings if f.check == "suppression"]
    assert bad and not bad[0].ok
    m["anonymizer"]["params"]["suppression"] = 0.9
    m["tables"][0]["stats"]["suppressed_records"] = 4  # only 2 records are at the root
    (out / "manifest.json").write_text(json.dumps(m))
    seal(out)
    bad = [f for f in verify_release(out).findings if f.check == "suppression"]
    assert bad and not bad[0].ok and "fewer than the suppressed records claimed" in bad[0].message


def test_cli_summary_and_dask_refusal(tmp_path: Path) -> None:
    table = random_table(np.random.default_rng(8), 1500, {"q1": 30, "q2": 20, "s": 4}, skew=1.5)
    data = tmp_path / "in.csv"
    pd.DataFrame(table.to_pydict()).to_csv(data, index=False)
    code, stdout, stderr = run(
        "publish", "--input", str(data), "--qi", "q1,q2", "--others", "insensitive", "--guarantee",
        "k-anonymity:k=10", "--anonymizer", "mondrian:suppression=0.03,suppression_mode=class",
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert code == 0, stderr
    assert "+ suppressed (" in stdout and "suppressed records" in (tmp_path / "r" / "report.md").read_text()
    anon = make_anonymizer("mondrian", suppression=0.02)
    for rules in ([], ["q1 -> s"]):  # the classic job, and a rule job
        with pytest.raises(ConfigError, match="suppression"):
            require_out_of_core(make_decomposition("uad"), anon, rules, ColumnRoles(quasi_identifying=("q1",)), anon)
