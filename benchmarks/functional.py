"""Issue 15's measurements: Sequential Sweep against its baselines, CLD (Incognito with
recursive (c, l)-diversity) and 1DLD (the 1-D l-diversity algorithm), in the same process.

* Adult (30,162 records, 8 quasi-identifiers with ARX hierarchies, occupation under the
  Census occupation groups) at (tau, lambda) = (0.3, 6): Sequential Sweep target <= 2 s;
  CLD at Theorem 23's weakest (c, l) for l = 6 and 1DLD at l = lambda = 6 as peers.
* 10^6 records, target <= 60 s, the same peers: SPARCS resampled with replacement (5
  quasi-identifiers, CCSR diagnosis under its body system) at (0.2, 8); and the synthetic
  ``texas_like`` (gender, age, race, county, MDC as quasi-identifiers with hierarchies of
  groups, 256 items; the principal diagnosis, 3,488 codes, under groups of 16 then 256)
  at (0.2, 8), whose (quasi-identifier, diagnosis) combinations are nearly all distinct.

Each is ``versapub.publish`` (feasibility, anonymization, the output's own check), the
median of ``--repeat`` runs, with the process's peak memory.

    python benchmarks/functional.py [--repeat 3] [--records 1000000]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from typing import Any

import numpy as np


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn: Any, repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    args = ap.parse_args()

    import versapub
    from versapub.experiments.functional import Settings, load
    from versapub.privacy.guarantees.functional import linear_phi
    from versapub.privacy.guarantees.strength import weakest_c
    from versapub.privacy.screens.roles import ColumnRoles

    for name, tau, lam, n in (
        ("adult", 0.3, 6, None),
        ("sparcs", 0.2, 8, args.records),
        ("texas_like", 0.2, 8, args.records),
    ):
        if name == "texas_like":
            table, hier, qi, s = _texas(args.records)
        else:
            ds, table, hier = load(Settings(name))
            qi, s = list(ds.qi), ds.sensitive
            if n is not None:
                table = _resample(table, np.random.default_rng(1).integers(0, table.n_rows, size=n))
        rule = [f"{', '.join(qi)} -> {s}"]
        roles = ColumnRoles(allow_unique=table.names, others="insensitive")
        m = table.cardinality(s)
        c = weakest_c(lam, linear_phi(tau, lam), m)
        runs = {
            "sequential-sweep": {"name": "functional-diversity", "tau": tau, "lambda": lam},
            "one-d-l-diversity": {"name": "l-diversity", "l": lam},
            "incognito": {"name": "recursive-cl-diversity", "c": c, "l": lam},
        }
        print(
            f"{name}: {table.n_rows:,} records, {len(qi)} quasi-identifiers, (tau, lambda) = ({tau}, {lam}); "
            f"CLD at Theorem 23's weakest c = {c:.3f} for l = {lam}, 1DLD at l = {lam}"
        )
        for anon, g in runs.items():

            def job(
                a: str = anon, g: dict[str, Any] = g, t: Any = table, r: list[str] = rule, h: Any = hier, c: Any = roles
            ) -> Any:
                return versapub.publish(
                    t, r, guarantee=g, method=versapub.Method(anonymizer=a, hierarchies=h), columns=c, seed=1
                )

            try:
                sec, rel = timed(job, args.repeat)
                st = rel.tables[0].table.stats
                print(f"  {anon:18s} {sec:7.2f} s  ({st.get('groups'):,} classes)  peak {peak_mb():,.0f} MB")
            except versapub.VersapubError as exc:
                print(f"  {anon:18s} refused: {str(exc)[:140]}")


def _texas(n: int) -> tuple[Any, dict[str, Any], list[str], str]:
    from versapub.data.hierarchy_build import grouped
    from versapub.datasets import texas_like

    table = texas_like(n, seed=1)
    qi = ["gender", "pat_age", "race", "county", "hcfa_mdc"]
    sizes = {"pat_age": 4, "county": 8, "hcfa_mdc": 4, "prn_diag": 16}
    hier = {a: grouped(a, [str(v) for v in table.column(a).values], k) for a, k in sizes.items()}
    return table.select([*qi, "prn_diag"]), hier, qi, "prn_diag"


def _resample(table: Any, idx: np.ndarray) -> Any:
    from versapub.data.table import Column, EncodedTable

    return EncodedTable(tuple(Column(c.name, c.codes[idx], c.values) for c in table.columns))


if __name__ == "__main__":
    main()
