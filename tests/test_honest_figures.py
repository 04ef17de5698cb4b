"""Figures that must not mislead (issue 66): each built on a small table reproducing the real
case of its docstring."""

from __future__ import annotations

from pathlib import Path

import versapub
from versapub.data.table import EncodedTable


def _outliers(tmp_path: Path) -> tuple[Path, Path]:
    """Twenty records, two of them in a cell of 2 (a3): --k 3 with --suppression 0.25
    removes them (in no table)."""
    a = ["a1"] * 9 + ["a2"] * 9 + ["a3"] * 2
    s = [f"s{i % 4}" for i in range(20)]
    data = tmp_path / "t.csv"
    data.write_text("a,s\n" + "".join(f"{x},{y}\n" for x, y in zip(a, s, strict=True)))
    rel = versapub.publish(EncodedTable.from_columns({"a": a, "s": s}), ["a -> s"], l=2, k=3, suppression=0.25)
    out = tmp_path / "r"
    versapub.write_release(rel, out, format="csv", k=3)
    return out, data


def test_query_on_the_original_counts_the_removed_records_inside(tmp_path: Path) -> None:
    """With --suppression, query --original printed 'OUTSIDE the range' for 58 of 70 random
    queries: the actual count reads the whole input, removed records included. The true
    count lies in [lower, upper + removed], and the note says so."""
    from versapub.inspect import query

    out, data = _outliers(tmp_path)
    for text, actual in (("s = 's2'", 5), ("a != 'a1'", 11), ("a = 'a2' OR s = 's3'", 12)):
        got = query(out, text, data)
        assert got.actual == actual and got.inside is True, (text, got.to_dict())
        assert any("removed 2 record(s)" in n for n in got.notes)


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _cli(*args: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from versapub.cli.main import cli

    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_compare_shows_the_guarantees_the_rules_were_published_under(tmp_path: Path) -> None:
    """A release whose rules carry their own t-closeness was labelled with the job's unused
    default (l-diversity, l=2); a k-anonymity release's strongest attack was shown beside
    'allowed 100 %'. Now: the per-rule guarantee, and no bound where the guarantee sets none."""
    from versapub.inspect.comparison import _attack, _parameters

    data = str(EXAMPLES / "data.csv")
    common = ["--identifying", "patient_id", "--others", "insensitive", "--no-utility", "--anonymizer", "mondrian"]
    code, _, err = _cli("publish", "--input", data, "--rule", "age, sex -> disease | t-closeness:t=0.3", *common,
                        "--out", str(tmp_path / "t"))  # fmt: skip
    assert code in (0, 6), err
    import json

    raw = json.loads((tmp_path / "t" / "manifest.json").read_text())
    shown = _parameters(raw)["guarantee"]
    assert shown.startswith("t-closeness") and "per rule" in shown and "l-diversity" not in shown
    check = {"adversary": {"rules": [{"rule": {"lhs": ["a"], "rhs": "s"}, "inference": {"risk": {"rate": 0.4}},
                                      "bound": 1.0}]}}  # fmt: skip
    assert _attack(check)["attack_bound"] is None and _attack(check)["attack_rate"] == 0.4


def test_compare_refuses_a_dp_release_of_another_file(tmp_path: Path) -> None:
    """A DP release records no digest of its input (it would tell neighbouring inputs apart),
    so compare accepted a DP release of another file beside a release of this one; the file's
    name and columns, recorded without any count, now have to agree."""
    import shutil

    data = tmp_path / "data.csv"
    shutil.copy(EXAMPLES / "data.csv", data)
    other = tmp_path / "other.csv"
    shutil.copy(EXAMPLES / "data.csv", other)
    (tmp_path / "sex.txt").write_text("Female\nMale\n")
    roles = ["--identifying", "patient_id", "--others", "insensitive", "--no-utility"]
    code, _, err = _cli("publish", "--input", str(data), "--rule", "age, sex -> disease", *roles, "--out",
                        str(tmp_path / "a"))  # fmt: skip
    assert code in (0, 6), err
    for name, src in (("same", data), ("else", other)):
        code, _, err = _cli("publish", "--input", str(src), "--column", "sex", "--column", "hours", "--mechanism",
                            "dp:epsilon=1,delta=1e-9", "--domain", f"sex={tmp_path / 'sex.txt'}", "--domain",
                            "hours=1..99", "--out", str(tmp_path / name))  # fmt: skip
        assert code == 0, err
    code, _, err = _cli("compare", str(tmp_path / "a"), str(tmp_path / "else"))
    assert code == 2 and "another input file (other.csv" in " ".join(err.split())
    code, _, err = _cli("compare", str(tmp_path / "a"), str(tmp_path / "same"))
    assert code == 0, err


def test_an_infinite_kl_keeps_a_finite_figure_beside_it() -> None:
    """DP, PRAM'd and suppressed releases showed 'KL infinite' and the plot dropped them: the
    KL on the shared support (the input renormalized over the records the model can hold)
    and the mass outside it, by hand: p = (0.6, 0.2, 0.2) over x, y, z; the model gives x and
    y 0.5 each and z nothing: lost 0.2, p_s = (0.75, 0.25), KL_s = 0.75 ln 1.5 + 0.25 ln 0.5."""
    import math

    import numpy as np

    from versapub.model.utility import kl_divergence

    class Model:
        attributes = ("a",)

        def __init__(self) -> None:
            self.domains = {"a": np.array(["x", "y"], dtype=object)}

        def prob(self, codes: dict[str, np.ndarray]) -> np.ndarray:
            return np.full(len(codes["a"]), 0.5)

    t = EncodedTable.from_columns({"a": ["x", "x", "x", "y", "z"]})
    got = kl_divergence(Model(), t)  # type: ignore[arg-type]
    assert math.isinf(got.value) and got.n_zero_probability == 1
    assert got.lost_mass == 0.2 or abs(got.lost_mass - 0.2) < 1e-12
    assert abs(got.shared - (0.75 * math.log(1.5) + 0.25 * math.log(0.5))) < 1e-12
    j = got.to_json()
    assert j["kl_divergence"] is None and j["kl_shared_support"] == got.shared


def test_small_ways_in(tmp_path: Path) -> None:
    """Issue 66's small cases: a list written with commas in --treat says lists use ';'; a DP
    job needs no domain for a column declared identifying (removed, and recorded); a domain
    file lists the empty value as a line "" so a file with missing cells publishes as it is."""
    import json

    data = str(EXAMPLES / "data.csv")
    code, _, err = _cli("publish", "--input", data, "--rule", "age, sex -> disease", "--identifying", "patient_id",
                        "--others", "insensitive", "--treat", "noise:columns=hours,race", "--out",
                        str(tmp_path / "n"))  # fmt: skip
    assert code == 2 and "a list of values is separated by ';' (e.g. columns=hours;race)" in " ".join(err.split())
    (tmp_path / "sex.txt").write_text("Female\nMale\n")
    cols = ["--column", "patient_id", "--column", "sex", "--column", "hours"]
    code, _, err = _cli("publish", "--input", data, "--identifying", "patient_id", *cols, "--mechanism",
                        "dp:epsilon=1,delta=1e-9", "--domain", f"sex={tmp_path / 'sex.txt'}", "--domain", "hours=1..99",
                        "--out", str(tmp_path / "dp"))  # fmt: skip
    assert code == 0, err
    m = json.loads((tmp_path / "dp" / "manifest.json").read_text())
    assert m["input"]["removed_identifying"] == ["patient_id"] and m["input"]["columns"] == ["sex", "hours"]
    (tmp_path / "miss.csv").write_text("age,sex\n30,F\n40,\n50,M\n")
    (tmp_path / "sexe.txt").write_text('F\nM\n""\n')
    code, _, err = _cli("publish", "--input", str(tmp_path / "miss.csv"), "--missing", "value", "--mechanism",
                        "dp:epsilon=1,delta=1e-9", "--domain", f"sex={tmp_path / 'sexe.txt'}", "--domain", "age=0..99",
                        "--out", str(tmp_path / "dpm"))  # fmt: skip
    assert code == 0, err


def test_row_numbers_are_no_zip_code() -> None:
    """Row numbers 10000-10199 were flagged as a zip code on the page; five-digit values that
    are not a run of one per record still are."""
    import numpy as np

    from versapub.privacy.screens.roles import ColumnRoles, forgotten_quasi_identifiers

    rng = np.random.default_rng(0)
    t = EncodedTable.from_columns(
        {
            "row": [str(10000 + i) for i in range(200)],
            "postal": [str(int(x)) for x in rng.integers(10000, 99999, 200)],
            "s": [f"s{i % 3}" for i in range(200)],
        }
    )
    notes = forgotten_quasi_identifiers(t, [], ColumnRoles())
    assert not any("'row'" in n for n in notes) and any("'postal'" in n for n in notes)


def test_changed_has_one_meaning_across_publish_and_check(tmp_path: Path) -> None:
    """Treated-column figures disagreed between commands: check showed the input mean after
    top-coding (publish before it), and after targeted swapping changed 2,244 states check said
    "at least 0 records published with another value". "Changed" means records published with
    another value than the input's own: check shows the input as read (mean and how many
    records the distributions show changed, here every top-coded record) beside the
    publisher's record-by-record share of the same measure; a swap, which keeps the
    distribution, shows 0 from the files and the publisher's share beside it."""
    import json

    import pandas as pd

    data = EXAMPLES / "data.csv"
    hours = pd.read_csv(data)["hours"]
    job = ["--input", str(data), "--rule", "age, sex -> disease", "--identifying", "patient_id"]
    job += ["--others", "insensitive", "--no-utility", "--seed", "1"]
    for treat, shown, share in (
        ("top-coding:columns=hours,threshold=40", int((hours > 40).sum()), (hours > 40).mean()),
        ("rank-swapping:columns=hours,p=10", 0, None),
    ):
        out = tmp_path / treat.split(":")[0]
        code, _, err = _cli("publish", *job, "--treat", treat, "--out", str(out))
        assert code in (0, 6), err
        code, text, _ = _cli("check", str(out), "--original", str(data), "--json")
        got = json.loads(text)["perturbation"]["columns"]["hours"]
        assert got["changed_at_least"] == shown and abs(got["mean"][0] - hours.mean()) < 1e-3, got
        claimed = json.loads((out / "manifest.json").read_text())["perturbation"]["columns"]["hours"]
        assert got["publisher_changed_share"] == claimed["changed_share"]
        if share is not None:
            assert abs(claimed["changed_share"] - share) < 1e-9
        else:
            assert claimed["changed_share"] > 0.5  # a rank swap within 10 % moves most values
        code, text, _ = _cli("check", str(out), "--original", str(data))
        assert f"{claimed['changed_share']:.1%} of the records, as the publisher counted" in text
