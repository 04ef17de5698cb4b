"""The page's views of ``evaluate``, ``risk`` and ``compare``: each figure with the sentence
that explains it, tables, and plots drawn as inline SVG by the report's own code
(:mod:`versapub.reports.svg`; values escaped, no scripts, nothing fetched). A view is a list
of blocks the page renders as they come: ``facts`` (name, value, sentence), ``table``
(head, rows) and ``svg``."""

from __future__ import annotations

import itertools
from typing import Any

from versapub.reports.svg import bars, kl_scale

Block = dict[str, Any]


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if x != 0 and abs(x) < 10 ** (-digits):
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "—" if x is None else f"{100 * float(x):.1f}%"


def _histogram(edges: list[float], counts: list[float], xlabel: str, ylabel: str) -> str:
    labels = [f"{a:.2g}–{b:.2g}" for a, b in itertools.pairwise(edges)]
    return bars(list(zip(labels, [float(c) for c in counts], strict=False)), xlabel=xlabel, ylabel=ylabel, width=620)


def evaluation_view(e: dict[str, Any]) -> list[Block]:
    """``evaluate``'s result (``Evaluation.to_dict()``) as figures, tables and plots."""
    rel, rng = e.get("relative_error") or {}, e.get("ranges") or {}
    w = e.get("workload") or {}
    facts = [
        [
            "KL-divergence",
            _num(e.get("kl_divergence"), 4),
            "How far the release's model of the records is from the original: 0 is the original itself; lower "
            "is better (nats).",
        ],
        [
            "median relative error",
            _num(rel.get("median")),
            f"Of {w.get('n_queries', '?')} random COUNT queries over {w.get('qd', '?')} attributes (seed "
            f"{w.get('seed', '?')}): half are answered closer than this to the true count.",
        ],
        ["90th percentile", _num(rel.get("p90")), "Nine queries in ten are answered closer than this."],
        [
            "true count inside its range",
            _pct(rng.get("share_inside")),
            "How often the true count lies in the smallest–largest range every table consistent with the release "
            "allows (100% unless something is wrong).",
        ],
        [
            "median range width",
            _num(rng.get("median_relative_width")),
            "How wide that range is, relative to the true count: what the release cannot tell apart.",
        ],
        [
            "records the model gives no chance",
            _num(e.get("records_with_zero_model_probability")),
            "Original records the release's model says cannot exist (they make the KL-divergence infinite).",
        ],
    ]
    blocks: list[Block] = [{"kind": "facts", "title": "Utility", "rows": facts}]
    if isinstance(e.get("kl_divergence"), (int, float)):
        blocks.append(
            {
                "kind": "svg",
                "title": "KL-divergence",
                "svg": kl_scale(float(e["kl_divergence"]), None),
                "caption": "The release's KL-divergence from the original on its scale.",
            }
        )
    hist = rel.get("histogram") or {}
    if hist.get("edges") and hist.get("counts"):
        blocks.append(
            {
                "kind": "svg",
                "title": "Workload error",
                "svg": _histogram(hist["edges"], hist["counts"], "relative error", "queries"),
                "caption": "How many of the workload's queries have each relative error (further left is better).",
            }
        )
    marg = e.get("marginal_error") or {}
    if marg:
        blocks.append(
            {
                "kind": "table",
                "title": "Per attribute",
                "id": "marginal-errors",
                "head": ["attribute", "marginal error"],
                "rows": [[a, _num(v, 4)] for a, v in marg.items()],
                "caption": "Total variation between each attribute's distribution in the original and in the "
                "release's model (0: the release keeps it exactly).",
            }
        )
    metrics = e.get("metrics") or {}
    if metrics:
        head = ["table", "classes", "average class size", "discernibility", "suppressed records"]
        rows = [
            [
                t,
                _num(m.get("classes")),
                _num(m.get("average_class_size"), 2),
                _num(m.get("discernibility")),
                _num(m.get("suppressed_records")),
            ]
            for t, m in metrics.items()
            if isinstance(m, dict)
        ]
        blocks.append(
            {
                "kind": "table",
                "title": "Classes per table",
                "id": "class-metrics",
                "head": head,
                "rows": rows,
                "caption": "The classic measures of each published table: more, smaller classes keep more detail.",
            }
        )
    return blocks


def risk_view(r: dict[str, Any]) -> list[Block]:
    """``risk``'s result (``RiskReport.to_json()``) as figures per table and a histogram of
    the records' risks."""
    blocks: list[Block] = []
    for t in r.get("tables") or []:
        pros, pu = t.get("prosecutor") or {}, t.get("population_uniques") or {}
        attrs = ", ".join(t.get("attributes") or []) or "no quasi-identifier"
        facts = [
            ["records", _num(t.get("records")), "Records the table publishes."],
            ["classes", _num(t.get("classes")), f"Distinct combinations of {attrs}."],
            [
                "sample uniques",
                _num(t.get("sample_uniques")),
                "Records alone in their class: found by anyone who knows their values.",
            ],
            [
                "highest prosecutor risk",
                _num(pros.get("highest"), 4),
                "The chance of re-identifying the most exposed record, for an attacker who knows the person is in the "
                "data (1 / the size of its class).",
            ],
            ["average prosecutor risk", _num(pros.get("average"), 4), "The same chance, averaged over the records."],
            [
                "records at risk",
                _pct(pros.get("records_at_risk")),
                f"Records whose risk exceeds the threshold {r.get('threshold')}.",
            ],
            [
                "journalist risk",
                _num((t.get("journalist") or {}).get("highest"), 4),
                "The highest risk for an attacker who does not know whether the person is in the data (uses the "
                "sampling fraction).",
            ],
            [
                "marketer risk",
                _num((t.get("marketer") or {}).get("average"), 4),
                "The share of records an attacker linking every record at once would re-identify.",
            ],
            [
                "population uniques",
                _num(pu.get("estimate"), 1),
                f"Records estimated unique in the whole population ({pu.get('model', '')}).",
            ],
        ]
        suda = t.get("suda")
        if isinstance(suda, dict):
            facts.append(
                [
                    "records with an MSU (SUDA)",
                    _num(suda.get("records_with_msu")),
                    "Records unique on some small set of their values (minimal sample uniques)"
                    + (f"; {suda['not_searched']}" if suda.get("not_searched") else "."),
                ]
            )
        blocks.append({"kind": "facts", "title": f"{t.get('table')}: {attrs}", "rows": facts})
        hist = t.get("risk_histogram") or {}
        if hist.get("edges") and hist.get("records"):
            blocks.append(
                {
                    "kind": "svg",
                    "title": f"{t.get('table')}: records by risk",
                    "svg": _histogram(hist["edges"], hist["records"], "re-identification risk", "records"),
                    "caption": "How many records have each prosecutor risk (further left is safer).",
                }
            )
    return blocks


#: The comparison's columns: key, heading, how the value is written.
COMPARED = (
    ("release", "release", "s"),
    ("kinds", "kind", "s"),
    ("anonymizer", "anonymizer", "s"),
    ("guarantee", "guarantee", "s"),
    ("verdict", "check", "s"),
    ("kl", "KL-divergence", "4"),
    ("workload_median", "median relative error", "3"),
    ("ranges_inside", "true count in range", "%"),
    ("prosecutor_highest", "highest risk", "4"),
    ("records_at_risk", "records at risk", "%"),
    ("sample_uniques", "sample uniques", "0"),
    ("attack_rate", "best attack's guess rate", "%"),
    ("attack_bound", "guarantee allows", "%"),
)


def comparison_view(c: dict[str, Any]) -> list[Block]:
    """``compare``'s result (``Comparison.to_dict()``) as one table, a KL-divergence bar
    chart, and the notes."""

    def fmt(v: Any, how: str) -> str:
        if v is None or v == "":
            return "—"
        if how == "%":
            return _pct(v)
        if how == "s":
            return str(v)
        return _num(v, int(how)) if not isinstance(v, int) else _num(v)

    rows = [[fmt(r.get(k), how) for k, _, how in COMPARED] for r in c.get("rows") or []]
    blocks: list[Block] = [
        {
            "kind": "table",
            "title": f"Releases of {c.get('input')}",
            "id": "compare-table",
            "head": [h for _, h, _ in COMPARED],
            "rows": rows,
            "caption": "Risk on the same quasi-identifiers for every release ("
            + (", ".join(c.get("qi") or []) or "none")
            + "); utility on the same seeded workload; the first row, when the input was found, is the input itself.",
        }
    ]
    kl = [
        (str(r["release"]).rsplit("/", 1)[-1], float(r["kl"])) for r in c.get("rows") or [] if r.get("kl") is not None
    ]
    if kl:
        blocks.append(
            {
                "kind": "svg",
                "title": "KL-divergence per release",
                "svg": bars(kl, xlabel="release", ylabel="KL-divergence", width=620),
                "caption": "Lower keeps the records' distribution better.",
            }
        )
    if c.get("notes"):
        blocks.append({"kind": "facts", "title": "Notes", "rows": [["note", "", n] for n in c["notes"]]})
    return blocks
