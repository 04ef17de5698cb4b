"""The page's views of ``evaluate``, ``risk`` and ``compare``: each figure with the sentence
that explains it, tables, and plots drawn as inline SVG by the report's own code
(:mod:`versapub.reports.svg`; values escaped, no scripts, nothing fetched). A view is a list
of blocks the page renders as they come: ``facts`` (name, value, sentence), ``table``
(head, rows) and ``svg``."""

from __future__ import annotations

import itertools
from typing import Any

from versapub.reports.svg import bars, before_after, kl_scale

Block = dict[str, Any]


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if abs(x) < 1e-9:  # rounding noise of an exact figure: 0, not 1.4e-16
        return "0"
    if abs(x) < 10 ** (-digits):
        return f"{x:.1e}"
    return f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "—" if x is None else f"{100 * float(x):.1f}%"


def _histogram(edges: list[float], counts: list[float], xlabel: str, ylabel: str) -> str:
    labels = [f"{a:.2g}–{b:.2g}" for a, b in itertools.pairwise(edges)]
    return bars(list(zip(labels, [float(c) for c in counts], strict=False)), xlabel=xlabel, ylabel=ylabel, width=620)


def _sizes(sizes: dict[int, int]) -> list[tuple[str, float]]:
    """Groups by size, in bins that double from 1 when there are many sizes."""
    if len(sizes) <= 16:
        return [(str(s), float(c)) for s, c in sorted(sizes.items())]
    bins: dict[str, float] = {}
    lo = 1
    while lo <= max(sizes):
        hi = 2 * lo - 1
        bins[f"{lo}" if lo == hi else f"{lo}-{hi}"] = float(sum(c for s, c in sizes.items() if lo <= s <= hi))
        lo *= 2
    return list(bins.items())


def _distributions(e: dict[str, Any], groups: dict[str, dict[int, int]]) -> list[Block]:
    """Each attribute's distribution in the input beside the release's, the largest
    difference per attribute, and groups by size."""
    blocks: list[Block] = []
    distributions = e.get("distributions") or {}
    for a, dist in distributions.items():
        blocks.append(
            {
                "kind": "svg",
                "title": f"{a}: the input and the release",
                "svg": before_after(
                    dist["values"], dist["original"], dist["release"], a, names=("input", "release"), unit="share"
                ),
                "caption": f"Each value's share of the records in the input (grey) and as the release tells it (blue)"
                f"{'; the rest summed as other' if dist['values'] and dist['values'][-1] == 'other' else ''}.",
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
                "caption": "The largest difference between a value's share of the records in the original and in "
                "the release's model (0: the release keeps the attribute's distribution exactly).",
            }
        )
    for t, sizes in groups.items():
        blocks.append(
            {
                "kind": "svg",
                "title": f"{t}: groups by size",
                "svg": bars(_sizes(sizes), xlabel="records in the group", ylabel="groups", width=620),
                "caption": "How many groups (classes of a generalized table, Anatomy's groups) hold each number of "
                "records: bigger groups hide a person better and keep less detail.",
            }
        )
    return blocks


def evaluation_view(
    e: dict[str, Any], reference: float | None = None, groups: dict[str, dict[int, int]] | None = None
) -> list[Block]:
    """``evaluate``'s result (``Evaluation.to_dict()``) as figures, tables and plots;
    ``reference``: the KL-divergence of publishing every attribute alone (the manifest's);
    ``groups``: per table, how many groups (classes) have each size."""
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
            "How often the true count lies in the noise's 95 % interval (about 95 % expected), over the queries "
            "inside a measured marginal (differential privacy)."
            if rng.get("basis") == "dp-noise"
            else "How often the true count lies in the smallest–largest range every table consistent with the "
            "release allows (100% unless something is wrong).",
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
                "svg": kl_scale(float(e["kl_divergence"]), reference),
                "caption": "The release's KL-divergence from the original on its scale"
                + (", beside publishing every attribute alone (the red line)." if reference is not None else "."),
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
    blocks += _distributions(e, groups or {})
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


#: The measures shown before and after: key path, name, how written.
_BEFORE_AFTER = (
    (("records",), "records", "n"),
    (("classes",), "classes", "n"),
    (("sample_uniques",), "sample uniques", "n"),
    (("prosecutor", "highest"), "highest prosecutor risk", "4"),
    (("prosecutor", "average"), "average prosecutor risk", "4"),
    (("prosecutor", "records_at_risk"), "records at risk", "%"),
    (("population_uniques", "estimate"), "population uniques", "1"),
)


def _at(d: dict[str, Any], path: tuple[str, ...]) -> Any:
    for k in path:
        d = d.get(k) if isinstance(d, dict) else None  # type: ignore[assignment]
    return d


def _before_after(r: dict[str, Any], before: dict[str, Any]) -> Block:
    """The input's risk beside each table's, on the same quasi-identifiers."""
    tables = r.get("tables") or []
    first = (before.get("tables") or [before])[0]

    def fmt(v: Any, how: str) -> str:
        return _pct(v) if how == "%" else _num(v) if how == "n" else _num(v, int(how))

    rows = [
        [name, fmt(_at(first, path), how), *(fmt(_at(t, path), how) for t in tables)]
        for path, name, how in _BEFORE_AFTER
    ]
    same = [
        str(t.get("table"))
        for t in tables
        if all(fmt(_at(first, path), how) == fmt(_at(t, path), how) for path, _, how in _BEFORE_AFTER)
    ]
    why = (
        f" {', '.join(same)} {'shows' if len(same) == 1 else 'show'} the input's own figures: the quasi-identifiers "
        "are published exactly there (Anatomy and plain tables hide which protected value goes with a record, not "
        "whether a record can be found). The guarantee bounds what a found record reveals; to lower these figures, "
        "require a smallest cell with --k (on the key variables with --keys) or generalize a column."
        if same
        else ""
    )
    return {
        "kind": "table",
        "title": "Before and after: the input beside the release",
        "id": "risk-before-after",
        "head": ["measure", "the input", *(str(t.get("table")) for t in tables)],
        "rows": rows,
        "caption": "The same quasi-identifiers measured on the input (as if published as it is) and on each "
        "published table." + why,
    }


def _uniques_detail(pu: dict[str, Any]) -> str:
    """What the population-uniques figure is: its model, its interval and the other models."""
    text = f"Records estimated unique in the whole population, by the {pu.get('model', '')} model"
    iv = pu.get("interval")
    if iv:
        text += f" (95 % under the model: {iv[0]:,.1f} to {iv[1]:,.1f})"
    others = [f"{m} {v:,.1f}" for m, v in (pu.get("models") or {}).items() if m != pu.get("model") and v is not None]
    if pu.get("sampling_fraction", 1) < 1 and others:
        text += "; the other models: " + ", ".join(others)
    return text + "."


def risk_view(r: dict[str, Any], before: dict[str, Any] | None = None) -> list[Block]:
    """``risk``'s result (``RiskReport.to_json()``) as figures per table and a histogram of
    the records' risks; ``before``: the same measures on the input."""
    blocks: list[Block] = [] if before is None else [_before_after(r, before)]
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
            ["population uniques", _num(pu.get("estimate"), 1), _uniques_detail(pu)],
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
    ("attack_rule", "on the rule", "s"),
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

    rows = [
        [
            (
                f"infinite ({_num(r['kl_shared'], 4)} on the shared support, {_pct(r.get('lost_mass'))} outside it)"
                if isinstance(r.get("kl_shared"), (int, float))
                else "infinite"
            )
            if k == "kl" and r.get("kl_infinite")
            else fmt(r.get(k), how)
            for k, _, how in COMPARED
        ]
        for r in c.get("rows") or []
    ]
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
