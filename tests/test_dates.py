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
