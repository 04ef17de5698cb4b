"""Hierarchies in the browser: built with the CLI's builders (intervals, masking, groups,
dates) and written in ARX's format under the root, or shown level by level with each
node's number of values and records and the coverage of a data column."""

from __future__ import annotations

from collections import Counter
from typing import Any

from versapub.data import hierarchy_build as hb
from versapub.data.hierarchy import Hierarchy
from versapub.errors import ConfigError
from versapub.io.read import read_table
from versapub.web.paths import Root

#: Nodes shown per level.
SHOWN_NODES = 60


def build(root: Root, body: dict[str, Any]) -> dict[str, Any]:
    """``{data, column, kind: intervals|mask|groups|dates, param, out, overwrite}`` -> the
    hierarchy written to ``out`` (refused over an existing file unless ``overwrite``)."""
    data, column, kind = root.resolve(str(body.get("data") or "")), str(body.get("column") or ""), body.get("kind")
    out = str(body.get("out") or "")
    if not out.endswith(".csv"):
        raise ConfigError("Write the hierarchy to a .csv file, e.g. hierarchies/age.csv.")
    dest = root.resolve(out)
    if dest.exists() and not body.get("overwrite"):
        raise ConfigError(f"{out} exists; tick 'replace' to overwrite it.")
    if dest == data:
        raise ConfigError(f"{out} is the data file; write the hierarchy elsewhere.")
    col = read_table(data, delimiter=body.get("delimiter") or None, columns=[column], missing="value").column(column)
    values = [str(v) for v in col.values]
    param = str(body.get("param") or "").strip()
    if kind == "intervals":
        try:
            widths = [float(w) for w in param.split(",") if w.strip()]
        except ValueError:
            raise ConfigError(f"Interval widths {param!r}: give numbers separated by commas, e.g. 5,10,20.") from None
        h = hb.intervals(column, values, widths, style=str(body.get("style") or "arx"))
    elif kind == "mask":
        h = hb.masking(column, values)
    elif kind == "groups":
        if not param.isdigit():
            raise ConfigError(f"Groups of {param!r}: give a whole number of values per group, e.g. 4.")
        h = hb.grouped(column, values, int(param))
    elif kind == "dates":
        h = hb.dates(
            column, values, [p.strip() for p in param.split(",") if p.strip()], body.get("date_format") or None
        )
    else:
        raise ConfigError(f"Builder {kind!r}: choose intervals, mask, groups or dates.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(hb.to_arx(h), encoding="utf-8")
    return {"path": root.relative(dest)} | _levels(h, col.values, col.counts())


def show(root: Root, body: dict[str, Any]) -> dict[str, Any]:
    """``{path, column, data?}`` -> the hierarchy's levels (nodes with their values and,
    with ``data``, records) and the data values it does not cover."""
    path, column = root.resolve(str(body.get("path") or "")), str(body.get("column") or "")
    h = Hierarchy.read(path, column or "attribute")
    if body.get("data"):
        col = read_table(
            root.resolve(str(body["data"])), delimiter=body.get("delimiter") or None, columns=[column], missing="value"
        ).column(column)
        return {"path": root.relative(path)} | _levels(h, col.values, col.counts())
    return {"path": root.relative(path)} | _levels(h, None, None)


def _levels(h: Hierarchy, values: Any, counts: Any) -> dict[str, Any]:
    records = {str(v): int(c) for v, c in zip(values, counts, strict=True)} if values is not None else {}
    levels = []
    for k in range(h.height):
        leaves: Counter[str] = Counter()
        recs: Counter[str] = Counter()
        for row in h.levels:
            leaves[row[k]] += 1
            recs[row[k]] += records.get(row[0], 0)
        nodes = [{"label": lab, "values": n, "records": recs[lab]} for lab, n in sorted(leaves.items())]
        levels.append({"level": k, "nodes": nodes[:SHOWN_NODES], "count": len(nodes)})
    leaves_set = {row[0] for row in h.levels}
    uncovered = sorted(v for v in records if v not in leaves_set)
    return {"height": h.height, "levels": levels, "uncovered": uncovered[:20], "n_uncovered": len(uncovered)}
