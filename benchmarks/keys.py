"""Local suppression on the key variables (issue 65) against sdcMicro's ``localSuppression``.

For each table and k: the values versapub's :func:`~versapub.publishing.local_suppression.suppress_cells`
suppresses (per key and in all), the records touched, the distinct values each key keeps, and
the time; the same for sdcMicro's ``localSuppressionWORK`` (``alpha = 1``: a suppressed value
matches any value, versapub's reading) on the same data, run in R in the same run.  sdcMicro
is not on PyPI and is never a dependency: set ``SDCMICRO_SRC`` to a directory holding its
``R/localSuppression.R``, ``R/freqCalc.r``, ``R/indivRisk.R`` and ``src/calcSuppInds.cpp``
(from github.com/sdcTools/sdcMicro; R with data.table and Rcpp installed), else only
versapub's side is printed.  Then, on tiny random tables, the fewest suppressed values any
suppression reaching k needs (brute force over every pattern per distinct combination)
against versapub's count.

    SDCMICRO_SRC=/path/to/sdcMicro python benchmarks/keys.py [--json FILE] [--quick]

The numbers are those ``docs/performance.md`` ("Local suppression") reports.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from versapub import datasets
from versapub.data.table import EncodedTable
from versapub.datasets import synthetic
from versapub.publishing.local_suppression import suppress_cells

R_DRIVER = r"""
suppressMessages(library(data.table)); suppressMessages(library(Rcpp))
args <- commandArgs(trailingOnly = TRUE)
src <- args[1]; data <- args[2]; k <- as.integer(args[3]); keys <- strsplit(args[4], ",")[[1]]
find <- function(name) { for (d in c(src, file.path(src, "R"), file.path(src, "src"))) {
  p <- file.path(d, name); if (file.exists(p)) return(p) }; stop(paste("no", name, "under", src)) }
sourceCpp(find("calcSuppInds.cpp"))
for (f in c("freqCalc.r", "indivRisk.R", "localSuppression.R")) source(find(f))
d <- read.csv(data, colClasses = "character", check.names = FALSE, na.strings = "")[, keys, drop = FALSE]
d[] <- lapply(d, factor)
t0 <- Sys.time()
r <- localSuppressionWORK(d, keyVars = keys, strataVars = NULL, k = k, combs = NULL, importance = NULL, alpha = 1)
s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
x <- r$xAnon
na <- colSums(is.na(x[, keys, drop = FALSE])) - colSums(is.na(d))
cat(sprintf('{"seconds": %.3f, "records": %d, "cells": {%s}, "distinct": {%s}}\n', s,
  sum(rowSums(is.na(x[, keys, drop = FALSE])) > rowSums(is.na(d))),
  paste(sprintf('"%s": %d', keys, as.integer(na)), collapse = ", "),
  paste(sprintf('"%s": %d', keys, sapply(keys, function(a) length(unique(na.omit(x[[a]]))))), collapse = ", ")))
"""


def _tables(quick: bool) -> list[tuple[str, EncodedTable, list[str]]]:
    adult = datasets.adult_uci()
    keys = ["state", "female", "racef", "age", "educ", "marstat"]
    data = synthetic.survey(5_000 if quick else 20_000, seed=0)
    # marstat's few empty cells kept as they are: in the R frame and here alike, matching any value
    survey = EncodedTable.from_columns({a: data[a] for a in keys}, missing="value")
    return [
        ("adult (30,162)", adult, ["age", "sex", "race", "marital-status", "education"]),
        ("adult (30,162), 3 keys", adult, ["age", "sex", "race"]),
        (f"survey ({survey.n_rows:,})", survey, keys),
    ]


def _versapub(t: EncodedTable, keys: list[str], k: int) -> dict[str, object]:
    t0 = time.perf_counter()
    got = suppress_cells(t, [keys], k, frozenset(keys))
    seconds = time.perf_counter() - t0
    distinct = {}
    for a in keys:
        col = got.table.column(a)
        distinct[a] = len({v for v in col.values[np.unique(col.codes)].tolist() if v != ""})
    return {"seconds": round(seconds, 3), "records": got.records, "cells": dict(got.cells), "distinct": distinct}


def _sdcmicro(t: EncodedTable, keys: list[str], k: int) -> dict[str, object] | None:
    src = os.environ.get("SDCMICRO_SRC")
    if not src or shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "t.csv"
        import pyarrow as pa
        import pyarrow.csv as pacsv

        plain = [f"k{i}" for i in range(len(keys))]  # sdcMicro evaluates names: 'marital-status' breaks it
        pacsv.write_csv(pa.table({p: t.column(a).decode() for p, a in zip(plain, keys, strict=True)}), data)
        driver = Path(tmp) / "driver.R"
        driver.write_text(R_DRIVER)
        out = subprocess.run(
            ["Rscript", str(driver), src, str(data), str(k), ",".join(plain)],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            return {"error": out.stderr.strip().splitlines()[-1:]}
        got = json.loads(out.stdout.strip().splitlines()[-1])
        for part in ("cells", "distinct"):
            got[part] = {keys[plain.index(p)]: v for p, v in got[part].items()}
        return dict(got)


def _fewest(t: EncodedTable, keys: list[str], k: int) -> int | None:
    """Brute force: every suppression pattern (a subset of keys emptied) per distinct
    combination, the fewest suppressed values over those that bring every record to k
    compatible records (None: none does)."""
    rows = np.stack([t.codes(a) for a in keys], axis=1)
    combos, counts = np.unique(rows, axis=0, return_counts=True)
    patterns = list(itertools.product([False, True], repeat=len(keys)))
    best = None
    for choice in itertools.product(range(len(patterns)), repeat=len(combos)):
        masks = np.array([patterns[c] for c in choice])
        cost = int((masks.sum(axis=1) * counts).sum())
        if best is not None and cost >= best:
            continue
        vals = np.where(masks, -1, combos)
        match = ((vals[:, None, :] == vals[None, :, :]) | (vals[:, None, :] < 0) | (vals[None, :, :] < 0)).all(axis=2)
        if (match @ counts >= k).all():
            best = cost
    return best


def _brute(n_tables: int) -> dict[str, object]:
    rng = np.random.default_rng(7)
    ratios, equal, done = [], 0, 0
    while done < n_tables:
        n = int(rng.integers(8, 14))
        cols = {a: [f"{a}{int(x)}" for x in rng.integers(0, 3, n)] for a in ("a", "b", "c")}
        t = EncodedTable.from_columns(cols)
        k = int(rng.integers(2, 4))
        keys = ["a", "b", "c"]
        if len(np.unique(np.stack([t.codes(a) for a in keys], axis=1), axis=0)) > 5:  # 8^5 patterns at most
            continue
        best = _fewest(t, keys, k)
        if best is None:
            continue
        mine = sum(suppress_cells(t, [keys], k, frozenset(keys)).cells.values())
        done += 1
        equal += mine == best
        ratios.append(mine / best if best else 1.0)
    return {"tables": done, "optimal": equal, "mean_ratio": round(float(np.mean(ratios)), 3), "worst": max(ratios)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--quick", action="store_true", help="a 5,000-record survey and 10 tiny tables")
    args = ap.parse_args()
    rows = []
    for name, t, keys in _tables(args.quick):
        for k in (3, 5):
            mine = _versapub(t, keys, k)
            theirs = _sdcmicro(t, keys, k)
            rows.append({"table": name, "keys": keys, "k": k, "versapub": mine, "sdcmicro": theirs})
            total = sum(mine["cells"].values())  # type: ignore[attr-defined]
            line = (
                f"{name:28s} k={k}: versapub {total:6,d} values, {mine['records']:6,d} records, "
                f"{mine['seconds']:7.2f} s"
            )
            if theirs and "cells" in theirs:
                line += (
                    f" | sdcMicro {sum(theirs['cells'].values()):6,d} values, {theirs['records']:6,d} records, "
                    f"{theirs['seconds']:7.2f} s"
                )
            elif theirs:
                line += f" | sdcMicro failed: {theirs['error']}"
            print(line, flush=True)
            print(f"{'':28s}   per key {mine['cells']}; distinct kept {mine['distinct']}")
            if theirs and "cells" in theirs:
                print(f"{'':28s}   sdcMicro per key {theirs['cells']}; distinct kept {theirs['distinct']}")
    brute = _brute(10 if args.quick else 40)
    print(
        f"tiny tables (brute force): {brute['optimal']} of {brute['tables']} at the fewest values, mean "
        f"{brute['mean_ratio']}x the fewest, worst {brute['worst']:.2f}x"
    )
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "brute_force": brute}, indent=2))


if __name__ == "__main__":
    main()
