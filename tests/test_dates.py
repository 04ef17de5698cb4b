"""Dates (issue 29): written US-style or dotted, they are ordered in time everywhere — the value
order, Mondrian's cuts and the release's order listing, query ranges — while published in the
input's own form; ARX's date hierarchy by ``hierarchy build --dates``."""

from __future__ import annotations

import csv
import datetime
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import versapub
from versapub.cli.main import cli
from versapub.data.order import order_key
from versapub.errors import HierarchyError


def _us(d: datetime.date) -> str:
    return f"{d.month:02d}/{d.day:02d}/{d.year}"


def test_dates_compare_in_time() -> None:
    us = ["03/14/2021", "12/01/2020", "01/02/2021", "05/31/2020"]
    assert sorted(us, key=order_key) == ["05/31/2020", "12/01/2020", "01/02/2021", "03/14/2021"]
    assert sorted(["14.03.2021", "01.12.2020"], key=order_key) == ["01.12.2020", "14.03.2021"]
    assert sorted(["2021-03-14", "2020-12-01"], key=order_key) == ["2020-12-01", "2021-03-14"]
    assert order_key("13/45/2020") != order_key("01/01/2020")  # not a date: text and numbers as before


@pytest.fixture
def visits(tmp_path: Path) -> tuple[Path, list[dict[str, str]]]:
    rng = np.random.default_rng(9)
    start = datetime.date(2019, 6, 1)
    rows = [
        {"visit": _us(start + datetime.timedelta(days=int(rng.integers(0, 700)))), "dx": str(rng.choice(list("abcd")))}
        for _ in range(400)
    ]
    path = tmp_path / "visits.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, ["visit", "dx"])
        w.writeheader()
        w.writerows(rows)
    return path, rows


def test_mondrian_cuts_dates_in_time_and_queries_range_over_time(tmp_path: Path, visits: tuple[Path, list]) -> None:
    path, rows = visits
    out = tmp_path / "r"
    r = CliRunner().invoke(
        cli,
        [
            "publish",
            "--input",
            str(path),
            "--rule",
            "visit -> dx",
            "--l",
            "2",
            "--anonymizer",
            "mondrian",
            "--allow-unique",
            "visit",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    with (out / "T1_order.csv").open() as f:  # each leaf's position in the order generalized values cover
        listed = [row for row in csv.DictReader(f) if row["attribute"] == "visit"]
    leaves = [row["leaf"] for row in sorted(listed, key=lambda row: int(row["position"]))]
    as_dates = [datetime.datetime.strptime(v, "%m/%d/%Y").date() for v in leaves]
    assert as_dates == sorted(as_dates) and len(as_dates) > 100  # the order listing in time order
    q = versapub.inspect.query(out, "visit BETWEEN '03/01/2020' AND '05/31/2020'", original=path)
    lo, hi = datetime.date(2020, 3, 1), datetime.date(2020, 5, 31)
    want = sum(lo <= datetime.datetime.strptime(row["visit"], "%m/%d/%Y").date() <= hi for row in rows)
    assert q.actual == want > 0 and q.estimate > 0


def test_hierarchy_build_dates(tmp_path: Path, visits: tuple[Path, list]) -> None:
    path, _ = visits
    out = tmp_path / "visit.csv"
    r = CliRunner().invoke(
        cli,
        [
            "hierarchy",
            "build",
            str(path),
            "--column",
            "visit",
            "--dates",
            "day,week,month,quarter,year",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    rows = [line.split(";") for line in out.read_text().splitlines()]
    first = rows[0]
    d = datetime.datetime.strptime(first[0], "%m/%d/%Y").date()
    assert first[2] == f"{d.year}-{d.month:02d}" and first[3] == f"{d.year}-Q{(d.month - 1) // 3 + 1}"
    assert first[4] == str(d.year)
    assert first[-1] == "*" and first[1].startswith(f"{d.isocalendar()[0]}-W")
    check = CliRunner().invoke(cli, ["hierarchy", "check", str(path), "--hierarchy", f"visit={out}"])
    assert check.exit_code == 0, check.output
    from versapub.data.hierarchy_build import dates

    with pytest.raises(HierarchyError, match="is not a date"):
        dates("visit", ["03/14/2021", "soon"], ["day", "year"])


def _day_first(d: datetime.date) -> str:
    return f"{d.day:02d}/{d.month:02d}/{d.year}"


@pytest.fixture
def day_first(tmp_path: Path) -> tuple[Path, list[datetime.date], list[str]]:
    """Day-first dates with slashes (14/03/2021): by their form they read as US dates (or not
    at all), so only --date-format orders them."""
    rng = np.random.default_rng(4)
    start = datetime.date(2020, 1, 1)
    days = [start + datetime.timedelta(days=int(rng.integers(0, 500))) for _ in range(300)]
    dx = [str(rng.choice(list("abc"))) for _ in days]
    path = tmp_path / "adm.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["admitted", "dx"])
        w.writerows(zip(map(_day_first, days), dx, strict=True))
    return path, days, dx


def test_date_format_orders_day_first_dates_in_time(tmp_path: Path, day_first: tuple[Path, list, list]) -> None:
    path, days, _ = day_first
    out = tmp_path / "r"
    args = ["publish", "--input", str(path), "--rule", "admitted -> dx", "--l", "2", "--anonymizer", "mondrian"]
    args += ["--allow-unique", "admitted", "--date-format", "admitted=%d/%m/%Y", "--out", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    with (out / "T1_order.csv").open() as f:
        listed = [row for row in csv.DictReader(f) if row["attribute"] == "admitted"]
    leaves = [row["leaf"] for row in sorted(listed, key=lambda row: int(row["position"]))]
    assert leaves == sorted({d.isoformat() for d in days})  # ISO, in time order, one per distinct day
    import json

    recorded = json.loads((out / "manifest.json").read_text())["input"]["date_formats"]
    assert recorded == {"admitted": "%d/%m/%Y"}
    assert any("ISO 8601" in n for n in json.loads((out / "manifest.json").read_text())["notes"])
    lo, hi = datetime.date(2020, 3, 1), datetime.date(2020, 5, 31)
    want = sum(lo <= d <= hi for d in days)
    for text in ("admitted BETWEEN '01/03/2020' AND '31/05/2020'", "admitted BETWEEN '2020-03-01' AND '2020-05-31'"):
        q = versapub.inspect.query(out, text)  # the input's form or the published one; the recorded input
        assert q.actual == want > 0 and q.estimate > 0
    check = CliRunner().invoke(cli, ["check", str(out)])
    assert check.exit_code == 0, check.output


def test_date_format_refusals_name_column_and_value(tmp_path: Path, day_first: tuple[Path, list, list]) -> None:
    path, _, _ = day_first
    base = ["publish", "--input", str(path), "--rule", "admitted -> dx", "--out", str(tmp_path / "r")]
    r = CliRunner().invoke(cli, [*base, "--date-format", "admitted=%m/%d/%Y"])  # the wrong way round
    assert r.exit_code == 2 and "'admitted'" in r.output and "do not read as dates" in r.output
    assert not (tmp_path / "r").exists()
    r = CliRunner().invoke(cli, [*base, "--date-format", "admitted=%Y"])
    assert r.exit_code == 2 and "must name the day, the month and the year" in r.output
    r = CliRunner().invoke(cli, [*base, "--date-format", "when=%d/%m/%Y"])
    assert r.exit_code == 2 and "'when'" in r.output and "not a column" in r.output


def test_date_format_in_toml_and_hierarchy(tmp_path: Path, day_first: tuple[Path, list, list]) -> None:
    path, _, _ = day_first
    hier = tmp_path / "admitted.csv"
    build = ["hierarchy", "build", str(path), "--column", "admitted", "--dates", "day,month,year"]
    r = CliRunner().invoke(cli, [*build, "--date-format", "%d/%m/%Y", "-o", str(hier)])
    assert r.exit_code == 0, r.output
    first = hier.read_text().splitlines()[0].split(";")
    d = datetime.datetime.strptime(first[0], "%d/%m/%Y").date()  # the leaf in the input's form
    assert first[1] == f"{d.year}-{d.month:02d}"
    cfg = tmp_path / "job.toml"
    cfg.write_text(
        f'[input]\npath = "{path.name}"\ndate_formats = {{ admitted = "%d/%m/%Y" }}\n'
        f'hierarchies = {{ admitted = {{ file = "{hier.name}" }} }}\n'
        '[privacy]\nrules = ["admitted -> dx"]\nguarantee = "l-diversity"\nl = 2\n'
        '[columns]\nallow_unique = ["admitted"]\n[publish]\nanonymizer = "incognito"\n'
    )
    out = tmp_path / "r"
    r = CliRunner().invoke(cli, ["publish", str(cfg), "--out", str(out)])
    assert r.exit_code == 0, r.output
    published = (out / "T1.csv").read_text()
    assert "/" not in published  # months, years or ISO days: no input-form date left
    assert CliRunner().invoke(cli, ["check", str(out)]).exit_code == 0
