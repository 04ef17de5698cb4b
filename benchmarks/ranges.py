"""Issue 49: the range every count can take, measured on real releases.

Part 1 — 1,000 workload queries (qd = 3, p = 0.4, seed 1) on three releases, each evaluated
against its original: the share of true answers inside the ranges (must be 100 %), the share
claimed sharp, the median width relative to the true count, and the time of the ranges
beside the rest: in ``evaluate`` (its KL and the workload's estimates) and in the publish's
utility step (``utility_summary``: KL, the workload's draws and true answers, estimates,
marginal errors), timed whole:

* Adult, the demo's release (``versapub demo``: two Anatomy tables, l = 4);
* Adult published with Mondrian (the demo's configuration, ``--anonymizer mondrian``);
* the hospital scenario (tests/hospital.py: SPARCS 2020 musculoskeletal discharges).

Part 2 — a single query's range (one ``versapub.inspect.query`` minus its estimate) on
10^5-record releases of the common kinds: texas_like (9 rules, l = 10: UAD + Anatomy) and
Mondrian on two of its QIs; then a marginal collection over Adult (30,162 records, the
README's command); three queries each.

    python benchmarks/ranges.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import versapub  # noqa: E402
from versapub.datasets import TEXAS_LIKE_RULES, data_path, texas_like  # noqa: E402

BIN = str(Path(sys.executable).with_name("versapub"))


def cli(*args: str) -> None:
    r = subprocess.run([BIN, *args], capture_output=True, text=True, check=False)
    if r.returncode not in (0, 6):
        raise SystemExit(f"versapub {' '.join(args)} failed:\n{r.stderr}")


def evaluate_row(name: str, release: Path, original: Path | None) -> None:
    from versapub import inspect
    from versapub.inspect.original import original_table
    from versapub.kinds.load import load_release
    from versapub.model.utility import utility_summary

    ev = inspect.evaluate(release, original)
    g, t = ev.ranges, ev.timings_s
    rest = t["kl"] + t["queries"]
    # The publish's utility step (utility_summary), timed whole: the ranges beside the rest.
    model = load_release(release)
    table = original_table(release, original, None, model).table
    t0 = time.perf_counter()
    u = utility_summary(model, table)
    step = time.perf_counter() - t0
    r = u["seconds"]["ranges"]
    print(
        f"{name:<28} {g['share_inside']:>7.1%} {g['share_sharp']:>7.1%} {g['median_relative_width']:>12.2f} "
        f"{t['ranges']:>9.2f} {rest:>14.2f} {r:>12.2f} {step - r:>12.2f}",
        flush=True,
    )
    w = g["widest"][0]
    print(f"{'':<28} widest: {w['query']} — {w['lower']:,.0f} to {w['upper']:,.0f}, true {w['actual']:,.0f}")


def part1(tmp: Path) -> None:
    print(
        f"{'release':<28} {'inside':>7} {'sharp':>7} {'median width':>12} {'ranges s':>9} {'KL+queries s':>14} "
        f"{'publish: ranges s':>12} {'rest s':>12}"
    )
    demo = tmp / "demo"
    cli("demo", "--out", str(demo))
    evaluate_row("Adult demo (Anatomy)", demo, None)
    cfg = str(data_path("adult", "adult.toml"))
    mond = tmp / "mondrian"
    cli("publish", cfg, "--anonymizer", "mondrian", "--no-utility", "--out", str(mond))
    evaluate_row("Adult Mondrian", mond, Path(cfg))
    from tests.hospital import IDENTIFIERS, RECODING, RULES, write_hospital

    data = write_hospital(tmp / "discharges.csv")
    hosp = tmp / "hospital"
    rules = [a for r in RULES for a in ("--rule", r)]
    ids = [a for c in IDENTIFIERS for a in ("--identifying", c)]
    money = ["--identifying", "Total.Charges", "--identifying", "Total.Costs", "--identifying", RECODING]
    cli("publish", "--input", str(data), *rules, *ids, *money, "--others", "insensitive", "--allow-proxy",
        "diag_chapter", "--no-utility", "--out", str(hosp))  # fmt: skip
    evaluate_row("hospital scenario", hosp, data)


def single(name: str, release: Path, queries: list[str]) -> None:
    from versapub.inspect.querying import query_range
    from versapub.kinds.load import load_release
    from versapub.model.query import count, parse_query

    model = load_release(release)
    for text in queries:
        q = parse_query(text)
        t0 = time.perf_counter()
        est = count(model, q)
        t1 = time.perf_counter()
        b = query_range(model, q, {}, {}, est, 2.0)
        t2 = time.perf_counter()
        print(
            f"{name:<28} {text:<44} {t1 - t0:>8.3f} {t2 - t1:>8.3f}  {b.lower:,.0f} to {b.upper:,.0f}"
            + ("" if b.sharp else " (not sharp)"),
            flush=True,
        )


def part2(tmp: Path) -> None:
    print(f"\n{'release (10^5 records)':<28} {'query':<44} {'est. s':>8} {'range s':>8}  range")
    table = texas_like(100_000, seed=0)
    cols = versapub.ColumnRoles(allow_unique=table.names, others="insensitive", allow_proxy=table.names)
    rel = versapub.publish(table, TEXAS_LIKE_RULES, l=10, seed=0, columns=cols)
    versapub.write_release(rel, tmp / "texas")
    names = list(table.names)
    a, b, c = names[0], names[1], names[-1]
    single("texas_like (UAD + Anatomy)", tmp / "texas", [f"{a} = '{table.column(a).values[0]}'",
           f"{a} = '{table.column(a).values[0]}' AND {c} = '{table.column(c).values[0]}'",
           f"{b} = '{table.column(b).values[0]}' OR NOT {c} = '{table.column(c).values[0]}'"])  # fmt: skip
    # Mondrian on three of its columns (the others dropped), l = 2.
    q1, q2, s_ = names[1], names[2], names[3]
    roles = versapub.ColumnRoles(allow_unique=table.names, others="identifying", allow_proxy=table.names)
    rel = versapub.publish(table, [f"{q1}, {q2} -> {s_}"], l=2, seed=0, columns=roles, anonymizer="mondrian")
    versapub.write_release(rel, tmp / "mondrian-texas")
    v1, v3 = table.column(q1).values[0], table.column(s_).values[0]
    single("texas_like Mondrian", tmp / "mondrian-texas", [f"{q1} = '{v1}'", f"{q1} = '{v1}' AND {s_} = '{v3}'",
           f"{q1} = '{v1}' OR {s_} = '{v3}'"])  # fmt: skip


def part3(tmp: Path) -> None:
    """A marginal collection over Adult (30,162 records; the README's command)."""
    h = data_path("adult", "hierarchies")
    cols = [a for c in ("race", "sex", "age", "marital-status", "occupation") for a in ("--column", c)]
    out = tmp / "marg"
    cli("marginals", "publish", "--input", str(data_path("adult", "adult.csv.gz")), "--delimiter", ";",
        "--hierarchies", str(h), *cols, "--sensitive", "occupation", "--k", "10", "--l", "3", "--base", "incognito",
        "--marginal", "age@1", "--marginal", "race, occupation", "--no-utility", "--out", str(out))  # fmt: skip
    queries = [
        "race = 'White' AND occupation = 'Sales'",
        "sex = 'Female' AND race = 'Black' AND occupation = 'Tech-support'",
        "age = '40' OR race = 'Other'",
    ]
    single("Adult marginal collection", out, queries)


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "--part2" not in sys.argv:
            part1(tmp)
        part2(tmp)
        part3(tmp)


if __name__ == "__main__":
    main()
