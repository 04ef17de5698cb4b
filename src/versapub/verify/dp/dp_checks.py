"""The verifier's checks of a differentially private release's files (issue 52), written
from ``docs/release-format.md`` and sharing no code with the publisher:

* a ``noisy`` table lists every cell of its declared domains exactly once with an integer
  count (any sign), and its ``sigma`` is the Gaussian mechanism's scale for its ``rho``;
* a ``fitted`` table lists every cell of its declared domains once with a non-negative count,
  the counts summing to ``n_records``;
* the release as a whole (:func:`mechanism_findings`): the ledger's arithmetic
  (:mod:`versapub.verify.dp.dp_ledger`), every noisy table entered in the ledger with its scale,
  every measured marginal inside one fitted clique, the fitted cliques agreeing on the
  attributes they share — and the verdict that differential privacy itself rests on the
  mechanism, which no check of outputs can prove."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np

from versapub.data.sql import fresh_alias
from versapub.verify.adversary.adversary_records import Drawn
from versapub.verify.dp.dp_ledger import ledger_findings
from versapub.verify.dp.dp_noise import deviations, moments, within
from versapub.verify.finding import Finding
from versapub.verify.reading.primitives import Checker, _q
from versapub.verify.reading.reading import CountRows, Reading, View

#: Relative tolerance of sums of the fitted model's real counts.
SUM_TOLERANCE = 1e-6
#: A fitted table's expected counts are written rounded to this many records (the format's).
WRITTEN_PRECISION = 1e-9


def _csv(path: Path) -> str:
    """A DuckDB table expression reading a release's CSV file, every column as text."""
    return "read_csv('" + str(path).replace("'", "''") + "', all_varchar=true)"


def _domains(entry: dict[str, Any], attrs: list[str]) -> dict[str, list[str]] | None:
    d = entry.get("domains")
    if not isinstance(d, dict) or any(not isinstance(d.get(a), list) or not d.get(a) for a in attrs):
        return None
    return {a: [str(v) for v in d[a]] for a in attrs}


def _cells_ok(c: Checker, view: str, entry: dict[str, Any], attrs: list[str], file: str) -> bool:
    """Every cell of the declared domains appears once, and no other row."""
    doms = _domains(entry, attrs)
    if doms is None:
        c.report.add("dp tables", False, f"table {entry.get('name')!r} does not declare a domain for {attrs}", file)
        return False
    cells = math.prod(len(v) for v in doms.values())
    keys = ", ".join(_q(a) for a in attrs)
    rows, distinct = c.con.execute(f"SELECT count(*), count(DISTINCT ({keys})) FROM {view}").fetchone() or (0, 0)
    outside = 0
    for a, values in doms.items():
        listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
        got = c.con.execute(f"SELECT count(*) FROM {view} WHERE CAST({_q(a)} AS VARCHAR) NOT IN ({listed})").fetchone()
        outside += int(got[0]) if got else 0
    ok = rows == distinct == cells and outside == 0
    return c.report.add(
        "dp tables",
        ok,
        f"every one of the {cells:,} cells of the declared domains listed once"
        if ok
        else f"{rows:,} rows ({distinct:,} distinct, {outside:,} with a value outside the declared domains) "
        f"for the {cells:,} cells of the declared domains",
        file,
    )


def verify_noisy(c: Checker, entry: dict[str, Any], sub: Any, files: dict[str, Any], guarantee: dict[str, Any]) -> None:
    """A noisy table: every cell once, integer counts, its scale matching its share."""
    del guarantee
    attrs = list(sub.attributes)
    file = str(files.get("data"))
    view = c.relation(file, [*attrs, "count"], "file")
    if view is None or not _cells_ok(c, view, entry, attrs, file):
        return
    bad = c.con.execute(f"SELECT count(*) FROM {view} WHERE TRY_CAST({_q('count')} AS BIGINT) IS NULL").fetchone()
    c.report.add(
        "dp tables",
        not (bad and bad[0]),
        "noisy counts are integers" if not (bad and bad[0]) else f"{bad[0]} row(s) have a count that is not an integer",
        file,
    )
    given = entry.get("sigma"), entry.get("rho")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in given):
        c.report.add("dp tables", False, f"sigma {given[0]!r} and rho {given[1]!r} must be positive numbers", file)
        return
    sigma, rho = float(given[0]), float(given[1])  # type: ignore[arg-type]
    if c.original is not None:  # the deviations from the input's counts, for the scale test (dp_noise)
        rows = c.con.execute(f"SELECT {', '.join(_q(a) for a in attrs)}, {_q('count')} FROM {view}").fetchall()
        dev = deviations(c.original, entry, rows)
        if dev is not None and len(dev):
            v, mu4 = moments(sigma)
            total, m = float((dev**2).sum()), len(dev)
            floor = within(sigma, math.sqrt(total / m)) ** m
            c.noise_tests.append((file, total, m * v, m * (mu4 - v * v), m, floor))
    want = 1.0 / (2.0 * sigma**2)  # the Gaussian mechanism at L2 sensitivity 1
    ok = abs(want - rho) <= 1e-6 * want
    c.report.add(
        "dp tables",
        ok,
        f"noise scale {sigma:.4g} spends rho = {want:.6g}" + ("" if ok else f", but the table claims {rho:.6g}"),
        file,
    )


def verify_fitted(
    c: Checker, entry: dict[str, Any], sub: Any, files: dict[str, Any], guarantee: dict[str, Any]
) -> None:
    """A fitted clique: every cell once, non-negative real counts summing to ``n_records``."""
    del guarantee
    attrs = list(sub.attributes)
    file = str(files.get("data"))
    view = c.relation(file, [*attrs, "count"], "file")
    if view is None or not _cells_ok(c, view, entry, attrs, file):
        return
    cnt = _q("count")
    bad, total, cells = c.con.execute(
        f"SELECT count(*) FILTER (WHERE TRY_CAST({cnt} AS DOUBLE) IS NULL OR TRY_CAST({cnt} AS DOUBLE) < 0), "
        f"coalesce(sum(TRY_CAST({cnt} AS DOUBLE)), 0), count(*) FROM {view}"
    ).fetchone() or (0, 0.0, 0)
    # each cell is written to WRITTEN_PRECISION records (docs/release-format.md): its rounding adds up
    slack = SUM_TOLERANCE * max(c.n, 1) + WRITTEN_PRECISION / 2 * int(cells)
    ok = not bad and abs(float(total) - c.n) <= slack
    c.report.add(
        "dp tables",
        ok,
        f"expected counts are non-negative and sum to {float(total):,.2f}"
        + ("" if ok else f" ({bad} not a non-negative number; n_records = {c.n})"),
        file,
    )


def mechanism_findings(directory: Path, manifest: dict[str, Any]) -> list[Finding]:
    """The release-wide checks of a differentially private release (module docstring)."""
    section = manifest.get("mechanism")
    if not isinstance(section, dict):
        return []
    found = ledger_findings(section.get("ledger"))
    tables = [t for t in manifest.get("tables") or [] if isinstance(t, dict)]
    noisy = [t for t in tables if t.get("kind") == "noisy"]
    fitted = [t for t in tables if t.get("kind") == "fitted"]
    raw = section.get("ledger")
    ledger: dict[str, Any] = raw if isinstance(raw, dict) else {}
    rows = [r for r in ledger.get("measurements") or [] if isinstance(r, dict) and r.get("step") == "measurement"]
    claimed = sorted((tuple(r.get("marginal") or ()), float(r.get("sigma") or 0)) for r in rows)
    published = sorted((tuple(t.get("attributes") or ()), float(t.get("sigma") or 0)) for t in noisy)
    same = len(claimed) == len(published) and all(
        a == b and abs(s - t) <= 1e-9 * max(s, t) for (a, s), (b, t) in zip(claimed, published, strict=True)
    )
    found.append(
        Finding(
            "dp ledger",
            same,
            f"the {len(noisy)} noisy table(s) are the ledger's measurements, each with its noise scale"
            if same
            else f"the ledger's measurements {claimed} are not the noisy tables {published}",
        )
    )
    cliques = [list(t.get("attributes") or []) for t in fitted]
    outside = [t.get("name") for t in noisy if not any(set(t.get("attributes") or []) <= set(c) for c in cliques)]
    found.append(
        Finding(
            "dp model",
            not outside and bool(cliques),
            "every measured marginal lies inside a clique of the fitted model"
            if not outside and cliques
            else f"noisy table(s) {outside} lie in no fitted clique (or the release has no fitted table)",
        )
    )
    steps = [p for p in section.get("preprocessing") or [] if isinstance(p, dict)]
    spending = [str(p.get("step")) for p in steps if not isinstance(p.get("rho"), (int, float)) or p["rho"] != 0]
    found.append(
        Finding(
            "dp ledger",
            not spending,
            f"the {len(steps)} preprocessing step(s) spend no budget (declared domains, post-processing)"
            if not spending
            else f"preprocessing step(s) {spending} claim a budget the ledger does not hold",
        )
    )
    found += _agreement(directory, fitted, float(manifest.get("n_records") or 0))
    found.append(_domains_finding(section.get("domains"), noisy, fitted))
    return found


def _domains_finding(declared: Any, noisy: list[dict[str, Any]], fitted: list[dict[str, Any]]) -> Finding:
    """Every table's domains are the declared ones: a fitted table's exactly, a noisy table's
    with the values MST merged replaced by the merged value's label (its ``merged``)."""
    if not isinstance(declared, dict):
        return Finding("dp tables", False, "the mechanism section declares no domains (mechanism.domains)")
    wrong = []
    for t in [*noisy, *fitted]:
        raw_doms, raw_merged = t.get("domains"), t.get("merged")
        doms: dict[str, Any] = raw_doms if isinstance(raw_doms, dict) else {}
        merged: dict[str, Any] = raw_merged if isinstance(raw_merged, dict) else {}
        for a in t.get("attributes") or []:
            full = {str(v) for v in declared.get(a) or []}
            own = [str(v) for v in doms.get(a) or []]
            spec = merged.get(a) if t.get("kind") == "noisy" else None
            if isinstance(spec, dict):
                label, values = str(spec.get("label")), {str(v) for v in spec.get("values") or []}
                kept = [v for v in own if v != label]
                ok = label in own and label not in full and values <= full and set(kept) | values == full
                ok = ok and not values & set(kept) and len(kept) == len(set(kept))
            else:
                ok = sorted(own) == sorted(full) and len(own) == len(full)
            if not ok:
                wrong.append(f"{t.get('name')}.{a}")
    return Finding(
        "dp tables",
        not wrong,
        "every table's domains are the declared ones (a merged value standing for the rare values it lists)"
        if not wrong
        else f"domains that are not the declared ones: {', '.join(wrong[:10])}",
    )


def _agreement(directory: Path, fitted: list[dict[str, Any]], n: float) -> list[Finding]:
    """The fitted cliques agree on every set of attributes two of them share (each pair's
    sums over what it shares compared in DuckDB)."""
    import duckdb

    worst = 0.0
    try:
        with duckdb.connect() as con:
            for a, b in itertools.combinations(fitted, 2):
                shared = [x for x in a["attributes"] if x in b["attributes"]]
                if not shared:
                    continue
                keys = ", ".join(f"CAST({_q(x)} AS VARCHAR) {_q(x)}" for x in shared)
                c = _q(fresh_alias("c", shared))  # the sums' name: none of the attributes'
                count = f"sum(TRY_CAST({_q('count')} AS DOUBLE)) {c}"
                side = [
                    f"(SELECT {keys}, {count} FROM {_csv(directory / t['files']['data'])} GROUP BY ALL)" for t in (a, b)
                ]
                on = " AND ".join(f"x.{_q(k)} = y.{_q(k)}" for k in shared)
                diff = f"max(abs(coalesce(x.{c}, 0) - coalesce(y.{c}, 0)))"
                got = con.execute(f"SELECT {diff} FROM {side[0]} x FULL JOIN {side[1]} y ON {on}").fetchone()
                worst = max(worst, float(got[0] or 0.0) if got else 0.0)
    except (duckdb.Error, KeyError, TypeError) as exc:  # a missing or malformed file: its table's check says which
        return [Finding("dp model", False, f"the fitted tables cannot be read together: {str(exc).splitlines()[0]}")]
    ok = worst <= 1e-4 * max(n, 1.0)
    return [
        Finding(
            "dp model",
            ok,
            "the fitted cliques agree on the attributes they share"
            + (f" (largest difference {worst:.2g} records)" if not ok else ""),
        )
    ]


def expected_records(d: Path, entry: dict[str, Any], rng: np.random.Generator, limit: int, redraws: int = 0) -> Drawn:
    """Records as an adversary reads them from a noisy or fitted table: as many as its counts
    sum to (negative noisy counts read as none), at most ``limit``, each drawn from the
    table's cells in proportion to its counts."""
    del redraws
    import duckdb

    with duckdb.connect() as con:
        t = con.sql(f"SELECT * FROM {_csv(d / entry['files']['data'])}").to_arrow_table()
    counts = np.clip(t.column("count").cast("float64").to_numpy(), 0.0, None)
    total = float(counts.sum())
    rows = rng.choice(len(counts), size=min(round(total), limit), p=counts / total) if total > 0 else np.zeros(0, int)
    return Drawn(
        {a: np.array([str(v) for v in t.column(a).to_pylist()], dtype=object)[rows] for a in entry["attributes"]}
    )


def _view(e: Any, parts: Any) -> View:
    t = parts["data"]  # an adversary reads the noisy or expected counts as they are; none below 1
    keep = [i for i, c in enumerate(t.counts) if c >= 1]
    return View(
        (CountRows(t.source, t.columns, tuple(t.rows[i] for i in keep), tuple(int(t.counts[i]) for i in keep)),)
    )


NOISY = Reading(
    exact_values=True,
    sensitive_of=lambda e: (),
    roles=lambda e: {"data": [*e.attributes, "count"]},
    groups=lambda e: None,
    cells=lambda e: ("data", list(e.attributes)),
    view=_view,
    records=False,
)
FITTED = NOISY
